"""One study's pane: header, verdict, ledger stream, containers, timeline and controls, fed by engine events.

The engine's events reach the pane as messages (:mod:`studymon.widgets.messages`),
one class per kind and a handler per class.  What the pane knows of its study
(state, arming, whether its controller runs, pid, progress, verdicts, the last
note) lives in reactives; the header and the controls are bound to them and
redraw themselves, so no handler keeps another widget in step by hand.
Records go to the stream and the timeline's lanes, container events to the
table, the study's own load samples and the kill's marks to the timeline.
Buttons become :class:`StudyPane.ActionRequested` for the screen, which
confirms destructive ones and calls the engine.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import var
from textual.timer import Timer

from studymon.engine import Check, KillStep, Progress, Record, State, StudyEvent, parse_rfc3339, stem
from studymon.widgets import keys, messages
from studymon.widgets.containers_table import ContainersTable
from studymon.widgets.controls import Controls
from studymon.widgets.ledger_store import DEFAULT_MAX_RECORDS
from studymon.widgets.ledger_stream import DEFAULT_REFRESH_INTERVAL, LedgerStream
from studymon.widgets.messages import message_for
from studymon.widgets.study_header import Checks, Note, StudyHeader
from studymon.widgets.timeline import Timeline
from studymon.widgets.verdicts import VerdictPanel

SLOW_TICKS = 3  # durations move every this many clock ticks
ALERT_SECONDS = 5.0  # how long a diagnosis start draws the eye
# A diagnosis start older than this when it reaches the pane is history (a catch-up after an
# attach), not news: it does not flash.
FRESH_SECONDS = 10.0

FINISHED = (State.FINISHED_OK, State.FINISHED_FAIL)
# States a study enters only once its controller is gone (or SIGKILLed).  The
# engine reports an end through these states, with or without a ControllerEnded,
# so the buttons follow them too: Resume must light up after a kill or a stop.
CONTROLLER_GONE = (State.KILLED, State.STOPPED, State.CRASHED, State.SERVICE_ERROR, *FINISHED)
# Kill steps that mean something went wrong: the note says so in the problem colour.
KILL_PROBLEMS = ("error", "missed", "abandoned", "unsettled")


def pane_id(study_id: str) -> str:
    """A CSS id for a study's pane (study ids may hold dots and start with a digit)."""
    return "pane-" + re.sub(r"[^A-Za-z0-9_-]", "_", study_id)


class StudyPane(Vertical):
    """Everything about one study.  ``container_prefix`` is the template's ``containerPrefix``."""

    DEFAULT_CSS = """
    /* Sized for three panes side by side in 160x48: a pane is ~53 columns; of 46
     * rows under the app's header and footer, the pane's border takes 2, the header
     * 3, containers 6, the load graph 5, the controls 3, and the stream the rest.
     */
    StudyPane {
        width: 1fr;
        height: 1fr;
        min-width: 40;
        border: round $panel-lighten-2;
        padding: 0;
    }

    StudyPane:focus-within {
        border: heavy $accent;
    }

    /* A diagnosis run just started: the pane draws the eye for a few seconds. */
    StudyPane.-alert { border: heavy $warning; }
    StudyPane.-alert StudyHeader { background: $warning 25%; }
    """

    # The study as the pane knows it.  ``state`` updates on every report, even of the same
    # state: the header stops its clock on a report, and a detail may come with the same state.
    state: var[State] = var(State.STARTING, always_update=True)
    state_detail: var[str] = var("")
    armed: var[bool] = var(False)
    armed_point: var[str] = var("")  # the point counting now, and how many wait behind it
    running: var[bool] = var(False)  # its controller runs
    finished: var[bool] = var(False)
    pid: var[int | None] = var(None)  # of the controller last started
    # The pid the header shows and how that controller ended (``exit 0``, ``SIGKILL``), once it has.
    controller: var[tuple[int | None, str | None]] = var((None, None))
    progress: var[Progress | None] = var(None)
    checks: var[Checks | None] = var(None)
    note: var[Note] = var(Note())
    alert: var[bool] = var(False)  # a diagnosis run just started: the pane draws the eye

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
        ticking: bool = True,
        bell: bool = False,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id or pane_id(study_id), classes=classes)
        self.study_id = study_id
        self.clock = clock
        self.wall_clock = wall_clock
        self._said_no_mount = False  # why the study has no file system of its own, said once
        self.header = StudyHeader(study_id, clock, id="study-header")
        self.stream = LedgerStream(max_records, refresh_interval=refresh_interval, id="ledger")
        self.containers = ContainersTable(stem(container_prefix, study_id), id="containers")
        # The study's own load and its runs on one time axis, in wall-clock time (records and samples carry it).
        self.timeline = Timeline(clock=wall_clock, id="timeline")
        self.controls = Controls(id="controls")
        self.verdict = VerdictPanel(id="verdict")
        self.bell = bell  # ring the terminal's bell when a diagnosis run starts
        self.purposes: dict[str, str] = {}  # run -> purpose, from the plans seen
        self._verdicts: tuple[Check, ...] = ()
        self._alert_timer: Timer | None = None
        self._note_before_alert = Note()
        self._alert_run: str | None = None  # the diagnosis run whose start lit the pane up
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
            pane.state,
            pane.state_detail,
            pane.armed,
            pane.armed_point,
            pane.controller,
            pane.progress,
            pane.checks,
            pane.note,
        )
        yield self.verdict
        yield self.stream
        yield self.containers
        yield self.timeline
        yield self.controls.data_bind(pane.armed, pane.running, pane.finished)

    def on_mount(self) -> None:
        self.tick()
        if self.ticking:
            # Durations move once a second; the widgets redraw only what changed.
            self.set_interval(1.0, self.tick)

    def tick(self) -> None:
        """Move the clocks, the timeline (when its picture changed) and, every few ticks, the durations.

        The header's clock is at the top of the pane, the durations lower
        down; a repaint covers the box around everything that changed, so the
        durations move less often.
        """
        self.header.refresh_clock()
        self.timeline.tick()  # redraws only when something changed or its axis moved a column
        self._ticks += 1
        if self._ticks % SLOW_TICKS == 1:
            self.containers.tick(self.wall_clock())

    def focus_pane(self) -> None:
        """Make this the current pane: focus its ledger stream, where its keys are."""
        self.stream.focus()

    def flush(self) -> None:
        """Show everything handled so far now, not at the next catch-up (for snapshots)."""
        self.stream.flush()
        if self._progress_timer is not None:
            self._progress_timer.stop()
        self._apply_progress()
        self.timeline.tick()

    # --- engine events ---------------------------------------------------------
    def post_event(self, event: StudyEvent) -> bool:
        """Post an engine event of this study to the pane, as its message; whether it was posted
        (another study's event is not)."""
        message = message_for(event) if event.study == self.study_id else None
        return message is not None and self.post_message(message)

    def on_records_seen(self, message: messages.RecordsSeen) -> None:
        event = message.event
        self.stream.add_records(event.records, skipped=event.skipped)
        self.timeline.set_purposes(event.purposes)
        self.timeline.add_records(event.records)
        for run, purpose in event.purposes:
            self.purposes[run] = purpose
            self.containers.set_purpose(run, purpose)
        for record in event.records:
            if record.kind == "runPlanned":
                run, purpose = record.get("run"), record.get("purpose")
                if isinstance(run, str):
                    self.purposes[run] = str(purpose or "")
                    self.containers.set_purpose(run, str(purpose or ""))
            elif record.kind == "runStarted":
                self._run_started(record)
            elif record.kind == "runResult" and self.alert and record.get("run") == self._alert_run:
                self._end_alert()  # the run is over: a kill now would no longer catch it in flight
        if event.issues:
            last = event.issues[-1]
            more = f" (+{len(event.issues) - 1} more)" if len(event.issues) > 1 else ""
            self.note = Note(f"⚠ ledger line {last.line}: {last.kind} — {last.detail}{more}", "problem")

    def on_progress(self, message: messages.Progress) -> None:
        self._show_progress(message.event)

    def on_state_changed(self, message: messages.StateChanged) -> None:
        event = message.event
        if event.state in FINISHED:
            self.finished = True
        if event.state in CONTROLLER_GONE:
            self.running = False
        self.state_detail = event.detail
        self.state = event.state

    def on_controller_started(self, message: messages.ControllerStarted) -> None:
        event = message.event
        self.pid = event.pid
        self.controller = (event.pid, None)
        self.running = True
        if event.first_start is not None and self.header.started is None:
            # The running time counts from the study's first start, also after an attach.
            self.header.set_started(self.clock() - max(0.0, self.wall_clock() - event.first_start))
        self.header.process_started()
        if event.no_mount is not None and not self._said_no_mount:
            self._said_no_mount = True  # once: every launch of the study says the same
            self.note = Note(f"points are timed by signals and may be missed: {event.no_mount}", "kill")

    def on_controller_ended(self, message: messages.ControllerEnded) -> None:
        event = message.event
        if event.pid == self.pid:
            self.running = False
        self.controller = (event.pid, event.signal or f"exit {event.code}")

    def on_container_changed(self, message: messages.ContainerChanged) -> None:
        self.containers.apply(message.event)

    def on_arm_changed(self, message: messages.ArmChanged) -> None:
        event = message.event
        waiting = f" +{len(event.waiting)}" if event.waiting else ""
        self.armed_point = f"{event.point}{waiting}" if event.armed and event.point else ""
        self.armed = event.armed

    def on_kill_step(self, message: messages.KillStep) -> None:
        event: KillStep = message.event
        at = event.at if event.at is not None else self.wall_clock()
        if event.step == "killed":
            self.timeline.mark("kill", at, f"kill {event.kill} at {event.point or 'once (by hand)'}")
        elif event.step == "resumed":
            self.timeline.mark("resume", at, f"kill {event.kill} resumed")
        elif event.step == "crash":
            self.timeline.mark("crash", at, f"kill {event.kill}: a crash, judged as a kill")
        elif event.step == "stop":
            self.timeline.mark("stop", at, f"kill {event.kill}: a stop with work unfinished, judged as a kill")
        prefix = f"kill {event.kill}: " if event.kill else ""
        kind = "problem" if event.step in KILL_PROBLEMS else "kill"
        self.note = Note(f"{prefix}{event.step}" + (f" — {event.detail}" if event.detail else ""), kind)

    def on_study_load(self, message: messages.StudyLoad) -> None:
        event = message.event
        self.timeline.add_load(event.at, event.cpu, event.memory)

    def on_verdicts(self, message: messages.Verdicts) -> None:
        event = message.event
        if event.finished:
            self.finished = True
            self.verdict.show(event.checks, event.ok)
        self._verdicts = event.checks
        self.checks = Checks(event.ok, event.finished)
        if event.resume_hint and not event.finished:
            self.note = Note(f"resume: {event.resume_hint}", "info")

    def ended(self, finished: bool, message: str = "") -> None:
        """The console has seen the study end: show its verdict (and why it did not finish)."""
        checks = self.checks
        ok = checks.ok if checks is not None and finished else (None if finished else False)
        if not finished:
            self.verdict.show(self._verdicts, ok, f"not finished: {message or 'the study ended early'}")
        elif not self.verdict.display:
            self.verdict.show(self._verdicts, ok)

    # --- a diagnosis run starts: the moment of a manual kill -------------------
    def _run_started(self, record: Record) -> None:
        run = record.get("run")
        if not isinstance(run, str) or self.purposes.get(run) != "diagnosis":
            return
        try:
            age = self.wall_clock() - parse_rfc3339(record.at)
        except ValueError:
            return
        if age > FRESH_SECONDS:
            return
        kill = keys.shown_key("kill")
        if self.note.kind != "alert":
            self._note_before_alert = self.note  # given back when the alert is over
        self.note = Note(f"▶ diagnosis {run} started — {kill} {kill} kills now", "alert")
        self.alert = True
        self._alert_run = run
        self.timeline.highlight(run, self.wall_clock() + ALERT_SECONDS)
        self.timeline.tick()
        if self._alert_timer is not None:
            self._alert_timer.stop()
        self._alert_timer = self.set_timer(ALERT_SECONDS, self._alert_over)
        if self.bell:
            self.app.bell()

    def _alert_over(self) -> None:
        self._alert_timer = None
        self.alert = False
        if self.note.kind == "alert":
            self.note = self._note_before_alert

    def watch_alert(self, alert: bool) -> None:
        self.set_class(alert, "-alert")

    def watch_running(self, running: bool) -> None:
        # "k k kills now" is not true of a controller that is gone: the alert ends with it.
        if not running and self.alert:
            self._end_alert()

    def _end_alert(self) -> None:
        if self._alert_timer is not None:
            self._alert_timer.stop()
        self._alert_over()
        if self._alert_run is not None:
            self.timeline.highlight(self._alert_run, 0.0)  # its lane goes back too
            self.timeline.tick()

    def on_problem(self, message: messages.Problem) -> None:
        event = message.event
        self.note = Note(f"⚠ {event.message}" + (f" — {event.hint}" if event.hint else ""), "problem")

    # --- progress on the refresh grid ------------------------------------------
    def _show_progress(self, event: Progress) -> None:
        # Measured: a study may move its round or stage tens of times a second, and each
        # shown move costs a frame.  So, with the stream (in the frame of its records):
        # at once while it is slow or after a quiet spell, else on the refresh grid (one
        # frame per interval for every pane together).
        # Queued progress messages merge before this (messages.Progress.can_replace).
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
