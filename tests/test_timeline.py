"""The timeline widget: its time axis, load history and run lanes as pure logic, then the widget in a real app.

The pure parts are checked with fixed clocks; the widget is mounted in a small
Textual app (Pilot) to show that what is added is what is painted, that a
hostile ledger does not break it, and that its clock tick redraws only when
the picture would change.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.style import Style
from textual.app import App, ComposeResult
from textual.geometry import Region

from studymon.engine.contract.ledger import Record
from studymon.engine.io.clock import rfc3339_ms
from studymon.widgets import load_history, run_lanes
from studymon.widgets.load_history import LoadHistory
from studymon.widgets.run_lanes import FAILED_END, GLYPHS, MAX_RUNS, RunLanes, RunState
from studymon.widgets.time_axis import LINEAR_SPAN, OLD_SPANS, STEPS, TimeAxis, age_text
from studymon.widgets.timeline import (
    GRAPH_ROWS,
    GUTTER,
    MIN_SHOWN_CPU,
    Timeline,
    bytes_text,
    cpu_top,
    memory_top,
    percent_text,
)

T0 = 1_764_000_000.0  # 2025-11-24T16:00:00Z
MIB = 1024 * 1024


class Clock:
    """A clock the test sets."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def rec(kind: str, t: float, seq: int = 1, **content: Any) -> Record:
    return Record(seq, rfc3339_ms(t), kind, content, seq, 0)


def run_records(run: str, purpose: str, planned: float, started: float | None, ended: float | None, code: int = 0):
    out = [rec("runPlanned", planned, run=run, purpose=purpose), rec("charge", planned + 0.5, run=run, amount=1)]
    if started is not None:
        out.append(rec("runStarted", started, run=run, container=f"inforsi-s-{run}"))
    if ended is not None:
        out.append(rec("runResult", ended, run=run, exitCode=code, outputs={}))
    return out


def lines(timeline: Timeline, width: int, height: int | None = None) -> list[str]:
    return timeline.text(width, height).split("\n")


def plot(line: str) -> str:
    """The part of a row right of the gutter (the columns of the time axis)."""
    return line[GUTTER:]


def lane(timeline: Timeline, width: int, run: str) -> str:
    for line in lines(timeline, width):
        if line[: GUTTER - 1].strip() == run:
            return plot(line)
    raise AssertionError(f"no lane for {run}:\n{timeline.text(width)}")


# --- the time axis ---------------------------------------------------------------


def mid_bin_now(columns: int) -> float:
    """A now in the middle of a linear column, so that exact column arithmetic holds."""
    axis = TimeAxis.build(columns, T0)
    return (axis.now_bin + 0.5) * axis.step


@pytest.mark.parametrize("columns", [24, 47, 144])
def test_now_is_the_right_edge_and_the_future_too(columns: int) -> None:
    now = mid_bin_now(columns)
    axis = TimeAxis.build(columns, now)
    assert axis.column(now) == columns - 1
    assert axis.column(now + 3600) == columns - 1
    assert axis.start(columns - 1) <= now < axis.start(columns - 1) + axis.step


@pytest.mark.parametrize("columns", [24, 47, 144])
def test_the_right_three_quarters_are_linear_over_at_least_the_last_ten_minutes(columns: int) -> None:
    now = mid_bin_now(columns)
    axis = TimeAxis.build(columns, now)
    assert axis.old_columns == columns // 4
    assert axis.step in STEPS  # a step of the ladder: panes of nearly one width move together
    assert LINEAR_SPAN <= axis.step * axis.linear_columns <= 1.25 * LINEAR_SPAN
    for k in range(axis.linear_columns):
        assert axis.column(now - k * axis.step) == columns - 1 - k
    # The linear part ends at its first column; a minute before it is in the compressed part.
    assert axis.column(now - LINEAR_SPAN) >= axis.old_columns
    assert axis.column(axis.boundary - 60) < axis.old_columns
    assert now - axis.boundary == pytest.approx(axis.linear_columns * axis.step - axis.step / 2)


def test_panes_of_nearly_one_width_share_their_step() -> None:
    """The three panes of a 160-column terminal are 45 and 46 columns wide: they must move together."""
    for oldest in (None, T0 - 30, T0 - 200, T0 - 3600):
        assert TimeAxis.build(45, T0, oldest).step == TimeAxis.build(46, T0, oldest).step


def test_older_time_is_compressed_into_the_left_quarter_on_a_ladder() -> None:
    now = mid_bin_now(47)
    axis = TimeAxis.build(47, now, oldest=now - 3 * 3600)
    assert axis.old_span == 3 * 3600.0  # the ladder's first step that reaches back that far
    assert now - 3 * 3600 - 2 * axis.old_step < axis.origin <= now - 3 * 3600  # it reaches the oldest, just
    assert axis.column(now - 3 * 3600) == 0
    assert axis.column(now - 2 * 3600) == math.floor((now - 2 * 3600 - axis.origin) / axis.old_step)
    starts = [axis.start(c) for c in range(axis.old_columns)]
    assert all(b - a == pytest.approx(axis.old_step) for a, b in itertools.pairwise(starts))
    assert axis.old_step * axis.old_columns == pytest.approx(3 * 3600)
    # Older than the ladder's last step: the first column.
    far = TimeAxis.build(47, now, oldest=now - 400 * 86400)
    assert far.old_span == OLD_SPANS[-1]
    assert far.column(now - 400 * 86400) == 0


def test_narrow_axes_are_all_linear() -> None:
    axis = TimeAxis.build(6, T0, oldest=T0 - 86400)
    assert axis.old_columns == 0
    assert axis.column(T0 - 86400) == 0
    assert axis.column(T0) == 5


@settings(max_examples=300, deadline=None)
@given(
    columns=st.integers(min_value=1, max_value=200),
    now=st.floats(min_value=T0, max_value=T0 + 30 * 86400),
    back=st.lists(st.floats(min_value=-3600, max_value=40 * 86400), min_size=2, max_size=20),
    oldest=st.one_of(st.none(), st.floats(min_value=0, max_value=60 * 86400)),
)
def test_the_mapping_is_monotonic_and_in_range(columns: int, now: float, back: list[float], oldest: float | None):
    axis = TimeAxis.build(columns, now, None if oldest is None else now - oldest)
    times = sorted(now - b for b in back)
    cols = [axis.column(t) for t in times]
    assert cols == sorted(cols)
    assert all(0 <= c < columns for c in cols)
    assert len(axis.labels()) == columns


def test_the_axis_moves_by_whole_columns() -> None:
    now = mid_bin_now(47)
    axis = TimeAxis.build(47, now)
    assert TimeAxis.build(47, now + axis.step * 0.4).key == axis.key
    moved = TimeAxis.build(47, now + axis.step)
    assert moved.key != axis.key
    # A moment keeps its column's start time: the picture shifts, it does not shimmer.
    t = now - 200
    assert moved.start(moved.column(t)) == axis.start(axis.column(t))
    assert moved.column(t) == axis.column(t) - 1


@pytest.mark.parametrize(("age", "step"), [(0.0, 0.25), (8.0, 0.25), (20.0, 0.5), (40.0, 1.0), (60.0, 2.0),
                                           (95.0, 3.0), (230.0, 5.0), (250.0, 6.0), (500.0, 12.0), (900.0, 20.0)])
def test_a_young_study_fills_the_axis_from_its_start(age: float, step: float) -> None:
    """Younger than the columns hold at the older form's step: every column linear from the oldest on, at the
    finest step of the ladder that holds now; what has happened fills at least half of the columns."""
    columns, now = 47, T0 + 0.1
    axis = TimeAxis.build(columns, now, oldest=now - age)
    assert axis.old_columns == 0
    assert axis.step == step
    assert axis.column(now - age) == 0 and axis.start(0) <= now - age < axis.start(0) + step
    here = axis.column(now)
    assert here == math.floor(now / step) - math.floor((now - age) / step) <= columns - 1
    if age >= 8.0:
        assert here + 1 >= columns / 2, "what has happened takes at least half of the graph"
    assert axis.column(now + 30) == here, "later than now is now"
    row = axis.labels()
    assert len(row) == columns and row.index("now") in (here - 2, here)
    if here >= 8:  # room for what the axis reaches back, left of now
        assert row.startswith("-" + age_text((axis.now_bin + 1) * step - axis.start(0)))
    mid = (axis.now_bin + 0.5) * step  # labels are placed from the middle of now's column
    for label, back in (("-1m", 60), ("-2m", 120), ("-5m", 300)):
        if label in row:
            assert row.index(label) == axis.column(mid - back), (label, row)


def test_a_young_axis_grows_in_place_and_moves_to_a_coarser_step_at_the_right_edge() -> None:
    """Nothing shifts while a young axis grows: a moment keeps its column until the step changes."""
    columns, born = 47, T0 + 0.1
    first = TimeAxis.build(columns, born + 10, oldest=born)
    later = TimeAxis.build(columns, born + 11, oldest=born)
    assert first.step == later.step and first.column(born + 5) == later.column(born + 5)
    assert later.column(born + 11) > first.column(born + 10)
    assert first.key != later.key, "now moved by columns: the lanes running to now are drawn again"
    grown = TimeAxis.build(columns, born + first.step * columns + 1, oldest=born)
    assert grown.step > first.step and grown.column(born) == 0


def test_past_the_young_form_now_is_the_right_edge() -> None:
    axis = TimeAxis.build(47, T0, oldest=T0 - 1000)
    assert axis.column(T0) == 46 and axis.now_bin == axis.last_bin


def test_older_than_that_the_older_part_is_compressed() -> None:
    axis = TimeAxis.build(47, T0, oldest=T0 - 1000)
    assert axis.old_columns == 47 // 4
    assert axis.step == 20.0


async def test_a_study_a_minute_old_fills_the_graph() -> None:
    """A minute of samples at full load takes a good part of the graph's width, not its last columns."""
    clock = Clock(T0)
    timeline = Timeline(clock)
    for k in range(25):
        timeline.add_load(T0 - 60 + 2.5 * k, 100.0, 64 * MIB)
    async with TimelineApp(timeline).run_test(size=(53, 12)) as pilot:
        timeline.tick()
        await pilot.pause()
        top = painted(timeline)[3][GUTTER:]
        assert top.count("█") >= 47 * 0.25, top


@pytest.mark.parametrize("columns", [24, 45, 46, 47, 144])
def test_equal_keys_give_equal_axis_rows(columns: int) -> None:
    """No label moves by a cell in the middle of a step: that would repaint a timeline whose picture is the same."""
    first = TimeAxis.build(columns, 1_764_000_000.0, oldest=1_764_000_000.0 - 1900)
    start = first.now_bin * first.step
    rows = set()
    for k in range(100):
        axis = TimeAxis.build(columns, start + first.step * k / 100, oldest=1_764_000_000.0 - 1900)
        assert axis.key == first.key
        rows.add(axis.labels())
    assert len(rows) == 1, rows


@pytest.mark.parametrize(
    ("columns", "expected"), [(24, ["-10m", "-5m"]), (47, ["-10m", "-5m", "-2m"]), (144, ["-10m", "-5m", "-1m"])]
)
def test_axis_labels(columns: int, expected: list[str]) -> None:
    now = mid_bin_now(columns)
    axis = TimeAxis.build(columns, now, oldest=now - 3600)
    row = axis.labels()
    assert len(row) == columns
    assert row.endswith("now")
    reach = axis.step * axis.linear_columns + axis.old_span  # the ladder's hour and the linear part
    assert row.startswith("-" + age_text(reach))
    assert row.index("-10m") == axis.column(now - LINEAR_SPAN) >= axis.old_columns
    assert set(row[5 : axis.old_columns]) == {"┄"}  # the compressed part says so
    assert set(row[axis.old_columns : -3]) - {"-", "0", "1", "2", "5", "m"} == {"─"}
    for label in expected:
        assert label in row
    for label in ("-5m", "-2m", "-1m"):
        if label in row:
            assert row.index(label) == axis.column(now - int(label[1]) * 60)
    assert "-1m" not in row or "-2m" not in row


# --- the load ----------------------------------------------------------------------


def test_scale_labels_fit_the_gutter() -> None:
    assert [percent_text(v) for v in (0, 100, 9600, 12_000, 998_000, 1e300)] == [
        "0%",
        "100%",
        "9600%",
        "12k%",
        "998k%",
        "huge",
    ]
    assert [bytes_text(v) for v in (64 * MIB, 1024 * MIB, 2**40, 2**70)] == ["64M", "1G", "1T", "huge"]


def test_cpu_scale_grows_past_one_core() -> None:
    assert [cpu_top(v) for v in (0, 40, 100)] == [100, 100, 100]
    assert [cpu_top(v) for v in (100.5, 250, 301, 401, 601, 900, 1300, 1700)] == [
        200,
        300,
        400,
        600,
        800,
        1200,
        1600,
        2400,
    ]
    assert memory_top(0) == 64 * MIB
    assert memory_top(300 * MIB) == 512 * MIB


def test_the_drawn_scale_follows_the_peak() -> None:
    clock = Clock(T0 + 600)
    timeline = Timeline(clock)
    for i in range(0, 300, 5):
        timeline.add_load(T0 + 300 + i, 60.0, 200 * MIB)
    assert lines(timeline, 53)[0].startswith(" 100%┤")
    assert lines(timeline, 53)[4].startswith(" 256M┤")
    timeline.add_load(T0 + 599, 150.0, 900 * MIB)
    out = lines(timeline, 53)
    assert out[0].startswith(" 200%┤")
    assert out[2].startswith(" 100%┤")
    assert out[3].startswith("    0┤")
    assert out[4].startswith("   1G┤")


def test_load_history_is_bounded_and_keeps_a_spike() -> None:
    history = LoadHistory()
    week = 7 * 86400
    for i in range(0, week, 10):
        history.add(T0 + i, 500.0 if i == 86400 else 20.0, 100 * MIB)
    assert len(history) <= load_history.RECENT_CAP + load_history.BUCKETS
    spans = list(history.spans())
    assert spans[0].start == pytest.approx(T0)
    assert max(s.cpu for s in spans) == 500.0
    spike = next(s for s in spans if s.cpu == 500.0)
    assert spike.start <= T0 + 86400 <= spike.end
    starts = [s.start for s in spans]
    assert starts == sorted(starts)


def test_a_sample_stands_for_the_gap_before_it_up_to_the_hold() -> None:
    history = LoadHistory()
    history.add(T0, 10.0, None)
    history.add(T0 + 4, 20.0, None)
    history.add(T0 + 60, 30.0, None)  # after a stop: it does not bridge the gap
    spans = list(history.spans())
    assert [(s.start, s.end) for s in spans] == [(T0, T0), (T0, T0 + 4), (T0 + 60 - load_history.HOLD, T0 + 60)]
    # The newest sample goes on to now, for at most the hold.
    assert list(history.spans(now=T0 + 63))[-1].end == T0 + 63
    assert list(history.spans(now=T0 + 600))[-1].end == T0 + 60 + load_history.HOLD


# --- the lanes ---------------------------------------------------------------------


def test_a_bar_runs_from_start_to_result() -> None:
    clock = Clock(mid_bin_now(47))
    now = clock.now
    timeline = Timeline(clock)
    timeline.add_records(run_records("d1", "diagnosis", now - 400, now - 390, now - 200))
    axis = TimeAxis.build(47, now, timeline._oldest())
    row = lane(timeline, 53, "d1")
    start, end = axis.column(now - 390), axis.column(now - 200)
    assert start < end
    assert row[start : end + 1] == GLYPHS[RunState.OK] * (end - start + 1)
    assert row[:start].strip() == ""
    assert row[end + 1 :].strip() == ""


def test_a_run_without_result_extends_to_now() -> None:
    clock = Clock(mid_bin_now(47))
    now = clock.now
    timeline = Timeline(clock)
    timeline.add_records(run_records("a1", "ablation", now - 300, now - 299, None))
    axis = TimeAxis.build(47, now, timeline._oldest())
    row = lane(timeline, 53, "a1")
    start, here = axis.column(now - 299), axis.column(now)
    assert row[start : here + 1] == GLYPHS[RunState.RUNNING] * (here + 1 - start) and not row[here + 1 :].strip()
    # A minute later it reaches now still.
    clock.now += 60
    later = TimeAxis.build(47, clock.now, timeline._oldest())
    assert lane(timeline, 53, "a1")[: later.column(clock.now) + 1].endswith(GLYPHS[RunState.RUNNING] * 5)


def test_failed_runs_and_runs_not_started() -> None:
    clock = Clock(mid_bin_now(47))
    now = clock.now
    timeline = Timeline(clock)
    timeline.add_records(run_records("f1", "diagnosis", now - 500, now - 490, now - 300, code=2))
    timeline.add_records([rec("runPlanned", now - 100, run="p1", purpose="ablation")])
    timeline.add_records(run_records("c1", "ablation", now - 50, None, None))
    axis = TimeAxis.build(47, now, timeline._oldest())
    failed = lane(timeline, 53, "f1")
    assert failed[axis.column(now - 300)] == FAILED_END
    assert failed[axis.column(now - 490) : axis.column(now - 300)].strip("━") == ""
    assert lane(timeline, 53, "p1").strip() == GLYPHS[RunState.PLANNED]
    assert lane(timeline, 53, "p1").index(GLYPHS[RunState.PLANNED]) == axis.column(now - 100)
    assert lane(timeline, 53, "c1").strip() == GLYPHS[RunState.CHARGED]


def test_purpose_and_state_choose_the_style() -> None:
    clock = Clock(mid_bin_now(47))
    now = clock.now
    timeline = Timeline(clock)
    timeline.add_records(run_records("d1", "diagnosis", now - 400, now - 390, None))
    timeline.add_records(run_records("x1", "tuning", now - 400, now - 390, now - 100, code=1))
    rows = timeline.rows(53, 8, now)
    keys = {row[0][0] + row[1][0]: {key for glyph, key in row[GUTTER:] if glyph != " "} for row in rows[6:]}
    assert keys["d1"] == {("diagnosis", None)}
    assert keys["x1"] == {("other", None), ("failed", None)}  # an unknown purpose: neutral


def test_more_runs_than_rows_shows_running_ones_then_the_latest() -> None:
    clock = Clock(T0 + 3000)
    timeline = Timeline(clock)
    for i in range(10):
        timeline.add_records(run_records(f"r{i}", "ablation", T0 + 100 * i, T0 + 100 * i + 1, T0 + 100 * i + 50))
    timeline.add_records(run_records("long", "diagnosis", T0 + 10, T0 + 20, None))
    out = lines(timeline, 53, height=6 + 4)
    assert [line[: GUTTER - 1].strip() for line in out[6:]] == ["long", "r9", "r8", "r7"]


def test_runs_kept_are_bounded_and_running_ones_stay() -> None:
    lanes = RunLanes()
    lanes.add(run_records("keep", "diagnosis", T0, T0 + 1, None), T0 + 5000)
    for i in range(5000):
        lanes.add(run_records(f"r{i}", "ablation", T0 + i, T0 + i, T0 + i + 0.5), T0 + 5000)
    assert len(lanes.runs) <= MAX_RUNS + MAX_RUNS // 4
    assert "keep" in lanes.runs
    assert "r4999" in lanes.runs
    assert "r0" not in lanes.runs


def test_purposes_given_after_a_catch_up() -> None:
    timeline = Timeline(Clock(T0 + 100))
    timeline.add_records([rec("runStarted", T0 + 10, run="d7", container="c")])
    assert timeline.lanes.runs["d7"].purpose == "other"
    timeline.set_purposes([("d7", "diagnosis"), ("gone", "ablation")])
    assert timeline.lanes.runs["d7"].purpose == "diagnosis"


# --- K and R -------------------------------------------------------------------------


def test_kill_and_resume_columns_cross_the_graph_and_the_lanes() -> None:
    clock = Clock(mid_bin_now(47))
    now = clock.now
    timeline = Timeline(clock)
    for i in range(0, 600, 5):
        timeline.add_load(now - 600 + i, 30.0, 100 * MIB)
    timeline.add_records(run_records("d2", "diagnosis", now - 400, now - 399, now - 100))
    timeline.add_records(run_records("d1", "diagnosis", now - 590, now - 580, now - 500))
    timeline.mark("kill", now - 300)
    timeline.mark("resume", now - 200)
    axis = TimeAxis.build(47, now, timeline._oldest())
    k, r = axis.column(now - 300), axis.column(now - 200)
    out = [plot(line) for line in lines(timeline, 53)]
    assert out[0][k] == "K" and out[0][r] == "R"
    for row in out[1:5]:
        assert row[k] in "│▁▂▃▄▅▆▇█" and row[r] in "│▁▂▃▄▅▆▇█"
    assert out[1][k] == "│"  # a blank cell of the graph shows the line
    d2, d1 = lane(timeline, 53, "d2"), lane(timeline, 53, "d1")
    assert d2[k] == "K" and d2[r] == "R"  # on the bar
    assert d1[k] == "│" and d1[r] == "│"  # across a lane with no bar there
    assert [c for c, x in enumerate(out[0]) if x in "KR"] == [k, r]


def test_a_kill_and_a_resume_in_one_column_both_show() -> None:
    clock = Clock(mid_bin_now(47))
    now = clock.now
    timeline = Timeline(clock)
    timeline.add_load(now - 3600, 0.0, MIB)  # an hour old: now is the right edge
    timeline.mark("kill", now - 100)
    timeline.mark("resume", now - 99)
    top = plot(lines(timeline, 53)[0])
    k = TimeAxis.build(47, now, timeline._oldest()).column(now - 100)
    assert top[k : k + 2] == "KR"
    # At the right edge the kill steps left instead.
    timeline.mark("kill", now - 1)
    timeline.mark("resume", now)
    assert plot(lines(timeline, 53)[0]).endswith("KR")
    with pytest.raises(ValueError, match="mark kind"):
        timeline.mark("pause", now)  # type: ignore[arg-type]


def test_a_crash_and_a_stop_are_marked_and_every_mark_says_what_it_was() -> None:
    """An end the console did not make is C (crash) or S (stop); the tooltip names each mark, a kill's point."""
    clock = Clock(mid_bin_now(47))
    now = clock.now
    timeline = Timeline(clock)
    timeline.mark("kill", now - 300, "kill 1 at after:charge/diagnosis")
    timeline.mark("resume", now - 290, "kill 1 resumed")
    timeline.mark("crash", now - 200, "kill 2: a crash, judged as a kill")
    timeline.mark("stop", now - 100)
    axis = TimeAxis.build(47, now, timeline._oldest())
    top = plot(lines(timeline, 53)[0])
    assert top[axis.column(now - 200)] == "C" and top[axis.column(now - 100)] == "S"
    said = str(timeline.tooltip).splitlines()
    assert [line.split(" ", 2)[0] for line in said] == ["K", "R", "C", "S"]
    assert said[0].endswith(" kill 1 at after:charge/diagnosis") and said[2].endswith("a crash, judged as a kill")
    assert len(said[3].split(" ")) == 2  # a letter and a time, nothing more
    for n in range(20):
        timeline.mark("kill", now - 50 + n, f"kill {n + 3}")
    assert len(str(timeline.tooltip).splitlines()) == 12  # the last marks, bounded


# --- hostile input ---------------------------------------------------------------------

HOSTILE_RECORDS: list[Record] = [
    Record(1, "2025-11-24T16:00:01.000Z", "runPlanned", {"run": 7, "purpose": "diagnosis"}, 1, 0),
    Record(2, "2025-11-24T16:00:01.000Z", "runPlanned", {"run": "", "purpose": "diagnosis"}, 2, 0),
    Record(3, "2025-11-24T16:00:01.000Z", "runPlanned", {"run": ["d1"], "purpose": None}, 3, 0),
    Record(4, "2025-11-24T16:00:01.000Z", "runStarted", None, 4, 0),  # type: ignore[arg-type]
    Record(5, "2025-11-24T16:00:01.000Z", "runStarted", [1, 2], 5, 0),  # type: ignore[arg-type]
    Record(6, 12345, "runStarted", {"run": "d1"}, 6, 0),  # type: ignore[arg-type]
    Record(7, "yesterday", "runStarted", {"run": "d1"}, 7, 0),
    Record(8, "9999-12-31T23:59:59.999Z", "runStarted", {"run": "d1"}, 8, 0),
    Record(9, "0001-01-01T00:00:00Z", "runResult", {"run": "d1", "exitCode": 0}, 9, 0),
    Record(10, "2025-13-45T99:99:99.000Z", "runResult", {"run": "d1"}, 10, 0),
    Record(11, "2025-11-24T16:00:01.000+999999:00", "charge", {"run": "d1"}, 11, 0),
    Record(12, "2025-11-24T16:00:01.000-0", "charge", {"run": "d1"}, 12, 0),
    Record(13, "x" * 100_000, "charge", {"run": "d1"}, 13, 0),
    Record(14, "", "charge", {"run": "d1"}, 14, 0),
    Record(15, "2025-11-24T16:00:02.000Z", "runPlanned", {"run": "h" * 10_000, "purpose": {"a": 1}}, 15, 0),
    Record(16, "2025-11-24T16:00:03.000Z", "runResult", {"run": "h" * 10_000, "exitCode": "0"}, 16, 0),
    Record(17, "2025-11-24T16:00:03.000Z", "runResult", {"run": "orphan", "exitCode": True}, 17, 0),
    Record(18, "2025-11-24T16:00:03.000Z", None, {"run": "d1"}, 18, 0),  # type: ignore[arg-type]
    Record(19, "2025-11-24T16:00:03.000Z", "mystery", {"run": "d1"}, 19, 0),
    Record(20, "2025-11-24T16:00:04.000Z", "runStarted", {"run": "ok1", "container": 5}, 20, 0),
]


async def test_hostile_input_does_not_crash_the_widget() -> None:
    clock = Clock(T0 + 60)
    timeline = Timeline(clock)
    timeline.add_records(HOSTILE_RECORDS)
    bad_numbers: list[Any] = [math.nan, math.inf, -math.inf, -5, "12", None, True, 1e300, -1e300, [1]]
    for value in bad_numbers:
        timeline.add_load(value, 10.0, 1)
        timeline.add_load(T0 + 1, value, 1)
        timeline.add_load(T0 + 2, 10.0, value)
        timeline.mark("kill", value)
        timeline.highlight("ok1", value)
    timeline.add_load(T0 + 3, 1e300, 10**30)  # absurd but finite: drawn at the top of a huge scale
    timeline.set_purposes([("ok1", 5), (None, "diagnosis")])  # type: ignore[list-item]
    # Only what can be read was taken: the started run, the orphan result, the long id cut short.
    assert set(timeline.lanes.runs) == {"ok1", "orphan", "h" * run_lanes.RUN_ID_CHARS}
    assert timeline.lanes.runs["orphan"].state is RunState.FAILED  # exitCode True is not 0
    assert lane(timeline, 53, "orph…").strip() == FAILED_END  # a result with no start: one cell
    for width in range(161):
        text = timeline.text(width)
        assert all(len(line) == width for line in text.split("\n"))
    assert "ok1" in timeline.text(53)
    # Highlights and marks are bounded too.
    for i in range(100):
        timeline.highlight(f"run{i}", T0 + 1000 + i)
        timeline.mark("resume", T0 + 10 + i * 0.1)
    assert len(timeline.highlights) == 16 and "run99" in timeline.highlights
    assert len(timeline.marks) == 64

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield timeline

    async with Host().run_test(size=(53, 14)) as pilot:
        timeline.tick()
        await pilot.pause()
        strips = timeline.render_lines(Region(0, 0, 53, 12))
        assert any("ok1" in strip.text for strip in strips)


# --- the widget in an app ----------------------------------------------------------------


class CountingTimeline(Timeline):
    """Counts the frames it builds and the repaints it asks for."""

    builds = 0
    refreshes = 0

    def _rows_and_levels(self, *args: Any) -> Any:
        self.builds += 1
        return super()._rows_and_levels(*args)

    def refresh(self, *args: Any, **kwargs: Any) -> Any:
        self.refreshes += 1
        return super().refresh(*args, **kwargs)


class TimelineApp(App[None]):
    CSS = "Timeline { height: 12; }"

    def __init__(self, timeline: Timeline) -> None:
        super().__init__()
        self.timeline = timeline

    def compose(self) -> ComposeResult:
        yield self.timeline


def painted(timeline: Timeline) -> list[str]:
    return [strip.text for strip in timeline.render_lines(Region(0, 0, timeline.size.width, timeline.size.height))]


async def test_samples_added_show_on_the_graph() -> None:
    clock = Clock(mid_bin_now(47))
    now = clock.now
    timeline = Timeline(clock)
    async with TimelineApp(timeline).run_test(size=(53, 12)) as pilot:
        for i in range(0, 300, 5):
            timeline.add_load(now - 600 + i, 5.0, 50 * MIB)  # low: five minutes at 5 %
            timeline.add_load(now - 300 + i, 95.0, 50 * MIB)  # high: the last five at 95 %
        timeline.tick()
        await pilot.pause()
        screen = painted(timeline)
        axis = TimeAxis.build(47, now, timeline._oldest())
        low = [GUTTER + c for c in range(axis.column(now - 590), axis.column(now - 320))]
        high = [GUTTER + c for c in range(axis.column(now - 290), axis.column(now) + 1)]
        assert low and high
        assert all(screen[0][c] == " " and screen[3][c] == "▂" for c in low), screen  # 5 % of 32 levels: one
        assert all(screen[0][c] == "▆" and screen[3][c] == "█" for c in high), screen  # 95 %: 30 of 32
        # The cells are drawn in the CPU's colour.
        strip = timeline.render_lines(Region(0, 3, 53, 1))[0]
        colours = {seg.style.color for seg in strip if "▂" in seg.text or "█" in seg.text}
        cpu_style: Style = timeline.get_component_rich_style("timeline--cpu")
        assert colours == {cpu_style.color}


async def test_tick_redraws_only_when_the_picture_changes() -> None:
    clock = Clock(mid_bin_now(47))
    timeline = CountingTimeline(clock)
    timeline.add_load(clock.now - 3600, 0.0, MIB)  # an hour old: the axis keeps its shape as samples come
    async with TimelineApp(timeline).run_test(size=(53, 12)) as pilot:
        timeline.tick()
        await pilot.pause()
        builds, refreshes = timeline.builds, timeline.refreshes
        assert builds >= 1
        step = TimeAxis.build(47, clock.now, clock.now - 3600).step

        async def tick(*loads: tuple[float, float], later: float = 0.0) -> tuple[int, int]:
            """Move the clock, give the samples (time, cpu), tick: the builds and repaints since the start."""
            clock.now += later
            for at, cpu in loads:
                timeline.add_load(at, cpu, MIB)
            timeline.tick()
            await pilot.pause()
            return timeline.builds - builds, timeline.refreshes - refreshes

        for _ in range(5):  # idle, within one column's time: nothing to do
            assert await tick(later=step / 20) == (0, 0)
        timeline.add_load(clock.now, 50.0, MIB)  # drawn on the next tick, once
        await pilot.pause()
        assert timeline.builds == builds
        timeline.tick()
        assert await tick() == (1, 1)
        assert timeline._strips is not None
        axis_strip, empty_lane = timeline._strips[GRAPH_ROWS + 1], timeline._strips[-1]
        assert await tick(later=step) == (2, 2)  # the axis moved by a column
        # Only the rows that changed are drawn again: the axis row and an empty lane are kept.
        assert timeline._strips[GRAPH_ROWS + 1] is axis_strip and timeline._strips[-1] is empty_lane
        assert await tick((clock.now - step / 4, 90.0)) == (3, 3)
        # A sample below its column's peak changes no level: the rows are not even built.
        assert await tick((clock.now, 88.0)) == (3, 3)
        # Nor does an idle controller's fraction of a percent in an empty column (no block flickers).
        assert await tick((clock.now + step, 0.0), later=step) == (4, 4)
        assert await tick((clock.now + 1.0, MIN_SHOWN_CPU / 2), later=1.0) == (4, 4)
        # A sample that changes a level is built and drawn.
        assert await tick((clock.now, 40.0)) == (5, 5)


async def test_a_highlight_draws_the_eye_until_its_time() -> None:
    clock = Clock(mid_bin_now(47))
    now = clock.now
    timeline = CountingTimeline(clock)
    timeline.add_records(run_records("d3", "diagnosis", now - 30, now - 20, None))
    timeline.add_records(run_records("a3", "ablation", now - 300, now - 290, now - 100))
    async with TimelineApp(timeline).run_test(size=(53, 12)) as pilot:
        timeline.highlight("d3", now + 5)
        timeline.tick()
        await pilot.pause()
        lit = timeline.get_component_rich_style("timeline--highlight").bgcolor

        def backgrounds(run: str) -> set[Any]:
            for y, line in enumerate(painted(timeline)):
                if line.startswith(run):
                    return {seg.style.bgcolor for seg in timeline.render_lines(Region(0, y, 53, 1))[0]}
            raise AssertionError(run)

        assert lit in backgrounds("d3")
        assert lit not in backgrounds("a3")
        builds = timeline.builds
        clock.now = now + 6  # the highlight is over: one redraw takes it away
        timeline.tick()
        await pilot.pause()
        assert timeline.builds == builds + 1
        assert lit not in backgrounds("d3")


async def test_what_is_painted_is_what_the_samples_give_whatever_the_order_of_ticks_and_repaints() -> None:
    """Ticks (which skip samples that change no level), repaints between ticks (which draw what came
    since) and samples interleaved at random: the picture is always the one the samples give.  A
    repaint that drew new samples without keeping their levels once let a later tick compare with
    older levels and keep a stale picture (a snapshot differed a column now and then)."""
    rng = random.Random(20261201)
    clock = Clock(T0)
    timeline = Timeline(clock)
    async with TimelineApp(timeline).run_test(size=(53, 12)) as pilot:
        for case in range(40):
            await timeline.remove()
            timeline = Timeline(clock)
            await pilot.app.mount(timeline)
            timeline.tick()
            at = T0 - rng.uniform(20, 200)
            for _ in range(rng.randint(3, 40)):
                at += rng.uniform(0.5, 6.0)
                timeline.add_load(min(at, T0), rng.choice([0.0, 0.5, 30.0, 90.0, 150.0]), rng.randint(1, 300) * MIB)
                action = rng.random()
                if action < 0.3:
                    timeline.tick()
                elif action < 0.5:
                    timeline.render_line(rng.randrange(12))  # a repaint between ticks
            timeline.tick()
            await pilot.pause()
            assert painted(timeline) == timeline.text(53, 12).split("\n"), f"case {case}"
