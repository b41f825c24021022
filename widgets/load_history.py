"""A study's load over its whole life in bounded memory: recent samples one by one, older ones in buckets.

The timeline draws the last ten minutes column by column and everything older
compressed (see :mod:`studymon.widgets.time_axis`), so only the recent samples
need their own times.  A sample older than :data:`RECENT_SPAN` before the
newest is folded into a bucket that keeps the highest cpu and memory of its
stretch (a short spike must not be averaged away); when there are more than
:data:`BUCKETS` buckets, neighbours merge pairwise and the bucket width
doubles.  So a study of any length costs at most ``RECENT_CAP + BUCKETS``
entries.

Each sample stands for the load since the sample before it, but for at most
:data:`HOLD` seconds (the engine samples every 2.5 to 5 s): the graph then
has no holes between samples where a column is narrower than their spacing,
and a stretch with no samples (a study stopped) stays blank.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator
from dataclasses import dataclass

RECENT_SPAN = 900.0  # kept sample by sample: longer than the ten linear minutes
RECENT_CAP = 1024  # and never more than this many (a feeder far faster than the engine's)
BUCKETS = 512
FIRST_BUCKET = 60.0  # seconds; doubles as buckets merge
HOLD = 10.0


@dataclass(frozen=True, slots=True)
class Span:
    """The highest load seen from ``start`` to ``end`` (epoch seconds); ``memory`` None when none was given."""

    start: float
    end: float
    cpu: float
    memory: int | None


def _max_memory(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


class LoadHistory:
    """Load samples in, spans out (oldest first), in bounded memory."""

    def __init__(self) -> None:
        # (at, start, cpu, memory), sorted by at; start is where the sample's span begins (see the module).
        self._recent: list[tuple[float, float, float, int | None]] = []
        self._buckets: dict[int, Span] = {}
        self._bucket_tuples: list[tuple[float, float, float, int | None]] | None = []  # sorted; None: to redo
        self.bucket_width = FIRST_BUCKET
        self._last_folded: float | None = None
        self._oldest: float | None = None
        self.version = 0  # moves on every change

    def __len__(self) -> int:
        return len(self._recent) + len(self._buckets)

    def _start(self, index: int) -> float:
        at = self._recent[index][0]
        before = self._recent[index - 1][0] if index > 0 else self._last_folded
        return at if before is None else min(at, max(before, at - HOLD))

    def add(self, at: float, cpu: float, memory: int | None) -> None:
        """One sample; the caller has checked that ``at`` and ``cpu`` are finite and ``cpu`` >= 0."""
        recent = self._recent
        if not recent or at >= recent[-1][0]:
            recent.append((at, at, cpu, memory))
            index = len(recent) - 1
        else:
            index = bisect.bisect_right(recent, at, key=lambda s: s[0])
            recent.insert(index, (at, at, cpu, memory))
        # The sample's span, and the next one's, which began at the sample before it.
        for i in range(index, min(index + 2, len(recent))):
            entry = recent[i]
            recent[i] = (entry[0], self._start(i), entry[2], entry[3])
        self._oldest = at if self._oldest is None else min(self._oldest, recent[0][1])
        newest = recent[-1][0]
        while recent and (len(recent) > RECENT_CAP or recent[0][0] < newest - RECENT_SPAN):
            self._fold(recent.pop(0))
        self.version += 1

    def _fold(self, sample: tuple[float, float, float, int | None]) -> None:
        at, start, cpu, memory = sample
        self._last_folded = at if self._last_folded is None else max(self._last_folded, at)
        key = math.floor(at / self.bucket_width)
        old = self._buckets.get(key)
        if old is None:
            self._buckets[key] = Span(start, at, cpu, memory)
        else:
            self._buckets[key] = Span(
                min(old.start, start), max(old.end, at), max(old.cpu, cpu), _max_memory(old.memory, memory)
            )
        self._bucket_tuples = None
        if len(self._buckets) > BUCKETS:
            self._merge()

    def _merge(self) -> None:
        self.bucket_width *= 2
        merged: dict[int, Span] = {}
        for key in sorted(self._buckets):
            span = self._buckets[key]
            old = merged.get(key // 2)
            merged[key // 2] = (
                span
                if old is None
                else Span(
                    min(old.start, span.start),
                    max(old.end, span.end),
                    max(old.cpu, span.cpu),
                    _max_memory(old.memory, span.memory),
                )
            )
        self._buckets = merged

    @property
    def oldest(self) -> float | None:
        """The start of the oldest span kept."""
        return self._oldest

    @property
    def latest(self) -> tuple[float, float, int | None] | None:
        """The newest sample: (at, cpu, memory)."""
        if not self._recent:
            return None
        at, _, cpu, memory = self._recent[-1]
        return at, cpu, memory

    def spans(self, now: float | None = None) -> Iterator[Span]:
        """Everything kept, oldest first: the buckets, then one span per recent sample.

        With ``now``, the newest sample also stands until then, for at most
        :data:`HOLD` seconds: the load is taken to go on until the next sample
        says otherwise, so the column of now is not blank between samples.
        """
        for start, end, cpu, memory in self.span_tuples(now):
            yield Span(start, end, cpu, memory)

    def span_tuples(self, now: float | None = None) -> list[tuple[float, float, float, int | None]]:
        """:meth:`spans` as plain tuples (start, end, cpu, memory): the graph reads every one on every frame."""
        if self._bucket_tuples is None:
            self._bucket_tuples = [
                (span.start, span.end, span.cpu, span.memory) for _, span in sorted(self._buckets.items())
            ]
        out = self._bucket_tuples + [(start, at, cpu, memory) for at, start, cpu, memory in self._recent]
        if now is not None and out and self._recent:
            start, at, cpu, memory = out[-1]
            out[-1] = (start, max(at, min(now, at + HOLD)), cpu, memory)
        return out
