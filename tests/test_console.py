"""The console driven by its keys over the real engine and the real reference study.

Every test prepares fresh evidence folders the way ``studymon run`` does,
opens :class:`~studymon.tui.app.StudymonApp` under Textual's Pilot at 160x48, and acts
as an operator would: focus a pane, arm, kill (through the confirmation),
stop, resume, quit and detach, attach again.  Then it reads what the engine
left on disk: the same evidence and verdicts as a headless run, all ✓.

Each test runs on the process runtime, and on Docker when an engine answers
(required when ``STUDYMON_REQUIRE_DOCKER=1``).  Waits are on conditions with
deadlines, never on sleeps that hope.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Input

from studymon.engine.events import State
from studymon.engine.io.clock import parse_rfc3339
from studymon.engine.launch.launcher import find_running
from studymon.engine.launch.prepare import create_fresh, plan_fresh
from studymon.engine.runtimes import NoSuchContainer, open_runtime
from studymon.tui.app import Planned, StudymonApp
from studymon.tui.screens import TICK_SECONDS
from studymon.widgets.dialogs import ArmScreen, ConfirmScreen, QuitScreen
from tests.studies import BROKEN, assert_evidence_complete, report, template, verdicts
from tests.waits import until_async

pytestmark = pytest.mark.slow

SIZE = (160, 48)
# One diagnosis round (budget 10, a run costs 10), then the proposal and the halt:
# all a kill's checks need.  A run of 3 s leaves room to catch it in flight and
# to capture its container after the kill, on a loaded machine too.
SMALL: dict[str, Any] = {"budget": 10, "runCost": 10, "diagnosisSeconds": 3}
WAIT = 90.0  # seconds: a deadline for whole studies, far above their few seconds


@pytest.fixture(params=["process", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "docker":
        request.getfixturevalue("docker_engine")
    return str(request.param)


class Lab:
    """Fresh studies for one test, and the clean-up of whatever a failed test left running."""

    def __init__(self, tmp: Path, backend: str) -> None:
        self.tmp = tmp
        self.backend = backend
        # A prefix of this test's own: Docker names are global, and a parallel run must not collide.
        self.prefix = "smc" + hashlib.sha1(str(tmp).encode(), usedforsecurity=False).hexdigest()[:8]
        self.outs: list[Path] = []

    def fresh(self, ids: list[str], armed: tuple[str, ...] = (), **overrides: Any) -> list[Planned]:
        """Validate and create the folders as ``studymon run`` does; the studies to plan."""
        t = template(self.tmp, **{**SMALL, "containerPrefix": self.prefix, "backend": self.backend, **overrides})
        pairs = [f"{i}={self.tmp / i}" for i in ids]
        specs, tpl, resolved = plan_fresh(pairs, t, list(armed), self.backend)
        assert resolved == self.backend
        create_fresh(specs, tpl, resolved)
        self.outs += [s.out for s in specs]
        return [Planned(s, self.prefix, armed=s.id in armed) for s in specs]

    def gated_command(self, gate: Path) -> list[str]:
        """The reference study's own command, held until ``gate`` exists (a resume finds it there).

        The console's engine starts the controllers at mount; a key pressed "before
        the first diagnosis starts" is only sure to be so while the study cannot start.
        """
        wait = f"until [ -e {shlex.quote(str(gate))} ]; do sleep 0.05; done; exec \"$0\" \"$@\""
        return ["sh", "-c", wait, sys.executable, "-m", "studymon.refstudy"]

    def cleanup(self) -> None:
        for out in self.outs:
            controller = find_running(out)
            if controller is not None:
                controller.kill()
        runtime = open_runtime(self.backend)
        for inspect in runtime.list(self.prefix):
            with contextlib.suppress(NoSuchContainer):
                runtime.remove(str(inspect.get("Name", "")).lstrip("/"), force=True)


@pytest.fixture
def lab(tmp_path: Path, backend: str) -> Iterator[Lab]:
    lab = Lab(tmp_path, backend)
    try:
        yield lab
    finally:
        lab.cleanup()


# --- waiting -------------------------------------------------------------------


async def wait_until(pilot: Pilot, what: str, predicate: Callable[[], object], timeout: float = WAIT) -> None:
    def holds() -> object:
        value = predicate()
        if not value and pilot.app.return_code is not None:
            raise AssertionError(f"the app ended (return code {pilot.app.return_code}) while waiting for {what}")
        return value

    await until_async(holds, timeout, what, step=0.05)


async def stays_open(app: StudymonApp) -> None:
    """Every study has ended and the console stays: it is still open after its clock has ticked again.

    Whether it leaves or stays on the verdicts is chosen once, in the worker that sets ``app.status``,
    with no await in between, and leaving sets the return code at once (``App.exit``): a status
    without a return code is the choice to stay.  That it then goes on is shown by the next tick of
    the console's own clock (every ``TICK_SECONDS``), not by a pause that hopes nothing happens.
    """
    assert app.status is not None
    machine = app.main.machine
    ticks: list[None] = []
    tick = machine.tick

    def counted() -> None:
        ticks.append(None)
        tick()

    machine.tick = counted  # the screen calls the machine line's tick by name at each of its ticks
    try:
        await until_async(lambda: ticks or app.return_code is not None, TICK_SECONDS * 10,
                          "a tick of the console's clock after every study ended")
    finally:
        del machine.tick
    assert app.return_code is None, "the console closed by itself"


async def wait_exit(app: StudymonApp, timeout: float = WAIT) -> int:
    """The app's return code: once every study has ended the console stays open on the verdicts,
    shown in every pane and the top line; then `q` closes it (an app that left on its own, after
    a detach, has its code already)."""
    # Not pilot.pause: the screens go away as the app shuts down.
    await until_async(lambda: app.return_code is not None or app.status is not None, timeout,
                      "every study to end", step=0.05,
                      seen=lambda: {sid: s.state for sid, s in app.supervisor.sessions.items()})
    if app.return_code is None:
        await stays_open(app)
        assert app.main.machine.overall is not None and f"exit {app.status}" in app.main.machine.overall[1]
        for pane in app.main.panes.values():
            assert pane.verdict.display, f"{pane.study_id}: no verdict shown at the end"
        await app.main.run_action("quit_console")
    await until_async(lambda: app.return_code is not None, timeout, "the app to close after q", step=0.05)
    assert app.return_code is not None
    return app.return_code


# --- reading the evidence -------------------------------------------------------


def jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def ledger(out: Path) -> list[dict[str, Any]]:
    return jsonl(out / "study" / "ledger.jsonl")


def launches(out: Path) -> list[dict[str, Any]]:
    return jsonl(out / "launches.jsonl")


def starts(out: Path) -> list[dict[str, Any]]:
    return [e for e in launches(out) if e["event"] == "start"]


def all_hold(out: Path) -> None:
    v = verdicts(out)
    assert v and all(ok is True for ok in v.values()), v
    assert report(out)["finished"] is True


def failures(app: StudymonApp) -> list[str]:
    """What did not hold or did not finish, for an assertion's message."""
    out = []
    for r in app.results:
        if not r.finished:
            out.append(f"{r.study}: not finished: {r.message}")
        checks = r.judgement.checks if r.judgement else ()
        out += [f"{r.study}: {c.scope} {c.name} = {c.ok}: {c.detail}" for c in checks if c.ok is not True]
    return out


def kill_verdicts(out: Path, number: int = 1) -> dict[str, bool | None]:
    """The per-target verdicts of kill ``number`` (its scope is ``kill N · RUN``)."""
    found = {name: ok for (scope, name), ok in verdicts(out).items() if scope.startswith(f"kill {number} · ")}
    assert found, f"no per-target checks for kill {number} in {out / 'report.json'}"
    return found


def in_flight(app: StudymonApp, study: str) -> list[str]:
    return [a.run for a in app.supervisor.sessions[study].accounts.in_flight()]


def button(app: StudymonApp, study: str, which: str) -> Button:
    return app.main.panes[study].controls.button(which)


# --- the scenarios --------------------------------------------------------------


async def test_arm_asks_where_offers_what_the_study_showed_and_refuses_a_point_that_is_none(lab: Lab) -> None:
    """`a` opens the point menu: a typed point that does not parse is said under the field, one that does arms
    the study (the header shows it); `a` again disarms; Escape leaves it as it was.  Once records came, the menu
    offers their kinds after the seed's point; the study then runs to its end, disarmed."""
    gate = lab.tmp / "go"
    planned = lab.fresh(["a"], command=lab.gated_command(gate))
    (a,) = (p.spec.out for p in planned)
    app = StudymonApp(planned, save_dir=lab.tmp)
    async with app.run_test(size=SIZE) as pilot:
        session = app.supervisor.sessions["a"]
        await pilot.press("a")
        assert isinstance(app.screen, ArmScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, ArmScreen) and not session.armed
        await pilot.press("a", "tab", *"after:nope", "enter")
        assert isinstance(app.screen, ArmScreen) and not session.armed
        error = str(app.screen.query_one("#arm-error").render())
        assert "'nope' is not a kind of record" in error, error
        app.screen.query_one("#arm-typed", Input).value = ""
        await pilot.press(*"after:charge/diagnosis", "enter")
        assert not isinstance(app.screen, ArmScreen)
        assert session.armed and str(session.point) == "after:charge/diagnosis"
        await wait_until(pilot, "the header's point", lambda: "after:charge/diagnosis" in str(
            app.main.panes["a"].header._armed.render()))
        await pilot.press("a")  # armed: `a` disarms
        assert not session.armed
        gate.touch()
        await wait_until(pilot, "some records", lambda: len(session.moments()) >= 3)
        await pilot.press("a")
        offered = [point for point, _ in app.screen.points]  # type: ignore[attr-defined]
        assert offered[0] == "after:runStarted/diagnosis" and "after:studyOpen" in offered, offered
        await pilot.press("escape")
        code = await wait_exit(app)
    assert code == 0, failures(app)
    assert [(e["event"], e.get("point")) for e in jsonl(a / "arms.jsonl")] == [
        ("arm", "after:charge/diagnosis"), ("disarm", None)]


async def test_arm_by_key_before_the_first_diagnosis_then_kill_resume_all_hold(lab: Lab) -> None:
    """`2` focuses the second pane, `a` asks where to kill and Enter arms the first offer, the seed's point; the kill
    fires at d1's start, resumes, every check holds."""
    gate = lab.tmp / "go"
    planned = lab.fresh(["a", "b"], command=lab.gated_command(gate))
    a, b = (p.spec.out for p in planned)
    app = StudymonApp(planned, save_dir=lab.tmp)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2", "a")
        assert isinstance(app.screen, ArmScreen) and not app.supervisor.sessions["b"].armed
        assert app.screen.points[0][0] == "after:runStarted/diagnosis"
        await pilot.press("enter")
        assert app.main.current_study() == "b"
        assert str(app.main.panes["b"].header._armed.render()).strip() == "ARMED after:runStarted/diagnosis"
        assert app.supervisor.sessions["b"].armed and not app.supervisor.sessions["a"].armed
        assert app.main.panes["b"].header.armed and not app.main.panes["a"].header.armed
        assert str(button(app, "b", "arm").label) == "● Armed"
        assert not ledger(b), "the study must not have started before it was armed"
        gate.touch()
        await wait_until(pilot, "the armed kill", (b / "kills" / "1" / "kill.json").is_file)
        assert not app.supervisor.sessions["b"].armed
        # The pane hears of it by a message of its own, which may still be on its way.
        await wait_until(pilot, "b's header disarmed", lambda: not app.main.panes["b"].header.armed)
        code = await wait_exit(app)
    assert code == 0, failures(app)
    assert [r.study for r in app.results] == ["a", "b"]
    assert all(r.finished and r.exit_status == 0 for r in app.results)

    arms = jsonl(b / "arms.jsonl")
    assert [(e["event"], e["point"]) for e in arms] == [("arm", "after:runStarted/diagnosis")] * 1 + [
        ("fired", "after:runStarted/diagnosis")]
    assert not (a / "arms.jsonl").exists()
    first_start = next(r for r in ledger(b) if r["kind"] == "runStarted")
    assert parse_rfc3339(arms[0]["at"]) < parse_rfc3339(first_start["at"]), "armed only after d1 had started"

    kill = json.loads((b / "kills" / "1" / "kill.json").read_text())
    assert kill["trigger"] == "auto" and kill["triggerSeq"] == first_start["seq"]
    assert [t["run"] for t in kill["targets"]] == ["d1"]
    for out, killed in ((a, False), (b, True)):
        assert_evidence_complete(out, killed=killed)
        all_hold(out)
    assert verdicts(b)[("study", "killTriggered")] is True
    assert set(kill_verdicts(b)) == {"sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished"}
    assert [("--resume" in e["argv"], e["resume"]) for e in starts(b)] == [(False, False), (True, True)]
    # The operator saw it happen: K and R on b's load graph, and b's verdicts.
    assert [kind for _, kind in app.main.panes["b"].timeline.marks] == ["kill", "resume"]
    pane_b = app.main.panes["b"]
    assert pane_b.checks is not None and pane_b.checks.ok is True and pane_b.header.state == State.FINISHED_OK


async def test_kill_now_asks_first_cancel_keeps_it_running_then_kill_and_resume(lab: Lab) -> None:
    """`k` opens the confirmation with Cancel focused; Enter cancels; `k`, `k` kills, `r` resumes."""
    # The run may start while the first dialog is open: a longer one is still in flight when the kill lands.
    planned = lab.fresh(["a"], diagnosisSeconds=5)
    out = planned[0].spec.out
    app = StudymonApp(planned, save_dir=lab.tmp)
    async with app.run_test(size=SIZE) as pilot:
        session = app.supervisor.sessions["a"]
        await wait_until(
            pilot, "the controller running", lambda: session.is_running() and session.state == State.RUNNING
        )

        await pilot.press("k")
        await wait_until(pilot, "the confirmation", lambda: isinstance(app.screen, ConfirmScreen))
        assert app.focused is not None and app.focused.id == "cancel"
        await pilot.press("enter")  # the reflexive Enter: Cancel
        await wait_until(pilot, "the confirmation to close", lambda: not isinstance(app.screen, ConfirmScreen))
        await pilot.press("k")
        await wait_until(pilot, "the confirmation", lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")  # Escape: Cancel too
        await wait_until(pilot, "the confirmation to close", lambda: not isinstance(app.screen, ConfirmScreen))
        assert not (out / "kills").exists()
        assert session.is_running() and session.state == State.RUNNING
        pid = session.controller.pid if session.controller else None
        assert pid is not None and psutil.pid_exists(pid)

        # Kill with a run in flight, so that the kill has a target to check.
        await wait_until(pilot, "a run in flight", lambda: in_flight(app, "a"))
        await pilot.press("k")
        await wait_until(pilot, "the confirmation", lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("k")  # the same key again: kill
        await wait_until(pilot, "kills/1/kill.json", (out / "kills" / "1" / "kill.json").is_file)
        kill = json.loads((out / "kills" / "1" / "kill.json").read_text())
        assert kill["trigger"] == "manual" and kill["pid"] == pid and kill["targets"]
        # Resume once the engine waits for it: it drops a resume that comes while the kill is still capturing.
        await wait_until(
            pilot, "the study killed and waiting for a resume",
            lambda: session.state == State.KILLED and "waiting for resume" in app.main.panes["a"].header.state_detail,
        )
        assert not session.is_running()
        assert app.main.panes["a"].header.state == State.KILLED
        assert not button(app, "a", "resume").disabled, "Resume must be enabled once the controller is dead"
        assert button(app, "a", "kill").disabled and button(app, "a", "stop").disabled

        await pilot.press("r")
        await wait_until(pilot, "a resumed controller", lambda: len(starts(out)) == 2)
        code = await wait_exit(app)
    assert code == 0, failures(app)
    assert launches(out)[-1]["code"] == 0
    assert [("--resume" in e["argv"], e["resume"]) for e in starts(out)] == [(False, False), (True, True)]
    assert_evidence_complete(out, killed=True)
    all_hold(out)
    assert all(kill_verdicts(out).values())
    assert ("study", "killTriggered") not in verdicts(out)  # nothing was armed


async def test_stop_then_resume(lab: Lab) -> None:
    """`s` (confirmed) ends the controller with 130, the study is stopped; `r` resumes it to the end."""
    planned = lab.fresh(["a"])
    out = planned[0].spec.out
    app = StudymonApp(planned, save_dir=lab.tmp)
    async with app.run_test(size=SIZE) as pilot:
        session = app.supervisor.sessions["a"]
        await wait_until(pilot, "a run in flight", lambda: in_flight(app, "a"))
        await pilot.press("s")
        await wait_until(pilot, "the confirmation", lambda: isinstance(app.screen, ConfirmScreen))
        assert app.focused is not None and app.focused.id == "cancel"
        await pilot.press("left")  # from Cancel to Stop
        assert app.focused is not None and app.focused.id == "confirm"
        await pilot.press("enter")
        await wait_until(pilot, "the study stopped", lambda: session.state == State.STOPPED)
        ends = [e for e in launches(out) if e["event"] == "end"]
        assert [e["code"] for e in ends] == [130]
        # The pane hears of it by a message of its own, which may still be on its way.
        await wait_until(pilot, "the pane showing stopped", lambda: app.main.panes["a"].header.state == State.STOPPED)
        assert not button(app, "a", "resume").disabled, "Resume must be enabled once the controller has stopped"
        assert button(app, "a", "kill").disabled and button(app, "a", "stop").disabled

        await pilot.press("r")
        await wait_until(pilot, "a resumed controller", lambda: len(starts(out)) == 2)
        code = await wait_exit(app)
    assert code == 0, failures(app)
    assert [("--resume" in e["argv"], e["resume"]) for e in starts(out)] == [(False, False), (True, True)]
    assert [e["code"] for e in launches(out) if e["event"] == "end"] == [130, 0]
    assert_evidence_complete(out, killed=False)
    all_hold(out)


async def test_quit_and_detach_then_attach_finishes(lab: Lab) -> None:
    """`q` → Detach leaves the controllers running; a console attached to them sees them to the end."""
    # Two rounds: the detach must land while the studies still have seconds to go, even on a loaded machine.
    planned = lab.fresh(["a", "b"], budget=20)
    outs = [p.spec.out for p in planned]
    app = StudymonApp(planned, save_dir=lab.tmp)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, "both first runs", lambda: all(in_flight(app, s) for s in ("a", "b")))
        await pilot.press("q")
        await wait_until(pilot, "the quit dialog", lambda: isinstance(app.screen, QuitScreen))
        assert app.focused is not None and app.focused.id == "cancel"
        await pilot.press("left")  # from Cancel to Detach
        assert app.focused is not None and app.focused.id == "detach"
        await pilot.press("enter")
        code = await wait_exit(app, timeout=20)
    # Not finished: the headless status for that is 3, and the results say detached.
    assert code == 3
    assert all(r.detached and not r.finished for r in app.results)
    pids = {}
    for out in outs:
        start = starts(out)[-1]
        assert [e["event"] for e in launches(out)] == ["start"], "the controller must outlive the console"
        assert psutil.pid_exists(start["pid"]) and psutil.Process(start["pid"]).create_time() == pytest.approx(
            start["startTime"], abs=0.05)
        assert not (out / "report.json").exists()
        pids[out.name] = start["pid"]

    again = StudymonApp([Planned(p.spec, p.prefix, attach=True) for p in planned], save_dir=lab.tmp)
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot, "both attached",
            lambda: all(again.main.panes[s].pid == pids[s] for s in ("a", "b")) or again.return_code is not None,
        )
        for out in outs:
            # The running time counts from the study's first start (launches.jsonl), not from the attach.
            since_first = time.time() - parse_rfc3339(starts(out)[0]["at"])
            elapsed = again.main.panes[out.name].header.elapsed
            if again.return_code is None and elapsed is not None:
                assert elapsed >= since_first - 1.0, (out.name, elapsed, since_first)
        code = await wait_exit(again)
    assert code == 0, failures(again)
    for out in outs:
        assert [(e["event"], e["pid"]) for e in launches(out)] == [("start", pids[out.name]), ("end", pids[out.name])]
        assert launches(out)[-1]["code"] == 0
        assert_evidence_complete(out, killed=False)
        all_hold(out)
        # Both consoles together saw every record exactly once.
        seqs = [t["seq"] for t in jsonl(out / "timeline.jsonl")]
        assert sorted(seqs) == list(range(1, len(ledger(out)) + 1))



async def test_a_broken_study_ends_on_its_verdict_with_the_failure_shown_until_q(lab: Lab) -> None:
    """The console stays open when every study has ended: the pane lists every check with the detail of
    the ✗, the top line says exit 1; `q` closes with status 1."""
    planned = lab.fresh(["a"], armed=("a",), command=[sys.executable, str(BROKEN)], fault="recharge")
    app = StudymonApp(planned, save_dir=lab.tmp)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, "every study ended", lambda: app.status is not None, timeout=WAIT)
        await stays_open(app)
        pane = app.main.panes["a"]
        assert pane.verdict.display
        text = pane.verdict.plain()
        assert "✗ kill 1 · d1 · chargedOnce" in text, text
        failing = [c for c in pane.verdict.checks if c.ok is False]
        assert failing and all(c.detail and c.detail in text for c in failing), text
        assert app.main.machine.overall == (False, "✗ checks fail: a · exit 1 · q closes")
        await pilot.press("q")
        code = await wait_exit(app)
    assert code == 1
