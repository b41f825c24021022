"""The container lifecycle events of a kill's window, tallied per target in bounded memory."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.automata import Proof, Row, Where, proof
from studymon.engine.contract.rules import plural, studys_container
from studymon.engine.evidence.records import ContainerEvent, Gap, parse_event, time_epoch
from studymon.engine.io.safefile import type_name
from studymon.engine.judge.machines import C_DESTROY, C_DIE, C_OOM, C_OTHER, C_START, CONTAINER
from studymon.engine.judge.verdict import SEEN_KEPT, SHOWN

RUNTIME_NAMES = {"docker": "the Docker engine", "process": "the process runtime"}


# What a target's container may do in its kill's window, besides its one ``die`` and what
# comes with it (a ``destroy`` after it, an ``oom`` before it): actions that only read it.
PASSIVE = frozenset({"attach", "detach", "resize", "top", "archive-path", "export", "health_status"})

Event = tuple[Any, ...]  # what a tally keeps of an event: (action, time), or (name, action, time)


def located(where: str | Where) -> tuple[str, Where]:
    """A line of a recording: as its reasons name it (the file within its kill folder, and the line), and where it is
    for a proof (the file within the evidence folder).  A bare name stands for itself, as a whole."""
    if isinstance(where, str):
        return where, Where(where, 0)
    return str(Where(where.file.rsplit("/", 1)[-1], where.line)), where


# An oom is reported up to a second after the die it caused: the replay takes it that much earlier.
OOM_LEAD_NS = 1_000_000_000
# Events of no target whose two copies are compared: more than the recordings' caps let them hold (32 MiB of
# lines of at least 100 bytes), so that the bound is never what stops a comparison.
STRAYS_KEPT = 1 << 19
# At one instant: a start before what follows it, an oom before its die, a die before the destroy after it.
STORY_RANK = {C_START: 0, C_OOM: 1, C_DIE: 2, C_DESTROY: 3, C_OTHER: 4}


@dataclass(frozen=True, slots=True)
class StoryEvent:
    """One event of a target's story as the replay takes it: what it is to the machine, when it happened (``ns``),
    when the replay takes it (``order``), where it was read, and what it says."""

    event: str
    ns: int
    order: int
    at: Where | None
    id: Any = None
    code: int | None = None
    action: str = ""


@dataclass
class ContainerStory:
    """A replay of one target's events through :data:`~.machines.CONTAINER`: where it ended, the rows it took,
    those that break the contract (each with its event), and its dies in time order."""

    start: str
    state: str = ""
    taken: list[Row] = field(default_factory=list)
    broken: list[tuple[Row, StoryEvent]] = field(default_factory=list)
    dies: list[StoryEvent] = field(default_factory=list)
    oomed: bool = False
    unexpected: list[tuple[str, StoryEvent]] = field(default_factory=list)  # (state, event) no row takes

    @property
    def died(self) -> bool:
        """Its container died, in the window or (``exited``) before it."""
        return bool(self.dies) or self.start == "exited"

    @property
    def undied_oom(self) -> bool:
        """An oom with no die after it, where a die was owed."""
        return self.oomed and not self.died

    @property
    def vanished(self) -> bool:
        """Removed with no die before it."""
        return self.state == "vanished"

    def breaking(self, says: str) -> list[StoryEvent]:
        return [e for row, e in self.broken if row.says == says]


@dataclass
class TargetTally:
    """The lifecycle events that concern one target in its kill's window: its story as the events tell it."""

    run: str
    name: str
    ids: frozenset[str]  # the Ids its snapshots show
    until_ns: int | None  # when its result was seen; None while the window is open
    forbidden: list[tuple[str, int]] = field(default_factory=list)  # (action, time), the first few
    forbidden_count: int = 0  # distinct ones (counted up to SEEN_KEPT)
    seen: set[tuple[Any, ...]] = field(default_factory=set)
    dies: dict[tuple[Any, ...], tuple[Any, int | None, int]] = field(default_factory=dict)  # key -> (Id, exit, ns)
    # The earliest destroy and the latest oom: what the story's order is checked against, whatever
    # their number or their order in the files.
    first_destroy: int | None = None
    last_oom: int | None = None
    disagree: int = 0  # events whose live and read-back copies differ
    # Where each kept event was read (the first copy), for the proofs: its forbidden events, its dies, the earliest
    # destroy and the latest oom, and the first event whose two copies differ (the first copy, then the other).
    forbidden_at: dict[Event, Where] = field(default_factory=dict)
    forbidden_id: dict[Event, Any] = field(default_factory=dict)  # a kept destroy or oom of another container's Id
    die_at: dict[tuple[Any, ...], Where] = field(default_factory=dict)
    destroy_at: Where | None = None
    oom_at: Where | None = None
    disagree_at: tuple[Where, Where] | None = None
    # A target charged but not started at the kill, or unrecorded (its container being made as the controller was
    # frozen): its one container starts in the window.  Containers that never start do no work: their create and
    # their destroy are not of its story.  ``made``: that container's Id (an unrecorded target's, from the snapshot
    # at the kill); a second start, or a start of another container, is work done again.
    fresh: bool = False
    made: str | None = None
    _started: bool = False
    _start: tuple[int, Where | None] | None = None  # a fresh target's own start: when, and where it was read
    _own: set[tuple[Any, ...]] = field(default_factory=set)  # the key of its start (its copies too)
    _destroyed: dict[Any, int] = field(default_factory=dict)  # fresh: the earliest destroy of each other container
    _destroyed_at: dict[Any, Where] = field(default_factory=dict)

    @property
    def story_destroy(self) -> int | None:
        """The earliest destroy of the target's own container."""
        late = self._destroyed.get(self.made) if self.made is not None else None
        if late is None:
            return self.first_destroy
        return late if self.first_destroy is None else min(late, self.first_destroy)

    @property
    def story_destroy_at(self) -> Where | None:
        """Where :attr:`story_destroy` was read."""
        late = self._destroyed.get(self.made) if self.made is not None else None
        if late is not None and (self.first_destroy is None or late < self.first_destroy):
            return self._destroyed_at.get(self.made)
        return self.destroy_at

    def note(self, e: ContainerEvent, at: Where | None = None) -> None:
        k = e.key
        if self.fresh:
            if e.verb == "create":
                return
            if e.verb == "start":
                if k in self._own:
                    return  # the other copy (live, read back) of its start
                if not self._started and self.made in (None, e.id):
                    self._started, self.made = True, e.id
                    self._start = (e.lo_ns, at)
                    self._own.add(k)
                    return
            elif e.verb == "destroy" and (self.made is None or e.id != self.made):
                known = self._destroyed.get(e.id)
                if known is not None or len(self._destroyed) < SEEN_KEPT:
                    self._destroyed[e.id] = e.lo_ns if known is None else min(known, e.lo_ns)
                    if at is not None and (known is None or e.lo_ns < known):
                        self._destroyed_at[e.id] = at
                return
        if e.verb in ("destroy", "oom") and self.ids and e.id not in self.ids:
            # Allowed only of the snapshots' Id (§6.4): one of another container labelled with the run, or of its
            # name reused, is outside the story of one container.
            self._outside(e, at, e.id)
        elif e.verb == "die":
            if k not in self.dies and len(self.dies) < 3:
                self.dies[k] = (e.id, e.exit_code, e.lo_ns)
                if at is not None:
                    self.die_at[k] = at
        elif e.verb == "destroy":
            if self.first_destroy is None or e.lo_ns < self.first_destroy:
                self.first_destroy, self.destroy_at = e.lo_ns, at
        elif e.verb == "oom":
            if self.last_oom is None or e.hi_ns > self.last_oom:
                self.last_oom, self.oom_at = e.hi_ns, at
        elif e.verb not in PASSIVE:
            self._outside(e, at)

    def _outside(self, e: ContainerEvent, at: Where | None, other: Any = None) -> None:
        """An action outside the story (each copy counted once); ``other``: the Id of another container it is of."""
        k = e.key
        if k in self.seen:
            return
        if len(self.seen) < SEEN_KEPT:
            self.seen.add(k)
        self.forbidden_count += 1
        if len(self.forbidden) < SHOWN:
            self.forbidden.append((e.verb, e.lo_ns))
            if at is not None:
                self.forbidden_at[(e.verb, e.lo_ns)] = at
            if other is not None:
                self.forbidden_id[(e.verb, e.lo_ns)] = other

    def story(self, start: str) -> ContainerStory:
        """The target's events replayed in time order through :data:`~.machines.CONTAINER`, from ``start``.

        What the watch kept is all a contradiction needs: every die (up to
        three), every action outside the story (the first few), the earliest
        destroy and the latest oom (a later destroy or an earlier oom can
        break no row that these do not).
        """
        events: list[StoryEvent] = []
        if self._start is not None:
            ns, at = self._start
            events.append(StoryEvent(C_START, ns, ns, at, self.made, action="start"))
        for k, (cid, code, ns) in self.dies.items():
            events.append(StoryEvent(C_DIE, ns, ns, self.die_at.get(k), cid, code))
        destroy = self.story_destroy
        if destroy is not None:
            events.append(StoryEvent(C_DESTROY, destroy, destroy, self.story_destroy_at))
        if self.last_oom is not None:
            events.append(StoryEvent(C_OOM, self.last_oom, self.last_oom - OOM_LEAD_NS, self.oom_at))
        for action, ns in self.forbidden:
            at, other = self.forbidden_at.get((action, ns)), self.forbidden_id.get((action, ns))
            events.append(StoryEvent(C_OTHER, ns, ns, at, other, action=action))
        events.sort(key=lambda e: (e.order, STORY_RANK[e.event]))
        told = ContainerStory(start, start)
        for e in events:
            row = CONTAINER.step(told.state, e.event)
            if row is None:  # no row: a contradiction of its own, said as which event met which state
                told.unexpected.append((told.state, e))
                continue
            told.taken.append(row)
            if row.breaks is not None:
                told.broken.append((row, e))
            if e.event == C_DIE:
                told.dies.append(e)
            elif e.event == C_OOM:
                told.oomed = True
            told.state = row.next
        return told


class EventTally:
    """Container lifecycle events, fed one at a time from the live recording and the read-back.

    Kept: for each target, the events of its story (§6.4) and any action
    outside it, over the whole window; the two copies of one event (by Id,
    action and time) compared; the study's other containers created or
    started in the window for runs that were not waiting to start; gaps
    that overlap the window; lines that are not events.  Memory stays
    bounded whatever the files hold.
    """

    def __init__(
        self,
        since_ns: int | None,
        until_ns: int | None,
        stem: str | None,
        allowed: frozenset[str],
        targets: list[TargetTally],
        study: str | None = None,
        unstarted: frozenset[str] = frozenset(),
        container_prefix: str | None = None,
    ) -> None:
        self.since_ns = since_ns
        self.container_prefix = container_prefix
        self.until_ns = until_ns
        self.stem = stem
        self.study = study
        self.allowed = allowed
        self.unstarted = unstarted
        self.targets = targets
        self._target_names = frozenset(t.name for t in targets)
        # Targets by name, by Id and by run: an event finds its targets at once, however many there are.
        self._by_run = {t.run: t for t in targets}
        self._by_name: dict[str, list[TargetTally]] = {}
        self._by_id: dict[str, list[TargetTally]] = {}
        for t in targets:
            self._by_name.setdefault(t.name, []).append(t)
            for i in t.ids:
                self._by_id.setdefault(i, []).append(t)
        self.gaps = 0
        self.restarts: list[tuple[str, str, int, str]] = []  # (runtime, from, from_ns, to), the first few
        self.restart_count = 0
        self.malformed: list[str] = []
        self.malformed_count = 0
        self.malformed_proofs: list[Proof] = []  # of the lines kept above, each with its file and line
        self.stopped: list[tuple[str, str]] = []  # recordings read in part (file, why): too many lines not events
        self.foreign: list[tuple[str, str, int]] = []  # (name, action, time), the first few
        self.foreign_count = 0
        self.unbooked: list[tuple[str, str, int]] = []  # made for a run with no runStarted yet, the first few
        self.unbooked_count = 0
        self.at: dict[Event, Where] = {}  # where each kept foreign and unbooked event was read
        self._seen: set[tuple[Any, ...]] = set()
        self._copies: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # key -> compared attributes, targets' events
        self._strays: dict[int, tuple[int, Where | None]] = {}  # hash of key -> (hash of compared, first copy)
        # Events of no target whose two copies differ: the recordings disagree, which every target's check reads.
        self.stray_disagree = 0
        self.stray_disagree_at: tuple[Where, Where] | None = None
        self._copy_at: dict[tuple[Any, ...], Where] = {}  # key -> where its first copy was read

    def _ours(self, e: ContainerEvent) -> bool:
        """Whether the event's container is the study's (§6.1, ``rules.studys_container``)."""
        if self.study is None or self.container_prefix is None:  # no stem of another study to hold a name to
            if e.study is not None:
                return e.study == self.study
            return self.stem is not None and (e.name or "").startswith(self.stem)
        return studys_container(e.name, e.study, self.container_prefix, self.study)

    def target(self, run: str) -> TargetTally | None:
        return self._by_run.get(run)

    def _stray_copy(self, e: ContainerEvent, at: Where | None) -> None:
        """An event of no target: its two copies compared by a fingerprint (the recordings' caps bound how many)."""
        a = e.attributes
        try:
            said = hash((a.get("exitCode"), a.get("name"), a.get("signal")))
        except TypeError:  # an attribute that is a list or an object
            said = hash(e.compared)
        key = hash(e.key)
        known = self._strays.get(key)
        if known is None:
            if len(self._strays) < STRAYS_KEPT:
                self._strays[key] = (said, at)
        elif known[0] != said:
            self.stray_disagree += 1
            if self.stray_disagree_at is None and known[1] is not None and at is not None:
                self.stray_disagree_at = (known[1], at)

    @staticmethod
    def _disagree(targets: Iterable[TargetTally], first: Where | None, at: Where | None) -> None:
        for t in targets:
            t.disagree += 1
            if t.disagree_at is None and first is not None and at is not None:
                t.disagree_at = (first, at)

    def bad_line(self, where: str | Where, why: str) -> None:
        self.malformed_count += 1
        if len(self.malformed) < SHOWN:
            shown, at = located(where)
            self.malformed.append(f"{shown}: {why}")
            self.malformed_proofs.append(
                proof(at, why, "a recording holds the runtime's events, each a line as the console writes it (§6.9)")
            )

    def reading_stopped(self, file: str, why: str) -> None:
        """``file`` was read in part: more of its lines than the judge reads were not events (each target fails)."""
        self.stopped.append((file, why))

    def restart(self, value: Any, where: str | Where) -> None:
        """A line of runtime-restarts.jsonl: the runtime restarted between ``from`` and ``to``."""
        if not isinstance(value, dict):
            self.bad_line(where, f"{type_name(value)}, not a runtime restart")
            return
        runtime, start, end = value.get("runtime"), value.get("from"), value.get("to")
        start_epoch, end_epoch = time_epoch(start), time_epoch(end)
        if (
            not isinstance(runtime, str)
            or runtime not in RUNTIME_NAMES
            or not isinstance(start, str)
            or not isinstance(end, str)
            or start_epoch is None
            or end_epoch is None
            or end_epoch < start_epoch
        ):
            self.bad_line(where, "not a runtime restart (runtime, from, to)")
            return
        self.restart_count += 1
        if len(self.restarts) < SHOWN:
            self.restarts.append((runtime, start, int(start_epoch * 1e9), end))

    def restarts_said(self) -> list[str]:
        """What to say of the restarts that began in the window (a target's story is the whole window)."""
        until = self.until_ns  # the whole window is the target's story, not only up to its result
        shown = [
            f"{RUNTIME_NAMES[runtime]} restarted between {start} and {end}: what it did to the "
            "containers then is not in the live recording"
            for runtime, start, start_ns, end in self.restarts
            if until is None or start_ns <= until
        ]
        more = self.restart_count - len(self.restarts)
        if shown and more > 0:
            shown[-1] += f" (and {plural(more, 'more restart')})"
        return shown

    def _in_window(self, lo_ns: int, hi_ns: int) -> bool:
        """Whether any part of ``lo_ns``..``hi_ns`` lies in the window."""
        if self.since_ns is not None and hi_ns < self.since_ns:
            return False
        return self.until_ns is None or lo_ns <= self.until_ns

    def add(self, value: Any, where: str | Where, live: bool = True) -> None:
        at = where if isinstance(where, Where) else None
        e = parse_event(value)
        if isinstance(e, str):
            self.bad_line(where, e)
            return
        if isinstance(e, Gap):
            if not live:
                self.bad_line(where, "a gap line in the runtime's own events")
            elif self._in_window(round(e.lo * 1e9), round(e.hi * 1e9)):
                self.gaps += 1
            return
        if not self._in_window(e.lo_ns, e.hi_ns):
            return
        # The targets this event is about: by name, by Id, by its run label, or renamed away from its name.
        concerned = {id(t): t for t in self._by_name.get(e.name, ())}  # type: ignore[arg-type]
        concerned.update((id(t), t) for t in self._by_id.get(e.id, ()))  # type: ignore[arg-type]
        if e.study is not None and e.run is not None and e.run in self._by_run:
            t = self._by_run[e.run]
            concerned[id(t)] = t
        if e.verb == "rename":
            concerned.update((id(t), t) for t in self._by_name.get(e.old_name, ()))  # type: ignore[arg-type]
        # The two recordings agree on every event of the window they both hold, whoever's it is (§6.9): one that
        # differs is the target's own where it is a target's, else the recording's, and so every target's.
        if concerned:
            known = self._copies.get(e.key)
            if known is None:
                if len(self._copies) < SEEN_KEPT:
                    self._copies[e.key] = e.compared
                    if at is not None:
                        self._copy_at[e.key] = at
            elif known != e.compared:
                self._disagree(concerned.values(), self._copy_at.get(e.key), at)
        else:
            self._stray_copy(e, at)
        ours = self._ours(e)
        if not ours and e.study is not None and e.study != self.study and e.name not in self._target_names:
            return  # another study's (§6.1): its label names it, and its name is in that study's stem
        for t in concerned.values():
            t.note(e, at)
        # Any container of the study made in the window, a target's own included: for every other
        # target it is work done again that its story leaves no room for.
        if (
            e.verb in ("create", "start")
            and (ours or concerned)
            and e.name not in self.allowed
            and e.key not in self._seen
        ):
            if len(self._seen) < SEEN_KEPT:
                self._seen.add(e.key)
            if e.name in self.unstarted:
                self.unbooked_count += 1
                if len(self.unbooked) < SHOWN:
                    self.unbooked.append((e.name, e.verb, e.lo_ns))
                    if at is not None:
                        self.at[(e.name, e.verb, e.lo_ns)] = at
            else:
                self.foreign_count += 1
                if len(self.foreign) < SHOWN:
                    self.foreign.append((e.name, e.verb, e.lo_ns))  # type: ignore[arg-type]
                    if at is not None:
                        self.at[(e.name, e.verb, e.lo_ns)] = at


def planned_after(acc: Accounts, stem: str | None, seq: int | None) -> tuple[frozenset[str], frozenset[str]]:
    """Container names the study may create in a kill's window: runs not yet started at ``seq``.

    A run planned after the kill, and also one planned (and perhaps charged)
    before it but not started by then: §1 has the resume start it.  Neither
    is a target; a target's own name is judged apart and never allowed.
    The first set: those a ``runStarted`` names (on the books: its
    ``container`` is that name exactly); the second: those without one yet
    (off the books, unless it still comes).
    """
    if stem is None or seq is None:
        return frozenset(), frozenset()
    waiting = [
        a
        for a in acc.runs.values()
        if a.plan is not None and (a.plan.seq > seq or not any(st.seq <= seq for st in a.starts))
    ]
    booked = {a.run for a in waiting if any(st.get("container") == stem + a.run for st in a.starts)}
    return (
        frozenset(stem + a.run for a in waiting if a.run in booked),
        frozenset(stem + a.run for a in waiting if a.run not in booked),
    )
