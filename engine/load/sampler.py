"""Machine load: light samples for the graphs and ``machine.jsonl``, heavy snapshots at events.

The supervisor's sampler serves every study of a console: it takes a light
sample (load average, memory, CPU) every few seconds for the live graphs,
and writes one every 5 s to each study's ``machine.jsonl``; with it, each
study's own load (:mod:`studymon.engine.load.studyload`).  Heavy snapshots
(every process, the study's containers) are taken at start, resume, after a
kill and at the end.
"""

from __future__ import annotations

import os
import time
from typing import Any

import psutil

from studymon.engine.io.clock import rfc3339_ms

# A light sample every 2.5 s feeds the graphs while one is on screen (a minute
# is 24 points; their columns show each bucket's peak, so a short spike still
# shows); with none on screen (the overview, the headless run) one every 4.5 s,
# within load.jsonl's 5 s with room for a late loop: 48 idle studies spent a
# third of the console's idle CPU on samples nobody saw (bench/many_studies.py).
# machine.jsonl takes the first sample at least MACHINE_EVERY after the last
# it took, which the evidence wants every 5 s.  Sampling every second cost the
# idle console a third of its CPU for no visible gain.  Each study's own load
# is read at every light sample: it reads only the study's own processes and
# its runs' cgroup files, not the machine's process table, so it costs less
# than the walk of /proc it replaced every other sample (bench/load_sampling.py).
SAMPLE_EVERY = 2.5  # seconds between light samples while a graph is on screen
QUIET_SAMPLE_EVERY = 4.5  # seconds between them while none is
MACHINE_EVERY = 4.4  # seconds from one machine.jsonl sample to the next, at least (a sample's lateness forgiven)


def light_sample() -> dict[str, Any]:
    vm = psutil.virtual_memory()
    return {
        "at": rfc3339_ms(),
        "label": "sample",
        "load": list(os.getloadavg()),
        "memory": {"total": vm.total, "available": vm.available, "used": vm.used, "percent": vm.percent},
        "cpu": psutil.cpu_percent(interval=None),
    }


def children_map() -> dict[int, list[int]]:
    """Parent pid -> child pids, from one walk of the process table."""
    out: dict[int, list[int]] = {}
    for p in psutil.process_iter(["ppid"]):
        out.setdefault(p.info["ppid"] or 0, []).append(p.pid)
    return out


def process_snapshot(own: int | None = None) -> list[dict[str, Any]]:
    """Every process: pid, parent, start, state, name and usage; the command line only for the study's own.

    The study's own processes are ``own`` (its controller) and its
    descendants.  Other processes on the machine are other people's: their
    arguments may hold anything (paths, tokens), and the evidence folder is
    shared, so only their name and what they use are kept.
    """
    procs = list(
        psutil.process_iter(["pid", "ppid", "create_time", "cmdline", "name", "status", "cpu_times", "memory_info"])
    )
    children: dict[int, list[int]] = {}
    for p in procs:
        # p.pid, not info["pid"]: info can come back short for a process that went away meanwhile.
        children.setdefault(p.info.get("ppid") or 0, []).append(p.pid)
    mine: set[int] = set()
    pending = [own] if own else []
    while pending:
        pid = pending.pop()
        if pid not in mine:
            mine.add(pid)
            pending.extend(children.get(pid, []))
    out: list[dict[str, Any]] = []
    for p in procs:
        info = p.info
        times, memory = info.get("cpu_times"), info.get("memory_info")
        entry: dict[str, Any] = {
            "pid": p.pid,
            "ppid": info.get("ppid"),
            "started": info.get("create_time"),
            "status": info.get("status"),
            "name": info.get("name"),
            "cpuSeconds": round(times.user + times.system, 2) if times is not None else None,
            "rss": memory.rss if memory is not None else None,
        }
        if p.pid in mine:
            entry["args"] = " ".join(info.get("cmdline") or []) or info.get("name")
        out.append(entry)
    return out


def heavy_snapshot(label: str, containers: list[dict[str, Any]] | None, own: int | None = None) -> dict[str, Any]:
    """A light sample plus every process (command lines for ``own``'s tree only) and the study's containers."""
    t0 = time.perf_counter()
    snap = light_sample()
    snap["label"] = label
    snap["processes"] = process_snapshot(own)
    snap["containers"] = containers
    snap["takenIn"] = round(time.perf_counter() - t0, 4)
    return snap
