"""The header of a study pane: id, state badge, arming, pid, round and stage, balance, running time.

Three rows.  What they show is the pane's state, bound to the header's
reactives (``state``, ``armed``, ``controller``, ``progress``, ``checks``, ``note``
...); a watcher per reactive redraws the part that shows it, and nothing
else decides anything here.  Every colour comes from the header's own
``DEFAULT_CSS``: the state badge carries a ``state-<id>`` class
(``state-running``, ``state-finished-ok``, ...).  The running time reads an
injectable clock so that snapshots are deterministic; it is redrawn only
when its text changes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive, var
from textual.widget import Widget
from textual.widgets import Label

from studymon.engine import DETAIL_LIMIT, Progress, State, free_text
from studymon.widgets.states import CLOCK_STOPPED, state_class, state_label

NOTE_KINDS = ("info", "kill", "problem", "alert")
WORD = 64  # characters of a round, a stage or a point shown


class Note(NamedTuple):
    """The last thing worth saying about a study in one line: a kill step, a problem, a ledger issue."""

    text: str = ""
    kind: str = "info"  # one of NOTE_KINDS: its colour


class Checks(NamedTuple):
    """The study's verdicts: all hold (True), one failed (False) or unknown (None); and whether final."""

    ok: bool | None
    finished: bool


def badge(words: str) -> Text:
    """A badge's words in a style of their own (``not underline``, which draws nothing), so that an
    exported screenshot keeps them apart from the badge's padding: SVG viewers that squeeze a text
    run's edge spaces would otherwise glue the badge to the word before it ("gammarunning")."""
    return Text(words, style="not underline", no_wrap=True, end="")


def format_elapsed(seconds: float) -> str:
    """``42s``, ``12m``, ``3h04m``, ``2d03h``: a study's age as ``kubectl`` and k9s write it.

    Seconds only in the first minute: a running time that changes every
    second would repaint the screen every tick for nothing an operator
    reads (measured: the largest part of an idle console's CPU).
    """
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600:02d}h"


def _fmt_number(value: float) -> str:
    return f"{value:g}"


def progress_text(controller: tuple[int | None, str | None], rnd: Any, stage: str | None) -> str:
    """``pid 4242 (SIGKILL) · round 3 · diagnosis``; the round and stage are the study's words, quoted."""
    number, ended = controller
    if number is None:
        pid = "pid -"
    elif ended:
        pid = f"pid {number} ({free_text(ended, WORD)})"
    else:
        pid = f"pid {number}"
    return f"{pid} · round {'-' if rnd is None else free_text(str(rnd), WORD)} · {free_text(str(stage or '-'), WORD)}"


class Elapsed(Widget):
    """How long the study has run (``42s``, ``12m``, ``3h04m``); repainted only when the text changes."""

    text: reactive[str] = reactive("-", layout=False)

    def render(self) -> str:
        return self.text


class BalanceBar(Widget):
    """Spent of budget as a drawn bar: ``████░░ 40/60``."""

    DEFAULT_CSS = """
    BalanceBar > .balance--spent { color: $warning; }
    BalanceBar > .balance--left  { color: $panel-lighten-2; }
    BalanceBar > .balance--text  { color: $text-muted; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"balance--spent", "balance--left", "balance--text"}

    # (spent, budget): one value, so that a change repaints once.
    amounts: reactive[tuple[float | None, float | None]] = reactive((None, None))

    def show(self, balance: float | None, budget: float | None) -> None:
        self.amounts = (None if balance is None or budget is None else budget - balance, budget)

    @property
    def label(self) -> str:
        spent, budget = self.amounts
        if spent is None or budget is None:
            return "budget -"
        return f"{_fmt_number(spent)}/{_fmt_number(budget)}"

    def render(self) -> Text:
        spent, budget = self.amounts
        label = self.label
        width = max(0, self.size.width - len(label) - 1)
        filled = 0 if spent is None or not budget else round(max(0.0, min(1.0, spent / budget)) * width)
        return Text.assemble(
            ("█" * filled, self.get_component_rich_style("balance--spent")),
            ("░" * (width - filled), self.get_component_rich_style("balance--left")),
            (" " + label, self.get_component_rich_style("balance--text")),
            no_wrap=True,
            end="",
        )


class StudyHeader(Vertical):
    """Three rows about one study; the pane binds its state here, the header only shows it."""

    DEFAULT_CSS = """
    StudyHeader {
        height: 3;
        padding: 0 1;
    }

    StudyHeader Horizontal {
        height: 1;
    }

    #study-id {
        max-width: 20;
        text-overflow: ellipsis;
        text-wrap: nowrap;
        text-style: bold;
        color: $text;
        margin-right: 1;
    }

    #state-badge {
        padding: 0 1;
        text-style: bold;
        background: $panel;
        color: $text;
    }

    #state-badge.state-starting      { background: $primary-muted;   color: $text-primary; }
    #state-badge.state-running       { background: $success;         color: $text; }
    #state-badge.state-killed        { background: $error;           color: $text; }
    #state-badge.state-resuming      { background: $accent;          color: $text; }
    #state-badge.state-stopping      { background: $warning-muted;   color: $text-warning; }
    #state-badge.state-stopped       { background: $warning;         color: $text; }
    #state-badge.state-finished-ok   { background: $success-darken-2; color: $text; }
    #state-badge.state-finished-fail { background: $error-darken-2;  color: $text; }
    #state-badge.state-service-error { background: $warning-darken-2; color: $text; }
    #state-badge.state-crashed       { background: $error-darken-1;  color: $text; }
    #state-badge.state-detached      { background: $secondary-muted; color: $text-secondary; }
    #state-badge.state-error         { background: $error;           color: $text; text-style: bold reverse; }

    #armed-badge {
        margin-left: 1;
        padding: 0 1;
        background: $error;
        color: $text;
        text-style: bold;
    }

    #checks-badge {
        margin-left: 1;
        padding: 0 1;
        background: $panel;
    }

    #checks-badge.-ok      { color: $text-success; }
    #checks-badge.-fail    { color: $text-error; text-style: bold; }
    #checks-badge.-unknown { color: $text-warning; }

    #header-spacer {
        width: 1fr;
        height: 1;
    }

    #elapsed {
        width: 8;
        height: 1;
        color: $text-muted;
    }

    #header-progress {
        width: 34;
        text-overflow: ellipsis;
        text-wrap: nowrap;
        color: $text-muted;
        margin-right: 1;
    }

    #balance {
        width: 1fr;
        min-width: 12;
        height: 1;
    }

    #header-note {
        width: 1fr;
        height: 1;
        color: $text-muted;
        text-overflow: ellipsis;
        text-wrap: nowrap;
    }

    #header-note.-kill    { color: $text-accent; }
    #header-note.-problem { color: $text-error; text-style: bold; }
    #header-note.-alert   { color: $text-warning; text-style: bold; }
    """

    state: var[State] = var(State.STARTING)
    state_detail: var[str] = var("")
    armed: var[bool] = var(False)
    armed_point: var[str] = var("")
    # The controller's pid and how it ended (``exit 0``, ``SIGKILL``), once it has.
    controller: var[tuple[int | None, str | None]] = var((None, None))
    progress: var[Progress | None] = var(None)
    checks: var[Checks | None] = var(None)
    note: var[Note] = var(Note())

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
        self.started: float | None = None
        self.ended: float | None = None
        self._round: Any = None
        self._stage: str | None = None
        self._badge = Label(
            badge(state_label(State.STARTING)), markup=False, id="state-badge", classes=state_class(State.STARTING)
        )
        self._armed = Label(badge("ARMED"), markup=False, id="armed-badge")
        self._checks = Label("", markup=False, id="checks-badge")
        self._elapsed = Elapsed(id="elapsed")
        self._progress = Label(progress_text((None, None), None, None), markup=False, id="header-progress")
        self._balance = BalanceBar(id="balance")
        self._note = Label("", markup=False, id="header-note")

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
        self._checks.display = self.checks is not None

    # --- the watchers: one per part of the pane's state ------------------------
    def watch_state(self, old: State, state: State) -> None:
        if state != old:
            self._badge.remove_class(state_class(old))
            self._badge.add_class(state_class(state))
            self._badge.update(badge(state_label(state)))
        if state in CLOCK_STOPPED and self.started is not None and self.ended is None:
            self.ended = self.clock()
        self.refresh_clock()

    def watch_state_detail(self, detail: str) -> None:
        # Text, not a str: a tooltip's string is read as markup.
        self._badge.tooltip = Text(free_text(detail, DETAIL_LIMIT)) if detail else None

    def watch_armed(self, armed: bool) -> None:
        self._armed.display = armed

    def watch_armed_point(self, point: str) -> None:
        self._armed.update(badge(f"ARMED {free_text(point, WORD)}" if point else "ARMED"))

    def watch_controller(self) -> None:
        self._progress.update(progress_text(self.controller, self._round, self._stage))

    def watch_progress(self, progress: Progress | None) -> None:
        if progress is None:
            return
        if (progress.round, progress.stage) != (self._round, self._stage):
            self._round, self._stage = progress.round, progress.stage
            # Fixed width in the stylesheet and no layout pass: a study moves its
            # round or stage many times a second, and a layout repaints the screen.
            self._progress.update(progress_text(self.controller, self._round, self._stage), layout=False)
        self._balance.show(progress.balance, progress.budget)

    def watch_checks(self, checks: Checks | None) -> None:
        if checks is None:
            return
        self._checks.update(badge(f"checks {({True: '✓', False: '✗', None: '?'})[checks.ok]}"))
        self._checks.tooltip = (
            "verdicts of the finished study" if checks.finished else "verdicts so far: the study has not finished"
        )
        for ok, cls in ((True, "-ok"), (False, "-fail"), (None, "-unknown")):
            self._checks.set_class(checks.ok is ok, cls)
        self._checks.display = True

    def watch_note(self, note: Note) -> None:
        # A note tells what the study or its folder said (a ledger issue, a kill's detail): quoted.
        said = free_text(note.text, DETAIL_LIMIT)
        self._note.update(said)
        for kind in NOTE_KINDS:
            self._note.set_class(kind == note.kind, f"-{kind}")
        self._note.tooltip = Text(said) if said else None

    # --- the clock -----------------------------------------------------------
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

    @property
    def elapsed(self) -> float | None:
        if self.started is None:
            return None
        end = self.ended if self.ended is not None else self.clock()
        return end - self.started

    @property
    def elapsed_text(self) -> str:
        elapsed = self.elapsed
        return "-" if elapsed is None else format_elapsed(elapsed)

    def refresh_clock(self) -> None:
        """Show the running time now (the reactive repaints it only when its text changed)."""
        self._elapsed.text = self.elapsed_text
