"""The explorer finds what guessing misses, and never fails a sound study.

* The honest JavaScript double and the reference study as it comes (no ``stepSeconds``: records written
  microseconds apart), explored whole on each runtime on a local cluster, and the reference study on both
  runtimes on a real scheduler with two workers, the study's file system holding each ``after:`` point at its
  record: every ``after:`` class is hit, no such trial missed, every trial holds (a container point may still be
  missed under load, for the one reason that the study wrote its next record first).
* The five broken doubles of the kill points, each explored with no point given: each mistake is found at a
  point of its own class, named in the matrix with exactly the checks it fails; the class of the seed's single point
  (the first diagnosis run's start) holds in every one of them: that point finds none.

The campaigns of one test run at once (each on a local cluster of its own): their trials mostly wait on their
studies' pauses and runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.contract.killpoint import SEED
from tests.studies import FAST, REFSTUDY_TEMPLATE, ROOT
from tests.test_kill_points import MISTAKES

pytestmark = pytest.mark.slow
DOUBLE = ROOT / "tests" / "doubles" / "points_study.js"
WORKERS = "2"


def _template(tmp: Path, name: str, body: dict[str, Any]) -> Path:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(body))
    return path


def _double(tmp: Path, fault: str, backend: str = "process") -> Path:
    # d1 runs 8 s in every trial: long enough that a resume after a kill at the seed's point finds it running
    # (else forget-finished would bite there too, on a busy machine), as in the kill points' own tests.
    return _template(tmp, fault, {"command": ["node", str(DOUBLE)], "backend": backend, "pause": 0.15,
                                  "runSeconds": 0.5, "fault": fault, "containerPrefix": "acc",
                                  "longFirstRun": {"ids": "*", "seconds": 8} if fault != "honest" else {}})


def _explore(
    tmp: Path, campaigns: dict[str, Path], scheduler: str | None = None
) -> dict[str, tuple[int, str, dict[str, Any]]]:
    """Run the campaigns at once (each on a local cluster of its own, or all on ``scheduler``); per campaign: exit
    status, output, campaign.json."""
    where = ["--scheduler", scheduler] if scheduler else ["--workers", WORKERS]
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-m", "studymon.tui.cli", "explore", "--headless", "--template", str(template),
             *where, f"{name}={tmp / name}"],
            cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "COLUMNS": "200"})
        for name, template in campaigns.items()
    }
    out = {}
    for name, proc in procs.items():
        text, _ = proc.communicate(timeout=1500)
        body = json.loads((tmp / name / "campaign.json").read_text())
        out[name] = (proc.returncode, text, body)
    return out


# Container points are still timed by the runtime's event stream, not held (only after: points are, §9.1): under
# load, the record after a container event can be written before the console sees the event.  Such a trial is
# missed for that reason alone, said so; every after: class is hit.
CONTAINER_PASSED = re.compile(r"was written when it was seen|was written before the freeze")


def _every_class_hit_and_every_trial_holds(status: int, text: str, body: dict[str, Any]) -> None:
    assert status == 0, text[-4000:]
    rows = body["matrix"]["rows"]
    classes = [c["name"] for c in body["classes"]]
    assert set(rows) == set(classes), "a row per class"
    for cls in classes:
        after = cls.startswith("after:")
        assert rows[cls].get("") == "✓" or (not after and rows[cls].get("") == "missed"), (cls, rows[cls])
    for t in body["trials"]:
        if t["state"] == "missed" and t["points"][0].startswith("container:"):
            assert CONTAINER_PASSED.search(t["detail"] or ""), t
            continue
        assert t["state"] == "done" and t["ok"] is True, t


def _after_points_held_exactly(campaign: Path) -> None:
    """Every kill at an ``after:`` point was held by the study's file system at its record (kill.json)."""
    kills = [json.loads(p.read_text()) for p in campaign.glob("trials/*/kills/*/kill.json")]
    after = [k for k in kills if str(k.get("point")).startswith("after:")]
    assert after, campaign
    assert [k["point"] for k in after if k.get("exact") is not True] == [], campaign


def _reference(tmp: Path, backend: str) -> Path:
    """The reference study as it comes (no ``stepSeconds``), shortened: its records microseconds apart."""
    ref = json.loads(REFSTUDY_TEMPLATE.read_text())
    ref.update(FAST, backend=backend, budget=30, diagnosisSeconds=1, containerPrefix="accr")
    ref.pop("stepSeconds", None)
    return _template(tmp, f"ref-{backend}", ref)


@pytest.fixture(params=["process", "docker"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_engine")
    return str(request.param)


def test_the_honest_double_and_the_reference_study_hold_at_every_class(tmp_path: Path, backend: str) -> None:
    campaigns = {
        f"hon{backend[0]}": _double(tmp_path, "honest", backend),
        f"ref{backend[0]}": _reference(tmp_path, backend),
    }
    results = _explore(tmp_path, campaigns)
    for name, (status, text, body) in results.items():
        _every_class_hit_and_every_trial_holds(status, text, body)
        _after_points_held_exactly(tmp_path / name)
        assert len(body["classes"]) >= 10, (name, body["classes"])
        assert "studymon explore — " in text and "campaign: exit 0" in text


def test_each_broken_double_is_found_at_its_own_class_and_the_seed_s_point_finds_none(tmp_path: Path) -> None:
    results = _explore(tmp_path, {fault: _double(tmp_path, fault) for fault in MISTAKES})
    for fault, (status, text, body) in results.items():
        assert status == 1, (fault, text[-4000:])
        point, failed = MISTAKES[fault]
        m = body["matrix"]
        # The classes of the mistake's own point (its record or container action, for its run).
        own = [c["name"] for c in body["classes"] if any(p.split("#")[0] == point for p in c["candidates"])]
        assert own, (fault, [c["name"] for c in body["classes"]])
        failing = [t for t in body["trials"] if t["state"] == "done" and t["ok"] is False]
        assert any(t["class"] in own for t in failing), (fault, own, failing)
        # Exactly the checks the mistake breaks: at its own class, each of them and no other (none unknown), and
        # wherever else the mistake shows, nothing beyond them.
        expected = {check for _scope, check in failed}

        def names(t: dict[str, Any]) -> set[str]:
            return {f.rsplit(" · ", 1)[-1] for f in t["failed"]}

        assert any(t["class"] in own and names(t) == expected and not t["unknown"] for t in failing), (
            fault, expected, [(t["class"], t["failed"], t["unknown"]) for t in failing if t["class"] in own])
        for t in failing:
            assert names(t) <= expected, (fault, expected, t["class"], t["failed"])
        # Named in the matrix: each check the mistake fails is ✗ on a row of its own class, with a first point.
        for _scope, check in failed:
            assert any(m["rows"].get(cls, {}).get(check) == "✗" for cls in own), (fault, check, own, m["rows"])
            assert check in m["firstFailing"], (fault, check, m["firstFailing"])
        assert "first failing:" in text
        # The seed's single point (the first candidate of its class) finds nothing: its trial holds.
        seed = [c["name"] for c in body["classes"] if c["candidates"][0] == str(SEED)]
        assert len(seed) == 1, (fault, body["classes"])
        seed_trials = [t for t in body["trials"] if t["points"] == [str(SEED)]]
        assert [t["ok"] for t in seed_trials] == [True], (fault, seed_trials)


def test_the_reference_study_on_a_real_scheduler_hits_every_class_on_both_runtimes(
    tmp_path: Path, docker_engine: object
) -> None:
    """A ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1; the reference study as it comes explored
    on each runtime at once through them: every class hit, no trial missed, every trial ✓, on both workers."""
    from tests.test_explore_dask import _address, _start
    from tests.waits import until

    sched_file = tmp_path / "scheduler.json"
    procs = [_start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                     "--dashboard-address", ":0", "--scheduler-file", str(sched_file)], tmp_path / "scheduler.log")]
    try:
        address = until(lambda: _address(sched_file), 60, "the scheduler's address")
        for name in ("w1", "w2"):
            procs.append(_start([sys.executable, "-m", "distributed.cli.dask_worker", address, "--no-nanny",
                                 "--nthreads", "1", "--name", name, "--host", "127.0.0.1", "--dashboard-address",
                                 ":0"], tmp_path / f"{name}.log"))
        results = _explore(tmp_path, {"schp": _reference(tmp_path, "process"), "schd": _reference(tmp_path, "docker")},
                           scheduler=address)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    workers = set()
    for name, (status, text, body) in results.items():
        _every_class_hit_and_every_trial_holds(status, text, body)
        _after_points_held_exactly(tmp_path / name)
        assert len(body["classes"]) >= 10, (name, body["classes"])
        workers |= {t["worker"] for t in body["trials"]}
    assert len(workers) == 2, workers
