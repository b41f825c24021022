"""Kill points (contract §7) against studies of our own that get one recovery wrong each, on both backends.

The doubles are one study in JavaScript, written from the contract alone
(``tests/doubles/points_study.js``), with a recovery mistake chosen per study
id.  Each mistake bites at one point only: armed at the seed's point (the
first diagnosis run's start) every double passes, which shows that the point
matters; killed at its own point each fails exactly its checks.  The honest
double passes at a point of every kind, and so does the reference study.
Several studies run in one command, side by side, to keep this to a minute.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from studymon.engine.contract.killpoint import SEED
from studymon.engine.fs.fuse import NO_FUSE_ENV
from studymon.engine.runtimes import open_runtime
from tests.studies import FAST, REFSTUDY_TEMPLATE, ROOT, studymon
from tests.waits import until

pytestmark = pytest.mark.slow
DOUBLE = ROOT / "tests" / "doubles" / "points_study.js"

# Each mistake, the point where it bites, and the checks it fails there (scope, check).
MISTAKES: dict[str, tuple[str, set[tuple[str, str]]]] = {
    "recharge": ("after:charge/diagnosis", {
        ("study", "contractKept"), ("study", "chargedEqualsStarts"), ("kill 1 · d1", "chargedOnce")}),
    "restart-unrecorded": ("container:start/diagnosis", {("kill 1 · d1", "sameContainerNoRerun")}),
    "settle-twice": ("after:runResult/diagnosis", {
        ("study", "contractKept"), ("study", "resultsAccounted"), ("kill 1 · d1", "resultSettledAndFinished")}),
    "forget-finished": ("container:die/diagnosis", {("kill 1 · d1", "sameContainerNoRerun")}),
    "abandon-ablation": ("after:runStarted/ablation", {
        ("study", "resultsAccounted"), ("kill 1 · a1", "sameContainerNoRerun"),
        ("kill 1 · a1", "resultSettledAndFinished")}),
}
# The honest double at a point of every kind: a record of each run kind, and each container action.
HONEST_POINTS = ["after:charge/diagnosis", "container:start/diagnosis", "after:runResult/diagnosis",
                 "container:die/diagnosis", "after:runStarted/ablation"]


def checks(out: Path) -> dict[tuple[str, str], bool | None]:
    report = json.loads((out / "report.json").read_text())
    return {(c["scope"], c["name"]): c["ok"] for c in report["checks"]}


def not_holding(out: Path) -> set[tuple[str, str]]:
    return {key for key, ok in checks(out).items() if ok is not True}


def fired_at(out: Path) -> list[str]:
    lines = [json.loads(line) for line in (out / "arms.jsonl").read_text().splitlines()]
    return [line["point"] for line in lines if line["event"] == "fired"]


def _double_template(
    tmp: Path, backend: str, faults: dict[str, str], run_seconds: float = 2, long_first_run: tuple[str, ...] = ()
) -> Path:
    """The double's template: 0.2 s between its steps, runs of ``run_seconds``; the studies in ``long_first_run``
    run d1 for 8 s, to outlast a resume on a loaded machine (forget-finished must not bite at the seed's point)."""
    path = tmp / "research.json"
    path.write_text(json.dumps({"command": ["node", str(DOUBLE)], "backend": backend, "pause": 0.2,
                                "runSeconds": run_seconds, "faults": faults,
                                "longFirstRun": {"ids": list(long_first_run), "seconds": 8}}))
    return path


@pytest.fixture(params=["process", "docker"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_engine")
    return str(request.param)


def test_each_mistake_passes_at_the_seed_s_point_and_fails_at_its_own(tmp_path: Path, backend: str) -> None:
    token = uuid.uuid4().hex[:6]  # a Docker engine is shared: ids of this test's own
    seed = {f"s{n}{token}": fault for n, fault in enumerate(MISTAKES)}
    own = {f"o{n}{token}": fault for n, fault in enumerate(MISTAKES)}
    honest = {f"h{n}{token}": point for n, point in enumerate(HONEST_POINTS)}
    # A study that writes each result with the record after it, in one write: the study's file system holds that write
    # at the result's end, so the point is hit exactly (without it, the point is missed: the test below).
    one_write = f"w{token}"
    template = _double_template(tmp_path, backend, {**seed, **own, one_write: "one-write"}, long_first_run=tuple(seed))
    args = ["run", "--headless", "--template", str(template)]
    args += [f"--kill={sid}:{SEED}" for sid in seed]
    args += [f"--kill={sid}:{MISTAKES[fault][0]}" for sid, fault in own.items()]
    args += [f"--kill={sid}:{point}" for sid, point in honest.items()]
    args.append(f"--kill={one_write}:after:runResult/diagnosis")
    studies = [*seed, *own, *honest, one_write]
    proc = studymon(*args, *[f"{sid}={sid}" for sid in studies], cwd=tmp_path, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the mistakes at their own points fail
    for sid, fault in seed.items():
        assert fired_at(tmp_path / sid) == [str(SEED)], (fault, sid)
        assert not_holding(tmp_path / sid) == set(), (fault, checks(tmp_path / sid))
    for sid, fault in own.items():
        point, failed = MISTAKES[fault]
        assert fired_at(tmp_path / sid) == [point], (fault, sid)
        assert not_holding(tmp_path / sid) == failed, (fault, checks(tmp_path / sid))
        assert all(checks(tmp_path / sid)[key] is False for key in failed), fault
    for sid, point in honest.items():
        assert fired_at(tmp_path / sid) == [point], (point, sid)
        assert not_holding(tmp_path / sid) == set(), (point, checks(tmp_path / sid))
        assert ("kill 1", "killEvidence") in checks(tmp_path / sid)
    # Held exactly where the result was written with the record after it.
    assert fired_at(tmp_path / one_write) == ["after:runResult/diagnosis"]
    assert json.loads((tmp_path / one_write / "kills" / "1" / "kill.json").read_text())["exact"] is True
    assert not_holding(tmp_path / one_write) == set(), checks(tmp_path / one_write)


def test_a_point_inside_one_write_is_missed_without_the_study_s_file_system(tmp_path: Path, backend: str) -> None:
    """Without FUSE the console can only watch and signal: the result and the record after it come in one write,
    so the point after the result is missed, said once why, recorded as such, and killTriggered is ?."""
    missed = f"m{uuid.uuid4().hex[:6]}"
    template = _double_template(tmp_path, backend, {missed: "one-write"})
    proc = studymon("run", "--headless", "--template", str(template), f"--kill={missed}:after:runResult/diagnosis",
                    f"{missed}={missed}", cwd=tmp_path, timeout=300, env={NO_FUSE_ENV: "1"})
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert proc.stdout.count("points are timed by signals and may be missed: STUDYMON_NO_FUSE is set") == 1, proc.stdout
    assert not (tmp_path / missed / "kills").exists()
    arms = [json.loads(line) for line in (tmp_path / missed / "arms.jsonl").read_text().splitlines()]
    assert [a["event"] for a in arms] == ["arm", "missed"] and arms[1]["point"] == "after:runResult/diagnosis"
    assert not_holding(tmp_path / missed) == {("study", "killTriggered")}
    assert checks(tmp_path / missed)[("study", "killTriggered")] is None  # not tested there: ? (§6.6, v4)
    report = json.loads((tmp_path / missed / "report.json").read_text())
    said = next(c["detail"] for c in report["checks"] if c["name"] == "killTriggered")
    assert said.startswith("missed after:runResult/diagnosis d1, not tested: seq "), said


def test_the_reference_study_passes_at_points_of_every_kind(tmp_path: Path, backend: str) -> None:
    data = json.loads(REFSTUDY_TEMPLATE.read_text())
    data.update(FAST, backend=backend)
    template = tmp_path / "t.json"
    template.write_text(json.dumps(data))
    token = uuid.uuid4().hex[:6]
    # The die's study runs under a command of its own: the reference study writes its result as soon as its
    # run has exited, so the die must be reacted to first, and beside two other studies' kills and resumes in
    # the same loop at that moment it is sometimes missed (honestly: "runResult was written when it was seen").
    together = ["after:charge/diagnosis#2", "container:create/diagnosis#2", "after:runStarted/diagnosis#3"]
    groups = [together, ["container:die#2"]]
    for attempt in range(3):
        missed: list[str] = []
        for group in groups:
            points = {f"r{n}{token}{len(group)}{attempt}": point for n, point in enumerate(group)}
            args = ["run", "--headless", "--template", str(template)] + [f"--kill={s}:{p}" for s, p in points.items()]
            proc = studymon(*args, *[f"{sid}={sid}" for sid in points], cwd=tmp_path, timeout=600)
            for sid, point in points.items():
                log = tmp_path / sid / "study.log"
                said = f"exit {proc.returncode}\n{proc.stdout}{proc.stderr}\n{log.read_text() if log.exists() else ''}"
                assert (tmp_path / sid / "report.json").is_file(), (point, sid, said)
                if _missed(tmp_path / sid):
                    # A point passed before the freeze (a busy machine, a die reacted to late) was not tested
                    # there: said as such, never a failure, and tried again alone below.
                    assert checks(tmp_path / sid)[("study", "killTriggered")] is None, (point, sid)
                    assert not_holding(tmp_path / sid) == {("study", "killTriggered")}, (point, checks(tmp_path / sid))
                    missed.append(point)
                    continue
                assert fired_at(tmp_path / sid) == [point], (point, sid)
                assert not_holding(tmp_path / sid) == set(), (point, checks(tmp_path / sid))
            assert proc.returncode == (3 if any(p in missed for p in group) else 0), proc.stdout + proc.stderr
        if not missed:
            return
        groups = [[p] for p in missed]
    raise AssertionError(f"points missed three times over: {missed}")


def _missed(out: Path) -> bool:
    lines = [json.loads(line) for line in (out / "arms.jsonl").read_text().splitlines()]
    return any(line["event"] == "missed" for line in lines)


def test_two_kills_the_second_on_the_resumed_controller(tmp_path: Path) -> None:
    """Killed at d1's start, then at the resumed controller's first runResult (d1's, before its settlement)."""
    template = _double_template(tmp_path, "process", {"rerun": "rerun-unsettled"}, run_seconds=1.5)
    points = [f"--kill={sid}:{p}" for sid in ("honest", "rerun") for p in (SEED, "after:runResult")]
    proc = studymon("run", "--headless", "--template", str(template), *points, "honest=honest", "rerun=rerun",
                    cwd=tmp_path, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for sid in ("honest", "rerun"):
        assert fired_at(tmp_path / sid) == [str(SEED), "after:runResult"], sid
        arms = [json.loads(line) for line in (tmp_path / sid / "arms.jsonl").read_text().splitlines()]
        second = [a for a in arms if a["event"] == "fired"][1]
        kill1 = json.loads((tmp_path / sid / "kills" / "1" / "kill.json").read_text())
        assert second["fromSeq"] == kill1["beforeKillSeq"]  # counted on the resumed controller only
        kill2 = json.loads((tmp_path / sid / "kills" / "2" / "kill.json").read_text())
        assert [(t["run"], t["class"]) for t in kill2["targets"]] == [("d1", "unsettled")]
    assert not_holding(tmp_path / "honest") == set(), checks(tmp_path / "honest")
    assert not_holding(tmp_path / "rerun") == {("kill 2 · d1", "sameContainerNoRerun")}, checks(tmp_path / "rerun")
    assert checks(tmp_path / "rerun")[("kill 1 · d1", "sameContainerNoRerun")] is True  # the first resume was sound


def _controller_pid(out: Path) -> int | None:
    try:
        starts = [json.loads(line) for line in (out / "launches.jsonl").read_text().splitlines()]
    except FileNotFoundError:
        return None
    return starts[0]["pid"] if starts else None


def _last_record(out: Path) -> dict[str, object] | None:
    try:
        lines = (out / "study" / "ledger.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return None
    return json.loads(lines[-1]) if lines else None


def test_ends_studymon_did_not_make_are_judged_as_kills(tmp_path: Path) -> None:
    """Each controller is killed from outside (SIGKILL by this test, not the console) at its mistake's moment; the
    console judges that end as a kill it did not make (trigger crash), and `studymon run --resume` is judged
    by the same per-target checks: a double charge, a rerun and a lost result are each ✗, the honest double ✓."""
    faults = {"recharge": "recharge", "rerun": "forget-finished", "lost": "abandon-ablation", "honest": "honest"}
    moments = {"recharge": ("charge", "d1"), "rerun": ("runStarted", "d1"), "lost": ("runStarted", "a1"),
               "honest": ("runStarted", "d1")}
    template = _double_template(tmp_path, "process", faults, run_seconds=2)
    pairs = [f"{sid}={sid}" for sid in faults]
    first = subprocess.Popen(  # noqa: S603 - our own command
        [sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", str(template), *pairs],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200"),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    left = dict(moments)
    deadline = time.monotonic() + 120
    while left and time.monotonic() < deadline:
        for sid, (kind, run) in list(left.items()):
            last = _last_record(tmp_path / sid)
            if last is not None and last["kind"] == kind and last["content"]["run"] == run:  # type: ignore[index]
                pid = _controller_pid(tmp_path / sid)
                assert pid is not None
                os.kill(pid, signal.SIGKILL)  # a crash: nobody the console knows of killed it
                del left[sid]
        time.sleep(0.01)
    output, _ = first.communicate(timeout=120)
    assert not left, (left, output)
    assert first.returncode == 3, output  # crashed: resumable
    for sid in faults:
        kill = json.loads((tmp_path / sid / "kills" / "1" / "kill.json").read_text())
        assert kill["trigger"] == "crash" and kill["signal"] is None, kill
        assert [t["run"] for t in kill["targets"]] == [moments[sid][1]], kill
    # The runs' containers end while no controller runs (2 s runs): the resume finds them exited.
    runtime = open_runtime("process")
    until(lambda: not any(c["State"]["Status"] == "running" for sid in faults for c in runtime.list(f"inforsi-{sid}-")),
          60, "the runs' containers to end while no controller runs")
    proc = studymon("run", "--headless", "--resume", *pairs, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert not_holding(tmp_path / "honest") == set(), checks(tmp_path / "honest")
    assert ("kill 1", "killDelivered") not in checks(tmp_path / "honest")  # not the console's kill
    assert checks(tmp_path / "honest")[("kill 1 · d1", "sameContainerNoRerun")] is True
    assert not_holding(tmp_path / "recharge") == {
        ("study", "contractKept"), ("study", "chargedEqualsStarts"), ("kill 1 · d1", "chargedOnce")}
    assert not_holding(tmp_path / "rerun") == {("kill 1 · d1", "sameContainerNoRerun")}
    assert not_holding(tmp_path / "lost") == {
        ("study", "resultsAccounted"), ("kill 1 · a1", "sameContainerNoRerun"), ("kill 1 · a1", "resultSettledAndFinished")}
