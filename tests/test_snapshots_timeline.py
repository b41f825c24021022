"""Snapshots of the timeline, fed a recorded study with a kill through a running target.

No engine runs here: a small app holds one :class:`Timeline` and is fed a
fixed sequence of real engine events (``StudyLoad`` samples, ``RecordsSeen``
ledger records, ``KillStep`` with their times), routed as a pane routes them.
The clock is fixed, so every run draws the same picture.  The recording is a
25-minute study: a diagnosis run and a failed ablation long ago (in the
compressed part), a run of a purpose the console does not know, then the
target, diagnosis run ``d2``, started before a manual kill and given its
result after the resume, an ablation still running and a diagnosis run charged
but not started.  The accepted SVGs are in
``tests/__snapshots__/test_snapshots_timeline/``; update them with ``pytest
--snapshot-update tests/test_snapshots_timeline.py`` and look at them before
committing.

Beside the pictures, :func:`test_the_target_is_one_unbroken_bar_with_k_and_r_on_it`
reads the same recording as plain text.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from studymon.engine.contract.ledger import Record
from studymon.engine.events import KillStep, RecordsSeen, StudyEvent, StudyLoad
from studymon.engine.io.clock import rfc3339_ms
from studymon.widgets.run_lanes import BAR_GLYPHS
from studymon.widgets.time_axis import TimeAxis
from studymon.widgets.timeline import GUTTER, Timeline

STUDY = "beta"
T0 = 1_764_000_000.0  # 2025-11-24T16:00:00Z
NOW = T0 + 1500.0
KILL = T0 + 1100.0
RESUME = T0 + 1160.0
MIB = 1024 * 1024
HEIGHT = 14


class Ledger:
    """Ledger records with exact times, numbered as a study writes them."""

    def __init__(self) -> None:
        self.records: list[Record] = []

    def add(self, kind: str, at: float, **content: Any) -> None:
        seq = len(self.records) + 1
        self.records.append(Record(seq, rfc3339_ms(T0 + at), kind, content, seq, 0))

    def run(self, run: str, purpose: str, planned: float, started: float | None, ended: float | None, code: int = 0):
        self.add("runPlanned", planned, run=run, purpose=purpose, object="alpha", round=1, experiments=["e1"])
        self.add("charge", planned + 0.4, run=run, amount=10, balance=50)
        if started is not None:
            self.add("runStarted", started, run=run, container=f"inforsi-{STUDY}-{run}")
        if ended is not None:
            self.add("runResult", ended, run=run, exitCode=code, outputs={"e1": 0.5})


def load_at(t: float) -> tuple[float, int]:
    """The study's own load at ``t`` seconds: a small controller and its runs, heavier for diagnosis."""
    runs = [(60, 300, 80.0), (320, 600, 65.0), (650, 800, 40.0), (1000, 1350, 150.0), (1362, 1500, 70.0)]
    cpu = 0.0 if KILL - T0 <= t < RESUME - T0 else 4.0 + 2.0 * math.sin(t / 30.0)  # the controller, gone while killed
    memory = 0 if KILL - T0 <= t < RESUME - T0 else 90 * MIB
    for start, end, share in runs:
        if start <= t < end:
            cpu += share + 12.0 * math.sin(t / 17.0)
            memory += 160 * MIB + int(40 * MIB * math.sin(t / 50.0))
    return round(cpu, 1), memory


def recorded_study() -> list[StudyEvent]:
    """The engine's events for the recording, in the order it would send them."""
    ledger = Ledger()
    ledger.add("studyOpen", 0.0, study=STUDY, budget=60, config={})
    ledger.run("d1", "diagnosis", 59.0, 60.0, 300.0)
    ledger.run("a1", "ablation", 319.0, 320.0, 600.0, code=1)
    ledger.run("w1", "warmup", 649.0, 650.0, 800.0)  # a purpose the console does not know
    ledger.run("d2", "diagnosis", 999.0, 1000.0, None)  # the target
    marked = len(ledger.records)
    ledger.add("runResult", 1350.0, run="d2", exitCode=0, outputs={"e1": 0.7})
    ledger.run("a2", "ablation", 1361.0, 1362.0, None)
    ledger.run("d3", "diagnosis", 1490.0, None, None)
    events: list[tuple[float, StudyEvent]] = [
        (t, StudyLoad(STUDY, T0 + t, *load_at(t))) for t in (i * 2.5 for i in range(int(1500 / 2.5)))
    ]
    by_time = sorted(ledger.records, key=lambda r: r.seq)
    before, after = by_time[:marked], by_time[marked:]
    events.append((1000.0, RecordsSeen(STUDY, tuple(before))))
    events.append((KILL - T0, KillStep(STUDY, 1, "killed", "SIGKILL", at=KILL)))
    events.append((RESUME - T0, KillStep(STUDY, 1, "resumed", "pid 2", at=RESUME)))
    events.append((1490.0, RecordsSeen(STUDY, tuple(after))))
    events.sort(key=lambda pair: pair[0])
    return [event for _, event in events]


def feed(timeline: Timeline, events: list[StudyEvent]) -> None:
    """Route engine events to the timeline as the study's pane does."""
    for event in events:
        if isinstance(event, StudyLoad):
            timeline.add_load(event.at, event.cpu, event.memory)
        elif isinstance(event, RecordsSeen):
            timeline.add_records(event.records)
            timeline.set_purposes(event.purposes)
        elif isinstance(event, KillStep) and event.at is not None:
            if event.step == "killed":
                timeline.mark("kill", event.at)
            elif event.step == "resumed":
                timeline.mark("resume", event.at)


class TimelineApp(App[None]):
    CSS = f"Timeline {{ height: {HEIGHT}; }}"

    def compose(self) -> ComposeResult:
        yield Timeline(clock=lambda: NOW, id="timeline")


def fed(highlight: str | None = None) -> Callable[[Pilot], Awaitable[None]]:
    async def run_before(pilot: Pilot) -> None:
        timeline = pilot.app.query_one(Timeline)
        feed(timeline, recorded_study())
        if highlight is not None:
            timeline.highlight(highlight, NOW + 5)
        timeline.tick()
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("width", [30, 53, 150])
def test_timeline_kill_through_a_target(snap_compare: Callable[..., bool], width: int) -> None:
    assert snap_compare(TimelineApp(), terminal_size=(width, HEIGHT), run_before=fed())


def test_timeline_with_a_run_highlighted(snap_compare: Callable[..., bool]) -> None:
    assert snap_compare(TimelineApp(), terminal_size=(53, HEIGHT), run_before=fed(highlight="a2"))


@pytest.mark.parametrize("width", [30, 53, 150])
def test_the_target_is_one_unbroken_bar_with_k_and_r_on_it(width: int) -> None:
    timeline = Timeline(clock=lambda: NOW)
    feed(timeline, recorded_study())
    text = timeline.text(width, HEIGHT)
    rows = text.split("\n")
    axis = TimeAxis.build(width - GUTTER, NOW, T0)
    start, end = axis.column(T0 + 1000), axis.column(T0 + 1350)
    k, r = axis.column(KILL), axis.column(RESUME)
    assert start <= k < r <= end, (start, k, r, end)
    target = next(row[GUTTER:] for row in rows if row.startswith("d2 "))
    bar = target[start : end + 1]
    assert set(bar) - {"K", "R"} <= BAR_GLYPHS, text  # unbroken from its start to its result
    assert bar.count("K") == 1 and bar.count("R") == 1, text
    assert target[k] == "K" and target[r] == "R", text
    assert target[:start].strip(" │") == "" and target[end + 1 :].strip(" │") == "", text
    # The same columns are marked across the graph.
    assert rows[0][GUTTER + k] == "K" and rows[0][GUTTER + r] == "R", text
    # The run still going reaches now, and the one only charged is a mark.
    assert next(row for row in rows if row.startswith("a2 ")).endswith("█")
    assert next(row for row in rows if row.startswith("d3 "))[GUTTER:].strip(" │") == "◆"
