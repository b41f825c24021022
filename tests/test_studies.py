"""Whole studies through ``studymon run``: real processes, real containers, real evidence.

The reference study must pass every check on both runtimes; broken doubles of
it must fail exactly the checks their fault breaks, with exit status 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studymon.engine.fs.fuse import NO_FUSE_ENV
from studymon.engine.fs.mount import mounted_anywhere
from tests.studies import (
    assert_evidence_complete,
    broken_template,
    failing,
    studymon,
    template,
    verdicts,
)
from tests.test_fs_crashes import server_pids
from tests.waits import until

pytestmark = pytest.mark.slow


def three_armed_one(tmp_path: Path, backend: str) -> None:
    t = template(tmp_path, backend=backend)
    proc = studymon(
        "run", "--headless", "--template", str(t), "--kill-after-first-diagnosis-start", "b",
        "a=a", "b=b", "c=c", cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all" in proc.stdout and "checks hold" in proc.stdout
    for sid in "abc":
        out = tmp_path / sid
        assert json.loads((out / "research.json").read_text())["backend"] == backend
        assert_evidence_complete(out, killed=sid == "b")
        samples = [json.loads(l) for l in (out / "machine.jsonl").read_text().splitlines()]
        light = [m for m in samples if m["label"] == "sample"]
        assert light and {"load", "memory", "cpu"} <= set(light[0])
        assert all(ok is True for ok in verdicts(out).values()), verdicts(out)
    b = tmp_path / "b"
    v = verdicts(b)
    target = json.loads((b / "kills" / "1" / "kill.json").read_text())["targets"][0]
    scope = f"kill 1 · {target['run']}"
    for name in ("sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished"):
        assert v[(scope, name)] is True
    assert v[("study", "killTriggered")] is True
    snaps = [
        json.loads((b / "kills" / "1" / f).read_text())[target["container"]]
        for f in ("container-before.json", "container-after-kill.json", "container-before-resume.json")
    ]
    assert snaps[0]["Id"] == snaps[1]["Id"] == snaps[2]["Id"]
    assert snaps[0]["State"]["Running"] and snaps[1]["State"]["Running"]
    # report rebuilds the same verdicts from the folders alone.
    again = studymon("report", "--json", "a", "b", "c", cwd=tmp_path)
    assert again.returncode == 0
    rebuilt = {r["study"]: r["ok"] for r in json.loads(again.stdout)}
    assert rebuilt == {"a": True, "b": True, "c": True}


def test_three_studies_on_docker_one_armed(tmp_path: Path, docker_engine: None) -> None:
    three_armed_one(tmp_path, "docker")


def test_three_studies_on_the_process_runtime_one_armed(tmp_path: Path) -> None:
    three_armed_one(tmp_path, "process")


@pytest.mark.parametrize(
    "fault, broken",
    [
        ("rerun", {"sameContainerNoRerun"}),
        # Charging twice also unbalances the books, which the per-study check sees too, and
        # breaks §2a rule 3 (at most one charge per run).
        ("recharge", {"chargedOnce", "chargedEqualsStarts", "contractKept"}),
        # A settlement of a run with no result breaks §2a rule 5; without the result the
        # kill's window never closes, so the container check stays unknown.
        # The study then finishes without d1's result: lost (rule 14).
        ("noresult", {"resultSettledAndFinished", "contractKept", "sameContainerNoRerun", "resultsAccounted"}),
    ],
)
def test_broken_study_fails_exactly_its_check(tmp_path: Path, fault: str, broken: set[str]) -> None:
    t = broken_template(tmp_path, fault, backend="process")
    proc = studymon("run", "--headless", "--template", str(t), "--kill-after-first-diagnosis-start", "x", "x=x", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "✗" in proc.stdout
    assert failing(tmp_path / "x") == broken


def test_a_study_whose_point_cannot_be_hit_is_not_tested_there(tmp_path: Path) -> None:
    """Without the study's file system (no FUSE, forced here), the first diagnosis run's runStarted and runResult in
    one write: the point is missed, never hit elsewhere.  Nothing was tested there (v4 §6.6): killTriggered is ?,
    never ✗, and the run exits 3."""
    t = broken_template(tmp_path, "instant", backend="process")
    proc = studymon("run", "--headless", "--template", str(t), "--kill-after-first-diagnosis-start", "x", "x=x",
                    cwd=tmp_path, env={NO_FUSE_ENV: "1"})
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert failing(tmp_path / "x") == {"killTriggered"}
    report = json.loads((tmp_path / "x" / "report.json").read_text())
    triggered = next(c for c in report["checks"] if c["name"] == "killTriggered")
    assert triggered["ok"] is None and "not tested" in triggered["detail"]


def test_the_same_point_is_hit_exactly_through_the_study_s_file_system(tmp_path: Path) -> None:
    """With it, the write of the two records is held at the end of runStarted: the point is hit, and the study,
    sound but for its pace, holds at it."""
    t = broken_template(tmp_path, "instant", backend="process")
    proc = studymon("run", "--headless", "--template", str(t), "--kill-after-first-diagnosis-start", "x", "x=x",
                    cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kill = json.loads((tmp_path / "x" / "kills" / "1" / "kill.json").read_text())
    assert kill["exact"] is True and kill["point"] == "after:runStarted/diagnosis"
    ledger = [json.loads(x) for x in (tmp_path / "x" / "study" / "ledger.jsonl").read_text().splitlines()]
    at_kill = json.loads((tmp_path / "x" / "kills" / "1" / "ledger-at-kill.json").read_text())
    assert at_kill[-1]["kind"] == "runStarted" and at_kill[-1]["seq"] == kill["triggerSeq"], "nothing past the point"
    assert failing(tmp_path / "x") == set() and ledger[-1]["kind"] == "halt"
    # Each controller's mount ended with it: none is left in any mount namespace, nor a server of it.
    study = tmp_path / "x" / "study"
    until(lambda: not mounted_anywhere(study) and not server_pids(study), 15, "no mount left")


def test_service_error_then_resume(tmp_path: Path) -> None:
    t = template(tmp_path, backend="process", serviceFailAtRound=2)
    first = studymon("run", "--headless", "--template", str(t), "s=s", cwd=tmp_path)
    assert first.returncode == 3, first.stdout + first.stderr
    assert "studymon run --resume s=" in first.stdout
    out = tmp_path / "s"
    assert not (out / "report.json").exists()
    kinds = [json.loads(l)["kind"] for l in (out / "study" / "ledger.jsonl").read_text().splitlines()]
    assert kinds[-1] == "serviceError"
    second = studymon("run", "--resume", "--headless", f"s={out}", cwd=tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert_evidence_complete(out, killed=False)
    assert all(ok is True for ok in verdicts(out).values())
    launches = [json.loads(l) for l in (out / "launches.jsonl").read_text().splitlines()]
    assert [(l["event"], l.get("code")) for l in launches] == [("start", None), ("end", 75), ("start", None), ("end", 0)]
