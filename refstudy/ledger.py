"""The reference study's ledger: the append-only writer, the strict reader, and
the journal that replays an earlier process's records on ``--resume``.

The writer follows the contract to the letter: one JSON object per line,
``seq`` from 1 without gaps, ``at`` in UTC with milliseconds and ``Z``, each
line (or batch of lines) handed to the kernel in a single ``os.write`` on an
``O_APPEND`` descriptor, so a reader never sees half of a record unless the
writer died inside that one call.

The journal is how the controller resumes: its logic is deterministic given
its config and the records already written, so on resume it runs the same
logic from the start while the journal answers every step from the existing
ledger (checking that the step matches what was recorded), and switches to
writing for real at the end of the ledger.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studymon.engine.io.clock import rfc3339_ms

LEDGER_NAME = "ledger.jsonl"

Content = dict[str, Any]


class LedgerError(RuntimeError):
    """The ledger cannot be used as it is; the message names the line and the fix."""


class TornLedger(LedgerError):
    """The last line has no newline: the writer died in the middle of it."""


class LedgerBusy(LedgerError):
    """Another controller holds the ledger."""


class ReplayMismatch(LedgerError):
    """On resume, the study's logic would write something other than what the ledger holds."""


@dataclass(frozen=True)
class Record:
    """One ledger line."""

    seq: int
    at: str
    kind: str
    content: Content


def encode(seq: int, kind: str, content: Content, at: str | None = None) -> bytes:
    """One ledger line, newline included."""
    line = {"seq": seq, "at": at or rfc3339_ms(), "kind": kind, "content": content}
    return (json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def _parse_line(number: int, raw: bytes) -> Record:
    try:
        obj = json.loads(raw)
    except ValueError as exc:
        raise LedgerError(f"line {number} is not JSON ({exc})") from exc
    if not isinstance(obj, dict) or not isinstance(obj.get("content"), dict):
        raise LedgerError(f"line {number} is not a ledger record (an object with seq, at, kind, content)")
    seq, at, kind = obj.get("seq"), obj.get("at"), obj.get("kind")
    if not isinstance(seq, int) or not isinstance(at, str) or not isinstance(kind, str):
        raise LedgerError(f"line {number} has a bad seq, at or kind")
    return Record(seq, at, kind, obj["content"])


def read_ledger(path: Path) -> list[Record]:
    """Every record of the ledger at ``path`` ([] when there is none).

    Strict, because a controller resumes from it: a torn last line, a line
    that does not parse, or a gap in ``seq`` is refused rather than guessed at.
    """
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    if data and not data.endswith(b"\n"):
        raise TornLedger(
            f"{path}: the last line is incomplete (no newline), so the study's last step is unknown; "
            "inspect it by hand and remove that partial line before resuming"
        )
    records = []
    for number, raw in enumerate(data.splitlines(), start=1):
        record = _parse_line(number, raw)
        if record.seq != number:
            raise LedgerError(f"{path}: line {number} has seq {record.seq}; seq must run 1, 2, 3, ... without gaps")
        records.append(record)
    return records


def cut_torn_tail(path: Path) -> bytes:
    """Cut what follows the ledger's last whole line (contract §9.2): a line cut short by a crash inside its write,
    or the zeros a power loss leaves where unsynced data was.  Those bytes were never a record the study could have
    acted on (it acts on a record only once it is durable), so it goes on from what is there.  The bytes cut, made
    durable before returning (b"" when there were none)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return b""
    try:
        data = b""
        while chunk := os.read(fd, 1 << 20):
            data += chunk
        end = data.rfind(b"\n") + 1
        if end == len(data):
            return b""
        os.ftruncate(fd, end)
        os.fsync(fd)
        return data[end:]
    finally:
        os.close(fd)


class Ledger:
    """The append-only writer.  One per study directory; holds an exclusive lock.

    ``durable`` (the default, contract §9.2): each write is fsynced before
    :meth:`append_many` returns, so the step a record announces is taken only
    once the record would survive a power loss; the folder is fsynced once the
    ledger is made, so the file itself survives too.
    """

    def __init__(self, path: Path, next_seq: int = 1, durable: bool = True) -> None:
        self.path = Path(path)
        self.next_seq = next_seq
        self.durable = durable
        made = not self.path.exists()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            # Two controllers appending to one ledger would repeat seq numbers.
            # The lock dies with the process, so a killed controller never blocks its resume.
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            os.close(self._fd)
            raise LedgerBusy(f"{self.path}: another controller is writing this study; stop it first") from exc
        if made and durable:
            _sync_folder(self.path.parent)

    def append(self, kind: str, content: Content) -> Record:
        """Write one record; returns it."""
        return self.append_many([(kind, content)])[0]

    def append_many(self, steps: Iterable[tuple[str, Content]]) -> list[Record]:
        """Write several records in one ``os.write``: a reader sees all of them or none."""
        at = rfc3339_ms()
        records, chunks = [], []
        for offset, (kind, content) in enumerate(steps):
            seq = self.next_seq + offset
            chunks.append(encode(seq, kind, content, at))
            records.append(Record(seq, at, kind, content))
        data = b"".join(chunks)
        # No userspace buffer is involved, so the bytes are visible to readers
        # once write returns; a short write on a regular file means the disk is
        # full.  What was written of it is cut off again, so the ledger ends on
        # a whole record and a resume (once there is room) goes on from there.
        # Readers take whole lines only, so none has taken the cut bytes.
        before = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            written = os.write(self._fd, data)
        except OSError as exc:
            self._cut_back(before)
            raise LedgerError(f"{self.path}: cannot append ({exc.strerror}); nothing of the record was kept") from exc
        if written != len(data):
            self._cut_back(before)
            raise LedgerError(
                f"{self.path}: short write ({written} of {len(data)} bytes), cut back; the disk may be full"
            )
        if self.durable:
            try:
                os.fsync(self._fd)
            except OSError as exc:
                # Not durable, so the step it announces is not taken; the record stays (a reader may have seen it).
                raise LedgerError(f"{self.path}: cannot make the record durable ({exc.strerror})") from exc
        self.next_seq += len(records)
        return records

    def _cut_back(self, size: int) -> None:
        with contextlib.suppress(OSError):  # the resume's reader reports the partial line then
            os.ftruncate(self._fd, size)

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _sync_folder(folder: Path) -> None:
    """fsync a folder: the names it holds (a file just made in it) survive a power loss."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _normal(content: Content) -> Content:
    """``content`` as it reads back from the ledger (tuples become lists, and so on)."""
    normal: Content = json.loads(json.dumps(content, allow_nan=False))
    return normal


def _is(record: Record, kind: str, fields: dict[str, Any]) -> bool:
    """Whether ``record`` is a ``kind`` whose content has ``fields``."""
    return record.kind == kind and all(record.content.get(k) == v for k, v in fields.items())


class Journal:
    """The ledger as the controller's logic sees it: replay first, then live."""

    def __init__(
        self,
        ledger: Ledger,
        history: list[Record],
        pause: float = 0.0,
        wait: Callable[[float], object] = time.sleep,
    ) -> None:
        """``pause``: seconds to ``wait`` after each write (a study doing real work between its steps), so
        that a kill point can land between any two writes."""
        self.ledger = ledger
        self._pending: deque[Record] = deque(history)
        self.pause, self.wait = pause, wait

    @property
    def live(self) -> bool:
        """True once every earlier record has been replayed: steps are written for real."""
        return not self._pending

    def step(self, kind: str, content: Content) -> bool:
        """Record one step: True when written now, False when it replayed an earlier record."""
        return self.steps([(kind, content)])

    def steps(self, steps: list[tuple[str, Content]]) -> bool:
        """Record several steps; the ones not in the ledger yet go out in one write.

        True when anything was written now.
        """
        remaining = list(steps)
        while remaining and self._pending:
            self._expect(*remaining.pop(0))
        if not remaining:
            return False
        self.ledger.append_many(remaining)
        if self.pause > 0:
            self.wait(self.pause)
        return True

    def recorded(self, kind: str, **fields: Any) -> Content | None:
        """While replaying, the next record's content (it must be ``kind`` with ``fields``); None once live.

        For steps whose content comes from the world (a run's result), which a
        resumed controller takes from the ledger instead of recomputing.
        """
        if not self._pending:
            return None
        record = self._pending[0]
        if not _is(record, kind, fields):
            raise self._mismatch(record, kind, fields)
        self._pending.popleft()
        return record.content

    def skip(self, kind: str, **fields: Any) -> bool:
        """While replaying, pass over the next record if it is ``kind`` with ``fields``; whether it did.

        For records that mark a retry rather than a step of the logic (a
        ``serviceError`` where an earlier process stopped).
        """
        if not self._pending or not _is(self._pending[0], kind, fields):
            return False
        self._pending.popleft()
        return True

    def finish(self) -> None:
        """The logic reached its end: the ledger must hold nothing more."""
        if self._pending:
            record = self._pending[0]
            raise ReplayMismatch(
                f"ledger line {record.seq} ({record.kind}) comes after the study's end; "
                "the ledger was written by something else or edited"
            )

    def _expect(self, kind: str, content: Content) -> None:
        record = self._pending[0]
        if record.kind != kind or record.content != _normal(content):
            raise self._mismatch(record, kind, content)
        self._pending.popleft()

    @staticmethod
    def _mismatch(record: Record, kind: str, content: Content) -> ReplayMismatch:
        return ReplayMismatch(
            f"ledger line {record.seq} is {record.kind} {json.dumps(record.content)}, but resuming with this "
            f"config gives {kind} {json.dumps(content)}: the config or the ledger changed since the study started"
        )
