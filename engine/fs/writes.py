"""What the study gave its files through the mount: each write, each fsync, each file made, renamed or removed.

A power loss loses what was not made durable (contract §9.2, §9.3).  For
that the mount keeps, per file, the size it had at its last fsync and the
writes since (newest kept, a bounded number), and the names made in a folder
that was not fsynced since.  One :class:`WriteLog` is shared by the file
system's threads; its :meth:`WriteLog.as_json` is what the console reads.
"""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass, field
from typing import Any

LEDGER = "/ledger.jsonl"  # the study's ledger, as the mount over OUT/study names it

# The writes kept per file since its last fsync: a study that never fsyncs still costs bounded memory (the oldest
# are counted, not kept).
WRITES_KEPT = 4096


@dataclass
class FileWrites:
    """One file as the study wrote it through the mount."""

    size: int = 0  # how far its writes reached (a truncate sets it)
    synced: int | None = None  # its size at its last fsync (None: never fsynced through the mount)
    base: int = 0  # its size when the mount first saw it written (0: made through the mount): durable before
    writes: collections.deque[tuple[int, int]] = field(default_factory=lambda: collections.deque(maxlen=WRITES_KEPT))
    writes_since_sync: int = 0  # how many writes since the last fsync (the deque keeps the newest)
    fsyncs: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "synced": self.synced,
            "base": self.base,
            "fsyncs": self.fsyncs,
            "writesSinceSync": self.writes_since_sync,
            "writes": [list(w) for w in self.writes],
        }


class WriteLog:
    """Every file's :class:`FileWrites`, by its path in the mount (``/ledger.jsonl``), and the names not yet durable."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, FileWrites] = {}
        # Names made (created, renamed to) in a folder not fsynced since: lost with the folder's entry on a power loss.
        self._unsynced_names: set[str] = set()

    def _file(self, path: str) -> FileWrites:
        return self._files.setdefault(path, FileWrites())

    def knows(self, path: str) -> bool:
        """Whether the file was made or written through the mount already."""
        with self._lock:
            return path in self._files

    def made(self, path: str) -> None:
        with self._lock:
            self._files[path] = FileWrites()
            self._unsynced_names.add(path)

    def wrote(self, path: str, offset: int, length: int, size_before: int | None = None) -> None:
        """``length`` bytes written at ``offset``; ``size_before``, the file's size before this write, is taken for a
        file this log has not seen yet (what it held then was there before the mount: durable)."""
        with self._lock:
            if path not in self._files and size_before is not None:
                self._files[path] = FileWrites(size=size_before, base=size_before)
            f = self._file(path)
            f.writes.append((offset, length))
            f.writes_since_sync += 1
            f.size = max(f.size, offset + length)

    def truncated(self, path: str, length: int) -> None:
        with self._lock:
            self._file(path).size = length

    def synced(self, path: str, size: int) -> None:
        """An fsync (or fdatasync) of ``path`` returned: its first ``size`` bytes are durable."""
        with self._lock:
            f = self._file(path)
            f.synced, f.fsyncs, f.writes_since_sync = size, f.fsyncs + 1, 0
            f.writes.clear()

    def folder_synced(self, folder: str) -> None:
        """An fsync of a folder returned: the names made in it are durable."""
        prefix = folder.rstrip("/") + "/"
        with self._lock:
            self._unsynced_names = {n for n in self._unsynced_names if n.rsplit("/", 1)[0] + "/" != prefix}

    def renamed(self, old: str, new: str) -> None:
        with self._lock:
            f = self._files.pop(old, None)
            if f is not None:
                self._files[new] = f
            self._unsynced_names.discard(old)
            self._unsynced_names.add(new)

    def removed(self, path: str) -> None:
        with self._lock:
            self._files.pop(path, None)
            self._unsynced_names.discard(path)

    def as_json(self) -> dict[str, Any]:
        with self._lock:
            return {
                "files": {path: f.as_json() for path, f in sorted(self._files.items())},
                "unsyncedNames": sorted(self._unsynced_names),
            }
