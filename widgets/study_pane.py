"""One study's pane: header, ledger stream, containers, load graph and controls, fed by engine events.

:meth:`StudyPane.handle` takes every engine event of its study and routes it
to the widget that shows it; the pane keeps only what the buttons need
(running, finished, armed).  Buttons become :class:`StudyPane.ActionRequested`
for the app, which confirms destructive ones and calls the engine.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Callable

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer

from studymon.engine.events import (
    ArmChanged,
    ContainerChanged,
    KillStep,
    Problem,
    ProcessEnded,
    ProcessStarted,
    Progress,
    RecordsSeen,
    Sample,
    State,
    StateChanged,
    StudyEvent,
    Verdicts,
)
from studymon.widgets.containers_table import ContainersTable
from studymon.widgets.controls import Controls
from studymon.widgets.ledger_stream import DEFAULT_MAX_RECORDS, DEFAULT_REFRESH_INTERVAL, LedgerStream
from studymon.widgets.load_graph import LoadGraph
from studymon.widgets.study_header import StudyHeader

SLOW_TICKS = 3  # durations and graphs move every this many clock ticks

# The app adds this to its CSS_PATH: every widget's style lives there.
TCSS_PATH = Path(__file__).with_name("studymon.tcss")

FINISHED = (State.FINISHED_OK, State.FINISHED_FAIL)
# States a study enters only once its controller is gone (or SIGKILLed).  The
# engine reports an end through these states, with or without a ProcessEnded,
# so the buttons follow them too: Resume must light up after a kill or a stop.
CONTROLLER_GONE = (State.KILLED, State.STOPPED, State.CRASHED, State.SERVICE_ERROR, *FINISHED)


def pane_id(study_id: str) -> str:
    """A CSS id for a study's pane (study ids may hold dots and start with a digit)."""
    return "pane-" + re.sub(r"[^A-Za-z0-9_-]", "_", study_id)


class StudyPane(Vertical):
    """Everything about one study.  ``container_prefix`` is the template's ``containerPrefix``."""

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
        self.state = State.STARTING
        self.armed = False
        self.running = False
        self.finished = False
        self.pid: int | None = None
        self.header = StudyHeader(study_id, clock, id="study-header")
        self.stream = LedgerStream(max_records, refresh_interval=refresh_interval, id="ledger")
        self.containers = ContainersTable(f"{container_prefix}-{study_id}-", id="containers")
        self.graph = LoadGraph(cores=cores, redraw_on_sample=False, id="load-graph")
        self.controls = Controls(id="controls")
        self.ticking = ticking  # False: the app calls tick() for all panes at once
        self._ticks = 0
        self.refresh_interval = refresh_interval
        self._progress: Progress | None = None
        self._progress_at = 0.0
        self._progress_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.stream
        yield self.containers
        yield self.graph
        yield self.controls

    def on_mount(self) -> None:
        self._sync_controls()
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

    def _show_progress(self, event: Progress) -> None:
        # Like the stream: at once after a quiet spell, else on the refresh grid,
        # so a study moving its stage many times a second costs one repaint per interval.
        self._progress = event
        if self._progress_timer is not None:
            return
        now = time.monotonic()
        if not self.is_mounted or now - self._progress_at >= self.refresh_interval:
            self._apply_progress()
        else:
            wait = self.refresh_interval - (now % self.refresh_interval)
            self._progress_timer = self.set_timer(wait, self._apply_progress)

    def _apply_progress(self) -> None:
        self._progress_timer = None
        event, self._progress = self._progress, None
        if event is None:
            return
        self._progress_at = time.monotonic()
        self.header.set_progress(event.round, event.stage, event.balance, event.budget)

    def focus_pane(self) -> None:
        """Make this the current pane: focus its ledger stream, where its keys are."""
        self.stream.focus()

    def flush(self) -> None:
        """Show everything handled so far now, not at the next catch-up (for snapshots)."""
        self.stream.flush()
        if self._progress_timer is not None:
            self._progress_timer.stop()
        self._apply_progress()
        self.graph._stale = True
        self.graph.redraw()

    # --- events --------------------------------------------------------------
    def handle(self, event: StudyEvent) -> None:
        """Show one engine event of this study (events of other studies are ignored)."""
        if event.study != self.study_id:
            return
        if isinstance(event, RecordsSeen):
            self._records_seen(event)
        elif isinstance(event, Progress):
            self._show_progress(event)
        elif isinstance(event, StateChanged):
            self.state = event.state
            if event.state in FINISHED:
                self.finished = True
            if event.state in CONTROLLER_GONE:
                self.running = False
            self.header.set_state(event.state, event.detail)
            self._sync_controls()
        elif isinstance(event, ProcessStarted):
            self.pid, self.running = event.pid, True
            self.header.set_pid(event.pid)
            self.header.process_started()
            self._sync_controls()
        elif isinstance(event, ProcessEnded):
            if event.pid == self.pid:
                self.running = False
            how = event.signal if event.signal else f"exit {event.code}"
            self.header.set_pid(event.pid, how)
            self._sync_controls()
        elif isinstance(event, ContainerChanged):
            self.containers.apply(event)
        elif isinstance(event, ArmChanged):
            self.armed = event.armed
            self.header.set_armed(event.armed)
            self._sync_controls()
        elif isinstance(event, KillStep):
            self._kill_step(event)
        elif isinstance(event, Sample):
            self.graph.add_sample(event.sample, event.tree_cpu)
        elif isinstance(event, Verdicts):
            if event.finished:
                self.finished = True
            self.header.set_checks(event.ok, event.finished)
            if event.resume_hint and not event.finished:
                self.header.set_note(f"resume: {event.resume_hint}", "info")
            self._sync_controls()
        elif isinstance(event, Problem):
            text = f"⚠ {event.message}" + (f" — {event.hint}" if event.hint else "")
            self.header.set_note(text, "problem")

    def _records_seen(self, event: RecordsSeen) -> None:
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
            self.header.set_note(f"⚠ ledger line {last.line}: {last.kind} — {last.detail}{more}", "problem")

    def _kill_step(self, event: KillStep) -> None:
        if event.step == "killed":
            self.graph.mark("kill")
        elif event.step == "resumed":
            self.graph.mark("resume")
        prefix = f"kill {event.kill}: " if event.kill else ""
        kind = "problem" if event.step in ("error", "missed", "abandoned", "unsettled") else "kill"
        self.header.set_note(f"{prefix}{event.step}" + (f" — {event.detail}" if event.detail else ""), kind)

    def _sync_controls(self) -> None:
        self.controls.set_state(self.state, self.armed, self.running, self.finished)

    # --- asking the app --------------------------------------------------------
    @on(Controls.Action)
    def _control_pressed(self, event: Controls.Action) -> None:
        event.stop()
        self.post_message(self.ActionRequested(self.study_id, event.action))

    def on_click(self, event: events.Click) -> None:
        # A click anywhere in the pane makes it the current one.
        if not self.has_focus_within:
            self.focus_pane()

