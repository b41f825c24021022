"""An ``after:`` point held in the ledger's writes: exact, whatever the study's pace (contract §9.1).

A study may write several records microseconds apart, or in one write; no
watcher can stop it between two of them by signal.  The file system sees
every byte written to the ledger before the study's write returns, so it
counts the records as the console counts them (:class:`ArmedPoint`, the
purpose of a run from its ``runPlanned``) and, at the point's record, lands
the write up to the end of that record only and holds its reply: the study
cannot take a step past the record until the console has frozen it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

from studymon.engine.contract.killpoint import ArmedPoint, KillPoint


def _seq_of(raw: bytes) -> int | None:
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    seq = record.get("seq") if isinstance(record, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def seqs_from_end(data: bytes) -> Iterator[tuple[int, int | None]]:
    """A ledger's lines from its last, each as (where it ends, its newline included; its record's seq, or None), so
    that a question about its last records parses only those."""
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end) + 1
        yield min(end + 1, len(data)), _seq_of(data[start:end])
        end = start - 1


def _after_seq(data: bytes, from_seq: int) -> int:
    """Where in ``data`` (a ledger's bytes) the lines after its last record of seq ``from_seq`` or before begin."""
    return next((end for end, seq in seqs_from_end(data) if seq is not None and seq <= from_seq), 0)


DYING_POLL = 0.05  # seconds between looks at a held writer's pending signals


@dataclass(frozen=True)
class Hit:
    """The point's record, as the file system landed it."""

    seq: int
    kind: str
    run: str | None
    pid: int  # the writer (a thread of the controller: its group is what the console freezes)


class LedgerHold:
    """One point armed in the ledger's writes: counts the records written, and holds the write of its record.

    ``cut`` is asked of every write to the ledger, in order; the write whose
    bytes end the point's record is landed up to there, and its reply waits
    in :meth:`wait_release` until the console says how to go on.
    """

    def __init__(self, point: KillPoint, from_seq: int) -> None:
        self.counter = ArmedPoint(point)
        self.counter.begin(from_seq, 0.0)
        self.purposes: dict[str, str] = {}  # run -> purpose, from the runPlanned records seen
        self._partial = b""  # the start of a line whose end is still to be written
        self.hit: Hit | None = None
        self.passed: dict[str, Any] | None = None  # the point's record, found in the ledger already when armed
        self._held = threading.Event()
        self._released = threading.Event()
        self.land_rest = False  # the console let the study go on: the rest of the held write is landed too
        self.timed_out = False  # nobody said how to go on in time: the write was landed whole

    def catch_up(self, ledger: BinaryIO) -> None:
        """Count what the ledger holds already, as if its writes had passed here (at arming, under the file system's
        ledger lock): the purposes of the runs planned so far, and the records after ``from_seq``.

        Only the lines after the last record of ``from_seq`` or before are parsed whole; the ones before it are
        looked at for their plans only, so arming on a long ledger costs a read of it, not a parse.
        """
        data = ledger.read()
        start = _after_seq(data, self.counter.from_seq or 0)
        for raw in data[:start].split(b"\n"):
            if b'"runPlanned"' in raw:
                self._count(raw)
        found = self.cut(data[start:])
        if found is not None:
            self.passed = found[1]

    def cut(self, data: bytes) -> tuple[int, Any] | None:
        """Where in ``data`` (the ledger's next bytes) the point's record ends, and the record, once it is there."""
        before = len(self._partial)
        buf = self._partial + data
        start = 0
        while (end := buf.find(b"\n", start)) >= 0:
            raw, start = buf[start:end], end + 1
            record = self._count(raw)
            if record is not None:
                self._partial = b""
                return start - before, record
        self._partial = buf[start:]
        return None

    def _count(self, raw: bytes) -> dict[str, Any] | None:
        """One whole line written: whether it is the point's record (then it, parsed)."""
        try:
            record = json.loads(raw)
        except ValueError:
            return None  # not a record: the console's reader says so; it is no moment
        if not isinstance(record, dict) or not isinstance(record.get("content"), dict):
            return None
        kind, seq, content = record.get("kind"), record.get("seq"), record["content"]
        if not isinstance(kind, str) or not isinstance(seq, int) or isinstance(seq, bool):
            return None
        run = content.get("run")
        if kind == "runPlanned" and isinstance(run, str) and isinstance(content.get("purpose"), str):
            self.purposes.setdefault(run, content["purpose"])
        purpose = self.purposes.get(run) if isinstance(run, str) else None
        return record if self.counter.count(kind, purpose, seq=seq) else None

    # --- the held write ---------------------------------------------------------------
    def held(self, record: dict[str, Any], pid: int) -> None:
        """The write of the point's record landed up to it: say so, then wait (in the file system's thread)."""
        run = record["content"].get("run")
        self.hit = Hit(record["seq"], record["kind"], run if isinstance(run, str) else None, pid)
        self._held.set()

    def wait_held(self, timeout: float) -> Hit | None:
        return self.hit if self._held.wait(timeout) else None

    def release(self, land_rest: bool) -> None:
        """The console froze the study (``land_rest`` false: the reply says only the point's record was written), or
        lets it go on (the rest of the write is landed, and the reply says all of it was).  It may come before the
        write is held (the console read the record landed before the file system said it holds it): the write then
        does not wait."""
        self.land_rest = land_rest
        self._released.set()

    def wait_release(self, limit: float, dying: Callable[[], bool] = lambda: False) -> None:
        """Wait for :meth:`release` (which may have come already).  A writer that is being killed cannot die while
        its write is held (the kernel waits for the reply whatever the signal), so ``dying`` is asked as it waits:
        then the write returns cut at the point.  After ``limit`` seconds the write goes on whole: a console gone,
        or one that never saw the point, must not leave the study stuck."""
        deadline = time.monotonic() + limit
        while not self._released.wait(DYING_POLL):
            if dying():
                self.release(land_rest=False)
                return
            if time.monotonic() >= deadline:
                self.timed_out = self.land_rest = True
                return


def killed(tid: int) -> bool:
    """Whether thread ``tid`` has SIGKILL pending.  A thread held in its write cannot leave it (the kernel waits for
    the reply whatever the signal): one not found is none of ours (a call made outside the file system's loop)."""
    try:
        with open(f"/proc/{tid}/status", "rb") as status:
            text = status.read()
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith((b"SigPnd:", b"ShdPnd:")) and int(line.split()[1], 16) & (1 << (9 - 1)):
            return True
    return False
