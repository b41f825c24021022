"""A one-line header with the machine's load: load average, CPU %, memory used of total.

Samples arrive as :class:`~studymon.widgets.messages.MachineSampled`
messages; when several are queued (every study reports the same sample, one
after the other) only the newest is taken.  The line shows it on the
screen's clock (:meth:`MachineBar.tick`), in the frame that moves every
pane's clock: measured, a repaint of its own for each sample was a second
frame every few seconds, which an idle console could not afford.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import on
from textual.reactive import reactive
from textual.widget import Widget

from studymon.widgets.messages import MachineSampled

GIB = 1024**3


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def machine_text(sample: dict[str, Any] | None) -> str:
    """``load 1.20 0.90 0.75 · cpu 43% · mem 5.2/15.6 GiB (33%)`` from a light sample."""
    if not sample:
        return "waiting for the first sample"  # after the bar's own "machine" label
    parts: list[str] = []
    load = sample.get("load")
    if isinstance(load, (list, tuple)) and load:
        parts.append("load " + " ".join(f"{v:.2f}" if _num(v) is not None else "-" for v in load[:3]))
    cpu = _num(sample.get("cpu"))
    if cpu is not None:
        parts.append(f"cpu {cpu:.0f}%")
    memory = sample.get("memory")
    if isinstance(memory, dict):
        used, total, percent = _num(memory.get("used")), _num(memory.get("total")), _num(memory.get("percent"))
        if used is not None and total:
            text = f"mem {used / GIB:.1f}/{total / GIB:.1f} GiB"
            if percent is not None:
                text += f" ({percent:.0f}%)"
            parts.append(text)
        elif percent is not None:
            parts.append(f"mem {percent:.0f}%")
    return " · ".join(parts) or "no figures in the sample"


# The line moves every 5 s, as machine.jsonl does: its figures change with every sample, and a
# repaint every 2.5 s was most of what an idle console spends (measured with console_load.py).
SHOW_EVERY = 4.9


class MachineBar(Widget):
    """The machine's load in one line, from the newest light sample."""

    DEFAULT_CSS = """
    MachineBar {
        height: 1;
        width: 1fr;
        padding: 0 1;
        background: $panel;
    }

    MachineBar > .machine--label   { color: $text-accent; text-style: bold; }
    MachineBar > .machine--figures { color: $text; }
    MachineBar > .machine--ok      { background: $success; color: $text; text-style: bold; }
    MachineBar > .machine--fail    { background: $error; color: $text; text-style: bold; }
    MachineBar > .machine--unknown { background: $warning; color: $text; text-style: bold; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "machine--label",
        "machine--figures",
        "machine--ok",
        "machine--fail",
        "machine--unknown",
    }

    text: reactive[str] = reactive(machine_text(None))  # a change repaints the line
    # Once every study has ended: the overall result (ok: True, False or None) and its words.
    overall: reactive[tuple[bool | None, str] | None] = reactive(None)

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """``clock`` paces the line (injectable, so that snapshots are deterministic)."""
        super().__init__(name=name, id=id, classes=classes)
        self.clock = clock
        self.sample: dict[str, Any] | None = None
        self._pending: dict[str, Any] | None = None  # the newest sample, not shown yet
        self._shown_at = -SHOW_EVERY  # monotonic time the line last changed

    def take_over(self, other: MachineBar) -> None:
        """Show what ``other`` shows (its newest sample, and the overall result once there is one).

        A bar made for a screen opened later starts where the console's bar is, rather than
        waiting for a sample that may never come again (every study may have ended).
        """
        newest = other.newest()
        if newest is not None:
            self.update_sample(newest)
        self.overall = other.overall

    def newest(self) -> dict[str, Any] | None:
        """The newest sample taken, whether the line shows it yet or not."""
        return self._pending or self.sample

    def update_sample(self, sample: dict[str, Any]) -> None:
        """Show a light machine sample (``load``, ``cpu``, ``memory``) now."""
        self.sample = sample
        self.text = machine_text(sample)

    @on(MachineSampled)
    def _sampled(self, message: MachineSampled) -> None:
        self._pending = message.sample  # shown on the next tick

    def flush(self) -> None:
        """Show the newest sample now, whenever the last one was shown (for snapshots)."""
        if self._pending is not None:
            sample, self._pending = self._pending, None
            self._shown_at = self.clock()
            self.update_sample(sample)

    def tick(self) -> None:
        """Show the newest sample taken since the last one shown, at most every ``SHOW_EVERY`` seconds."""
        now = self.clock()
        if self._pending is not None and now - self._shown_at >= SHOW_EVERY:
            sample, self._pending = self._pending, None
            self._shown_at = now
            self.update_sample(sample)

    def render(self) -> Text:
        # Every gap is a run of its own (``not underline`` draws nothing but keeps it apart): SVG
        # viewers squeeze the spaces at a text run's edges, and "machineload" is what they showed.
        gap = Style(underline=False)
        out = Text(no_wrap=True, end="")
        if self.overall is not None:
            ok, words = self.overall
            kind = {True: "machine--ok", False: "machine--fail", None: "machine--unknown"}[ok]
            style = self.get_component_rich_style(kind)
            out.append(" ", style + gap)
            out.append(words, style)
            out.append(" ", style + gap)
            out.append(" ", gap)
        out.append("machine", self.get_component_rich_style("machine--label"))
        out.append(" ", gap)
        out.append(self.text, self.get_component_rich_style("machine--figures"))
        return out
