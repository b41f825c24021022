"""Starting, signalling and reaping a study controller.

A controller runs in its own session (so signals meant for the console never
reach it) with standard input closed and its output appended to
``OUT/study.log``.  It is started through a keeper (:mod:`studymon.engine.launch.keeper`) that
outlives the console and writes every start and end to ``OUT/launches.jsonl``,
so a detached or crashed console loses nothing and ``attach`` can find the
controller again.
Before any signal the pid is checked against the process start time recorded
at launch, so a recycled pid is never signalled.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from studymon.engine.contract.folder import EvidenceFolder
from studymon.engine.evidence.records import LaunchEnd
from studymon.engine.evidence.writer import append_jsonl, read_jsonl
from studymon.engine.io.clock import parse_rfc3339
from studymon.engine.io.quoting import free_text

# The keeper runs from the installed package; ``-P`` keeps the OUT it starts
# in (its working folder, which a study writes) off its import path.
_KEEPER = ("-P", "-c", "import sys; from studymon.engine.launch.keeper import main; sys.exit(main(sys.argv[1:]))")


class LaunchError(RuntimeError):
    """The controller could not be started."""


def find_running(out: Path) -> Controller | None:
    """The controller of ``out`` that is still running, from its last ``start`` line."""
    last_start = None
    for line in read_jsonl(EvidenceFolder(out).launches):
        if line.get("event") == "start":
            last_start = line
        elif line.get("event") == "end" and last_start is not None and line.get("pid") == last_start.get("pid"):
            last_start = None
    if last_start is None or not last_start.get("pid") or not last_start.get("startTime"):
        return None
    return Controller.attach(int(last_start["pid"]), float(last_start["startTime"]), out)


def first_start(out: Path) -> float | None:
    """When the study's first controller started (epoch seconds), from the first ``start`` line
    of ``launches.jsonl``; None when there is none or its time cannot be read."""
    for line in read_jsonl(EvidenceFolder(out).launches):
        if isinstance(line, dict) and line.get("event") == "start":
            at = line.get("at")
            try:
                return parse_rfc3339(at) if isinstance(at, str) else None
            except ValueError:
                return None
    return None


GRACE_SECONDS = 10.0  # the contract gives a study 10 s to stop on SIGINT


@dataclass
class ControllerEnd:
    """How a controller ended: exit ``code`` or the ``signal`` that killed it (``outcome.json``'s ``ending``).

    Its line in ``launches.jsonl`` is a :class:`~studymon.engine.evidence.records.LaunchEnd` (with the pid and
    the time), and a front end is told of it by a ``ControllerEnded`` event."""

    code: int | None
    signal: str | None

    def as_json(self) -> dict[str, Any]:
        return {"code": self.code, "signal": self.signal}


def process_start_time(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


class Controller:
    """A running study controller, ours (a child) or found again (attached)."""

    def __init__(self, pid: int, start_time: float, out: Path, proc: asyncio.subprocess.Process | None) -> None:
        # ``proc`` is the keeper when we started the controller; None when attached.
        self.pid = pid
        self.start_time = start_time
        self.out = out
        self._proc = proc
        self.ending: ControllerEnd | None = None
        # A pidfd names this very process: checking it before a signal is one
        # syscall, and it can never point at a recycled pid.
        self._pidfd = -1
        self.not_stopped = ""  # why the last group_stopped() said no: for the record of a kill
        # Whether its keeper gave it the study's file system (points held exactly, §9.1); if not, why not.
        self.exact = False
        self.no_mount: str | None = None
        if hasattr(os, "pidfd_open") and self._start_time_matches():
            try:
                self._pidfd = os.pidfd_open(pid)
            except OSError:
                self._pidfd = -1

    # --- launching ---------------------------------------------------------
    @classmethod
    async def launch(
        cls,
        argv: list[str],
        out: Path,
        env: dict[str, str],
        resume: bool,
        keep_fds: tuple[int, ...] = (),
        hold: tuple[str, int] | None = None,
    ) -> Controller:
        """Start ``argv`` through a keeper (:mod:`studymon.engine.launch.keeper`), which writes ``launches.jsonl``.

        ``keep_fds`` are inherited by the keeper and held open for its life
        (the study's lock); the controller it starts does not get them.
        ``hold`` (an ``after:`` point, the seq it counts from) is armed in the
        study's file system before the controller writes anything.
        """
        log = os.open(EvidenceFolder(out).log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            keeper = await asyncio.create_subprocess_exec(
                sys.executable,
                *_KEEPER,
                str(out),
                "1" if resume else "0",
                *(("--hold", hold[0], str(hold[1])) if hold is not None else ()),
                "--",
                *argv,
                cwd=str(out),
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                start_new_session=True,
                pass_fds=keep_fds,
            )
        finally:
            os.close(log)
        assert keeper.stdout is not None
        line = await keeper.stdout.readline()
        try:
            info = json.loads(line)
        except json.JSONDecodeError:
            info = {"pid": None, "error": None}
        if not info.get("pid"):
            status = await keeper.wait()
            error = info.get("error") or _keeper_failure(EvidenceFolder(out).log, status)
            raise LaunchError(f"cannot start the controller {argv[0]}: {error}")
        controller = cls(info["pid"], info.get("startTime") or time.time(), out, keeper)
        controller.exact = info.get("exact") is True
        no_mount = info.get("noMount")
        controller.no_mount = no_mount if isinstance(no_mount, str) else None
        return controller

    @classmethod
    def attach(cls, pid: int, start_time: float, out: Path) -> Controller | None:
        """The controller ``pid`` if it still runs and is the same process (same start time)."""
        actual = process_start_time(pid)
        if actual is None or abs(actual - start_time) > 0.05:
            return None
        return cls(pid, start_time, out, None)

    # --- state and signals -------------------------------------------------
    def _start_time_matches(self) -> bool:
        actual = process_start_time(self.pid)
        return actual is not None and abs(actual - self.start_time) <= 0.05

    def is_same_process(self) -> bool:
        if self.ending is not None:
            return False
        if self._pidfd >= 0:
            try:
                signal.pidfd_send_signal(self._pidfd, 0)
            except ProcessLookupError:
                return False
            except OSError:
                return self._start_time_matches()
            return True
        return self._start_time_matches()

    def signal_group(self, sig: int) -> bool:
        """Send ``sig`` to the controller's process group; False if it is gone or not ours."""
        if not self.is_same_process():
            return False
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            return False
        except PermissionError:
            # Not a group leader we may signal (attached to a foreign process): signal the pid.
            os.kill(self.pid, sig)
        return True

    def is_stopped(self) -> bool:
        try:
            return psutil.Process(self.pid).status() == psutil.STATUS_STOPPED
        except psutil.Error:
            return False

    def freeze(self) -> bool:
        return self.signal_group(signal.SIGSTOP)

    def group_stopped(self) -> bool:
        """Whether every thread of the controller's group (it and its descendants in it) is stopped (or gone).

        SIGSTOP to a group returns before it takes effect: a task running on
        the other core, or in the middle of a ``write``, stops a moment later.
        Only once this holds can a read of the ledger be the last one.
        Descendants are found through ``/proc/<pid>/task/<tid>/children``,
        which costs a few reads, not a walk of every process.
        """
        pending = [self.pid]
        seen: set[int] = set()
        group = str(self.pid).encode()
        while pending:
            pid = pending.pop()
            if pid in seen:
                continue
            seen.add(pid)
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except (FileNotFoundError, ProcessLookupError):
                continue  # gone: it cannot write any more
            except OSError:
                return False
            for tid in tids:
                # os.open/os.read: a third of open()'s cost, and this runs while the study is frozen.
                stat = _read_proc(f"/proc/{pid}/task/{tid}/stat")
                if stat is None:
                    continue
                # The state and the process group follow the command name, which is in
                # parentheses and may hold spaces.  A descendant that left the group
                # (a run's detached shim) got no SIGSTOP: it is not the study's to stop.
                fields = stat[stat.rfind(b")") + 2 :].split(maxsplit=3)
                in_group = len(fields) > 2 and fields[2] == group
                # A thread waiting in vfork (posix_spawn, subprocess) for a child the
                # SIGSTOP stopped before its exec never shows T; it writes nothing
                # while it waits and stops before it runs any code of its own.
                if (
                    in_group
                    and fields[0] not in (b"T", b"t", b"Z", b"X", b"x")
                    and not (fields[0] == b"D" and _in_vfork(pid, tid))
                ):
                    wchan = (_read_proc(f"/proc/{pid}/task/{tid}/wchan") or b"?").decode(errors="replace")
                    self.not_stopped = f"pid {pid} thread {tid} in state {fields[0].decode()} ({wchan})"
                    return False
                children = _read_proc(f"/proc/{pid}/task/{tid}/children")
                if children:
                    pending.extend(int(c) for c in children.split())
        return True

    def group_gone(self) -> bool:
        """Whether no process of the controller's process group is left (zombies count as left)."""
        try:
            os.killpg(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    async def wait_group_gone(self, timeout: float) -> bool:
        """Wait until :meth:`group_gone`; False if something of the group outlived ``timeout``."""
        deadline = time.monotonic() + timeout
        delay = 0.005
        while not self.group_gone():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.1)
        return True

    def thaw(self) -> bool:
        return self.signal_group(signal.SIGCONT)

    def kill(self) -> bool:
        return self.signal_group(signal.SIGKILL)

    def interrupt(self) -> bool:
        return self.signal_group(signal.SIGINT)

    async def wait(self) -> ControllerEnd:
        """Wait for the end; its code and signal come from the keeper's ``end`` line.

        The pidfd is released at the end, and also when a wait is given up
        (cancelled: the console detaches and lets this controller go on alone).
        """
        if self.ending is not None:
            return self.ending
        try:
            if self._proc is not None:
                await self._proc.wait()
                if self.is_same_process():  # its keeper died before it: watch the controller itself
                    await self._wait_foreign()
            else:
                await self._wait_foreign()
        except asyncio.CancelledError:
            self.release()
            raise
        if self.ending is None:
            self.ending = self._recorded_ending() or self._record_lost_ending()
        self.release()
        return self.ending

    def release(self) -> None:
        """Close the pidfd (at the end, on detach); later checks fall back to the start time.

        Idempotent.  The field is cleared before the close, so a check made
        meanwhile never uses a number the kernel may already have given out again.
        """
        fd, self._pidfd = self._pidfd, -1
        if fd >= 0:
            os.close(fd)

    def _recorded_ending(self) -> ControllerEnd | None:
        found = None
        for line in read_jsonl(EvidenceFolder(self.out).launches):
            if line.get("event") == "end" and line.get("pid") == self.pid:
                found = ControllerEnd(line.get("code"), line.get("signal"))
        return found

    def _record_lost_ending(self) -> ControllerEnd:
        # The keeper died with the controller (killed by hand): the status is lost; say so.
        append_jsonl(
            EvidenceFolder(self.out).launches,
            {**LaunchEnd(self.pid, time.time(), None, None).to_json(), "note": "exit status lost: its keeper is gone"},
        )
        return ControllerEnd(None, None)

    async def _wait_foreign(self) -> None:
        # Not our child: watch the pid, then give its keeper a moment to write the end line.
        while self.is_same_process():
            try:
                if psutil.Process(self.pid).status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            await asyncio.sleep(0.25)
        for _ in range(20):
            if self._recorded_ending() is not None:
                return
            await asyncio.sleep(0.1)

    async def stop(self, grace: float = GRACE_SECONDS) -> ControllerEnd:
        """SIGINT, then SIGKILL if the controller is still there after ``grace`` seconds."""
        self.thaw()
        self.interrupt()
        try:
            return await asyncio.wait_for(asyncio.shield(self.wait()), grace)
        except TimeoutError:
            self.kill()
            return await self.wait()


def _keeper_failure(log: Path, status: int) -> str:
    """Why a keeper ended before it started the controller: its last words in study.log, or that it left none."""
    said = last_log_line(log)
    if said != "study.log is empty":
        return f"the keeper exited with status {status}: {said}"
    return (
        f"the keeper exited with status {status} and wrote nothing to study.log: "
        "the disk may be full or the folder not writable"
    )


def last_log_line(path: Path, limit: int = 200) -> str:
    """The last non-empty line of a study's log, shortened and cleaned, to say why something ended."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - 4096))
            tail = fh.read(4096)
    except OSError as exc:
        return f"study.log cannot be read: {exc.strerror}"
    lines = [line.strip() for line in tail.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return "study.log is empty"
    # The log is the study's: it is said through the one quoting function, as all text from a folder.
    return "study.log: " + free_text(lines[-1], limit)


# Where the kernel parks a parent until its vfork child has exec'd or exited.
_VFORK_WAITS = (b"kernel_clone", b"wait_for_vfork_done", b"_do_fork", b"do_fork")


def _in_vfork(pid: int, tid: str) -> bool:
    """Whether thread ``tid`` of ``pid`` sleeps in the kernel waiting for a vfork child."""
    wchan = _read_proc(f"/proc/{pid}/task/{tid}/wchan")
    return wchan is not None and wchan.strip() in _VFORK_WAITS


def _read_proc(path: str) -> bytes | None:
    """A small /proc file's content, or None when its process or thread is gone."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, ProcessLookupError):
        return None
    try:
        return os.read(fd, 4096)
    except (FileNotFoundError, ProcessLookupError):
        return None
    finally:
        os.close(fd)
