"""The process runtime's event journal: bounded, and read by time window.

Lifecycle events are appended by many processes (the callers of ``run`` and
``remove``, and every shim) and read two ways: a window at a time
(``history``, for a kill window) and as a live tail (``stream``).  One
ever-growing file would make both grow with the machine's whole past, so the
journal is a folder of *segments*::

    events/000000000001.jsonl   closed: full, never written again
    events/000000000002.jsonl   ...
    events/000000000003.jsonl   the active segment (the highest number): appended to
    events/index.json           each closed segment's first and last event time, and
                                the last time of every event dropped so far
    events/.lock                flock: appends and rotations are exclusive, window reads shared

An append that brings the active segment to ``segment_bytes`` closes it: its
time range goes into the index and the next number is created.  Only the
last ``keep`` closed segments are kept.  A window read opens the active
segment and the closed ones whose range meets the window, so it costs the
window (plus at most one segment), not the history.

Coverage stays provable: the index remembers the latest event time of every
dropped segment (``droppedThrough``).  A window that starts after it has lost
nothing; one that starts at or before it may have, and the read says so.

The size and the number kept are each writer's own settings (every shim
uses the defaults): mixing them changes when segments close, never what is
read.  Event times are taken just before the append, so neighbouring
segments may overlap by a moment; the index holds each segment's true first
and last time, found when it closes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from studymon.engine.evidence.writer import append_line_fd
from studymon.engine.runtimes.base import Event
from studymon.engine.runtimes.statedir import StateDir

FOLDER = "events"
LEGACY = "events.jsonl"  # the single journal of earlier versions, taken over as the first segment
INDEX = "index.json"
LOCK = ".lock"
# 4 MiB holds ~8,000 events (a few per run); 16 closed segments keep ~130,000
# events, weeks of studies, in at most 68 MiB.  A window read parses at most
# its own segments plus the active one: ~8,000 lines, ~20 ms.
SEGMENT_BYTES = 4 << 20
KEEP_SEGMENTS = 16

_SEGMENT_RE = re.compile(r"^(\d{12})\.jsonl$")


def segment_name(number: int) -> str:
    return f"{number:012d}.jsonl"


def event_ns(event: Event) -> int:
    try:
        return int(event.get("timeNano", 0))
    except (TypeError, ValueError):
        return 0


@dataclass
class Window:
    """The events of a window, and whether the journal still held all of them."""

    events: list[Event]
    complete: bool
    segments_read: list[int]


class Journal:
    """Appends to and reads from the segmented journal under a :class:`StateDir`."""

    def __init__(self, state: StateDir, segment_bytes: int = SEGMENT_BYTES, keep: int = KEEP_SEGMENTS) -> None:
        if segment_bytes <= 0 or keep < 1:
            raise ValueError("a journal needs a positive segment size and keeps at least one closed segment")
        self.state = state
        self.segment_bytes = segment_bytes
        self.keep = keep
        self.folder_path = state.root / FOLDER

    # --- the folder and its lock ---------------------------------------------------
    @contextlib.contextmanager
    def _locked(self, exclusive: bool) -> Iterator[int]:
        """The journal folder's descriptor, with its lock held."""
        with self.state.folder(FOLDER, create=True) as efd:
            lock = self.state.open_file(efd, LOCK, os.O_RDWR | os.O_CREAT, self.folder_path / LOCK)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
                yield efd
            finally:
                os.close(lock)  # releases the lock

    def prepare(self) -> None:
        """Make the folder, and take over a single journal left by an earlier version."""
        with self._locked(exclusive=True) as efd, self.state.folder() as root_fd:
            if _segments(efd):
                return
            try:
                fd = self.state.open_file(root_fd, LEGACY, os.O_RDONLY, self.state.root / LEGACY)
            except FileNotFoundError:
                return
            os.close(fd)  # opened only to refuse a link or a non-file
            os.rename(LEGACY, segment_name(1), src_dir_fd=root_fd, dst_dir_fd=efd)

    # --- appending --------------------------------------------------------------------
    def append(self, event: Event) -> None:
        """Append ``event`` as one whole line; close the segment when it is full."""
        line = (json.dumps(event) + "\n").encode()
        with self._locked(exclusive=True) as efd:
            numbers = _segments(efd)
            active = numbers[-1] if numbers else 1
            shown = self.folder_path / segment_name(active)
            fd = self.state.open_file(efd, segment_name(active), os.O_WRONLY | os.O_APPEND | os.O_CREAT, shown)
            try:
                append_line_fd(fd, shown, line)
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
            if size >= self.segment_bytes:
                self._rotate(efd, numbers or [active])

    def _rotate(self, efd: int, numbers: list[int]) -> None:
        """Close the active segment: index it, open the next, drop the oldest beyond ``keep``."""
        index = self._read_index(efd)
        ranges: dict[str, Any] = index["segments"]
        for number in numbers:  # the one closing now, and any a crash left unindexed
            if str(number) not in ranges:
                ranges[str(number)] = self._scan(efd, number)
        # The new segment exists before the index changes: a reader that lists
        # the folder never misses where appends go next.
        nxt = numbers[-1] + 1
        os.close(
            self.state.open_file(efd, segment_name(nxt), os.O_WRONLY | os.O_CREAT, self.folder_path / segment_name(nxt))
        )
        closed = sorted(int(n) for n in ranges)
        dropped = closed[: max(0, len(closed) - self.keep)]
        for number in dropped:
            gone = ranges.pop(str(number))
            index["droppedThrough"] = max(int(index.get("droppedThrough") or 0), int(gone.get("last") or 0))
        # The index says "dropped" before the files go: a reader never takes a
        # missing segment for one that held nothing.
        self.state.write_json(efd, INDEX, index, indent=None)
        lowest_kept = min((int(n) for n in ranges), default=nxt)
        for number in _segments(efd):
            if number < lowest_kept:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(segment_name(number), dir_fd=efd)

    def _scan(self, efd: int, number: int) -> dict[str, Any]:
        """A closed segment's first and last event times (None when it holds none)."""
        first = last = None
        count = 0
        for event in self._read_segment(efd, number):
            ns = event_ns(event)
            first = ns if first is None else min(first, ns)
            last = ns if last is None else max(last, ns)
            count += 1
        return {"first": first, "last": last, "events": count}

    # --- reading -------------------------------------------------------------------------
    def _read_index(self, efd: int) -> dict[str, Any]:
        index = self.state.read_json(efd, INDEX, self.folder_path / INDEX)
        if not isinstance(index, dict) or not isinstance(index.get("segments"), dict):
            # Missing or unreadable: every segment is then read whole, and
            # rebuilt into the index at the next rotation.  Whether anything
            # was dropped before is unknown only if segment 1 is gone too.
            index = {"segments": {}, "droppedThrough": None}
        return index

    def window(self, since_ns: int, until_ns: int) -> Window:
        """The events with ``since_ns <= timeNano <= until_ns``, in journal order."""
        try:
            with self._locked(exclusive=False) as efd:
                numbers = _segments(efd)
                index = self._read_index(efd)
                complete = self._covers(index, numbers, since_ns)
                found: list[Event] = []
                read: list[int] = []
                for number in numbers:
                    span = index["segments"].get(str(number))
                    if span is not None and (
                        span.get("first") is None or span["last"] < since_ns or span["first"] > until_ns
                    ):
                        continue  # closed, and wholly outside the window
                    read.append(number)
                    found.extend(e for e in self._read_segment(efd, number) if since_ns <= event_ns(e) <= until_ns)
        except FileNotFoundError:
            return Window([], True, [])
        return Window(found, complete, read)

    @staticmethod
    def _covers(index: dict[str, Any], numbers: list[int], since_ns: int) -> bool:
        """Whether no event at or after ``since_ns`` was ever dropped."""
        dropped = index.get("droppedThrough")
        if dropped is not None:
            return since_ns > int(dropped)
        # Nothing recorded as dropped: true while the journal still starts at
        # its first segment (or is empty); a lost index with early segments
        # gone proves nothing.
        return not numbers or numbers[0] == 1

    def _read_segment(self, efd: int, number: int) -> Iterator[Event]:
        try:
            data = self.state.read_bytes(efd, segment_name(number), self.folder_path / segment_name(number))
        except FileNotFoundError:
            return
        yield from parse_lines(data)

    # --- tailing ----------------------------------------------------------------------------
    def tail_start(self) -> tuple[int, int]:
        """Where a tail starts: the active segment's number and its size now."""
        with self.state.folder(FOLDER, create=True) as efd:
            numbers = _segments(efd)
            if not numbers:
                return 1, 0
            return numbers[-1], self._size(efd, numbers[-1])

    def _size(self, efd: int, number: int) -> int:
        try:
            fd = self.state.open_file(efd, segment_name(number), os.O_RDONLY, self.folder_path / segment_name(number))
        except FileNotFoundError:
            return 0
        try:
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    def tail(self, at: tuple[int, int], callback: Callable[[Event], None]) -> tuple[tuple[int, int], bool]:
        """Hand over every complete line after ``at`` (segment, offset), following rotations.

        Returns where the next call starts, and whether lines may have been
        lost since the last call (the segment being read was truncated, or
        dropped before it was read to its end).
        """
        number, offset = at
        lost = False
        with self.state.folder(FOLDER, create=True) as efd:
            while True:
                # Listed before the read: once a later segment exists, this one
                # is closed, so reading it now reads it to its very end.
                numbers = _segments(efd)
                later = [n for n in numbers if n > number]
                offset, cut, missing = self._deliver(efd, number, offset, callback)
                lost = lost or cut
                if missing and (later or numbers):
                    # Dropped before it was read to its end (the tail fell a
                    # whole ``keep`` behind), or the journal began again.
                    lost = True
                    number, offset = (later or numbers)[0], 0
                    continue
                if missing:
                    return (number, 0), lost or offset > 0
                if not later:
                    return (number, offset), lost
                number, offset = later[0], 0

    def _deliver(self, efd: int, number: int, offset: int, callback: Callable[[Event], None]) -> tuple[int, bool, bool]:
        """Deliver from ``offset`` in segment ``number``: the new offset, whether it shrank, whether it is missing."""
        shown = self.folder_path / segment_name(number)
        try:
            fd = self.state.open_file(efd, segment_name(number), os.O_RDONLY, shown)
        except FileNotFoundError:
            return offset, False, True
        cut = False
        try:
            if os.fstat(fd).st_size < offset:
                offset, cut = 0, True  # truncated or replaced: start over
            chunks = []
            pos = offset
            while chunk := os.pread(fd, 1 << 20, pos):
                chunks.append(chunk)
                pos += len(chunk)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        end = data.rfind(b"\n")
        if end < 0:
            return offset, cut, False  # nothing, or only a torn line so far: wait for its end
        for event in parse_lines(data[: end + 1]):
            callback(event)
        return offset + end + 1, cut, False


def parse_lines(data: bytes) -> Iterator[Event]:
    """The JSON objects of the complete lines in ``data`` (a torn last line is left out)."""
    end = data.rfind(b"\n")
    for line in data[: end + 1].splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def _segments(efd: int) -> list[int]:
    """The segment numbers present, ascending."""
    found = []
    for name in os.listdir(efd):
        match = _SEGMENT_RE.match(name)
        if match:
            found.append(int(match.group(1)))
    found.sort()
    return found
