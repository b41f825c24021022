"""Notice latency: from a line appended to a watched file to the waiting loop awake, per change source.

The engine learns of ledger and journal writes from a :class:`Notifier`
(``studymon.engine.io.notify``): inotify on Linux, watchfiles where inotify is
missing, timed wake-ups where neither is.  This bench runs the three side by
side in one process, each following its own file the way the ledger pump
does (``await wait_async(timeout)``, then a look at the file's size), and
times every append:

* **inotify**: ``Notifier("inotify")``, woken by the descriptor; safety
  timeout the session's ``SAFETY_WAKE``.
* **watchfiles**: ``Notifier("watchfiles")``, the path macOS and the BSDs take
  (forced here on Linux, where watchfiles' backend is inotify too, so the
  difference is watchfiles' own loop: its ``step`` and the thread's hand-over).
  ``--steps`` adds runs at other steps than the notifier's default.
* **timer**: no notice at all; the file is looked at every 250 ms (the
  session's ``NO_NOTICE_POLL``): what watchfiles replaces.

A writer process appends one line at a time, a random 20-300 ms after it is
asked (so every design meets the write at a random phase of its own loop),
with ``time.monotonic()`` taken just before its ``os.write`` in the line
(the clock is system-wide).  The waiting loop takes the time when it has
read the line.  The designs take turns append by append, in a shuffled
order, so machine noise hits them alike.  Then each design alone idles for
``--idle`` seconds, following a file nobody writes, and the process's CPU
time over that window is its idle cost.

    python bench/notify_latency.py                 # 100 appends per design (~1.5 min)
    python bench/notify_latency.py --steps 1,5,20  # watchfiles at other steps too
    python bench/notify_latency.py --quick         # smoke run, a few seconds

Exit status: 0 when every append was noticed (within the 10 s each is given),
2 when one was not, 130 when interrupted.  The writer is killed and the
temporary folder removed on the way out (``--keep`` keeps it: every
design's file, one line per append holding its write time).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from studymon.engine.io.notify import WATCHFILES_STEP_MS, Notifier  # noqa: E402
from studymon.engine.live.pump import NO_NOTICE_POLL, SAFETY_WAKE  # noqa: E402  (the session's timeouts)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kill_reaction import stats  # noqa: E402  (one definition of the percentiles for every bench)

DELAY_MS = (20, 300)  # the writer's random pause before an append: longer than the timer's period
APPEND_DEADLINE = 10.0  # seconds an append may take to be seen before it counts as missed
IDLE_TARGET = 1.0  # % of a core: what a fallback may cost while nothing happens

WRITER = r"""
import os, random, sys, time
low, high = float(sys.argv[1]), float(sys.argv[2])
for path in sys.stdin:
    time.sleep(random.uniform(low, high))
    fd = os.open(path.strip(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (repr(time.monotonic()) + "\n").encode())
    finally:
        os.close(fd)
"""


class AppendMissed(RuntimeError):
    """An append was not seen within :data:`APPEND_DEADLINE`."""


@dataclass
class Sample:
    design: str
    latency_ms: float
    woke: bool  # False: seen on a timeout's re-check, not on a notice
    wrote_at: float  # time.monotonic() the writer put in the line, just before its write
    seen_at: float  # time.monotonic() once the loop had read it


@dataclass
class Idle:
    design: str
    seconds: float
    cpu_seconds: float
    wakeups: int  # the loop's returns from wait_async (notices and timeouts)

    @property
    def cpu_percent(self) -> float:
        return 100.0 * self.cpu_seconds / self.seconds


def designs_for(steps: list[int]) -> dict[str, tuple[str, int]]:
    """Design name -> (Notifier backend, watchfiles step in ms)."""
    found = {"inotify": ("inotify", WATCHFILES_STEP_MS), "watchfiles": ("watchfiles", WATCHFILES_STEP_MS)}
    for step in steps:
        if step != WATCHFILES_STEP_MS:
            found[f"watchfiles/{step}ms"] = ("watchfiles", step)
    found["timer"] = ("timer", WATCHFILES_STEP_MS)
    return found


class Follower:
    """One design's loop, as the ledger pump's: wait for a notice (or the timeout), then look at the file."""

    def __init__(self, name: str, backend: str, step_ms: int, folder: Path) -> None:
        folder.mkdir()
        self.name = name
        self.path = folder / "ledger.jsonl"
        self.path.write_bytes(b"")
        self.notifier = Notifier(backend, step_ms=step_ms)
        if self.notifier.backend != backend:
            raise RuntimeError(f"{name}: {backend} is not available here (got {self.notifier.backend})")
        self.notifier.watch(folder)
        self.offset = 0
        self.wakeups = 0
        self.seen: asyncio.Queue[tuple[bytes, float, bool]] = asyncio.Queue()

    async def run(self) -> None:
        timeout = SAFETY_WAKE if self.notifier.active else NO_NOTICE_POLL
        while True:
            woke = await self.notifier.wait_async(timeout)
            self.wakeups += 1
            size = os.stat(self.path).st_size
            if size > self.offset:
                with open(self.path, "rb") as fh:
                    fh.seek(self.offset)
                    data = fh.read(size - self.offset)
                now = time.monotonic()
                self.offset += len(data)
                self.seen.put_nowait((data, now, woke))

    def close(self) -> None:
        self.notifier.close()


async def measure(args: argparse.Namespace, work: Path, writer: subprocess.Popen[bytes]) -> list[Sample]:
    designs = designs_for(args.steps)
    followers = {
        name: Follower(name, backend, step, work / name.replace("/", "-")) for name, (backend, step) in designs.items()
    }
    tasks = [asyncio.ensure_future(f.run()) for f in followers.values()]
    samples: list[Sample] = []
    assert writer.stdin is not None
    try:
        await asyncio.sleep(0.2)  # every loop is waiting
        for n in range(args.appends):
            order = list(followers.values())
            random.shuffle(order)
            for follower in order:
                writer.stdin.write(f"{follower.path}\n".encode())
                writer.stdin.flush()
                try:
                    data, seen_at, woke = await asyncio.wait_for(follower.seen.get(), APPEND_DEADLINE)
                except TimeoutError as exc:
                    raise AppendMissed(f"{follower.name}: append {n + 1} not seen in {APPEND_DEADLINE:g} s") from exc
                wrote_at = float(data.decode().splitlines()[-1])
                samples.append(Sample(follower.name, (seen_at - wrote_at) * 1000.0, woke, wrote_at, seen_at))
            if not args.silent:
                print(f"\r{n + 1}/{args.appends} appends per design", end="", file=sys.stderr, flush=True)
        if not args.silent:
            print(file=sys.stderr)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for follower in followers.values():
            follower.close()
    return samples


async def idle_cost(args: argparse.Namespace, work: Path) -> list[Idle]:
    found = []
    for name, (backend, step) in designs_for(args.steps).items():
        follower = Follower(name, backend, step, work / f"idle-{name.replace('/', '-')}")
        task = asyncio.ensure_future(follower.run())
        try:
            await asyncio.sleep(0.2)  # its thread (if any) is up
            cpu, began, wakeups = time.process_time(), time.monotonic(), follower.wakeups
            await asyncio.sleep(args.idle)
            found.append(Idle(name, time.monotonic() - began, time.process_time() - cpu, follower.wakeups - wakeups))
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            follower.close()
    return found


def summarise(samples: list[Sample], idle: list[Idle]) -> dict[str, Any]:
    names = [i.design for i in idle]  # the designs' order
    latency = {name: stats([s.latency_ms for s in samples if s.design == name]) for name in names}
    on_timeout = {name: sum(1 for s in samples if s.design == name and not s.woke) for name in names}
    cpu = {i.design: {"percent": i.cpu_percent, "wakeupsPerSecond": i.wakeups / i.seconds} for i in idle}
    base = latency["inotify"]
    ratio = {name: {q: latency[name][q] / base[q] if base[q] else math.inf for q in ("p50", "p99")} for name in names}
    wf, timer = latency["watchfiles"], latency["timer"]
    serves = wf["p99"] < timer["p50"] and cpu["watchfiles"]["percent"] <= IDLE_TARGET
    return {"latencyMs": latency, "seenOnTimeout": on_timeout, "idle": cpu, "ratioToInotify": ratio,
            "watchfilesServes": serves}


def report(summary: dict[str, Any], appends: int, idle_seconds: float) -> str:
    rows = [
        (
            f"notice latency: line appended -> waiting loop has read it, milliseconds; {appends} appends per design; "
            f"idle cost over {idle_seconds:g} s; {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"watchfiles step {WATCHFILES_STEP_MS} ms unless named"
        ),
        "",
        f"{'design':<18}{'n':>5}{'p50':>10}{'p99':>10}{'max':>10}{'idle CPU %':>12}{'wakeups/s':>11}",
    ]
    for name, s in summary["latencyMs"].items():
        idle = summary["idle"][name]
        rows.append(
            f"{name:<18}{s['n']:>5}{s['p50']:>10.3f}{s['p99']:>10.3f}{s['max']:>10.3f}"
            f"{idle['percent']:>12.3f}{idle['wakeupsPerSecond']:>11.1f}"
        )
    rows.append("")
    for name, r in summary["ratioToInotify"].items():
        if name not in ("inotify", "timer"):
            rows.append(f"ratio {name}/inotify: p50 x{r['p50']:.0f}, p99 x{r['p99']:.0f}")
    t = summary["latencyMs"]["timer"]
    w = summary["latencyMs"]["watchfiles"]
    rows.append(f"ratio timer/watchfiles: p50 x{t['p50'] / w['p50']:.1f}, p99 x{t['p99'] / w['p99']:.1f}")
    missed = {name: n for name, n in summary["seenOnTimeout"].items() if n and name != "timer"}
    if missed:
        rows.append(f"seen only on the safety timeout, not on a notice: {missed}")
    wf, timer = summary["latencyMs"]["watchfiles"], summary["latencyMs"]["timer"]
    rows.append(
        f"watchfiles as the fallback (p99 below the timer's p50, idle <= {IDLE_TARGET:g} % of a core): "
        f"{'serves' if summary['watchfilesServes'] else 'DOES NOT SERVE'} "
        f"(p99 {wf['p99']:.1f} ms vs timer p50 {timer['p50']:.1f} ms; "
        f"idle {summary['idle']['watchfiles']['percent']:.2f} %)"
    )
    return "\n".join(rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--appends", type=int, default=None, help="appends per design (default 100; 5 with --quick)")
    p.add_argument("--idle", type=float, default=None, help="seconds of idle per design (default 5; 1 with --quick)")
    p.add_argument(
        "--steps",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=[],
        help=f"watchfiles steps in ms to run besides the default {WATCHFILES_STEP_MS}, comma separated",
    )
    p.add_argument("--quick", action="store_true", help="smoke run: 5 appends per design, 1 s idle")
    p.add_argument("--json", type=Path, help="save every sample and the summary to this file")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    p.add_argument("--silent", action="store_true", help="no progress on stderr")
    args = p.parse_args(argv)
    if args.appends is None:
        args.appends = 5 if args.quick else 100
    if args.idle is None:
        args.idle = 1.0 if args.quick else 5.0
    if args.appends < 1 or args.idle <= 0 or any(s < 1 for s in args.steps):
        p.error("--appends must be >= 1, --idle > 0 and every step >= 1")
    return args


async def amain(
    args: argparse.Namespace, work: Path, writer: subprocess.Popen[bytes]
) -> tuple[list[Sample], list[Idle]]:
    task = asyncio.current_task()
    assert task is not None
    # SIGTERM ends the bench like Ctrl-C does: cancelled, the writer killed, the folder removed.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    samples = await measure(args, work, writer)
    return samples, await idle_cost(args, work)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="studymon-notify-bench-"))
    low, high = (ms / 1000.0 for ms in DELAY_MS)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(low), str(high)], stdin=subprocess.PIPE, start_new_session=True
    )
    began = time.monotonic()
    try:
        samples, idle = asyncio.run(amain(args, work, writer))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted", file=sys.stderr)
        return 130
    except AppendMissed as exc:
        print(f"notify_latency: {exc}", file=sys.stderr)
        return 2
    finally:
        writer.kill()
        writer.wait()
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    summary = summarise(samples, idle)
    print(report(summary, args.appends, args.idle))
    print(f"bench wall time: {time.monotonic() - began:.0f} s")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "machine": {
                        "cores": os.cpu_count(),
                        "python": platform.python_version(),
                        "platform": platform.platform(),
                    },
                    "appends": args.appends,
                    "idleSeconds": args.idle,
                    "watchfilesStepMs": WATCHFILES_STEP_MS,
                    "summary": summary,
                    "samples": [asdict(s) for s in samples],
                    "idle": [asdict(i) for i in idle],
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
