"""First frame: from starting the console on a study with a long ledger to the screen showing its tail.

The study (``bench/streamstudy.py``) writes ``studyOpen`` and a backlog of
records (200 000 lines in all by default) in one go, then stays alive writing
nothing.  It is started by a headless ``studymon run`` that is then killed
(SIGKILL, as a console that crashed), so the controller keeps running and its
evidence folder is what ``studymon attach`` finds.  Per trial, in a real
terminal (tmux, 160×48):

* **studymon**: ``studymon attach OUT`` (real command line, real engine and
  app).  The clock starts just before tmux is asked to start it; the frame
  counts when the screen shows the pane (the study id in its header) and the
  ledger stream's line of the last record (its seq and time), i.e. the
  operator sees the study as it is now.
* **toolong** (``tl``, from PyPI, the baseline): ``tl LEDGER`` on the same
  file; its frame counts when the last record's line (``"seq":N,``) shows.

Also timed: the first paint (the first screen with anything on it), and the
console's RSS once the frame is there.  The screen is read through a tmux
control-mode client every 2 ms (a read costs ~0.1-0.3 ms), so the times are
good to a few milliseconds.  The two take turns trial by trial (which goes
first alternates), and every trial starts a fresh process.

    python bench/first_frame.py                        # 200 000 records, 5 trials each (~1 min)
    python bench/first_frame.py --records 100,200000   # the console's start-up alone, and a long ledger
    python bench/first_frame.py --quick                # smoke run: 20 000 records, 2 trials

Target: studymon's first frame at most 1 s in every trial.  Exit status 0
when every trial was measured (``--require-target``: 1 when the target is
missed), 2 when one failed, 130 when interrupted.  Every process is killed
and the temporary folder removed on the way out (``--keep`` keeps it).
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
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psutil

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from streamstudy import filler_lines  # noqa: E402
from terminal import TerminalError, Terminals  # noqa: E402

TARGET_S = 1.0
DEFAULT_RECORDS = [200_000]
POLL = 0.002  # seconds between screen reads while waiting for a frame
FRAME_DEADLINE = 60.0  # seconds a trial may take before it counts as failed
HALT_DEADLINE = 10.0  # seconds the studies are given to halt at the end before they are killed
STUDY_ID = "big"


def study_id(records: int) -> str:
    """One id per ledger size: the study of one size still runs (and holds its id) while the next starts."""
    return f"{STUDY_ID}{records}"


class TrialFailed(RuntimeError):
    """A trial produced no frame, or the study could not be set up."""


@dataclass
class Trial:
    """One start of one program on one ledger; times in seconds from the start request."""

    design: str
    records: int
    index: int
    paint_s: float
    frame_s: float
    rss_mb: float


def find_toolong(given: str | None) -> str | None:
    """The ``tl`` command: as given, else on PATH, else next to this Python."""
    if given:
        return given
    found = shutil.which("tl")
    if found:
        return found
    beside = Path(sys.executable).with_name("tl")
    return str(beside) if beside.exists() else None


# --- the study ------------------------------------------------------------------
def start_study(work: Path, records: int, env: dict[str, str]) -> Path:
    """A running study whose ledger holds ``records`` lines, seen once by a console that then died.

    ``env``: what the console needs besides this process's environment.
    """
    out = work / f"study-{records}"
    filler = work / f"fillers-{records}.jsonl"
    filler.write_bytes(filler_lines(records - 1, time.time()))
    control = work / "control"
    control.write_text("idle", encoding="utf-8")
    template = work / f"template-{records}.json"
    template.write_text(json.dumps({
        "command": ["python3", str(BENCH / "streamstudy.py")],
        "backend": "process",
        "containerPrefix": "bench",
        "controlFile": str(control),
        "fillerFile": str(filler),
        "fillers": records - 1,
    }), encoding="utf-8")
    log = open(work / f"headless-{records}.log", "wb")
    console = subprocess.Popen(
        [sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", str(template),
         f"{study_id(records)}={out}"],
        cwd=work, env={**os.environ, **env}, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        # The console has seen every record once it has put them all in its timeline.
        deadline = time.monotonic() + 180
        while count_lines(out / "timeline.jsonl") < records:
            if console.poll() is not None:
                raise TrialFailed(f"the headless console ended (exit {console.returncode}); see {log.name}")
            if time.monotonic() > deadline:
                raise TrialFailed(f"the headless console did not see {records} records within 180 s")
            time.sleep(0.1)
    finally:
        # Killed, not stopped: the controller stays, as after a console crash.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(console.pid, signal.SIGKILL)
        console.wait()
        log.close()
    if controller_pid(out) is None:
        raise TrialFailed(f"the study's controller is not running: see {out / 'study.log'}")
    return out


def count_lines(path: Path) -> int:
    try:
        with open(path, "rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    except FileNotFoundError:
        return 0


def keeper_saw_end(out: Path) -> bool:
    """Every controller start in ``OUT/launches.jsonl`` has its end line (the keeper saw it go)."""
    try:
        lines = (out / "launches.jsonl").read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return False
    events = [json.loads(line).get("event") for line in lines if line.strip()]
    return bool(events) and events.count("start") == events.count("end")


def wait_ended(outs: list[Path], seconds: float = HALT_DEADLINE) -> None:
    """Until the keeper of every study in ``outs`` has written its controller's end, for ``seconds`` at most.

    The studies halt on their control file; whatever is still there after this is killed by :func:`sweep`.
    """
    deadline = time.monotonic() + seconds
    while not all(keeper_saw_end(out) for out in outs) and time.monotonic() < deadline:
        time.sleep(0.02)


def controller_pid(out: Path) -> int | None:
    starts = [json.loads(line) for line in (out / "launches.jsonl").read_text().splitlines() if '"start"' in line]
    pid = starts[-1].get("pid") if starts else None
    return pid if isinstance(pid, int) and psutil.pid_exists(pid) else None


# --- one trial --------------------------------------------------------------------
def time_frame(term: Terminals, session: str, argv: list[str], env: dict[str, str], cwd: Path,
               shows_tail: Any) -> tuple[float, float, float]:
    """Start ``argv`` in a fresh terminal; (first paint, frame, RSS MB at the frame)."""
    began = time.perf_counter()
    pid = term.start(session, argv, env=env, cwd=str(cwd))
    paint: float | None = None
    try:
        while True:
            screen = term.screen(session)
            now = time.perf_counter() - began
            if paint is None and screen.strip():
                paint = now
            if shows_tail(screen):
                frame = now
                break
            if now > FRAME_DEADLINE:
                raise TrialFailed(f"{argv[0]}: no frame within {FRAME_DEADLINE:.0f} s; last screen:\n{screen}")
            if term.pane_dead(session)[0]:
                raise TrialFailed(f"{' '.join(argv[:4])} ended before its first frame; last screen:\n{screen}")
            time.sleep(POLL)
        rss = psutil.Process(pid).memory_info().rss / 1e6
    finally:
        # A console that dies leaves its study running: the next trial attaches to it again.
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        term.kill_session(session)
    return paint if paint is not None else frame, frame, rss


def studymon_trial(term: Terminals, out: Path, records: int, index: int, env: dict[str, str], work: Path) -> Trial:
    """``studymon attach OUT``; ``env`` is the console's environment on top of the terminal's."""
    tail = re.compile(rf"^[┃│]\s*{records} \d\d:\d\d:\d\d\.\d{{3}} ", re.M)

    def shows_tail(screen: str) -> bool:
        return f" {study_id(records)} " in screen and tail.search(screen) is not None

    argv = [sys.executable, "-m", "studymon.tui.cli", "attach", str(out)]
    paint, frame, rss = time_frame(term, f"sm-{records}-{index}", argv, env, work, shows_tail)
    return Trial("studymon", records, index, paint, frame, rss)


def toolong_trial(term: Terminals, tl: str, out: Path, records: int, index: int, work: Path) -> Trial:
    needle = f'"seq":{records},'
    paint, frame, rss = time_frame(term, f"tl-{records}-{index}", [tl, str(out / "study" / "ledger.jsonl")],
                                   {}, work, lambda screen: needle in screen)
    return Trial("toolong", records, index, paint, frame, rss)


# --- the run ----------------------------------------------------------------------
def run_all(args: argparse.Namespace, work: Path, term: Terminals, env: dict[str, str]) -> list[Trial]:
    trials: list[Trial] = []
    designs = ["studymon"] + (["toolong"] if args.toolong else [])
    for records in args.records:
        out = start_study(work, records, env)
        for i in range(args.trials):
            order = designs if i % 2 == 0 else designs[::-1]
            for design in order:
                if design == "studymon":
                    trial = studymon_trial(term, out, records, i, {**env, **args.console_env}, work)
                else:
                    trial = toolong_trial(term, args.toolong, out, records, i, work)
                trials.append(trial)
                if not args.silent:
                    print(f"{design:<9}{records:>8} records  trial {i + 1}: paint {trial.paint_s:6.3f} s  "
                          f"frame {trial.frame_s:6.3f} s  RSS {trial.rss_mb:6.1f} MB", file=sys.stderr, flush=True)
    return trials


def summarise(trials: list[Trial], records: list[int], designs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"rows": {}, "ratio": {}}
    for n in records:
        for design in designs:
            ts = [t for t in trials if t.design == design and t.records == n]
            frames = [t.frame_s for t in ts]
            out["rows"][f"{design}/{n}"] = {
                "n": len(ts),
                "paintP50": statistics.median(t.paint_s for t in ts),
                "frameP50": statistics.median(frames),
                "frameMin": min(frames),
                "frameMax": max(frames),
                "rssMaxMb": max(t.rss_mb for t in ts),
            }
        if "toolong" in designs:
            s, b = out["rows"][f"studymon/{n}"], out["rows"][f"toolong/{n}"]
            out["ratio"][str(n)] = s["frameP50"] / b["frameP50"] if b["frameP50"] else math.inf
    out["targetMet"] = all(out["rows"][f"studymon/{n}"]["frameMax"] <= TARGET_S for n in records)
    return out


def report(summary: dict[str, Any], records: list[int], designs: list[str], trials: int) -> str:
    rows = [
        f"first frame: start -> the screen shows the ledger's last record, seconds; {trials} trials per design "
        f"and size; tmux 160x48; {os.cpu_count()} cores, Python {platform.python_version()}",
        "",
        f"{'design':<10}{'records':>9}{'n':>4}{'paint p50':>11}{'frame p50':>11}{'min':>8}{'max':>8}{'RSS MB':>9}",
    ]
    for n in records:
        for design in designs:
            s = summary["rows"][f"{design}/{n}"]
            rows.append(f"{design:<10}{n:>9}{s['n']:>4}{s['paintP50']:>11.3f}{s['frameP50']:>11.3f}"
                        f"{s['frameMin']:>8.3f}{s['frameMax']:>8.3f}{s['rssMaxMb']:>9.1f}")
    rows.append("")
    for n, r in summary["ratio"].items():
        rows.append(f"ratio studymon/toolong at {n} records (frame p50): x{r:.2f}")
    worst = ", ".join(f"{n} records {summary['rows'][f'studymon/{n}']['frameMax']:.3f} s" for n in records)
    rows.append(f"studymon first-frame target (<= {TARGET_S:g} s in every trial): "
                f"{'met' if summary['targetMet'] else 'MISSED'} ({worst})")
    return "\n".join(rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=lambda s: [int(x) for x in s.split(",")], default=None,
                   help="ledger lines, comma separated (default 200000; 20000 with --quick)")
    p.add_argument("--trials", type=int, default=None, help="trials per design and size (default 5; 2 with --quick)")
    p.add_argument("--quick", action="store_true", help="smoke run: 20 000 records, 2 trials")
    p.add_argument("--toolong", default=None, metavar="CMD", help="the toolong command (default: tl on PATH)")
    p.add_argument("--no-toolong", action="store_true", help="time studymon alone")
    p.add_argument("--console-env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra environment for the console (repeatable), e.g. to try a setting")
    p.add_argument("--json", type=Path, help="save every trial and the summary to this file")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    p.add_argument("--require-target", action="store_true", help="exit 1 when studymon misses its target")
    p.add_argument("--silent", action="store_true", help="no per-trial progress on stderr")
    args = p.parse_args(argv)
    if args.records is None:
        args.records = [20_000] if args.quick else DEFAULT_RECORDS
    if args.trials is None:
        args.trials = 2 if args.quick else 5
    if args.trials < 1 or any(n < 2 for n in args.records):
        p.error("--trials must be >= 1 and every size >= 2")
    try:
        args.console_env = dict(kv.split("=", 1) for kv in args.console_env)
    except ValueError:
        p.error("--console-env takes KEY=VALUE")
    args.toolong = None if args.no_toolong else find_toolong(args.toolong)
    if not args.no_toolong and args.toolong is None:
        p.error("toolong's tl was not found: pip install toolong (a virtual environment of its own keeps its Textual "
                "apart), then give --toolong PATH/TO/tl, or run with --no-toolong")
    return args


def sweep(work: Path, since: float) -> None:
    """Kill every process left with the bench's folder in its argv (controllers, keepers, consoles)."""
    marker = str(work)
    for proc in psutil.process_iter(["pid", "cmdline", "create_time"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if proc.info["create_time"] >= since - 1 and any(marker in a for a in proc.info["cmdline"] or ()):
                proc.kill()


def interrupted(signum: int, frame: object) -> None:
    """SIGTERM ends the bench as Ctrl-C does: processes killed, folder removed."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.time()
    work = Path(tempfile.mkdtemp(prefix="studymon-first-frame-"))
    env = {"PYTHONPATH": str(ROOT), "STUDYMON_PROCESS_RUNTIME": str(work / "runtime")}
    signal.signal(signal.SIGTERM, interrupted)
    term = Terminals("studymon-first-frame")
    designs = ["studymon"] + (["toolong"] if args.toolong else [])
    began = time.monotonic()
    try:
        term.start_server()
        trials = run_all(args, work, term, env)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (TrialFailed, TerminalError) as exc:
        print(f"first_frame: {exc}", file=sys.stderr)
        return 2
    finally:
        # The studies end as a study does (halt, exit 0); anything left is killed.
        with contextlib.suppress(OSError):
            (work / "control").write_text("halt", encoding="utf-8")
        wait_ended(sorted(p.parent for p in work.glob("study-*/launches.jsonl")))
        term.close()
        sweep(work, started)
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    summary = summarise(trials, args.records, designs)
    print(report(summary, args.records, designs, args.trials))
    print(f"bench wall time: {time.monotonic() - began:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({
            "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "records": args.records, "trials": args.trials, "targetSeconds": TARGET_S,
            "summary": summary, "samples": [asdict(t) for t in trials],
        }, indent=2) + "\n", encoding="utf-8")
    return 1 if args.require_target and not summary["targetMet"] else 0


if __name__ == "__main__":
    sys.exit(main())
