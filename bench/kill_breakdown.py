"""Where the engine's kill reaction goes: step by step, from the ledger write to SIGKILL.

It runs the same engine triggers as ``bench/kill_reaction.py`` (real
sessions, real processes) with timing marks wrapped around the engine's
functions on the path, in this process only, and prints each step's p50,
p90 and max.  The path runs in the wake-up that reads the trigger
(``LedgerPump.drain`` -> ``KillDriver.check_trigger`` -> ``Kill.freeze``
and ``Kill.decide_now``): read, accounts, freeze (identity check, SIGSTOP),
confirm that the group stopped, read again while frozen, targets; then a
strike thread inspects the targets' containers and sends SIGKILL (identity
check, ``killpg``) while the wake-up waits for it without the GIL.  The
wrappers (some 20 marks a trigger) put its totals a little above
``kill_reaction.py``'s, whose numbers are the ones to quote; this one says
which step costs what.

    python bench/kill_breakdown.py                       # 20 triggers, 10 and 100 000 lines
    python bench/kill_breakdown.py --triggers 50 --sizes 10 --json steps.json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kill_reaction as kr  # puts the project root on sys.path, for the imports below

import studymon.engine.contract.ledger as ledger_mod
import studymon.engine.io.notify as notify_mod
import studymon.engine.kill.driver as killing_mod
import studymon.engine.kill.protocol as kill_mod
import studymon.engine.launch.launcher as launcher_mod
import studymon.engine.live.pump as pump_mod
import studymon.engine.live.session as session_mod
import studymon.engine.live.supervisor as supervisor_mod

Marks = list[tuple[str, float]]
MARKS: Marks = []


def _mark(name: str) -> None:
    MARKS.append((name, time.time()))  # time.time(): the clock the study's wroteAt uses


@contextlib.contextmanager
def instrumented() -> Iterator[None]:
    """Wrap the functions on the notice -> SIGKILL path with enter/leave marks; undo on exit."""
    undo: list[Callable[[], None]] = []

    def wrap(owner: Any, attr: str, label: str) -> None:
        orig = getattr(owner, attr)
        if asyncio.iscoroutinefunction(orig):

            @functools.wraps(orig)
            async def awrapper(*a: Any, **k: Any) -> Any:
                _mark(label + ">")
                try:
                    return await orig(*a, **k)
                finally:
                    _mark(label + "<")

            setattr(owner, attr, awrapper)
        else:

            @functools.wraps(orig)
            def wrapper(*a: Any, **k: Any) -> Any:
                _mark(label + ">")
                try:
                    return orig(*a, **k)
                finally:
                    _mark(label + "<")

            setattr(owner, attr, wrapper)
        undo.append(lambda: setattr(owner, attr, orig))

    wrap(notify_mod.Notifier, "wait_async", "wait_async")
    wrap(ledger_mod.LedgerTail, "read_new", "read_new")
    wrap(pump_mod.LedgerPump, "drain", "drain")
    wrap(killing_mod.KillDriver, "check_trigger", "check_trigger")
    wrap(launcher_mod.Controller, "freeze", "freeze")
    wrap(launcher_mod.Controller, "kill", "kill")
    # The identity check before each signal: a pidfd probe, or the psutil start time without a pidfd.
    if hasattr(signal, "pidfd_send_signal"):
        wrap(signal, "pidfd_send_signal", "pidfd")
    wrap(launcher_mod, "process_start_time", "start_time")
    wrap(launcher_mod.Controller, "group_stopped", "confirm")
    wrap(kill_mod, "_inspect_many", "inspect")
    # Work that can delay a trigger: on the loop thread (a machine sample handed to the
    # session), or in a thread that holds the GIL the loop needs (the sampler's /proc
    # reads, a heavy snapshot's walk of every process).
    wrap(session_mod.StudySession, "on_sample", "sample")
    wrap(supervisor_mod.Supervisor, "_measure", "measure")
    wrap(session_mod, "heavy_snapshot", "heavy")

    def gc_mark(phase: str, _info: dict[str, Any]) -> None:
        _mark("gc>" if phase == "start" else "gc<")

    gc.callbacks.append(gc_mark)
    undo.append(lambda: gc.callbacks.remove(gc_mark))
    # The launcher signals through os.killpg; os is one module for the whole process.
    real_killpg = os.killpg

    def killpg(pgid: int, sig: int) -> None:
        _mark(f"killpg{int(sig)}>")
        try:
            real_killpg(pgid, sig)
        finally:
            _mark(f"killpg{int(sig)}<")

    os.killpg = killpg
    undo.append(lambda: setattr(os, "killpg", real_killpg))
    try:
        yield
    finally:
        for step in reversed(undo):
            step()


STEPS = (
    ("write -> loop wakes (epoll, future, task resumes, inotify drain)", "wrote", "wake"),
    ("wake -> ledger read starts (folder watches)", "wake", "read"),
    ("ledger read (pread, parse)", "read", "read_end"),
    ("accounts, trigger check", "read_end", "freeze"),
    ("freeze: identity check (pidfd)", "freeze", "stop"),
    ("freeze: SIGSTOP (killpg returns)", "stop", "stop_end"),
    ("frozen -> stop confirmed starts (runtime clock)", "stop_end", "confirm"),
    ("stop confirmed: every thread of the group in state T (/proc)", "confirm", "confirm_end"),
    ("confirmed -> ledger read again starts", "confirm_end", "read2"),
    ("ledger read again, frozen (to its end)", "read2", "read2_end"),
    ("accounts, targets, hand-over to a strike thread", "read2_end", "inspect"),
    ("container inspect (process runtime, strike thread)", "inspect", "inspect_end"),
    ("inspect -> kill() (killSentEpoch taken)", "inspect_end", "kill"),
    ("kill: identity check (pidfd)", "kill", "sigkill"),
    ("kill: SIGKILL (killpg returns)", "sigkill", "sigkill_end"),
    ("== write -> SIGSTOP sent", "wrote", "stop_end"),
    ("== write -> killSentEpoch (kill.json)", "wrote", "sent"),
    ("== write -> SIGKILL sent (killpg returns)", "wrote", "sigkill_end"),
    ("after: SIGKILL -> wake-up ends (timeline, events, arms.jsonl)", "sigkill_end", "drain_end"),
)


def overlap(marks: Marks, name: str, start: float, end: float) -> float:
    """Milliseconds of the ``name`` intervals (``name>`` .. ``name<``) that fall inside [start, end]."""
    total, opened = 0.0, None
    for n, t in marks:
        if n == name + ">":
            opened = t
        elif n == name + "<" and opened is not None:
            total += max(0.0, min(t, end) - max(opened, start))
            opened = None
    return total * 1e3


# Work that may overlap a trigger: garbage collection and a sample handed over on the loop
# thread; the sampler's measurement and a heavy snapshot in other threads (they hold the GIL).
INTERFERENCE = {
    "gc": "garbage collection",
    "sample": "machine sample handed over (on_sample, loop)",
    "measure": "machine sample taken (sampler thread)",
    "heavy": "heavy snapshot (thread)",
}


def _first(marks: Marks, name: str, after: float) -> float:
    for n, t in marks:
        if n == name and t >= after:
            return t
    raise LookupError(name)


def _last(marks: Marks, name: str, before: float) -> float:
    found = [t for n, t in marks if n == name and t <= before]
    if not found:
        raise LookupError(name)
    return found[-1]


def points(sample: kr.Sample, marks: Marks) -> dict[str, float]:
    """The instants of one trigger, anchored on its freeze (the wake and first read are the ones before it)."""
    p: dict[str, float] = {"wrote": sample.wrote_at, "sent": sample.kill_sent}
    p["freeze"] = _first(marks, "freeze>", sample.wrote_at)
    p["read"] = _last(marks, "read_new>", p["freeze"])
    p["read_end"] = _first(marks, "read_new<", p["read"])
    p["wake"] = _last(marks, "wait_async<", p["read"])
    p["stop"] = _first(marks, f"killpg{int(signal.SIGSTOP)}>", p["freeze"])
    p["stop_end"] = _first(marks, f"killpg{int(signal.SIGSTOP)}<", p["stop"])
    p["confirm"] = _first(marks, "confirm>", p["stop_end"])
    p["confirm_end"] = _first(marks, "confirm<", p["confirm"])
    p["read2"] = _first(marks, "read_new>", p["confirm_end"])
    p["read2_end"] = _first(marks, "read_new<", p["read2"])
    p["inspect"] = _first(marks, "inspect>", p["read2_end"])
    p["inspect_end"] = _first(marks, "inspect<", p["inspect"])
    p["kill"] = _first(marks, "kill>", p["inspect_end"])
    p["sigkill"] = _first(marks, f"killpg{int(signal.SIGKILL)}>", p["kill"])
    p["sigkill_end"] = _first(marks, f"killpg{int(signal.SIGKILL)}<", p["sigkill"])
    p["drain_end"] = _first(marks, "drain<", p["sigkill_end"])
    return p


def psutil_checks(marks: Marks, start: float, end: float) -> int:
    """psutil start-time lookups inside [start, end]: identity checks made without a pidfd."""
    return sum(1 for n, t in marks if n == "start_time>" and start <= t <= end)


async def collect(args: argparse.Namespace, work: Path, children: kr.Children) -> dict[int, list[dict[str, float]]]:
    out: dict[int, list[dict[str, float]]] = {}
    for lines in args.sizes:
        filler = work / f"fillers-{lines}.jsonl"
        kr.make_fillers(filler, lines - kr.FIXED_LINES)
        rows = out[lines] = []
        for i in range(args.triggers):
            MARKS.clear()
            sample = await kr.engine_trigger(work, lines, i, filler, children)
            p = points(sample, list(MARKS))
            row = {label: (p[b] - p[a]) * 1e3 for label, a, b in STEPS}
            for name in INTERFERENCE:
                row[name] = overlap(MARKS, name, sample.wrote_at, p["sigkill_end"])
            row["psutil"] = psutil_checks(MARKS, p["freeze"], p["sigkill_end"])
            rows.append(row)
            if not args.silent:
                print(f"[{lines} lines #{i + 1}] {sample.reaction_ms:.3f} ms", file=sys.stderr, flush=True)
    return out


def table(results: dict[int, list[dict[str, float]]]) -> str:
    rows = []
    for lines, items in results.items():
        head = f"{lines} lines, {len(items)} triggers, milliseconds"
        rows.append(f"\n{head:<68}{'p50':>9}{'p90':>9}{'max':>9}")
        for label, _, _ in STEPS:
            xs = [it[label] for it in items]
            rows.append(f"  {label:<66}{kr.percentile(xs, 50):9.3f}{kr.percentile(xs, 90):9.3f}{max(xs):9.3f}")
        for name, label in INTERFERENCE.items():
            hit = [it[name] for it in items if it[name] > 0]
            worst = f", {max(hit):.3f} ms at most" if hit else ""
            rows.append(f"  inside write -> SIGKILL: {label}: {len(hit)}/{len(items)} triggers{worst}")
        slow = sum(1 for it in items if it["psutil"])
        rows.append(f"  identity checked by psutil start time (no pidfd): {slow}/{len(items)} triggers")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--triggers", type=int, default=20, help="triggers per ledger size (default 20)")
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[kr.SHORT, kr.LONG])
    p.add_argument("--json", type=Path, help="save every trigger's steps to this file")
    p.add_argument("--silent", action="store_true")
    args = p.parse_args(argv)
    started = time.time()
    work = Path(tempfile.mkdtemp(prefix="studymon-kill-breakdown-"))
    os.environ["STUDYMON_PROCESS_RUNTIME"] = str(work / "runtime")
    children = kr.Children()
    try:
        with instrumented():
            results = asyncio.run(collect(args, work, children))
    except KeyboardInterrupt:
        return 130
    except (kr.TriggerFailed, LookupError) as exc:
        print(f"kill_breakdown: {exc}", file=sys.stderr)
        return 2
    finally:
        children.kill_all()
        kr.Children.sweep(work, started)
        shutil.rmtree(work, ignore_errors=True)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps({str(k): v for k, v in results.items()}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
