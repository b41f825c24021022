"""Safe, bounded reads of an evidence folder's files, and strict JSON.

Everything the oracle knows comes through here.  A file is opened one path
component at a time below the folder given, each with ``O_NOFOLLOW`` (so no
symbolic link is followed, in or out of the folder) and ``O_NONBLOCK`` (so a
FIFO never blocks), then ``fstat`` decides: only a regular file no larger than
its cap is read, whole, into memory.  Every refusal is a ``Refused`` with a
reason a human can read; nothing here raises on hostile input.

JSON is parsed by the standard library with hooks that make it strict the
way the contract asks: an object that repeats a key, ``NaN``/``Infinity``
and a number too large to be finite are refused (or, for ledger lines and
``ledger-at-kill.json``, flagged and kept as the value they read as, so that
the two copies can be compared: rule 9 is ``contractKept``'s, rule 10
``ledgerWellFormed``'s), and integers are kept exactly, whatever their size
(an integer beyond a double's range is flagged apart: it breaks rule 9 in a
ledger line, and is an integer like any other in every other file).
JSON nested deeper than the standard library's recursive parser reaches is
parsed again by an iterative one (``_parse_deep``): valid JSON is read at any
depth, and nothing that compares values recurses (``strict_equal``).
"""

from __future__ import annotations

import errno
import json
import json.decoder
import json.scanner
import math
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MiB = 1024 * 1024

# The caps of docs/contract.md ("Hostile evidence", and "Campaigns" for a campaign's files);
# machine.jsonl, outcome.json and power.json have none there: ours are written down in README.md's
# open questions.
CAPS: dict[str, int] = {
    "research.json": 1 * MiB,
    "study/ledger.jsonl": 32 * MiB,
    "timeline.jsonl": 32 * MiB,
    "launches.jsonl": 4 * MiB,
    "arms.jsonl": 1 * MiB,
    "ledger-watch.jsonl": 1 * MiB,
    "outcome.json": 1 * MiB,
    "machine.jsonl": 64 * MiB,
    "kill.json": 8 * MiB,
    "container-before.json": 8 * MiB,
    "container-after-kill.json": 8 * MiB,
    "container-before-resume.json": 8 * MiB,
    "container-events-window.json": 8 * MiB,
    "container-events-live.jsonl": 32 * MiB,
    "container-events.jsonl": 32 * MiB,
    "ledger-at-kill.json": 64 * MiB,
    "runtime-restarts.jsonl": 1 * MiB,
    "power.json": 1 * MiB,
    # A campaign's (docs/contract.md, "Campaigns"): its summary, its journal, a trial's report.json.
    "campaign.json": 16 * MiB,
    "trials.jsonl": 64 * MiB,
    "report.json": 8 * MiB,
}
ALL_KILL_FOLDERS_CAP = 96 * MiB
ALL_RECORDINGS_CAP = 32 * MiB
MAX_KILL_FOLDERS = 64
# Integers longer than this are kept as their digits: Python refuses to convert longer
# strings by default, and converting a 32 MiB number would take minutes.
INT_DIGITS = 4000
# The largest double, exactly (about 1.797e308): an integer beyond it, either way, is held by no double
# (docs/contract.md, §2a rule 9: "an integer literal beyond ±1.797…e308 (read exactly, but no double holds it:
# the books are kept in doubles)"; README.md, open question 93).
DOUBLE_MAX = int(sys.float_info.max)


class Refused(Exception):
    """A file that cannot be evidence: its reason is said, never its content."""


@dataclass(frozen=True)
class BigInt:
    """An integer too long to convert cheaply, compared exactly by its JSON digits."""

    text: str


def is_int(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, BigInt)


def is_number(value: Any) -> bool:
    return is_int(value) or (isinstance(value, float) and math.isfinite(value))


def beyond_double(value: Any) -> bool:
    """An integer no double holds: beyond ±1.797…e308 (every ``BigInt`` is, at more than 4000 digits)."""
    if isinstance(value, BigInt):
        return True
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > DOUBLE_MAX


def _open_below(root: Path, rel: str, directory: bool = False) -> int:
    """A descriptor for ``root/rel``, no component of rel a symbolic link."""
    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise Refused(f"{rel}: not a path inside the folder")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK)
    except OSError as exc:
        raise Refused(f"the folder cannot be opened ({errno.errorcode.get(exc.errno or 0, 'error')})") from None
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            if not last or directory:
                flags |= os.O_DIRECTORY
            try:
                nfd = os.open(part, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ENOENT:
                    raise Refused(f"{rel}: missing") from None
                if exc.errno in (errno.ELOOP, errno.EMLINK):
                    raise Refused(f"{rel}: a symbolic link") from None
                if exc.errno == errno.ENOTDIR:
                    raise Refused(f"{rel}: a path component is not a folder (or is a symbolic link)") from None
                raise Refused(f"{rel}: cannot be opened ({errno.errorcode.get(exc.errno or 0, 'error')})") from None
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(root: Path, rel: str, cap: int) -> bytes:
    """The whole of a regular file below root, at most cap bytes; else Refused."""
    fd = _open_below(root, rel)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = (
                "a FIFO"
                if stat.S_ISFIFO(st.st_mode)
                else "a device"
                if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket"
                if stat.S_ISSOCK(st.st_mode)
                else "a folder"
                if stat.S_ISDIR(st.st_mode)
                else "not a regular file"
            )
            raise Refused(f"{rel}: {kind}, not a regular file")
        if st.st_size > cap:
            raise Refused(f"{rel}: {st.st_size} bytes, larger than the {cap} a study could write")
        chunks: list[bytes] = []
        total = 0
        while True:
            try:
                chunk = os.read(fd, min(1 * MiB, cap + 1 - total))
            except OSError as exc:
                raise Refused(f"{rel}: unreadable ({errno.errorcode.get(exc.errno or 0, 'error')})") from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:
                raise Refused(f"{rel}: grew past the {cap} bytes a study could write")
        return b"".join(chunks)
    finally:
        os.close(fd)


def file_size(root: Path, rel: str) -> int | None:
    """The size of a regular file below root without following links, or None."""
    try:
        fd = _open_below(root, rel)
    except Refused:
        return None
    try:
        st = os.fstat(fd)
        return st.st_size if stat.S_ISREG(st.st_mode) else None
    finally:
        os.close(fd)


def list_folder(root: Path, rel: str) -> list[str]:
    """The names in a real folder below root (no link followed); Refused otherwise."""
    fd = _open_below(root, rel, directory=True)
    try:
        return sorted(os.listdir(fd))
    except OSError:
        raise Refused(f"{rel}: cannot be listed") from None
    finally:
        os.close(fd)


def list_subfolders(root: Path, rel: str) -> list[str]:
    """The names in a real folder below root that are themselves real folders: not a symbolic link (dangling,
    out of the folder, or inside it), not a file; Refused as ``list_folder`` for the folder itself."""
    fd = _open_below(root, rel, directory=True)
    names: list[str] = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        names.append(entry.name)
                except OSError:
                    continue
    except OSError:
        raise Refused(f"{rel}: cannot be listed") from None
    finally:
        os.close(fd)
    return sorted(names)


def list_folder_bounded(root: Path, rel: str, limit: int) -> tuple[list[str], bool]:
    """At most ``limit`` names of a real folder below root (no link followed), and whether it holds more;
    Refused otherwise.  Never more than ``limit + 1`` entries are looked at."""
    fd = _open_below(root, rel, directory=True)
    names: list[str] = []
    more = False
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if len(names) >= limit:
                    more = True
                    break
                names.append(entry.name)
    except OSError:
        raise Refused(f"{rel}: cannot be listed") from None
    finally:
        os.close(fd)
    return sorted(names), more


def folder_identity(root: Path, rel: str) -> tuple[int, int] | None:
    """(device, inode) of a real folder below root (no link followed), or None."""
    try:
        fd = _open_below(root, rel, directory=True)
    except Refused:
        return None
    try:
        st = os.fstat(fd)
        return (st.st_dev, st.st_ino)
    finally:
        os.close(fd)


def has_entry(root: Path, name: str) -> bool:
    """Whether the folder holds an entry of that name, of whatever kind (a regular file, a folder, a FIFO, a
    symbolic link, dangling or not): nothing is opened or followed but the folder itself."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def is_folder(root: Path, rel: str) -> bool:
    try:
        os.close(_open_below(root, rel, directory=True))
    except Refused:
        return False
    return True


# --- JSON -------------------------------------------------------------------------------------


class _Strict:
    """One parse's hooks: they note what the contract forbids instead of raising from deep inside."""

    def __init__(self) -> None:
        self.duplicate: str | None = None
        self.nonfinite = False
        self.beyond_double = False  # an integer beyond a double's range: rule 9's in a ledger line, else a value

    def pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out and self.duplicate is None:
                self.duplicate = key
            out[key] = value
        return out

    def constant(self, name: str) -> float:
        # NaN, Infinity, -Infinity: kept as the value each reads as (the copies of a record are compared by
        # value: README.md, open question 86).
        self.nonfinite = True
        return float(name)

    def floating(self, text: str) -> float:
        value = float(text)  # 1e400 reads as infinity, -1e400 as its negative
        if not math.isfinite(value):
            self.nonfinite = True
        return value

    def integer(self, text: str) -> int | BigInt:
        digits = text.lstrip("-")
        value: int | BigInt = BigInt(text) if len(digits) > INT_DIGITS else int(text)
        if beyond_double(value):
            self.beyond_double = True
        return value


@dataclass
class Parsed:
    value: Any = None
    error: str | None = None  # not JSON at all, or a repeated key: not a value
    nonfinite: bool = False  # NaN, Infinity or a number that overflows: a value, flagged
    beyond_double: bool = False  # an integer beyond a double's range, kept exactly: flagged


def parse_json(text: str) -> Parsed:
    hooks = _Strict()
    try:
        try:
            value = json.loads(
                text,
                object_pairs_hook=hooks.pairs,
                parse_constant=hooks.constant,
                parse_float=hooks.floating,
                parse_int=hooks.integer,
            )
        except RecursionError:
            # Deeper than the recursive parser reaches from here: valid JSON all the same (the contract bounds
            # a file's size, never its depth), read by the iterative parser with the same hooks, afresh.
            hooks = _Strict()
            value = _parse_deep(text, hooks)
    except ValueError as exc:
        return Parsed(error=f"not JSON ({type(exc).__name__} at char {getattr(exc, 'pos', '?')})")
    if hooks.duplicate is not None:
        return Parsed(error=f"an object repeats the key {quote(hooks.duplicate)}")
    return Parsed(value=value, nonfinite=hooks.nonfinite, beyond_double=hooks.beyond_double)


_WS = json.decoder.WHITESPACE
_NUMBER = json.scanner.NUMBER_RE
_scanstring = json.decoder.scanstring
_LITERALS = (("null", None), ("true", True), ("false", False))
_CONSTANTS = ("NaN", "Infinity", "-Infinity")


def _parse_deep(s: str, hooks: _Strict) -> Any:
    """``json.loads(s)`` with the strict hooks, without recursion: the same grammar as the standard library's
    parser (its string scanner and number pattern), one explicit stack of the containers still open, so any
    depth is read in bounded Python stack.  Raises ``json.JSONDecodeError`` (a ValueError) where it would."""

    def fail(msg: str, at: int) -> json.JSONDecodeError:
        return json.JSONDecodeError(msg, s, at)

    def ws(at: int) -> int:
        m = _WS.match(s, at)
        return m.end() if m is not None else at

    def key_at(at: int) -> tuple[str, int]:
        if s[at : at + 1] != '"':
            raise fail("Expecting property name enclosed in double quotes", at)
        key, at = _scanstring(s, at + 1, True)
        at = ws(at)
        if s[at : at + 1] != ":":
            raise fail("Expecting ':' delimiter", at)
        return key, ws(at + 1)

    # The containers still open, innermost last: a list being filled, or an object's pairs and the key whose
    # value comes next.
    stack: list[_Open] = []
    at = ws(0)
    while True:
        # A value starts at `at`.
        c = s[at : at + 1]
        value: Any
        if c == "{":
            at = ws(at + 1)
            if s[at : at + 1] == "}":
                value, at = hooks.pairs([]), at + 1
            else:
                key, at = key_at(at)
                stack.append(_Open([], key))
                continue
        elif c == "[":
            at = ws(at + 1)
            if s[at : at + 1] == "]":
                value, at = [], at + 1
            else:
                stack.append(_Open([], None))
                continue
        elif c == '"':
            value, at = _scanstring(s, at + 1, True)
        else:
            for word, literal in _LITERALS:
                if s.startswith(word, at):
                    value, at = literal, at + len(word)
                    break
            else:
                m = _NUMBER.match(s, at)
                if m is not None:
                    integer, frac, exp = m.groups()
                    value = (
                        hooks.floating(integer + (frac or "") + (exp or "")) if frac or exp else hooks.integer(integer)
                    )
                    at = m.end()
                else:
                    word = next((w for w in _CONSTANTS if s.startswith(w, at)), None)
                    if word is None:
                        raise fail("Expecting value", at)
                    value, at = hooks.constant(word), at + len(word)
        # The value is whole: it goes into the innermost container open, closing each container it ends.
        while True:
            at = ws(at)
            if not stack:
                if at != len(s):
                    raise fail("Extra data", at)
                return value
            top = stack[-1]
            c = s[at : at + 1]
            if top.key is None:  # a list
                top.items.append(value)
                close = "]"
            else:
                top.items.append((top.key, value))
                close = "}"
            if c == ",":
                at = ws(at + 1)
                if top.key is not None:
                    top.key, at = key_at(at)
                break
            if c != close:
                raise fail("Expecting ',' delimiter", at)
            stack.pop()
            value, at = (top.items if top.key is None else hooks.pairs(top.items)), at + 1


@dataclass
class _Open:
    """A container ``_parse_deep`` has opened and not closed: a list's items (``key`` None), or an object's pairs
    so far and the key whose value comes next."""

    items: list[Any]
    key: str | None


def strict_json(text: str) -> Any:
    """A value, or Refused: for every file but the ledger, a non-finite number is a wrong shape too."""
    parsed = parse_json(text)
    if parsed.error is not None:
        raise Refused(parsed.error)
    if parsed.nonfinite:
        raise Refused("a number is not finite (NaN, Infinity or too large)")
    return parsed.value


def decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(f"{what}: not UTF-8 at byte {exc.start}") from None


def read_json(root: Path, rel: str, cap: int) -> Any:
    data = read_bytes(root, rel, cap)
    try:
        return strict_json(decode(data, rel))
    except Refused as exc:
        raise Refused(f"{rel}: {exc}") from None


class Lines:
    """A .jsonl file cut at its newlines: its whole lines (number, bytes), one at a time as they are asked
    for (a reader that stops at its first bad line never cuts 32 MiB of empty lines into a list), their
    count, and a torn tail."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._end = data.rfind(b"\n") + 1  # just past the last newline
        self.torn: bytes | None = data[self._end :] or None
        self.count = data.count(b"\n")

    @property
    def whole(self) -> Iterator[tuple[int, bytes]]:
        data, end, start, number = self._data, self._end, 0, 0
        while start < end:
            stop = data.index(b"\n", start, end)
            number += 1
            yield number, data[start:stop]
            start = stop + 1


def split_lines(data: bytes) -> Lines:
    return Lines(data)


def read_jsonl_objects(
    root: Path, rel: str, cap: int, allow_torn_tail: bool = True
) -> list[tuple[int, dict[str, Any]]]:
    """Every line of a console-written .jsonl as an object; Refused at the first line that is not one.

    The console writes a line per write, so the only line that may be other than an object is
    the torn tail of a console that died mid-write: it is left out when allowed.
    """
    lines = split_lines(read_bytes(root, rel, cap))
    if lines.torn is not None and not allow_torn_tail:
        raise Refused(f"{rel}: the last line is not whole")
    out: list[tuple[int, dict[str, Any]]] = []
    for number, raw in lines.whole:
        try:
            value = strict_json(decode(raw, f"line {number}"))
        except Refused as exc:
            raise Refused(f"{rel} line {number}: {exc}") from None
        if not isinstance(value, dict):
            raise Refused(f"{rel} line {number}: not an object")
        out.append((number, value))
    return out


def quote(value: Any, limit: int = 40) -> str:
    """A value from the folder as it may be shown: escaped, cut short.  A list or an object nested deeper than
    repr recurses is shown by its type alone (README.md, open question 87)."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = repr(value)
        except RecursionError:
            text = f"a {'list' if isinstance(value, list) else 'object' if isinstance(value, dict) else 'value'}"
    escaped = text.encode("unicode_escape", errors="backslashreplace").decode("ascii", errors="replace")
    return repr(escaped[:limit] + ("…" if len(escaped) > limit else ""))


def strict_equal(a: Any, b: Any) -> bool:
    """Equal values of equal types, all the way down: true, 1 and 1.0 differ.

    Walked with a stack of its own, never by recursion: a value may nest as deep as its file's size allows
    (README.md, open question 87).  A number that is not finite (only a ledger line or ``ledger-at-kill.json``
    holds one) equals the same one: 1e400 and Infinity both read as infinity, NaN is NaN (docs/contract.md,
    killEvidence: "a number that is not finite there as in the ledger (`1e400` in both) is the ledger's fault
    (rule 9, `contractKept`), not the copy's: the two agree"; README.md, open question 86)."""
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            pending.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y, strict=True))
        elif isinstance(x, float) and math.isnan(x):
            if not math.isnan(y):
                return False
        elif x != y:
            return False
    return True
