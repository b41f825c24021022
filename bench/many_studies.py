"""Many studies: the console's overview of 48 streaming studies — its CPU and memory, first frame, record → row, a kill.

One run, real command line, real terminals (tmux 160x48, each program on a
tmux server of its own).  **studymon** runs ``studymon run --exit-when-done
--template T --kill ... s01=OUT ... s48=OUT``: 48 studies
(``bench/manystudy.py``, no containers but the armed study's runs), more than
fit side by side, so the console shows its overview, a row per study.  Each
study appends ``--rate`` records a second (2; one write per record; each
study starts at its own offset within the interval, so they do not write in
lockstep) while the bench says ``stream``.  Beside it, in the same run and
at the same time:

* **three studies** under a console of their own (``t1 t2 t3``, panes side by
  side) at the same total rate: 48 x 2 = 96 records a second, so 32 a study;
* **toolong** (``tl``, from PyPI) following the same 48 ledgers (one tab per
  file: its merged view does not tail).  toolong 1.5's watcher thread ends
  when a tab's file is added while it walks them, which with 48 tabs happens
  at almost every start on a fast machine; so toolong runs as
  ``toolong_fixed.py`` (its own ``tl`` with that walk over a copy), and is
  still checked after the warm-up and started again if it does not follow.

What is measured:

1. **first frame of the overview**: from just before tmux is asked to start
   the console to the first screen whose overview shows every row that fits,
   the studies' ids in the command's order under a header that counts all
   of them (42 of 48 rows fit at 160x48); also the first paint and the
   screen that says every study runs.  The screen is read through a tmux
   control-mode client every ~2 ms.
2. **load per phase**: the CPU (user + system, every thread, % of one core:
   mean, p90 and max of one-second samples) and the RSS of each console, of
   toolong, of each tmux server and of the studies, with psutil, once a
   second.  Phases: *streaming* (``--seconds``, 60), *armed* (the kills of 4.,
   the others still streaming; reported, no target), *idle* (the studies
   alive and quiet, ``--idle-seconds``, 30, after a short settle).
3. **record → its row on screen**, during streaming: four studies spread
   over the screen's rows note ``time.monotonic()`` just before each write;
   each ``stageOpen`` moves the round and the stage their row shows (``r12
   diagnosis``); the bench reads the screen every ~2 ms while such a record
   is not yet shown, and a record counts as shown when its row shows its
   round and stage, or a later one.  Also split at the console's read of the
   record (``seenAt`` of ``OUT/timeline.jsonl``).
4. **the armed study's kill reaction**: one of the 48 (not a timed one) is
   armed with ``--kill ID:after:runStarted/diagnosis``, given ``--triggers``
   times (15); each point is taken on the controller then running.  Per
   trigger the bench asks the study for a diagnosis run: at the end of its
   round it plans, charges and starts one (a ``sleep`` on the process
   runtime), pauses 50-200 ms and writes ``runStarted`` with the time
   (``time.time()``) taken just before that one write.  Reaction =
   ``killSentEpoch`` of ``OUT/kills/N/kill.json`` minus that time; split into
   notice (``triggerSeenEpoch`` - written) and act.  The console then resumes
   the study, which collects the run and streams on; the next trigger comes
   after that.  Beside it, **the machine's floor**, as ``kill_reaction.py``
   measures it: a process of its own that, all through this phase, sleeps a
   pause drawn like the study's (50-200 ms) and times a fixed piece of Python
   work calibrated at the start to ~1 ms.

    python bench/many_studies.py --toolong ~/.toolong/bin/tl   # 48 studies: 60 s streaming, 15 kills, 30 s idle
    python bench/many_studies.py --seconds 120 --json many.json
    python bench/many_studies.py --quick                         # smoke run: 12 studies, 8 s, 2 kills, 5 s idle

Targets (studymon with 48 studies): streaming CPU ≤ 10 % of a core, idle ≤
0.5 %, first frame ≤ 1 s, each on the nominal machine (``machine_speed.py``:
the target here is the nominal one times this machine's slowdown during that
phase, which a probe process measures all through the run); RSS ≤ 200 MB;
record → row p90 ≤ 100 ms (none missed); the armed study's kill reaction within the machine's floor measured
in the same run: its p50 no more than the floor's p50 plus the single-study
p50 of ``kill_reaction.py`` (1.314 ms, bench/README.md), and its p99/p50
spread no wider than the floor's.  Each is printed as met or MISSED.
``--quick`` measures without toolong when it is not found, and says so.
Exit status 0 when every phase was measured (``--require-target``: 1 when a
target is missed), 2 when the run failed, 130 when interrupted.  Every process
is killed and the temporary folder removed on the way out (``--keep`` keeps
it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from console_load import Series, Watched, server_pid  # noqa: E402
from first_frame import find_toolong, interrupted, sweep, wait_ended  # noqa: E402
from kill_reaction import DELAY_MS, calibrate_floor, floor_line, floor_summary, floor_work, percentile  # noqa: E402
from machine_speed import Probe, Speed, lines_per_second  # noqa: E402
from screen_latency import timeline_reads  # noqa: E402
from streamstudy import last_seq  # noqa: E402
from terminal import TerminalError, Terminals  # noqa: E402

WIDTH, HEIGHT = 160, 48
THREE = ("t1", "t2", "t3")
MARKED = 4  # studies whose rows are timed
TARGET_STREAM_CPU = 10.0  # % of one core
TARGET_IDLE_CPU = 0.5
TARGET_RSS_MB = 200.0
TARGET_FRAME_S = 1.0
TARGET_ROW_P90_MS = 100.0
# kill_reaction.py's engine p50 for one armed study alone (10 lines; bench/README.md, 2026-12-02 after midnight).
SINGLE_STUDY_P50_MS = 1.314
POLL = 0.002  # seconds between screen reads while a record is not yet on screen (and between looks otherwise)
FRAME_DEADLINE = 60.0  # seconds the console may take to show its rows
SEEN_DEADLINE = 10.0  # a record not on its row this long after its write counts as missed
SETTLE = 3.0  # seconds after the studies go quiet before the idle phase is measured
TOOLONG_SETTLE = 2.0  # seconds between toolong's first screen and the first streamed record
TOOLONG_STARTS = 10  # starts of toolong tried until one follows its ledgers (48 tabs: its race is frequent)
STALL_SECONDS = 5.0  # toolong further behind than this many seconds of records has stopped following
TRIGGER_DEADLINE = 60.0  # seconds one trigger (request → kill → resumed and settled) may take
TRIGGER_GAP = 0.5  # seconds between a resumed study's settlement and the next request
END_DEADLINE = 120.0  # seconds the consoles are given to end after the halt (48 studies are judged)
STAGES = {"proposal": 0, "diagnosis": 1}
ROW_ID = re.compile(r"^┃ [› ][▶ ] (\S+) ")
TITLES = re.compile(r"^┃\s+study\s+state\s+round\s")
ROW_POSITION = re.compile(r"\s(r\d+|-)\s+(\S+)\s")
SUMMARY = re.compile(r"^[✓✗?] .* checks? (hold|failed|unknown)")


class BenchFailed(RuntimeError):
    """The run could not be measured (a program ended early, a study did not start, a kill did not come)."""


def err(text: str) -> None:
    """Progress and failures, on standard error."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "max": max(values) if values else math.nan,
    }


# --- the studies ------------------------------------------------------------------------
@dataclass
class Layout:
    """The ids of the big command, and which of them are timed and armed."""

    ids: list[str]
    marked: list[str]
    armed: str


def layout(studies: int) -> Layout:
    """Ids ``s01``..; the timed ones spread over the rows that fit the screen, the armed one among them."""
    ids = [f"s{i:0{max(2, len(str(studies)))}d}" for i in range(1, studies + 1)]
    shown = min(studies, HEIGHT - 6)  # the machine line, the box's two borders, its two header lines, the footer
    count = min(MARKED, studies - 1)
    marked_at = sorted({round(k * (shown - 1) / (count - 1)) for k in range(count)}) if count > 1 else [0]
    armed_at = min((i for i in range(studies) if i not in marked_at), key=lambda i: abs(i - shown // 2))
    return Layout(ids, [ids[i] for i in marked_at], ids[armed_at])


def set_phase(work: Path, phase: str) -> None:
    # Written whole then renamed, so a study never reads half a word.
    tmp = work / "control.tmp"
    tmp.write_text(phase, encoding="utf-8")
    os.replace(tmp, work / "control")


def template(work: Path, name: str, rate: float, lay: Layout | None, triggers: int) -> Path:
    path = work / f"template-{name}.json"
    cfg: dict[str, Any] = {
        "command": ["python3", str(BENCH / "manystudy.py")],
        "backend": "process",
        "containerPrefix": "bench",
        "controlFile": str(work / "control"),
        "rate": rate,
        "spread": True,
        "maxSeconds": 3600,
    }
    if lay is not None:
        cfg.update({"timed": lay.marked, "armed": [lay.armed], "timesFile": str(work / "times"),
                    "triggerDir": str(work / "triggers"), "budget": triggers})
    path.write_text(json.dumps(cfg), encoding="utf-8")
    return path


def ledger(out: Path) -> Path:
    return out / "study" / "ledger.jsonl"


def controller_pids(outs: list[Path]) -> list[int]:
    pids = []
    for out in outs:
        starts = [json.loads(x) for x in (out / "launches.jsonl").read_text().splitlines() if '"start"' in x]
        if starts and isinstance(starts[-1].get("pid"), int):
            pids.append(starts[-1]["pid"])
    return pids


def keeper_pids(outs: list[Path]) -> list[int]:
    pids = []
    for out in outs:
        for x in (out / "launches.jsonl").read_text().splitlines():
            rec = json.loads(x)
            if rec.get("event") == "start" and isinstance(rec.get("keeper"), int):
                pids.append(rec["keeper"])
    return pids


class Times:
    """The timed studies' times file, read as it grows: one :class:`Write` per line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.rest = b""

    def read(self) -> list[Write]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        *lines, self.rest = (self.rest + data).split(b"\n")
        out = []
        for raw in lines:
            parts = raw.decode().split()
            if len(parts) == 7:
                out.append(Write(parts[0], int(parts[1]), parts[2], parts[3], parts[4], float(parts[5]),
                                 float(parts[6])))
        return out


@dataclass
class Write:
    """One timed record: its study, seq, kind, round and stage (or run), and when it was written."""

    study: str
    seq: int
    kind: str
    round: str
    what: str
    monotonic: float
    wall: float

    def position(self) -> tuple[int, int]:
        return int(self.round), STAGES[self.what]


# --- the screens --------------------------------------------------------------------------
def overview_rows(screen: str) -> dict[str, tuple[int, int] | None]:
    """Per row on screen, in order: the study's id -> (round, stage) its row shows (None: not yet any)."""
    rows: dict[str, tuple[int, int] | None] = {}
    for text in screen.splitlines():
        m = ROW_ID.match(text)
        if m is None or TITLES.match(text):
            continue
        pos = ROW_POSITION.search(text, m.end())
        if pos is not None and pos.group(1) != "-" and pos.group(2) in STAGES:
            rows[m.group(1)] = (int(pos.group(1)[1:]), STAGES[pos.group(2)])
        else:
            rows[m.group(1)] = None
    return rows


def rows_that_fit(screen: str) -> int:
    """How many row lines the overview's box holds: from its column titles to its bottom border."""
    lines = screen.splitlines()
    top = next((i for i, x in enumerate(lines) if TITLES.match(x)), None)
    bottom = next((i for i, x in enumerate(lines) if x.startswith("┗")), None)
    return bottom - top - 1 if top is not None and bottom is not None and bottom > top else 0


def shows_rows(screen: str, ids: list[str]) -> bool:
    """Every row that fits shows its study, in the command's order, under a header that counts them all."""
    fit = rows_that_fit(screen)
    return (f"{len(ids)} studies" in screen and fit > 0
            and list(overview_rows(screen)) == ids[: min(len(ids), fit)])


def all_running(screen: str, n: int) -> bool:
    return re.search(rf"\b{n} studies\s+·\s+{n} running\b", screen) is not None


@dataclass
class Frame:
    """The big console's start, seconds from the request to tmux."""

    paint_s: float
    rows_s: float
    running_s: float
    rows_shown: int
    rss_mb: float


def first_frame(term: Terminals, argv: list[str], env: dict[str, str], cwd: Path, ids: list[str]) -> tuple[int, Frame]:
    """Start the console; its pid and when its screen first painted, showed its rows, said every study runs."""
    began = time.perf_counter()
    pid = term.start("console", argv, env=env, cwd=str(cwd))
    paint: float | None = None
    rows: float | None = None
    shown, rss = 0, math.nan
    while True:
        screen = term.screen("console")
        now = time.perf_counter() - began
        if paint is None and screen.strip():
            paint = now
        if rows is None and shows_rows(screen, ids):
            rows, shown = now, len(overview_rows(screen))
            rss = psutil.Process(pid).memory_info().rss / 1e6
        if rows is not None and all_running(screen, len(ids)):
            return pid, Frame(paint if paint is not None else rows, rows, now, shown, rss)
        if now > FRAME_DEADLINE:
            raise BenchFailed(f"the console did not show its {len(ids)} rows running within {FRAME_DEADLINE:.0f} s; "
                              f"last screen:\n{screen}")
        if term.pane_dead("console")[0]:
            raise BenchFailed(f"the console ended before its first frame; last screen:\n{screen}")
        time.sleep(POLL)


# --- record -> row ----------------------------------------------------------------------
@dataclass
class RowWatch:
    """The marked studies' ``stageOpen`` records, and when the big console's screen first showed each on its row."""

    marked: list[str]
    since: float = 0.0  # monotonic: records written before are not counted
    until: float = math.inf  # nor those written after
    writes: list[Write] = field(default_factory=list)
    seen: dict[tuple[str, int], float] = field(default_factory=dict)  # (study, seq) -> monotonic
    looks: int = 0
    look_seconds: float = 0.0

    def outstanding(self, now: float) -> list[Write]:
        return [w for w in self.writes if (w.study, w.seq) not in self.seen and now - w.monotonic < SEEN_DEADLINE]

    def take(self, writes: list[Write]) -> None:
        self.writes += [w for w in writes if w.study in self.marked and w.kind == "stageOpen"
                        and w.what in STAGES and self.since <= w.monotonic < self.until]

    def look(self, term: Terminals) -> None:
        """Read the screen once if a record is outstanding; note each one its row now shows."""
        began = time.monotonic()
        waiting = self.outstanding(began)
        if not waiting:
            return
        rows = overview_rows(term.screen("console"))
        at = time.monotonic()
        for w in waiting:
            shown = rows.get(w.study)
            if shown is not None and shown >= w.position():
                self.seen[(w.study, w.seq)] = at
        self.looks += 1
        self.look_seconds += at - began

    def latencies(self) -> list[float]:
        """Write → on its row, ms, per record seen (in write order)."""
        seen = self.seen
        return [1000 * (seen[(w.study, w.seq)] - w.monotonic) for w in self.writes if (w.study, w.seq) in seen]

    def missed(self) -> int:
        return sum(1 for w in self.writes if (w.study, w.seq) not in self.seen)

    def split(self, work: Path) -> tuple[list[float], list[float]]:
        """Write → the console's read (``seenAt``, whole ms), and read → on its row (ms), for records with both."""
        reads = {s: timeline_reads(work / s) for s in self.marked}
        engine, screen = [], []
        for w in self.writes:
            got = self.seen.get((w.study, w.seq))
            read = reads[w.study].get(w.seq)
            if got is not None and read is not None:
                engine.append(1000 * (read - w.wall))
                screen.append(1000 * (got - w.monotonic) - 1000 * (read - w.wall))
        return engine, screen


# --- the armed study's kills --------------------------------------------------------------
@dataclass
class Kill:
    """One trigger: the run, when its runStarted was written (wall) and what kill.json says."""

    index: int
    run: str
    wrote: float
    seen: float
    sent: float

    @property
    def reaction_ms(self) -> float:
        return 1000 * (self.sent - self.wrote)

    @property
    def notice_ms(self) -> float:
        return 1000 * (self.seen - self.wrote)

    @property
    def act_ms(self) -> float:
        return 1000 * (self.sent - self.seen)


class Triggers:
    """Asks the armed study for its diagnosis runs one at a time; each killed, resumed and settled before the next."""

    def __init__(self, work: Path, study: str, count: int, silent: bool) -> None:
        self.work, self.study, self.count, self.silent = work, study, count, silent
        self.out = work / study
        self.kills: list[Kill] = []
        self.asked = 0
        self.state = "gap"
        self.since = time.monotonic()
        self.deadline = math.inf
        self.next_look = 0.0

    @property
    def done(self) -> bool:
        return len(self.kills) >= self.count and self.state == "gap"

    def step(self) -> None:
        now = time.monotonic()
        if now > self.deadline:
            raise BenchFailed(f"trigger {self.asked} of {self.study} was not killed, resumed and settled within "
                              f"{TRIGGER_DEADLINE:.0f} s (state {self.state}); see {self.out}")
        if self.state == "gap":
            if self.asked < self.count and now - self.since >= TRIGGER_GAP:
                self.asked += 1
                tmp = self.work / "triggers" / f"{self.study}.tmp"
                tmp.write_text(str(self.asked), encoding="utf-8")
                os.replace(tmp, self.work / "triggers" / self.study)
                self.state, self.deadline = "kill", now + TRIGGER_DEADLINE
        elif self.state == "kill":
            run = f"d{self.asked}"
            kill_json = self.out / "kills" / str(self.asked) / "kill.json"
            if not kill_json.is_file():
                return
            try:
                kill = json.loads(kill_json.read_text(encoding="utf-8"))
                sent, seen = float(kill["killSentEpoch"]), float(kill["triggerSeenEpoch"])
            except (ValueError, KeyError, TypeError):
                return  # not whole yet
            self.kills.append(Kill(self.asked, run, wrote_at(self.out, run), seen, sent))
            if not self.silent:
                k = self.kills[-1]
                err(f"kill {self.asked}/{self.count} of {self.study}: {k.reaction_ms:.3f} ms "
                    f"(notice {k.notice_ms:.3f}, act {k.act_ms:.3f})")
            self.state = "settle"
        elif self.state == "settle" and now >= self.next_look:
            self.next_look = now + 0.02  # the ledger is read whole: not every 2 ms
            settled = ledger(self.out).read_bytes().count(b'"kind":"diagnosisSettlement"')
            if settled >= self.asked:
                self.state, self.since, self.deadline = "gap", now, math.inf


def wrote_at(out: Path, run: str) -> float:
    """``content.wroteAt`` of ``run``'s ``runStarted``: the time taken just before its write."""
    for raw in ledger(out).read_bytes().splitlines():
        if b'"runStarted"' in raw:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                rec = json.loads(raw)
                if rec["kind"] == "runStarted" and rec["content"]["run"] == run:
                    return float(rec["content"]["wroteAt"])
    raise BenchFailed(f"no runStarted of {run} with wroteAt in {ledger(out)}")


FLOOR_CODE = ("import sys; sys.path.insert(0, {bench!r}); from many_studies import floor_worker; "
              "floor_worker({lines}, {path!r})")


def floor_worker(lines: int, path: str) -> None:
    """The machine's floor, until killed: a pause drawn like the study's, then the fixed work, timed (ms a line)."""
    with open(path, "a", encoding="utf-8") as fh:
        while True:
            time.sleep(random.uniform(*DELAY_MS) / 1e3)  # noqa: S311 - a pause, not a secret
            began = time.perf_counter()
            floor_work(lines)
            fh.write(f"{(time.perf_counter() - began) * 1e3:.6f}\n")
            fh.flush()


# --- sampling ---------------------------------------------------------------------------
class Kept(Watched):
    """:class:`Watched` whose processes keep their last CPU time once they end (the armed study's killed
    controllers, a study that halted): a sum over the set never goes down."""

    def __init__(self, name: str, pids: list[int]) -> None:
        self.name = name
        self.procs = []
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                self.procs.append(psutil.Process(pid))
        self.last: dict[int, float] = {}

    def cpu(self) -> float:
        for p in self.procs:
            with contextlib.suppress(psutil.Error):
                t = p.cpu_times()
                self.last[p.pid] = t.user + t.system
        return sum(self.last.values())


def measure(watched: list[Watched], seconds: float, label: str, silent: bool,
            step: Callable[[], bool] | None = None) -> dict[str, Series]:
    """Sample every ``watched`` once a second for ``seconds`` (``step``: called every ~2 ms between samples, its
    True ends the phase at the next second); a :class:`Series` per name."""
    series = {w.name: Series() for w in watched}
    start = time.monotonic()
    first = {w.name: w.cpu() for w in watched}
    last_cpu, last_t = dict(first), start
    tick = 0
    finished = False
    while True:
        tick += 1
        wake = start + tick
        if (wake > start + seconds + 1e-6) or finished:
            break
        while (left := wake - time.monotonic()) > 0:
            if step is not None:
                finished = step() or finished
                time.sleep(min(POLL, max(0.0, wake - time.monotonic())))
            else:
                time.sleep(left)
        now = time.monotonic()
        line = []
        for w in watched:
            c = w.cpu()
            s = series[w.name]
            s.cpu.append(100.0 * (c - last_cpu[w.name]) / (now - last_t))
            s.rss_mb.append(w.rss())
            last_cpu[w.name] = c
            line.append(f"{w.name} {s.cpu[-1]:5.1f}%")
        last_t = now
        if not silent:
            shown = f"{tick}/{int(seconds)}" if math.isfinite(seconds) else str(tick)
            err(f"[{label} {shown} s] " + "  ".join(line))
        if not watched[0].alive():
            raise BenchFailed(f"{watched[0].name} ended during the {label} phase")
    for w in watched:
        s = series[w.name]
        s.cpu_seconds = w.cpu() - first[w.name]
        s.wall_seconds = time.monotonic() - start
    return series


# --- toolong --------------------------------------------------------------------------------
def toolong_lag(screen: str, first: Path) -> int:
    """The visible tab (the first ledger): its last seq minus the last seq on screen."""
    shown = [int(x) for x in re.findall(r'"seq":(\d+),', screen)]
    return last_seq(first) - (max(shown) if shown else 0)


def fixed_toolong(command: str) -> list[str]:
    """``tl`` as ``toolong_fixed.py`` under toolong's own interpreter (the one on its ``#!`` line); else as it is."""
    try:
        with open(command, "rb") as f:
            first = f.readline(4096).decode("utf-8", "replace")
    except OSError:
        return [command]
    python = first[2:].strip().split(" ")[0] if first.startswith("#!") else ""
    return [python, str(BENCH / "toolong_fixed.py")] if "python" in Path(python).name and Path(python).exists() \
        else [command]


def start_toolong(term: Terminals, command: str, ledgers: list[Path], work: Path) -> int:
    """toolong on every ledger (a tab each), its first screen drawn; its pid (see console_load.start_toolong)."""
    term.kill_session("toolong")
    pid = term.start("toolong", [*fixed_toolong(command), *map(str, ledgers)], cwd=str(work))
    term.wait_for("toolong", lambda s: re.search(r'"seq":\d+,', s) is not None, 60, "toolong's first screen")
    time.sleep(TOOLONG_SETTLE)
    return pid


def toolong_following(term: Terminals, args: argparse.Namespace, ledgers: list[Path], work: Path) -> tuple[int, int]:
    """After the warm-up: toolong's pid once its screen follows, and how many starts that took.

    One watcher thread serves every tab, so the visible tab following means all do; a
    toolong that stopped is started again, with the studies paused, until one follows.
    """
    pid = term.pane_pid("toolong")
    behind = 0
    for starts in range(1, TOOLONG_STARTS + 1):
        behind = toolong_lag(term.screen("toolong"), ledgers[0])
        if behind <= args.rate + 1:
            return pid, starts
        if starts == TOOLONG_STARTS:
            break
        set_phase(work, "idle")
        time.sleep(SETTLE)
        pid = start_toolong(term, args.toolong, ledgers, work)
        set_phase(work, "stream")
        time.sleep(max(args.warmup, 2.0))
    raise BenchFailed(f"toolong did not follow its ledgers in {TOOLONG_STARTS} starts ({behind} records behind)")


# --- the run ------------------------------------------------------------------------------
def console_argv(template_path: Path, pairs: list[str], kills: list[str]) -> list[str]:
    return [sys.executable, "-m", "studymon.tui.cli", "run", "--exit-when-done", "--template", str(template_path),
            *kills, *pairs]


def wait_ledgers(term: Terminals, outs: list[Path], what: str) -> None:
    deadline = time.monotonic() + 60
    while not all(ledger(o).is_file() and ledger(o).stat().st_size for o in outs):
        if time.monotonic() > deadline or term.pane_dead("console")[0]:
            raise BenchFailed(f"the {what} did not start; console screen:\n{term.screen('console')}")
        time.sleep(0.05)


def console_end(term: Terminals, deadline: float) -> tuple[int | None, str]:
    """The console's exit status after the halt, and its summary line."""
    while not term.pane_dead("console")[0]:
        if time.monotonic() > deadline:
            raise BenchFailed("a console did not end after the studies halted:\n" + term.screen("console"))
        time.sleep(0.2)
    status = term.pane_dead("console")[1]
    final = term.everything("console")
    line = next((x.strip() for x in final.splitlines() if SUMMARY.match(x)), "")
    return status, line


def run(args: argparse.Namespace, work: Path, terms: list[Terminals], children: list[subprocess.Popen[bytes]]
        ) -> dict[str, Any]:
    lay = layout(args.studies)
    locks = work / "locks"
    locks.mkdir(mode=0o700)
    (work / "triggers").mkdir()
    env = {"PYTHONPATH": str(ROOT), "STUDYMON_PROCESS_RUNTIME": str(work / "runtime"),
           "STUDYMON_LOCK_DIR": str(locks), **args.console_env}
    floor_lines = calibrate_floor()  # before anything runs
    set_phase(work, "idle")
    probe = Probe(work / "probe.txt")  # the machine's speed all through the run, phase by phase
    children.append(probe.proc)
    windows: dict[str, tuple[float, float]] = {}
    outs = [work / s for s in lay.ids]
    three_outs = [work / s for s in THREE]
    three_rate = args.studies * args.rate / len(THREE)

    # 1. The big console, its first frame timed.
    many = Terminals("studymon-many", WIDTH, HEIGHT)
    terms.append(many)
    many.start_server()
    kills = [f"--kill={lay.armed}:after:runStarted/diagnosis"] * args.triggers
    argv = console_argv(template(work, "many", args.rate, lay, args.triggers),
                        [f"{s}={work / s}" for s in lay.ids], kills)
    since = time.monotonic()
    many_pid, frame = first_frame(many, argv, env, work, lay.ids)
    windows["frame"] = (since, time.monotonic())
    if not args.silent:
        err(f"first frame: paint {frame.paint_s:.3f} s, rows {frame.rows_s:.3f} s ({frame.rows_shown} shown), "
            f"every study running {frame.running_s:.3f} s")
    wait_ledgers(many, outs, f"{args.studies} studies")
    rows = overview_rows(many.screen("console"))
    hidden = [s for s in [*lay.marked, lay.armed] if s not in rows]
    if hidden:
        raise BenchFailed(f"the rows of {', '.join(hidden)} are not on the screen")

    # 2. The three studies at the same total rate, and toolong on the 48 ledgers.
    three = Terminals("studymon-three", WIDTH, HEIGHT)
    terms.append(three)
    three.start_server()
    three_pid = three.start("console", console_argv(template(work, "three", three_rate, None, 0),
                                                   [f"{s}={work / s}" for s in THREE], []), env=env, cwd=str(work))
    wait_ledgers(three, three_outs, "three studies")
    three.wait_for("console", lambda s: all(f" {x} " in s for x in THREE) and "following" in s, 60, "the three panes")
    tl: Terminals | None = None
    if args.toolong:
        tl = Terminals("toolong-many", WIDTH, HEIGHT)
        terms.append(tl)
        tl.start_server()
        start_toolong(tl, args.toolong, [ledger(o) for o in outs], work)

    # 3. Streaming: warm-up, then measured, with the marked rows timed.
    set_phase(work, "stream")
    time.sleep(args.warmup)
    toolong_starts = 0
    tl_pid = None
    if tl is not None:
        tl_pid, toolong_starts = toolong_following(tl, args, [ledger(o) for o in outs], work)

    n = args.studies

    def watched() -> list[Watched]:
        found = [Kept(f"studymon({n})", [many_pid]), Kept("studymon(3)", [three_pid])]
        if tl_pid is not None:
            found.append(Kept("toolong", [tl_pid]))
        found += [Kept(f"tmux({n})", [server_pid(many)]), Kept("tmux(3)", [server_pid(three)])]
        if tl is not None:
            found.append(Kept("tmux(toolong)", [server_pid(tl)]))
        found += [Kept(f"studies({n})", controller_pids(outs)), Kept("studies(3)", controller_pids(three_outs)),
                  Kept("keepers", keeper_pids(outs + three_outs))]
        return found

    times = Times(work / "times")
    rows_watch = RowWatch(lay.marked, since=time.monotonic())
    times.read()  # what the warm-up wrote is not counted

    def look() -> bool:
        rows_watch.take(times.read())
        rows_watch.look(many)
        return False

    seq0 = [last_seq(ledger(o)) for o in outs + three_outs]
    rows_watch.since = time.monotonic()
    since = time.monotonic()
    streaming = measure(watched(), args.seconds, "streaming", args.silent, look)
    windows["streaming"] = (since, time.monotonic())
    rows_watch.until = time.monotonic()
    seq1 = [last_seq(ledger(o)) for o in outs + three_outs]
    # The records written in the last moments: their rows are still read for.
    end = time.monotonic() + SEEN_DEADLINE
    while rows_watch.outstanding(time.monotonic()) and time.monotonic() < end:
        look()
        time.sleep(POLL)
    toolong_behind = toolong_lag(tl.screen("toolong"), ledger(outs[0])) if tl is not None else None

    # 4. Armed: the kills, the others streaming on, the machine's floor beside them.
    triggers = Triggers(work, lay.armed, args.triggers, args.silent)
    floor_path = work / "floor.txt"
    floor = subprocess.Popen([sys.executable, "-c", FLOOR_CODE.format(bench=str(BENCH), lines=floor_lines,
                                                                     path=str(floor_path))],
                             stdin=subprocess.DEVNULL, start_new_session=True)
    children.append(floor)

    def trigger() -> bool:
        triggers.step()
        return triggers.done

    since = time.monotonic()
    try:
        armed = measure(watched(), math.inf, "armed", args.silent, trigger)
        windows["armed"] = (since, time.monotonic())
    finally:
        floor.kill()
        floor.wait()
    # Whole lines only: the worker may have been killed inside a write.
    floor_text = floor_path.read_text(encoding="utf-8") if floor_path.is_file() else ""
    floor_ms = [float(x) for x in floor_text.split("\n")[:-1]]

    # 5. Idle.
    set_phase(work, "idle")
    time.sleep(SETTLE)
    since = time.monotonic()
    idle = measure(watched(), args.idle_seconds, "idle", args.silent)
    windows["idle"] = (since, time.monotonic())
    probe.stop()
    during = {phase: probe.median(*w) for phase, w in windows.items()}

    # 6. The end: the studies halt, the consoles judge them and end.
    set_phase(work, "halt")
    deadline = time.monotonic() + END_DEADLINE
    many_exit = console_end(many, deadline)
    three_exit = console_end(three, deadline)
    return {
        "layout": asdict(lay),
        "frame": frame,
        "streaming": streaming,
        "armed": armed,
        "idle": idle,
        "rows": rows_watch,
        "split": rows_watch.split(work),
        "kills": triggers.kills,
        "floor": floor_ms,
        "floorLines": floor_lines,
        "rates": [(b - a) / args.seconds for a, b in zip(seq0, seq1, strict=True)],
        "threeRate": three_rate,
        "toolongStarts": toolong_starts,
        "toolongBehind": toolong_behind,
        "exits": {"many": many_exit, "three": three_exit},
        "during": {phase: rate for phase, rate in during.items() if rate is not None},
        "windows": windows,
    }


# --- the report ---------------------------------------------------------------------------
PHASES = ("streaming", "armed", "idle")


def kill_summary(res: dict[str, Any]) -> dict[str, Any]:
    kills: list[Kill] = res["kills"]
    reaction = summary([k.reaction_ms for k in kills])
    reaction["over2xP50"] = sum(1 for k in kills if k.reaction_ms > 2 * reaction["p50"])
    return {"reaction": reaction, "notice": summary([k.notice_ms for k in kills]),
            "act": summary([k.act_ms for k in kills]), "floor": floor_summary(res["floor"])}


def verdicts(res: dict[str, Any], args: argparse.Namespace) -> dict[str, tuple[bool, str]]:
    name = f"studymon({args.studies})"
    s, i = res["streaming"][name], res["idle"][name]
    # CPU and time targets are the nominal machine's, times this one's scale during the phase (machine_speed.py).
    speed: Speed = res["speed"]
    xs, xi, xf = speed.scale_of("streaming"), speed.scale_of("idle"), speed.scale_of("frame")
    stream_cpu, idle_cpu, frame_s = TARGET_STREAM_CPU * xs, TARGET_IDLE_CPU * xi, TARGET_FRAME_S * xf
    rss = max(res[p][name].summary()["rssMaxMb"] for p in PHASES)
    lat = summary(res["rows"].latencies())
    ks = kill_summary(res)
    k, f = ks["reaction"], ks["floor"]
    spread, floor_spread = k["p99"] / k["p50"], f["p99"] / f["p50"]
    bound = f["p50"] + SINGLE_STUDY_P50_MS
    return {
        f"streaming CPU <= {TARGET_STREAM_CPU:g} % of a nominal core": (
            s.mean <= stream_cpu, f"{s.mean:.2f} % against {stream_cpu:.2f} % here; {s.mean / xs:.2f} % nominal"),
        f"idle CPU <= {TARGET_IDLE_CPU:g} % of a nominal core": (
            i.mean <= idle_cpu, f"{i.mean:.2f} % against {idle_cpu:.2f} % here; {i.mean / xi:.2f} % nominal"),
        f"RSS <= {TARGET_RSS_MB:g} MB": (rss <= TARGET_RSS_MB, f"{rss:.1f} MB"),
        f"first frame <= {TARGET_FRAME_S:g} s on a nominal core": (
            res["frame"].rows_s <= frame_s,
            f"{res['frame'].rows_s:.3f} s against {frame_s:.3f} s here; {res['frame'].rows_s / xf:.3f} s nominal"),
        f"record -> row p90 <= {TARGET_ROW_P90_MS:g} ms, none missed": (
            lat["p90"] <= TARGET_ROW_P90_MS and res["rows"].missed() == 0,
            f"p90 {lat['p90']:.1f} ms, {res['rows'].missed()} missed"),
        "armed kill reaction within the machine's floor": (
            k["p50"] <= bound and spread <= floor_spread,
            (f"p50 {k['p50']:.3f} ms vs floor p50 + single study {bound:.3f} ms; "
             f"p99/p50 x{spread:.1f} vs floor x{floor_spread:.1f}")),
    }


def report(res: dict[str, Any], args: argparse.Namespace) -> str:
    lay = res["layout"]
    n = args.studies
    big = f"studymon({n})"
    rates = res["rates"]
    many_rates, three_rates = rates[:n], rates[n:]
    baseline = "toolong on the same ledgers" if "toolong" in res["streaming"] else "no toolong"
    rows = [
        (f"many studies: {n} studies x {args.rate:g} records/s ({n * args.rate:g} records/s) for {args.seconds:g} s, "
         f"then {len(res['kills'])} kills, then idle {args.idle_seconds:g} s; beside {len(THREE)} studies x "
         f"{res['threeRate']:g} records/s and {baseline}; tmux {WIDTH}x{HEIGHT}; {os.cpu_count()} cores, "
         f"Python {platform.python_version()}"),
    ]
    if "toolong" not in res["streaming"]:
        rows.append("studymon measured without toolong (--no-toolong)" if args.no_toolong
                    else "toolong not found: measured without it")
    rows += [
        (f"rows timed: {', '.join(lay['marked'])}; armed: {lay['armed']} (--kill {lay['armed']}:after:runStarted/"
         f"diagnosis, {args.triggers} times)"),
        (f"records written per second while streaming: {n} studies {sum(many_rates):.1f} (a study "
         f"{min(many_rates):.2f}-{max(many_rates):.2f}), {len(THREE)} studies {sum(three_rates):.1f}"),
        "",
        f"{'process':<16}{'phase':<11}{'CPU mean %':>11}{'p90 %':>8}{'max %':>8}{'RSS max MB':>12}",
    ]
    for name in res["streaming"]:
        for phase in PHASES:
            if name not in res[phase]:
                continue
            s = res[phase][name].summary()
            rows.append(f"{name:<16}{phase:<11}{s['cpuMean']:>11.2f}{s['cpuP90']:>8.1f}{s['cpuMax']:>8.1f}"
                        f"{s['rssMaxMb']:>12.1f}")
    rows.append("")
    for other in ("studymon(3)", "toolong"):
        if other not in res["streaming"]:
            continue
        parts = []
        for phase in ("streaming", "idle"):
            a, b = res[phase][big], res[phase][other]
            parts.append(f"{phase} CPU x{a.mean / b.mean if b.mean else math.inf:.2f}")
        rss = max(res[p][big].summary()["rssMaxMb"] for p in PHASES) / max(
            res[p][other].summary()["rssMaxMb"] for p in PHASES)
        rows.append(f"ratio {big}/{other}: {', '.join(parts)}, RSS x{rss:.2f}")
    fr = res["frame"]
    rows.append(f"first frame of the overview, s: paint {fr.paint_s:.3f}, every row that fits {fr.rows_s:.3f} "
                f"({fr.rows_shown} of {n} rows fit; the header counts all {n}), every study shown running "
                f"{fr.running_s:.3f}; RSS at the frame {fr.rss_mb:.1f} MB")
    lat = summary(res["rows"].latencies())
    rows.append(f"record -> its row on screen (stageOpen of {len(lay['marked'])} studies), ms: n {lat['n']}, "
                f"p50 {lat['p50']:.1f} / p90 {lat['p90']:.1f} / max {lat['max']:.1f}, missed {res['rows'].missed()}")
    engine, screen = res["split"]
    e, sc = summary(engine), summary(screen)
    rows.append(f"  write -> engine read (timeline seenAt, whole ms): p50 {e['p50']:.1f} / p90 {e['p90']:.1f} / "
                f"max {e['max']:.1f}; engine read -> on its row: p50 {sc['p50']:.1f} / p90 {sc['p90']:.1f} / "
                f"max {sc['max']:.1f}")
    if res["rows"].looks:
        per = 1000 * res["rows"].look_seconds / res["rows"].looks
        rows.append(f"  screen read every {1000 * POLL + per:.1f} ms while a record was outstanding "
                    f"({per:.2f} ms a read)")
    ks = kill_summary(res)
    k, no, ac, f = ks["reaction"], ks["notice"], ks["act"], ks["floor"]
    rows.append(f"armed study {lay['armed']}, record written -> SIGKILL sent, ms, {k['n']} kills while the others "
                f"stream: p50 {k['p50']:.3f} / p99 {k['p99']:.3f} / max {k['max']:.3f}; over 2x its p50: "
                f"{k['over2xP50']}/{k['n']}")
    rows.append(f"  notice p50 {no['p50']:.3f} / p99 {no['p99']:.3f}; act p50 {ac['p50']:.3f} / p99 {ac['p99']:.3f}")
    rows.append(floor_line(f).replace("in this process", "in a process of its own"))
    rows.append(f"p99/p50: armed x{k['p99'] / k['p50']:.1f}, floor x{f['p99'] / f['p50']:.1f}; p50: armed "
                f"{k['p50']:.3f} ms, floor {f['p50']:.3f} ms, single study alone (kill_reaction.py) "
                f"{SINGLE_STUDY_P50_MS:.3f} ms")
    for key, label in (("many", big), ("three", "studymon(3)")):
        status, line = res["exits"][key]
        rows.append(f"{label} exit status {status}: {line or '(no summary line)'}")
    if res["toolongStarts"] > 1:
        rows.append(f"toolong was started {res['toolongStarts']} times: the earlier ones stopped following their "
                    "ledgers (their watcher thread ended) before the measurement")
    stalled = toolong_stalled(res, args)
    if stalled is not None:
        rows.append(f"toolong stopped following its ledgers ({stalled} records behind at the end of streaming): "
                    "its numbers are not comparable; run again")
    rows.append(res["speed"].line())
    for name, (ok, detail) in verdicts(res, args).items():
        rows.append(f"target {name}: {'met' if ok else 'MISSED'} ({detail})")
    return "\n".join(rows)


def toolong_stalled(res: dict[str, Any], args: argparse.Namespace) -> int | None:
    behind = res["toolongBehind"]
    return behind if behind is not None and behind > args.rate * STALL_SECONDS else None


def as_json(res: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    rw: RowWatch = res["rows"]
    return {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "speed": res["speed"].as_json(), "windows": res["windows"]},
        "studies": args.studies, "rate": args.rate, "seconds": args.seconds, "idleSeconds": args.idle_seconds,
        "triggers": args.triggers, "threeRate": res["threeRate"], "layout": res["layout"],
        "summary": {p: {k: v.summary() for k, v in res[p].items()} for p in PHASES},
        "samples": {p: {k: asdict(v) for k, v in res[p].items()} for p in PHASES},
        "frame": asdict(res["frame"]),
        "rows": [{"study": w.study, "seq": w.seq, "round": int(w.round), "stage": w.what, "wroteMonotonic": w.monotonic,
                  "wroteEpoch": w.wall, "seen": rw.seen.get((w.study, w.seq))} for w in rw.writes],
        "kills": [asdict(k) | {"reactionMs": k.reaction_ms} for k in res["kills"]],
        "killSummary": kill_summary(res),
        "floorMs": res["floor"], "floorLines": res["floorLines"], "rates": res["rates"],
        "toolongStarts": res["toolongStarts"], "toolongBehind": res["toolongBehind"],
        "exits": {k: {"status": s, "summary": line} for k, (s, line) in res["exits"].items()},
        "targets": {k: {"met": ok, "value": d} for k, (ok, d) in verdicts(res, args).items()},
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--studies", type=int, default=None, help="studies under the big console (default 48; 12 with "
                   "--quick; more than 3, so the overview shows; at most 64)")
    p.add_argument("--rate", type=float, default=2.0, help="records a second per study while streaming (default 2)")
    p.add_argument("--seconds", type=float, default=None,
                   help="measured streaming seconds (default 60; 8 with --quick)")
    p.add_argument("--idle-seconds", type=float, default=None,
                   help="measured idle seconds (default 30; 5 with --quick)")
    p.add_argument("--warmup", type=float, default=None, help="unmeasured streaming seconds first (default 5; 2 with "
                   "--quick)")
    p.add_argument("--triggers", type=int, default=None, help="kills of the armed study (default 15; 2 with --quick)")
    p.add_argument("--quick", action="store_true", help="smoke run: 12 studies, 8 s streaming, 2 kills, 5 s idle; "
                   "without toolong when it is not found")
    p.add_argument("--toolong", default=None, metavar="CMD", help="the toolong command (default: tl on PATH)")
    p.add_argument("--no-toolong", action="store_true", help="measure studymon alone")
    p.add_argument("--console-env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra environment for both consoles (repeatable), e.g. to try a setting")
    p.add_argument("--json", type=Path, help="save every sample and the summary to this file")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    p.add_argument("--require-target", action="store_true", help="exit 1 when studymon misses a target")
    p.add_argument("--silent", action="store_true", help="no per-second progress on stderr")
    args = p.parse_args(argv)
    args.studies = args.studies if args.studies is not None else (12 if args.quick else 48)
    args.seconds = args.seconds if args.seconds is not None else (8.0 if args.quick else 60.0)
    args.idle_seconds = args.idle_seconds if args.idle_seconds is not None else (5.0 if args.quick else 30.0)
    args.warmup = args.warmup if args.warmup is not None else (2.0 if args.quick else 5.0)
    args.triggers = args.triggers if args.triggers is not None else (2 if args.quick else 15)
    if not 4 <= args.studies <= 64:
        p.error("--studies must be 4..64: more than 3 (the overview), at most a command's 64")
    if args.seconds < 1 or args.idle_seconds < 1 or args.rate <= 0 or args.triggers < 1:
        p.error("--seconds and --idle-seconds must be >= 1, --rate > 0, --triggers >= 1")
    try:
        args.console_env = dict(kv.split("=", 1) for kv in args.console_env)
    except ValueError:
        p.error("--console-env takes KEY=VALUE")
    args.toolong = None if args.no_toolong else find_toolong(args.toolong)
    if not args.no_toolong and args.toolong is None and not args.quick:
        p.error("toolong's tl was not found: pip install toolong (a virtual environment of its own keeps its Textual "
                "apart), then give --toolong PATH/TO/tl, or run with --no-toolong")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.time()
    work = Path(tempfile.mkdtemp(prefix="studymon-many-studies-"))
    signal.signal(signal.SIGTERM, interrupted)
    terms: list[Terminals] = []
    children: list[subprocess.Popen[bytes]] = []
    began = time.monotonic()
    speed_before = lines_per_second()  # the machine, before anything of the run starts
    try:
        res = run(args, work, terms, children)
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except (BenchFailed, TerminalError) as exc:
        err(f"many_studies: {exc}")
        return 2
    finally:
        with contextlib.suppress(OSError):
            set_phase(work, "halt")
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
        wait_ended(sorted(p.parent for p in work.glob("*/launches.jsonl")))
        for term in terms:
            term.close()
        sweep(work, started)
        if args.keep:
            err(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    res["speed"] = Speed(speed_before, lines_per_second(), res["during"])  # and once everything of it has ended
    sys.stdout.write(report(res, args) + "\n")
    sys.stdout.write(f"bench wall time: {time.monotonic() - began:.0f} s\n")
    if args.json:
        args.json.write_text(json.dumps(as_json(res, args), indent=2) + "\n", encoding="utf-8")
    met = all(ok for ok, _ in verdicts(res, args).values())
    return 1 if args.require_target and not met else 0


if __name__ == "__main__":
    sys.exit(main())
