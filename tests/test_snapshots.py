"""Snapshots of the console: the main screen with three studies, the help screen, the dialogs, a paused and a
filtered stream, a narrow terminal, and the end on the verdicts.

No engine runs here (``start_engine=False``): the app is fed a fixed, recorded
sequence of real engine events — ledger records, states, progress, container
lifecycle, machine samples with fixed numbers, an armed kill and its resume, a
finished study's verdicts — through :meth:`StudymonApp.feed`, exactly as the
engine would deliver them.  Both clocks are set by the test, the ledger streams
show each record at once (``refresh_interval=0``), and no widget blinks, so
every run draws the same screen.  The accepted SVGs are in
``tests/__snapshots__/test_snapshots/``; update them with
``pytest --snapshot-update tests/test_snapshots.py`` and look at them before
committing.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from studymon.engine.contract.ledger import Record
from studymon.engine.contract.spec import StudySpec
from studymon.engine.events import (
    ArmChanged,
    ContainerChanged,
    ControllerStarted,
    KillStep,
    Progress,
    RecordsSeen,
    Sample,
    State,
    StateChanged,
    StudyEvent,
    StudyLoad,
    Verdicts,
)
from studymon.engine.io.clock import rfc3339_ms, rfc3339_ns
from studymon.engine.judge.verdict import Check
from studymon.engine.live.finish import SessionResult
from studymon.tui.app import Planned, StudymonApp
from studymon.widgets.dialogs import QuitScreen

SIZE = (160, 48)
PREFIX = "inforsi"
GIB = 1024**3
# The recorded run: wall-clock epoch of its first record, and the monotonic clock's reading then.
T0 = 1_764_000_000.0  # 2025-11-24T16:00:00Z
MONO0 = 1000.0
# Folders that do not exist: a console without its engine must not read them.
NOWHERE = Path("/nonexistent/studymon-snapshots")


class SteppedClock:
    """A clock that reads what the test last set: deterministic, yet not the same for every study."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class LedgerWriter:
    """Builds one study's ledger records with exact times, as the reference study writes them."""

    def __init__(self, study: str, start: float) -> None:
        self.study = study
        self.t = start
        self.records: list[Record] = []
        self._offset = 0

    def add(self, kind: str, after: float, **content: Any) -> Record:
        self.t += after
        seq = len(self.records) + 1
        record = Record(seq, rfc3339_ms(self.t), kind, content, seq, self._offset)
        self._offset += len(json.dumps(record.as_json())) + 1
        self.records.append(record)
        return record

    def take(self, since: int) -> tuple[Record, ...]:
        return tuple(self.records[since:])

    def open(self, budget: float, seed: list[tuple[str, float]]) -> None:
        self.add("studyOpen", 0.0, study=self.study, budget=budget, config={"budget": budget, "runCost": 10})
        self.add("decision", 0.004, name="seedExperiments", round=0,
                 output={"experiments": [{"id": i, "param": p} for i, p in seed]})

    def start_round(self, rnd: int, cell: str, chosen: list[str], balance: float) -> None:
        run = f"d{rnd}"
        self.add("stageOpen", 0.002, stage="diagnosis", round=rnd)
        self.add("decision", 0.001, name="selectDiagnosis", round=rnd, output={"chosen": chosen})
        self.add("runPlanned", 0.001, run=run, purpose="diagnosis", object=cell, round=rnd, experiments=chosen)
        self.add("charge", 0.001, run=run, amount=10, balance=balance)
        self.add("runStarted", 0.412, run=run, container=f"{PREFIX}-{self.study}-{run}")

    def end_round(self, rnd: int, seconds: float, scores: dict[str, float], proposed: list[tuple[str, float]]) -> None:
        run = f"d{rnd}"
        self.add("runResult", seconds, run=run, exitCode=0, outputs=scores)
        judged = [{"id": i, "verdict": "kept" if s >= 0.7 else "rejected", "score": s} for i, s in scores.items()]
        self.add("diagnosisSettlement", 0.003, round=rnd, run=run, dropped=[], judged={"experiments": judged})
        self.add("stageOpen", 0.001, stage="proposal", round=rnd)
        self.add("decision", 0.002, name="proposeExperiments", round=rnd,
                 output={"experiments": [{"id": i, "param": p} for i, p in proposed]})


def docker_inspect(name: str, status: str, started: float | None, code: int = 0) -> dict[str, Any]:
    """A Docker-shaped inspect, as the runtime gives after a lifecycle event."""
    return {
        "Name": "/" + name,
        "Id": hashlib.sha256(name.encode()).hexdigest(),
        "State": {
            "Status": status,
            "Running": status == "running",
            "ExitCode": code,
            "StartedAt": rfc3339_ns(int(started * 1e9)) if started else "0001-01-01T00:00:00Z",
        },
    }


def run_container(study: str, run: str, started: float, ended: float | None, removed: bool) -> list[StudyEvent]:
    """The lifecycle events of one run's container: create, start, and die and destroy once over."""
    name = f"{PREFIX}-{study}-{run}"
    events: list[StudyEvent] = [
        ContainerChanged(study, name, "create", docker_inspect(name, "created", None), "created"),
        ContainerChanged(study, name, "start", docker_inspect(name, "running", started), "running"),
    ]
    if ended is not None:
        events.append(ContainerChanged(study, name, "die", docker_inspect(name, "exited", started), "exited", 0))
        if removed:
            events.append(ContainerChanged(study, name, "destroy", None, "removed"))
    return events


def sample(i: int) -> dict[str, Any]:
    """Machine sample ``i`` of the recording: fixed numbers with a slow swell, like a busy machine."""
    cpu = round(38 + 22 * math.sin(i / 7.0) + (9 if i % 11 == 0 else 0), 1)
    load1 = round(1.1 + 0.6 * math.sin(i / 13.0), 2)
    percent = round(41.0 + 0.05 * i, 1)
    total = 16 * GIB
    return {
        "at": rfc3339_ms(T0 + i),
        "label": "sample",
        "load": [load1, 0.94, 0.71],
        "memory": {"total": total, "available": int(total * (1 - percent / 100)), "used": int(total * percent / 100),
                   "percent": percent},
        "cpu": cpu,
    }


def tree_cpu(study: str, i: int) -> float:
    phase = {"alpha": 0.0, "beta": 2.0, "gamma": 4.0}[study]
    return round(max(0.0, 60 + 55 * math.sin(i / 5.0 + phase)), 1)


def own_memory(study: str, i: int) -> int:
    """The study's own memory at second ``i``: its controller and its runs, some hundreds of MiB."""
    base = {"alpha": 180, "beta": 240, "gamma": 120}[study]
    return int((base + 60 * math.sin(i / 9.0)) * 1024**2)


Step = tuple[float, list[StudyEvent]]  # (seconds since T0, what the engine reported then)


def recorded_run() -> list[Step]:
    """Three studies on one machine, 90 s in: alpha running round 3, beta killed at d1 and resumed, gamma finished."""
    steps: list[Step] = []
    samples_given = 0

    def samples_until(second: int, studies: tuple[str, ...] = ("alpha", "beta", "gamma")) -> None:
        nonlocal samples_given
        steps.extend((float(i), [event for s in studies for event in (
            Sample(s, sample(i), tree_cpu(s, i)),
            StudyLoad(s, T0 + i, tree_cpu(s, i), own_memory(s, i)),
        )]) for i in range(samples_given, second))
        samples_given = max(samples_given, second)

    alpha = LedgerWriter("alpha", T0)
    beta = LedgerWriter("beta", T0 + 0.35)
    gamma = LedgerWriter("gamma", T0 + 0.7)

    # --- the start: three controllers, beta armed before its first run -------------
    steps.append((0.0, [
        ControllerStarted("alpha", 41017, False), StateChanged("alpha", State.RUNNING, "pid 41017"),
        ControllerStarted("beta", 41018, False), StateChanged("beta", State.RUNNING, "pid 41018"),
        ArmChanged("beta", True),
        ControllerStarted("gamma", 41019, False), StateChanged("gamma", State.RUNNING, "pid 41019"),
    ]))
    for led in (alpha, beta, gamma):
        led.open(60, [("e1", 0.412), ("e2", 2.731), ("e3", 1.204), ("e4", -0.35)])
    alpha.start_round(1, "alpha", ["e1", "e2", "e3"], 50)
    beta.start_round(1, "alpha", ["e1", "e2", "e3"], 50)
    gamma.start_round(1, "alpha", ["e1", "e2", "e3"], 50)

    # --- beta's armed kill at the start of d1, then its resume ---------------------
    steps.append((1.0, [
        RecordsSeen("alpha", alpha.take(0)), Progress("alpha", 1, "diagnosis", 50, 60, (("d1", "inforsi-alpha-d1"),)),
        *run_container("alpha", "d1", T0 + 0.8, None, False),
        RecordsSeen("beta", beta.take(0)), Progress("beta", 1, "diagnosis", 50, 60, (("d1", "inforsi-beta-d1"),)),
        *run_container("beta", "d1", T0 + 1.1, None, False),
        KillStep("beta", 1, "frozen", "targets: ['d1']"),
        ArmChanged("beta", False),
        StateChanged("beta", State.KILLED, "kill 1 (auto)"),
        KillStep("beta", 1, "killed", "SIGKILL to pid 41018; targets: ['d1']", T0 + 1.2),
        RecordsSeen("gamma", gamma.take(0)), Progress("gamma", 1, "diagnosis", 50, 60, (("d1", "inforsi-gamma-d1"),)),
        *run_container("gamma", "d1", T0 + 1.5, None, False),
    ]))
    samples_until(4)
    steps.append((4.0, [
        KillStep("beta", 1, "captured", "container after the kill, machine snapshot"),
        ControllerStarted("beta", 41090, True), StateChanged("beta", State.RESUMING, "pid 41090"),
        KillStep("beta", 1, "resumed", "pid 41090", T0 + 4.0),
    ]))

    # --- rounds go on --------------------------------------------------------------
    scores = {"e1": 0.3761, "e2": 0.7912, "e3": 0.6468}
    marks = {led.study: len(led.records) for led in (alpha, beta, gamma)}
    for led in (alpha, beta, gamma):
        led.end_round(1, 3.0, scores, [("e5", 2.514), ("e6", 3.108), ("e7", "n/a")])
        led.start_round(2, "beta", ["e4", "e5", "e6"], 40)
    samples_until(7)
    steps.append((7.0, [
        RecordsSeen("beta", beta.take(marks["beta"])), StateChanged("beta", State.RUNNING, "pid 41090"),
        KillStep("beta", 1, "settled", "every target has its result"),
        Progress("beta", 2, "diagnosis", 40, 60, (("d2", "inforsi-beta-d2"),)),
        *run_container("beta", "d1", T0 + 1.1, T0 + 4.1, True)[2:],
        *run_container("beta", "d2", T0 + 5.2, None, False),
        RecordsSeen("alpha", alpha.take(marks["alpha"])),
        Progress("alpha", 2, "diagnosis", 40, 60, (("d2", "inforsi-alpha-d2"),)),
        *run_container("alpha", "d1", T0 + 0.8, T0 + 3.9, True)[2:],
        *run_container("alpha", "d2", T0 + 4.6, None, False),
        RecordsSeen("gamma", gamma.take(marks["gamma"])),
        Progress("gamma", 2, "diagnosis", 40, 60, (("d2", "inforsi-gamma-d2"),)),
        *run_container("gamma", "d1", T0 + 1.5, T0 + 4.5, True)[2:],
        *run_container("gamma", "d2", T0 + 5.0, None, False),
    ]))

    # alpha and gamma go two more rounds; gamma ends there, halted at its exhausted budget.
    marks = {led.study: len(led.records) for led in (alpha, gamma)}
    for led in (alpha, gamma):
        led.end_round(2, 3.0, {"e4": 0.0, "e5": 0.8054, "e6": 0.7377}, [("e8", 2.231), ("e9", 1.873), ("e10", 2.602)])
        led.start_round(3, "gamma", ["e7", "e8", "e9"], 30)
    gamma.end_round(3, 3.0, {"e8": 0.8061, "e9": 0.7969}, [("e11", 2.101), ("e12", 2.404), ("e13", 1.998)])
    rounds = ((4, "alpha", ["e10", "e11", "e12"], 20, [("e14", 2.317), ("e15", 2.052)]),
              (5, "beta", ["e13"], 10, []),
              (6, "gamma", ["e14", "e15"], 0, []))
    for rnd, cell, chosen, balance, proposed in rounds:
        gamma.start_round(rnd, cell, chosen, balance)
        gamma.end_round(rnd, 3.0, {e: round(0.74 + 0.013 * k, 4) for k, e in enumerate(chosen)}, proposed)
    gamma.add("halt", 0.001, reason="balance exhausted")
    samples_until(30)
    steps.append((30.0, [
        RecordsSeen("alpha", alpha.take(marks["alpha"])),
        Progress("alpha", 3, "diagnosis", 30, 60, (("d3", "inforsi-alpha-d3"),)),
        *run_container("alpha", "d2", T0 + 4.6, T0 + 7.7, True)[2:],
        *run_container("alpha", "d3", T0 + 8.3, None, False),
        RecordsSeen("gamma", gamma.take(marks["gamma"])),
        Progress("gamma", 6, "proposal", 0, 60, ()),
        *run_container("gamma", "d2", T0 + 5.0, T0 + 8.1, True)[2:],
        *run_container("gamma", "d3", T0 + 8.9, T0 + 12.0, True),
        *run_container("gamma", "d4", T0 + 12.6, T0 + 15.7, True),
        *run_container("gamma", "d5", T0 + 16.3, T0 + 19.4, True),
        *run_container("gamma", "d6", T0 + 20.0, T0 + 23.1, False),
        StateChanged("gamma", State.FINISHED_OK, ""),
        Verdicts("gamma", tuple(Check(name, True, "ok") for name in (
            "ledgerWellFormed", "haltedAtExport", "chargedEqualsStarts", "exitedCleanly")), True, True),
    ]))
    samples_until(90, ("alpha", "beta"))
    return steps


def feeder(clock: SteppedClock) -> Callable[[Pilot], Awaitable[None]]:
    """The ``run_before`` of a snapshot: feed the recording at its times, then stand at 1 min 30 s."""

    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, StudymonApp)
        for at, events in recorded_run():
            clock.now = MONO0 + at
            await app.feed(events)  # handled by the panes at this clock
        clock.now = MONO0 + 90.0
        for field in app.main.query(Input):
            field.cursor_blink = False  # hidden now; a shown one must not blink into the picture either
        # Every pane handles what it was sent before the clocks move: a timeline draws the samples
        # it has at its tick, and one handled after it would wait for the next.
        for _ in range(3):
            await pilot.pause()
        for pane in app.main.panes.values():
            pane.flush()
            pane.tick()
        # The screen's own clock may have ticked meanwhile (a loaded machine): the line shows the
        # newest sample whenever it last moved.
        app.main.machine.flush()
        # Let what the widgets do once laid out (following the tail, showing the newest container,
        # the focused pane scrolled into view) happen before any key, however slow the machine.
        for _ in range(3):
            await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        app.main.query_one("#panes").scroll_home(animate=False)
        for pane in app.main.panes.values():
            if pane.stream.following:
                pane.stream.lines.scroll_to_bottom()  # the laid-out bottom, whatever came first
        await pilot.pause()
        await pilot.pause()

    return run_before


def console(clock: SteppedClock) -> StudymonApp:
    planned = [Planned(StudySpec(sid, NOWHERE / sid), PREFIX) for sid in ("alpha", "beta", "gamma")]
    return StudymonApp(
        planned,
        clock=clock,
        wall_clock=lambda: T0 + 90.0,
        refresh_interval=0,
        start_engine=False,
        save_dir=NOWHERE,
    )


def test_main_screen_three_studies(snap_compare: Callable[..., bool]) -> None:
    clock = SteppedClock(MONO0)
    assert snap_compare(console(clock), terminal_size=SIZE, run_before=feeder(clock))
    assert not NOWHERE.exists()


def test_help_screen(snap_compare: Callable[..., bool]) -> None:
    clock = SteppedClock(MONO0)
    assert snap_compare(console(clock), press=["question_mark"], terminal_size=SIZE, run_before=feeder(clock))


# --- the dialogs, the stream's modes, a narrow terminal -------------------------


def test_kill_dialog(snap_compare: Callable[..., bool]) -> None:
    """The manual kill's question: Cancel focused, the kill key again kills."""
    clock = SteppedClock(MONO0)
    feed = feeder(clock)

    async def run_before(pilot: Pilot) -> None:
        await feed(pilot)
        app = pilot.app
        assert isinstance(app, StudymonApp)
        await app.push_screen(app.main.kill_question("alpha"))
        await pilot.pause()

    assert snap_compare(console(clock), terminal_size=SIZE, run_before=run_before)


def test_quit_dialog(snap_compare: Callable[..., bool]) -> None:
    """Quitting with studies running: Stop, Detach or Cancel (focused)."""
    clock = SteppedClock(MONO0)
    feed = feeder(clock)

    async def run_before(pilot: Pilot) -> None:
        await feed(pilot)
        await pilot.app.push_screen(QuitScreen(["alpha", "beta"]))
        await pilot.pause()

    assert snap_compare(console(clock), terminal_size=SIZE, run_before=run_before)


def test_record_dialog(snap_compare: Callable[..., bool]) -> None:
    """Enter on a record: its whole JSON."""
    clock = SteppedClock(MONO0)
    assert snap_compare(console(clock), press=["up", "up", "enter"], terminal_size=SIZE, run_before=feeder(clock))


def test_paused_and_filtered_streams(snap_compare: Callable[..., bool]) -> None:
    """alpha scrolled up (paused: the status line says so and how to follow again); beta filtered to charges."""
    clock = SteppedClock(MONO0)
    feed = feeder(clock)

    async def run_before(pilot: Pilot) -> None:
        await feed(pilot)
        await pilot.press("1", "up", "up", "up", "up", "up")
        await pilot.press("2", "slash", *"charge", "enter")
        for field in pilot.app.query(Input):
            field.cursor_blink = False
        await pilot.pause()

    assert snap_compare(console(clock), terminal_size=SIZE, run_before=run_before)


def test_narrow_terminal(snap_compare: Callable[..., bool]) -> None:
    """100×30: the panes stack, each keeps its parts, and the screen scrolls."""
    clock = SteppedClock(MONO0)
    assert snap_compare(console(clock), terminal_size=(100, 30), run_before=feeder(clock))


# --- the end -----------------------------------------------------------------


def end_of_studies() -> list[Step]:
    """alpha and beta end too: alpha with every check ✓, beta with a kill check ✗."""
    holds = ("ledgerWellFormed", "contractKept", "haltedAtExport", "chargedEqualsStarts", "exitedCleanly")
    beta = (
        *(Check(name, True, "ok") for name in holds),
        Check("killTriggered", True, "kill 1 fired at seq 7, d1's runStarted"),
        Check("killDelivered", True, "SIGKILL to pid 41018, its keeper saw it die of SIGKILL", "kill 1"),
        Check("sameContainerNoRerun", True, "one die of the same Id, exit 0 as runResult says", "kill 1 · d1"),
        Check("chargedOnce", False, "d1 charged twice: seq 5 and seq 19 (after the kill); runStarted once",
              "kill 1 · d1"),
        Check("resultSettledAndFinished", True, "one result at seq 17, settled at seq 18", "kill 1 · d1"),
    )
    return [(95.0, [
        StateChanged("alpha", State.FINISHED_OK, ""),
        Verdicts("alpha", tuple(Check(name, True, "ok") for name in holds), True, True),
        StateChanged("beta", State.FINISHED_FAIL, ""),
        Verdicts("beta", beta, False, True),
    ])]


def test_end_of_studies_verdicts(snap_compare: Callable[..., bool]) -> None:
    """Every study has ended: the console stays, each pane shows its checks (the ✗ with its detail), and
    the top line the overall result and the exit status."""
    clock = SteppedClock(MONO0)
    feed = feeder(clock)

    async def run_before(pilot: Pilot) -> None:
        await feed(pilot)
        app = pilot.app
        assert isinstance(app, StudymonApp)
        for at, events in end_of_studies():
            clock.now = MONO0 + at
            await app.feed(events)
        results = []
        for event in (e for _, events in end_of_studies() for e in events):
            if isinstance(event, Verdicts):
                results.append(SessionResult(event.study, NOWHERE / event.study, True,
                                             SimpleNamespace(ok=event.ok), None))  # type: ignore[arg-type]
        results.append(SessionResult("gamma", NOWHERE / "gamma", True, SimpleNamespace(ok=True), None))  # type: ignore[arg-type]
        app.main.show_ended(1, results)
        for pane in app.main.panes.values():
            pane.flush()
        await pilot.pause()
        app.clear_notifications()
        await pilot.pause()

    assert snap_compare(console(clock), terminal_size=SIZE, run_before=run_before)


async def test_every_scrollbar_thumb_stands_where_its_view_is_scrolled() -> None:
    """A stream that follows its tail got its scrollbar after it had scrolled: the thumb must show that
    scroll, not the top (a hidden scrollbar is not told about scrolls)."""
    clock = SteppedClock(MONO0)
    app = console(clock)
    async with app.run_test(size=SIZE) as pilot:
        await feeder(clock)(pilot)
        shown = [w for w in app.screen.walk_children() if w.show_vertical_scrollbar]
        scrolled = [w for w in shown if w.scroll_y > 0]
        assert scrolled, "the recording scrolls at least one stream down to its tail"
        for widget in shown:
            assert widget.vertical_scrollbar.position == widget.scroll_y, widget
