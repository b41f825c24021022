"""Process trees and their CPU counters, read from ``/proc`` one process at a time.

A study's load sample needs the processes under a few roots (its
controller, and on the process runtime each run's command), not the whole
machine's table: where the kernel gives ``/proc/<pid>/task/<tid>/children``
a tree costs one small read per thread of its members, whatever else runs
on the machine; elsewhere one walk of the process table (psutil) is made
per sample and shared by every study.

A process's counters come from one read of ``/proc/<pid>/stat``: CPU
seconds (user + system, every thread), resident memory and the start
time.  The start is taken against the boot clock, which ``/proc`` counts
in, so it is exact to a clock tick on the wall clock too (psutil's
``create_time`` rests on a boot time rounded to the second, which could
move a new process's start before the previous sample).
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass

import psutil

from studymon.engine.load.sampler import children_map


@dataclass(frozen=True)
class ProcessCounters:
    pid: int
    cpu: float  # CPU seconds since it started, user + system
    memory: int  # resident bytes
    started: float  # epoch seconds
    start_ticks: int  # its start in clock ticks since boot: with the pid, who it is (pids are reused)


@functools.cache
def _ticks() -> int:
    return os.sysconf("SC_CLK_TCK")


@functools.cache
def _page_size() -> int:
    return os.sysconf("SC_PAGE_SIZE")


@functools.cache
def task_children_readable() -> bool:
    """Whether this kernel lists a task's children in ``/proc/<pid>/task/<tid>/children``."""
    pid = os.getpid()
    return os.path.exists(f"/proc/{pid}/task/{pid}/children")


def _read(path: str, size: int = 4096) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_process(pid: int) -> ProcessCounters | None:
    """The counters of ``pid``, or None when it is gone (or cannot be read)."""
    data = _read(f"/proc/{pid}/stat")
    if data is None:
        return _read_with_psutil(pid) if not os.path.isdir("/proc/self") else None
    try:
        # The command name (field 2) may hold spaces and parentheses: count from the last ")".
        fields = data[data.rindex(b")") + 2 :].split()
        ticks = _ticks()
        cpu = (int(fields[11]) + int(fields[12])) / ticks
        start_ticks = int(fields[19])
        memory = int(fields[21]) * _page_size()
    except (ValueError, IndexError):
        return None
    started = time.time() - (time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / ticks)
    return ProcessCounters(pid, cpu, max(memory, 0), started, start_ticks)


def _read_with_psutil(pid: int) -> ProcessCounters | None:
    """Where there is no ``/proc`` (macOS, the BSDs)."""
    try:
        proc = psutil.Process(pid)
        with proc.oneshot():
            times = proc.cpu_times()
            started = proc.create_time()
            return ProcessCounters(pid, times.user + times.system, proc.memory_info().rss, started, int(started * 100))
    except psutil.Error:
        return None


class ProcessTable:
    """Who is whose child, asked one pid at a time; make one per sample (a fallback walk is kept for its life)."""

    def __init__(self) -> None:
        self._map: dict[int, list[int]] | None = None

    def children(self, pid: int) -> list[int]:
        if not task_children_readable():
            if self._map is None:
                self._map = children_map()
            return list(self._map.get(pid, ()))
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return []
        found: list[int] = []
        for tid in tids:
            data = _read(f"/proc/{pid}/task/{tid}/children", 1 << 16)
            if data:
                found.extend(int(child) for child in data.split())
        return found

    def tree(self, root: int, leave_out: frozenset[int] | set[int] = frozenset()) -> list[int]:
        """``root`` and its descendants, without the pids in ``leave_out`` and anything under them."""
        if root in leave_out:
            return []
        out = [root]
        seen = {root}
        i = 0
        while i < len(out):
            for child in self.children(out[i]):
                if child not in seen and child not in leave_out:
                    seen.add(child)
                    out.append(child)
            i += 1
        return out
