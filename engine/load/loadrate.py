"""CPU rates from cumulative CPU counters: the arithmetic of ``load.jsonl``, apart from how counters are read.

A study's load is read as *counters*: a process's CPU seconds since it
started, a container's cgroup CPU seconds since it started.  A rate is a
counter's growth between two samples over the wall time between them, so a
sample says what the study used in that interval, never since the start.

Counters come and go between samples (a run starts or ends, a process forks
or exits, a container restarts and its counter begins at zero again); none of
that may show as a spike or a negative:

* a counter seen in both samples counts its growth;
* a counter not seen before (or one that went backwards: a reset) counts all
  of its CPU when it began inside the interval (its ``since`` is at or after
  the previous sample), since all of it was used then; otherwise its start is
  unknown and it only sets the base for the next sample;
* a counter that is gone counts nothing (its last piece is lost, never
  guessed);
* no counter can grow faster than every core at work: the growth is capped at
  ``cores`` times the interval.

A counter read with a time of its own (``taken``: the Docker engine's stats
say when it read them, and can answer up to a second after being asked) is
rated over its own interval, from its previous reading's time to this one's;
the others over the interval between the two samples.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Reading:
    """One counter, read once."""

    key: Hashable  # who it is: a process (pid, start), a container Id; the same thing gives the same key
    cpu: float  # CPU seconds since ``since``
    memory: int  # bytes in use now
    since: float | None  # epoch seconds when the counter stood at zero; None when not known
    run: str | None = None  # the run (container name) it belongs to; None: the controller's process tree
    taken: float | None = None  # when its value was read (epoch seconds), if not at the sample's time


@dataclass(frozen=True)
class Rates:
    """A study's load over one interval: CPU in percent of one core, memory in bytes now."""

    cpu: float  # the tree's and every run's
    memory: int
    tree_cpu: float  # the controller's process tree alone
    tree_memory: int
    runs: tuple[tuple[str, float, int], ...]  # (run, cpu, memory), by name


class LoadRates:
    """Turns successive sets of readings into rates; keeps only the last set's counters.

    ``at`` and ``mono`` are the sample's time on the wall clock (to compare
    with a counter's ``since``) and on a monotonic clock (for the interval:
    a wall clock that is set meanwhile does not make a rate).
    """

    def __init__(self, at: float, mono: float, cores: int | None = None) -> None:
        self._at = at
        self._mono = mono
        self._cores = max(1, cores or os.cpu_count() or 1)
        self._last: dict[Hashable, tuple[float, float | None]] = {}  # key -> (cpu, taken)

    def update(self, readings: Iterable[Reading], at: float, mono: float) -> Rates | None:
        """The rates since the previous update (or since the start); None when no time has passed."""
        readings = list(readings)
        interval = mono - self._mono
        since_previous = self._at
        last = self._last
        self._last = {r.key: (r.cpu, r.taken) for r in readings}
        self._at, self._mono = at, mono
        if interval <= 0:
            return None
        tree_cpu = 0.0
        tree_memory = 0
        runs: dict[str, list[float]] = {}
        for r in readings:
            before = last.get(r.key)
            span = interval
            if before is not None and r.taken is not None and before[1] is not None:
                span = r.taken - before[1]
            percent = 0.0
            if span > 0:
                used = _used(r, None if before is None else before[0], since_previous)
                percent = min(used, self._cores * span) / span * 100.0
            if r.run is None:
                tree_cpu += percent
                tree_memory += r.memory
            else:
                share = runs.setdefault(r.run, [0.0, 0])
                share[0] += percent
                share[1] += r.memory
        run_rows = tuple((name, cpu, int(memory)) for name, (cpu, memory) in sorted(runs.items()))
        return Rates(
            cpu=tree_cpu + sum(row[1] for row in run_rows),
            memory=tree_memory + sum(row[2] for row in run_rows),
            tree_cpu=tree_cpu,
            tree_memory=tree_memory,
            runs=run_rows,
        )


def _used(reading: Reading, before: float | None, since_previous: float) -> float:
    """CPU seconds the counter used in the interval that ended with ``reading``."""
    if before is not None and reading.cpu >= before:
        return reading.cpu - before
    # New, or reset to zero since: all of it belongs to the interval only if it began inside it.
    if reading.since is not None and reading.since >= since_previous:
        return max(reading.cpu, 0.0)
    return 0.0
