"""Faults done to the container engine inside a kill's window, on whole studies.

Real ``studymon`` processes and sessions, real controllers, real Docker
engines:

* the engine a study runs on crashes and is restarted between the kill and
  the target's result (an engine of the test's own, :mod:`tests.docker_engine`):
  the restarted engine stops the run's container (live restore is off) and
  has forgotten its events, so the container check is never a pass, and its
  detail says the engine restarted;
* the target's container is removed from outside (``docker rm -f``) while
  the controller is dead, before the resume: a ``kill`` and ``die`` that are
  no recovery, judged ✗.

Either way nothing is lost from the evidence folder and nothing crashes.
How the judge reads a recorded restart is pinned on folders built from the
corpus's sound study in ``tests/test_judge_restarts.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psutil
import pytest

from studymon.engine.contract.folder import KillFolder
from studymon.engine.events import KillStep, StudyEvent
from studymon.engine.io.clock import rfc3339_ms
from studymon.engine.judge import judge
from studymon.engine.kill.recording import EventRecorder
from studymon.engine.launch.prepare import create_fresh, plan_fresh
from studymon.engine.live.supervisor import Supervisor
from studymon.engine.runtimes.docker import DockerRuntime, daemon_identity
from studymon.refstudy.image import IMAGE
from tests.docker_engine import Engine
from tests.studies import ROOT, assert_evidence_complete, template
from tests.waits import until

PATIENT = ROOT / "tests" / "doubles" / "patient_study.py"
LIVE_FILE = "container-events-live.jsonl"
RESTARTS_FILE = "runtime-restarts.jsonl"
RESTARTED = "the Docker engine restarted"
# Long enough that the target still runs when the engine goes down: the kill and the
# resume take a second or two; the restarted engine stops the container itself.
RUN_SECONDS = 30


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for(what: str, ready, timeout: float, proc: subprocess.Popen[str] | None = None) -> None:
    """Until ``ready()``; fails at the deadline, or at once when ``proc`` ends first."""
    until(lambda: ready() or (proc is not None and proc.poll() is not None), timeout, what, step=0.02)
    if not ready():
        assert proc is not None
        out, err = proc.communicate()
        raise AssertionError(f"studymon ended (exit {proc.returncode}) before {what}:\n{out}\n{err}")


def resumed_after_kill(out: Path) -> bool:
    """launches.jsonl shows the controller's end by SIGKILL, then a resumed start."""
    path = out / "launches.jsonl"
    if not path.exists():
        return False
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]
    ends = [i for i, l in enumerate(lines) if l.get("event") == "end" and l.get("signal") == "SIGKILL"]
    return bool(ends) and any(l.get("event") == "start" and l.get("resume") for l in lines[ends[0] + 1:])


def target_check(out: Path, run: str = "d1") -> Any:
    checks = {(c.scope, c.name): c for c in judge(out).checks}
    return checks[(f"kill 1 · {run}", "sameContainerNoRerun")]


def assert_nothing_lost(out: Path) -> None:
    """Every ledger record the study wrote reached the console's timeline, once."""
    ledger = [r["seq"] for r in read_lines(out / "study" / "ledger.jsonl")]
    seen = [t["seq"] for t in read_lines(out / "timeline.jsonl")]
    assert sorted(set(seen)) == ledger == list(range(1, len(ledger) + 1)), (ledger, seen)


def test_the_recorder_writes_a_restart_beside_its_gap_also_for_a_window_opened_after_it(tmp_path: Path) -> None:
    recorder = EventRecorder("p-x-", lambda _a, _b: [])
    now = time.time()
    recorder.on_live(now - 10)
    restart = {"runtime": "docker", "before": {"pid": 1, "started": 5}, "after": {"pid": 2, "started": 9}}
    recorder.on_gap(now - 5, now - 4, restart)  # before any window: remembered
    first = KillFolder(tmp_path, 1).path
    first.mkdir(parents=True)
    recorder.open(1, KillFolder(tmp_path, 1), now - 6, set(), now)
    recorder.on_gap(now - 2, now - 1)  # a gap with no known cause: no restart line
    recorder.on_gap(now - 1, now, restart)
    gaps = [line["gap"] for line in read_lines(first / LIVE_FILE) if "gap" in line]
    assert [g["from"] for g in gaps] == [rfc3339_ms(now - 5), rfc3339_ms(now - 2), rfc3339_ms(now - 1)]
    restarts = read_lines(first / RESTARTS_FILE)
    assert [(r["from"], r["to"]) for r in restarts] == [(rfc3339_ms(now - 5), rfc3339_ms(now - 4)),
                                                      (rfc3339_ms(now - 1), rfc3339_ms(now))]
    assert all(r["runtime"] == "docker" and r["before"]["pid"] == 1 and r["after"]["pid"] == 2 for r in restarts)
    # A window opened after the restart's stretch does not get it.
    later = KillFolder(tmp_path, 2).path
    later.mkdir(parents=True)
    recorder.open(2, KillFolder(tmp_path, 2), now + 1, set(), now + 2)
    assert not (later / RESTARTS_FILE).exists()


# --- the engine restarts inside the window -----------------------------------------------


@pytest.mark.docker
def test_the_stream_tells_a_restarted_engine_once_however_long_it_was_away(second_engine: Engine) -> None:
    engine = second_engine
    with engine.selected():
        runtime = DockerRuntime()
    # Every request for the engine's events goes through the SDK's ``events``: count the
    # ones that fail (the reconnects while the engine is away), and wake the waits.
    failed: list[Exception] = []
    changed = threading.Event()
    ask = runtime.api.events

    def counted_events(*args: Any, **kwargs: Any) -> Any:
        try:
            return ask(*args, **kwargs)
        except Exception as exc:
            failed.append(exc)
            changed.set()
            raise

    runtime.api.events = counted_events  # type: ignore[method-assign]
    stop = threading.Event()
    live = threading.Event()
    gaps: list[tuple[Any, ...]] = []
    seen: list[dict[str, Any]] = []

    def on_event(event: dict[str, Any]) -> None:
        seen.append(event)
        changed.set()

    def on_gap(*told: Any) -> None:
        gaps.append(told)
        changed.set()

    streaming = threading.Thread(target=runtime.stream, args=(on_event, stop),
                                 kwargs={"on_live": lambda _t: live.set(), "on_gap": on_gap})
    streaming.start()
    try:
        assert live.wait(10)
        before = runtime.identity()
        engine.stop(signal.SIGKILL)
        until(lambda: len(failed) >= 3, 30, "three reconnects to fail while the engine is away", wake=changed,
              seen=lambda: (failed, gaps))
        assert not gaps, "a gap is told when the engine answers again, once"
        engine.start()
        until(lambda: gaps, 20, "the restart to be told", wake=changed)
        # A container made on the restarted engine: once the stream has delivered its events,
        # the reconnect is behind it, and any second (wrong) report of it would have come.
        client = engine.client()
        try:
            made = client.api.create_container(IMAGE, ["true"])["Id"]
            client.api.remove_container(made)
        finally:
            client.close()
        until(lambda: any((e.get("Actor") or {}).get("ID") == made and e.get("Action") == "destroy" for e in seen), 20,
              "the stream to deliver a container's events from the restarted engine", wake=changed,
              seen=lambda: [(e.get("Action"), (e.get("Actor") or {}).get("ID")) for e in seen])
    finally:
        stop.set()
        streaming.join(10)
        runtime.close()
    assert not streaming.is_alive()
    assert len(gaps) == 1, gaps
    start, end, restart = gaps[0]
    assert start <= end
    assert restart == {"runtime": "docker", "before": before, "after": daemon_identity(str(engine.socket))}
    assert restart["before"]["pid"] != restart["after"]["pid"]


@pytest.mark.slow
@pytest.mark.docker
def test_an_engine_restart_inside_the_kill_window_is_never_a_pass(tmp_path: Path, second_engine: Engine) -> None:
    engine = second_engine
    prefix = "ef" + uuid.uuid4().hex[:8]
    t = template(tmp_path, "patient.json", command=[sys.executable, str(PATIENT)], backend="docker",
                 budget=10, diagnosisSeconds=RUN_SECONDS, containerPrefix=prefix)
    out = tmp_path / "x"
    env = engine.env()
    env.update(PYTHONPATH=str(ROOT), COLUMNS="200")
    proc = subprocess.Popen(
        [sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", str(t),
         "--kill-after-first-diagnosis-start", "x", "x=x"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_for("kill.json", (out / "kills" / "1" / "kill.json").is_file, 120, proc)
        # The controller is resumed and waits for the same container: now the engine goes.
        wait_for("the resumed controller", lambda: resumed_after_kill(out), 60, proc)
        before = daemon_identity(str(engine.socket))
        engine.crash_and_restart()
        after = daemon_identity(str(engine.socket))
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    explain = f"exit {proc.returncode}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    assert before is not None and after is not None and before != after

    # Nothing crashed, and the status says "a check failed" (1) or "not finished" (3).
    assert "Traceback" not in stdout + stderr, explain
    assert proc.returncode in (1, 3), explain
    assert "Traceback" not in (out / "study.log").read_text()

    # The verdict: never a pass, and the restart is the first thing it says.
    check = target_check(out)
    assert check.ok is not True, explain
    assert RESTARTED in check.detail, check
    report = out / "report.json"
    if report.exists():
        shown = {(c["scope"], c["name"]): c for c in json.loads(report.read_text())["checks"]}
        assert shown[("kill 1 · d1", "sameContainerNoRerun")]["ok"] is not True

    # The evidence: the gap in the live recording, and beside it which daemon went and came.
    folder = out / "kills" / "1"
    live = read_lines(folder / LIVE_FILE)
    assert len([line for line in live if "gap" in line]) == 1, "one outage, one gap"
    restarts = read_lines(folder / RESTARTS_FILE)
    assert len(restarts) == 1, restarts
    assert restarts[0]["runtime"] == "docker"
    assert restarts[0]["before"] == before and restarts[0]["after"] == after, (restarts, before, after)

    # The run's container did not survive: the restarted engine stopped it.
    client = engine.client()
    try:
        state = client.api.inspect_container(f"{prefix}-x-d1")["State"] if proc.returncode == 3 else None
    except Exception:  # noqa: BLE001 - removed by the study once it had its result
        state = None
    finally:
        client.close()
    assert state is None or not state["Running"], state

    # Nothing lost or torn.
    assert_nothing_lost(out)
    if proc.returncode == 1:
        assert_evidence_complete(out, killed=True)
    assert not list(out.rglob(".*.tmp"))

    # The machine's own engine kept its bridge (an engine started with --bridge=none deletes docker0).
    assert Path("/sys/class/net/docker0").exists() or not Path("/sys/class/net").exists()


# --- the engine goes away while the reference study waits for a run ---------------------------


def _ledger_records(study_dir: Path) -> list[dict[str, Any]]:
    path = study_dir / "ledger.jsonl"
    return read_lines(path) if path.exists() else []


def _launch_refstudy(out: Path, env: dict[str, str], resume: bool = False) -> subprocess.Popen[bytes]:
    """The reference controller started the way the console starts it (cwd OUT, own session, log appended)."""
    argv = [sys.executable, "-m", "studymon.refstudy", "--config", str(out / "research.json"), "--dir", str(out / "study")]
    env = dict(env, PYTHONPATH=str(ROOT), STUDYMON_STUDY=out.name, STUDYMON_OUT=str(out))
    with open(out / "study.log", "ab") as log:
        return subprocess.Popen(argv + (["--resume"] if resume else []), cwd=out, env=env, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=log, start_new_session=True)


def _run_process(engine: Engine, container: str) -> psutil.Process:
    """The process a running container runs (its command, under the engine's containerd shim)."""
    client = engine.client()
    try:
        state = client.api.inspect_container(container)["State"]
    finally:
        client.close()
    assert state["Running"] and state["Pid"], state
    return psutil.Process(state["Pid"])


def _ended_process(proc: psutil.Process) -> bool:
    """``proc`` has exited (gone, or a zombie not yet reaped)."""
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _ended(proc: subprocess.Popen[bytes], timeout: float) -> int | None:
    """The controller's exit status once it ends within ``timeout`` s; None (and killed) when it does not."""
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


@pytest.mark.slow
@pytest.mark.docker
def test_the_reference_study_rides_out_an_engine_outage_and_past_its_patience_stops_to_be_resumed(
    tmp_path: Path, second_engine: Engine
) -> None:
    """A Docker engine that goes away while a run is waited for: a short outage is waited out; a long one ends
    the study with serviceError and exit 75, and --resume waits for the same container (never started again)."""
    engine = second_engine
    out = tmp_path / "o"
    out.mkdir()
    prefix = "ro" + uuid.uuid4().hex[:8]
    config = {"command": ["python3", "-m", "studymon.refstudy"], "study": "o", "backend": "docker",
              "containerPrefix": prefix, "budget": 30, "diagnosisSeconds": 4, "samples": 2000,
              "runtimeOutageSeconds": 20}
    (out / "research.json").write_text(json.dumps(config))
    study = out / "study"

    def started() -> list[str]:
        return [r["content"]["run"] for r in _ledger_records(study) if r["kind"] == "runStarted"]

    proc = _launch_refstudy(out, engine.env())
    try:
        # 1. The engine dies while the first run is waited for, and is back within the study's patience.
        wait_for("the first runStarted", lambda: len(started()) == 1, 60)
        first_run = next(r for r in _ledger_records(study) if r["kind"] == "runStarted")
        run = _run_process(engine, first_run["content"]["container"])
        engine.stop(signal.SIGKILL)
        # The run's 4 s end while no engine answers (its containerd keeps the container).
        until(lambda: _ended_process(run), 30, "the first run's process to end while no engine answers")
        engine.start()
        # 2. Down again during a later run, for longer than the study waits.
        wait_for("a later runStarted", lambda: len(started()) == 2, 60)
        engine.stop(signal.SIGKILL)
        code = _ended(proc, 60)
    finally:
        _ended(proc, 0)  # a failed step above: not left running
    log = (out / "study.log").read_text(errors="replace")
    assert code == 75, log
    kinds = [r["kind"] for r in _ledger_records(study)]
    first, second = started()
    assert kinds.count("runResult") == 1, (kinds, log)  # the first run was waited out and has its result
    last = _ledger_records(study)[-1]
    assert last["kind"] == "serviceError", kinds
    assert last["content"]["stage"] == "diagnosis" and isinstance(last["content"]["round"], int), last
    assert second in last["content"]["message"] and "did not answer" in last["content"]["message"], last
    assert "the container runtime does not answer" in log and "answers again" in log, log
    assert "Traceback" not in log, log

    # 3. The engine is back; --resume waits for the same container and the study goes on to its end.
    engine.start()
    code = _ended(_launch_refstudy(out, engine.env(), resume=True), 120)
    log = (out / "study.log").read_text(errors="replace")
    assert code == 0, log
    records = _ledger_records(study)
    assert records[-1]["kind"] == "halt", [r["kind"] for r in records]
    runs = [r["content"]["run"] for r in records if r["kind"] == "runStarted"]
    assert runs.count(first) == 1 and runs.count(second) == 1, runs  # never started again
    charged = [r["content"]["run"] for r in records if r["kind"] == "charge"]
    assert charged.count(second) == 1, charged
    results = [r["content"]["run"] for r in records if r["kind"] == "runResult"]
    assert results.count(second) == 1 and results.index(second) == 1, results
    assert f"run {second} was in flight" in log, log
    assert "Traceback" not in log, log


# --- the target removed from outside after the kill ----------------------------------------


@pytest.mark.slow
@pytest.mark.docker
def test_a_target_removed_from_outside_after_the_kill_fails_the_container_check(
    tmp_path: Path, docker_engine: None
) -> None:
    prefix = "ef" + uuid.uuid4().hex[:8]
    t = template(tmp_path, backend="docker", budget=10, diagnosisSeconds=8, containerPrefix=prefix)
    out = tmp_path / "r"
    specs, tpl, backend = plan_fresh([f"r={out}"], t, ["r"], "docker")
    create_fresh(specs, tpl, backend)
    container = f"{prefix}-r-d1"
    events: list[StudyEvent] = []
    removed: list[subprocess.CompletedProcess[str]] = []

    async def scenario() -> Any:
        sup = Supervisor(events.append)
        sup.add(specs[0], resume=False, armed=True)

        def sink(event: StudyEvent) -> None:
            events.append(event)
            if isinstance(event, KillStep) and event.step == "captured" and not removed:
                # The controller is dead and not resumed yet; the session goes on to the
                # resume only once this returns.  Another client removes the container.
                env = {k: v for k, v in os.environ.items() if k != "DOCKER_HOST"}
                removed.append(subprocess.run(["docker", "rm", "-f", container], env=env,
                                              capture_output=True, text=True, timeout=60))

        sup.sink = sink
        return (await asyncio.wait_for(sup.run(), 180))[0]

    result = asyncio.run(scenario())
    assert removed and removed[0].returncode == 0, removed
    steps = [e.step for e in events if isinstance(e, KillStep)]
    assert steps.index("captured") < steps.index("resumed"), steps

    assert result.exit_status == 1, result.message
    check = target_check(out)
    assert check.ok is False, check
    assert "kill of" in check.detail or "container-before-resume.json has no" in check.detail, check

    folder = out / "kills" / "1"
    old_id = json.loads((folder / "container-before.json").read_text())[container]["Id"]
    live = read_lines(folder / LIVE_FILE)
    actions = [line.get("Action") for line in live
               if "gap" not in line and (line.get("Actor") or {}).get("ID") == old_id]
    assert {"kill", "die", "destroy"} <= set(actions), actions
    assert not [line for line in live if "gap" in line]
    assert json.loads((folder / "container-before-resume.json").read_text()).get(container) is None
    assert not (folder / RESTARTS_FILE).exists()

    assert_evidence_complete(out, killed=True)
    assert_nothing_lost(out)
