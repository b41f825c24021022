"""Every place a study can crash, read from one run of it that nobody killed, and the classes they fall into.

The explorer (``studymon explore``) runs a study once, unkilled, as its
trace: the ledger's records and the runtime's lifecycle events of the
study's run containers, in the order they happened.  Each of those steps is
a **candidate** crash point, written as §7 writes points: a record is
``after:KIND[/PURPOSE]#N`` (the N-th record of that kind, and of a run of
that purpose for a run record), an event ``container:ACTION/PURPOSE#N``.

A crash at a candidate leaves something behind (§7): runs started without a
result (*in flight*), charged but not started (*charged*), whose container
started before their ``runStarted`` (*unrecorded*), diagnosis runs with a
result whose round is not settled (*unsettled*), each by purpose.  Crashes
that leave the same behind, right after the same kind of record or the same
container action, exercise the same recovery code: they are one **class**.
A campaign tries one candidate per class (its first), so the number of
trials follows the study's shapes (its kinds, purposes and overlaps), not
its length.

Pure: no file, process or runtime here; the explorer reads the trace.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from studymon.engine.contract.killpoint import ACTIONS, AFTER, CONTAINER, KillPoint
from studymon.engine.contract.ledger import Record
from studymon.engine.contract.rules import RUN_KINDS
from studymon.engine.contract.targets import CHARGED, IN_FLIGHT, UNRECORDED, UNSETTLED

# What a crash leaves behind, by category; the words are the judge's classes (docs/contract.md).
CATEGORIES = (IN_FLIGHT, CHARGED, UNRECORDED, UNSETTLED)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of the trace: a ledger record (``source`` after) or a runtime event of a run's container."""

    at: float  # epoch seconds: the record's time, or the event's
    source: str  # AFTER or CONTAINER
    what: str  # the record's kind, or the event's action
    run: str | None = None
    seq: int | None = None  # the record's seq
    content: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class Left:
    """What a crash leaves behind: per category, the purposes of the runs in it (sorted, without repeats)."""

    in_flight: tuple[str, ...] = ()
    charged: tuple[str, ...] = ()
    unrecorded: tuple[str, ...] = ()
    unsettled: tuple[str, ...] = ()

    def __str__(self) -> str:
        parts = [
            f"{name} {'+'.join(purposes)}"
            for name, purposes in zip(
                CATEGORIES, (self.in_flight, self.charged, self.unrecorded, self.unsettled), strict=True
            )
            if purposes
        ]
        return ", ".join(parts) or "nothing unfinished"

    def as_json(self) -> dict[str, list[str]]:
        return {
            IN_FLIGHT: list(self.in_flight),
            CHARGED: list(self.charged),
            UNRECORDED: list(self.unrecorded),
            UNSETTLED: list(self.unsettled),
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    """A point a crash could come at, where in the trace it is, and what a crash there leaves behind."""

    point: KillPoint
    step: int  # its index in the trace
    left: Left

    @property
    def cls(self) -> str:
        """The class's name: what the crash leaves behind, right after which kind of record or container action."""
        return f"{self.point.source}:{self.point.what} · {self.left}"


def steps_of(records: Iterable[Record], events: Iterable[dict[str, Any]], stem: str | None, epoch: Any) -> list[Step]:
    """The trace's steps in the order they happened: the records, and the ``create``, ``start`` and ``die`` events
    of containers named ``<stem><run>`` (the study's ``<prefix>-<ID>-``).  ``epoch`` reads a record's ``at`` or an
    event's time as epoch seconds (None when it has none); a record without a time keeps its place after the
    step before it."""
    out: list[Step] = []
    last = -math.inf
    for r in records:
        at = epoch(r.at)
        at = last if at is None else at
        last = at
        run = r.get("run")
        out.append(Step(at, AFTER, r.kind, run if isinstance(run, str) else None, r.seq, dict(r.content)))
    if stem:
        for e in events:
            action = e.get("Action") or e.get("status")
            if action not in ACTIONS:
                continue
            actor = e.get("Actor") if isinstance(e.get("Actor"), dict) else {}
            name = (actor.get("Attributes") or {}).get("name") if isinstance(actor, dict) else None
            if not isinstance(name, str) or not name.lstrip("/").startswith(stem):
                continue
            at = epoch(e)
            if at is None:
                continue
            out.append(Step(at, CONTAINER, str(action), name.lstrip("/")[len(stem) :]))
    # Stable: records keep their ledger order among equal times, and come before an event of the same instant.
    out.sort(key=lambda s: (s.at, s.source == CONTAINER))
    return out


def candidates(steps: Sequence[Step]) -> list[Candidate]:
    """Every step as a candidate point, counted as §7 counts them, with what a crash right after it leaves."""
    purposes: dict[str, str] = {}
    rounds: dict[str, Any] = {}
    charged: set[str] = set()
    started: set[str] = set()  # runStarted written
    running: set[str] = set()  # the runtime started its container
    results: set[str] = set()
    settled: set[Any] = set()
    counts: dict[tuple[str, str, str | None], int] = {}
    out: list[Candidate] = []
    for index, step in enumerate(steps):
        run = step.run
        if step.source == AFTER:
            kind = step.what
            if kind == "runPlanned" and run is not None:
                purpose = step.content.get("purpose")
                purposes[run] = purpose if isinstance(purpose, str) else ""
                rounds[run] = step.content.get("round")
            elif kind == "charge" and run is not None:
                charged.add(run)
            elif kind == "runStarted" and run is not None:
                started.add(run)
            elif kind == "runResult" and run is not None:
                results.add(run)
            elif kind == "diagnosisSettlement":
                settled.add(_round_key(step.content.get("round")))
        elif step.what == "start" and run is not None:
            running.add(run)
        purpose = purposes.get(run) if run is not None else None
        counted = purpose if (step.source == CONTAINER or step.what in RUN_KINDS) and purpose else None
        key = (step.source, step.what, counted)
        counts[key] = counts.get(key, 0) + 1
        point = KillPoint(step.source, step.what, counted, counts[key])
        left = Left(
            in_flight=_purposes(purposes, (r for r in started if r not in results)),
            charged=_purposes(purposes, (r for r in charged if r not in started and r not in running)),
            unrecorded=_purposes(purposes, (r for r in running if r not in started)),
            unsettled=_purposes(
                purposes,
                (r for r in results if purposes.get(r) == "diagnosis" and _round_key(rounds.get(r)) not in settled),
            ),
        )
        out.append(Candidate(point, index, left))
    return out


def _round_key(value: Any) -> Any:
    # A round is an integer in a sound ledger; anything else is kept apart by its type and text.
    return value if isinstance(value, int) and not isinstance(value, bool) else (type(value).__name__, repr(value))


def _purposes(purposes: dict[str, str], runs: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({purposes.get(r) or "?" for r in runs}))


def classes(found: Sequence[Candidate]) -> dict[str, list[Candidate]]:
    """The candidates by class, classes in the order their first candidate comes, candidates in trace order."""
    out: dict[str, list[Candidate]] = {}
    for c in found:
        out.setdefault(c.cls, []).append(c)
    return out
