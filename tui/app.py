"""The operator console: the engine and one screen of panes, in one event loop.

The app owns the engine: its :class:`~studymon.engine.live.supervisor.Supervisor`
runs as an async worker inside the app's own loop, and its events are handed
to the main screen (:class:`~studymon.tui.screens.MainScreen`), which posts
each to the pane of its study.  The screen owns the panes, the keys and the
dialogs; every action it takes (kill, arm, resume, stop) is a call on the
engine, and widgets only render and ask.  When every study has ended the
console stays open on its verdicts (``exit_when_done`` closes it at once, for
scripts); when the operator leaves it exits with the headless run's exit
status, and the command line prints the same check table.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import App
from textual.binding import BindingType
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.types import CSSPathType

from studymon.engine import KillPoint, SessionResult, StudyEvent, StudyLock, StudySpec, Supervisor, worst
from studymon.tui.screens import MainScreen
from studymon.widgets import keys
from studymon.widgets.keys import Scope
from studymon.widgets.ledger_stream import DEFAULT_REFRESH_INTERVAL


@dataclass(frozen=True)
class Planned:
    """A study the console is to watch, and how it comes under watch."""

    spec: StudySpec
    prefix: str  # the template's containerPrefix
    resume: bool = False
    armed: bool | Sequence[KillPoint] = False  # the seed's point (True), or the points in order
    attach: bool = False
    lock: StudyLock | None = None  # the study's lock, claimed by the command (none when attaching)
    trace: bool = False  # record every container event of the study (container-events-trace.jsonl)


class StudymonApp(App[int]):
    """The engine and the main screen; exits with the headless run's status."""

    TITLE = "studymon"
    CSS_PATH: ClassVar[CSSPathType | None] = "app.tcss"  # the widgets carry their own style (DEFAULT_CSS)
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(Scope.APP)

    main: MainScreen  # the screen of panes, from get_default_screen

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal, or on Linux its twin whose input thread sleeps while idle."""
        driver = super().get_driver_class()
        if driver is LinuxDriver:  # not one named in TEXTUAL_DRIVER
            from studymon.tui.driver import QuietLinuxDriver

            return QuietLinuxDriver
        return driver

    def __init__(
        self,
        planned: list[Planned],
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        refresh_interval: float = DEFAULT_REFRESH_INTERVAL,
        start_engine: bool = True,
        save_dir: Path | None = None,
        exit_when_done: bool = False,
        bell: bool = False,
    ) -> None:
        """``clock`` times the running clocks, ``wall_clock`` the containers' durations (both
        injectable so that snapshots are deterministic); ``refresh_interval`` is how often a
        ledger stream catches up with its records (0: at once); ``start_engine=False`` shows
        what :meth:`feed` gives instead; ``exit_when_done`` closes the console as soon as every
        study has ended, instead of staying on the verdicts until the operator quits; ``bell``
        rings the terminal's bell when a diagnosis run starts."""
        super().__init__()
        self.planned = planned
        self.start_engine = start_engine
        self.exit_when_done = exit_when_done
        self.status: int | None = None  # the exit status, once every study has ended
        self._leaving = False  # the operator asked to leave: exit once the engine lets go
        self.supervisor = Supervisor(self._sink)
        self.results: list[SessionResult] = []
        # The screen is made when the app starts (its widgets need a running app).
        self._make_screen: Callable[[], MainScreen] = lambda: MainScreen(
            [(p.spec.id, p.prefix) for p in planned],
            self.supervisor,
            clock=clock,
            wall_clock=wall_clock,
            refresh_interval=refresh_interval,
            save_dir=save_dir,
            bell=bell,
        )

    def get_default_screen(self) -> MainScreen:
        """The main screen: made once, when the app composes (before its mount starts the engine)."""
        self.main = self._make_screen()
        return self.main

    def on_mount(self) -> None:
        # What exists once the screen is up (widgets, styles, Textual's and rich's tables: some
        # 100 000 objects) lives as long as the console.  Frozen, the cyclic collector stops
        # walking it at each full collection: measured under three studies at 50 records/s,
        # full collections took 0.29 s a minute instead of 0.66 s, the longest 85 ms instead
        # of 134 ms, each a pause that holds records and keys back.
        self.call_after_refresh(gc.freeze)
        if self.start_engine:
            for p in self.planned:
                self.supervisor.add(
                    p.spec, resume=p.resume, armed=p.armed, linger=True, attach=p.attach, lock=p.lock, trace=p.trace
                )
            self._supervise()

    def on_unmount(self) -> None:
        # Back to the collector once the console is gone (the process may go on, as under tests).
        gc.unfreeze()

    # --- the engine ----------------------------------------------------------
    def _sink(self, event: StudyEvent) -> None:
        self.main.deliver(event)

    @work(exclusive=True, group="engine")
    async def _supervise(self) -> None:
        self.results = await self.supervisor.run()
        self.status = worst(r.exit_status for r in self.results)
        if self.exit_when_done or self._leaving:
            self._leave_with_status()
        else:
            # Every study has ended: the operator keeps the screen they were watching, now with
            # the verdicts, until they quit.
            self.main.show_ended(self.status, self.results)

    def _leave_with_status(self) -> None:
        status = self.status if self.status is not None else 0
        # As the return code too: App.return_code then says what the headless run's status would.
        self.exit(status, return_code=status)

    async def feed(self, events: Iterable[StudyEvent]) -> None:
        """Show events without an engine (recorded runs, snapshots), as the engine would deliver them;
        returns once every pane has handled them and the clock has ticked."""
        for event in events:
            self._sink(event)
        await self.main.settle()
        self.main.tick()

    # --- leaving -------------------------------------------------------------
    def action_quit_console(self) -> None:
        """Quit from anywhere (ctrl+c): the main screen asks what to do with running studies."""
        self.main.action_quit_console()

    @on(MainScreen.LeaveRequested)
    def _leave(self, message: MainScreen.LeaveRequested) -> None:
        """Stop watching every study; running ones stay running (detached) unless asked to stop first."""
        sessions = self.supervisor.sessions.values()
        if not sessions or self.status is not None:
            self._leave_with_status()  # nothing runs any more: leave with the status of what ended
            return
        self._leaving = True
        if message.stop_first:
            for s in sessions:
                s.stop(then_close=True)
        for s in sessions:
            s.close()
