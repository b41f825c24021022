"""Console load: the console's own CPU and memory while three studies stream records, and while they are idle.

Three studies (``bench/streamstudy.py``, no containers) are launched by the
real command line, ``studymon run --template ...``, so the real engine and
the real app watch them, drawing into a real terminal (tmux, 160×48).  Beside
it, in the same run and on the same three ledgers, **toolong** (``tl``, from
PyPI) tails them in a terminal of its own (one tab per file: its merged view
does not tail).  Both run at once, so machine noise hits both alike.

Phases, set for all three studies at once through their control file:

* warm-up (not measured): the studies start streaming;
* **streaming**: each study appends ``--rate`` records a second (50; one
  write per record) for ``--seconds`` (60);
* **idle**: the studies stay alive and write nothing for ``--idle-seconds``
  (30), after a short settle;
* end: the studies write ``halt`` and exit 0; the console (``--exit-when-done``) ends and
  prints its check table (its exit status is reported).

Measured once a second with psutil: the CPU time (user + system, all its
threads) and the RSS of the console's process and of toolong's.  The
studies' CPU is not counted: they are other processes (and so are the
keepers that start them, shown apart).  Each program has its own tmux server,
whose CPU (the terminal's work for that program's output) is shown apart
too.  Reported per phase: mean CPU in % of one core, the 90th percentile and
maximum of the one-second samples, and the RSS maximum; and, at the end of
the streaming phase, how far behind the ledgers each screen was (records).
toolong 1.5 sometimes stops following at its start (a race in its file
watcher, see ``start_toolong``); after the warm-up the bench checks that it
follows and starts it again if not, so its numbers are those of a working
toolong.

    python bench/console_load.py                       # 60 s streaming, 30 s idle (~2 min)
    python bench/console_load.py --seconds 120 --json load.json
    python bench/console_load.py --quick               # smoke run: 8 s streaming, 5 s idle

Targets (studymon): streaming CPU ≤ toolong's and ≤ 10 % of a core; idle CPU
≤ 0.5 %; RSS ≤ 150 MB in both phases.  Exit status 0 when both phases were
measured (``--require-target``: 1 when a target is missed), 2 when the run
failed, 130 when interrupted.  Every process is killed and the temporary
folder removed on the way out (``--keep`` keeps it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from first_frame import find_toolong, interrupted, sweep  # noqa: E402
from streamstudy import last_seq  # noqa: E402
from terminal import TerminalError, Terminals  # noqa: E402

STUDIES = ("s1", "s2", "s3")
TARGET_STREAM_CPU = 10.0  # % of one core
TARGET_IDLE_CPU = 0.5
TARGET_RSS_MB = 150.0
SETTLE = 3.0  # seconds after the studies go quiet before the idle phase is measured
TOOLONG_SETTLE = 2.0  # seconds between toolong's first screen and the first streamed record
TOOLONG_STARTS = 5  # starts of toolong tried until one follows its ledgers (see start_toolong)
FOLLOW_SECONDS = 1.0  # after the warm-up, toolong further behind than this many seconds of records has stopped
STALL_SECONDS = 5.0  # toolong further behind than this many seconds of records has stopped following
SEQ_LINE = re.compile(r"[┃│]\s*(\d+) \d\d:\d\d:\d\d\.\d{3} ")


class BenchFailed(RuntimeError):
    """The run could not be measured (a program ended early, a study did not start)."""


@dataclass
class Series:
    """One process's one-second samples in one phase."""

    cpu: list[float] = field(default_factory=list)  # % of one core over each second
    rss_mb: list[float] = field(default_factory=list)
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0

    @property
    def mean(self) -> float:
        return 100.0 * self.cpu_seconds / self.wall_seconds if self.wall_seconds else math.nan

    def summary(self) -> dict[str, float]:
        xs = sorted(self.cpu)
        p90 = xs[min(len(xs) - 1, math.ceil(0.9 * len(xs)) - 1)] if xs else math.nan
        return {"cpuMean": self.mean, "cpuP90": p90, "cpuMax": max(xs) if xs else math.nan,
                "rssMaxMb": max(self.rss_mb) if self.rss_mb else math.nan, "seconds": self.wall_seconds}


class Watched:
    """A set of processes measured together (one program, or every keeper)."""

    def __init__(self, name: str, pids: list[int]) -> None:
        self.name = name
        self.procs = [psutil.Process(p) for p in pids]

    def cpu(self) -> float:
        total = 0.0
        for p in self.procs:
            with contextlib.suppress(psutil.Error):
                t = p.cpu_times()
                total += t.user + t.system  # this process and all its threads; not its children
        return total

    def rss(self) -> float:
        total = 0
        for p in self.procs:
            with contextlib.suppress(psutil.Error):
                total += p.memory_info().rss
        return total / 1e6

    def alive(self) -> bool:
        return any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in self.procs)


def measure(watched: list[Watched], seconds: float, label: str, silent: bool) -> dict[str, Series]:
    """Sample every ``watched`` once a second for ``seconds``; a :class:`Series` per name."""
    series = {w.name: Series() for w in watched}
    start = time.monotonic()
    first = {w.name: w.cpu() for w in watched}
    last_cpu, last_t = dict(first), start
    tick = 0
    while True:
        tick += 1
        wake = start + tick
        if wake > start + seconds + 1e-6:
            break
        time.sleep(max(0.0, wake - time.monotonic()))
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
            print(f"[{label} {tick:>3}/{int(seconds)} s] " + "  ".join(line), file=sys.stderr, flush=True)
        if not watched[0].alive():
            raise BenchFailed(f"{watched[0].name} ended during the {label} phase")
    for w in watched:
        s = series[w.name]
        s.cpu_seconds = w.cpu() - first[w.name]
        s.wall_seconds = time.monotonic() - start
    return series


# --- the programs -----------------------------------------------------------------
def template(work: Path, rate: float) -> Path:
    path = work / "template.json"
    path.write_text(json.dumps({
        "command": ["python3", str(BENCH / "streamstudy.py")],
        "backend": "process",
        "containerPrefix": "bench",
        "controlFile": str(work / "control"),
        "rate": rate,
        "maxSeconds": 3600,
    }), encoding="utf-8")
    return path


def set_phase(work: Path, phase: str) -> None:
    # Written whole then renamed, so a study never reads half a word.
    tmp = work / "control.tmp"
    tmp.write_text(phase, encoding="utf-8")
    os.replace(tmp, work / "control")


def ledgers(work: Path) -> list[Path]:
    return [work / s / "study" / "ledger.jsonl" for s in STUDIES]


def keeper_pids(work: Path) -> list[int]:
    pids = []
    for s in STUDIES:
        for line in (work / s / "launches.jsonl").read_text().splitlines():
            rec = json.loads(line)
            if rec.get("event") == "start" and isinstance(rec.get("keeper"), int):
                pids.append(rec["keeper"])
    return pids


def controller_pids(work: Path) -> list[int]:
    pids = []
    for s in STUDIES:
        starts = [json.loads(l) for l in (work / s / "launches.jsonl").read_text().splitlines() if '"start"' in l]
        if starts and isinstance(starts[-1].get("pid"), int):
            pids.append(starts[-1]["pid"])
    return pids


def server_pid(term: Terminals) -> int:
    return int(term.command("display-message -p '#{pid}'")[0])


def studymon_lag(screen: str, work: Path) -> list[int]:
    """Per pane: the ledger's last seq minus the last seq its stream shows."""
    cols: dict[int, int] = {}
    for row in screen.splitlines():
        for m in SEQ_LINE.finditer(row):
            col = m.start() // 53  # three panes of ~53 columns side by side
            cols[col] = max(cols.get(col, 0), int(m.group(1)))
    return [last_seq(p) - cols.get(i, 0) for i, p in enumerate(ledgers(work))]


def toolong_lag(screen: str, work: Path) -> int:
    """The visible tab (the first ledger): its last seq minus the last seq on screen."""
    shown = [int(x) for x in re.findall(r'"seq":(\d+),', screen)]
    return last_seq(ledgers(work)[0]) - (max(shown) if shown else 0)


def start_toolong(term: Terminals, command: str, work: Path) -> int:
    """toolong on the three ledgers, its first screen drawn and every tab's tail started; its pid.

    toolong 1.5 starts a tab's tail when that tab's scan ends, adding the file to
    one watcher thread that iterates over its files unguarded: a tail started
    while the watcher is inside that loop ends the thread (``dictionary changed
    size during iteration``), and then no tab follows its ledger.  The tails are
    started while the ledgers are quiet, which makes that rarer, and
    :func:`toolong_following` checks the outcome.
    """
    term.kill_session("toolong")
    pid = term.start("toolong", [command, *map(str, ledgers(work))], cwd=str(work))
    term.wait_for("toolong", lambda s: re.search(r'"seq":\d+,', s) is not None, 30, "toolong's first screen")
    time.sleep(TOOLONG_SETTLE)
    return pid


def toolong_following(term: Terminals, args: argparse.Namespace, work: Path) -> tuple[int, int]:
    """After the warm-up: toolong's pid once its screen follows the ledger, and how many starts that took.

    One watcher thread serves every tab, so the visible tab following means all do.
    A toolong that stopped is started again (with the studies paused) until it follows.
    """
    pid = term.pane_pid("toolong")
    for starts in range(1, TOOLONG_STARTS + 1):
        behind = toolong_lag(term.screen("toolong"), work)
        if behind <= args.rate * FOLLOW_SECONDS:
            return pid, starts
        if starts == TOOLONG_STARTS:
            break
        set_phase(work, "idle")
        time.sleep(SETTLE)
        pid = start_toolong(term, args.toolong, work)
        set_phase(work, "stream")
        time.sleep(max(args.warmup, 2.0))
    raise BenchFailed(f"toolong did not follow its ledgers in {TOOLONG_STARTS} starts ({behind} records behind)")


# --- the run ------------------------------------------------------------------------
def run(args: argparse.Namespace, work: Path, terms: list[Terminals]) -> dict[str, Any]:
    env = {"PYTHONPATH": str(ROOT), "STUDYMON_PROCESS_RUNTIME": str(work / "runtime"), **args.console_env}
    set_phase(work, "idle")
    sm = Terminals("studymon-load")
    terms.append(sm)
    sm.start_server()
    pairs = [f"{s}={work / s}" for s in STUDIES]
    console_pid = sm.start("console", [sys.executable, "-m", "studymon.tui.cli", "run", "--exit-when-done", "--template",
                                       str(template(work, args.rate)), *pairs], env=env, cwd=str(work))
    deadline = time.monotonic() + 60
    while not all(p.is_file() and p.stat().st_size for p in ledgers(work)):
        if time.monotonic() > deadline or sm.pane_dead("console")[0]:
            raise BenchFailed("the studies did not start; console screen:\n" + sm.screen("console"))
        time.sleep(0.1)
    sm.wait_for("console", lambda s: all(f" {x} " in s for x in STUDIES) and "following" in s, 30, "the three panes")
    watched = [Watched("studymon", [console_pid])]
    tl_session = None
    if args.toolong:
        tl_session = Terminals("toolong-load")
        terms.append(tl_session)
        tl_session.start_server()
        start_toolong(tl_session, args.toolong, work)

    set_phase(work, "stream")
    time.sleep(args.warmup)
    toolong_starts = 0
    if tl_session is not None:
        tl_pid, toolong_starts = toolong_following(tl_session, args, work)
        watched.append(Watched("toolong", [tl_pid]))
    watched.append(Watched("tmux(studymon)", [server_pid(sm)]))
    if tl_session is not None:
        watched.append(Watched("tmux(toolong)", [server_pid(tl_session)]))
    watched.append(Watched("keepers", keeper_pids(work)))
    watched.append(Watched("studies", controller_pids(work)))

    seq0 = [last_seq(p) for p in ledgers(work)]
    streaming = measure(watched, args.seconds, "streaming", args.silent)
    seq1 = [last_seq(p) for p in ledgers(work)]
    lag = {"studymon": studymon_lag(sm.screen("console"), work)}
    if tl_session is not None:
        lag["toolong"] = [toolong_lag(tl_session.screen("toolong"), work)]

    set_phase(work, "idle")
    time.sleep(SETTLE)
    idle = measure(watched, args.idle_seconds, "idle", args.silent)
    idle_lag = {"studymon": studymon_lag(sm.screen("console"), work)}
    if tl_session is not None:
        idle_lag["toolong"] = [toolong_lag(tl_session.screen("toolong"), work)]

    set_phase(work, "halt")
    deadline = time.monotonic() + 60
    while not sm.pane_dead("console")[0]:
        if time.monotonic() > deadline:
            raise BenchFailed("the console did not end after the studies halted:\n" + sm.screen("console"))
        time.sleep(0.2)
    status = sm.pane_dead("console")[1]
    final = sm.everything("console")
    summary_line = next((l.strip() for l in final.splitlines() if re.match(r"^[✓✗?] .* checks? (hold|failed|unknown)", l)), "")
    rates = [(b - a) / args.seconds for a, b in zip(seq0, seq1)]
    return {
        "streaming": {k: v for k, v in streaming.items()},
        "idle": {k: v for k, v in idle.items()},
        "lag": lag,
        "idleLag": idle_lag,
        "rates": rates,
        "consoleExit": status,
        "consoleSummary": summary_line,
        "toolongStarts": toolong_starts,
    }


def verdicts(res: dict[str, Any], with_toolong: bool) -> dict[str, tuple[bool, str]]:
    s, i = res["streaming"]["studymon"], res["idle"]["studymon"]
    out = {
        "streaming CPU <= 10 % of a core": (s.mean <= TARGET_STREAM_CPU, f"{s.mean:.1f} %"),
        f"idle CPU <= {TARGET_IDLE_CPU:g} % of a core": (i.mean <= TARGET_IDLE_CPU, f"{i.mean:.2f} %"),
        "RSS <= 150 MB": (max(s.summary()["rssMaxMb"], i.summary()["rssMaxMb"]) <= TARGET_RSS_MB,
                          f"{max(s.summary()['rssMaxMb'], i.summary()['rssMaxMb']):.0f} MB"),
    }
    if with_toolong:
        t = res["streaming"]["toolong"]
        out["streaming CPU <= toolong's"] = (s.mean <= t.mean, f"{s.mean:.1f} % vs {t.mean:.1f} %")
    return out


def toolong_stalled(res: dict[str, Any], rate: float) -> int | None:
    """toolong's records behind at the end of streaming when it had stopped following, else None."""
    behind = (res["lag"].get("toolong") or [0])[0]
    return behind if behind > rate * STALL_SECONDS else None


def report(res: dict[str, Any], args: argparse.Namespace) -> str:
    rows = [
        f"console load: {len(STUDIES)} studies x {args.rate:g} records/s for {args.seconds:g} s, then idle "
        f"{args.idle_seconds:g} s; tmux 160x48; {os.cpu_count()} cores, Python {platform.python_version()}",
        f"records written per study per second while streaming: {', '.join(f'{r:.1f}' for r in res['rates'])}",
        "",
        f"{'process':<16}{'phase':<11}{'CPU mean %':>11}{'p90 %':>8}{'max %':>8}{'RSS max MB':>12}",
    ]
    names = list(res["streaming"])
    for name in names:
        for phase in ("streaming", "idle"):
            s = res[phase][name].summary()
            rows.append(f"{name:<16}{phase:<11}{s['cpuMean']:>11.2f}{s['cpuP90']:>8.1f}{s['cpuMax']:>8.1f}"
                        f"{s['rssMaxMb']:>12.1f}")
    rows.append("")
    if "toolong" in res["streaming"]:
        for phase in ("streaming", "idle"):
            a, b = res[phase]["studymon"], res[phase]["toolong"]
            ratio = a.mean / b.mean if b.mean else math.inf
            rss = a.summary()["rssMaxMb"] / b.summary()["rssMaxMb"]
            rows.append(f"ratio studymon/toolong, {phase}: CPU x{ratio:.2f}, RSS x{rss:.2f}")
    rows.append("records behind the ledger at the end of streaming: "
                + "; ".join(f"{k} {v}" for k, v in res["lag"].items())
                + (" (toolong: its visible tab, the first ledger)" if "toolong" in res["lag"] else ""))
    rows.append("records behind after the settle, idle: " + "; ".join(f"{k} {v}" for k, v in res["idleLag"].items()))
    rows.append(f"console exit status {res['consoleExit']}: {res['consoleSummary'] or '(no summary line)'}")
    if res["toolongStarts"] > 1:
        rows.append(f"toolong was started {res['toolongStarts']} times: the earlier ones stopped following their "
                    "ledgers (their watcher thread ended) before the measurement")
    stalled = toolong_stalled(res, args.rate)
    if stalled is not None:
        rows.append(f"toolong stopped following its ledgers ({stalled} records behind): its numbers are not "
                    "comparable; run again")
    for name, (ok, detail) in verdicts(res, "toolong" in res["streaming"]).items():
        verdict = "met" if ok else "NOT MET"
        if stalled is not None and "toolong" in name:
            verdict = "not comparable"
        rows.append(f"target {name}: {verdict} ({detail})")
    return "\n".join(rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=None, help="measured streaming seconds (default 60; 8 with --quick)")
    p.add_argument("--idle-seconds", type=float, default=None, help="measured idle seconds (default 30; 5 with --quick)")
    p.add_argument("--rate", type=float, default=50.0, help="records a second per study while streaming (default 50)")
    p.add_argument("--warmup", type=float, default=None, help="unmeasured streaming seconds first (default 5; 2 with --quick)")
    p.add_argument("--quick", action="store_true", help="smoke run: 8 s streaming, 5 s idle")
    p.add_argument("--toolong", default=None, metavar="CMD", help="the toolong command (default: tl on PATH)")
    p.add_argument("--no-toolong", action="store_true", help="measure studymon alone")
    p.add_argument("--console-env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra environment for the console (repeatable), e.g. to try a setting")
    p.add_argument("--json", type=Path, help="save every sample and the summary to this file")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    p.add_argument("--require-target", action="store_true", help="exit 1 when studymon misses a target")
    p.add_argument("--silent", action="store_true", help="no per-second progress on stderr")
    args = p.parse_args(argv)
    args.seconds = args.seconds if args.seconds is not None else (8.0 if args.quick else 60.0)
    args.idle_seconds = args.idle_seconds if args.idle_seconds is not None else (5.0 if args.quick else 30.0)
    args.warmup = args.warmup if args.warmup is not None else (2.0 if args.quick else 5.0)
    if args.seconds < 1 or args.idle_seconds < 1 or args.rate <= 0:
        p.error("--seconds and --idle-seconds must be >= 1, --rate > 0")
    try:
        args.console_env = dict(kv.split("=", 1) for kv in args.console_env)
    except ValueError:
        p.error("--console-env takes KEY=VALUE")
    args.toolong = None if args.no_toolong else find_toolong(args.toolong)
    if not args.no_toolong and args.toolong is None:
        p.error("toolong's tl was not found: pip install toolong (a virtual environment of its own keeps its Textual "
                "apart), then give --toolong PATH/TO/tl, or run with --no-toolong")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.time()
    work = Path(tempfile.mkdtemp(prefix="studymon-console-load-"))
    signal.signal(signal.SIGTERM, interrupted)
    terms: list[Terminals] = []
    began = time.monotonic()
    try:
        res = run(args, work, terms)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (BenchFailed, TerminalError) as exc:
        print(f"console_load: {exc}", file=sys.stderr)
        return 2
    finally:
        with contextlib.suppress(OSError):
            set_phase(work, "halt")
        for term in terms:
            term.close()
        sweep(work, started)
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(report(res, args))
    print(f"bench wall time: {time.monotonic() - began:.0f} s")
    stalled = toolong_stalled(res, args.rate)
    # A toolong that stopped following is no baseline: its comparison is left out.
    met = all(ok for name, (ok, _) in verdicts(res, "toolong" in res["streaming"]).items()
              if stalled is None or "toolong" not in name)
    if args.json:
        args.json.write_text(json.dumps({
            "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "seconds": args.seconds, "idleSeconds": args.idle_seconds, "rate": args.rate, "studies": len(STUDIES),
            "summary": {phase: {k: v.summary() for k, v in res[phase].items()} for phase in ("streaming", "idle")},
            "samples": {phase: {k: asdict(v) for k, v in res[phase].items()} for phase in ("streaming", "idle")},
            "lag": res["lag"], "idleLag": res["idleLag"], "rates": res["rates"], "toolongStalled": stalled is not None,
            "toolongStarts": res["toolongStarts"],
            "consoleExit": res["consoleExit"], "consoleSummary": res["consoleSummary"],
            "targets": {k: {"met": ok, "value": d} for k, (ok, d) in verdicts(res, "toolong" in res["streaming"]).items()},
        }, indent=2) + "\n", encoding="utf-8")
    return 1 if args.require_target and not met else 0


if __name__ == "__main__":
    sys.exit(main())
