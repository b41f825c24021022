"""The explorer's headless printer: a line per step of the campaign, then its matrix.

A line per notable step (the trace, the plan, each trial submitted and
ended, with where it ran), as the headless run prints one per event; at the
end the matrix, a row per class and a column per check (✓ ✗ ? in each
cell), with the first point that failed each check, read from the
campaign's own ``campaign.json`` (so ``studymon report CAMPAIGN`` prints
the same).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from studymon.engine import DETAIL_LIMIT, MARKS, free_text, saved_matrix, shown
from studymon.widgets.containers_table import format_duration

_CELL = {"✓": "bold green", "✗": "bold red", "?": "bold yellow", "missed": "yellow"}
WORD = 64  # characters of a check's name or a point shown in the matrix
ENDED = ("done", "missed", "error", "lost")


@dataclass
class WorkerTally:
    """What one worker did: trials ended, and the one it runs now."""

    done: int = 0
    running: set[int] = field(default_factory=set)


class CampaignProgress:
    """How far a campaign is, from the explorer's steps: trials done, running and left, time to go, per worker.

    A trial counts once whatever happens to it (a missed one's retry is a trial of its own, planned when the
    miss is known); time to go is the mean time of the trials ended so far, times those left, over the
    workers.  No Textual: the console's progress line and the headless printer share it.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.phase = "starting"
        self.classes = self.candidates = 0
        self.states: dict[int, str] = {}  # trial -> queued, running, done, missed, error, lost
        self.workers: dict[str, WorkerTally] = {}
        self.seconds: list[float] = []  # of each trial ended with a time
        self.status: int | None = None
        self.stopping = False

    def take(self, what: str, facts: dict[str, Any]) -> None:
        n = facts.get("n")
        if what == "trace":
            self.phase = "trace"
        elif what == "planned":
            self.phase = "trials"
            self.classes, self.candidates = int(facts["classes"]), int(facts["candidates"])
        elif what == "cluster":
            for worker in facts.get("workers", []):
                self.workers.setdefault(str(worker), WorkerTally())
        elif what == "submitted" and isinstance(n, int):
            self.states[n] = "queued"
        elif what == "running" and isinstance(n, int):
            self.states[n] = "running"
            self.workers.setdefault(str(facts["worker"]), WorkerTally()).running.add(n)
        elif what in ENDED and isinstance(n, int):
            self.states[n] = what
            for tally in self.workers.values():
                if n in tally.running:
                    tally.running.discard(n)
                    tally.done += 1
            seconds = facts.get("seconds")
            if isinstance(seconds, (int, float)) and math.isfinite(seconds):
                self.seconds.append(float(seconds))
        elif what == "stopped":
            self.phase = "stopped"
        elif what == "ended":
            self.phase, self.status = "ended", int(facts["status"])

    def count(self, *states: str) -> int:
        return sum(1 for s in self.states.values() if s in states)

    @property
    def left(self) -> int:
        return self.count("queued")

    def to_go(self) -> float | None:
        """Seconds until the trials left and running have ended, at the pace so far (None: no trial ended yet)."""
        if not self.seconds:
            return None
        busy = max(1, len(self.workers))
        return sum(self.seconds) / len(self.seconds) * (self.left + self.count("running")) / busy

    def line(self) -> str:
        """The campaign in one line."""
        if self.phase in ("starting", "trace"):
            return "trace: running the study once, unkilled, to find its crash points"
        parts = [
            f"{self.candidates} points in {self.classes} classes",
            f"{self.count('done')} done",
            f"{self.count('running')} running",
            f"{self.left} left",
        ]
        parts += [f"{self.count(s)} {s}" for s in ("missed", "lost", "error") if self.count(s)]
        to_go = self.to_go()
        if self.phase == "ended":
            parts.append(f"ended · exit {self.status}")
        elif self.phase == "stopped" or self.stopping:
            parts.append("stopping")
        elif to_go is not None:
            parts.append(f"~{format_duration(to_go)} to go")
        return " · ".join(parts)

    def worker_line(self) -> str:
        """Per worker: trials ended, and the one running."""
        words = []
        for worker, tally in self.workers.items():
            running = f", running {' '.join(str(n) for n in sorted(tally.running))}" if tally.running else ""
            words.append(f"{worker.removeprefix('tcp://')} {tally.done} done{running}")
        return "workers: " + (" · ".join(words) if words else "-")


class ExploreView:
    """Prints the campaign's progress, one line a step; :meth:`matrix` at the end."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.campaign = CampaignProgress()

    def __call__(self, what: str, facts: dict[str, Any]) -> None:
        self.campaign.take(what, facts)
        line = self._line(what, facts)
        if line and what in ENDED:
            c = self.campaign
            to_go = c.to_go()
            left = c.left + c.count("running")
            line += f"  ({len(c.states) - left} of {len(c.states)} ended"
            line += f", ~{format_duration(to_go)} to go)" if to_go is not None and left else ")"
        if line:
            self.console.print(shown(line, DETAIL_LIMIT), highlight=False, soft_wrap=True)

    @staticmethod
    def _line(what: str, f: dict[str, Any]) -> str:
        if what == "trace":
            return f"trace: running the study once, unkilled, into {f['out']}"
        if what == "traced":
            return f"trace: done (exit {f['exit']})"
        if what == "planned":
            return f"points: {f['candidates']} candidates in {f['classes']} classes; {f['trials']} trials"
        if what == "cluster":
            return f"dask: scheduler {f['scheduler']}, {len(f['workers'])} workers"
        if what == "running":
            return f"trial {f['n']}: running on {f['worker']}"
        if what == "stopped":
            return f"campaign: stopped; trials {', '.join(map(str, f['left']))} did not end"
        if what == "submitted":
            return f"trial {f['n']}: {' then '.join(f['points'])} [{f['class']}]"
        if what == "done":
            mark = MARKS[f["ok"]][0]
            failed = f" — {', '.join(f['failed'])}" if f["failed"] else ""
            return f"trial {f['n']}: {mark}{failed}"
        if what in ("lost", "missed", "error"):
            return f"trial {f['n']}: {what} — {f['detail']}"
        if what == "ended":
            return f"campaign: exit {f['status']}"
        return ""

    def matrix(self, folder: Path) -> None:
        self.console.print(matrix_table(folder))


def matrix_table(folder: Path) -> Table:
    """The matrix of a campaign folder: a row per class, a column per check, the first failing point per check."""
    return matrix_of(*saved_matrix(folder))  # a table with no rows when it cannot be read, not a traceback


def _mark(value: Any) -> Text:
    """A cell of the matrix: ✓ ✗ ? missed or ·, in its colour; anything else quoted, dim."""
    said = free_text(value if isinstance(value, str) else "·", WORD)
    return Text(said, style=_CELL.get(said, "dim"))


def matrix_of(study: str, m: Any) -> Table:
    """The matrix (:func:`studymon.engine.explore.campaign.matrix`) as a table.

    The matrix may come from a campaign folder (``campaign.json``) or be built from one: each class, check
    and point is quoted and shown as ``Text`` (a ``str`` would be read as markup); anything not of the shape
    is passed over rather than trusted."""
    m = m if isinstance(m, dict) else {}
    given = m.get("checks")
    checks: list[Any] = list(given) if isinstance(given, list) else []
    rows = m.get("rows")
    table = Table(title=Text(f"studymon explore — {free_text(study)}"), title_justify="left", pad_edge=False)
    table.add_column("class", no_wrap=True)
    table.add_column("", justify="center")
    for check in checks:
        table.add_column(shown(check, WORD), justify="center", overflow="fold")
    for cls, row in (rows if isinstance(rows, dict) else {}).items():
        cells = row if isinstance(row, dict) else {}
        table.add_row(
            shown(cls, DETAIL_LIMIT),
            _mark(cells.get("", "·")),  # · : no trial of the class ended with a verdict
            *(_mark(cells.get(c, "·") if isinstance(c, str) else None) for c in checks),
        )
    first = m.get("firstFailing")
    if isinstance(first, dict) and first:
        said = "; ".join(f"{free_text(c, WORD)} at {free_text(p, WORD)}" for c, p in first.items())
        table.caption = shown(f"first failing: {said}", DETAIL_LIMIT)
    return table
