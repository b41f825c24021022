"""A power loss, made on the study's files: each cut back to what was durable, in one of the crash states of §9.3.

What the study wrote and fsynced comes from the study's file system
(:meth:`~.writes.WriteLog.as_json`, taken while the controller was frozen);
the files are read and rewritten beneath, once the controller and its runs
are gone.  :func:`plan` says what each file keeps (pure: it reads the files
through a function it is given); :func:`make` cuts them, keeping every byte
it takes away in the kill's ``lost/`` folder first, and returns
``power.json``.  Nothing is deleted: a file whose name was never durable is
moved into ``lost/`` whole.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studymon.engine.fs.points import seqs_from_end
from studymon.engine.fs.writes import LEDGER

SYNCED, TORN, ZEROS = "synced", "torn", "zeros"
_PLUS = re.compile(r"synced\+([1-9][0-9]*)")
LOST = "lost"


@dataclass(frozen=True)
class FileLoss:
    """One file of the study's folder after the loss (``path`` relative to ``OUT/study``, ``/`` separated)."""

    path: str
    size_before: int
    durable: int
    size_after: int
    zero_tail: int = 0

    @property
    def cut(self) -> bool:
        """Whether bytes the study wrote are gone from it (kept in ``lost/``)."""
        return self.size_after - self.zero_tail < self.size_before

    def as_json(self) -> dict[str, Any]:
        return {
            "sizeBefore": self.size_before,
            "durable": self.durable,
            "sizeAfter": self.size_after,
            "zeroTail": self.zero_tail,
            "lost": f"{LOST}/{self.path}" if self.cut else None,
        }


@dataclass(frozen=True)
class Loss:
    """What a power loss in ``state`` leaves: each file written, the names removed, the ledger's last whole seq."""

    state: str
    files: tuple[FileLoss, ...]
    removed: tuple[str, ...]
    ledger_seq_after: int


def records_kept(state: str) -> int:
    """``K`` of ``synced+K`` (0 for every other state)."""
    m = _PLUS.fullmatch(state)
    return int(m.group(1)) if m else 0


def durable_size(file: dict[str, Any]) -> int:
    """A file's durable size: at its last fsync, or as it was before this controller first wrote to it."""
    synced = file.get("synced")
    return int(synced) if isinstance(synced, int) else int(file.get("base") or 0)


def _ledger_after(state: str, durable: int, data: bytes) -> tuple[int, int]:
    """The ledger's size after the loss, and its zero tail, from its bytes at the kill."""
    if state == ZEROS:
        return len(data), len(data) - durable
    rest = data[durable:]
    if state == TORN:
        first = rest.find(b"\n")
        record = len(rest) if first < 0 else first + 1
        return durable + (record // 2 if record > 1 else 0), 0
    keep = records_kept(state)
    end = 0
    for _ in range(keep):
        nl = rest.find(b"\n", end)
        if nl < 0:
            break
        end = nl + 1
    return durable + end, 0


def last_seq(data: bytes) -> int:
    """The seq of the last whole record in ``data`` (a ledger's bytes; zeros and a torn line are not records)."""
    whole = data[: data.rfind(b"\n") + 1]
    return next((seq for _, seq in seqs_from_end(whole) if seq is not None), 0)


def plan(writes: dict[str, Any], state: str, read: Callable[[str], bytes]) -> Loss:
    """What a power loss in ``state`` leaves of the files ``writes`` names (``read`` gives a file's bytes now)."""
    files: list[FileLoss] = []
    removed = tuple(sorted(name.lstrip("/") for name in writes.get("unsyncedNames", [])))
    ledger_seq = 0
    for name, file in sorted(writes.get("files", {}).items()):
        path = name.lstrip("/")
        if path in removed:
            continue
        data = read(path)
        durable = min(durable_size(file), len(data))
        if name == LEDGER:
            size, zeros = _ledger_after(state, durable, data)
            ledger_seq = last_seq(data[: size - zeros])
        elif state == ZEROS:
            size, zeros = len(data), len(data) - durable
        else:
            size, zeros = durable, 0
        files.append(FileLoss(path, len(data), durable, size, zeros))
    if LEDGER.lstrip("/") not in {f.path for f in files} and LEDGER.lstrip("/") not in removed:
        ledger_seq = last_seq(read(LEDGER.lstrip("/")))  # untouched by this controller: all of it was durable
    return Loss(state, tuple(files), removed, ledger_seq)


def make(study: Path, kill_folder: Path, loss: Loss, point: str) -> dict[str, Any]:
    """Cut the study's files as ``loss`` says, each byte taken kept under ``kill_folder/lost/`` first; the removed
    names moved there whole.  Returns ``power.json`` (written by the caller, whole)."""
    lost = kill_folder / LOST
    cut = [f for f in loss.files if f.cut]
    # Every byte to be taken is kept first, so that a failure (a lost/ file there already) cuts nothing.
    for f in cut:
        keep = lost / f.path
        keep.parent.mkdir(parents=True, exist_ok=True)
        with open(study / f.path, "rb") as fh, open(keep, "xb") as out:  # never over another kill's
            fh.seek(f.size_after - f.zero_tail)
            out.write(fh.read())
            out.flush()
            os.fsync(out.fileno())
    for f in cut:
        with open(study / f.path, "r+b") as fh:
            fh.truncate(f.size_after - f.zero_tail)
            if f.zero_tail:
                fh.seek(f.size_after - f.zero_tail)
                fh.write(b"\0" * f.zero_tail)
            fh.flush()
            os.fsync(fh.fileno())
    moved: list[str] = []
    for path in loss.removed:  # sorted: a folder before what it holds, which goes with it
        if any(path.startswith(folder + "/") for folder in moved) or not (study / path).exists():
            continue
        keep = lost / path
        keep.parent.mkdir(parents=True, exist_ok=True)
        if keep.exists():
            raise FileExistsError(f"{keep} exists: a power loss never writes over evidence")
        os.rename(study / path, keep)
        moved.append(path)
    return {
        "point": point,
        "state": loss.state,
        "atEpoch": time.time(),
        "files": {f.path: f.as_json() for f in loss.files},
        "removed": list(loss.removed),
        "ledgerSeqAfter": loss.ledger_seq_after,
    }
