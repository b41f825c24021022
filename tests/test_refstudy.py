"""The reference study against its contract: the ledger writer and journal on
their own, the run payload under a real shell, then whole studies as real
processes on the process runtime (and on Docker when an engine answers),
killed, interrupted and resumed; and the broken doubles, each wrong in its
own way."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from studymon.refstudy.controller import ConfigError, ModelService, parse_outputs, settings_from
from studymon.refstudy.ledger import Journal, Ledger, LedgerError, Record, ReplayMismatch, TornLedger, read_ledger
from tests.waits import until

ROOT = Path(__file__).resolve().parent.parent
DOUBLE = ROOT / "tests" / "doubles" / "broken_study.py"
AT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
KINDS = {
    "studyOpen", "stageOpen", "decision", "runPlanned", "charge", "runStarted", "runResult",
    "diagnosisSettlement", "serviceError", "halt", "export",
}
DEADLINE = 60.0


# --- helpers -------------------------------------------------------------------


def make_out(tmp_path: Path, study: str, backend: str = "process", **keys: Any) -> Path:
    """An output folder with the research.json the console would write."""
    out = tmp_path / study
    out.mkdir()
    config = {"command": ["python3", "-m", "studymon.refstudy"], "study": study, "backend": backend}
    config.update({"budget": 20, "diagnosisSeconds": 1, "samples": 2000})
    config.update(keys)
    (out / "research.json").write_text(json.dumps(config))
    return out


def launch(out: Path, resume: bool = False, double: bool = False) -> subprocess.Popen[bytes]:
    """Start the controller the way the console does (cwd OUT, own session, log appended)."""
    argv = [sys.executable, str(DOUBLE)] if double else [sys.executable, "-m", "studymon.refstudy"]
    argv += ["--config", str(out / "research.json"), "--dir", str(out / "study")]
    if resume:
        argv.append("--resume")
    env = dict(os.environ, PYTHONPATH=str(ROOT), STUDYMON_STUDY=out.name, STUDYMON_OUT=str(out))
    with open(out / "study.log", "ab") as log:
        return subprocess.Popen(
            argv, cwd=out, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )


def finish(proc: subprocess.Popen[bytes], out: Path, timeout: float = DEADLINE) -> int:
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"the controller did not end in {timeout} s; log:\n{log_of(out)}")


def log_of(out: Path) -> str:
    return (out / "study.log").read_text(errors="replace")


def records(out: Path) -> list[Record]:
    return read_ledger(out / "study" / "ledger.jsonl")


def of(recs: list[Record], kind: str, **fields: Any) -> list[Record]:
    return [r for r in recs if r.kind == kind and all(r.content.get(k) == v for k, v in fields.items())]


def wait_for(out: Path, proc: subprocess.Popen[bytes], found: Callable[[list[Record]], bool]) -> list[Record]:
    """Poll the ledger until ``found`` holds; fails when the controller ends first or the deadline passes."""

    def awaited() -> tuple[list[Record]] | None:
        try:
            recs = records(out)
        except TornLedger:
            recs = []  # caught mid-write; the rest arrives at once
        if found(recs):
            return (recs,)
        if proc.poll() is not None:
            pytest.fail(f"the controller ended ({proc.returncode}) before the awaited record; log:\n{log_of(out)}")
        return None

    return until(awaited, DEADLINE, "the awaited ledger record", step=0.02, seen=lambda: log_of(out))[0]


def first_start(recs: list[Record]) -> bool:
    return bool(of(recs, "runStarted", run="d1"))


def assert_contract(recs: list[Record]) -> None:
    """The ledger is well formed, in round order, balanced, and ends at the full stop."""
    assert [r.seq for r in recs] == list(range(1, len(recs) + 1))
    assert all(AT.match(r.at) for r in recs)
    assert all(r.kind in KINDS for r in recs)
    assert recs[0].kind == "studyOpen"
    budget = recs[0].content["budget"]

    runs = {r.content["run"] for r in of(recs, "runPlanned")}
    for run in runs:
        assert len(of(recs, "charge", run=run)) == len(of(recs, "runStarted", run=run)) == 1, run
        assert len(of(recs, "runResult", run=run)) == 1, run
    charges = of(recs, "charge")
    assert sum(c.content["amount"] for c in charges) == budget - charges[-1].content["balance"]

    for opened in of(recs, "stageOpen", stage="diagnosis"):
        r = opened.content["round"]
        plan = of(recs, "runPlanned", purpose="diagnosis", round=r)
        assert len(plan) == 1
        run = plan[0].content["run"]
        steps = [
            opened,
            of(recs, "decision", name="selectDiagnosis", round=r)[0],
            plan[0],
            of(recs, "charge", run=run)[0],
            of(recs, "runStarted", run=run)[0],
            of(recs, "runResult", run=run)[0],
            of(recs, "diagnosisSettlement", round=r)[0],
            of(recs, "stageOpen", stage="proposal", round=r)[0],
        ]
        assert [s.seq for s in steps] == sorted(s.seq for s in steps), f"round {r} out of order"
        settled = steps[6].content
        accounted = {d["experiment"] for d in settled["dropped"]} | {j["id"] for j in settled["judged"]["experiments"]}
        assert set(steps[1].content["output"]["chosen"]) == accounted

    assert recs[-1].kind == "halt" and recs[-1].content == {"reason": "balance exhausted"}
    assert not of(recs, "export")


def assert_engine_agrees(out: Path) -> None:
    """The console's own per-study checks pass on this ledger."""
    from studymon.engine.contract.accounts import Accounts
    from studymon.engine.contract.ledger import read_ledger as engine_read
    from tests.corpus import study_checks

    recs, issues = engine_read(out / "study" / "ledger.jsonl")
    verdicts = study_checks(recs, issues, Accounts().extend(recs), 0, None, True)
    assert all(c.ok for c in verdicts), [c.as_json() for c in verdicts if not c.ok]


def events_for(runtime: Any, name: str, since: float) -> list[tuple[str, str]]:
    """(action, container id) of the runtime's lifecycle events for ``name`` since ``since``."""
    out = []
    for e in runtime.events(since, runtime.now() + 1):
        actor = e.get("Actor") or {}
        if (actor.get("Attributes") or {}).get("name", "").lstrip("/") == name:
            out.append((e["Action"], actor.get("ID")))
    return out


def kill_and_resume(tmp_path: Path, study: str, backend: str) -> None:
    """SIGKILL the controller while d1 is in flight; the resume waits for the same container."""
    from studymon.engine.runtimes import open_runtime

    out = make_out(tmp_path, study, backend, diagnosisSeconds=2)
    runtime = open_runtime(backend)
    name = f"inforsi-{study}-d1"
    proc = launch(out)
    at_kill = wait_for(out, proc, first_start)
    before = runtime.inspect(name)
    assert before is not None and before["State"]["Running"]
    since = runtime.now()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    after = runtime.inspect(name)
    assert after is not None and after["State"]["Running"]
    assert (after["Id"], after["State"]["StartedAt"]) == (before["Id"], before["State"]["StartedAt"])

    assert finish(launch(out, resume=True), out) == 0, log_of(out)
    recs = records(out)
    assert recs[: len(at_kill)] == at_kill
    assert len(of(recs, "charge", run="d1")) == len(of(recs, "runStarted", run="d1")) == 1
    result = of(recs, "runResult", run="d1")
    assert len(result) == 1 and result[0].seq > at_kill[-1].seq and result[0].content["exitCode"] == 0
    assert_contract(recs)
    # The same container lived on, died once, and was removed after its result.
    assert events_for(runtime, name, since) == [("die", before["Id"]), ("destroy", before["Id"])]
    assert runtime.inspect(name) is None
    assert "Traceback" not in log_of(out)


# --- the ledger and the journal -------------------------------------------------


def test_ledger_lines_follow_the_contract(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path)
    ledger.append("studyOpen", {"study": "x", "budget": 1, "config": {}})
    ledger.append_many([("stageOpen", {"stage": "diagnosis", "round": 1}), ("halt", {"reason": "r"})])
    ledger.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 4
    first = json.loads(lines[0])
    assert list(first) == ["seq", "at", "kind", "content"] and AT.match(first["at"])
    assert [r.seq for r in read_ledger(path)] == [1, 2, 3]


def _synced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What is fsynced from now on, by kind (``file`` or ``folder``): the real fsync, noted."""
    import stat

    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def test_a_durable_ledger_fsyncs_each_write_and_its_folder_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """§9.2: each record durable before the step it announces (one fsync a write, a batch's records in one), and
    the folder once the ledger is made; ``durable=False`` (the template's ``"fsync": false``), neither."""
    synced = _synced(monkeypatch)
    with Ledger(tmp_path / "ledger.jsonl") as ledger:
        assert synced == ["folder"]
        ledger.append("studyOpen", {"study": "s"})
        ledger.append_many([("decision", {"name": "a"}), ("decision", {"name": "b"})])
        assert synced == ["folder", "file", "file"]
    with Ledger(tmp_path / "ledger.jsonl", next_seq=4) as ledger:  # made already: its folder is not synced again
        ledger.append("halt", {"reason": "x"})
    assert synced == ["folder", "file", "file", "file"]
    synced.clear()
    with Ledger(tmp_path / "other.jsonl", durable=False) as ledger:
        ledger.append("studyOpen", {"study": "s"})
    assert synced == []
    assert [r.seq for r in read_ledger(tmp_path / "ledger.jsonl")] == [1, 2, 3, 4]


def test_the_fsync_key_is_a_boolean_and_durable_by_default() -> None:
    assert settings_from({"study": "ok", "backend": "process"}).durable is True
    assert settings_from({"study": "ok", "backend": "process", "fsync": False}).durable is False
    with pytest.raises(ConfigError, match="fsync must be true or false"):
        settings_from({"study": "ok", "backend": "process", "fsync": "no"})


def test_reader_refuses_a_torn_line_and_a_gap(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_text('{"seq": 1, "at": "2026-01-01T00:00:00.000Z", "kind": "halt", "content": {}}\n{"seq": 2, "at"')
    with pytest.raises(TornLedger, match="incomplete"):
        read_ledger(path)
    path.write_text('{"seq": 2, "at": "2026-01-01T00:00:00.000Z", "kind": "halt", "content": {}}\n')
    with pytest.raises(LedgerError, match="seq"):
        read_ledger(path)


def test_a_second_writer_is_refused(tmp_path: Path) -> None:
    first = Ledger(tmp_path / "ledger.jsonl")
    with pytest.raises(LedgerError, match="another controller"):
        Ledger(tmp_path / "ledger.jsonl")
    first.close()


def test_journal_replays_then_writes(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path)
    ledger.append("stageOpen", {"stage": "diagnosis", "round": 1})
    ledger.append("runResult", {"run": "d1", "exitCode": 0, "outputs": {"e1": 0.5}})
    ledger.close()
    history = read_ledger(path)
    journal = Journal(Ledger(path, next_seq=3), history)
    assert journal.step("stageOpen", {"stage": "diagnosis", "round": 1}) is False
    assert journal.recorded("runResult", run="d1") == {"run": "d1", "exitCode": 0, "outputs": {"e1": 0.5}}
    assert journal.live and journal.recorded("runResult", run="d2") is None
    assert journal.step("halt", {"reason": "balance exhausted"}) is True
    assert [r.seq for r in read_ledger(path)] == [1, 2, 3]


def test_journal_passes_over_the_retry_marks_it_is_told_of_and_no_other(tmp_path: Path) -> None:
    """A serviceError where an earlier process gave up waiting for the runtime is passed over on replay; one of
    another stage or round, or any other record, is not."""
    path = tmp_path / "ledger.jsonl"
    with Ledger(path) as ledger:
        ledger.append("runStarted", {"run": "d2", "container": "p-s-d2"})
        ledger.append("serviceError", {"stage": "diagnosis", "round": 2, "message": "no engine"})
        ledger.append("serviceError", {"stage": "diagnosis", "round": 2, "message": "no engine, again"})
        ledger.append("serviceError", {"stage": "diagnosis", "round": 3, "message": "another round's"})
    journal = Journal(Ledger(path, next_seq=5), read_ledger(path))
    assert journal.skip("serviceError", stage="diagnosis", round=2) is False  # runStarted comes first
    assert journal.step("runStarted", {"run": "d2", "container": "p-s-d2"}) is False
    assert journal.skip("serviceError", stage="diagnosis", round=2) is True
    assert journal.skip("serviceError", stage="diagnosis", round=2) is True
    assert journal.skip("serviceError", stage="diagnosis", round=2) is False  # round 3's stays
    assert not journal.live
    with pytest.raises(ReplayMismatch, match="line 4"):
        journal.recorded("runResult", run="d2")
    assert journal.skip("serviceError", stage="diagnosis", round=3) is True
    assert journal.live and journal.skip("serviceError", stage="diagnosis", round=3) is False


def test_journal_refuses_a_different_history(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    with Ledger(path) as ledger:
        ledger.append("stageOpen", {"stage": "diagnosis", "round": 1})
    journal = Journal(Ledger(path, next_seq=2), read_ledger(path))
    with pytest.raises(ReplayMismatch, match="line 1"):
        journal.step("stageOpen", {"stage": "proposal", "round": 1})


# --- the research pieces ---------------------------------------------------------


def test_payload_computes_and_reports_on_a_real_shell() -> None:
    script = (ROOT / "refstudy" / "payload.sh").read_text()
    argv = ["sh", "-c", script, "refstudy", "0", "4000", "e1:0.500:11", "e2:-1.700:12", "e3:n/a:13"]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    again = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert first.returncode == 0 and first.stdout == again.stdout
    outputs = parse_outputs(first.stdout)
    assert set(outputs) == {"e1", "e2"}
    assert abs(outputs["e1"] - 0.4463) < 0.02  # ln(1.25) / 0.5
    assert not 0 <= outputs["e2"] <= 1


def test_model_service_is_deterministic_and_fails_once() -> None:
    service = ModelService(7, fail_at_round=2)
    assert service.propose(1, 1, 0.5, 5, 3) == ModelService(7, None).propose(1, 1, 0.5, 5, 3)
    with pytest.raises(Exception, match="unreachable"):
        service.propose(2, 1, 0.5, 8, 3)
    assert [e.id for e in service.propose(2, 2, 0.5, 8, 3)] == ["e8", "e9", "e10"]


def test_config_errors_name_the_key() -> None:
    settings = settings_from({"study": "ok", "backend": "process"})
    assert settings.budget == 60 and settings.run_cost == 10 and settings.ablation is False
    with pytest.raises(ConfigError, match="runCost"):
        settings_from({"study": "ok", "backend": "process", "runCost": 0})
    with pytest.raises(ConfigError, match="study"):
        settings_from({"study": "Bad Id", "backend": "process"})


# --- whole studies on the process runtime ------------------------------------------


def test_full_study_halts_at_the_full_stop(tmp_path: Path) -> None:
    from studymon.engine.runtimes import open_runtime

    out = make_out(tmp_path, "rs-full", budget=30, ablation=True, ablationSeconds=0.2)
    assert finish(launch(out), out) == 0, log_of(out)
    recs = records(out)
    assert_contract(recs)
    assert_engine_agrees(out)
    assert of(recs, "runPlanned", purpose="ablation"), "the ablation stage never ran"
    assert open_runtime("process").list("inforsi-rs-full-") == []  # every run's container removed
    assert "Traceback" not in log_of(out)


def test_kill_and_resume_waits_for_the_same_process_container(tmp_path: Path) -> None:
    kill_and_resume(tmp_path, "rs-kill", "process")


def test_service_error_exits_75_and_resume_finishes(tmp_path: Path) -> None:
    out = make_out(tmp_path, "rs-svc", budget=30, serviceFailAtRound=2)
    assert finish(launch(out), out) == 75, log_of(out)
    last = records(out)[-1]
    assert last.kind == "serviceError" and last.content["stage"] == "proposal" and last.content["round"] == 2
    assert finish(launch(out, resume=True), out) == 0, log_of(out)
    recs = records(out)
    assert len(of(recs, "serviceError")) == 1
    assert of(recs, "decision", name="proposeExperiments", round=2)[0].seq == last.seq + 1
    assert_contract(recs)


def test_sigint_stops_within_10_s_and_resume_finishes(tmp_path: Path) -> None:
    from studymon.engine.runtimes import open_runtime

    out = make_out(tmp_path, "rs-int", diagnosisSeconds=2)
    proc = launch(out)
    wait_for(out, proc, first_start)
    sent = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    assert finish(proc, out, timeout=10) == 130
    assert time.monotonic() - sent < 10
    assert open_runtime("process").inspect("inforsi-rs-int-d1") is not None  # left for the resume
    assert not of(records(out), "runResult", run="d1")
    assert finish(launch(out, resume=True), out) == 0, log_of(out)
    assert_contract(records(out))


def test_resume_cuts_a_torn_or_zeroed_tail_and_fresh_start_refuses_an_old_one(tmp_path: Path) -> None:
    """§9.2: on resume the study accepts a torn last line, or a power loss's zeros, and goes on from what is there
    (saying what it cut); a fresh start over an existing ledger is refused."""
    out = make_out(tmp_path, "rs-torn", budget=0)
    assert finish(launch(out), out) == 0  # nothing affordable: halts at once
    ledger = out / "study" / "ledger.jsonl"
    assert finish(launch(out), out) == 1
    assert "--resume" in log_of(out)
    whole = ledger.read_bytes()
    for tail, said in ((b'{"seq": 4, "at": "2026', "cut 22 bytes"), (b"\0" * 40, "cut 40 bytes")):
        with open(ledger, "ab") as fh:
            fh.write(tail)
        assert finish(launch(out, resume=True), out) == 0, log_of(out)
        assert said in log_of(out), log_of(out)
        assert ledger.read_bytes().startswith(whole) and ledger.read_bytes().endswith(b"\n")
        assert records(out)[-1].kind == "halt", "read strictly: every line whole, seq without a gap"
        whole = ledger.read_bytes()


def test_cutting_a_torn_tail_keeps_every_whole_line(tmp_path: Path) -> None:
    from studymon.refstudy.ledger import cut_torn_tail

    path = tmp_path / "ledger.jsonl"
    assert cut_torn_tail(path) == b""
    path.write_bytes(b"a\nb\n")
    assert cut_torn_tail(path) == b"" and path.read_bytes() == b"a\nb\n"
    path.write_bytes(b"a\nb\nc")
    assert cut_torn_tail(path) == b"c" and path.read_bytes() == b"a\nb\n"
    path.write_bytes(b"a\n\0\0")
    assert cut_torn_tail(path) == b"\0\0" and path.read_bytes() == b"a\n"
    path.write_bytes(b"torn")
    assert cut_torn_tail(path) == b"torn" and path.read_bytes() == b""


def test_a_stale_container_of_an_earlier_study_is_replaced(tmp_path: Path) -> None:
    from studymon.engine.runtimes import open_runtime

    runtime = open_runtime("process")
    stale = runtime.run("inforsi-rs-stale-d1", ["true"])
    assert runtime.wait("inforsi-rs-stale-d1", timeout=10) == 0  # exited: an earlier study's leftover
    out = make_out(tmp_path, "rs-stale", budget=10)
    assert finish(launch(out), out) == 0, log_of(out)
    assert_contract(records(out))
    lifecycle = [e for e in events_for(runtime, "inforsi-rs-stale-d1", 0) if e[0] in ("create", "destroy")]
    fresh = lifecycle[2][1]
    assert lifecycle == [("create", stale["Id"]), ("destroy", stale["Id"]), ("create", fresh), ("destroy", fresh)]
    assert fresh != stale["Id"]


def test_a_running_container_under_a_run_name_is_left_alone(tmp_path: Path) -> None:
    """Somebody's live work (another study given the same id): never removed; the study stops and says why."""
    from studymon.engine.runtimes import open_runtime

    runtime = open_runtime("process")
    other = runtime.run("inforsi-rs-busy-d1", ["sleep", "30"])
    try:
        out = make_out(tmp_path, "rs-busy", budget=10)
        assert finish(launch(out), out) != 0
        assert "inforsi-rs-busy-d1 already exists and is running" in log_of(out)
        still = runtime.inspect("inforsi-rs-busy-d1")
        assert still is not None and still["Id"] == other["Id"] and still["State"]["Status"] == "running"
    finally:
        runtime.remove("inforsi-rs-busy-d1", force=True)


def test_its_own_container_started_before_a_kill_is_adopted_not_run_again(tmp_path: Path) -> None:
    """Killed after starting a run's container but before writing runStarted: the resume takes that container."""
    from studymon.engine.runtimes import open_runtime

    runtime = open_runtime("process")
    out = make_out(tmp_path, "rs-own", budget=10)
    labels = {"studymon.study": "rs-own", "studymon.run": "d1", "studymon.dir": str((out / "study").resolve())}
    mine = runtime.run("inforsi-rs-own-d1", ["sh", "-c", "sleep 1; echo 'out e1 0.5'"], labels=labels)
    assert finish(launch(out), out) == 0, log_of(out)
    assert "adopting it, not starting the run again" in log_of(out)
    assert_contract(records(out))
    lifecycle = [e for e in events_for(runtime, "inforsi-rs-own-d1", 0) if e[0] in ("create", "start")]
    assert lifecycle == [("create", mine["Id"]), ("start", mine["Id"])], "the run was started once, in its container"


@pytest.mark.docker
def test_a_container_created_and_never_started_is_a_leftover(tmp_path: Path, docker_engine: None) -> None:
    """A controller killed between create and start leaves a created container: its resume replaces it."""
    import subprocess as sp

    from studymon.refstudy.image import IMAGE

    study = f"rs-made-{os.getpid()}"
    name = f"inforsi-{study}-d1"
    sp.run(["docker", "create", "--name", name, IMAGE, "sleep", "30"], check=True, capture_output=True)
    try:
        out = make_out(tmp_path, study, backend="docker", budget=10)
        assert finish(launch(out), out) == 0, log_of(out)
        assert f"removing the leftover container {name} (created)" in log_of(out)
    finally:
        sp.run(["docker", "rm", "-f", name], capture_output=True)


def test_study_exports_when_nothing_is_left_to_diagnose(tmp_path: Path) -> None:
    out = make_out(tmp_path, "rs-export", budget=100, initialExperiments=2, experimentsPerRound=0)
    assert finish(launch(out), out) == 0, log_of(out)
    recs = records(out)
    assert [r.kind for r in recs[-2:]] == ["stageOpen", "export"] and recs[-2].content["stage"] == "export"
    assert json.loads((out / "study" / recs[-1].content["path"]).read_text())["study"] == "rs-export"
    assert not of(recs, "halt")


def test_resume_of_a_halted_study_writes_nothing(tmp_path: Path) -> None:
    out = make_out(tmp_path, "rs-done", budget=0)
    assert finish(launch(out), out) == 0
    before = (out / "study" / "ledger.jsonl").read_bytes()
    assert finish(launch(out, resume=True), out) == 0
    assert (out / "study" / "ledger.jsonl").read_bytes() == before


# --- Docker --------------------------------------------------------------------------


@pytest.mark.docker
def test_kill_and_resume_waits_for_the_same_docker_container(tmp_path: Path, docker_engine: None) -> None:
    kill_and_resume(tmp_path, f"rs-dock-{os.getpid()}", "docker")


# --- the broken doubles ------------------------------------------------------------------


def kill_in_flight_and_resume_double(tmp_path: Path, fault: str) -> tuple[Path, float, list[Record]]:
    from studymon.engine.runtimes import open_runtime

    out = make_out(tmp_path, f"rs-{fault}", diagnosisSeconds=2, fault=fault)
    runtime = open_runtime("process")
    proc = launch(out, double=True)
    at_kill = wait_for(out, proc, first_start)
    since = runtime.now()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert finish(launch(out, resume=True, double=True), out) == 0, log_of(out)
    return out, since, at_kill


def test_double_rerun_starts_the_run_again(tmp_path: Path) -> None:
    from studymon.engine.runtimes import open_runtime

    out, since, _ = kill_in_flight_and_resume_double(tmp_path, "rerun")
    actions = [a for a, _ in events_for(open_runtime("process"), "inforsi-rs-rerun-d1", since)]
    assert "create" in actions and "start" in actions
    assert len(of(records(out), "runStarted", run="d1")) == 1


def test_double_recharge_charges_twice(tmp_path: Path) -> None:
    out, _, _ = kill_in_flight_and_resume_double(tmp_path, "recharge")
    assert len(of(records(out), "charge", run="d1")) == 2


def test_double_noresult_leaves_the_run_unsettled(tmp_path: Path) -> None:
    out, _, _ = kill_in_flight_and_resume_double(tmp_path, "noresult")
    recs = records(out)
    assert not of(recs, "runResult", run="d1")
    assert {d["reason"] for d in of(recs, "diagnosisSettlement", round=1)[0].content["dropped"]} == {"no result"}
    assert recs[-1].content == {"reason": "balance exhausted"}
    from studymon.engine.runtimes import open_runtime

    assert open_runtime("process").inspect("inforsi-rs-noresult-d1") is None


def test_double_instant_writes_start_and_result_together(tmp_path: Path) -> None:
    out = make_out(tmp_path, "rs-instant", fault="instant")
    assert finish(launch(out, double=True), out) == 0, log_of(out)
    recs = records(out)
    started, result = of(recs, "runStarted", run="d1")[0], of(recs, "runResult", run="d1")[0]
    # One write: adjacent lines stamped with the same instant.
    assert result.seq == started.seq + 1 and result.at == started.at
