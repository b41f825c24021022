"""The mount over a study's folder: started, asked what the study wrote, ended; and never left behind.

:class:`StudyMount` starts ``studymon fs serve`` in a session of its own and
waits until the folder is a mount; :meth:`StudyMount.close` unmounts it and
waits for the server to end.  :func:`mounted` reads the kernel's mount table,
so a test (or a cleanup) can tell whether a mount is left.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from studymon.engine.fs import control

START_LIMIT = 15.0  # seconds for the server to be up (its interpreter, libfuse, the kernel)
END_LIMIT = 15.0


class MountFailed(RuntimeError):
    """The server did not bring the mount up; the message says what it printed."""


def _unescape(field: str) -> str:
    """A path as /proc/self/mountinfo writes it (space, tab, newline and backslash as octal escapes)."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def _mounted_in(table: str, target: str) -> bool:
    try:
        with open(table, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                left, _, right = line.partition(" - ")
                fields = left.split()
                if len(fields) > 4 and _unescape(fields[4]) == target and right.startswith("fuse"):
                    return True
    except OSError:  # a process that ended while it was read
        return False
    return False


def mounted(folder: Path) -> bool:
    """Whether a FUSE file system is mounted at ``folder`` now (dead ones included), as this process sees mounts."""
    return _mounted_in("/proc/self/mountinfo", str(Path(folder).absolute()))


def mounted_anywhere(folder: Path) -> list[int]:
    """The processes that see a FUSE file system mounted at ``folder``, whatever their mount namespace: a study's
    mount lives in one of its own, so a mount left behind is found only this way."""
    target = str(Path(folder).absolute())
    seen: set[str] = set()
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            space = os.readlink(f"/proc/{entry.name}/ns/mnt")
        except OSError:
            continue
        if space in seen:
            continue
        seen.add(space)
        if _mounted_in(f"/proc/{entry.name}/mountinfo", target):
            found.append(int(entry.name))
    return found


def lazy_unmount(folder: Path) -> None:
    """Detach the mount from FOLDER now, busy or not (what is open beneath keeps working until closed)."""
    subprocess.run(["fusermount3", "-u", "-z", str(folder)], check=False, capture_output=True)  # noqa: S607 - on PATH, as libfuse finds it


HOMES = "studymon-fs"  # one folder per user under HOMES_ROOT, 0700, and in it one per study folder served
HOMES_ROOT = "/tmp"  # noqa: S108 - a fixed place every console finds; each folder checked ours alone, 0700


def home_of(folder: Path) -> Path:
    """Where the server of ``folder``'s mount keeps its control socket and its log: found again from the folder alone,
    whatever ``TMPDIR`` a console has (one that attaches from another shell takes the mount over this way), and short
    enough for a socket's path (108 bytes)."""
    digest = hashlib.sha256(str(Path(folder).resolve()).encode()).hexdigest()[:24]
    return Path(HOMES_ROOT) / f"{HOMES}-{os.geteuid()}" / digest


def _private_folder(path: Path) -> None:
    """Make ``path`` (and its parent) ours alone, or refuse: a socket another user could plant is not asked."""
    for part in (path.parent, path):
        with contextlib.suppress(FileExistsError):
            part.mkdir(mode=0o700)
        st = part.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise MountFailed(f"{part} is not a folder of this user's alone: remove it, then try again")


class StudyMount:
    """The pass-through mount over one study's folder, served by its own process."""

    def __init__(self, folder: Path, process: subprocess.Popen[bytes], home: Path) -> None:
        self.folder = folder
        self.process = process
        self.home = home  # the control socket's folder and the server's log, outside the study's folder
        self.control = home / "control"

    @classmethod
    def start(
        cls, folder: Path, timeout: float = START_LIMIT, hold: tuple[str, int] | None = None, owner: int | None = None
    ) -> StudyMount:
        """Mount over ``folder`` (which exists), with ``hold`` (an ``after:`` point and the seq it counts from) armed
        before anything is written, served until told to unmount or, with ``owner`` (the keeper), until the owner and
        the controller it names (``serving``) are gone; raise :class:`MountFailed` when it does not come up in time."""
        folder = Path(folder).resolve()
        home = home_of(folder)
        _private_folder(home)
        with contextlib.suppress(OSError):
            if control.ask(home / "control", "ping", timeout=1.0).get("up"):
                raise MountFailed(f"{folder} is served already (by the server of {home})")
        with contextlib.suppress(FileNotFoundError):
            (home / "control").unlink()  # a server's that was killed
        armed = ["--hold", hold[0], "--from-seq", str(hold[1])] if hold is not None else []
        armed += ["--owner", str(owner)] if owner is not None else []
        log = open(home / "server.log", "ab")  # noqa: SIM115 - the server's, closed here once it has it
        with log:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "studymon",
                    "fs",
                    "serve",
                    str(folder),
                    "--control",
                    str(home / "control"),
                    *armed,
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # outlives a console that goes away, and its Ctrl-C
            )
        mount = cls(folder, process, home)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            try:
                if control.ask(mount.control, "ping", timeout=1.0).get("up") and mounted(folder):
                    return mount
            except OSError:
                pass
            time.sleep(0.02)
        mount.close()
        said = (home / "server.log").read_text(errors="replace").strip().splitlines()[-3:]
        raise MountFailed(f"the mount over {folder} did not come up" + (f": {' '.join(said)}" if said else ""))

    def writes(self) -> dict[str, Any]:
        """What the study wrote and made durable through the mount so far (:meth:`~.writes.WriteLog.as_json`)."""
        return control.ask(self.control, "writes")

    def ask(self, op: str, timeout: float = 10.0, **fields: Any) -> dict[str, Any]:
        """One request to the server (``hold``, ``held``, ``release``, ``disarm``: see :mod:`.server`)."""
        return control.ask(self.control, op, timeout=timeout, **fields)

    def close(self, timeout: float = END_LIMIT, wait: bool = True) -> None:
        """Unmount and let the server end; a server that does not is killed, and the mount detached regardless.
        With ``wait`` false (the keeper, whose end the console waits for) the server is told and left to end by
        itself: it also ends once its owner and the controller are gone."""
        try:
            control.ask(self.control, "unmount", timeout=2.0)
        except (OSError, ValueError):
            lazy_unmount(self.folder)
        if not wait:
            return
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if mounted(self.folder):
            lazy_unmount(self.folder)

    def __enter__(self) -> StudyMount:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class MountLink:
    """The console's word with the file system of a study's folder, whichever server serves it now (found by the
    folder, so a console that attaches, or a controller started again, is reached the same way)."""

    def __init__(self, folder: Path) -> None:
        self.control = home_of(folder) / "control"

    def ask(self, op: str, timeout: float = 2.0, **fields: Any) -> dict[str, Any] | None:
        """The server's reply; None when no server answers (the study's file system is gone, or was never there)."""
        try:
            return control.ask(self.control, op, timeout=timeout, **fields)
        except (OSError, ValueError):
            return None
