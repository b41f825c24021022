"""Starting, signalling and reaping a study controller.

A controller runs in its own session (so signals meant for the console never
reach it) with standard input closed and its output appended to
``OUT/study.log``.  Every start and end is a line in ``OUT/launches.jsonl``.
Before any signal the pid is checked against the process start time recorded
at launch, so a recycled pid is never signalled.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from engine.clock import rfc3339_ms
from engine.evidence import append_jsonl

GRACE_SECONDS = 10.0  # the contract gives a study 10 s to stop on SIGINT


@dataclass
class Ending:
    """How a controller ended: exit ``code`` or the ``signal`` that killed it."""

    code: int | None
    signal: str | None

    @classmethod
    def from_returncode(cls, rc: int) -> "Ending":
        if rc < 0:
            return cls(None, signal.Signals(-rc).name)
        return cls(rc, None)

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
        self.pid = pid
        self.start_time = start_time
        self.out = out
        self._proc = proc
        self.ending: Ending | None = None

    # --- launching ---------------------------------------------------------
    @classmethod
    async def launch(cls, argv: list[str], out: Path, env: dict[str, str], resume: bool) -> "Controller":
        log = os.open(out / "study.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=str(out),
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        finally:
            os.close(log)
        start_time = process_start_time(proc.pid) or time.time()
        append_jsonl(
            out / "launches.jsonl",
            {"event": "start", "pid": proc.pid, "at": rfc3339_ms(), "resume": resume, "startTime": start_time, "argv": argv},
        )
        return cls(proc.pid, start_time, out, proc)

    @classmethod
    def attach(cls, pid: int, start_time: float, out: Path) -> "Controller | None":
        """The controller ``pid`` if it still runs and is the same process (same start time)."""
        actual = process_start_time(pid)
        if actual is None or abs(actual - start_time) > 0.05:
            return None
        return cls(pid, start_time, out, None)

    # --- state and signals -------------------------------------------------
    def is_same_process(self) -> bool:
        if self.ending is not None:
            return False
        actual = process_start_time(self.pid)
        return actual is not None and abs(actual - self.start_time) <= 0.05

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

    def freeze(self) -> bool:
        return self.signal_group(signal.SIGSTOP)

    def thaw(self) -> bool:
        return self.signal_group(signal.SIGCONT)

    def kill(self) -> bool:
        return self.signal_group(signal.SIGKILL)

    def interrupt(self) -> bool:
        return self.signal_group(signal.SIGINT)

    async def wait(self) -> Ending:
        """Wait for the end and record it in ``launches.jsonl`` (once)."""
        if self.ending is not None:
            return self.ending
        if self._proc is not None:
            rc = await self._proc.wait()
            ending = Ending.from_returncode(rc)
        else:
            ending = await self._wait_foreign()
        if self.ending is None:
            self.ending = ending
            append_jsonl(
                self.out / "launches.jsonl",
                {"event": "end", "pid": self.pid, "at": rfc3339_ms(), "code": ending.code, "signal": ending.signal},
            )
        return self.ending

    async def _wait_foreign(self) -> Ending:
        # Not our child: its exit status is lost to us; the study's ledger tells the rest.
        while self.is_same_process():
            try:
                st = psutil.Process(self.pid).status()
            except psutil.NoSuchProcess:
                break
            if st == psutil.STATUS_ZOMBIE:
                break
            await asyncio.sleep(0.5)
        return Ending(None, None)

    async def stop(self, grace: float = GRACE_SECONDS) -> Ending:
        """SIGINT, then SIGKILL if the controller is still there after ``grace`` seconds."""
        self.thaw()
        self.interrupt()
        try:
            return await asyncio.wait_for(asyncio.shield(self.wait()), grace)
        except asyncio.TimeoutError:
            self.kill()
            return await self.wait()
