"""The process runtime's state folder, opened so that nobody else can steer it.

The folder holds what a run of the process runtime writes, possibly as root:
container states, logs and the event journal.  If another user could write
into it, a symbolic link planted there (``events.jsonl -> /etc/passwd``)
would make such a run append to a file of the planter's choosing.  So:

* the root is created ``0700``; a root that belongs to another user, or that
  its group or others can write, is refused with :class:`UnsafeStateFolder`,
  which says which folder and how to fix it;
* everything under the root is reached from a descriptor of the root, one
  component at a time, with ``O_NOFOLLOW``: no folder on the way and no
  final file may be a symbolic link (such a link is refused, never followed).

The root's own path may go through links (a home folder often does): it is
the owner and mode of the folder finally opened that are checked, on the
descriptor, so a swap between check and use changes nothing.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from studymon.engine.contract.spec import BadInput
from studymon.engine.runtimes.base import RuntimeUnavailable

# Folders under the root, and the files in them, are the runtime's user's only.
DIR_MODE = 0o700
FILE_MODE = 0o600
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO planted where a file is expected must not hang the open;
# it changes nothing for the regular files the runtime uses.
_FILE_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class UnsafeStateFolder(RuntimeUnavailable, BadInput):
    """The state folder (or something in it) cannot be used safely; the message says how to fix it.

    A :class:`BadInput` too, so the command line refuses it in one line (exit 2).
    """


class StateDir:
    """The root of a process runtime's state, and safe ways into it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    # --- the root --------------------------------------------------------------
    def prepare(self) -> None:
        """Create the root (``0700``) if it is missing, then check it."""
        if not self.root.exists():
            self.root.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                # mkdir's mode is cut by the umask, which only ever removes bits.
                os.mkdir(self.root, DIR_MODE)
        os.close(self.open_root())

    def open_root(self) -> int:
        """A descriptor of the root, once it is shown to be the user's alone."""
        try:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise UnsafeStateFolder(
                f"cannot open the process runtime's state folder {self.root}: {exc.strerror or exc}"
            ) from exc
        try:
            self._check_root(os.fstat(fd))
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _check_root(self, st: os.stat_result) -> None:
        uid = os.geteuid()
        if st.st_uid != uid:
            raise UnsafeStateFolder(
                f"the process runtime's state folder {self.root} belongs to uid {st.st_uid}, not to you "
                f"(uid {uid}): point STUDYMON_PROCESS_RUNTIME at a folder of your own, "
                f"or remove {self.root} so it is made again"
            )
        if st.st_mode & 0o022:
            raise UnsafeStateFolder(
                f"the process runtime's state folder {self.root} can be written by "
                f"{'its group' if st.st_mode & 0o020 else 'others'} (mode {stat.S_IMODE(st.st_mode):03o}): "
                f"make it yours alone with: chmod 700 {self.root}"
            )

    # --- under the root -----------------------------------------------------------
    @contextlib.contextmanager
    def folder(self, *parts: str, create: bool = False) -> Iterator[int]:
        """A descriptor of ``root/parts...``, every step taken without following links.

        ``create`` makes missing folders (``0700``); otherwise a missing one
        raises :class:`FileNotFoundError`.
        """
        fd = self.open_root()
        try:
            for i, part in enumerate(parts):
                child = self.open_dir(fd, part, self.root.joinpath(*parts[: i + 1]), create=create)
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)

    def open_dir(self, parent_fd: int, name: str, shown: Path, create: bool = False) -> int:
        """Open the folder ``name`` in ``parent_fd``; ``shown`` names it in errors."""
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, DIR_MODE, dir_fd=parent_fd)
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except OSError as exc:
            self._refuse_link(exc, parent_fd, name, shown)
            raise

    def open_file(self, dir_fd: int, name: str, flags: int, shown: Path, mode: int = FILE_MODE) -> int:
        """Open the regular file ``name`` in ``dir_fd`` without following a link."""
        try:
            fd = os.open(name, flags | _FILE_FLAGS, mode, dir_fd=dir_fd)
        except OSError as exc:
            self._refuse_link(exc, dir_fd, name, shown)
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise UnsafeStateFolder(
                    f"{shown} in the process runtime's state folder is not a regular file: remove it"
                )
            # Back to blocking: O_NONBLOCK was only for the open.
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _refuse_link(self, exc: OSError, dir_fd: int, name: str, shown: Path) -> None:
        """Turn the error of an open that met a symbolic link into a clear refusal."""
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            return
        try:
            is_link = stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
        except OSError:
            return
        if is_link:
            raise UnsafeStateFolder(
                f"{shown} is a symbolic link; the process runtime never follows links in its state "
                f"folder {self.root}: remove it (rm {shown})"
            ) from exc

    # --- whole files ----------------------------------------------------------------
    def read_bytes(self, dir_fd: int, name: str, shown: Path) -> bytes:
        """The content of the file ``name`` in ``dir_fd``."""
        fd = self.open_file(dir_fd, name, os.O_RDONLY, shown)
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def read_json(self, dir_fd: int, name: str, shown: Path) -> Any | None:
        """The JSON in ``name``, or None when it is missing or not (yet) JSON."""
        try:
            return json.loads(self.read_bytes(dir_fd, name, shown))
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            # Not ValueError: a refusal (UnsafeStateFolder) is one, and must be raised.
            return None

    def write_json(self, dir_fd: int, name: str, obj: Any, indent: int | None = 1) -> None:
        """Replace ``name`` in ``dir_fd`` whole: readers see the old or the new, never half.

        The temporary file is made with ``O_EXCL`` (which never follows a
        link) and renamed over ``name`` (a link there is replaced, not
        followed).  Working through a folder descriptor also means that a shim
        whose container was removed (folder renamed away) can never write into
        a new container that reuses the name.
        """
        data = (json.dumps(obj, indent=indent) + "\n").encode()
        tmp = f".{name}.{os.getpid()}.{secrets.token_hex(3)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE, dir_fd=dir_fd)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
