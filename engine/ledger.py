"""Reading a study's ledger incrementally, from a byte offset.

The ledger (``OUT/study/ledger.jsonl``) only grows.  :class:`LedgerParser`
turns bytes into records in whatever chunks they arrive: a partial last line
is held until its newline, a malformed line is reported with its line number
and kept out of the records, and ``seq`` gaps and repeats are reported (the
records are kept: the accounts must see what the study wrote).
:class:`LedgerTail` reads a file from the last offset it reached and never
reads a byte twice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import orjson


@dataclass(frozen=True, slots=True)
class Record:
    """One ledger line: ``seq``, ``at``, ``kind``, ``content``, and where it stood."""

    seq: int
    at: str
    kind: str
    content: dict[str, Any]
    line: int  # 1-based line number in the file
    offset: int  # byte offset of the line's start

    def as_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": self.at, "kind": self.kind, "content": self.content}

    def get(self, key: str, default: Any = None) -> Any:
        return self.content.get(key, default)


@dataclass(frozen=True, slots=True)
class LedgerIssue:
    """Something wrong with the ledger: ``malformed``, ``gap``, ``repeat``, ``torn``, ``shrunk``."""

    kind: str
    line: int
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "line": self.line, "detail": self.detail}


def _validate(obj: Any) -> str | None:
    """Why ``obj`` is not a ledger record, or None when it is one."""
    if not isinstance(obj, dict):
        return "not a JSON object"
    seq = obj.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        return "seq is not an integer"
    if not isinstance(obj.get("at"), str):
        return "at is not a string"
    if not isinstance(obj.get("kind"), str):
        return "kind is not a string"
    if not isinstance(obj.get("content"), dict):
        return "content is not an object"
    return None


@dataclass
class LedgerParser:
    """Bytes in, records and issues out; keeps the partial last line."""

    line_no: int = 0
    consumed: int = 0  # bytes turned into whole lines
    expected_seq: int = 1
    _pending: bytearray = field(default_factory=bytearray)

    @property
    def pending(self) -> bytes:
        return bytes(self._pending)

    def feed(self, chunk: bytes) -> tuple[list[Record], list[LedgerIssue]]:
        records: list[Record] = []
        issues: list[LedgerIssue] = []
        if not chunk:
            return records, issues
        start = 0
        if self._pending:
            nl = chunk.find(b"\n")
            if nl < 0:
                self._pending += chunk
                return records, issues
            self._pending += chunk[: nl + 1]
            self._take(bytes(self._pending), records, issues)
            self._pending.clear()
            start = nl + 1
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                break
            self._take(chunk[start : nl + 1], records, issues)
            start = nl + 1
        if start < len(chunk):
            self._pending += chunk[start:]
        return records, issues

    def finish(self) -> list[LedgerIssue]:
        """Call when the writer is gone: a held partial line is a torn line."""
        if not self._pending:
            return []
        return [LedgerIssue("torn", self.line_no + 1, f"last line has no newline ({len(self._pending)} bytes)")]

    def _take(self, line: bytes, records: list[Record], issues: list[LedgerIssue]) -> None:
        self.line_no += 1
        offset = self.consumed
        self.consumed += len(line)
        body = line.strip()
        if not body:
            issues.append(LedgerIssue("malformed", self.line_no, "empty line"))
            return
        try:
            obj = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            issues.append(LedgerIssue("malformed", self.line_no, f"not JSON: {exc}"))
            return
        why = _validate(obj)
        if why is not None:
            issues.append(LedgerIssue("malformed", self.line_no, why))
            return
        seq = obj["seq"]
        if seq > self.expected_seq:
            issues.append(LedgerIssue("gap", self.line_no, f"seq {seq} follows {self.expected_seq - 1}"))
        elif seq < self.expected_seq:
            issues.append(LedgerIssue("repeat", self.line_no, f"seq {seq} again after {self.expected_seq - 1}"))
        self.expected_seq = max(self.expected_seq, seq + 1)
        records.append(Record(seq, obj["at"], obj["kind"], obj["content"], self.line_no, offset))


class LedgerTail:
    """Follows one ledger file from the last byte offset read.

    The file may not exist yet; it is opened when it appears and kept open.
    If it shrinks or is replaced (the contract says it only grows), that is
    reported once as a ``shrunk`` issue and nothing is read again.
    """

    CHUNK = 1 << 20

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.parser = LedgerParser()
        self.offset = 0
        self._fd = -1
        self._ino: int | None = None
        self._broken = False

    def _open(self) -> bool:
        if self._fd >= 0:
            return True
        try:
            self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        self._ino = os.fstat(self._fd).st_ino
        return True

    def read_new(self) -> tuple[list[Record], list[LedgerIssue]]:
        """Everything appended since the last call."""
        records: list[Record] = []
        issues: list[LedgerIssue] = []
        for r, i in self.read_chunks():
            records.extend(r)
            issues.extend(i)
        return records, issues

    def read_chunks(self) -> Iterator[tuple[list[Record], list[LedgerIssue]]]:
        """Everything appended since the last call, a chunk (about 1 MiB) at a time.

        A long backlog can then be consumed without holding all of it at once.
        """
        if self._broken or not self._open():
            return
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            st = None
        if st is None or st.st_ino != self._ino or st.st_size < self.offset:
            self._broken = True
            yield [], [LedgerIssue("shrunk", self.parser.line_no, "the ledger was truncated or replaced; it must only grow")]
            return
        while True:
            chunk = os.pread(self._fd, self.CHUNK, self.offset)
            if not chunk:
                return
            self.offset += len(chunk)
            yield self.parser.feed(chunk)
            if len(chunk) < self.CHUNK:
                return

    def finish(self) -> list[LedgerIssue]:
        return self.parser.finish()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_ledger(path: Path | str) -> tuple[list[Record], list[LedgerIssue]]:
    """The whole ledger at once (for reports built from an evidence folder)."""
    tail = LedgerTail(path)
    try:
        records, issues = tail.read_new()
        issues.extend(tail.finish())
    finally:
        tail.close()
    return records, issues


def read_last_records(path: Path | str, max_bytes: int) -> tuple[list[Record], int]:
    """The whole records in the last ``max_bytes`` of a ledger, and the offset where they end.

    For showing the end of a long ledger at once, before it is read through;
    the records' ``line`` numbers are not known here and ``seq`` is not
    checked (the full read reports issues).
    """
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            start = max(0, size - max_bytes)
            fh.seek(start)
            data = fh.read(size - start)
    except FileNotFoundError:
        return [], 0
    if start > 0:
        cut = data.find(b"\n")
        if cut < 0:
            return [], 0
        data, start = data[cut + 1 :], start + cut + 1
    parser = LedgerParser(consumed=start)
    records, _ = parser.feed(data)
    return records, parser.consumed
