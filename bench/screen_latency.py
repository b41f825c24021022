"""Screen latency: a ledger record written → its line on the console's screen, beside toolong; a kill's key → SIGKILL.

One study (``bench/markstudy.py``, no containers) is launched by the real
command line, ``studymon run --template ... lat=OUT``, so the real engine
and app watch it, drawing into a real terminal (tmux, 160x48).  Beside it,
in the same run, **toolong** (``tl``, from PyPI) tails the same
``OUT/study/ledger.jsonl`` in a terminal of its own (a tmux server of its
own too).  Every record the study writes is one ``os.write`` of a
``decision`` whose name is a marker unique in the ledger (``mk-00042``),
which both programs show; the study takes the time (``time.monotonic()``)
just before that write and notes it in a file outside ``OUT``.  The bench
reads both screens through tmux control-mode clients every 2 ms while a
written record is not yet on both, and notes when each marker first shows
on each: write → visible, per record and program.

Phases (a short warm-up first, not counted):

* **(a)** 40 records at random intervals of 0.3-1.1 s (``--seed``): a slow
  stream, where each record should show at once;
* **(b)** 50 records at 5 a second (``--rate-b``): a steady stream.

Then the **manual kill**: per kill a fresh study (not armed) under a fresh
``studymon run`` in its own terminal; the bench presses the keys of
:data:`KILL_KEYS` (``k`` opens the dialog, the last key confirms it), and
times from just before the confirming ``tmux send-keys`` to
``killSentEpoch`` of ``OUT/kills/1/kill.json`` (taken just before SIGKILL).

For studymon, write → visible is also split at the engine's read of the
record (``seenAt`` of ``OUT/timeline.jsonl``, wall clock, milliseconds):
*engine* (write → read: the notice, the wait for more appends) and *screen*
(read → visible: the event to the app, the stream's catch-up, Textual's
frame, tmux).

    python bench/screen_latency.py --toolong ~/.toolong/bin/tl    # (a), (b), 20 kills (~2.5 min)
    python bench/screen_latency.py --kills 50 --json latency.json
    python bench/screen_latency.py --quick                         # smoke run: 6 + 10 records, 2 kills (~30 s)

Targets (studymon), per phase: write → visible p90 ≤ toolong's and max ≤
100 ms; the kill's key → SIGKILL p99 ≤ 20 ms.  ``--quick`` runs studymon
alone when toolong is not found, and says so.  Exit status 0 when every
phase was measured (``--require-target``: 1 when a target is missed), 2 when
the run failed, 130 when interrupted.  Every process is killed and the
temporary folder removed on the way out (``--keep`` keeps it).
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
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from first_frame import find_toolong, interrupted, keeper_saw_end, sweep, wait_ended  # noqa: E402
from kill_reaction import percentile  # noqa: E402
from terminal import TerminalError, Terminals  # noqa: E402

STUDY = "lat"
MARK = re.compile(r"mk-\d{5}")
# The keys of a manual kill: the first opens the dialog (Cancel has the focus), the same key
# again confirms; the last is the one timed.
KILL_KEYS = ("k", "k")
KEY_PAUSE = 0.25  # seconds after each untimed key, for the console to take it in
POLL = 0.002  # seconds between screen reads while a written record is not yet on every screen
SEEN_DEADLINE = 10.0  # a record not on a screen this long after its write counts as missed
QUIET = 2.0  # seconds of no records before each phase, so it starts after a quiet spell (1 with --quick)
WARM_RECORDS = 5  # records of the warm-up (3 with --quick)
WARM_INTERVAL = 0.4
TOOLONG_STARTS = 5  # starts of toolong tried until one follows the ledger
TOOLONG_SETTLE = 2.0  # seconds between toolong's first screen and the first record
KILL_SETTLE = 1.0  # seconds between a kill study's first screen and the kill's first key
TARGET_MAX_MS = 100.0
TARGET_KILL_P99_MS = 20.0


class BenchFailed(RuntimeError):
    """The run could not be measured (a program ended early, a study did not start)."""


@dataclass
class Phase:
    """One phase's records and what each program's screen showed of them."""

    name: str
    title: str
    delays: list[float]
    writes: dict[str, tuple[int, float, float]] = field(default_factory=dict)  # marker -> seq, monotonic, wall
    seen: dict[str, dict[str, float]] = field(default_factory=dict)  # program -> marker -> monotonic
    engine_read: dict[str, float] = field(default_factory=dict)  # marker -> the console's seenAt (wall)
    looks: int = 0  # screen reads (of every program) while records were outstanding
    look_seconds: float = 0.0  # the time those reads took

    def latencies(self, program: str) -> list[float]:
        """Write → visible, ms, per record seen (in write order)."""
        seen = self.seen.get(program, {})
        return [1000 * (seen[m] - t) for m, (_, t, _) in self.writes.items() if m in seen]

    def missed(self, program: str) -> int:
        return sum(1 for m in self.writes if m not in self.seen.get(program, {}))

    def engine_split(self) -> tuple[list[float], list[float]]:
        """studymon's write → engine read, and engine read → visible (ms), for records with both."""
        seen = self.seen.get("studymon", {})
        engine, screen = [], []
        for m, (_, mono, wall) in self.writes.items():
            if m in seen and m in self.engine_read:
                read = self.engine_read[m]
                engine.append(1000 * (read - wall))
                screen.append(1000 * (seen[m] - mono) - 1000 * (read - wall))
        return engine, screen


def summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p90": percentile(values, 90),
        "p99": percentile(values, 99),
        "max": max(values) if values else math.nan,
    }


def phases(args: argparse.Namespace) -> list[Phase]:
    rng = random.Random(args.seed)  # noqa: S311 - a schedule, not a secret
    return [
        Phase("a", f"(a) {args.records_a} at 0.3-1.1 s",
              [round(rng.uniform(0.3, 1.1), 3) for _ in range(args.records_a)]),
        Phase("b", f"(b) {args.records_b} at {args.rate_b:g}/s", [1.0 / args.rate_b] * args.records_b),
    ]


# --- files ----------------------------------------------------------------------------
def set_control(path: Path, value: str) -> None:
    # Written whole then renamed, so the study never reads half a word.
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(value, encoding="utf-8")
    os.replace(tmp, path)


def template(work: Path, name: str, schedules: dict[str, list[float]]) -> Path:
    path = work / f"template-{name}.json"
    path.write_text(json.dumps({
        "command": ["python3", str(BENCH / "markstudy.py")],
        "backend": "process",
        "containerPrefix": "bench",
        "controlFile": str(work / f"control-{name}"),
        "timesFile": str(work / f"times-{name}"),
        "schedules": schedules,
        "maxSeconds": 3600,
    }), encoding="utf-8")
    set_control(work / f"control-{name}", "idle")
    return path


class Times:
    """The study's times file, read as it grows: each record's marker, seq and write times; schedules ended."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.rest = b""
        self.writes: dict[str, tuple[int, float, float, str]] = {}
        self.ended: set[str] = set()

    def read(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except FileNotFoundError:
            return
        self.offset += len(data)
        *lines, self.rest = (self.rest + data).split(b"\n")
        for raw in lines:
            parts = raw.decode().split()
            if len(parts) == 2 and parts[0] == "end":
                self.ended.add(parts[1])
            elif len(parts) == 5:
                self.writes[parts[1]] = (int(parts[0]), float(parts[2]), float(parts[3]), parts[4])


def timeline_reads(out: Path) -> dict[int, float]:
    """seq -> when the console read the record (``seenAt`` of ``timeline.jsonl``, wall clock)."""
    reads: dict[int, float] = {}
    with contextlib.suppress(FileNotFoundError):
        for raw in (out / "timeline.jsonl").read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                line = json.loads(raw)
                reads[int(line["seq"])] = datetime.fromisoformat(line["seenAt"]).timestamp()
    return reads


# --- the screens ----------------------------------------------------------------------
@dataclass
class Program:
    """One program under test: its name, its terminal server and session."""

    name: str
    term: Terminals
    session: str


def play(phase: Phase, programs: list[Program], times: Times, control: Path, silent: bool) -> None:
    """Have the study write ``phase``'s records; note when each marker first shows on each screen."""
    seen: dict[str, dict[str, float]] = {p.name: {} for p in programs}
    set_control(control, phase.name)
    turn = 0
    while True:
        times.read()
        now = time.monotonic()
        mine = {m: w for m, w in times.writes.items() if w[3] == phase.name}
        outstanding = [m for m, w in mine.items()
                       if now - w[1] < SEEN_DEADLINE and any(m not in seen[p.name] for p in programs)]
        if not outstanding:
            if phase.name in times.ended and len(mine) == len(phase.delays):
                break
            time.sleep(POLL / 2)
            continue
        # Which screen is read first alternates, so neither program is always read later.
        began = time.monotonic()
        order = programs if turn % 2 == 0 else programs[::-1]
        turn += 1
        for program in order:
            text = program.term.screen(program.session)
            at = time.monotonic()
            shown = seen[program.name]
            for m in MARK.findall(text):
                shown.setdefault(m, at)
        phase.looks += 1
        phase.look_seconds += time.monotonic() - began
        time.sleep(POLL)
    phase.writes = {m: (w[0], w[1], w[2]) for m, w in sorted(times.writes.items()) if w[3] == phase.name}
    phase.seen = seen
    if not silent:
        for p in programs:
            lat = phase.latencies(p.name)
            print(f"{phase.title}: {p.name} p50 {percentile(lat, 50):.0f} ms, max {max(lat, default=math.nan):.0f} ms, "
                  f"missed {phase.missed(p.name)}", file=sys.stderr, flush=True)


def console_argv(template_path: Path, study: str, out: Path) -> list[str]:
    return [sys.executable, "-m", "studymon.tui.cli", "run", "--exit-when-done", "--template", str(template_path), f"{study}={out}"]


def stream_line(seq: int) -> re.Pattern[str]:
    """studymon's line of record ``seq`` in a ledger stream."""
    return re.compile(rf"[┃│]\s*{seq} \d\d:\d\d:\d\d\.\d{{3}} ")


def start_console(term: Terminals, session: str, template_path: Path, study: str, out: Path,
                  env: dict[str, str], cwd: Path) -> int:
    """``studymon run`` on one study, its pane drawn with the study's first record; the console's pid."""
    pid = term.start(session, console_argv(template_path, study, out), env=env, cwd=str(cwd))
    first = stream_line(1)
    deadline = time.monotonic() + 60
    while True:
        screen = term.screen(session)
        if f" {study} " in screen and "running" in screen and first.search(screen):
            return pid
        if time.monotonic() > deadline or term.pane_dead(session)[0]:
            raise BenchFailed(f"the console of {study} did not show it running; its screen:\n{screen}")
        time.sleep(0.05)


def start_toolong(term: Terminals, command: str, ledger: Path, cwd: Path) -> None:
    term.kill_session("toolong")
    term.start("toolong", [command, str(ledger)], cwd=str(cwd))
    term.wait_for("toolong", lambda s: '"seq":1,' in s, 30, "toolong's first screen")
    time.sleep(TOOLONG_SETTLE)


def warm_up(programs: list[Program], times: Times, control: Path, args: argparse.Namespace, work: Path,
            ledger: Path) -> int:
    """Records nobody counts, until every program shows them (toolong started again if it does not); its starts."""
    for attempt in range(1, TOOLONG_STARTS + 1):
        phase = Phase(f"warm{attempt}", "warm-up", [WARM_INTERVAL] * args.warm_records)
        play(phase, programs, times, control, silent=True)
        stalled = [p for p in programs if phase.missed(p.name)]
        if not stalled:
            return attempt
        if any(p.name != "toolong" for p in stalled) or attempt == TOOLONG_STARTS:
            raise BenchFailed(f"{', '.join(p.name for p in stalled)} did not show the warm-up records")
        tl = next(p for p in programs if p.name == "toolong")
        start_toolong(tl.term, args.toolong, ledger, work)
    return TOOLONG_STARTS


# --- the manual kill ------------------------------------------------------------------
def one_kill(term: Terminals, work: Path, index: int, env: dict[str, str]) -> tuple[float, float]:
    """A fresh study under a fresh console, killed by keys: when the confirming key was sent and ``killSentEpoch``.

    It returns once the study's keeper has written the controller's end, so the evidence is whole.
    """
    study = f"k{index}"
    out = work / "kills" / study
    out.parent.mkdir(exist_ok=True)
    template_path = template(work, study, {})
    session = f"kill{index}"
    pid = start_console(term, session, template_path, study, out, env, work)
    try:
        time.sleep(KILL_SETTLE)
        term.keys(session, KILL_KEYS[0])
        term.wait_for(session, lambda s: f"Kill {study} now?" in s, 10, "the kill dialog", interval=0.02)
        for key in KILL_KEYS[1:-1]:
            time.sleep(KEY_PAUSE)
            term.keys(session, key)
        time.sleep(KEY_PAUSE)
        kill_json = out / "kills" / "1" / "kill.json"
        pressed = time.time()
        term.keys(session, KILL_KEYS[-1])
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(FileNotFoundError, ValueError):
                sent = json.loads(kill_json.read_text(encoding="utf-8")).get("killSentEpoch")
                if isinstance(sent, (int, float)):
                    break
            if time.monotonic() > deadline:
                raise BenchFailed(f"no killSentEpoch in {kill_json} 10 s after the key; "
                                  f"screen:\n{term.screen(session)}")
            time.sleep(0.005)
        while not keeper_saw_end(out):
            if time.monotonic() > deadline:
                raise BenchFailed(f"the keeper of {study} wrote no end line 10 s after the key")
            time.sleep(0.01)
        return pressed, float(sent)
    finally:
        term.kill_session(session)
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).wait(10)


# --- the run --------------------------------------------------------------------------
def run(args: argparse.Namespace, work: Path, terms: list[Terminals]) -> dict[str, Any]:
    locks = work / "locks"
    locks.mkdir(mode=0o700)
    env = {"PYTHONPATH": str(ROOT), "STUDYMON_PROCESS_RUNTIME": str(work / "runtime"),
           "STUDYMON_LOCK_DIR": str(locks), **args.console_env}
    todo = phases(args)
    schedules = {p.name: p.delays for p in todo}
    schedules.update({f"warm{i}": [WARM_INTERVAL] * args.warm_records for i in range(1, TOOLONG_STARTS + 1)})
    template_path = template(work, STUDY, schedules)
    control = work / f"control-{STUDY}"
    times = Times(work / f"times-{STUDY}")
    out = work / STUDY
    ledger = out / "study" / "ledger.jsonl"

    sm = Terminals("studymon-latency")
    terms.append(sm)
    sm.start_server()
    start_console(sm, "console", template_path, STUDY, out, env, work)
    programs = [Program("studymon", sm, "console")]
    if args.toolong:
        tl = Terminals("toolong-latency")
        terms.append(tl)
        tl.start_server()
        start_toolong(tl, args.toolong, ledger, work)
        programs.append(Program("toolong", tl, "toolong"))

    toolong_starts = warm_up(programs, times, control, args, work, ledger)
    for phase in todo:
        time.sleep(args.quiet)
        play(phase, programs, times, control, args.silent)
    reads = timeline_reads(out)
    for phase in todo:
        phase.engine_read = {m: reads[seq] for m, (seq, _, _) in phase.writes.items() if seq in reads}

    set_control(control, "halt")
    deadline = time.monotonic() + 60
    while not sm.pane_dead("console")[0]:
        if time.monotonic() > deadline:
            raise BenchFailed("the console did not end after the study halted:\n" + sm.screen("console"))
        time.sleep(0.1)
    status = sm.pane_dead("console")[1]

    kills: list[float] = []
    kill_times: list[tuple[float, float]] = []
    for i in range(1, args.kills + 1):
        pressed, sent = one_kill(sm, work, i, env)
        kill_times.append((pressed, sent))
        kills.append(1000 * (sent - pressed))
        if not args.silent:
            print(f"kill {i}: {kills[-1]:.2f} ms", file=sys.stderr, flush=True)
    return {"phases": todo, "programs": [p.name for p in programs], "kills": kills, "killTimes": kill_times,
            "consoleExit": status, "toolongStarts": toolong_starts}


def verdicts(res: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    out: dict[str, tuple[bool, str]] = {}
    for phase in res["phases"]:
        s = summary(phase.latencies("studymon"))
        out[f"{phase.title}: max <= {TARGET_MAX_MS:g} ms"] = (
            s["max"] <= TARGET_MAX_MS and not phase.missed("studymon"), f"{s['max']:.0f} ms")
        if "toolong" in res["programs"]:
            t = summary(phase.latencies("toolong"))
            out[f"{phase.title}: p90 <= toolong's"] = (s["p90"] <= t["p90"], f"{s['p90']:.0f} vs {t['p90']:.0f} ms")
    if res["kills"]:
        k = summary(res["kills"])
        out[f"kill key -> SIGKILL p99 <= {TARGET_KILL_P99_MS:g} ms"] = (k["p99"] <= TARGET_KILL_P99_MS,
                                                                      f"{k['p99']:.1f} ms")
    return out


def report(res: dict[str, Any], args: argparse.Namespace) -> str:
    rows = [
        (f"screen latency: a ledger record written -> its line on the screen, ms; "
         f"{' and '.join(res['programs'])} on the same ledger in the same run; tmux 160x48; "
         f"{os.cpu_count()} cores, Python {platform.python_version()}"),
    ]
    if "toolong" not in res["programs"]:
        alone = "studymon alone (--no-toolong)" if args.no_toolong else "toolong not found: studymon measured alone"
        rows.append(alone)
    rows += ["", f"{'phase':<22}{'program':<10}{'n':>4}{'p50':>8}{'p90':>8}{'max':>8}{'missed':>8}"]
    for phase in res["phases"]:
        for program in res["programs"]:
            s = summary(phase.latencies(program))
            rows.append(f"{phase.title:<22}{program:<10}{s['n']:>4}{s['p50']:>8.1f}{s['p90']:>8.1f}{s['max']:>8.1f}"
                        f"{phase.missed(program):>8}")
    rows.append("")
    for phase in res["phases"]:
        if "toolong" in res["programs"]:
            s, t = summary(phase.latencies("studymon")), summary(phase.latencies("toolong"))
            rows.append(f"ratio studymon/toolong {phase.title}: p50 x{s['p50'] / t['p50']:.2f}, "
                        f"p90 x{s['p90'] / t['p90']:.2f}, max x{s['max'] / t['max']:.2f}")
    for phase in res["phases"]:
        engine, screen = phase.engine_split()
        e, sc = summary(engine), summary(screen)
        rows.append(f"studymon {phase.title}, write -> engine read (timeline seenAt, whole ms): p50 {e['p50']:.1f} / "
                    f"p90 {e['p90']:.1f} / max {e['max']:.1f} ms; engine read -> visible: p50 {sc['p50']:.1f} / "
                    f"p90 {sc['p90']:.1f} / max {sc['max']:.1f} ms")
    looks = sum(p.looks for p in res["phases"])
    if looks:
        per = 1000 * sum(p.look_seconds for p in res["phases"]) / looks
        rows.append(f"screens read every {1000 * POLL + per:.1f} ms while a record was outstanding "
                    f"({per:.2f} ms a read of {len(res['programs'])} screen(s))")
    if res["kills"]:
        k = summary(res["kills"])
        rows.append(f"manual kill, confirming key ({KILL_KEYS[-1]}) -> SIGKILL sent, {k['n']} kills each of a fresh "
                    f"study: p50 {k['p50']:.2f} / p99 {k['p99']:.2f} / max {k['max']:.2f} ms")
    rows.append(f"console exit status {res['consoleExit']} after the study halted")
    if res["toolongStarts"] > 1:
        rows.append(f"toolong was started {res['toolongStarts']} times: the earlier ones did not follow the ledger")
    for name, (ok, detail) in verdicts(res).items():
        rows.append(f"target {name}: {'met' if ok else 'NOT MET'} ({detail})")
    return "\n".join(rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records-a", type=int, default=None, help="records of phase (a) (default 40; 6 with --quick)")
    p.add_argument("--records-b", type=int, default=None, help="records of phase (b) (default 50; 10 with --quick)")
    p.add_argument("--rate-b", type=float, default=5.0, help="records a second in phase (b) (default 5)")
    p.add_argument("--kills", type=int, default=None,
                   help="manual kills, each a fresh study (default 20; 2 with --quick)")
    p.add_argument("--seed", type=int, default=1, help="seed of phase (a)'s intervals (default 1)")
    p.add_argument("--quick", action="store_true", help="smoke run: 6 + 10 records, 2 kills; studymon alone "
                   "when toolong is not found")
    p.add_argument("--toolong", default=None, metavar="CMD", help="the toolong command (default: tl on PATH)")
    p.add_argument("--no-toolong", action="store_true", help="measure studymon alone")
    p.add_argument("--console-env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra environment for the console (repeatable), e.g. to try a setting")
    p.add_argument("--json", type=Path, help="save every record's times and the summary to this file")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    p.add_argument("--require-target", action="store_true", help="exit 1 when studymon misses a target")
    p.add_argument("--silent", action="store_true", help="no progress on stderr")
    args = p.parse_args(argv)
    args.records_a = args.records_a if args.records_a is not None else (6 if args.quick else 40)
    args.records_b = args.records_b if args.records_b is not None else (10 if args.quick else 50)
    args.kills = args.kills if args.kills is not None else (2 if args.quick else 20)
    args.quiet = 1.0 if args.quick else QUIET
    args.warm_records = 3 if args.quick else WARM_RECORDS
    if args.records_a < 1 or args.records_b < 1 or args.rate_b <= 0 or args.kills < 0:
        p.error("--records-a and --records-b must be >= 1, --rate-b > 0, --kills >= 0")
    try:
        args.console_env = dict(kv.split("=", 1) for kv in args.console_env)
    except ValueError:
        p.error("--console-env takes KEY=VALUE")
    args.toolong = None if args.no_toolong else find_toolong(args.toolong)
    if not args.no_toolong and args.toolong is None and not args.quick:
        p.error("toolong's tl was not found: pip install toolong (a virtual environment of its own keeps its Textual "
                "apart), then give --toolong PATH/TO/tl, or run with --no-toolong")
    return args


def as_json(res: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    return {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "programs": res["programs"], "seed": args.seed, "killKeys": list(KILL_KEYS),
        "phases": {
            p.name: {
                "title": p.title, "delays": p.delays,
                "summary": {prog: {**summary(p.latencies(prog)), "missed": p.missed(prog)} for prog in res["programs"]},
                "records": [{"seq": seq, "marker": m, "wroteMonotonic": mono, "wroteEpoch": wall,
                             "engineReadEpoch": p.engine_read.get(m),
                             "seen": {prog: p.seen.get(prog, {}).get(m) for prog in res["programs"]}}
                            for m, (seq, mono, wall) in p.writes.items()],
            }
            for p in res["phases"]
        },
        "killsMs": res["kills"], "killSummary": summary(res["kills"]) if res["kills"] else None,
        "kills": [{"study": f"k{i}", "keyEpoch": pressed, "killSentEpoch": sent}
                  for i, (pressed, sent) in enumerate(res["killTimes"], 1)],
        "consoleExit": res["consoleExit"], "toolongStarts": res["toolongStarts"],
        "targets": {k: {"met": ok, "value": d} for k, (ok, d) in verdicts(res).items()},
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.time()
    work = Path(tempfile.mkdtemp(prefix="studymon-screen-latency-"))
    signal.signal(signal.SIGTERM, interrupted)
    terms: list[Terminals] = []
    began = time.monotonic()
    try:
        res = run(args, work, terms)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (BenchFailed, TerminalError) as exc:
        print(f"screen_latency: {exc}", file=sys.stderr)
        return 2
    finally:
        for control in work.glob("control-*"):
            if not control.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    set_control(control, "halt")
        wait_ended(sorted(p.parent for p in work.rglob("launches.jsonl")))
        for term in terms:
            term.close()
        sweep(work, started)
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(report(res, args))
    print(f"bench wall time: {time.monotonic() - began:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(as_json(res, args), indent=2) + "\n", encoding="utf-8")
    met = all(ok for ok, _ in verdicts(res).values())
    return 1 if args.require_target and not met else 0


if __name__ == "__main__":
    sys.exit(main())
