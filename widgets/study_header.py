"""The header of a study pane: id, state badge, arming, pid, round and stage, balance, running time.

Three rows.  Every colour comes from ``studymon.tcss``: the state badge carries
a ``state-<slug>`` class (``state-running``, ``state-finished-ok``, ...).  The
running time reads an injectable clock so that snapshots are deterministic;
it is redrawn only when its text changes.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Label

from studymon.engine.events import State
from studymon.widgets.states import CLOCK_STOPPED, state_class, state_label

NOTE_KINDS = ("info", "kill", "problem")


def format_elapsed(seconds: float) -> str:
    s = max(0, int(seconds))
    return f"{s // 3600:02d}:{(s % 3600) // 60:02d}:{s % 60:02d}"


def _fmt_number(value: float) -> str:
    return f"{value:g}"


class Elapsed(Widget):
    """How long the study has run, ``HH:MM:SS``."""

    def __init__(self, header: StudyHeader, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.header = header

    def render(self) -> str:
        return self.header.elapsed_text


class BalanceBar(Widget):
    """Spent of budget as a drawn bar: ``████░░ 40/60``."""

    COMPONENT_CLASSES = {"balance--spent", "balance--left", "balance--text"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.spent: float | None = None
        self.budget: float | None = None

    def set(self, balance: float | None, budget: float | None) -> None:
        spent = None if balance is None or budget is None else budget - balance
        if (spent, budget) != (self.spent, self.budget):
            self.spent, self.budget = spent, budget
            self.refresh()

    @property
    def label(self) -> str:
        if self.spent is None or self.budget is None:
            return "budget -"
        return f"{_fmt_number(self.spent)}/{_fmt_number(self.budget)}"

    def render(self) -> Text:
        label = self.label
        width = max(0, self.size.width - len(label) - 1)
        if self.spent is None or not self.budget:
            filled = 0
        else:
            filled = round(max(0.0, min(1.0, self.spent / self.budget)) * width)
        return Text.assemble(
            ("█" * filled, self.get_component_rich_style("balance--spent")),
            ("░" * (width - filled), self.get_component_rich_style("balance--left")),
            (" " + label, self.get_component_rich_style("balance--text")),
            no_wrap=True,
            end="",
        )


class StudyHeader(Vertical):
    """Three rows about one study; the pane feeds it, it decides nothing."""

    def __init__(
        self,
        study_id: str,
        clock: Callable[[], float] = time.monotonic,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.study_id = study_id
        self.clock = clock
        self.state = State.STARTING
        self.state_detail = ""
        self.armed = False
        self.pid: int | None = None
        self.pid_ended: str | None = None
        self.round: Any = None
        self.stage: str | None = None
        self.checks_ok: bool | None = None
        self.checks_known = False
        self.checks_finished = False
        self.note = ""
        self.started: float | None = None
        self.ended: float | None = None
        self._badge = Label(state_label(self.state), markup=False, id="state-badge", classes=state_class(self.state))
        self._armed = Label("ARMED", markup=False, id="armed-badge")
        self._checks = Label("", markup=False, id="checks-badge")
        self._elapsed = Elapsed(self, id="elapsed")
        self._progress = Label(self._progress_text(), markup=False, id="header-progress")
        self._balance = BalanceBar(id="balance")
        self._note = Label("", markup=False, id="header-note")
        self._elapsed_shown = ""

    def compose(self) -> ComposeResult:
        with Horizontal(id="header-top"):
            yield Label(self.study_id, markup=False, id="study-id")
            yield self._badge
            yield self._armed
            yield self._checks
            yield Label("", markup=False, id="header-spacer")
            yield self._elapsed
        with Horizontal(id="header-info"):
            yield self._progress
            yield self._balance
        yield self._note

    def on_mount(self) -> None:
        self._armed.display = self.armed
        self._checks.display = self.checks_known

    # --- what the pane calls -------------------------------------------------
    def set_state(self, state: State, detail: str = "") -> None:
        if state != self.state:
            self._badge.remove_class(state_class(self.state))
            self._badge.add_class(state_class(state))
            self.state = state
            self._badge.update(state_label(state))
        self.state_detail = detail
        self._badge.tooltip = detail or None
        if state in CLOCK_STOPPED:
            if self.started is not None and self.ended is None:
                self.ended = self.clock()
        self.refresh_clock()

    def set_armed(self, armed: bool) -> None:
        self.armed = armed
        self._armed.display = armed

    def set_pid(self, pid: int | None, ended: str | None = None) -> None:
        """The controller's pid; ``ended`` says how it ended (``code 0``, ``SIGKILL``) once it has."""
        if (pid, ended) == (self.pid, self.pid_ended):
            return
        self.pid, self.pid_ended = pid, ended
        self._progress.update(self._progress_text())

    def set_progress(self, round: Any, stage: str | None, balance: float | None, budget: float | None) -> None:
        if (round, stage) != (self.round, self.stage):
            self.round, self.stage = round, stage
            # Fixed width in the stylesheet and no layout pass: a study moves its
            # round or stage many times a second, and a layout repaints the screen.
            self._progress.update(self._progress_text(), layout=False)
        self._balance.set(balance, budget)

    def set_checks(self, ok: bool | None, finished: bool) -> None:
        """The verdicts so far: ✓, ✗ or ? (unknown); unfinished verdicts say so."""
        self.checks_ok, self.checks_known = ok, True
        mark = {True: "✓", False: "✗", None: "?"}[ok]
        self._checks.update(f"checks {mark}")
        self._checks.tooltip = "verdicts of the finished study" if finished else "verdicts so far: the study has not finished"
        self.checks_finished = finished
        for cls in ("-ok", "-fail", "-unknown"):
            self._checks.remove_class(cls)
        self._checks.add_class({True: "-ok", False: "-fail", None: "-unknown"}[ok])
        self._checks.display = True

    def set_note(self, text: str, kind: str = "info", tooltip: str | None = None) -> None:
        """The last thing worth saying in one line: a kill step, a problem, a ledger issue."""
        self.note = text
        self._note.update(text)
        for k in NOTE_KINDS:
            self._note.set_class(k == kind, f"-{k}")
        self._note.tooltip = tooltip or text or None

    def process_started(self) -> None:
        """The controller (re)started: the running time starts, or goes on from the first start."""
        if self.started is None:
            self.started = self.clock()
        self.ended = None
        self.refresh_clock()

    def set_started(self, at: float | None) -> None:
        """Set when the study started, in the clock's units (for a study attached to, say)."""
        self.started = at
        self.ended = None
        self.refresh_clock()

    # --- the clock -----------------------------------------------------------
    @property
    def elapsed(self) -> float | None:
        if self.started is None:
            return None
        end = self.ended if self.ended is not None else self.clock()
        return end - self.started

    @property
    def elapsed_text(self) -> str:
        elapsed = self.elapsed
        return "--:--:--" if elapsed is None else format_elapsed(elapsed)

    def refresh_clock(self) -> None:
        text = self.elapsed_text
        if text != self._elapsed_shown:
            self._elapsed_shown = text
            self._elapsed.refresh()

    # --- text ----------------------------------------------------------------
    def _progress_text(self) -> str:
        if self.pid is None:
            pid = "pid -"
        elif self.pid_ended:
            pid = f"pid {self.pid} ({self.pid_ended})"
        else:
            pid = f"pid {self.pid}"
        rnd = "-" if self.round is None else str(self.round)
        return f"{pid} · round {rnd} · {self.stage or '-'}"
