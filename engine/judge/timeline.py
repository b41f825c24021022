"""One timeline: the evidence folder's lines as typed events, each with its file and line, merged by time.

Each file the console appends to is a stream of events in the order it
was written; the streams are merged into one timeline ordered by time, so
that a fact is judged by when it happened, never by where a file put it.
That a file's lines come in the order of their times is itself a fact to
check: each stream says where its order breaks (:class:`Stream`), and the
merge stays lazy (``heapq.merge``), so memory holds one line a stream,
whatever the files' length.

The clocks: every time here is this machine's, stamped by the console, its
keepers or the runtime (seconds since the epoch).  Where two stamps of one
moment are taken a little apart, the order they are compared in allows a
named tolerance (``docs/contract.md``, "Controllers"):

* :data:`KEEPER_SLACK`: ``kill.json``'s ``at`` is stamped after SIGKILL
  returned and the keeper's ``end`` after its wait; both round to the
  millisecond, so the end of the killed controller may read up to a
  millisecond before the kill.
* :data:`SEEN_SLACK`: the keeper stamps a ``start`` before it spawns the
  controller and the console stamps ``seenAt`` when it read the record;
  both round to the millisecond.

At one instant the events come in the order of :data:`RANK`: a kill before
the end it causes, an end before the start it makes room for, a start
before the records its controller writes.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studymon.engine.contract.automata import Proof, Where, proof
from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from studymon.engine.evidence.records import (
    KillRecord,
    LaunchEnd,
    LaunchStart,
    TimelineLine,
    parse_launch,
    parse_timeline,
)
from studymon.engine.io import safefile
from studymon.engine.io.safefile import TORN, JsonlFile, Unreadable

KEEPER_SLACK = 0.001
# Two times to the millisecond read as floats: a millisecond apart may read as a hair more.
ORDER_ROUNDING = 1e-6
SEEN_SLACK = 0.002

KILL, END, START, SEEN = "kill", "end", "start", "seen"
RANK = {KILL: 0, END: 1, START: 2, SEEN: 3}

# An evidence file with more lines than this that are not its records is garbage: reading stops there and
# the file is unusable (the checks that need it fail saying so), so that 32 MiB of lines `0` costs
# milliseconds, not half a minute (bench/report_hostile.py: live-lines, timeline-lines).  What the console
# writes holds at most one such line: the torn last line of a console that died.
BAD_LINES = 1000


@dataclass(frozen=True, slots=True)
class Event:
    """One line of the evidence folder, typed: what happened (``what``), when on the timeline, and where it says so.

    ``time`` is the moment it is ordered by (its own stamp, with the
    tolerance of its kind applied); ``fact`` the validated record
    (:class:`LaunchStart`, :class:`LaunchEnd`, :class:`KilledAt`,
    :class:`TimelineLine`).
    """

    time: float
    what: str
    where: Where
    fact: Any

    @property
    def key(self) -> tuple[float, int]:
        return (self.time, RANK[self.what])


@dataclass(frozen=True, slots=True)
class KilledAt:
    """A kill folder's moment: its number and its ``kill.json``."""

    number: int
    kill: KillRecord


@dataclass
class Stream:
    """One file read as events, in its own order: what could not be read, and where its order breaks."""

    file: str
    problem: str | None = None  # the file could not be read (to its end)
    bad: list[str] = field(default_factory=list)  # lines that are not its events (the first few)
    bad_count: int = 0
    disorder: str | None = None  # the first line whose time is before the line before it
    disorder_proof: Proof | None = None
    torn: str | None = None  # the reason noted for a torn last line, if it has one
    bad_at: list[Where] = field(default_factory=list)  # where each of ``bad`` is
    KEPT = 3

    def note_bad(self, reason: str, where: Where | None = None) -> None:
        self.bad_count += 1
        if len(self.bad) < self.KEPT:
            self.bad.append(reason)
            self.bad_at.append(where if where is not None else Where(self.file, 0))
        if self.bad_count > BAD_LINES:
            raise Unreadable(self.file, f"more than {BAD_LINES} lines that are not its records: reading stopped")

    def ordered(self, events: Iterable[Event]) -> Iterator[Event]:
        """The events, noting the first whose own time is before its predecessor's (in the file's order)."""
        last: Event | None = None
        for e in events:
            if last is not None and self.disorder is None and e.time < last.time - KEEPER_SLACK - ORDER_ROUNDING:
                self.disorder = (
                    f"{e.where} is earlier than line {last.where.line}: {self.file} is appended in time order"
                )
                self.disorder_proof = proof(
                    last.where,
                    "a line, and its time",
                    f"{self.file} is appended a line at a time as things happen, so its times never go back",
                    (e.where, f"written after line {last.where.line}, dated earlier than it"),
                )
            last = e
            yield e


def _read(
    out: Path, rel: str, cap: int, stream: Stream, parse: Callable[[Any, Where], Event | str | None]
) -> Iterator[Event]:
    """The lines of ``rel`` parsed into events; a line that is not one is noted, an unreadable file ends the stream."""
    try:
        with JsonlFile(out, rel, cap) as f:
            for line in f.lines():
                where = Where(rel, line.number)
                parsed = parse(line.value, where) if line.problem is None else line.problem
                if line.problem == TORN:
                    # A console or keeper that died writing its last line: that line is not a record, nothing more.
                    stream.torn = f"{where}: {line.problem}"
                elif isinstance(parsed, str):
                    stream.note_bad(f"{where}: {parsed}", where)
                elif parsed is not None:
                    yield parsed
    except Unreadable as exc:
        stream.problem = str(exc)


def launch_events(out: Path, stream: Stream) -> Iterator[Event]:
    """launches.jsonl: each controller's start (stamped before its spawn) and end (stamped after its wait), by time.

    The file is small (its cap), so its lines are sorted by their times: a
    file out of order is said (:attr:`Stream.disorder`), and the controllers
    are still judged by when each line says it happened.
    """

    def parse(value: Any, where: Where) -> Event | str:
        parsed = parse_launch(value)
        if isinstance(parsed, str):
            return parsed
        what = START if isinstance(parsed, LaunchStart) else END
        return Event(parsed.at, what, where, parsed)

    cap = EvidenceFolder.CAPS[EvidenceFolder.LAUNCHES]
    # Lines of one instant keep the file's order: at a millisecond's resolution it is the best evidence there is.
    return iter(sorted(stream.ordered(_read(out, EvidenceFolder.LAUNCHES, cap, stream, parse)), key=lambda e: e.time))


def seen_events(out: Path, stream: Stream, after: int, most: int | None = None) -> Iterator[Event]:
    """timeline.jsonl: when a console saw each record, for the records after seq ``after`` (up to ``most`` past it;
    None: all of them, whatever their seq)."""

    def parse(value: Any, where: Where) -> Event | str | None:
        parsed = parse_timeline(value)
        if isinstance(parsed, str):
            return parsed
        if parsed.seq <= after or (most is not None and parsed.seq - after > most):
            return None
        return Event(parsed.seen_at + SEEN_SLACK, SEEN, where, parsed)

    if not safefile.exists(out, EvidenceFolder.TIMELINE):
        stream.problem = f"{EvidenceFolder.TIMELINE}: missing"
        return iter(())
    return stream.ordered(
        _read(out, EvidenceFolder.TIMELINE, EvidenceFolder.CAPS[EvidenceFolder.TIMELINE], stream, parse)
    )


def kill_events(kills: Iterable[KilledAt]) -> Iterator[Event]:
    """Each kill at the moment its ``kill.json`` says SIGKILL was sent (less the keeper's rounding), by time."""
    events = [
        Event(k.kill.at_epoch - KEEPER_SLACK, KILL, Where(KillFolder(Path(), k.number).rel(KillFolder.KILL), 1), k)
        for k in kills
        if k.kill.at_epoch is not None
    ]
    return iter(sorted(events, key=lambda e: (e.time, e.fact.number)))


def merged(*streams: Iterable[Event]) -> Iterator[Event]:
    """The streams as one timeline, by time and, at one instant, by :data:`RANK`."""
    return heapq.merge(*streams, key=lambda e: e.key)


__all__ = [
    "END",
    "KILL",
    "SEEN",
    "START",
    "Event",
    "KilledAt",
    "LaunchEnd",
    "LaunchStart",
    "Stream",
    "TimelineLine",
    "kill_events",
    "launch_events",
    "merged",
    "seen_events",
]
