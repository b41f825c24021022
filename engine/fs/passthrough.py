"""The file system's operations: every call passed through to the study's folder held open beneath the mount.

Each operation works relative to the folder's descriptor, opened before the
mount was put over it (``dir_fd``), so what the study writes lands in its
folder as if no mount were there.  ``direct_io`` makes each ``write(2)`` one
call here at the caller's offset (no page cache in between, no writes split
at page boundaries), which is what makes :class:`~.writes.WriteLog` exact;
``O_APPEND`` is taken off the backing descriptor because the kernel has
already turned an append into a write at the file's end.
"""

from __future__ import annotations

import errno
import functools
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from studymon.engine.fs.fuse import FuseOSError, Operations, caller_pid
from studymon.engine.fs.points import LedgerHold, killed
from studymon.engine.fs.writes import LEDGER, WriteLog

HOLD_LIMIT = 60.0  # seconds a held write waits for the console's word before it lands whole

F = TypeVar("F", bound=Callable[..., Any])


def _errno(fn: F) -> F:
    """An OSError of the folder beneath is the caller's error, with its errno (and no traceback in a log)."""

    @functools.wraps(fn)  # the binding reads create()'s arity: the signature must stay
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except OSError as exc:
            raise FuseOSError(exc.errno or errno.EIO) from None

    return call  # type: ignore[return-value]


def _rel(path: str) -> str:
    """A path of the mount, relative to the folder beneath (``/`` is the folder itself)."""
    return path.lstrip("/") or "."


class PassThrough(Operations):  # type: ignore[misc]
    """The operations a study's controller uses on its folder, passed through and recorded in ``log``."""

    use_ns = True  # times in integer nanoseconds, both ways

    def __init__(self, root: int, log: WriteLog) -> None:
        self.root = root
        self.log = log
        self.hold: LedgerHold | None = None  # an after: point armed in the ledger's writes, until its write is let go
        self.ledger_lock = threading.Lock()

    # --- what is there --------------------------------------------------------
    @_errno
    def getattr(self, path: str, fh: int | None = None) -> dict[str, int]:
        st = os.fstat(fh) if fh is not None else os.stat(_rel(path), dir_fd=self.root, follow_symlinks=False)
        keys = ("st_mode", "st_ino", "st_nlink", "st_uid", "st_gid", "st_size", "st_blocks", "st_blksize", "st_rdev")
        attrs = {k: getattr(st, k) for k in keys}
        attrs.update(st_atime=st.st_atime_ns, st_mtime=st.st_mtime_ns, st_ctime=st.st_ctime_ns)
        return attrs

    @_errno
    def readdir(self, path: str, fh: int) -> list[str]:
        fd = os.open(_rel(path), os.O_RDONLY | os.O_DIRECTORY, dir_fd=self.root)
        try:
            return [".", "..", *os.listdir(fd)]
        finally:
            os.close(fd)

    @_errno
    def readlink(self, path: str) -> str:
        return os.readlink(_rel(path), dir_fd=self.root)

    @_errno
    def statfs(self, path: str) -> dict[str, int]:
        s = os.fstatvfs(self.root)
        keys = ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_favail", "f_flag")
        return {k: getattr(s, k) for k in (*keys, "f_namemax")}

    # --- names ----------------------------------------------------------------------
    @_errno
    def mkdir(self, path: str, mode: int) -> None:
        os.mkdir(_rel(path), mode, dir_fd=self.root)
        self.log.made(path)

    @_errno
    def rmdir(self, path: str) -> None:
        os.rmdir(_rel(path), dir_fd=self.root)
        self.log.removed(path)

    @_errno
    def unlink(self, path: str) -> None:
        os.unlink(_rel(path), dir_fd=self.root)
        self.log.removed(path)

    @_errno
    def rename(self, old: str, new: str) -> None:
        os.rename(_rel(old), _rel(new), src_dir_fd=self.root, dst_dir_fd=self.root)
        self.log.renamed(old, new)

    @_errno
    def symlink(self, target: str, source: str) -> None:  # the link at ``target``, pointing to ``source``
        os.symlink(source, _rel(target), dir_fd=self.root)
        self.log.made(target)

    @_errno
    def chmod(self, path: str, mode: int) -> None:
        os.chmod(_rel(path), mode, dir_fd=self.root)

    @_errno
    def chown(self, path: str, uid: int, gid: int) -> None:
        os.chown(_rel(path), uid, gid, dir_fd=self.root, follow_symlinks=False)

    @_errno
    def utimens(self, path: str, times: tuple[int, int] | None = None) -> None:
        if times is None:  # now
            os.utime(_rel(path), dir_fd=self.root, follow_symlinks=False)
        else:
            os.utime(_rel(path), ns=times, dir_fd=self.root, follow_symlinks=False)

    # --- contents ---------------------------------------------------------------------
    @_errno
    def create(self, path: str, mode: int, flags: int) -> int:
        fh = os.open(_rel(path), (flags | os.O_CREAT) & ~os.O_APPEND, mode, dir_fd=self.root)
        self.log.made(path)
        return fh

    @_errno
    def open(self, path: str, flags: int) -> int:
        return os.open(_rel(path), flags & ~os.O_APPEND, dir_fd=self.root)

    @_errno
    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    @_errno
    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        if path != LEDGER:
            return self._land(path, data, offset, fh)
        # Every write of the ledger is counted under the lock arming takes, so a point armed while the study writes
        # counts each record once: from the ledger read at arming, or here.
        with self.ledger_lock:
            hold = self.hold
            cut = hold.cut(data) if hold is not None and hold.hit is None else None
            if hold is None or cut is None:
                return self._land(path, data, offset, fh)
            # The point's record: landed, and the reply held until the console has frozen the study.
            end, record = cut
            written = self._land(path, data[:end], offset, fh)
            writer = caller_pid()
            hold.held(record, writer)
        hold.wait_release(HOLD_LIMIT, lambda: killed(writer))
        self.hold = None
        if hold.land_rest and end < len(data):
            written += self._land(path, data[end:], offset + end, fh)
        return written

    def _land(self, path: str, data: bytes, offset: int, fh: int) -> int:
        before = os.fstat(fh).st_size if not self.log.knows(path) else None
        written = os.pwrite(fh, data, offset)
        self.log.wrote(path, offset, written, before)
        return written

    def arm(self, hold: LedgerHold) -> dict[str, Any] | None:
        """Arm ``hold`` on the ledger's writes from now, having counted what the ledger holds already; the point's
        record if it is there already (then nothing is armed: the moment has passed)."""
        with self.ledger_lock:
            try:
                fd = os.open(LEDGER.lstrip("/"), os.O_RDONLY, dir_fd=self.root)
            except FileNotFoundError:
                pass
            else:
                with os.fdopen(fd, "rb") as ledger:
                    hold.catch_up(ledger)
            if hold.passed is None:
                self.hold = hold
            return hold.passed

    @_errno
    def truncate(self, path: str, length: int, fh: int | None = None) -> None:
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            fd = os.open(_rel(path), os.O_WRONLY, dir_fd=self.root)
            try:
                os.ftruncate(fd, length)
            finally:
                os.close(fd)
        self.log.truncated(path, length)

    @_errno
    def fsync(self, path: str, datasync: int, fh: int) -> None:
        (os.fdatasync if datasync else os.fsync)(fh)
        self.log.synced(path, os.fstat(fh).st_size)

    @_errno
    def fsyncdir(self, path: str, datasync: int, fh: int) -> None:
        fd = os.open(_rel(path), os.O_RDONLY | os.O_DIRECTORY, dir_fd=self.root)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self.log.folder_synced(path)

    def flush(self, path: str, fh: int) -> int:
        return 0

    @_errno
    def release(self, path: str, fh: int) -> None:
        os.close(fh)
