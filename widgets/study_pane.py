"""One study's pane: header, ledger stream, containers, load graph and controls, fed by engine events.

The engine's events reach the pane as messages (:mod:`studymon.widgets.messages`),
one class per kind and a handler per class.  What the pane knows of its study
(state, arming, whether its controller runs, pid, progress, verdicts, the last
note) lives in reactives; the header and the controls are bound to them and
redraw themselves, so no handler keeps another widget in step by hand.
Records go to the stream, container events to the table, samples and kill
marks to the graph.  Buttons become :class:`StudyPane.ActionRequested` for
the screen, which confirms destructive ones and calls the engine.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import var
from textual.timer import Timer

from studymon.engine.events import KillStep, Progress, State, StudyEvent
from studymon.widgets.containers_table import ContainersTable
from studymon.widgets.controls import Controls
from studymon.widgets.ledger_stream import DEFAULT_MAX_RECORDS, DEFAULT_REFRESH_INTERVAL, LedgerStream
from studymon.widgets.load_graph import LoadGraph
from studymon.widgets.messages import (
    ArmingChanged,
    ContainerMoved,
    ControllerEnded,
    ControllerStarted,
    KillStepped,
    ProblemSeen,
    ProgressMoved,
    RecordsArrived,
    Sampled,
    StateMoved,
    VerdictsGiven,
    message_for,
)
from studymon.widgets.study_header import Checks, Note, StudyHeader

SLOW_TICKS = 3  # durations and graphs move every this many clock ticks

# The app adds this to its CSS_PATH: every widget's style lives there.
TCSS_PATH = Path(__file__).with_name("studymon.tcss")

FINISHED = (State.FINISHED_OK, State.FINISHED_FAIL)
# States a study enters only once its controller is gone (or SIGKILLed).  The
# engine reports an end through these states, with or without a ProcessEnded,
# so the buttons follow them too: Resume must light up after a kill or a stop.
CONTROLLER_GONE = (State.KILLED, State.STOPPED, State.CRASHED, State.SERVICE_ERROR, *FINISHED)
# Kill steps that mean something went wrong: the note says so in the problem colour.
KILL_PROBLEMS = ("error", "missed", "abandoned", "unsettled")


def pane_id(study_id: str) -> str:
    """A CSS id for a study's pane (study ids may hold dots and start with a digit)."""
    return "pane-" + re.sub(r"[^A-Za-z0-9_-]", "_", study_id)


class StudyPane(Vertical):
    """Everything about one study.  ``container_prefix`` is the template's ``containerPrefix``."""

    # The study as the pane knows it.  ``state`` updates on every report, even of the same
    # state: the header stops its clock on a report, and a detail may come with the same state.
    state: var[State] = var(State.STARTING, always_update=True)
    state_detail: var[str] = var("")
    armed: var[bool] = var(False)
    running: var[bool] = var(False)  # its controller runs
    finished: var[bool] = var(False)
    pid: var[int | None] = var(None)  # of the controller last started
    # The pid the header shows and how that controller ended (``exit 0``, ``SIGKILL``), once it has.
    controller: var[tuple[int | None, str | None]] = var((None, None))
    progress: var[Progress | None] = var(None)
    checks: var[Checks | None] = var(None)
    note: var[Note] = var(Note())

    class ActionRequested(Message):
        """The operator pressed a control: ``action`` is ``kill``, ``arm``, ``resume`` or ``stop``."""

        def __init__(self, study_id: str, action: str) -> None:
            super().__init__()
            self.study_id = study_id
            self.action = action

    def __init__(
        self,
        study_id: str,
        container_prefix: str,
        clock: Callable[[], float] = time.monotonic,
        *,
        wall_clock: Callable[[], float] = time.time,
        max_records: int = DEFAULT_MAX_RECORDS,
        refresh_interval: float = DEFAULT_REFRESH_INTERVAL,
        cores: int | None = None,
        ticking: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id or pane_id(study_id), classes=classes)
        self.study_id = study_id
        self.clock = clock
        self.wall_clock = wall_clock
        self.header = StudyHeader(study_id, clock, id="study-header")
        self.stream = LedgerStream(max_records, refresh_interval=refresh_interval, id="ledger")
        self.containers = ContainersTable(f"{container_prefix}-{study_id}-", id="containers")
        self.graph = LoadGraph(cores=cores, redraw_on_sample=False, id="load-graph")
        self.controls = Controls(id="controls")
        self.ticking = ticking  # False: the screen calls tick() for all panes at once
        self._ticks = 0
        self.refresh_interval = refresh_interval
        # The progress not shown yet, and when progress was last shown (see _show_progress).
        self._progress: Progress | None = None
        self._progress_at = 0.0
        self._progress_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        pane = StudyPane
        yield self.header.data_bind(
            pane.state, pane.state_detail, pane.armed, pane.controller, pane.progress, pane.checks, pane.note
        )
        yield self.stream
        yield self.containers
        yield self.graph
        yield self.controls.data_bind(pane.armed, pane.running, pane.finished)

    def on_mount(self) -> None:
        self.tick()
        if self.ticking:
            # Durations move once a second; the widgets redraw only what changed.
            self.set_interval(1.0, self.tick)

    def tick(self) -> None:
        """Move the clocks and, every few seconds, the durations and the load graph.

        The header's clock is at the top of the pane, the durations and the
        graph lower down; a repaint covers the box around everything that
        changed, so the lower parts move together and less often.
        """
        self.header.refresh_clock()
        self._ticks += 1
        if self._ticks % SLOW_TICKS == 1:
            self.containers.tick(self.wall_clock())
            self.graph.redraw()

    def focus_pane(self) -> None:
        """Make this the current pane: focus its ledger stream, where its keys are."""
        self.stream.focus()

    def flush(self) -> None:
        """Show everything handled so far now, not at the next catch-up (for snapshots)."""
        self.stream.flush()
        if self._progress_timer is not None:
            self._progress_timer.stop()
        self._apply_progress()
        self.graph.redraw(force=True)

    # --- engine events ---------------------------------------------------------
    def post_event(self, event: StudyEvent) -> bool:
        """Post an engine event of this study to the pane, as its message; whether it was posted
        (another study's event is not)."""
        message = message_for(event) if event.study == self.study_id else None
        return message is not None and self.post_message(message)

    @on(RecordsArrived)
    def _records(self, message: RecordsArrived) -> None:
        event = message.event
        self.stream.add_records(event.records, skipped=event.skipped)
        for run, purpose in event.purposes:
            self.containers.set_purpose(run, purpose)
        for record in event.records:
            if record.kind == "runPlanned":
                run, purpose = record.get("run"), record.get("purpose")
                if isinstance(run, str):
                    self.containers.set_purpose(run, str(purpose or ""))
        if event.issues:
            last = event.issues[-1]
            more = f" (+{len(event.issues) - 1} more)" if len(event.issues) > 1 else ""
            self.note = Note(f"⚠ ledger line {last.line}: {last.kind} — {last.detail}{more}", "problem")

    @on(ProgressMoved)
    def _progress_moved(self, message: ProgressMoved) -> None:
        self._show_progress(message.event)

    @on(StateMoved)
    def _state_moved(self, message: StateMoved) -> None:
        event = message.event
        if event.state in FINISHED:
            self.finished = True
        if event.state in CONTROLLER_GONE:
            self.running = False
        self.state_detail = event.detail
        self.state = event.state

    @on(ControllerStarted)
    def _controller_started(self, message: ControllerStarted) -> None:
        self.pid = message.event.pid
        self.controller = (message.event.pid, None)
        self.running = True
        self.header.process_started()

    @on(ControllerEnded)
    def _controller_ended(self, message: ControllerEnded) -> None:
        event = message.event
        if event.pid == self.pid:
            self.running = False
        self.controller = (event.pid, event.signal or f"exit {event.code}")

    @on(ContainerMoved)
    def _container_moved(self, message: ContainerMoved) -> None:
        self.containers.apply(message.event)

    @on(ArmingChanged)
    def _arming_changed(self, message: ArmingChanged) -> None:
        self.armed = message.event.armed

    @on(KillStepped)
    def _kill_stepped(self, message: KillStepped) -> None:
        event: KillStep = message.event
        if event.step == "killed":
            self.graph.mark("kill")
        elif event.step == "resumed":
            self.graph.mark("resume")
        prefix = f"kill {event.kill}: " if event.kill else ""
        kind = "problem" if event.step in KILL_PROBLEMS else "kill"
        self.note = Note(f"{prefix}{event.step}" + (f" — {event.detail}" if event.detail else ""), kind)

    @on(Sampled)
    def _sampled(self, message: Sampled) -> None:
        self.graph.add_sample(message.event.sample, message.event.tree_cpu)

    @on(VerdictsGiven)
    def _verdicts_given(self, message: VerdictsGiven) -> None:
        event = message.event
        if event.finished:
            self.finished = True
        self.checks = Checks(event.ok, event.finished)
        if event.resume_hint and not event.finished:
            self.note = Note(f"resume: {event.resume_hint}", "info")

    @on(ProblemSeen)
    def _problem_seen(self, message: ProblemSeen) -> None:
        event = message.event
        self.note = Note(f"⚠ {event.message}" + (f" — {event.hint}" if event.hint else ""), "problem")

    # --- progress on the refresh grid ------------------------------------------
    def _show_progress(self, event: Progress) -> None:
        # Measured: a study may move its round or stage tens of times a second, and each
        # shown move costs a frame.  So, with the stream (in the frame of its records):
        # at once while it is slow or after a quiet spell, else on the refresh grid (one
        # frame per interval for every pane together).
        # Queued progress messages merge before this (ProgressMoved.can_replace).
        self._progress = event
        now = time.monotonic()
        if not self.is_mounted or not self.stream.busy or now - self._progress_at >= self.refresh_interval:
            if self._progress_timer is not None:
                self._progress_timer.stop()
            self._apply_progress()
        elif self._progress_timer is None:
            wait = self.refresh_interval - (now % self.refresh_interval)
            self._progress_timer = self.set_timer(wait, self._apply_progress)

    def _apply_progress(self) -> None:
        self._progress_timer = None
        event, self._progress = self._progress, None
        if event is None:
            return
        self._progress_at = time.monotonic()
        self.progress = event

    # --- asking the screen -----------------------------------------------------
    @on(Controls.Action)
    def _control_pressed(self, event: Controls.Action) -> None:
        event.stop()
        self.post_message(self.ActionRequested(self.study_id, event.action))

    def on_click(self) -> None:
        # A click anywhere in the pane makes it the current one.
        if not self.has_focus_within:
            self.focus_pane()
