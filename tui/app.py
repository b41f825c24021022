"""The operator console: one pane per study over the engine, in one event loop.

The engine's supervisor runs as an async worker inside the app's own loop; its
events arrive as :class:`EngineEvent` messages and are handed to the pane of
their study.  Every action (kill, arm, resume, stop, quit) is a call on the
engine; widgets only render and ask.  When every study has ended (or on
quit) the app exits with the headless run's exit status, and the command line
prints the same check table.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Callable, Iterable

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Footer

from studymon.engine.events import Sample, StudyEvent
from studymon.engine.evidence import EvidenceExists, write_text
from studymon.engine.session import SessionResult, StudySession
from studymon.engine.spec import StudySpec
from studymon.engine.studylock import StudyLock
from studymon.engine.supervisor import Supervisor, exit_status
from studymon.widgets.dialogs import ConfirmScreen, HelpScreen, QuitScreen, RecordScreen
from studymon.widgets.ledger_stream import DEFAULT_REFRESH_INTERVAL, LedgerStream
from studymon.widgets.machine_bar import MachineBar
from studymon.widgets.study_pane import StudyPane

TICK_SECONDS = 2.0
NARROW_BELOW = 150  # columns: three panes side by side need about 53 each


@dataclass(frozen=True)
class Planned:
    """A study the console is to watch, and how it comes under watch."""

    spec: StudySpec
    prefix: str  # the template's containerPrefix
    resume: bool = False
    armed: bool = False
    attach: bool = False
    lock: StudyLock | None = None  # the study's lock, claimed by the command (none when attaching)


class EngineEvent(Message):
    """An engine event, delivered to the app's message queue."""

    def __init__(self, event: StudyEvent) -> None:
        super().__init__()
        self.event = event


HELP_TEXT = """\
Each pane is one study: its state, its ledger as it grows, its containers, the
machine's load and its own, and its controls. Actions apply to the pane that
has the focus (click it, or press 1-9 / Tab).

In the ledger: scroll up to stop following, End to follow again, / to filter,
Enter for a record's full JSON, c to copy it, w to save the visible stream.

Kill now asks first (Cancel is the default). Arm kills the controller the
instant its first diagnosis run starts, then resumes it. Quitting while
studies run asks whether to stop them (SIGINT, evidence kept) or to detach
(leave them running; `studymon attach OUT...` takes them back).
"""
# Paragraphs, not lines: the help dialog is narrower than the source, and wraps them to its width.
HELP_TEXT = "\n\n".join(" ".join(paragraph.split()) for paragraph in HELP_TEXT.split("\n\n"))


class StudyCommands(Provider):
    """Every console action, per study, in the command palette."""

    async def search(self, query: str) -> Hits:
        app = self.app
        assert isinstance(app, StudymonApp)
        matcher = self.matcher(query)
        for label, callback, helptext in app.palette_commands():
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), callback, help=helptext)


class StudymonApp(App[int]):
    """One pane per study; the engine runs inside."""

    TITLE = "studymon"
    CSS_PATH = ["../widgets/studymon.tcss", "app.tcss"]
    COMMANDS = App.COMMANDS | {StudyCommands}
    BINDINGS = [
        Binding("question_mark", "help", "Help"),
        Binding("k", "study('kill')", "Kill now"),
        Binding("a", "study('arm')", "Arm"),
        Binding("r", "study('resume')", "Resume"),
        Binding("s", "study('stop')", "Stop"),
        Binding("q", "quit_console", "Quit"),
        Binding("ctrl+c", "quit_console", "Quit", show=False, priority=True),
        *[Binding(str(i), f"focus_pane({i - 1})", f"Study {i}", show=False) for i in range(1, 10)],
    ]
    HELP_KEYS = [
        ("?", "this help"),
        ("1-9, Tab", "focus a study's pane"),
        ("k", "kill the study's controller now (asks first)"),
        ("a", "arm / disarm the kill at the first diagnosis start"),
        ("r", "resume a stopped, crashed or killed study"),
        ("s", "stop the study (SIGINT, graceful; asks first)"),
        ("End", "follow the ledger again"),
        ("/", "filter the ledger by kind or text"),
        ("Enter", "the selected record's full JSON"),
        ("c", "copy the selected record"),
        ("w", "save the visible stream to a file"),
        ("ctrl+p", "command palette: every action"),
        ("q", "quit (asks to stop or detach running studies)"),
    ]

    def __init__(
        self,
        planned: list[Planned],
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        refresh_interval: float = DEFAULT_REFRESH_INTERVAL,
        start_engine: bool = True,
        save_dir: Path | None = None,
    ) -> None:
        """``clock`` times the running clocks, ``wall_clock`` the containers' durations (both
        injectable so that snapshots are deterministic); ``refresh_interval`` is how often a
        ledger stream catches up with its records (0: at once)."""
        super().__init__()
        self.planned = planned
        self.clock = clock
        self.wall_clock = wall_clock
        self.refresh_interval = refresh_interval
        self.start_engine = start_engine
        self.save_dir = save_dir or Path.cwd()
        self.supervisor = Supervisor(self._sink)
        self.results: list[SessionResult] = []
        self.panes: dict[str, StudyPane] = {}
        self._machine_sample: dict | None = None

    # --- layout --------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield MachineBar(id="machine")
        with Horizontal(id="panes"):
            for p in self.planned:
                pane = StudyPane(
                    p.spec.id, p.prefix, clock=self.clock, wall_clock=self.wall_clock,
                    refresh_interval=self.refresh_interval, ticking=False,
                )
                self.panes[p.spec.id] = pane
                yield pane
        yield Footer()

    def on_mount(self) -> None:
        self._apply_width(self.size.width)
        if self.start_engine:
            for p in self.planned:
                self.supervisor.add(
                    p.spec, resume=p.resume, armed=p.armed, linger=True, attach=p.attach, lock=p.lock
                )
            self._supervise()
        first = next(iter(self.panes.values()), None)
        if first is not None:
            first.focus_pane()
        # One clock for every pane and the machine line, every 2 s as btop
        # does by default: what moves is repainted in one frame, not one per
        # pane, and an idle console stays under 1 % of a core.
        self.set_interval(TICK_SECONDS, self._tick)

    def _tick(self) -> None:
        for pane in self.panes.values():
            pane.tick()
        if self._machine_sample is not None:
            self.query_one(MachineBar).update_sample(self._machine_sample)
            self._machine_sample = None

    def on_resize(self, event: object) -> None:
        self._apply_width(self.size.width)

    def _apply_width(self, width: int) -> None:
        self.query_one("#panes").set_class(width < NARROW_BELOW, "narrow")

    # --- the engine ----------------------------------------------------------
    def _sink(self, event: StudyEvent) -> None:
        self.post_message(EngineEvent(event))

    @work(exclusive=True, group="engine")
    async def _supervise(self) -> None:
        self.results = await self.supervisor.run()
        status = exit_status(self.results)
        # As the return code too: App.return_code then says what the headless run's status would.
        self.exit(status, return_code=status)

    def on_engine_event(self, message: EngineEvent) -> None:
        event = message.event
        pane = self.panes.get(event.study)
        if pane is not None:
            pane.handle(event)
        if isinstance(event, Sample):
            self._machine_sample = event.sample

    def feed(self, events: Iterable[StudyEvent]) -> None:
        """Render events without an engine (recorded runs, snapshots)."""
        for event in events:
            self.on_engine_event(EngineEvent(event))
        self._tick()

    # --- which study ---------------------------------------------------------
    def current_study(self) -> str | None:
        focused = self.focused
        while focused is not None:
            if isinstance(focused, StudyPane):
                return focused.study_id
            focused = focused.parent  # type: ignore[assignment]
        return next(iter(self.panes), None)

    def session(self, study: str | None) -> StudySession | None:
        return self.supervisor.sessions.get(study) if study else None

    def action_focus_pane(self, index: int) -> None:
        panes = list(self.panes.values())
        if 0 <= index < len(panes):
            panes[index].focus_pane()

    # --- actions -------------------------------------------------------------
    def on_study_pane_action_requested(self, message: StudyPane.ActionRequested) -> None:
        self.run_action_for(message.study_id, message.action)

    def run_action_for(self, study: str, action: str) -> None:
        {"kill": self.ask_kill, "arm": self.toggle_arm, "resume": self.resume, "stop": self.ask_stop}[action](study)

    def action_study(self, action: str) -> None:
        """A key's action on the study whose pane has the focus."""
        if (study := self.current_study()) is not None:
            self.run_action_for(study, action)

    def ask_kill(self, study: str) -> None:
        session = self.session(study)
        if session is None or not session.is_running():
            self.notify(f"{study}: the controller is not running", severity="warning")
            return
        self.push_screen(
            ConfirmScreen(f"Kill {study} now?", "SIGKILL to its controller; the runs in flight are the targets. "
                          "Resume it afterwards with r.", confirm="Kill"),
            partial(self._kill_confirmed, study),
        )

    def _kill_confirmed(self, study: str, yes: bool | None) -> None:
        session = self.session(study)
        if yes and session is not None:
            if not session.kill_now(auto_resume=False):
                self.notify(f"{study}: nothing to kill", severity="warning")

    def toggle_arm(self, study: str) -> None:
        session = self.session(study)
        if session is None:
            return
        session.arm(not session.armed)

    def resume(self, study: str) -> None:
        session = self.session(study)
        if session is None or not session.resume():
            self.notify(f"{study}: nothing to resume (running or finished)", severity="warning")

    def ask_stop(self, study: str) -> None:
        session = self.session(study)
        if session is None or not session.is_running():
            self.notify(f"{study}: the controller is not running", severity="warning")
            return
        self.push_screen(
            ConfirmScreen(f"Stop {study}?", "SIGINT to its controller (SIGKILL after 10 s); the evidence is kept "
                          "and r resumes it.", confirm="Stop"),
            lambda yes: session.stop() if yes else None,
        )

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.HELP_KEYS, HELP_TEXT))

    def action_quit_console(self) -> None:
        running = [s for s in self.supervisor.sessions.values() if s.is_running()]
        if not running:
            self._close_sessions()
            return
        self.push_screen(QuitScreen(len(running)), self._quit_chosen)

    def _quit_chosen(self, choice: str | None) -> None:
        if choice == "stop":
            for s in self.supervisor.sessions.values():
                s.stop(then_close=True)
            self._close_sessions()
        elif choice == "detach":
            self._close_sessions()

    def _close_sessions(self) -> None:
        """Stop watching every study; running ones stay running (detached) unless a stop is under way."""
        if not self.start_engine or not self.supervisor.sessions:
            self.exit(0)
            return
        for s in self.supervisor.sessions.values():
            s.close()

    # --- ledger stream requests ----------------------------------------------
    def on_ledger_stream_open_record(self, message: LedgerStream.OpenRecord) -> None:
        self.push_screen(RecordScreen(message.record))

    def on_ledger_stream_save_requested(self, message: LedgerStream.SaveRequested) -> None:
        study = self.current_study() or "study"
        path = self.save_dir / f"studymon-{study}-stream-{datetime.now().strftime('%Y%m%d-%H%M%S-%f')}.txt"
        try:
            write_text(path, "\n".join(message.lines) + "\n")
        except (EvidenceExists, OSError) as exc:
            self.notify(f"not saved: {exc}", severity="error")
            return
        self.notify(f"saved {len(message.lines)} lines to {path}")

    # --- palette -------------------------------------------------------------
    def palette_commands(self) -> list[tuple[str, Callable[[], None], str]]:
        out: list[tuple[str, Callable[[], None], str]] = []
        for study in self.panes:
            out += [
                (f"Kill {study} now", partial(self.ask_kill, study), "SIGKILL its controller (asks first)"),
                (f"Arm or disarm {study}", partial(self.toggle_arm, study), "kill at the first diagnosis start"),
                (f"Resume {study}", partial(self.resume, study), "continue a stopped, crashed or killed study"),
                (f"Stop {study}", partial(self.ask_stop, study), "SIGINT, graceful (asks first)"),
            ]
        out.append(("Help", self.action_help, "keys and what the panes show"))
        out.append(("Quit", self.action_quit_console, "stop or detach running studies, then leave"))
        return out
