"""The evidence writer: whole files published atomically, whole lines appended, nothing overwritten.

The evidence folder is the record a verdict is built from, so a write either
lands whole or leaves the folder exactly as it was, and says which file failed.

* JSON and text files are written to a temporary name in the same folder,
  flushed, then *linked* to their final name.  ``link`` fails when the name
  exists, so a file that is already there is never replaced, even by a racing
  writer.  The temporary name is always removed, also when the disk is full,
  and the folder is synced so the new name survives a crash.
* ``.jsonl`` lines are appended on an ``O_APPEND`` descriptor, one ``write``
  per line.  A line that cannot be written whole (disk full, quota, file size
  limit) is cut off again, so no torn line is left for the next one to be
  glued onto.

Any failure is raised as :class:`EvidenceWriteError`, an :class:`OSError` that
keeps the cause's ``errno`` and names the final file.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


class EvidenceExists(FileExistsError):
    """A file the writer was asked to publish is already in the folder."""


class EvidenceWriteError(OSError):
    """Evidence could not be written whole; ``errno`` is the cause's, ``filename`` the final file."""

    def __str__(self) -> str:
        # The message already names the file and the cause; OSError's default
        # would add "[Errno N]" in front and the file name again behind.
        return self.strerror or super().__str__()


def _write_error(verb: str, path: Path | str, exc: BaseException, note: str = "") -> EvidenceWriteError:
    cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
    err = EvidenceWriteError(getattr(exc, "errno", None), f"cannot {verb} {path}: {cause}{note}")
    err.filename = str(path)
    return err


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data``: a short ``write`` is continued, not trusted to be whole."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:  # never for a regular file; without this the loop would spin
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        view = view[n:]


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


def _sync_folder(folder: Path) -> None:
    """Persist the folder's entries (the new name, the removed temporary); best effort."""
    try:
        dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass  # some file systems cannot sync a folder; the data itself is synced already
    finally:
        os.close(dfd)


def _publish(path: Path, data: bytes) -> Path:
    return _publish_chunks(path, (data,))


def _publish_chunks(path: Path, chunks: Iterable[bytes]) -> Path:
    """Publish the concatenated ``chunks`` as ``path``, whole or not at all (a chunk that raises leaves nothing)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error("write", path, exc) from exc
    if path.exists():
        raise EvidenceExists(f"{path} exists; evidence is never overwritten")
    tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as exc:
        raise _write_error("write", path, exc) from exc
    try:
        try:
            for data in chunks:
                _write_all(fd, data)
            os.fsync(fd)  # the bytes are on disk before the name points at them
        finally:
            os.close(fd)  # may report a deferred error (quota, NFS): counts as a failure
        os.link(tmp, path)
    except FileExistsError as exc:  # only link raises it: a racing writer published first
        _remove(tmp)
        raise EvidenceExists(f"{path} exists; evidence is never overwritten") from exc
    except OSError as exc:
        _remove(tmp)
        raise _write_error("write", path, exc) from exc
    except BaseException:
        _remove(tmp)
        raise
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise _write_error("finish", path, exc, f" (it is published; its temporary {tmp.name} remains)") from exc
    _sync_folder(path.parent)
    return path


def _utf8(text: str) -> bytes:
    """JSON text as UTF-8.  A lone surrogate (valid JSON, what JavaScript writes for a cut emoji, so a
    study's ledger may hold one) has no UTF-8: it is written as its JSON escape (``\\ud83d``), which reads
    back as the same string."""
    return text.encode("utf-8", "backslashreplace")


def write_json(path: Path, obj: Any) -> Path:
    """Publish ``obj`` as ``path`` atomically; refuse when ``path`` exists."""
    return _publish(path, _utf8(json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n"))


def write_json_list(path: Path, items: Iterable[Any], batch: int = 1024) -> Path:
    """Publish the JSON array of ``items`` as ``path``, as :func:`write_json` would, ``batch`` items at a time.

    The same bytes as ``write_json(path, list(items))``, without the list or
    the whole text in memory: a ledger of a million records is written in
    pieces, and each piece's items are freed once written.
    """
    encoder = json.JSONEncoder(ensure_ascii=False, indent=2, default=str)

    def pieces() -> Iterator[bytes]:
        it = iter(items)
        first = True
        while chunk := list(itertools.islice(it, batch)):
            # A list's text is "[\n" + its items, each indented one level + "\n]": the same
            # items in a longer list are the same lines, joined by ",\n".
            body = encoder.encode(chunk)[2:-2]
            yield _utf8(("[\n" if first else ",\n") + body)
            first = False
        yield b"[]\n" if first else b"\n]\n"

    return _publish_chunks(path, pieces())


def write_text(path: Path, text: str) -> Path:
    """Publish a text file the same way as :func:`write_json`."""
    return _publish(path, _utf8(text))


def _offset(fd: int) -> int | None:
    try:
        return os.lseek(fd, 0, os.SEEK_CUR)
    except OSError:
        return None  # a pipe or socket: nothing to cut back


def _finish_line(fd: int, path: Path | str, data: bytes, done: int) -> None:
    """Complete a line whose first ``write`` was short, or cut it off again.

    After a ``write`` the descriptor's offset is the end of what it wrote (with
    ``O_APPEND`` too), so the line's first byte is known exactly even when
    another writer appended before it; each later piece must start where the
    previous one ended for the line to be contiguous.
    """
    end = _offset(fd)
    start = None if end is None else end - done
    contiguous = end is not None
    view = memoryview(data)
    try:
        while done < len(data):
            n = os.write(fd, view[done:])
            if n <= 0:  # never for a regular file; without this the loop would spin
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            done += n
            at = _offset(fd)
            contiguous = contiguous and at is not None and end is not None and at - n == end
            end = at
    except BaseException as exc:
        note = _cut_back(fd, start, end, contiguous, done)
        if isinstance(exc, OSError):
            raise _write_error("append to", path, exc, note) from exc
        raise


def _cut_back(fd: int, start: int | None, end: int | None, contiguous: bool, done: int) -> str:
    """Truncate a torn line away when it is the file's tail; say what was left otherwise."""
    try:
        size = os.fstat(fd).st_size
        if start is not None and contiguous and size == end:
            os.ftruncate(fd, start)
            return ""
    except OSError as exc:
        return f"; a partial line of {done} bytes remains (cutting it off failed: {exc.strerror or exc})"
    # Another writer's line follows it (or the pieces interleaved): cutting
    # would destroy that line, so the partial one stays for readers to skip.
    return f"; a partial line of {done} bytes remains (another writer appended after it)"


def append_line_fd(fd: int, path: Path | str, data: bytes) -> None:
    """Append ``data`` (one whole line) on the open descriptor ``fd``: all of it or none of it.

    ``path`` only names the file in an error.  The descriptor should be opened
    with ``O_APPEND``.  Raises :class:`EvidenceWriteError` when the line cannot
    be written whole; the file is then as it was before the call.
    """
    # The common case costs one write(2).  A write(2) that fails on a regular
    # file has written nothing, so only a short write leaves bytes to finish
    # or to cut off again; no size is read before it.
    try:
        n = os.write(fd, data)
    except OSError as exc:
        raise _write_error("append to", path, exc) from exc
    if n != len(data):
        _finish_line(fd, path, data, n)


def jsonl_line(obj: Any) -> bytes:
    """``obj`` as one line of a ``.jsonl`` file (to write one line to many files, encoded once)."""
    return _utf8(json.dumps(obj, ensure_ascii=False, default=str) + "\n")


def append_jsonl(path: Path, obj: Any) -> None:
    """Append one JSON line to ``path`` whole, or raise :class:`EvidenceWriteError` and leave it as it was."""
    append_line(path, jsonl_line(obj))


def append_line(path: Path, line: bytes) -> None:
    """Append ``line`` (one whole line, see :func:`jsonl_line`) to ``path``, as :func:`append_jsonl` does."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError as exc:
        raise _write_error("append to", path, exc) from exc
    try:
        append_line_fd(fd, path, line)
    finally:
        os.close(fd)


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def read_jsonl(path: Path) -> list[Any]:
    """Every well-formed line of a ``.jsonl`` file; a torn last line is skipped."""
    out: list[Any] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.endswith("\n"):
                    break
                text = line.strip()
                if not text:
                    continue
                try:
                    out.append(json.loads(text))
                except json.JSONDecodeError:
                    continue
    except FileNotFoundError:
        pass
    return out
