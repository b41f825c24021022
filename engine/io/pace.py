"""The pace of a stream of records: slow enough to take each as it comes, or busy enough to batch.

A reader or a view that takes every record the moment it arrives pays a
wake-up, or a frame, per record; batching saves that but makes each record
wait.  :class:`Pace` tells the two cases apart by how many records came in
the last second: a study that writes a few records a second (a run started,
a decision, the records of one run's start a few milliseconds apart) is
*slow*, and each of its records is taken at once; one that writes more is
*busy*, and its records are batched on a timer.  A busy stream turns slow
again once a second has passed with few records.

Memory is bounded: only the arrival times of the last ``per_second + 1``
records are kept.  Plain Python, no asyncio and no Textual: the ledger pump
and the console's stream view both use it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

WINDOW = 1.0  # seconds over which records are counted


class Pace:
    """Counts records as they arrive; :attr:`busy` once more than ``per_second`` came within a second."""

    def __init__(self, per_second: int, clock: Callable[[], float] = time.monotonic) -> None:
        if per_second < 1:
            raise ValueError("per_second must be at least 1")
        self.per_second = per_second
        self.clock = clock
        # The arrival times of the newest records, one more than a slow second holds.
        self._times: deque[float] = deque(maxlen=per_second + 1)

    def note(self, records: int = 1) -> None:
        """``records`` arrived now (only the newest ``per_second + 1`` are remembered)."""
        now = self.clock()
        for _ in range(min(records, self.per_second + 1)):
            self._times.append(now)

    @property
    def busy(self) -> bool:
        """Whether more than ``per_second`` records arrived within the last second."""
        times = self._times
        return len(times) == times.maxlen and self.clock() - times[0] < WINDOW
