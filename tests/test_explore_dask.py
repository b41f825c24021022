"""A campaign on a real Dask scheduler and two worker processes on 127.0.0.1, one SIGKILLed mid-trial: its trial
is lost, named with its worker, never a verdict; `studymon explore --resume` runs it again under a new number and
finishes; no trial is counted twice, and nothing of the lost trial is left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.studies import ROOT, jsonl
from tests.test_explore import _double
from tests.waits import until

pytestmark = pytest.mark.slow


def _start(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as f:
        return subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)


def _address(scheduler_file: Path) -> str | None:
    """The scheduler's address, once its file is written whole."""
    try:
        return str(json.loads(scheduler_file.read_text())["address"])
    except (OSError, ValueError, KeyError):
        return None


def _trial_processes(worker: psutil.Process) -> list[psutil.Process]:
    """The trial commands a worker runs now (their `studymon run` under the guard)."""
    try:
        return [p for p in worker.children(recursive=True) if "-m studymon run " in " ".join(p.cmdline())]
    except psutil.Error:
        return []


def test_a_lost_worker_s_trial_is_lost_then_run_again_by_resume(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(_start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                             "--port", "0", "--dashboard-address", ":0", "--scheduler-file", str(sched_file)],
                            tmp_path / "scheduler.log"))
        address = until(lambda: _address(sched_file), 60, "the scheduler's address")
        workers = []
        for name in ("w1", "w2"):
            w = _start([sys.executable, "-m", "distributed.cli.dask_worker", address, "--no-nanny", "--nthreads", "1",
                        "--name", name, "--host", "127.0.0.1", "--dashboard-address", ":0"], tmp_path / f"{name}.log")
            procs.append(w)
            workers.append(w)
        explore = subprocess.Popen(
            [sys.executable, "-m", "studymon.tui.cli", "explore", "--headless", "--template",
             str(_double(tmp_path, "honest")), "--scheduler", address, "--max-trials", "4", "ex=camp"],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # Once w1 runs a trial, SIGKILL it: no nanny brings it back.
        victim = psutil.Process(workers[0].pid)
        until(lambda: _trial_processes(victim), 120, "a trial running on w1")
        lost_processes = _trial_processes(victim)
        os.kill(workers[0].pid, signal.SIGKILL)
        out, _ = explore.communicate(timeout=600)
        assert explore.returncode == 3, out
        camp = tmp_path / "camp"
        body = json.loads((camp / "campaign.json").read_text())
        lost = [t for t in body["trials"] if t["state"] == "lost"]
        assert len(lost) == 1, body["trials"]
        assert lost[0]["ok"] is None and not (camp / lost[0]["out"]).exists(), "a lost trial is no verdict"
        w1 = lost[0]["worker"]
        assert w1 and w1.startswith("tcp://127.0.0.1:"), lost[0]
        # The lost trial's processes are gone (the guard stopped them), and so are its containers.
        until(lambda: not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in lost_processes), 60,
              "the lost trial's processes gone")
        runtime = subprocess.run([sys.executable, "-m", "studymon.tui.cli", "runtime", "ps", "-a", "--format",
                                  "{{.Names}}"], env=env, capture_output=True, text=True, check=True)
        assert f"sme-ex-{lost[0]['n']}-" not in runtime.stdout, runtime.stdout

        # --resume: the lost trial's points again, under a new number, on the worker left.
        again = subprocess.run([sys.executable, "-m", "studymon.tui.cli", "explore", "--headless", "--resume",
                                "--scheduler", address, str(camp)], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=600)
        assert again.returncode == 0, again.stdout + again.stderr
        body = json.loads((camp / "campaign.json").read_text())
        by_n = {t["n"]: t for t in body["trials"]}
        redo = [t for t in body["trials"] if t["n"] > 4]
        assert [t["points"] for t in redo] == [lost[0]["points"]] and redo[0]["ok"] is True, redo
        assert redo[0]["worker"] != w1
        assert by_n[lost[0]["n"]]["state"] == "lost"
        # No trial counted twice: one verdict per point.
        verdicts = [tuple(t["points"]) for t in body["trials"] if t["state"] == "done"]
        assert len(verdicts) == len(set(verdicts)) == 4, body["trials"]
        assert {line["n"] for line in jsonl(camp / "trials.jsonl")} == set(by_n)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.kill()
                p.wait(timeout=30)
