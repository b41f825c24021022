"""A console that dies leaves its studies running; ``studymon attach`` takes them over to the end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.studies import ROOT, assert_evidence_complete, studymon, template, verdicts
from tests.waits import until

pytestmark = pytest.mark.slow


def wait_for(predicate, timeout: float, what: str) -> None:
    until(predicate, timeout, what, step=0.05)


def ledger_kinds(out: Path) -> list[str]:
    path = out / "study" / "ledger.jsonl"
    if not path.exists():
        return []
    return [json.loads(l)["kind"] for l in path.read_text().splitlines() if l.endswith("}")]


def test_attach_after_the_console_was_killed(tmp_path: Path) -> None:
    t = template(tmp_path, backend="process")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    console = subprocess.Popen(
        [sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", str(t), "a=a", "b=b"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    a, b = tmp_path / "a", tmp_path / "b"
    wait_for(lambda: "runStarted" in ledger_kinds(a) and "runStarted" in ledger_kinds(b), 60, "both first runs")
    console.send_signal(signal.SIGKILL)
    console.wait()
    pids = [json.loads(l)["pid"] for l in (a / "launches.jsonl").read_text().splitlines()]
    assert psutil.pid_exists(pids[-1]), "the controller died with its console"

    proc = studymon("attach", "--headless", "a", "b", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for out in (a, b):
        assert_evidence_complete(out, killed=False)
        assert all(ok is True for ok in verdicts(out).values()), verdicts(out)
        seqs = [json.loads(l)["seq"] for l in (out / "timeline.jsonl").read_text().splitlines()]
        assert sorted(seqs) == list(range(1, len(ledger_kinds(out)) + 1)), "timeline must hold every record once"
        launches = [json.loads(l) for l in (out / "launches.jsonl").read_text().splitlines()]
        assert [l["event"] for l in launches] == ["start", "end"] and launches[-1]["code"] == 0


def test_attach_refuses_a_finished_study_and_a_non_evidence_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    proc = studymon("attach", "--headless", "empty", cwd=tmp_path)
    assert proc.returncode == 2 and "not a studymon evidence folder" in proc.stderr
    t = template(tmp_path, backend="process", budget=10)
    done = studymon("run", "--headless", "--template", str(t), "f=f", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    proc = studymon("attach", "--headless", "f", cwd=tmp_path)
    assert proc.returncode == 2 and "has finished" in proc.stderr


def test_attach_judges_a_crash_it_sees_as_a_kill(tmp_path: Path) -> None:
    """The console dies, `attach` takes the study over, and then the controller is killed from elsewhere while a
    run is in flight: attach records that end as a kill it did not make (trigger crash, the run its target), and
    the resume is held to the same story, every check ✓ for a study that recovers soundly."""
    double = ROOT / "tests" / "doubles" / "points_study.js"
    t = tmp_path / "research.json"
    t.write_text(json.dumps({"command": ["node", str(double)], "backend": "process", "pause": 0.3, "runSeconds": 4}))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    console = subprocess.Popen(
        [sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", str(t), "h=h"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    out = tmp_path / "h"
    wait_for(lambda: "runPlanned" in ledger_kinds(out), 60, "the first plan")
    console.send_signal(signal.SIGKILL)
    console.wait()
    attach = subprocess.Popen(
        [sys.executable, "-m", "studymon.tui.cli", "attach", "--headless", "h"],
        cwd=tmp_path, env=dict(env, COLUMNS="200"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )

    def a1_in_flight_and_seen() -> bool:
        kinds = ledger_kinds(out)
        seen = len((out / "timeline.jsonl").read_text().splitlines())
        return kinds.count("runStarted") == 2 and kinds[-1] == "runStarted" and seen == len(kinds)

    wait_for(a1_in_flight_and_seen, 60, "a1 in flight, seen by the attached console")
    pid = json.loads((out / "launches.jsonl").read_text().splitlines()[0])["pid"]
    os.kill(pid, signal.SIGKILL)  # a crash: nobody the console knows of killed it
    output, _ = attach.communicate(timeout=120)
    assert attach.returncode == 3, output
    kill = json.loads((out / "kills" / "1" / "kill.json").read_text())
    assert kill["trigger"] == "crash" and [t["run"] for t in kill["targets"]] == ["a1"], kill
    proc = studymon("run", "--headless", "--resume", "h=h", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = verdicts(out)
    assert all(ok is True for ok in got.values()), got
    assert ("kill 1 · a1", "sameContainerNoRerun") in got and ("kill 1", "killDelivered") not in got
