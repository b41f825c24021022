"""The kill driver alone, in seconds: a real controller (a process started by the real keeper), the real process
runtime and event recorder, and a study whose ledger the test writes.

What is not real is the session around the driver: a host that records what the driver says and starts a new
controller when asked to resume, and the ledger reads the pump would make (here: the ledger file, read into the
accounts).  Each test stops where the driver's own work ends; whole studies are killed in
``tests/test_kill_points.py`` and ``tests/test_kill_live.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from studymon.engine.contract.killpoint import point_text
from studymon.engine.contract.ledger import Record, read_ledger
from studymon.engine.contract.spec import StudySpec
from studymon.engine.events import KillStep, State, StudyEvent
from studymon.engine.io.clock import rfc3339_ms
from studymon.engine.kill.driver import KillDriver
from studymon.engine.launch.launcher import Controller
from studymon.engine.runtimes import open_runtime

SLEEPER = [sys.executable, "-c", "import time\nwhile True: time.sleep(0.05)"]


class Host:
    """The session around the driver: what it is told, and a new controller when the driver resumes the study."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.controller: Controller | None = None
        self.launching = False
        self.events: list[StudyEvent] = []
        self.states: list[State] = []
        self.relaunches: list[bool] = []
        self.launched: list[Controller] = []  # every controller started, each ended by the test at its end

    def emit(self, event: StudyEvent) -> None:
        self.events.append(event)

    def set_state(self, state: State, detail: str = "") -> None:
        self.states.append(state)

    async def heavy_snapshot(self, label: str) -> None:
        return None

    async def relaunch(self, resume: bool) -> None:
        self.relaunches.append(resume)
        self.controller = await self.launch(resume)

    async def launch(self, resume: bool) -> Controller:
        controller = await Controller.launch(SLEEPER, self.out, dict(os.environ), resume)
        self.launched.append(controller)
        return controller

    async def resume_requested(self) -> bool:
        return True

    def steps(self) -> list[str]:
        return [e.step for e in self.events if isinstance(e, KillStep)]


class Reads:
    """The ledger as the pump reads it: the file, into the accounts; ``while_frozen`` runs at the frozen read."""

    def __init__(self, ledger: Path, accounts: Accounts) -> None:
        self.ledger, self.accounts = ledger, accounts
        self.while_frozen: list[Any] = []

    def drain(self, max_bytes: int | None = None) -> None:
        for r in read_ledger(self.ledger)[0]:
            if r.seq > self.accounts.last_seq:
                self.accounts.add(r)

    def read_aside(self, trigger: Any) -> None:  # noqa: ARG002 - what the driver reads is not counted here
        self.drain()

    def freeze(self) -> None:
        return None

    def read_frozen(self) -> None:
        for look in self.while_frozen:
            look()
        self.drain()

    def thaw(self) -> None:
        return None


def write(ledger: Path, *kinds_and_content: tuple[str, dict[str, Any]]) -> list[Record]:
    """Append records to the study's ledger, numbered on from its last."""
    have = read_ledger(ledger)[0] if ledger.exists() else []
    seq = len(have)
    with open(ledger, "a", encoding="utf-8") as f:
        for kind, content in kinds_and_content:
            seq += 1
            f.write(json.dumps({"seq": seq, "at": rfc3339_ms(1_800_000_000 + seq), "kind": kind,
                                "content": content}) + "\n")
    return [r for r in read_ledger(ledger)[0] if r.seq > len(have)]


class Lab:
    """A study folder, its first controller, and the driver under test."""

    def __init__(self, tmp: Path, prefix: str) -> None:
        self.out = tmp / "s"
        (self.out / EvidenceFolder.STUDY).mkdir(parents=True)
        self.spec = StudySpec("s", self.out)
        self.spec.folder.ledger.touch()
        self.runtime = open_runtime("process")
        self.accounts = Accounts()
        self.host = Host(self.out)
        self.reads = Reads(self.spec.folder.ledger, self.accounts)
        self.driver = KillDriver(self.host, self.reads, self.spec, stem=prefix,  # type: ignore[arg-type]
                                 runtime=self.runtime)
        self.recorder = self.driver.recorder

    def arm(self, *points: str) -> None:
        """Arm these points, in order, as the console's arm key does."""
        for text in points:
            point = point_text(text)
            assert point is not None, text
            self.driver.arm(True, point)

    def wrote(self, *kinds_and_content: tuple[str, dict[str, Any]]) -> list[Record]:
        """The study writes these records, and the pump has read them into the accounts."""
        records = write(self.spec.folder.ledger, *kinds_and_content)
        for r in records:
            self.accounts.add(r)
        return records

    async def start(self) -> Controller:
        self.host.controller = await self.host.launch(False)
        self.driver.start_counting()
        return self.host.controller

    async def close(self) -> None:
        """End every controller the test started, whatever the test did to it (none is left behind)."""
        await self.driver.see_through()
        for c in self.host.launched:
            for sig in (signal.SIGCONT, signal.SIGKILL):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(c.pid, sig)
            await asyncio.wait_for(c.wait(), 30)
            assert status(c.pid) in ("gone", "zombie"), f"controller {c.pid} outlived its test"


def status(pid: int) -> str:
    try:
        return str(psutil.Process(pid).status())
    except psutil.NoSuchProcess:
        return "gone"


async def test_a_manual_kill_freezes_reads_snapshots_then_kills_and_resumes(tmp_path: Path) -> None:
    """The order that makes the evidence true: SIGSTOP; the ledger read while stopped; the targets' snapshot while
    the controller is still there, stopped; SIGKILL; then the capture and a resumed controller."""
    lab = Lab(tmp_path, "drv-a-")
    first = await lab.start()
    box = "drv-a-d1"
    seen_at: dict[str, str] = {}
    try:
        lab.runtime.run(box, ["sleep", "30"])
        write(lab.spec.folder.ledger, ("runPlanned", {"run": "d1", "purpose": "diagnosis", "round": 1}),
              ("charge", {"run": "d1", "amount": 1}), ("runStarted", {"run": "d1", "container": box}))
        lab.reads.drain()
        lab.reads.while_frozen.append(lambda: seen_at.setdefault("read", status(first.pid)))
        real_inspect = lab.runtime.inspect

        def inspect(name: str) -> Any:
            seen_at.setdefault("snapshot", status(first.pid))
            return real_inspect(name)

        lab.runtime.inspect = inspect  # type: ignore[method-assign]
        assert lab.driver.kill_now(auto_resume=True)
        await lab.driver.see_through()
        assert seen_at == {"read": "stopped", "snapshot": "stopped"}, seen_at
        assert status(first.pid) in ("zombie", "gone") and (await first.wait()).signal == "SIGKILL"
        kill = json.loads((lab.out / "kills" / "1" / KillFolder.KILL).read_text())
        assert kill["groupStopped"] is True and kill["signalled"] is True
        assert kill["frozenEpoch"] <= kill["killSentEpoch"], kill
        assert [t["run"] for t in kill["targets"]] == ["d1"] and kill["beforeKillSeq"] == 3
        before = json.loads((lab.out / "kills" / "1" / KillFolder.BEFORE).read_text())
        assert before[box]["State"]["Running"] is True, "the snapshot was taken before the kill, of a running box"
        assert lab.host.steps() == ["killed", "captured", "resumed"] and lab.host.relaunches == [True]
        assert lab.host.controller is not None and lab.host.controller.pid != first.pid
        assert status(lab.host.controller.pid) not in ("stopped", "gone", "zombie"), "the resumed controller runs"
    finally:
        lab.runtime.remove(box, force=True)
        await lab.close()


async def test_a_controller_that_is_not_the_one_started_is_never_signalled(tmp_path: Path) -> None:
    """The identity check: a controller whose start time is not the process's (its pid reused) gets no signal."""
    lab = Lab(tmp_path, "drv-b-")
    real = await lab.start()
    try:
        stranger = Controller(real.pid, real.start_time - 5.0, lab.out, None)  # the pid, another process's start
        assert not stranger.is_same_process()
        lab.host.controller = stranger
        assert lab.driver.kill_now(auto_resume=True) is False
        assert status(real.pid) not in ("stopped", "gone", "zombie"), "nothing was sent to the process"
        assert not (lab.out / "kills").exists() and lab.host.steps() == []
    finally:
        lab.host.controller = real
        await lab.close()


async def test_a_moment_passed_under_the_freeze_is_missed_and_the_controller_let_go(tmp_path: Path) -> None:
    """Armed at the first charge: the study wrote on before the freeze took hold (a record after the point, read
    under the freeze): the point is missed, nothing is killed, and the controller runs on (SIGCONT)."""
    lab = Lab(tmp_path, "drv-c-")
    lab.arm("after:charge")
    controller = await lab.start()
    try:
        charge = lab.wrote(("runPlanned", {"run": "d1", "purpose": "diagnosis", "round": 1}),
                           ("charge", {"run": "d1", "amount": 1}))
        # Between the read that saw the charge and the freeze, the study wrote one more record.
        lab.reads.while_frozen.append(lambda: write(lab.spec.folder.ledger, ("runStarted", {"run": "d1"})))
        assert lab.driver.check_trigger(charge, 0.0) is True, "the moment was seen: the freeze begins"
        await lab.driver.see_through()
        assert status(controller.pid) not in ("stopped", "gone", "zombie"), "let go: it runs on"
        arms = [json.loads(x) for x in EvidenceFolder(lab.out).arms.read_text().splitlines()]
        assert [a["event"] for a in arms] == ["arm", "missed"] and "seq 3 was written after seq 2" in arms[1]["detail"]
        assert not (lab.out / "kills" / "1" / KillFolder.KILL).exists(), "no kill was made"
        assert lab.host.steps() == ["missed"] and not lab.driver.armed
    finally:
        await lab.close()


async def test_a_moment_followed_in_the_same_read_is_missed_without_a_freeze(tmp_path: Path) -> None:
    lab = Lab(tmp_path, "drv-d-")
    lab.arm("after:charge")
    controller = await lab.start()
    try:
        records = lab.wrote(("runPlanned", {"run": "d1", "purpose": "diagnosis", "round": 1}),
                            ("charge", {"run": "d1", "amount": 1}), ("runStarted", {"run": "d1"}))
        os.kill(controller.pid, 0)
        assert lab.driver.check_trigger(records, 0.0) is False
        assert status(controller.pid) not in ("stopped", "gone", "zombie")
        arms = [json.loads(x) for x in EvidenceFolder(lab.out).arms.read_text().splitlines()]
        assert arms[-1]["event"] == "missed" and "seq 2 was followed by seq 3" in arms[-1]["detail"], arms
    finally:
        await lab.close()



async def test_arming_is_written_and_said_point_by_point(tmp_path: Path) -> None:
    """Each point armed is an ``arm`` line and an ArmChanged naming the one counting and those waiting; a point
    missed is a ``missed`` line counting from where it began, and a step of kill 0 naming it; disarming is one
    ``disarm`` line and an ArmChanged of nothing armed."""
    from studymon.engine.events import ArmChanged

    lab = Lab(tmp_path, "drv-e-")
    lab.arm("after:charge", "after:runStarted/diagnosis#2")
    controller = await lab.start()
    try:
        armed = [e for e in lab.host.events if isinstance(e, ArmChanged)]
        assert [(e.armed, e.point, e.waiting) for e in armed] == [
            (True, "after:charge", ()), (True, "after:charge", ("after:runStarted/diagnosis#2",))]
        records = lab.wrote(("runPlanned", {"run": "d1", "purpose": "diagnosis", "round": 1}),
                            ("charge", {"run": "d1", "amount": 1}), ("runStarted", {"run": "d1"}))
        assert lab.driver.check_trigger(records, 0.0) is False  # the charge was followed in the same read
        missed = [e for e in lab.host.events if isinstance(e, KillStep)]
        assert [(e.kill, e.step, e.point) for e in missed] == [(0, "missed", "after:charge")]
        assert missed[0].detail.startswith("after:charge: seq 2 was followed by seq 3")
        after = [e for e in lab.host.events if isinstance(e, ArmChanged)][-1]
        assert (after.armed, after.point, after.waiting) == (True, "after:runStarted/diagnosis#2", ())
        lab.driver.arm(False)
        last = [e for e in lab.host.events if isinstance(e, ArmChanged)][-1]
        assert (last.armed, last.point, last.waiting) == (False, None, ())
        lines = [json.loads(x) for x in EvidenceFolder(lab.out).arms.read_text().splitlines()]
        assert [(x["event"], x.get("point")) for x in lines] == [
            ("arm", "after:charge"), ("arm", "after:runStarted/diagnosis#2"), ("missed", "after:charge"),
            ("disarm", None)]
        assert lines[2]["fromSeq"] == 0 and lines[2]["run"] == "d1", "counted from where the point began"
        assert status(controller.pid) not in ("stopped", "gone", "zombie")
    finally:
        await lab.close()


async def test_an_armed_point_reached_fires_a_kill_stamped_with_when_its_record_was_seen(tmp_path: Path) -> None:
    """The trigger: the point's record is the last one read, the controller runs: frozen, killed, its kill.json
    naming the point, its record and the moment the record was seen; the point is fired, not waiting."""
    lab = Lab(tmp_path, "drv-f-")
    lab.arm("after:charge")
    first = await lab.start()
    try:
        records = lab.wrote(("runPlanned", {"run": "d1", "purpose": "diagnosis", "round": 1}),
                            ("charge", {"run": "d1", "amount": 1}))
        seen = 1_800_000_123.25
        assert lab.driver.check_trigger(records, seen) is True
        await lab.driver.see_through()
        assert (await first.wait()).signal == "SIGKILL"
        kill = json.loads((lab.out / "kills" / "1" / KillFolder.KILL).read_text())
        assert (kill["trigger"], kill["point"]) == ("auto", "after:charge")
        assert (kill["triggerSeq"], kill["beforeKillSeq"]) == (2, 2)
        assert kill["triggerSeenEpoch"] == seen
        arms = [json.loads(x) for x in EvidenceFolder(lab.out).arms.read_text().splitlines()]
        assert [a["event"] for a in arms] == ["arm", "fired"] and arms[1]["kill"] == 1 and arms[1]["fromSeq"] == 0
        assert lab.host.steps() == ["killed", "captured", "resumed"] and not lab.driver.armed
    finally:
        await lab.close()


FREEZER = Path("/sys/fs/cgroup/freezer")


async def test_a_group_slow_to_show_stopped_is_waited_for_and_its_kill_is_whole(tmp_path: Path) -> None:
    """On a starved machine a stopped task can take hundreds of milliseconds to show T (it must be scheduled, or
    leave an uninterruptible wait first).  The kernel's freezer makes such a task for real: frozen, the controller
    shows D in ``__refrigerator``; SIGSTOP is pending until it is thawed, 0.8 s later.  The kill waits for it and
    its evidence is whole: a shorter wait (0.3 s was the bound) gave up and wrote ``captureError``, which fails
    ``killEvidence`` of a sound study."""
    lab = Lab(tmp_path, "drv-f-")
    first = await lab.start()
    group = FREEZER / f"studymon-test-{os.getpid()}-{first.pid}"
    group.mkdir()
    try:
        (group / "cgroup.procs").write_text(str(first.pid))
        (group / "freezer.state").write_text("FROZEN")
        # Frozen, the controller shows an uninterruptible wait that no SIGSTOP turns into T until it is thawed.
        until_frozen = time.monotonic() + 10
        while status(first.pid) != "disk-sleep" and time.monotonic() < until_frozen:
            await asyncio.sleep(0.01)
        assert status(first.pid) == "disk-sleep", status(first.pid)
        thaw = threading.Timer(0.8, lambda: (group / "freezer.state").write_text("THAWED"))
        thaw.start()
        assert lab.driver.kill_now(auto_resume=False)
        await lab.driver.see_through()
        thaw.join()
        kill = json.loads((lab.out / "kills" / "1" / KillFolder.KILL).read_text())
        assert kill["captureError"] is None, kill["captureError"]
        assert kill["groupStopped"] is True and kill["signalled"] is True, kill
        assert kill["frozenMs"] >= 700, kill["frozenMs"]  # it waited for the thaw
        assert (await first.wait()).signal == "SIGKILL"
    finally:
        with contextlib.suppress(OSError):
            (group / "freezer.state").write_text("THAWED")
        await lab.close()
        until_empty = time.monotonic() + 10
        while (group / "cgroup.procs").read_text().strip() and time.monotonic() < until_empty:
            await asyncio.sleep(0.05)
        group.rmdir()
