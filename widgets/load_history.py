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
        self._recent: list[tuple[float, float, int | None]] = []  # (at, cpu, memory), sorted by at
        self._buckets: dict[int, Span] = {}
        self.bucket_width = FIRST_BUCKET
        self._last_folded: float | None = None
        self.version = 0  # moves on every change

    def __len__(self) -> int:
        return len(self._recent) + len(self._buckets)

    def add(self, at: float, cpu: float, memory: int | None) -> None:
        """One sample; the caller has checked that ``at`` and ``cpu`` are finite and ``cpu`` >= 0."""
        sample = (at, cpu, memory)
        if not self._recent or at >= self._recent[-1][0]:
            self._recent.append(sample)
        else:
            bisect.insort(self._recent, sample, key=lambda s: s[0])
        newest = self._recent[-1][0]
        while self._recent and (len(self._recent) > RECENT_CAP or self._recent[0][0] < newest - RECENT_SPAN):
            self._fold(self._recent.pop(0))
        self.version += 1

    def _fold(self, sample: tuple[float, float, int | None]) -> None:
        at, cpu, memory = sample
        start = at if self._last_folded is None else min(at, max(self._last_folded, at - HOLD))
        self._last_folded = at if self._last_folded is None else max(self._last_folded, at)
        key = math.floor(at / self.bucket_width)
        old = self._buckets.get(key)
        if old is None:
            self._buckets[key] = Span(start, at, cpu, memory)
        else:
            self._buckets[key] = Span(
                min(old.start, start), max(old.end, at), max(old.cpu, cpu), _max_memory(old.memory, memory)
            )
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
        if self._buckets:
            return min(span.start for span in self._buckets.values())
        return self._recent[0][0] if self._recent else None

    @property
    def latest(self) -> tuple[float, float, int | None] | None:
        """The newest sample: (at, cpu, memory)."""
        return self._recent[-1] if self._recent else None

    def spans(self, now: float | None = None) -> Iterator[Span]:
        """Everything kept, oldest first: the buckets, then one span per recent sample.

        With ``now``, the newest sample also stands until then, for at most
        :data:`HOLD` seconds: the load is taken to go on until the next sample
        says otherwise, so the column of now is not blank between samples.
        """
        for key in sorted(self._buckets):
            yield self._buckets[key]
        before = self._last_folded
        last = len(self._recent) - 1
        for index, (at, cpu, memory) in enumerate(self._recent):
            start = at if before is None else min(at, max(before, at - HOLD))
            end = at if now is None or index < last else max(at, min(now, at + HOLD))
            yield Span(start, end, cpu, memory)
            before = at
