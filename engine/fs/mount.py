"""The mount over a study's folder: started, asked what the study wrote, ended; and never left behind.

:class:`StudyMount` starts ``studymon fs serve`` in a session of its own and
waits until the folder is a mount; :meth:`StudyMount.close` unmounts it and
waits for the server to end.  :func:`mounted` reads the kernel's mount table,
so a test (or a cleanup) can tell whether a mount is left.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from studymon.engine.fs import control
from studymon.engine.fs.server import lazy_unmount

START_LIMIT = 15.0  # seconds for the server to be up (its interpreter, libfuse, the kernel)
END_LIMIT = 15.0


def _unescape(field: str) -> str:
    """A path as /proc/self/mountinfo writes it (space, tab, newline and backslash as octal escapes)."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def mounted(folder: Path) -> bool:
    """Whether a FUSE file system is mounted at ``folder`` now (dead ones included)."""
    target = str(Path(folder).absolute())
    with open("/proc/self/mountinfo", encoding="utf-8") as table:
        for line in table:
            left, _, right = line.partition(" - ")
            fields = left.split()
            if len(fields) > 4 and _unescape(fields[4]) == target and right.startswith("fuse"):
                return True
    return False


class MountFailed(RuntimeError):
    """The server did not bring the mount up; the message says what it printed."""


class StudyMount:
    """The pass-through mount over one study's folder, served by its own process."""

    def __init__(self, folder: Path, process: subprocess.Popen[bytes], home: Path) -> None:
        self.folder = folder
        self.process = process
        self.home = home  # the control socket's folder and the server's log, outside the study's folder
        self.control = home / "control"

    @classmethod
    def start(cls, folder: Path, timeout: float = START_LIMIT) -> StudyMount:
        """Mount over ``folder`` (which exists); raise :class:`MountFailed` when it does not come up in time."""
        folder = Path(folder).resolve()
        home = Path(tempfile.mkdtemp(prefix="studymon-fs-"))
        log = open(home / "server.log", "wb")  # noqa: SIM115 - the server's, closed here once it has it
        with log:
            process = subprocess.Popen(
                [sys.executable, "-m", "studymon", "fs", "serve", str(folder), "--control", str(home / "control")],
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
        said = (home / "server.log").read_text(errors="replace").strip()
        raise MountFailed(f"the mount over {folder} did not come up" + (f": {said}" if said else ""))

    def writes(self) -> dict[str, Any]:
        """What the study wrote and made durable through the mount so far (:meth:`~.writes.WriteLog.as_json`)."""
        return control.ask(self.control, "writes")

    def ask(self, op: str, timeout: float = 10.0, **fields: Any) -> dict[str, Any]:
        """One request to the server (``hold``, ``held``, ``release``, ``disarm``: see :mod:`.server`)."""
        return control.ask(self.control, op, timeout=timeout, **fields)

    def close(self, timeout: float = END_LIMIT) -> None:
        """Unmount and let the server end; a server that does not is killed, and the mount detached regardless."""
        try:
            control.ask(self.control, "unmount", timeout=2.0)
        except (OSError, ValueError):
            lazy_unmount(self.folder)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if mounted(self.folder):
            lazy_unmount(self.folder)
        shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self) -> StudyMount:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
