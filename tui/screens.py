"""The console's main screen: the machine line, one pane per study (or the overview), the footer; its keys and dialogs.

The screen owns the panes, the layout and the keys that act on them (from
the table of actions, :mod:`studymon.widgets.keys`).  Engine events are
handed to it by the app (:meth:`MainScreen.deliver`) and posted to the pane
of their study as messages.  With more studies than fit side by side
(:data:`SIDE_BY_SIDE`) it shows the overview instead, a row per study: no
pane is made until the operator opens a study (Enter), on a screen of its
own (:class:`OpenedStudyScreen`) that is handed the study's recent events
(:class:`~studymon.tui.feed.StudyFeed`) and then its live ones; Escape
comes back.  A key, a button or a palette command becomes a
study action here: destructive ones are confirmed in a dialog first, then
the engine's session of that study is asked.  Leaving is the app's: the
screen asks for it with :class:`MainScreen.LeaveRequested`.

The screen touches no process or socket; the one file it writes is a saved
ledger stream, where the operator asked for it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from studymon.engine import (
    SEED,
    EvidenceExists,
    KillPoint,
    Sample,
    SessionResult,
    StudyEvent,
    StudySession,
    Supervisor,
    write_text,
)
from studymon.tui.feed import StudyFeed
from studymon.widgets import keys
from studymon.widgets.dialogs import ArmScreen, ConfirmScreen, HelpScreen, QuitScreen, RecordScreen
from studymon.widgets.keys import Scope
from studymon.widgets.ledger_stream import DEFAULT_REFRESH_INTERVAL, LedgerStream
from studymon.widgets.machine_bar import MachineBar
from studymon.widgets.messages import MachineSampled
from studymon.widgets.overview import Overview
from studymon.widgets.study_pane import StudyPane

TICK_SECONDS = 2.0
NARROW_BELOW = 150  # columns: three panes side by side need about 53 each
SIDE_BY_SIDE = 3  # studies shown as panes side by side; more are shown as the overview

# What the panes show and what the actions do; the keys are listed below it, from the table
# of actions.  Paragraphs, not lines: the dialog wraps them to its width.
HELP_PARAGRAPHS = (
    (
        "Each pane is one study: its state, its ledger as it grows (scrolling up stops following), its containers, "
        "a graph of its own load (its controller and its runs) with its runs as lanes on the same time line, and its "
        "controls. Actions apply to the pane that has the focus. When a diagnosis run starts, its pane lights up "
        "for a few seconds."
    ),
    (
        "With more than three studies the console shows the overview, a row per study: its state, round and stage, "
        "the budget spent, its runs in flight, the age of its last record, its armed point or kill, and its verdict. "
        "Enter opens the selected study's pane full screen, Escape comes back; the study keys act on the selected "
        "row. / filters (state=running verdict!=ok, or text of the ids), S N A V O sort, Z freezes the order."
    ),
    (
        "Kill now asks first: the same key again kills, Enter or Escape cancels. Arm asks where to kill: "
        "at the first diagnosis run's start (Enter), at a moment the study showed, or at a point typed "
        "(after:KIND, container:ACTION); the controller is killed there, then resumed. Quitting while studies run "
        "asks whether to stop them (SIGINT, evidence kept) or to detach (leave them running; "
        "`studymon attach OUT...` takes them back). "
        "When every study has ended the console stays open on each study's verdict; quit to print the check table."
    ),
)
HELP_TEXT = "\n\n".join(HELP_PARAGRAPHS)

PaletteCommand = tuple[str, Callable[[], object], str]  # title, what it runs, help


class StudyCommands(Provider):
    """Every console action in the command palette (a study's, once per study), listed before typing."""

    def _commands(self) -> list[PaletteCommand]:
        screen = self.screen
        return screen.palette_commands() if isinstance(screen, MainScreen) else []

    async def discover(self) -> Hits:
        for title, command, text in self._commands():
            yield DiscoveryHit(title, command, help=text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, command, text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), command, help=text)


class MainScreen(Screen[None]):
    """One pane per study, side by side (stacked when narrow), the machine line above, the footer below."""

    # The first pane's ledger has the focus when the screen shows (Textual focuses it once the
    # screen is up, so the footer, which lists the focused widget's keys, hears of it).
    AUTO_FOCUS = "LedgerLines"
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(Scope.SCREEN, Scope.STUDY)
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = {StudyCommands}

    class LeaveRequested(Message):
        """The operator chose to leave: stop the running studies first (``stop_first``), or detach from them."""

        def __init__(self, stop_first: bool) -> None:
            super().__init__()
            self.stop_first = stop_first

    def __init__(
        self,
        studies: Sequence[tuple[str, str]],
        supervisor: Supervisor,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        refresh_interval: float = DEFAULT_REFRESH_INTERVAL,
        save_dir: Path | None = None,
        bell: bool = False,
    ) -> None:
        """``studies``: (study id, container prefix) per pane; ``supervisor``: the engine the actions ask;
        ``bell``: ring the terminal's bell when a diagnosis run starts."""
        super().__init__()
        self.supervisor = supervisor
        self.save_dir = save_dir or Path.cwd()
        self.machine = MachineBar(clock, id="machine")
        self.prefixes = dict(studies)
        self.clock, self.wall_clock, self.refresh_interval = clock, wall_clock, refresh_interval
        # Panes side by side, or the overview (with a feed per study to open its pane from).
        self.overview: Overview | None = None
        self.feeds: dict[str, StudyFeed] = {}
        self.opened: OpenedStudyScreen | None = None  # the study opened from the overview, while it shows
        self._machine_sample: dict[str, Any] | None = None  # the last machine sample shown
        self.panes: dict[str, StudyPane] = {}
        if len(studies) > SIDE_BY_SIDE:
            self.overview = Overview([study for study, _ in studies], clock=wall_clock, bell=bell, id="overview")
            self.feeds = {study: StudyFeed(study) for study, _ in studies}
        else:
            # ticking=False: the screen's one clock moves every pane (see tick).
            self.panes = {study: self.make_pane(study, bell=bell) for study, _ in studies}

    def make_pane(self, study: str, *, bell: bool = False) -> StudyPane:
        """A pane for ``study``, moved by the screen's clock."""
        return StudyPane(
            study,
            self.prefixes[study],
            clock=self.clock,
            wall_clock=self.wall_clock,
            refresh_interval=self.refresh_interval,
            ticking=False,
            bell=bell,
        )

    # --- layout --------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield self.machine
        if self.overview is not None:
            yield self.overview
        else:
            with Horizontal(id="panes"):
                yield from self.panes.values()
        yield Footer()

    def on_mount(self) -> None:
        if self.overview is not None:
            self.overview.focus()
        else:
            self._apply_width(self.size.width)
        # Panes side by side show every study's load graph; the overview shows none until a study opens.
        self.supervisor.show_graphs(self.overview is None)
        # One clock for every pane and the machine line, every 2 s as btop does by default:
        # what moves is repainted in one frame, not one per pane, and an idle console stays
        # under 1 % of a core (measured).
        self.set_interval(TICK_SECONDS, self.tick)

    def tick(self) -> None:
        """Move every pane's clocks (and, less often, durations and graphs) and the machine line in one frame."""
        for pane in self.panes.values():
            pane.tick()
        if self.overview is not None:
            self.overview.tick()
        if self.opened is not None:
            self.opened.pane.tick()
            self.opened.machine.tick()
        self.machine.tick()

    def on_resize(self) -> None:
        if self.overview is None:
            self._apply_width(self.size.width)

    def _apply_width(self, width: int) -> None:
        self.query_one("#panes").set_class(width < NARROW_BELOW, "narrow")

    # --- engine events -------------------------------------------------------
    def deliver(self, event: StudyEvent) -> None:
        """Post an engine event to the pane of its study, or to its row and feed (samples to the machine line too)."""
        pane = self.panes.get(event.study)
        if pane is not None:
            pane.post_event(event)
        elif self.overview is not None:
            feed = self.feeds.get(event.study)
            if feed is not None:
                feed.add(event)
                self.overview.take(event)
            if self.opened is not None:
                self.opened.pane.post_event(event)
        if isinstance(event, Sample) and event.sample is not self._machine_sample:
            # Every study's session passes on the same machine sample: the machine line takes it once.
            self._machine_sample = event.sample
            self.machine.post_message(MachineSampled(event.sample))
            if self.opened is not None:
                self.opened.machine.post_message(MachineSampled(event.sample))

    def show_ended(self, status: int, results: Sequence[SessionResult]) -> None:
        """Every study has ended: each pane shows its verdict, the top line the overall result."""
        for result in results:
            pane = self.panes.get(result.study)
            if pane is not None:
                pane.ended(result.finished, result.message)
            if self.overview is not None:
                self.overview.ended(result.study, result.finished, result.message)
            if self.opened is not None and self.opened.study == result.study:
                self.opened.pane.ended(result.finished, result.message)
        if self.overview is not None:
            self.overview.show_ended()
        quit_key = keys.shown_key("quit_console")
        failed = [r.study for r in results if r.exit_status == 1]
        unfinished = [r.study for r in results if r.exit_status == 3]
        if status == 0:
            words = f"✓ every study ended, every check holds · exit 0 · {quit_key} closes"
            ok: bool | None = True
        elif status == 1:
            words = f"✗ checks fail: {', '.join(failed)} · exit 1 · {quit_key} closes"
            ok = False
        else:
            words = f"? not finished: {', '.join(unfinished) or 'some'} · exit {status} · {quit_key} closes"
            ok = None
        self.machine.overall = (ok, words)
        self.notify(words, title="studies ended", severity="information" if status == 0 else "error", timeout=10)

    async def settle(self) -> None:
        """Wait until every pane and the machine line have handled what was posted to them."""
        handled: list[asyncio.Event] = []
        if self.overview is not None:
            self.overview.flush()  # what a grid would have drawn a moment later, now
        widgets: list[Widget] = [self.machine, *self.panes.values()]
        if self.opened is not None:
            widgets.append(self.opened.pane)
        for widget in widgets:
            done = asyncio.Event()
            # A callback is queued behind the messages already posted: once it runs, they are handled.
            if widget.call_later(done.set):
                handled.append(done)
        await asyncio.gather(*(done.wait() for done in handled))

    # --- which study ---------------------------------------------------------
    def current_study(self) -> str | None:
        """The study whose pane has the focus (the first one when none has), or the overview's selected row's."""
        if self.overview is not None:
            return self.overview.selected
        node = self.focused
        while node is not None:
            if isinstance(node, StudyPane):
                return node.study_id
            node = node.parent if isinstance(node.parent, Widget) else None
        return next(iter(self.panes), None)

    def session(self, study: str | None) -> StudySession | None:
        return self.supervisor.sessions.get(study) if study else None

    def action_focus_pane(self, index: int) -> None:
        if self.overview is not None:
            self.overview.select(index)
            return
        panes = list(self.panes.values())
        if 0 <= index < len(panes):
            panes[index].focus_pane()

    # --- the overview: opening a study ---------------------------------------
    def on_overview_open_study(self, message: Overview.OpenStudy) -> None:
        self.open_study(message.study)

    def open_study(self, study: str) -> None:
        """Show ``study``'s pane full screen, made now and handed its recent events; Escape comes back."""
        if study not in self.feeds or self.opened is not None:
            return
        pane = self.make_pane(study)
        for event in self.feeds[study].replay():
            pane.post_event(event)
        self.opened = OpenedStudyScreen(self, study, pane)
        self.app.push_screen(self.opened, self._study_closed)
        self.supervisor.show_graphs(True)

    def _study_closed(self, _: None = None) -> None:
        study = self.opened.study if self.opened is not None else None
        self.opened = None  # the pane goes with its screen: a study not shown costs no widget
        self.supervisor.show_graphs(False)
        if self.overview is not None and study is not None:
            self.overview.select_study(study)
            self.overview.focus()

    # --- study actions: keys, buttons, palette -------------------------------
    def action_study(self, verb: str) -> None:
        """A key's study action, on the study whose pane has the focus."""
        if (study := self.current_study()) is not None:
            self.study_action(study, verb)

    def on_study_pane_action_requested(self, message: StudyPane.ActionRequested) -> None:
        self.study_action(message.study_id, message.action)

    def study_action(self, study: str, verb: str) -> None:
        """Run study action ``verb`` (``kill``, ``arm``, ``resume``, ``stop``) on ``study``."""
        {"kill": self.ask_kill, "arm": self.toggle_arm, "resume": self.resume, "stop": self.ask_stop}[verb](study)

    def ask_kill(self, study: str) -> None:
        self._ask_if_running(study, self.kill_question(study), partial(self._kill_confirmed, study))

    @staticmethod
    def kill_question(study: str) -> ConfirmScreen:
        """The dialog that asks before a manual kill: the kill key again confirms, Enter and Escape cancel."""
        return ConfirmScreen(
            f"Kill {study} now?",
            f"{keys.shown_key('kill')} again kills: SIGKILL to its controller; the runs in flight are the "
            f"targets. Enter or Escape cancels. Resume it afterwards with {keys.shown_key('resume')}.",
            confirm="Kill",
            confirm_key=keys.key_of("kill"),
        )

    def _ask_if_running(self, study: str, question: ConfirmScreen, then: Callable[[bool | None], None]) -> None:
        """Ask ``question`` about a study whose controller runs (else say it does not), then call ``then``."""
        session = self.session(study)
        if session is None or not session.is_running():
            self.notify(f"{study}: the controller is not running", severity="warning")
            return
        self.app.push_screen(question, then)

    def _kill_confirmed(self, study: str, yes: bool | None) -> None:
        session = self.session(study)
        if yes and session is not None and not session.kill_now(auto_resume=False):
            self.notify(f"{study}: nothing to kill", severity="warning")

    def toggle_arm(self, study: str) -> None:
        """Disarm an armed study; else ask where to kill (the seed's point first: ``a``, Enter arms it)."""
        session = self.session(study)
        if session is None:
            return
        if session.armed:
            session.arm(False)
            return
        seen = [(m, "seen in this study") for m in session.moments() if m != str(SEED)]
        offered = [(str(SEED), "the first diagnosis run's start"), *seen]
        self.app.push_screen(ArmScreen(study, offered), partial(self._arm_chosen, study))

    def _arm_chosen(self, study: str, point: str | None) -> None:
        session = self.session(study)
        if point is not None and session is not None:
            session.arm(True, KillPoint.parse(point))

    def resume(self, study: str) -> None:
        session = self.session(study)
        if session is None or not session.resume():
            self.notify(f"{study}: nothing to resume (running or finished)", severity="warning")

    def ask_stop(self, study: str) -> None:
        self._ask_if_running(
            study,
            ConfirmScreen(
                f"Stop {study}?",
                "SIGINT to its controller (SIGKILL after 10 s); the evidence is kept "
                f"and {keys.shown_key('resume')} resumes it.",
                confirm="Stop",
            ),
            partial(self._stop_confirmed, study),
        )

    def _stop_confirmed(self, study: str, yes: bool | None) -> None:
        session = self.session(study)
        if yes and session is not None:
            session.stop()

    # --- the console's own actions -------------------------------------------
    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(keys.help_sections(), HELP_TEXT))

    def action_quit_console(self) -> None:
        running = [s for s in self.supervisor.sessions.values() if s.is_running()]
        if not running:
            self.post_message(self.LeaveRequested(stop_first=False))
            return
        self.app.push_screen(QuitScreen(len(running)), self._quit_chosen)

    def _quit_chosen(self, choice: str | None) -> None:
        if choice in ("stop", "detach"):
            self.post_message(self.LeaveRequested(stop_first=choice == "stop"))

    def palette_commands(self) -> list[PaletteCommand]:
        """The palette's commands, from the table of actions: each study's actions, then the console's."""
        rows = keys.palette_rows()
        out: list[PaletteCommand] = []
        for study in self.panes or self.feeds:
            out += [
                (str(row.palette).format(study=study), partial(self.study_action, study, row.verb), row.help)
                for row in rows
                if row.verb is not None
            ]
        out += [(str(row.palette), partial(self.run_action, row.action), row.help) for row in rows if row.verb is None]
        return out

    # --- ledger stream requests ----------------------------------------------
    def on_ledger_stream_open_record(self, message: LedgerStream.OpenRecord) -> None:
        self.app.push_screen(RecordScreen(message.record))

    def on_ledger_stream_save_requested(self, message: LedgerStream.SaveRequested) -> None:
        study = message.stream.query_ancestor(StudyPane).study_id
        path = self.save_dir / f"studymon-{study}-stream-{datetime.now().astimezone().strftime('%Y%m%d-%H%M%S-%f')}.txt"
        try:
            write_text(path, "\n".join(message.lines) + "\n")
        except (EvidenceExists, OSError) as exc:
            self.notify(f"not saved: {exc}", severity="error")
            return
        self.notify(f"saved {len(message.lines)} lines to {path}")


class OpenedStudyScreen(Screen[None]):
    """One study's pane, full screen, opened from the overview: every key of a pane works; Escape comes back."""

    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(Scope.OPENED, Scope.STUDY)
    AUTO_FOCUS = "LedgerLines"

    def __init__(self, main: MainScreen, study: str, pane: StudyPane) -> None:
        super().__init__()
        self.main = main
        self.study = study
        self.pane = pane
        self.machine = MachineBar(main.clock, id="machine")
        self.machine.take_over(main.machine)

    def compose(self) -> ComposeResult:
        yield self.machine
        yield self.pane
        yield Footer()

    def action_back(self) -> None:
        self.dismiss(None)

    def action_study(self, verb: str) -> None:
        self.main.study_action(self.study, verb)

    def on_study_pane_action_requested(self, message: StudyPane.ActionRequested) -> None:
        self.main.study_action(message.study_id, message.action)

    def on_ledger_stream_open_record(self, message: LedgerStream.OpenRecord) -> None:
        self.main.on_ledger_stream_open_record(message)

    def on_ledger_stream_save_requested(self, message: LedgerStream.SaveRequested) -> None:
        self.main.on_ledger_stream_save_requested(message)
