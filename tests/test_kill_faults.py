"""A kill that meets a fault never leaves the study frozen, and a window left open is continued.

Real controllers (the reference study on the process runtime), real process
groups and signals; the only stand-in is a runtime wrapper whose ``inspect``
fails or hangs, which is the fault being tested.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.folder import KillFolder
from studymon.engine.events import KillStep, StudyEvent
from studymon.engine.judge import judge
from studymon.engine.kill.protocol import FREEZE_LIMIT, Kill, KillAbandoned
from studymon.engine.kill.recording import EventRecorder
from studymon.engine.launch.launcher import Controller, process_start_time
from studymon.engine.launch.prepare import create_fresh, plan_fresh
from studymon.engine.live.supervisor import Supervisor
from studymon.engine.runtimes import open_runtime
from tests.faulty_runtime import FaultyInspect
from tests.studies import ROOT, launches, studymon, template
from tests.waits import until, until_async

pytestmark = pytest.mark.slow


def _armed_session(tmp_path: Path, runtime: Any, **settings: Any) -> tuple[Path, Any]:
    t = template(tmp_path, backend="process", **settings)
    out = tmp_path / "f"
    specs, tpl, backend = plan_fresh([f"f={out}"], t, ["f"], "process")
    create_fresh(specs, tpl, backend)
    events: list[StudyEvent] = []

    async def scenario() -> Any:
        sup = Supervisor(events.append)
        sup.add(specs[0], resume=False, armed=True, runtime=runtime)
        return (await asyncio.wait_for(sup.run(), 120))[0]

    return out, asyncio.run(scenario())


def _ledger_kinds(out: Path) -> list[str]:
    return [json.loads(line)["kind"] for line in (out / "study" / "ledger.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("mode", ["fail", "hang"])
def test_an_inspect_fault_while_frozen_still_kills_stops_with_3_and_the_resume_finishes(
    tmp_path: Path, mode: str
) -> None:
    out, result = _armed_session(tmp_path, FaultyInspect(mode), diagnosisSeconds=2)
    kill = json.loads((out / "kills" / "1" / "kill.json").read_text())
    # The kill was decided: SIGKILL went out, within the freeze bound, and the fault is on record.
    assert kill["signalled"] is True
    assert kill["frozenMs"] <= FREEZE_LIMIT * 1000 + 100, kill["frozenMs"]
    assert kill["captureError"] and ("timed out" if mode == "hang" else "inspect failed") in kill["captureError"]
    pid = kill["pid"]
    # Killed, not left frozen: the keeper saw it end by SIGKILL, and nothing of its group is left.
    ends = [line for line in launches(out) if line["event"] == "end" and line["pid"] == pid]
    assert [(e["code"], e["signal"]) for e in ends] == [(None, "SIGKILL")], ends
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
    # The session stops: exit 1 (killEvidence fails for good: the capture failed, §6.6), the reason
    # and the exact command to go on.
    assert result.exit_status == 1
    assert "captureError" not in result.message and "not resumed" in result.message
    before = json.loads((out / "kills" / "1" / "container-before.json").read_text())
    assert set(before.values()) == {None}
    resumed = studymon("run", "--resume", "--headless", f"f={out}", cwd=tmp_path)
    assert _ledger_kinds(out)[-1] == "halt"
    assert json.loads((out / "outcome.json").read_text())["code"] == 0
    # Without a snapshot from before the kill, the kill's evidence is incomplete and the rerun check
    # cannot hold: both fail, and only they (the study itself recovered).
    verdicts = {(c.scope, c.name): c.ok for c in judge(out).checks}
    failed = {key: ok for key, ok in verdicts.items() if ok is not True}
    assert failed == {("kill 1", "killEvidence"): False, ("kill 1 · d1", "sameContainerNoRerun"): False}, failed
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr


def _group_leader(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Controller]:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time\nwhile True: time.sleep(0.001)  # stands in for a study's own work"],
        start_new_session=True,
    )
    start = until(lambda: process_start_time(proc.pid), 10, "the process's start time")
    return proc, Controller(proc.pid, start, tmp_path, None)


def test_a_kill_abandoned_before_its_targets_are_known_lets_the_controller_go(tmp_path: Path) -> None:
    proc, controller = _group_leader(tmp_path)
    try:
        runtime = open_runtime("process")
        kill = Kill(1, KillFolder(tmp_path, 1), "manual", "p-x-", runtime, EventRecorder("p-x-", runtime.history),
                    controller=controller)

        def broken_read() -> None:
            raise OSError("the ledger could not be read")

        async def scenario() -> None:
            assert kill.freeze(time.time())
            with pytest.raises(KillAbandoned):
                await kill.strike(broken_read, Accounts(), None)

        asyncio.run(scenario())
        until(lambda: psutil.Process(proc.pid).status() != psutil.STATUS_STOPPED, 5, "the controller to be let go")
        assert proc.poll() is None, "an abandoned kill kills nothing"
        assert not kill.kill_sent
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def test_a_window_left_open_by_a_stop_is_unknown_then_closed_by_resume(tmp_path: Path) -> None:
    """Stopped right after the kill's resume, before the target's result: ``?`` and exit 3; the resume closes it."""
    t = template(tmp_path, backend="process", diagnosisSeconds=8)
    out = tmp_path / "w"
    specs, tpl, backend = plan_fresh([f"w={out}"], t, ["w"], "process")
    create_fresh(specs, tpl, backend)
    events: list[StudyEvent] = []

    async def scenario() -> Any:
        sup = Supervisor(events.append)
        session = sup.add(specs[0], resume=False, armed=True)

        log = out / "study.log"
        waiting = "run d1 was in flight: waiting for the same container"

        async def stop_once_waiting(seen: int) -> None:
            # Once the resumed controller says it waits for d1 it is past its start-up (a SIGINT in
            # the middle of an interpreter's start is a crash, not a stop) and has its handler set.
            await until_async(lambda: log.read_text().count(waiting) > seen, 60, "the resumed controller to wait")
            session.stop()

        def sink(event: StudyEvent) -> None:
            events.append(event)
            if isinstance(event, KillStep) and event.step == "resumed":
                stoppers.append(asyncio.ensure_future(stop_once_waiting(log.read_text().count(waiting))))

        sup.sink = sink
        return (await asyncio.wait_for(sup.run(), 120))[0]

    stoppers: list[asyncio.Future[None]] = []
    result = asyncio.run(scenario())
    assert len(stoppers) == 1 and stoppers[0].done() and stoppers[0].exception() is None
    assert result.exit_status == 3, result.message
    folder = out / "kills" / "1"
    assert (folder / "kill.json").is_file() and not (folder / "container-events-window.json").exists()
    last = launches(out)[-1]
    assert last["event"] == "end" and last["code"] == 130
    kinds = _ledger_kinds(out)
    assert "runResult" not in kinds, "the stop came after the target's result: make diagnosisSeconds longer"
    first = judge(out)
    assert first.ok is not True
    target = {c.name: c.ok for c in first.checks if c.scope == "kill 1 · d1"}
    assert target["sameContainerNoRerun"] is None and target["resultSettledAndFinished"] is None, target
    recorded = (folder / "container-events-live.jsonl").read_text().splitlines()

    resumed = studymon("run", "--resume", "--headless", f"w={out}", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (folder / "container-events-window.json").is_file()
    window = json.loads((folder / "container-events-window.json").read_text())
    assert window["targets"]["d1"]["resultSeq"] is not None
    lines = [json.loads(line) for line in (folder / "container-events-live.jsonl").read_text().splitlines()]
    assert len(lines) >= len(recorded), "the first console's lines are kept"
    assert not any("gap" in line for line in lines), "the process runtime's journal bridges the stretch"
    dies = [line for line in lines if line.get("Action") == "die"
            and line["Actor"]["Attributes"].get("name") == "inforsi-w-d1"]
    assert len(dies) == 1
    assert all(c.ok is True for c in judge(out).checks), [(c.scope, c.name, c.detail) for c in judge(out).checks
                                                         if c.ok is not True]


def test_a_capture_cut_short_is_completed_by_the_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The console died after kill.json: the resume records the ledger at the kill and the containers after it."""
    import studymon.engine.kill.protocol as kill_mod

    async def cut_short(self: Kill, _read_ledger: Any, _ledger: Path) -> None:
        self.folder.path.mkdir(parents=True, exist_ok=False)
        kill_mod.write_json(self.folder.path / "kill.json", self.kill_json())
        kill_mod.write_json(self.folder.path / "container-before.json", self.before)
        ids = {str(s.get("Id")) for s in self.before.values() if isinstance(s, dict) and s.get("Id")}
        await asyncio.to_thread(self.recorder.open, self.number, self.folder, self.since, ids, self.runtime.now())
        assert self.controller is not None
        await self.controller.wait()
        await self.controller.wait_group_gone(kill_mod.GROUP_GONE_LIMIT)
        raise RuntimeError("the console went away here")

    with monkeypatch.context() as patch:  # only the capture: the test's runtime and lock folders stay
        patch.setattr(kill_mod.Kill, "capture", cut_short)
        out, result = _armed_session(tmp_path, open_runtime("process"), diagnosisSeconds=2)
    assert result.exit_status == 3, [c for c in result.judgement.checks if c.ok is not True] if result.judgement else None
    folder = out / "kills" / "1"
    assert (folder / "kill.json").is_file() and not (folder / "ledger-at-kill.json").exists()
    resumed = studymon("run", "--headless", "--resume", f"f={out}", cwd=tmp_path, timeout=180)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "completed before the resume: ledger-at-kill.json, container-after-kill.json" in resumed.stdout
    at_kill = json.loads((folder / "ledger-at-kill.json").read_text())
    kill = json.loads((folder / "kill.json").read_text())
    assert at_kill[-1]["seq"] == kill["beforeKillSeq"], "the ledger at the kill, nothing after it"
    after = json.loads((folder / "container-after-kill.json").read_text())
    assert set(after) == {t["container"] for t in kill["targets"]} and all(after.values())
    assert all(c.ok is True for c in judge(out).checks), [c for c in judge(out).checks if c.ok is not True]


def test_a_point_the_study_reaches_before_its_pid_is_handed_over_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The study writes its first record at once, and its keeper hands over the pid on a pipe the loop may read
    after the ledger's wake-up (on a loaded machine it does): a point at that record (``after:studyOpen``) waits
    for the pid, then fires at it, never "seen while no controller ran"."""
    from studymon.engine.contract.killpoint import KillPoint

    double = ROOT / "tests" / "doubles" / "points_study.js"
    t = tmp_path / "research.json"
    t.write_text(json.dumps({"command": ["node", str(double)], "backend": "process", "pause": 1.0, "runSeconds": 0.3}))
    out = tmp_path / "f"
    specs, tpl, backend = plan_fresh([f"f={out}"], t, ["f"], "process")
    create_fresh(specs, tpl, backend)
    ledger = out / "study" / "ledger.jsonl"
    launch = Controller.launch.__func__  # type: ignore[attr-defined]
    held: list[bool] = []

    async def pid_late(cls: type[Controller], *args: Any, **kwargs: Any) -> Controller:
        controller = await launch(cls, *args, **kwargs)
        if not held:  # the first start only: its first record is read before the pid is handed over
            held.append(True)
            await until_async(lambda: ledger.is_file() and ledger.stat().st_size > 0, 20, "the first record")
            await asyncio.sleep(0.2)  # the fault itself: the pid is handed over late, not a wait for a state
        return controller

    monkeypatch.setattr(Controller, "launch", classmethod(pid_late))
    events: list[StudyEvent] = []

    async def scenario() -> None:
        sup = Supervisor(events.append)
        session = sup.add(specs[0], resume=False, armed=[KillPoint.parse("after:studyOpen")], runtime=open_runtime(
            "process"))
        running = asyncio.ensure_future(sup.run())
        await until_async(lambda: any(isinstance(e, KillStep) and e.step == "resumed" for e in events) or running.done(),
                          60, "kill 1 resumed")
        session.stop()
        await asyncio.wait_for(running, 60)

    asyncio.run(scenario())
    arms = [json.loads(line) for line in (out / "arms.jsonl").read_text().splitlines()]
    assert [a["event"] for a in arms] == ["arm", "fired"], arms
    assert arms[1]["point"] == "after:studyOpen" and arms[1]["kill"] == 1, arms
    kill = json.loads((out / "kills" / "1" / "kill.json").read_text())
    assert (kill["trigger"], kill["triggerSeq"], kill["beforeKillSeq"]) == ("auto", 1, 1), kill
