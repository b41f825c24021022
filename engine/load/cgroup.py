"""A container's CPU and memory counters, read from its cgroup's files (cgroup v1 or v2).

This is the cheap way to a Docker run's load: three small file reads per
container, where the Engine API's stats cost a request and the daemon's work
behind it (``bench/load_sampling.py`` measures both).  It works where the
engine runs on this machine and its cgroup files are readable here:

* the container's cgroup is found from its main process,
  ``/proc/<pid>/cgroup``, and is used only when that path names the
  container's ``Id`` (a pid from another machine or namespace, or one
  reused by now, names something else);
* the file systems come from ``/proc/self/mountinfo``: a cgroup v1 mount
  holding ``cpuacct`` (or ``memory``), else the v2 mount;
* CPU is ``cpuacct.usage`` (v1, nanoseconds) or ``usage_usec`` of
  ``cpu.stat`` (v2); memory is ``memory.usage_in_bytes`` (v1) or
  ``memory.current`` (v2) less the inactive file cache of ``memory.stat``,
  which is what ``docker stats`` shows.

Anything else (no mount, a path outside this namespace, a file that cannot
be read) makes :func:`locate` return None, and the caller uses the API.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

# Big enough for any memory.stat (about 40 lines on v1, 60 on v2).
_READ_SIZE = 1 << 14


@dataclass(frozen=True)
class CgroupMounts:
    """Where the cgroup file systems are: per v1 controller, and the v2 one (each ``(root, mount point)``)."""

    v1: dict[str, tuple[str, str]]
    v2: tuple[str, str] | None


@dataclass(frozen=True)
class CgroupFiles:
    """The files that hold one container's counters."""

    cpu: str
    cpu_v2: bool  # ``cpu.stat`` (microseconds) rather than ``cpuacct.usage`` (nanoseconds)
    memory: str | None
    memory_stat: str | None
    inactive: bytes  # the key of the inactive file cache in memory.stat


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal (``\\040``)."""
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mountinfo(text: str) -> CgroupMounts:
    v1: dict[str, tuple[str, str]] = {}
    v2: tuple[str, str] | None = None
    for line in text.splitlines():
        head, sep, tail = line.partition(" - ")
        if not sep:
            continue
        fields, after = head.split(), tail.split()
        if len(fields) < 5 or len(after) < 3:
            continue
        root, point = _unescape(fields[3]), _unescape(fields[4])
        if after[0] == "cgroup2":
            v2 = v2 or (root, point)
        elif after[0] == "cgroup":
            for option in after[2].split(","):
                v1.setdefault(option, (root, point))
    return CgroupMounts(v1, v2)


def read_mounts() -> CgroupMounts:
    """This process's cgroup mounts (empty where there is no ``/proc``)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            return parse_mountinfo(fh.read())
    except OSError:
        return CgroupMounts({}, None)


def _under(mount: tuple[str, str], path: str) -> str | None:
    """The folder of cgroup ``path`` under ``mount``, or None when the mount does not reach it."""
    root, point = mount
    if path.startswith("/.."):
        return None  # outside this process's cgroup namespace
    if root != "/":
        if path != root and not path.startswith(root.rstrip("/") + "/"):
            return None
        path = path[len(root.rstrip("/")) :]
    return point.rstrip("/") + (path or "/")


def locate(pid: int, container_id: str, mounts: CgroupMounts) -> CgroupFiles | None:
    """The cgroup files of the container ``container_id`` whose main process is ``pid``, if readable here."""
    if pid <= 0 or not container_id:
        return None
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    if container_id not in text:
        return None
    v1: dict[str, str] = {}
    v2: str | None = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            v2 = parts[2]
        for controller in parts[1].split(","):
            v1.setdefault(controller, parts[2])
    files = _v1_files(v1, mounts) or _v2_files(v2, mounts)
    if files is None:
        return None
    try:
        read_counters(files)
    except (OSError, ValueError):
        return None
    return files


def _v1_files(paths: dict[str, str], mounts: CgroupMounts) -> CgroupFiles | None:
    if "cpuacct" not in paths or "cpuacct" not in mounts.v1:
        return None
    cpu = _under(mounts.v1["cpuacct"], paths["cpuacct"])
    if cpu is None:
        return None
    memory = None
    if "memory" in paths and "memory" in mounts.v1:
        memory = _under(mounts.v1["memory"], paths["memory"])
    return CgroupFiles(
        cpu=f"{cpu}/cpuacct.usage",
        cpu_v2=False,
        memory=None if memory is None else f"{memory}/memory.usage_in_bytes",
        memory_stat=None if memory is None else f"{memory}/memory.stat",
        inactive=b"total_inactive_file",
    )


def _v2_files(path: str | None, mounts: CgroupMounts) -> CgroupFiles | None:
    if path is None or mounts.v2 is None:
        return None
    folder = _under(mounts.v2, path)
    if folder is None:
        return None
    has_memory = os.path.exists(f"{folder}/memory.current")
    return CgroupFiles(
        cpu=f"{folder}/cpu.stat",
        cpu_v2=True,
        memory=f"{folder}/memory.current" if has_memory else None,
        memory_stat=f"{folder}/memory.stat" if has_memory else None,
        inactive=b"inactive_file",
    )


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, _READ_SIZE)
    finally:
        os.close(fd)


def _stat_value(text: bytes, key: bytes) -> int:
    for line in text.splitlines():
        name, _, value = line.partition(b" ")
        if name == key:
            return int(value)
    raise ValueError(f"no {key.decode()} in the cgroup's stat file")


def read_counters(files: CgroupFiles) -> tuple[float, int]:
    """CPU seconds since the container started, and the memory it uses now, in bytes.

    Raises :class:`OSError` when a file cannot be read (``FileNotFoundError``:
    the cgroup is gone, the container has stopped).
    """
    raw = _read(files.cpu)
    cpu = _stat_value(raw, b"usage_usec") / 1e6 if files.cpu_v2 else int(raw) / 1e9
    memory = 0
    if files.memory is not None:
        memory = int(_read(files.memory))
        if files.memory_stat is not None:
            # Without the page cache the kernel can drop at will, as `docker stats` does.
            with contextlib.suppress(ValueError):
                memory -= _stat_value(_read(files.memory_stat), files.inactive)
    return cpu, max(memory, 0)
