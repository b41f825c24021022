"""The explorer's console: a campaign's trials as the overview's rows, its progress, and its matrix filling in.

``studymon explore`` without ``--headless``.  The campaign runs as the
headless one does (:class:`~studymon.engine.explore.explorer.Explorer`, in a thread
of its own: Dask's client blocks); each of its steps comes here as it
happens.  On screen:

* a progress line: points and classes, trials done, running and left, time
  to go, and per worker what it ended and what it runs now;
* the overview of ``studymon run`` with a row per trial (and one for the
  trace): its state, the round, stage, budget and runs its study is at, the
  age of its last record, its verdict, and its points and class;
* the matrix, a row per class and a column per check, filling in as trials end.

A trial that runs on this machine (the local cluster) is followed in its
folder as it grows (:class:`~studymon.engine.explore.follow.FolderFollower`); one
that ran elsewhere, once its folder is back.  Enter opens the selected
trial's pane, full screen, as a study's; Escape comes back.  A trial is run
by its worker: its kills are its points, so the pane's study actions only
say so.  ``q`` leaves once the campaign has ended; while it runs, ``q``
asks, and ``q`` again stops it (the trials running are stopped with their
cluster; ``studymon explore --resume CAMPAIGN`` finishes it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.types import CSSPathType
from textual.widgets import Footer, Static

from studymon.engine import (
    EXIT_UNKNOWN,
    ExploreFailed,
    ExploreOptions,
    Explorer,
    FolderFollower,
    State,
    StateChanged,
    StudyEvent,
    container_prefix,
)
from studymon.tui.explore_view import CampaignProgress, matrix_of
from studymon.tui.feed import StudyFeed
from studymon.widgets import keys
from studymon.widgets.keys import Scope
from studymon.widgets.overview import Overview
from studymon.widgets.study_pane import StudyPane

FOLLOW_EVERY = 0.5  # seconds between two reads of the folders of the trials that run on this machine
ASK_AGAIN = 5.0  # seconds within which a second q stops a running campaign

# The row's words for a trial the explorer says more of than its folder does.
_LABELS = {"submitted": "queued", "missed": "missed", "error": "error", "lost": "lost"}


class TrialScreen(Screen[None]):
    """One trial's pane, full screen: read only (its worker runs it); Escape comes back."""

    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(Scope.OPENED, Scope.STUDY)
    AUTO_FOCUS = "LedgerLines"

    def __init__(self, study: str, pane: StudyPane) -> None:
        super().__init__()
        self.study = study
        self.pane = pane

    def compose(self) -> ComposeResult:
        yield self.pane
        yield Footer()

    def action_back(self) -> None:
        self.dismiss(None)

    def action_study(self, verb: str) -> None:
        self._not_here(verb)

    def on_study_pane_action_requested(self, message: StudyPane.ActionRequested) -> None:
        self._not_here(message.action)

    def _not_here(self, verb: str) -> None:
        self.notify(
            f"{self.study} is a campaign's trial, run by its worker: its kills are its points ({verb} is for "
            "studymon run's studies)",
            severity="warning",
        )


class ExploreApp(App[int]):
    """A campaign, run and shown; exits with the campaign's status."""

    TITLE = "studymon explore"
    CSS_PATH: ClassVar[CSSPathType | None] = "app.tcss"  # the widgets carry their own style (DEFAULT_CSS)
    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(Scope.APP, Scope.EXPLORE)

    def __init__(
        self,
        options: ExploreOptions,
        *,
        exit_when_done: bool = False,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        start_campaign: bool = True,
    ) -> None:
        """``start_campaign=False`` runs no campaign: :meth:`take` shows the steps it is given (snapshots)."""
        super().__init__()
        self.start_campaign = start_campaign
        # A local cluster's workers are started by multiprocessing, whose resource tracker is started once,
        # handed this process's stderr; under the running app stderr is Textual's capture, which has no file
        # descriptor, and every worker would fail to start.  So it is started now, while stderr is the real one.
        resource_tracker.ensure_running()
        self.options = options
        self.exit_when_done = exit_when_done
        self.clock, self.wall_clock = clock, wall_clock
        self.explorer = Explorer(options, self._from_explorer)
        self.campaign = CampaignProgress(clock)
        self.status: int | None = None
        self.failure: str | None = None  # why the campaign could not go on
        template = options.template or {}
        self.prefix = container_prefix(template)
        self.followers: dict[str, FolderFollower] = {}  # trials followed in their folders, by id
        self.feeds: dict[str, StudyFeed] = {}
        self.ids: dict[int, str] = {}  # trial number -> its study id
        self.opened: TrialScreen | None = None
        self._asked_at = -ASK_AGAIN
        self.progress_line = Static(id="explore-progress")
        self.workers_line = Static(id="explore-workers")
        self.overview = Overview([], clock=wall_clock, nouns=("trial", "trials"), id="overview")
        self.matrix = Static(id="explore-matrix")
        self.matrix_data: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield self.progress_line
        yield self.workers_line
        yield self.overview
        yield self.matrix
        yield Footer()

    def on_mount(self) -> None:
        self._show_progress()
        self.overview.focus()
        self.set_interval(FOLLOW_EVERY, self._follow)
        self.set_interval(1.0, self._tick)
        if self.start_campaign:
            self._explore()

    # --- the campaign ------------------------------------------------------------
    @work(thread=True, exclusive=True, group="explorer")
    def _explore(self) -> None:
        try:
            status = self.explorer.run()
        except ExploreFailed as exc:
            self.failure, status = str(exc), EXIT_UNKNOWN
        self.call_from_thread(self._ended, status)

    def _from_explorer(self, what: str, facts: dict[str, Any]) -> None:
        # The explorer's thread: its step is handled in the app's loop, in order.
        self.call_from_thread(self.take, what, facts)

    def take(self, what: str, facts: dict[str, Any]) -> None:
        """One step of the campaign (:class:`~studymon.engine.explore.explorer.Explorer`'s progress)."""
        self.campaign.take(what, facts)
        if what == "trace":
            traced = self.options.study or str(self.explorer.plan.get("study", "trace"))
            self._row(traced, note="the trace: one run, unkilled")
            self._watch(traced, Path(facts["out"]))
        elif what == "traced":
            self._follow()
        elif what == "submitted":
            self.ids[int(facts["n"])] = str(facts["id"])
            self._row(str(facts["id"]), label="queued", note=f"{' then '.join(facts['points'])}  [{facts['class']}]")
        elif what == "running":
            trial = self.ids.get(int(facts["n"]))
            if trial is not None:
                self._take(StateChanged(trial, State.RUNNING, f"on {facts['worker']}"))
                self.overview.describe(trial, label="")
                if facts.get("out") is not None:
                    self._watch(trial, Path(facts["out"]))
        elif what in ("done", "missed", "error", "lost"):
            self._trial_ended(what, facts)
        elif what == "matrix":
            self.matrix_data = facts
            self.matrix.update(matrix_of(self.explorer.plan.get("study", ""), facts))
        self._show_progress()

    def _trial_ended(self, what: str, facts: dict[str, Any]) -> None:
        study = self.ids.get(int(facts["n"]))
        if study is None:
            return
        out = facts.get("out")
        if out is not None:
            # The folder shipped back: the same files as the one followed while it ran, read on from there.
            follower = self.followers.get(study)
            if follower is None:
                self._watch(study, Path(out))
            else:
                follower.relocate(Path(out))
            self._drain(study)
        label = _LABELS.get(what, "")
        if what == "done" and self.overview.summaries[study].state not in (State.FINISHED_OK, State.FINISHED_FAIL):
            label = "done"  # no verdict read from its folder (none came back): the explorer's word
        self.overview.describe(study, label=label)
        follower = self.followers.pop(study, None)
        if follower is not None:
            follower.close()

    def _ended(self, status: int) -> None:
        self.status = status
        self.campaign.phase = "ended"
        self.campaign.status = status
        self._follow()
        self.overview.show_ended()
        self._show_progress()
        if self.failure:
            self.notify(self.failure, title="the campaign could not go on", severity="error", timeout=30)
        words = {0: "✓ every trial holds", 1: "✗ a trial fails"}.get(status, "? not every class has a verdict")
        self.notify(f"{words} · exit {status} · q closes", title="campaign ended", timeout=10)
        if self.exit_when_done or self.campaign.stopping:
            self.exit(status, return_code=status)

    # --- rows, followers, panes ----------------------------------------------------
    def _row(self, study: str, *, label: str = "", note: str = "") -> None:
        self.overview.add(study)
        self.overview.describe(study, label=label, note=note)
        self.feeds.setdefault(study, StudyFeed(study))

    def _watch(self, study: str, out: Path) -> None:
        self.followers[study] = FolderFollower(study, out)

    def _take(self, event: StudyEvent) -> None:
        feed = self.feeds.get(event.study)
        if feed is not None:
            feed.add(event)
        self.overview.take(event)
        if self.opened is not None and self.opened.study == event.study:
            self.opened.pane.post_event(event)

    def _drain(self, study: str) -> None:
        """Everything the folder holds now (a poll reads at most a slice of a long ledger)."""
        follower = self.followers.get(study)
        while follower is not None and (events := follower.poll()):
            for event in events:
                self._take(event)

    def _follow(self) -> None:
        for study in list(self.followers):
            for event in self.followers[study].poll():
                self._take(event)

    def _tick(self) -> None:
        self.overview.tick()
        self._show_progress()

    def _show_progress(self) -> None:
        self.progress_line.update(self.campaign.line())
        self.workers_line.update(self.campaign.worker_line())

    def on_overview_open_study(self, message: Overview.OpenStudy) -> None:
        self.open_trial(message.study)

    def open_trial(self, study: str) -> None:
        """``study``'s pane, full screen, handed what its folder held so far; Escape comes back."""
        feed = self.feeds.get(study)
        if self.opened is not None or feed is None:
            return
        pane = StudyPane(study, self.prefix, clock=self.clock, wall_clock=self.wall_clock)
        for event in feed.replay():
            pane.post_event(event)
        self.opened = TrialScreen(study, pane)
        self.push_screen(self.opened, self._trial_closed)

    def _trial_closed(self, _: None = None) -> None:
        study = self.opened.study if self.opened is not None else None
        self.opened = None
        if study is not None:
            self.overview.select_study(study)
        self.overview.focus()

    # --- leaving -------------------------------------------------------------------
    def action_quit_console(self) -> None:
        self.action_leave()

    def action_leave(self) -> None:
        """Leave once the campaign ended; while it runs, ask, and stop it at the second ``q``."""
        if self.status is not None:
            self.exit(self.status, return_code=self.status)
            return
        now = time.monotonic()
        if now - self._asked_at > ASK_AGAIN:
            self._asked_at = now
            self.notify(
                "the campaign is running: q again stops it (the trials running stop, their scene kept); "
                f"studymon explore --resume {self.options.folder} finishes it",
                title="stop the campaign?",
                severity="warning",
                timeout=ASK_AGAIN,
            )
            return
        self.campaign.stopping = True
        self._show_progress()
        self.explorer.stop()
