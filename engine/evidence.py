"""The evidence writer: whole JSON files published atomically, never overwritten.

Every JSON file is written to a temporary name in the same folder, flushed,
then *linked* to its final name.  ``link`` fails when the name exists, so a
file that is already there is never replaced, even by a racing writer; the
temporary name is removed afterwards.  ``.jsonl`` files are appended a whole
line per ``write`` on a descriptor opened with ``O_APPEND``.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any


class EvidenceExists(FileExistsError):
    """A file the writer was asked to publish is already in the folder."""


def _publish(path: Path, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        raise EvidenceExists(f"{path} exists; evidence is never overwritten")
    tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
    except FileExistsError as exc:
        raise EvidenceExists(f"{path} exists; evidence is never overwritten") from exc
    finally:
        os.unlink(tmp)
    return path


def write_json(path: Path, obj: Any) -> Path:
    """Publish ``obj`` as ``path`` atomically; refuse when ``path`` exists."""
    return _publish(path, (json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n").encode())


def write_text(path: Path, text: str) -> Path:
    """Publish a text file the same way as :func:`write_json`."""
    return _publish(path, text.encode())


def append_jsonl(path: Path, obj: Any) -> None:
    """Append one JSON line with a single ``write`` (O_APPEND keeps lines whole)."""
    line = (json.dumps(obj, ensure_ascii=False, default=str) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)
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
                line = line.strip()
                if not line:
                    continue
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    except FileNotFoundError:
        pass
    return out
