"""A study's recent events, kept small, to give a pane made on demand what it would have seen.

With more studies than fit side by side, the console shows a row per study
and makes a study's pane only when the operator opens it: a pane nobody
sees costs no widgets and no rendering.  The pane made then is handed the
study's events again, from a :class:`StudyFeed`, and reaches the state it
would have had (minus what the feed's bounds let go of, which the ledger
stream says it skipped, as after a catch-up).

Each kind of event is kept as the pane needs it: the last records (a bound
on records, not on events), the last samples of the study's load, the
latest event of each container, the last kill steps and problems, and only
the newest of what a newer one replaces (state, progress, arming, verdicts,
the controller's last start and end; its first start too, from which the
running time counts).  Memory stays bounded whatever the study writes.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterator

from studymon.engine import (
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
    StudyLoad,
    Verdicts,
)

RECORDS_KEPT = 1000  # the last records a pane made later shows (the ledger file holds them all)
LOADS_KEPT = 512  # samples of the study's own load: 20 to 40 minutes at the engine's pace
CONTAINERS_KEPT = 1024  # containers whose latest event is kept
STEPS_KEPT = 64  # kill steps: as many as the timeline marks
PROBLEMS_KEPT = 8
PURPOSES_KEPT = 4096  # runs whose purpose is kept once their plans have gone

# Kinds of which only the newest matters to a pane.
_LATEST = (StateChanged, Progress, ArmChanged, Verdicts, ControllerEnded)


class StudyFeed:
    """The events of one study a pane made now would need, in the order they came, within bounds."""

    def __init__(self, study: str, records_kept: int = RECORDS_KEPT) -> None:
        self.study = study
        self.records_kept = records_kept
        self._n = 0  # arrival number of the next event
        self._records: deque[tuple[int, RecordsSeen]] = deque()
        self._record_count = 0
        self.skipped = 0  # records let go of (or never sent), before those kept
        self._purposes: OrderedDict[str, str] = OrderedDict()
        self._loads: deque[tuple[int, StudyLoad]] = deque(maxlen=LOADS_KEPT)
        self._containers: OrderedDict[str, tuple[int, ContainerChanged]] = OrderedDict()
        self._steps: deque[tuple[int, KillStep]] = deque(maxlen=STEPS_KEPT)
        self._problems: deque[tuple[int, Problem]] = deque(maxlen=PROBLEMS_KEPT)
        self._latest: dict[type[StudyEvent], tuple[int, StudyEvent]] = {}
        self._first_start: tuple[int, ControllerStarted] | None = None
        self._last_start: tuple[int, ControllerStarted] | None = None

    def add(self, event: StudyEvent) -> None:
        """Keep ``event`` as far as a pane needs it."""
        n = self._n
        self._n += 1
        if isinstance(event, RecordsSeen):
            self._add_records(n, event)
        elif isinstance(event, StudyLoad):
            self._loads.append((n, event))
        elif isinstance(event, ContainerChanged):
            self._containers.pop(event.name, None)
            self._containers[event.name] = (n, event)
            if len(self._containers) > CONTAINERS_KEPT:
                self._containers.popitem(last=False)
        elif isinstance(event, KillStep):
            self._steps.append((n, event))
        elif isinstance(event, Problem):
            self._problems.append((n, event))
        elif isinstance(event, ControllerStarted):
            if self._first_start is None:
                self._first_start = (n, event)
            else:
                self._last_start = (n, event)
        elif isinstance(event, _LATEST):
            self._latest[type(event)] = (n, event)

    def _add_records(self, n: int, event: RecordsSeen) -> None:
        for run, purpose in event.purposes:
            self._purpose(run, purpose)
        for record in event.records:
            if record.kind == "runPlanned":
                run = record.get("run")
                if isinstance(run, str):
                    self._purpose(run, str(record.get("purpose") or ""))
        self.skipped += event.skipped
        records = event.records
        if len(records) > self.records_kept:  # a catch-up longer than the bound: its last records
            self.skipped += len(records) - self.records_kept
            records = records[-self.records_kept :]
            event = RecordsSeen(event.study, records, event.issues[-PROBLEMS_KEPT:])
        if not records and not event.issues:
            return
        self._records.append((n, event))
        self._record_count += len(records)
        while self._record_count > self.records_kept and len(self._records) > 1:
            _, old = self._records.popleft()
            self._record_count -= len(old.records)
            self.skipped += len(old.records)

    def _purpose(self, run: str, purpose: str) -> None:
        self._purposes.pop(run, None)
        self._purposes[run] = purpose
        if len(self._purposes) > PURPOSES_KEPT:
            self._purposes.popitem(last=False)

    @property
    def records(self) -> int:
        """How many records are kept."""
        return self._record_count

    def replay(self) -> Iterator[StudyEvent]:
        """The kept events in the order they came; first, when records were let go of, a batch that says
        how many and gives every known run's purpose (as a catch-up does)."""
        kept: list[tuple[int, StudyEvent]] = [
            *self._records,
            *self._loads,
            *self._containers.values(),
            *self._steps,
            *self._problems,
            *self._latest.values(),
        ]
        kept += [start for start in (self._first_start, self._last_start) if start is not None]
        kept.sort(key=lambda pair: pair[0])
        if self.skipped or self._purposes:
            yield RecordsSeen(self.study, (), skipped=self.skipped, purposes=tuple(self._purposes.items()))
        for _, event in kept:
            yield event
