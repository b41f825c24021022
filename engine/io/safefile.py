"""Reading evidence files that may have been written by an adversary.

``studymon report`` judges folders it did not write itself, so every read
here assumes the worst of the file: it may be a FIFO (an open would block
forever), a device (``/dev/zero`` never ends), a symbolic link out of the
evidence folder (it must not make studymon read, let alone print, anything
outside ``OUT``), a sparse file of gigabytes, or JSON of any shape.

Every file is opened relative to ``OUT``: the path must resolve inside
``OUT`` (a symbolic link that leads out is refused), the last component is
opened with ``O_NOFOLLOW`` and ``O_NONBLOCK``, and ``fstat`` must show a
regular file no larger than the cap for its kind.  Reads stop at the size
seen at open, so a file that keeps growing cannot keep a reader busy.

A file that cannot be used raises :class:`Unreadable` whose text says why in
studymon's words; it never quotes the file's bytes (not even parser messages,
which can), so an error can be printed safely.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

MiB = 1 << 20
GiB = 1 << 30

# What a study and its console could plausibly write; beyond this a file is
# judged hostile rather than read.  A JSON evidence file (kill.json, the
# container snapshots, the window) is a few KiB; a live event recording of a
# week-long study a few MiB.  The ledger of a long study is the one big file:
# a 200 000-line ledger is ~40 MiB, so its cap leaves two orders of magnitude.
JSON_CAP = 64 * MiB
JSONL_CAP = 256 * MiB
LEDGER_CAP = 4 * GiB
# ledger-at-kill.json holds the ledger as it stood at a kill, written with
# indentation (about twice the ledger's bytes): it is read as a stream.
ARRAY_CAP = 2 * LEDGER_CAP
# One line (one record, one event) longer than this is not something a study writes.
LINE_CAP = 64 * MiB
# One element of a JSON array (one record of ledger-at-kill.json).
ELEMENT_CAP = 64 * MiB

CHUNK = MiB
# A .jsonl file's last line without its newline (a writer that died in its write), said so by every reader.
TORN = "torn: no end of line"
_SPACE = re.compile(r"[ \t\r\n]*")


# A key in a line's text: a string's closing quote, then a colon.  Strings holding a quote
# and a colon count too, so the count is never below the keys the text holds.
_KEY_END = re.compile(rb'"[ \t\r\n]*:')


def key_ends(body: bytes) -> int:
    """How many keys the text can hold (at least as many as it holds)."""
    if b'" ' in body or b'"\t' in body or b'"\r' in body:
        return len(_KEY_END.findall(body))
    return body.count(b'":')


def keys_held(value: Any) -> int:
    """How many keys the objects in ``value`` (an object, as parsed) hold, all levels.

    A loop over a stack rather than a recursion: it runs on every line of a ledger judged.
    """
    n = 0
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        v = pop()
        items: Iterable[Any]
        if type(v) is dict:
            n += len(v)
            items = v.values()
        elif type(v) is list:
            items = v
        else:
            continue  # a line that is a scalar holds no key
        for x in items:
            t = type(x)
            if t is dict or t is list:
                push(x)
    return n


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise RepeatedKey
    return obj


class RepeatedKey(ValueError):
    """An object of the text repeats a key (the contract allows none, §6.9)."""


# An integer literal past 64 bits (20 digits and more, 19 below zero; outside a number with a fraction or an
# exponent): there orjson gives a float, and two ids, amounts or exit codes that differ would read as one.
LONG_INT = re.compile(rb"(?<![0-9.eE])(?:-[0-9]{19,}|[0-9]{20,})(?![0-9.eE])")
# Before the pattern, a look in C for a run of digits that long: every digit read as 0, every other byte but '-' as
# a space (the pattern scans a line in 3-6 us; this in well under one, and the pattern runs only where it finds one).
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x2D if b == 0x2D else 0x20 for b in range(256))
_LONG, _LONG_BELOW = b"0" * 20, b"-" + b"0" * 19


def loads(body: bytes) -> Any:
    """JSON text as a value, fast, integers exact whatever their size (§6.9: compared by value): orjson, or the
    exact parse where the text holds an integer literal long enough to pass 64 bits.  Raises ``ValueError``."""
    if long_int(body):
        return loads_exact(body)
    return orjson.loads(body)


def long_int(body: bytes) -> bool:
    """Whether the text holds an integer literal past 64 bits (:data:`LONG_INT`), which orjson reads as a float."""
    digits = body.translate(_DIGITS)
    return (_LONG in digits or _LONG_BELOW in digits) and LONG_INT.search(body) is not None


def loads_exact(body: bytes) -> Any:
    """The line as JSON, the slow way: a repeated key raises, lone surrogates and huge numbers come through.

    ``orjson`` refuses a lone surrogate escape (valid JSON: what JavaScript
    writes for a cut emoji) and a number beyond a double; the ``json``
    module takes both (the number as infinity, for the contract's rule 9 to
    judge), and tells a repeated key.  The bytes must be UTF-8 (§6.9): the
    ``json`` module alone would take UTF-16 and a byte order mark.
    """
    return json.loads(body.decode("utf-8"), object_pairs_hook=_no_repeats)


class Unreadable(Exception):
    """Why an evidence file cannot be used; the text never quotes the file."""

    def __init__(self, name: str, reason: str, missing: bool = False) -> None:
        super().__init__(f"{name}: {reason}")
        self.name = name
        self.reason = reason
        self.missing = missing


def size_text(n: int) -> str:
    if n >= GiB:
        return f"{n / GiB:.1f} GiB"
    if n >= MiB:
        return f"{n / MiB:.1f} MiB"
    return f"{n} bytes"


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a plain file"


def _inside(path: str, root: str) -> bool:
    return path.startswith(root.rstrip(os.sep) + os.sep)


def open_inside(root: Path | str, rel: str, cap: int) -> tuple[int, int]:
    """Open ``root/rel`` for reading, safely; its descriptor and the size to read.

    Raises :class:`Unreadable` (``missing`` set when there is no such file).
    """
    real_root = os.path.realpath(root)
    path = os.path.join(real_root, rel)
    try:
        os.lstat(path)
    except FileNotFoundError:
        raise Unreadable(rel, "missing", missing=True) from None
    except OSError as exc:
        raise Unreadable(rel, f"cannot be read ({os.strerror(exc.errno or 0)})") from None
    real = os.path.realpath(path)
    if not _inside(real, real_root):
        raise Unreadable(rel, "a symbolic link leading out of the evidence folder")
    if real != os.path.normpath(path):
        # A link inside the folder makes one copy of a fact the other (§6.9 compares them): the console writes none.
        raise Unreadable(rel, "a symbolic link (the console writes regular files only)")
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        raise Unreadable(rel, "a symbolic link to nothing", missing=True) from None
    except OSError as exc:
        raise Unreadable(rel, f"cannot be opened ({os.strerror(exc.errno or 0)})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable(rel, f"not a regular file ({_file_kind(st.st_mode)})")
        # A component swapped for a symbolic link between realpath and open
        # would put the descriptor elsewhere: ask the kernel where it points.
        try:
            where = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            where = real
        if not _inside(where, real_root):
            raise Unreadable(rel, "a symbolic link leading out of the evidence folder")
        if st.st_size > cap:
            raise Unreadable(
                rel, f"larger than a study could write ({size_text(st.st_size)}; at most {size_text(cap)})"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def exists(root: Path | str, rel: str) -> bool:
    """Whether there is an entry (of any kind, even a dangling link) at ``root/rel``."""
    return os.path.lexists(os.path.join(os.path.realpath(root), rel))


def _chunks(fd: int, size: int) -> Iterator[bytes]:
    """The file's bytes up to ``size``, a chunk at a time."""
    offset = 0
    while offset < size:
        try:
            chunk = os.pread(fd, min(CHUNK, size - offset), offset)
        except BlockingIOError:
            return
        if not chunk:
            return
        offset += len(chunk)
        yield chunk


def _json_error(exc: ValueError) -> str:
    line = getattr(exc, "lineno", None)
    col = getattr(exc, "colno", None)
    return f"not JSON (line {line}, column {col})" if line is not None else "not JSON"


def type_name(value: Any) -> str:
    """What a JSON value is, in words (never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "not JSON"


def read_json(root: Path | str, rel: str, cap: int = JSON_CAP) -> Any:
    """The JSON value in ``root/rel``; raises :class:`Unreadable`."""
    fd, size = open_inside(root, rel, cap)
    try:
        data = b"".join(_chunks(fd, size))
    finally:
        os.close(fd)
    try:
        value = loads(data)
    except orjson.JSONDecodeError as exc:
        raise Unreadable(rel, _json_error(exc)) from None
    except RepeatedKey:
        raise Unreadable(rel, "an object repeats a key") from None
    except (ValueError, RecursionError):
        raise Unreadable(rel, "not JSON") from None
    if repeats_a_key(data, value):
        raise Unreadable(rel, "an object repeats a key")
    return value


def repeats_a_key(text: bytes, value: Any) -> bool:
    """Whether an object in ``text`` (parsed as ``value``, which keeps one copy of a repeated key) repeats a key:
    no object in any file of the folder may (§6.9).  The exact parse is taken only where the count of keys the
    text can hold differs from the keys parsed."""
    ends = key_ends(text)
    if b"\\u" not in text:
        # Without a \u escape, a quote inside a string is written \" and a colon is a colon, in the text as in
        # orjson's compact text of the value: the two count the same key ends unless a key was dropped (a
        # difference of another kind, a string holding '" :', takes the exact parse below).  orjson's C text is
        # a third of the time of counting the keys in Python, on every line of a ledger judged.
        try:
            if ends == orjson.dumps(value).count(b'":'):
                return False
        except orjson.JSONEncodeError:
            pass
    elif ends == keys_held(value):
        return False
    try:
        loads_exact(text)
    except RepeatedKey:
        return True
    except (ValueError, RecursionError):
        return False  # not JSON to the exact parser (a number or escape orjson took): no key repeated
    return False


def read_object(root: Path | str, rel: str, cap: int = JSON_CAP) -> dict[str, Any]:
    """Like :func:`read_json`, and the value must be a JSON object."""
    value = read_json(root, rel, cap)
    if not isinstance(value, dict):
        raise Unreadable(rel, f"{type_name(value)} where a JSON object belongs")
    return value


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a ``.jsonl`` file: its number, and its value or why it has none."""

    number: int
    value: Any = None
    problem: str | None = None


class JsonlFile:
    """A ``.jsonl`` evidence file opened safely; :meth:`lines` streams it.

    A line that is empty, not JSON, repeats a key, is longer than
    :data:`LINE_CAP`, or is not ended by a newline (torn) comes as a
    :class:`Line` with a ``problem``: the console writes none such.  Reading stops after a line too long.
    """

    def __init__(self, root: Path | str, rel: str, cap: int = JSONL_CAP) -> None:
        self.rel = rel
        self.fd, self.size = open_inside(root, rel, cap)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> JsonlFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lines(self) -> Iterator[Line]:
        pending = b""
        number = 0
        for chunk in _chunks(self.fd, self.size):
            parts = chunk.split(b"\n")
            if pending:
                parts[0] = pending + parts[0]
            pending = parts.pop()
            for body in parts:
                number += 1
                yield _parse_line(number, body) if body and not body.isspace() else Line(number, problem="empty")
            if len(pending) > LINE_CAP:
                yield Line(number + 1, problem=f"longer than {size_text(LINE_CAP)}")
                return
        if pending and not pending.isspace():
            yield Line(number + 1, problem=TORN)


def _parse_line(number: int, body: bytes) -> Line:
    try:
        value = loads(body)
    except RepeatedKey:
        return Line(number, problem="an object repeats a key")
    except (ValueError, RecursionError):
        return Line(number, problem="not JSON")
    if repeats_a_key(body, value):
        return Line(number, problem="an object repeats a key")
    return Line(number, value)


def ledger_chunks(root: Path | str, rel: str, cap: int = LEDGER_CAP) -> Generator[bytes, None, None]:
    """The ledger's bytes, a chunk at a time; raises :class:`Unreadable`.

    The open happens at the first ``next`` (and the close at the end, or at
    ``close()`` of the generator).  A line that runs past
    :data:`LINE_CAP` without a newline stops the stream with
    :class:`Unreadable` (a sparse file of zeros is one such "line"), so a
    parser never holds more than that of one partial line.
    """
    fd, size = open_inside(root, rel, cap)
    try:
        line_no = 1
        run = 0  # bytes since the last newline
        for chunk in _chunks(fd, size):
            last = chunk.rfind(b"\n")
            if last < 0:
                run += len(chunk)
            else:
                line_no += chunk.count(b"\n")
                run = len(chunk) - last - 1
            if run > LINE_CAP:
                raise Unreadable(rel, f"line {line_no} runs past {size_text(LINE_CAP)} without an end of line")
            yield chunk
    finally:
        os.close(fd)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class JsonArray:
    """A JSON array of values read as a stream, one element at a time.

    For ``ledger-at-kill.json``, which may be as long as the ledger: each
    element is decoded by the C scanner from a window of the text, so memory
    holds one element (up to :data:`ELEMENT_CAP`) and a chunk, not the whole.
    :meth:`elements` raises :class:`Unreadable` where the text stops being a
    JSON array.
    """

    def __init__(self, root: Path | str, rel: str, cap: int = ARRAY_CAP) -> None:
        self.rel = rel
        self.fd, self.size = open_inside(root, rel, cap)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def elements(self) -> Iterator[Any]:
        decoder = json.JSONDecoder(parse_constant=_no_constant)
        utf8 = codecs.getincrementaldecoder("utf-8")("strict")
        source = _chunks(self.fd, self.size)
        buf = ""
        pos = 0
        eof = False

        def more() -> None:
            nonlocal buf, pos, eof
            if eof:
                return
            chunk = next(source, None)
            try:
                text = utf8.decode(chunk if chunk is not None else b"", final=chunk is None)
            except UnicodeDecodeError:
                raise Unreadable(self.rel, "not UTF-8") from None
            eof = chunk is None
            if pos > CHUNK:  # keep only what is still to decode
                buf, pos = buf[pos:], 0
            buf += text

        def next_char() -> str:
            """The next character that is not white space ("" at the end); ``pos`` points at it."""
            nonlocal pos
            while True:
                pos = _SPACE.match(buf, pos).end()  # type: ignore[union-attr]
                if pos < len(buf):
                    return buf[pos]
                if eof:
                    return ""
                more()

        def element() -> Any:
            nonlocal pos
            # Decoding an element that is not all read yet fails and is tried
            # again; waiting each time for twice the text keeps that linear.
            need = 0
            while True:
                if eof or len(buf) - pos >= need:
                    try:
                        value, end = decoder.raw_decode(buf, pos)
                    except ValueError:
                        pass
                    else:
                        # An element that ends where the text read so far ends may
                        # go on (a number cut in two): only at the end is it sure.
                        if end < len(buf) or eof:
                            if repeats_a_key(buf[pos:end].encode("utf-8", "surrogatepass"), value):
                                raise Unreadable(self.rel, "an object repeats a key")
                            pos = end
                            return value
                    if eof:
                        raise Unreadable(self.rel, "not JSON")
                    need = 2 * (len(buf) - pos)
                if len(buf) - pos > ELEMENT_CAP:
                    raise Unreadable(self.rel, f"an element longer than {size_text(ELEMENT_CAP)}")
                more()

        try:
            if next_char() != "[":
                raise Unreadable(self.rel, "not a JSON list")
            pos += 1
            if next_char() == "]":
                pos += 1
            else:
                while True:
                    next_char()
                    yield element()
                    sep = next_char()
                    pos += 1
                    if sep == "]":
                        break
                    if sep == "":
                        raise Unreadable(self.rel, "the JSON list is not closed")
                    if sep != ",":
                        raise Unreadable(self.rel, "not a JSON list")
            if next_char() != "":
                raise Unreadable(self.rel, "not JSON: text after the list")
        except RecursionError:
            raise Unreadable(self.rel, "nested too deeply") from None
