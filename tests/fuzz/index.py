"""What a seed holds, for Hypothesis to choose from: its files, their lines, the fields of each line.

A *unit* is a JSON value a mutator can change a field of: one line of a
``.jsonl`` file (``line`` its index) or a whole JSON file (``line`` None).  A
*line file* is one a mutator can drop, repeat or move lines in: a ``.jsonl``
file, or a JSON file whose top level is a list (``ledger-at-kill.json``),
whose items are its lines.  The index is read once per seed; the seeds are
never changed after they are made, so it stays true for the whole session.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from tests.fuzz.jsontext import Path_, layout_of, paths

# Folders a mutator may swap or link: a study's kills and a campaign's trials.
FOLDER_PARENTS = ("kills", "trials")


@dataclass(frozen=True)
class FileInfo:
    """One regular file of a seed."""

    rel: str
    size: int
    kind: str  # "jsonl", "json" or "text"
    values: tuple[Any, ...] = ()  # jsonl: each line parsed (None when it is not JSON); json: the one value

    @property
    def lines(self) -> int:
        """How many lines a line mutator can pick from (0: not a line file)."""
        if self.kind == "jsonl":
            return len(self.values)
        if self.kind == "json" and isinstance(self.values[0], list):
            return len(self.values[0])
        return 0

    def unit(self, line: int | None) -> Any:
        return self.values[0] if line is None else self.values[line]


@dataclass
class SeedIndex:
    """A seed folder, as the strategies see it."""

    name: str
    root: Path
    kind: str  # "study" or "campaign"
    files: dict[str, FileInfo]
    dirs: list[str]
    fingerprint: str
    _paths: dict[tuple[str, int | None], list[Path_]] = field(default_factory=dict, repr=False)

    @cached_property
    def line_files(self) -> list[str]:
        return [rel for rel, f in self.files.items() if f.lines > 0]

    @cached_property
    def units(self) -> list[tuple[str, int | None]]:
        out: list[tuple[str, int | None]] = []
        for rel, f in self.files.items():
            if f.kind == "jsonl":
                out.extend((rel, i) for i, v in enumerate(f.values) if isinstance(v, dict | list))
            elif f.kind == "json":
                out.append((rel, None))
        return out

    @cached_property
    def swappable(self) -> list[str]:
        """The kill or trial folders: ``kills/<n>`` and ``trials/<n>`` (of a trial too)."""
        return [d for d in self.dirs if _numbered(d)]

    def paths(self, rel: str, line: int | None) -> list[Path_]:
        """Every path into one unit (cached)."""
        key = (rel, line)
        if key not in self._paths:
            self._paths[key] = paths(self.files[rel].unit(line))
        return self._paths[key]


def _numbered(rel: str) -> bool:
    parts = rel.split("/")
    return len(parts) >= 2 and parts[-2] in FOLDER_PARENTS and parts[-1].isdigit()


def _read(root: Path, rel: str) -> FileInfo:
    data = (root / rel).read_bytes()
    if rel.endswith(".jsonl"):
        values = []
        for line in data.decode("utf-8", "replace").splitlines():
            try:
                values.append(json.loads(line))
            except ValueError:
                values.append(None)
        return FileInfo(rel, len(data), "jsonl", tuple(values))
    if rel.endswith(".json"):
        text = data.decode("utf-8", "replace")
        if layout_of(text) is not None:
            return FileInfo(rel, len(data), "json", (json.loads(text),))
    return FileInfo(rel, len(data), "text")


def fingerprint(root: Path) -> str:
    """A digest of every file's path and bytes (of a link, its target; of a FIFO, its kind): two folders with
    one fingerprint are alike, and a recipe replays alike on them."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            h.update(str(path.relative_to(root)).encode() + b"\0")
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                # A link out leads beside the folder: named from there, two copies of a mutant compare equal.
                h.update(b"link:" + os.readlink(path).replace(str(root.parent), "<beside>").encode())
            elif stat.S_ISREG(mode):
                h.update(path.read_bytes())
            else:  # a FIFO is never opened: it would block
                h.update(f"mode:{stat.S_IFMT(mode)}".encode())
            h.update(b"\0")
    return h.hexdigest()[:16]


@cache
def index(name: str, root: Path, kind: str) -> SeedIndex:
    files: dict[str, FileInfo] = {}
    dirs: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        here = Path(dirpath)
        dirs.extend(str((here / d).relative_to(root)) for d in dirnames)
        for name_ in sorted(filenames):
            rel = str((here / name_).relative_to(root))
            files[rel] = _read(root, rel)
    return SeedIndex(name, root, kind, files, dirs, fingerprint(root))
