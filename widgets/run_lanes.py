"""The runs of a study as lanes: what each run did when, read from ledger records, in bounded memory.

A run's lane is a mark at its plan time while it is planned or charged, then
a bar from its ``runStarted`` to its ``runResult`` (to now while it has no
result).  Its purpose picks the colour (:data:`PURPOSES`, anything else is
``other``), its state the glyph (:data:`GLYPHS`).  Only ``runPlanned``,
``charge``, ``runStarted`` and ``runResult`` are read; a record of another
kind, or one whose ``run``, ``at`` or fields are of the wrong type or absurd,
is passed over: the ledger is the study's, and a hostile one must not break
the console.  At most :data:`MAX_RUNS` runs are kept; past that, the runs
that ended longest ago go first.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from studymon.engine import Record, parse_rfc3339

PURPOSES = ("diagnosis", "ablation", "proposal", "export")
OTHER = "other"
MAX_RUNS = 256
RUN_ID_CHARS = 64  # the contract's ids are at most 63 characters; a longer one is cut, not kept whole
EARLIEST = 946_684_800.0  # 2000-01-01: a time before this is taken for a broken one
FUTURE_SLACK = 86_400.0  # and so is one more than a day after the console's clock


class RunState(enum.Enum):
    PLANNED = "planned"
    CHARGED = "charged"
    RUNNING = "running"
    OK = "ok"
    FAILED = "failed"


# The glyph of a bar (or of the mark of a run not started yet), per state.
GLYPHS = {
    RunState.PLANNED: "◇",
    RunState.CHARGED: "◆",
    RunState.RUNNING: "█",
    RunState.OK: "━",
    RunState.FAILED: "━",
}
FAILED_END = "✗"  # the last cell of a failed run's bar
BAR_GLYPHS = frozenset({GLYPHS[RunState.RUNNING], GLYPHS[RunState.OK], FAILED_END})


@dataclass(slots=True)
class Run:
    """What the ledger said of one run, with the times as epoch seconds."""

    run: str
    order: int  # when the timeline first heard of it
    purpose: str = OTHER
    planned: float | None = None
    charged: float | None = None
    started: float | None = None
    ended: float | None = None
    exit_code: int | None = None

    @property
    def state(self) -> RunState:
        if self.ended is not None:
            return RunState.OK if self.exit_code == 0 else RunState.FAILED
        if self.started is not None:
            return RunState.RUNNING
        return RunState.CHARGED if self.charged is not None else RunState.PLANNED

    @property
    def last(self) -> float:
        """Its latest moment known: for choosing the latest runs."""
        times = [t for t in (self.ended, self.started, self.charged, self.planned) if t is not None]
        return max(times, default=-math.inf)


def purpose_name(value: Any) -> str:
    return value if isinstance(value, str) and value in PURPOSES else OTHER


def record_time(at: Any, now: float) -> float | None:
    """Epoch seconds of a record's ``at``, or None when it is not a plausible RFC 3339 time."""
    if not isinstance(at, str) or len(at) > 64:
        return None
    try:
        t = parse_rfc3339(at)
    except (ValueError, TypeError, OverflowError, IndexError, OSError):
        return None
    if not math.isfinite(t) or t < EARLIEST or t > now + FUTURE_SLACK:
        return None
    return t


class RunLanes:
    """The runs read so far; :meth:`add` takes records, :meth:`latest` gives the runs to show."""

    def __init__(self, max_runs: int = MAX_RUNS) -> None:
        self.max_runs = max_runs
        self.runs: dict[str, Run] = {}
        self._seen = 0
        self.version = 0
        self._oldest: tuple[int, float | None] = (0, None)

    def _run(self, run: str) -> Run:
        entry = self.runs.get(run)
        if entry is None:
            self._seen += 1
            entry = self.runs[run] = Run(run, self._seen)
        return entry

    def add(self, records: Iterable[Record], now: float) -> bool:
        """Take the records that tell about runs; whether anything changed."""
        changed = False
        for record in records:
            changed = self._take(record, now) or changed
        if len(self.runs) > self.max_runs + self.max_runs // 4:
            self._forget()
        if changed:
            self.version += 1
        return changed

    def set_purposes(self, purposes: Iterable[tuple[Any, Any]]) -> None:
        """Purposes of runs whose ``runPlanned`` was not read (a long ledger's tail only)."""
        for run, purpose in purposes:
            entry = self.runs.get(run[:RUN_ID_CHARS]) if isinstance(run, str) else None
            if entry is not None and entry.purpose != purpose_name(purpose):
                entry.purpose = purpose_name(purpose)
                self.version += 1

    def _take(self, record: Record, now: float) -> bool:
        kind = getattr(record, "kind", None)
        if kind not in ("runPlanned", "charge", "runStarted", "runResult"):
            return False
        content = getattr(record, "content", None)
        if not isinstance(content, dict):
            return False
        run = content.get("run")
        if not isinstance(run, str) or not run:
            return False
        t = record_time(getattr(record, "at", None), now)
        if t is None:
            return False
        entry = self._run(run[:RUN_ID_CHARS])
        if kind == "runPlanned":
            entry.planned = t
            entry.purpose = purpose_name(content.get("purpose"))
        elif kind == "charge":
            entry.charged = t
        elif kind == "runStarted":
            entry.started = t
        else:
            code = content.get("exitCode")
            entry.ended = t
            entry.exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
        return True

    def _forget(self) -> None:
        """Keep ``max_runs``: running runs first, then the latest (in batches, so a flood costs little)."""
        keep = self.latest(self.max_runs)
        self.runs = {entry.run: entry for entry in sorted(keep, key=lambda e: e.order)}

    @property
    def oldest(self) -> float | None:
        """The earliest plan or start time kept (for the time axis, asked on every clock tick)."""
        if self._oldest[0] != self.version:
            times = [t for entry in self.runs.values() for t in (entry.planned, entry.started) if t is not None]
            self._oldest = (self.version, min(times, default=None))
        return self._oldest[1]

    def latest(self, count: int) -> list[Run]:
        """The ``count`` runs to show, in the order shown: running ones (earliest start first), then those
        planned but not started, then the finished ones, latest first."""
        if count <= 0:
            return []
        running: list[Run] = []
        waiting: list[Run] = []
        done: list[Run] = []
        for entry in self.runs.values():
            state = entry.state
            if state is RunState.RUNNING:
                running.append(entry)
            elif state in (RunState.PLANNED, RunState.CHARGED):
                waiting.append(entry)
            else:
                done.append(entry)
        running.sort(key=lambda e: (e.started or 0.0, e.order))
        waiting.sort(key=lambda e: (e.last, e.order), reverse=True)
        done.sort(key=lambda e: (e.last, e.order), reverse=True)
        return (running + waiting + done)[:count]


def lane_cells(run: Run, columns: Sequence[int]) -> dict[int, str]:
    """The cells of a run's lane (column -> glyph), given the columns of its times.

    ``columns`` is (plan or charge column, start column, end column): the
    first is -1 for a run with no plan or charge read, the start -1 for a run
    not started (then only its plan is marked), and a run with no result ends
    at the column of now.  A result with no start read is a bar of one cell.
    """
    mark, start, end = columns
    state = run.state
    if start < 0:
        return {mark: GLYPHS[state]} if mark >= 0 else {}
    glyph = GLYPHS[state]
    cells = dict.fromkeys(range(start, max(start, end) + 1), glyph)
    if state is RunState.FAILED:
        cells[max(start, end)] = FAILED_END
    return cells
