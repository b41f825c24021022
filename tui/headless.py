"""The headless front end: a compact live block per study while running, then the check table.

On a terminal it redraws a rich ``Live`` block a few times a second; without
one (CI logs, pipes) it prints one line per notable event instead, so a log
reads as a story.  Either way it ends with the same check table as the
console.  What a study wrote (run ids, kinds, stages, messages) is shown
through the one quoting function, as rich ``Text``: never sent raw, never
read as markup.
"""

from __future__ import annotations

import collections
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from studymon.engine import (
    DETAIL_LIMIT,
    MANY_STUDIES,
    ArmChanged,
    ContainerChanged,
    ControllerEnded,
    ControllerStarted,
    KillStep,
    Problem,
    Progress,
    RecordsSeen,
    StateChanged,
    StudyEvent,
    Verdicts,
    free_text,
    shown,
)
from studymon.widgets.states import state_label

LAST_KINDS = 6
LAST_STEPS = 5
WORD = 64  # characters of a run id, kind, stage or container name shown (the contract's ids have at most 63)


def _said(value: Any) -> str:
    """A value a study wrote (a run id, a kind, a round of any JSON type) as words: quoted, cut at ``WORD``."""
    return "-" if value is None else free_text(value if isinstance(value, str) else str(value), WORD)


@dataclass
class StudyView:
    """What the live block shows of one study, folded from its events."""

    id: str
    state: str = "starting"
    pid: int | None = None
    said_no_mount: bool = False  # the reason there is no study file system, said once
    armed: bool = False
    round: Any = None
    stage: str | None = None
    balance: float | None = None
    budget: float | None = None
    in_flight: tuple[tuple[str, str | None], ...] = ()
    containers: dict[str, str] = field(default_factory=dict)
    kinds: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=LAST_KINDS))
    steps: collections.deque[str] = field(default_factory=lambda: collections.deque(maxlen=LAST_STEPS))
    records: int = 0
    issues: int = 0
    started: float = field(default_factory=time.monotonic)
    ended: str | None = None  # how the last controller ended, as its keeper reported it
    finished: bool = False
    verdict: bool | None = None


class HeadlessView:
    """Folds engine events into :class:`StudyView` and draws them."""

    def __init__(self, ids: list[str], console: Console | None = None) -> None:
        self.console = console or Console()
        self.live_mode = self.console.is_terminal
        self.views = {i: StudyView(i) for i in ids}
        self._live: Live | None = None

    # --- events ----------------------------------------------------------------
    def __call__(self, event: StudyEvent) -> None:
        view = self.views.get(event.study)
        if view is None:
            return
        line: str | None = None
        if isinstance(event, RecordsSeen):
            view.records += len(event.records)
            view.issues += len(event.issues)
            for r in event.records:
                view.kinds.append(r.kind)
            for issue in event.issues:
                line = f"ledger line {issue.line}: {issue.kind} ({issue.detail})"
        elif isinstance(event, Progress):
            view.round, view.stage = event.round, event.stage
            view.balance, view.budget = event.balance, event.budget
            view.in_flight = event.in_flight
        elif isinstance(event, StateChanged):
            view.state = state_label(event.state)
            line = view.state + (f" — {event.detail}" if event.detail else "")
        elif isinstance(event, ControllerStarted):
            view.pid = event.pid
            if event.no_mount is not None and not view.said_no_mount:
                view.said_no_mount = True  # once: every launch of the study says the same
                line = f"points are timed by signals and may be missed: {event.no_mount}"
        elif isinstance(event, ControllerEnded):
            line = f"controller {event.pid} ended: code {event.code} signal {event.signal}"
            view.ended = f"exit {event.code}" if event.signal is None else f"killed by {event.signal}"
        elif isinstance(event, ContainerChanged):
            if event.action == "destroy":
                view.containers.pop(event.name, None)
            else:
                view.containers[event.name] = (
                    f"{event.status} {event.exit_code}" if event.exit_code is not None else event.status
                )
        elif isinstance(event, ArmChanged):
            view.armed = event.armed
            if event.armed:
                waiting = f" (then {', '.join(event.waiting)})" if event.waiting else ""
                line = f"armed: kill at {event.point}{waiting}"
            else:
                line = "disarmed"
        elif isinstance(event, KillStep):
            text = f"kill {event.kill}: {event.step}" + (f" — {event.detail}" if event.detail else "")
            view.steps.append(text)
            line = text
        elif isinstance(event, Problem):
            view.steps.append(f"problem: {event.message}")
            line = f"problem: {event.message}"
        elif isinstance(event, Verdicts):
            view.finished, view.verdict = event.finished, event.ok
            mark = {True: "✓", False: "✗", None: "?"}[event.ok]
            line = f"checks {mark}" + ("" if event.finished else " (unfinished)")
        if line is not None and not self.live_mode:
            # Lines carry what studies wrote (run ids, log lines, paths): plain text, control characters shown.
            said = Text.assemble((event.study, "bold cyan"), " ", free_text(line, DETAIL_LIMIT))
            self.console.print(said, highlight=False)

    def known(self, study: str) -> str:
        """One line of what the events told of ``study``: for an operator leaving before its end."""
        v = self.views[study]
        parts = [v.state, f"{v.records} ledger records"]
        if v.round is not None or v.stage:
            parts.append(f"round {_said(v.round)} stage {_said(v.stage or None)}")
        if v.budget is not None and v.balance is not None:
            parts.append(f"balance {v.balance:g} of {v.budget:g}")
        if v.in_flight:
            parts.append("in flight: " + ", ".join(_said(run) for run, _ in v.in_flight))
        if v.ended:
            parts.append(f"last controller: {v.ended}")
        if v.finished:
            parts.append("checks " + {True: "✓", False: "✗", None: "?"}[v.verdict])
        return free_text(", ".join(parts), DETAIL_LIMIT)

    # --- drawing -----------------------------------------------------------------
    def render(self) -> Group | Table:
        """A block per study; with many studies (:data:`MANY_STUDIES`), a line each, as the console's overview."""
        if len(self.views) >= MANY_STUDIES:
            return self._rows()
        return Group(*(self._panel(v) for v in self.views.values()))

    def _rows(self) -> Table:
        table = Table(box=None, pad_edge=False, expand=False, show_edge=False)
        for title in ("study", "state", "round", "stage", "spent", "in flight", "records", "last step", "checks"):
            table.add_column(title, no_wrap=True, overflow="ellipsis", max_width=40 if title == "last step" else None)
        for v in self.views.values():
            spent = f"{v.budget - v.balance:g}/{v.budget:g}" if v.budget is not None and v.balance is not None else "-"
            checks = {True: "✓", False: "✗", None: "?"}[v.verdict] if v.finished else ""
            table.add_row(
                shown(v.id, WORD, "bold cyan"),
                shown(v.state + ("  ARMED" if v.armed else ""), WORD, "bold red" if v.armed else ""),
                Text(_said(v.round)),
                Text(_said(v.stage or None)),
                Text(spent),
                Text(str(len(v.in_flight)) if v.in_flight else "-"),
                Text(str(v.records)),
                shown(v.steps[-1] if v.steps else "", DETAIL_LIMIT, "magenta"),
                Text(checks),
            )
        return table

    def _panel(self, v: StudyView) -> Panel:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column()
        spent = ""
        if v.budget is not None and v.balance is not None:
            spent = f"{v.budget - v.balance:g} of {v.budget:g} spent, balance {v.balance:g}"
        # Every cell a Text of quoted words: a str cell would be read as markup.
        grid.add_row("round", Text(f"{_said(v.round)}  stage {_said(v.stage or None)}  {spent}"))
        flight = ", ".join(f"{_said(run)} in {_said(str(c))}" for run, c in v.in_flight) or "none"
        grid.add_row("in flight", shown(flight, DETAIL_LIMIT))
        if v.containers:
            said = ", ".join(f"{_said(n.rsplit('-', 1)[-1])} {_said(s)}" for n, s in list(v.containers.items())[-4:])
            grid.add_row("containers", shown(said, DETAIL_LIMIT))
        kinds = " › ".join(_said(kind) for kind in v.kinds)
        issues = f", {v.issues} issues" if v.issues else ""
        grid.add_row("ledger", shown(f"{v.records} records{issues}: {kinds}", DETAIL_LIMIT))
        for step in v.steps:
            grid.add_row("", shown(step, DETAIL_LIMIT, "magenta"))
        title = Text.assemble(
            shown(v.id, WORD, "bold cyan"),
            "  ",
            shown(v.state, WORD, "bold"),
            f"  pid {v.pid or '-'}",
            ("  ARMED" if v.armed else "", "bold red"),
            f"  {int(time.monotonic() - v.started)}s",
        )
        return Panel(grid, title=title, title_align="left", border_style="blue")

    def __enter__(self) -> HeadlessView:
        if self.live_mode:
            # get_renderable: each refresh redraws from the views, so clocks move between events.
            self._live = Live(console=self.console, refresh_per_second=4, transient=False, get_renderable=self.render)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.refresh()
            self._live.__exit__(None, None, None)
            self._live = None


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()
