"""The crash-point explorer: a campaign's wall time on Dask, beside the same trials run one after another.

One run, real commands (``studymon explore --headless`` and ``studymon run
--headless``), real Dask.  The study is the JavaScript double of the kill
points (``tests/doubles/points_study.js``, honest, on the process runtime:
0.15 s between its steps, runs of 0.5 s), ``--trials`` trials (8) of it
each way:

1. **local, 1 worker** and **local, 2 workers**: ``studymon explore
   --workers N --max-trials K``, a ``LocalCluster`` each;
2. **scheduler**: a ``dask scheduler`` and two ``dask worker`` processes on
   127.0.0.1, started here, and ``studymon explore --scheduler ADDRESS``;
3. **one after another**: the points of the first campaign's trials, each
   as ``studymon run --headless --kill ID:POINT ID=OUT``, in turn, as an
   operator without the explorer would.

For each: the wall time of the whole command, of its trials (a campaign's
``timing`` in ``campaign.json``: the trace, the cluster's start, the
trials), and trials an hour.  **Dask's overhead per trial**: with one
worker, the trials' phase minus the sum of the trials' own times (each
trial's ``seconds``, taken on its worker around the trial's command), over
the trials; beside the trial's own mean time.  Last, **trials per campaign
for studies of 10, 100 and 1000 records**: the reference study (process
runtime, ``diagnosisSeconds`` 0) run traced with budgets that give about
that many records; its candidates and classes, from the trace as the
explorer reads it.  The classes follow the study's shapes, not its length.

    python bench/explore.py                     # 8 trials each way, then the three study lengths
    python bench/explore.py --trials 4 --json explore.json
    python bench/explore.py --quick             # 3 trials each way, lengths 10 and 100

Exit status 0 when every part was measured and every campaign held, 2 when
the run failed, 130 when interrupted.  Every process started is stopped on
the way out and the temporary folder removed (``--keep`` keeps it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DOUBLE = ROOT / "tests" / "doubles" / "points_study.js"
sys.path.insert(0, str(ROOT))

from studymon.engine.explore.crashpoints import classes  # noqa: E402
from studymon.engine.explore.explorer import read_trace  # noqa: E402

SCHEDULER_DEADLINE = 60.0  # seconds the scheduler and its workers have to come up
COMMAND_DEADLINE = 1800.0  # seconds one campaign or one trial may take
LENGTHS = (10, 100, 1000)  # records of the studies whose crash points are counted


class BenchFailed(RuntimeError):
    """A part could not be measured."""


def err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def studymon(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "studymon.tui.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=COMMAND_DEADLINE,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        check=False,
    )
    return proc, time.monotonic() - began


def double_template(work: Path) -> Path:
    path = work / "double.json"
    path.write_text(json.dumps({"command": ["node", str(DOUBLE)], "backend": "process", "pause": 0.15,
                                "runSeconds": 0.5, "fault": "honest", "containerPrefix": "bex"}))
    return path


def campaign(work: Path, name: str, template: Path, trials: int, where: list[str]) -> dict[str, Any]:
    """One campaign; its figures, from its command's time and its campaign.json."""
    err(f"campaign {name}: {' '.join(where)}")
    proc, wall = studymon("explore", "--headless", "--template", str(template), "--max-trials", str(trials),
                          *where, f"{name}={work / name}", cwd=work)
    body_path = work / name / "campaign.json"
    if proc.returncode != 0 or not body_path.is_file():
        raise BenchFailed(f"campaign {name} exited {proc.returncode}:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    body = json.loads(body_path.read_text())
    done = [t for t in body["trials"] if t["state"] == "done"]
    own = [float(t["seconds"]) for t in done]
    timing = body.get("timing", {})
    return {
        "name": name,
        "where": " ".join(where),
        "wall": round(wall, 2),
        "trace": timing.get("trace"),
        "cluster": timing.get("cluster"),
        "trialsPhase": timing.get("trials"),
        "trials": len(done),
        "trialSeconds": own,
        "workers": sorted({str(t["worker"]) for t in done}),
        "points": [t["points"] for t in body["trials"] if t["state"] == "done"],
        "perHour": round(3600 * len(done) / timing["trials"], 1) if timing.get("trials") else None,
    }


def sequential(work: Path, template: Path, points: list[list[str]]) -> dict[str, Any]:
    """The same trials as ``studymon run`` commands, one after another."""
    err(f"one after another: {len(points)} trials")
    (work / "seq").mkdir()
    walls = []
    for n, trial_points in enumerate(points, 1):
        study = f"seq-{n}"
        kills = [a for p in trial_points for a in ("--kill", f"{study}:{p}")]
        proc, wall = studymon("run", "--headless", "--template", str(template), *kills,
                              f"{study}={work / 'seq' / study}", cwd=work)
        if proc.returncode != 0:
            raise BenchFailed(f"{study} exited {proc.returncode}:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
        walls.append(wall)
    total = sum(walls)
    return {"name": "one after another", "wall": round(total, 2), "trialsPhase": round(total, 2),
            "trials": len(walls), "trialSeconds": [round(w, 3) for w in walls],
            "perHour": round(3600 * len(walls) / total, 1)}


def start_scheduler(work: Path, procs: list[subprocess.Popen[bytes]]) -> str:
    """A dask scheduler and two workers on 127.0.0.1 (one thread each, no nanny), as on two machines."""
    dask = shutil.which("dask") or str(Path(sys.executable).with_name("dask"))
    sched_file = work / "scheduler.json"
    logs = work / "dask"
    logs.mkdir()

    def start(argv: list[str], log: str) -> None:
        with open(logs / log, "wb") as f:
            procs.append(subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, start_new_session=True))

    start([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
           "--scheduler-file", str(sched_file)], "scheduler.log")
    deadline = time.monotonic() + SCHEDULER_DEADLINE
    address = None
    while address is None:
        if time.monotonic() > deadline:
            raise BenchFailed("the dask scheduler did not start:\n" + (logs / "scheduler.log").read_text()[-2000:])
        try:
            address = str(json.loads(sched_file.read_text())["address"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    for n in (1, 2):
        start([dask, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--name", f"w{n}",
               "--host", "127.0.0.1"], f"worker{n}.log")
    from distributed import Client

    with Client(address, timeout=30) as client:  # type: ignore[no-untyped-call]
        client.wait_for_workers(2, timeout=SCHEDULER_DEADLINE)  # type: ignore[no-untyped-call]
    return address


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def lengths(work: Path, wanted: tuple[int, ...]) -> list[dict[str, Any]]:
    """The reference study traced at budgets that give about ``wanted`` records; candidates and classes."""
    out = []
    for records in wanted:
        rounds = max(1, round(records / 9))  # a round of the reference study writes about nine records
        template = work / f"ref-{records}.json"
        ref = json.loads((ROOT / "refstudy" / "research.json").read_text())
        ref.update({"backend": "process", "budget": 10 * (rounds + 1), "runCost": 10, "diagnosisSeconds": 0,
                    "samples": 200, "initialExperiments": 2, "experimentsPerRound": 1, "diagnosisBatch": 1,
                    "containerPrefix": "blen"})
        template.write_text(json.dumps(ref))
        name = f"len{records}"
        err(f"trace of the reference study, about {records} records")
        proc, wall = studymon("run", "--headless", "--trace", "--template", str(template), f"{name}={work / name}",
                              cwd=work)
        if proc.returncode != 0:
            raise BenchFailed(f"the {name} trace exited {proc.returncode}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
        began = time.monotonic()
        _, found = read_trace(work / name)
        by_class = classes(found)
        plan_ms = (time.monotonic() - began) * 1000
        ledger = (work / name / "study" / "ledger.jsonl").read_text().splitlines()
        out.append({"records": len(ledger), "candidates": len(found), "classes": len(by_class),
                    "planMs": round(plan_ms, 1), "traceSeconds": round(wall, 2)})
    return out


def overhead(one: dict[str, Any]) -> dict[str, float]:
    own = one["trialSeconds"]
    mean_own = sum(own) / len(own)
    per_trial = (one["trialsPhase"] - sum(own)) / len(own)
    return {"ownMean": round(mean_own, 3), "daskPerTrialMs": round(per_trial * 1000, 1),
            "clusterStart": one["cluster"]}


def report(res: dict[str, Any]) -> None:
    print(f"studymon explore bench — {res['trials']} trials of the JavaScript double each way; "
          f"{res['machine']}")
    print()
    print(f"{'how':28s} {'wall s':>8s} {'trace s':>8s} {'cluster s':>9s} {'trials s':>9s} {'trials/h':>9s}  ratio")
    seq = res["sequential"]
    for row in [*res["campaigns"], seq]:
        ratio = seq["trialsPhase"] / row["trialsPhase"] if row["trialsPhase"] else float("nan")
        print(f"{row['name']:28s} {row['wall']:8.1f} {row.get('trace') or 0:8.1f} {row.get('cluster') or 0:9.1f} "
              f"{row['trialsPhase']:9.1f} {row['perHour']:9.0f}  {ratio:.2f}x")
    o = res["overhead"]
    print()
    print(f"Dask's overhead per trial (1 worker): {o['daskPerTrialMs']:.0f} ms beside the trial's own "
          f"{o['ownMean']:.2f} s ({o['daskPerTrialMs'] / 10 / o['ownMean']:.1f} %); the cluster's start "
          f"{o['clusterStart']:.1f} s once per campaign")
    sched = next(c for c in res["campaigns"] if c["name"] == "scheduler")
    print(f"the scheduler's campaign ran on {len(sched['workers'])} workers: {', '.join(sched['workers'])}")
    print()
    print(f"{'records':>8s} {'candidates':>11s} {'classes (trials)':>17s} {'plan ms':>8s}")
    for row in res["lengths"]:
        print(f"{row['records']:8d} {row['candidates']:11d} {row['classes']:17d} {row['planMs']:8.1f}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--trials", type=int, default=None, help="trials per campaign (default 8; 3 with --quick)")
    p.add_argument("--quick", action="store_true", help="3 trials each way; study lengths 10 and 100")
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = p.parse_args()
    trials = args.trials or (3 if args.quick else 8)
    if trials < 1:
        p.error("--trials must be at least 1")
    work = Path(tempfile.mkdtemp(prefix="studymon-bench-explore-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        template = double_template(work)
        one = campaign(work, "local1", template, trials, ["--workers", "1"])
        two = campaign(work, "local2", template, trials, ["--workers", "2"])
        address = start_scheduler(work, procs)
        sched = campaign(work, "sched", template, trials, ["--scheduler", address])
        stop(procs)
        one["name"], two["name"], sched["name"] = "local cluster, 1 worker", "local cluster, 2 workers", "scheduler"
        seq = sequential(work, template, one["points"])
        res = {
            "trials": trials,
            "machine": f"{os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}",
            "campaigns": [one, two, sched],
            "sequential": seq,
            "overhead": overhead(one),
            "lengths": lengths(work, LENGTHS[:2] if args.quick else LENGTHS),
        }
        report(res)
        if args.json:
            args.json.write_text(json.dumps(res, indent=2))
        return 0
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except (BenchFailed, subprocess.TimeoutExpired) as exc:
        err(f"bench failed: {exc}")
        return 2
    finally:
        stop(procs)
        if args.keep:
            err(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
