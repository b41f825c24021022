"""The overview: a row per study when more run than fit side by side; its sort, filter, pause, drill-down and back,
the row's alert, the verdicts at the end; the summary a row is folded from and the feed a pane is made from.

The console is fed engine events here (no engine): what a row shows follows from the events alone.  The tests of
the overview over real studies are in ``test_overview_live.py``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.strip import Strip

from studymon.engine.contract.ledger import Record
from studymon.engine.contract.spec import StudySpec
from studymon.engine.events import (
    ArmChanged,
    ContainerChanged,
    ControllerStarted,
    KillStep,
    Problem,
    Progress,
    RecordsSeen,
    Sample,
    State,
    StateChanged,
    StudyEvent,
    StudyLoad,
    Verdicts,
)
from studymon.engine.io.clock import rfc3339_ms
from studymon.engine.judge.report import Judgement
from studymon.engine.judge.table import MANY_STUDIES, checks_report
from studymon.engine.judge.verdict import Check
from studymon.engine.live.finish import SessionResult
from studymon.tui.app import Planned, StudymonApp
from studymon.tui.feed import StudyFeed
from studymon.tui.screens import SIDE_BY_SIDE, OpenedStudyScreen
from studymon.widgets.overview import OverviewRows, bar
from studymon.widgets.study_pane import StudyPane
from studymon.widgets.summary import QUERY_FIELDS, BadQuery, Query, StudySummary, age_text, sort_key

SIZE = (160, 48)
NOW = 1_800_000_000.0


def rec(seq: int, kind: str, at: float = NOW, **content: Any) -> Record:
    return Record(seq, rfc3339_ms(at), kind, content, seq, seq * 100)


def plan(seq: int, run: str, purpose: str = "diagnosis") -> Record:
    return rec(seq, "runPlanned", run=run, purpose=purpose, object="c1", round=1, experiments=["e1"])


# --- a row's facts ----------------------------------------------------------------


def test_a_row_folds_progress_state_arming_kills_and_verdicts() -> None:
    s = StudySummary("a")
    assert s.fold(Progress("a", 2, "diagnosis", 60.0, 100.0, (("d2", None), ("a2", None))), NOW)
    assert (s.round, s.stage, s.balance, s.budget, s.in_flight) == (2, "diagnosis", 60.0, 100.0, 2)
    assert not s.fold(Progress("a", 2, "diagnosis", 60.0, 100.0, (("d2", None), ("a2", None))), NOW), "no change"
    assert s.fold(StateChanged("a", State.KILLED, "waiting for resume"), NOW) and s.state_words == "killed"
    assert s.fold(ArmChanged("a", True, "after:charge", ("container:die",)), NOW) and s.armed == "after:charge +1"
    assert s.fold(ArmChanged("a", False), NOW) and s.armed == ""
    assert s.fold(KillStep("a", 1, "resumed"), NOW) and s.kill == "kill 1 resumed"
    assert s.verdict == "none"
    checks = (Check("x", True, ""), Check("y", False, ""), Check("z", None, ""), Check("w", True, ""))
    assert s.fold(Verdicts("a", checks, False, True), NOW)
    assert (s.checks, s.verdict, s.finished) == ((2, 1, 1), "fail", True)


def test_a_row_knows_its_last_record_and_lights_up_on_a_fresh_diagnosis_start() -> None:
    s = StudySummary("a")
    assert s.age(NOW) is None and age_text(s.age(NOW)) == "-"
    s.fold(RecordsSeen("a", (rec(1, "studyOpen", NOW - 30, budget=10), plan(2, "d1"))), NOW)
    assert s.records == 2 and s.age(NOW + 5) == 5.0 and not s.alert(NOW)
    # A diagnosis start seen at once lights the row for a few seconds; its result puts it out.
    s.fold(RecordsSeen("a", (rec(3, "runStarted", NOW, run="d1"),)), NOW)
    assert s.alert(NOW + 1) and s.alert_run == "d1" and not s.alert(NOW + 6)
    s.fold(RecordsSeen("a", (rec(4, "runResult", NOW + 1, run="d1", exitCode=0, outputs={}),)), NOW + 1)
    assert not s.alert(NOW + 1.5)
    # One seen long after it was written (a catch-up) is history; an ablation start never lights up.
    old = StudySummary("b")
    old.fold(RecordsSeen("b", (plan(1, "d1"), rec(2, "runStarted", NOW - 60, run="d1"))), NOW)
    old.fold(RecordsSeen("b", (plan(3, "a1", "ablation"), rec(4, "runStarted", NOW, run="a1"))), NOW)
    assert not old.alert(NOW)
    # The purposes sent with a catch-up count as plans; the records skipped count as records.
    caught = StudySummary("c")
    caught.fold(RecordsSeen("c", (rec(900, "runStarted", NOW, run="d7"),), skipped=899, purposes=(("d7", "diagnosis"),)), NOW)
    assert caught.records == 900 and caught.alert(NOW)
    # A study that is no longer running is not to be killed now: the light goes out.
    caught.fold(StateChanged("c", State.KILLED), NOW)
    assert not caught.alert(NOW)


def test_a_row_that_ended_unfinished_is_unknown_unless_a_check_failed() -> None:
    s = StudySummary("a")
    s.end(False, "the controller crashed")
    assert (s.verdict, s.problem, s.ended) == ("unknown", "the controller crashed", True)
    f = StudySummary("b")
    f.fold(Verdicts("b", (Check("x", False, ""),), False, False), NOW)
    f.end(False)
    assert f.verdict == "fail"


@pytest.mark.parametrize("at, age", [("2026-12-04T02:49:21.5Z", 8.5), ("2026-12-04T02:49:21.500000001+00:00", 8.5),
                                     ("2026-12-04T03:49:21.5+01:00", 8.5), ("2026-02-30T00:00:00Z", 0.0),
                                     ("yesterday", 0.0), (5, 0.0), (None, 0.0)])
def test_a_record_s_age_is_from_its_own_time_in_any_offset_else_from_when_it_was_seen(at: Any, age: float) -> None:
    now = 1796352561.5 + 8.5  # 2026-12-04T02:49:30Z
    s = StudySummary("a")
    s.fold(RecordsSeen("a", (Record(1, at, "studyOpen", {}, 1, 0),)), now)
    assert s.age(now) == pytest.approx(age, abs=1e-6)


@pytest.mark.parametrize("seconds, text", [(None, "-"), (0.4, "0s"), (9.9, "9s"), (10, "10s"), (59.9, "50s"),
                                           (60, "1m"), (3599, "59m"),
                                           (3600, "1h"), (86400 * 3 + 5, "3d")])
def test_ages_are_written_as_htop_and_k9s_write_them(seconds: float | None, text: str) -> None:
    assert age_text(seconds) == text


def _rows() -> list[StudySummary]:
    a = StudySummary("alpha", order=0, state=State.RUNNING, last_record=NOW - 5)
    b = StudySummary("beta", order=1, state=State.CRASHED, last_record=NOW - 50, checks=(3, 0, 1), ok=None)
    c = StudySummary("gamma", order=2, state=State.FINISHED_OK, checks=(20, 0, 0), ok=True)
    d = StudySummary("delta", order=3, state=State.FINISHED_FAIL, last_record=NOW - 1, checks=(18, 2, 0), ok=False)
    return [a, b, c, d]


@pytest.mark.parametrize("key, order", [
    ("order", ["alpha", "beta", "gamma", "delta"]),
    ("id", ["alpha", "beta", "delta", "gamma"]),
    ("state", ["beta", "delta", "alpha", "gamma"]),  # what needs the operator first
    ("verdict", ["delta", "beta", "alpha", "gamma"]),  # failures first, then unknown, none, ok
    ("age", ["gamma", "beta", "alpha", "delta"]),  # the quietest first; no record at all is the quietest
])
def test_the_sort_keys(key: str, order: list[str]) -> None:
    assert [s.id for s in sorted(_rows(), key=sort_key(key, NOW))] == order


def test_an_unknown_sort_key_is_refused() -> None:
    with pytest.raises(ValueError, match="no sort key 'size'"):
        sort_key("size", NOW)


@pytest.mark.parametrize("text, kept", [
    ("", ["alpha", "beta", "gamma", "delta"]),
    ("state=running", ["alpha"]),
    ("state=finished", ["gamma", "delta"]),  # a state is matched by its start: both finished states
    ("state!=finished", ["alpha", "beta"]),
    ("verdict!=ok", ["alpha", "beta", "delta"]),
    ("verdict=fail", ["delta"]),
    ("verdict=none", ["alpha"]),
    ("ta", ["beta", "delta"]),  # plain text: in the id
    ("TA state=crashed", ["beta"]),  # every term holds; any case
    ("VERDICT=FAIL", ["delta"]),
])
def test_the_filter_query(text: str, kept: list[str]) -> None:
    q = Query.parse(text)
    assert [s.id for s in _rows() if q.holds(s)] == kept


def _rows_from_events() -> list[StudySummary]:
    """Rows whose every query field was set by the events the engine sends (not by hand)."""
    a, b, c = StudySummary("alpha", order=0), StudySummary("beta", order=1), StudySummary("gamma", order=2)
    assert a.fold(StateChanged("alpha", State.RUNNING), NOW)
    assert a.fold(Progress("alpha", 2, "diagnosis", 60.0, 100.0, (("d2", None), ("a2", None))), NOW)
    assert a.fold(ArmChanged("alpha", True, "after:charge"), NOW)
    assert b.fold(StateChanged("beta", State.KILLED, "waiting for resume"), NOW)
    assert b.fold(Progress("beta", 1, "proposal", 90.0, 100.0, ()), NOW)
    assert b.fold(KillStep("beta", 1, "resumed"), NOW)
    assert c.fold(StateChanged("gamma", State.FINISHED_OK), NOW)
    assert c.fold(Verdicts("gamma", (Check("x", True, ""),), True, True), NOW)
    return [a, b, c]


FIELD_CASES = [
    ("id=beta", ["beta"]),
    ("state=killed", ["beta"]),
    ("stage=diagnosis", ["alpha"]),
    ("stage=proposal", ["beta"]),
    ("round=2", ["alpha"]),
    ("round!=2", ["beta", "gamma"]),
    ("verdict=ok", ["gamma"]),
    ("armed=yes", ["alpha"]),  # the README's example
    ("armed=no", ["beta", "gamma"]),
    ("kill=kill", ["beta"]),  # matched by its start, as a state is
    ("kill!=kill", ["alpha", "gamma"]),
    ("flight=2", ["alpha"]),
    ("flight=0", ["beta", "gamma"]),
]


@pytest.mark.parametrize("text, kept", FIELD_CASES)
def test_every_query_field_reads_what_the_events_said(text: str, kept: list[str]) -> None:
    q = Query.parse(text)
    assert [s.id for s in _rows_from_events() if q.holds(s)] == kept


def test_every_query_field_has_a_case_that_keeps_some_rows_and_drops_others() -> None:
    """A field that matched nothing (or everything) would pass a case that expects nothing of it."""
    cased = {text.split("=")[0].rstrip("!") for text, _ in FIELD_CASES}
    assert cased == set(QUERY_FIELDS)
    everyone = {s.id for s in _rows_from_events()}
    for field in QUERY_FIELDS:
        kept = [set(k) for t, k in FIELD_CASES if t.split("=")[0].rstrip("!") == field]
        assert any(k and k != everyone for k in kept), field


def test_a_term_s_value_may_hold_an_equals_sign() -> None:
    q = Query.parse("id=a=b")
    assert [(t.field, t.value) for t in q.terms] == [("id", "a=b")]


@pytest.mark.parametrize("text, said", [
    ("colour=red", "no field 'colour' in 'colour=red': terms that must all hold"),
    ("state=", "'state=' has no value: write state=VALUE"),
    ("verdict!=", "'verdict!=' has no value: write verdict=VALUE"),
])
def test_a_filter_that_cannot_be_read_says_what_is_wrong_and_how_to_write_it(text: str, said: str) -> None:
    with pytest.raises(BadQuery) as err:
        Query.parse(text)
    assert str(err.value).startswith(said)


def test_a_budget_bar() -> None:
    assert bar(25, 100) == "██░░░░░░"
    assert bar(0, 100) == "░░░░░░░░" and bar(100, 100) == "████████" and bar(250, 100) == "████████"
    assert bar(None, 100) == bar(5, None) == bar(5, 0) == " " * 8


# --- the feed a pane is made from ---------------------------------------------------


def test_a_feed_keeps_the_last_records_and_says_how_many_it_let_go_of() -> None:
    feed = StudyFeed("a", records_kept=10)
    feed.add(RecordsSeen("a", tuple(rec(i, "note") for i in range(101, 105)), skipped=100,
                         purposes=(("d1", "diagnosis"),)))
    feed.add(RecordsSeen("a", (plan(105, "a9", "ablation"),)))
    for seq in range(106, 121, 3):
        feed.add(RecordsSeen("a", tuple(rec(s, "note") for s in range(seq, seq + 3))))
    assert feed.records <= 10
    first, *rest = list(feed.replay())
    assert isinstance(first, RecordsSeen) and not first.records
    kept = [r.seq for e in rest if isinstance(e, RecordsSeen) for r in e.records]
    assert kept == list(range(121 - len(kept), 121)), "the last records, in order, none twice"
    assert first.skipped == 120 - len(kept), "every record not kept is counted: sent, or never sent"
    # The plans let go of are still known: a pane made now knows each run's purpose.
    assert dict(first.purposes) == {"d1": "diagnosis", "a9": "ablation"}
    # A catch-up larger than the bound keeps its last records.
    big = StudyFeed("b", records_kept=5)
    big.add(RecordsSeen("b", tuple(rec(i, "note") for i in range(1, 21))))
    first, kept_event = list(big.replay())
    assert first.skipped == 15 and [r.seq for r in kept_event.records] == [16, 17, 18, 19, 20]


def test_a_feed_keeps_what_a_newer_event_replaces_once_and_the_rest_in_order() -> None:
    feed = StudyFeed("a")
    events: list[StudyEvent] = [
        ControllerStarted("a", 10, False, first_start=NOW - 100),
        StateChanged("a", State.RUNNING),
        Progress("a", 1, "diagnosis", 90.0, 100.0, ()),
        ContainerChanged("a", "x-a-d1", "create", None, "created"),
        ContainerChanged("a", "x-a-d2", "create", None, "created"),
        ContainerChanged("a", "x-a-d1", "start", None, "running"),
        KillStep("a", 1, "killed"),
        StateChanged("a", State.KILLED),
        ControllerStarted("a", 11, True),
        Progress("a", 1, "diagnosis", 80.0, 100.0, ()),
        StudyLoad("a", NOW, 5.0, 1000),
        StateChanged("a", State.RUNNING),
    ]
    for e in events:
        feed.add(e)
    got = list(feed.replay())
    assert got == [events[0], events[4], events[5], events[6], events[8], events[9], events[10], events[11]]


def test_a_feed_is_bounded_whatever_the_study_writes() -> None:
    feed = StudyFeed("a", records_kept=50)
    for i in range(5000):
        feed.add(RecordsSeen("a", (rec(i + 1, "note"),)))
        feed.add(StudyLoad("a", NOW + i, 1.0, 1))
        feed.add(ContainerChanged("a", f"x-a-r{i}", "create", None, "created"))
        feed.add(KillStep("a", i, "killed"))
    got = list(feed.replay())
    assert len(got) <= 1 + 50 + 512 + 1024 + 64


# --- the console: the overview fed with events ------------------------------------------


def console(ids: list[str], wall: list[float] | None = None) -> StudymonApp:
    clock = wall or [NOW]
    planned = [Planned(StudySpec(i, Path("/nowhere") / i), "smo") for i in ids]
    return StudymonApp(planned, wall_clock=lambda: clock[0], refresh_interval=0, start_engine=False,
                       save_dir=Path("/nowhere"))


IDS = [f"s{i:02d}" for i in range(12)]


def running(study: str, n: int, *, budget: float = 100.0) -> list[StudyEvent]:
    return [
        StateChanged(study, State.RUNNING),
        ControllerStarted(study, 1000 + n, False, first_start=NOW - 60),
        RecordsSeen(study, (rec(1, "studyOpen", NOW - 100, budget=budget), rec(2, "note", NOW - 60 - n))),
        Progress(study, 1, "diagnosis", budget - 5 * n, budget, (("d1", None),)),
    ]


def row_texts(app: StudymonApp) -> list[str]:
    overview = app.main.overview
    assert overview is not None
    return [overview.table.render_line(y).text for y in range(len(overview.rows()))]


def ids_shown(app: StudymonApp) -> list[str]:
    overview = app.main.overview
    assert overview is not None
    return [s.id for s in overview.rows()]


KEY_NAMES = {"=": "equals_sign", "!": "exclamation_mark", " ": "space"}


async def typed(pilot: Any, text: str) -> None:
    """Type ``text`` key by key, as a person does."""
    await pilot.press(*(KEY_NAMES.get(ch, ch) for ch in text))


async def test_more_studies_than_fit_are_a_row_each_and_no_pane_is_made() -> None:
    assert SIDE_BY_SIDE == 3
    app = console(IDS)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await pilot.pause()
        assert app.main.overview is not None and not app.main.panes
        assert not list(app.query(StudyPane)), "a study nobody opened has no pane"
        assert not app.supervisor.graphs_shown, "no graph on screen: samples at the quiet pace"
        texts = row_texts(app)
        assert [t[2:].split()[0] for t in texts] == IDS and texts[0].startswith("› ")
        third = texts[3]
        assert "running" in third and "r1" in third and "diagnosis" in third and "15/100" in third and "1m" in third
        header = app.main.overview.header.render().plain
        assert header.startswith("12 studies  ·  12 running  ·  in the command's order")
    few = console(["a", "b", "c"])
    async with few.run_test(size=SIZE):
        assert few.main.overview is None and list(few.main.panes) == ["a", "b", "c"]
        assert few.supervisor.graphs_shown, "panes side by side show their graphs"


async def test_sort_keys_and_again_reversed_and_the_selection_follows_its_study() -> None:
    app = console(IDS)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await app.feed([StateChanged("s07", State.CRASHED), StateChanged("s02", State.KILLED)])
        await pilot.press("down", "down")  # s02
        assert app.main.current_study() == "s02"
        await pilot.press("S")
        await pilot.pause()
        assert ids_shown(app)[:2] == ["s07", "s02"] and app.main.current_study() == "s02"
        await pilot.press("S")  # again: reversed
        await pilot.pause()
        assert ids_shown(app)[-2:] == ["s02", "s07"] and "by state, reversed" in app.main.overview.status_text()
        await pilot.press("N", "N")
        await pilot.pause()
        assert ids_shown(app) == sorted(IDS, reverse=True)
        await pilot.press("O")
        await pilot.pause()
        assert ids_shown(app) == IDS and app.main.current_study() == "s02"


async def test_the_filter_keeps_what_the_query_says_and_refuses_one_it_cannot_read() -> None:
    app = console(IDS)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await app.feed([StateChanged("s03", State.FINISHED_FAIL),
                        Verdicts("s03", (Check("chargedOnce", False, "twice"),), False, True)])
        overview = app.main.overview
        assert overview is not None
        await pilot.press("slash")
        await typed(pilot, "verdict=fail")
        await pilot.press("enter")
        await pilot.pause()
        assert ids_shown(app) == ["s03"] and app.main.current_study() == "s03"
        assert "1 of 12 studies" in overview.status_text() and "/verdict=fail" in overview.status_text()
        # One that cannot be read (pasted whole) keeps the rows as they were, and says why.
        await pilot.press("slash")
        overview.filter_input.value = "colour=red"
        await pilot.press("enter")
        await pilot.pause()
        assert ids_shown(app) == ["s03"] and overview.filter_input.has_class("-bad")
        assert "no field 'colour'" in str(overview.filter_input.tooltip)
        await pilot.press("escape")  # clears it
        await pilot.pause()
        assert ids_shown(app) == IDS and not overview.filter_input.display
        await pilot.press("slash", *"s1", "enter")
        await pilot.pause()
        assert ids_shown(app) == ["s10", "s11"]


async def test_a_filter_is_applied_again_as_rows_change_and_once_more_after_a_pause() -> None:
    """With ``state=running`` typed, a study that crashes leaves the list, one that resumes comes back; paused,
    the rows stay where they are (their new state shown) until the pause ends."""
    app = console(IDS)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await app.feed([StateChanged("s05", State.CRASHED)])
        await pilot.press("slash")
        await typed(pilot, "state=running")
        await pilot.press("enter")
        await pilot.pause()
        assert "s05" not in ids_shown(app) and len(ids_shown(app)) == 11
        await app.feed([StateChanged("s03", State.CRASHED)])
        await pilot.pause()
        assert "s03" not in ids_shown(app), "a row that no longer holds leaves at once"
        await app.feed([StateChanged("s05", State.RUNNING)])
        await pilot.pause()
        assert "s05" in ids_shown(app), "a row that holds again comes back"
        await pilot.press("Z")
        await pilot.pause()
        await app.feed([StateChanged("s07", State.CRASHED)])
        await pilot.pause()
        shown = ids_shown(app)
        assert "s07" in shown and "crashed" in row_texts(app)[shown.index("s07")], "paused: it stays, as it is now"
        await pilot.press("Z")
        await pilot.pause()
        assert "s07" not in ids_shown(app) and len(ids_shown(app)) == 10


async def test_pause_freezes_the_order_while_rows_go_on_changing() -> None:
    app = console(IDS)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await pilot.press("S", "Z")
        await pilot.pause()
        frozen = ids_shown(app)
        assert app.main.overview.paused and "PAUSED" in app.main.overview.status_text()
        await app.feed([StateChanged("s09", State.CRASHED)])
        await pilot.pause()
        assert ids_shown(app) == frozen, "paused: the row changes where it is"
        assert "crashed" in row_texts(app)[frozen.index("s09")]
        await pilot.press("Z")
        await pilot.pause()
        assert ids_shown(app)[0] == "s09" and not app.main.overview.paused


async def test_enter_opens_the_pane_with_what_it_missed_and_escape_comes_back() -> None:
    app = console(IDS)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await pilot.press("down", "down", "down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, OpenedStudyScreen) and app.screen.study == "s03"
        assert app.supervisor.graphs_shown, "the opened pane shows its graph: samples at its pace"
        pane = app.screen.pane
        await pilot.pause()
        assert [r.seq for r in pane.stream.store.records] == [1, 2]
        assert pane.header.state == State.RUNNING and pane.pid == 1003
        assert pane.progress is not None and pane.progress.balance == 85.0
        # Live events of the study reach its open pane; another's do not.
        await app.feed([RecordsSeen("s03", (rec(3, "charge", run="d1", amount=5, balance=80),)),
                        RecordsSeen("s04", (rec(3, "charge", run="d1", amount=5, balance=75),))])
        await pilot.pause()
        assert [r.seq for r in pane.stream.store.records] == [1, 2, 3]
        # Its keys work: the ledger's filter, and a study key asks the engine (none here: a notice).
        await pilot.press("slash", *"charge", "enter")
        await pilot.pause()
        assert pane.stream.filter_text == "charge"
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, OpenedStudyScreen)
        assert app.main.current_study() == "s03" and app.main.opened is None
        assert not list(app.query(StudyPane)), "the pane went with its screen"
        assert not app.supervisor.graphs_shown
        # Its row took the event it had while open.
        assert app.main.overview.summaries["s03"].records == 3


async def test_a_pane_opened_from_the_overview_shows_the_machine_line_the_console_shows() -> None:
    """The opened screen's machine line starts from the newest sample, and says "machine" once."""
    app = console(IDS)
    sample = {"load": [1.5, 1.0, 0.5], "cpu": 42.0, "memory": {"used": 2 * 1024**3, "total": 8 * 1024**3, "percent": 25}}
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await app.feed([Sample("s00", sample, 0.1)])
        await pilot.pause()
        app.main.machine.flush()
        assert app.main.machine.render().plain == "machine load 1.50 1.00 0.50 · cpu 42% · mem 2.0/8.0 GiB (25%)"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, OpenedStudyScreen)
        line = app.screen.machine.render().plain
        assert line == "machine load 1.50 1.00 0.50 · cpu 42% · mem 2.0/8.0 GiB (25%)", line
    fresh = console(IDS)
    async with fresh.run_test(size=SIZE) as pilot:
        await fresh.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(fresh.screen, OpenedStudyScreen)
        assert fresh.screen.machine.render().plain == "machine waiting for the first sample"


async def test_a_row_lights_up_when_a_diagnosis_run_starts() -> None:
    wall = [NOW]
    app = console(IDS, wall)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await app.feed([RecordsSeen("s05", (plan(3, "d2"), rec(4, "runStarted", NOW, run="d2")))])
        await pilot.pause()
        texts = row_texts(app)
        assert texts[5].startswith(" ▶") and not any("▶" in t[:2] for i, t in enumerate(texts) if i != 5)
        wall[0] = NOW + 6  # the alert is over
        app.main.overview.table.refresh()
        await pilot.pause()
        assert not row_texts(app)[5].startswith(" ▶")


async def test_many_events_between_two_frames_draw_a_row_once() -> None:
    """What is on screen is what costs: a burst of records for one row is drawn once, the other rows not at all."""
    app = console(IDS)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await pilot.pause()
        table: OverviewRows = app.main.overview.table
        drawn: list[str] = []
        original = table._render_row

        def counting(s: StudySummary, *args: Any) -> Any:
            drawn.append(s.id)
            return original(s, *args)

        table._render_row = counting  # type: ignore[method-assign]
        for seq in range(3, 203):
            app.main.deliver(RecordsSeen("s04", (rec(seq, "note"),)))
        await pilot.pause()
        await pilot.pause()
        assert app.main.overview.summaries["s04"].records == 202
        assert drawn.count("s04") <= 2 and set(drawn) <= {"s04"}, drawn


async def test_the_verdicts_at_the_end_failures_first() -> None:
    app = console(IDS)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        ok = tuple(Check(f"c{k}", True, "") for k in range(5))
        events: list[StudyEvent] = []
        for i in IDS:
            bad = i in ("s04", "s09")
            checks = ok + ((Check("chargedOnce", False, "twice"),) if bad else ())
            events += [StateChanged(i, State.FINISHED_FAIL if bad else State.FINISHED_OK),
                       Verdicts(i, checks, not bad, True)]
        await app.feed(events)
        results = []
        for i in IDS:
            checks = list(ok) + ([Check("chargedOnce", False, "twice")] if i in ("s04", "s09") else [])
            judgement = Judgement(i, Path("/nowhere") / i, checks, True, None, {})
            results.append(SessionResult(i, Path("/nowhere") / i, True, judgement, None))
        app.main.show_ended(1, results)
        await pilot.pause()
        assert ids_shown(app)[:2] == ["s04", "s09"]
        texts = row_texts(app)
        assert "✗ 5✓ 1✗" in texts[0] and "✓ 5✓" in texts[2]
        assert app.main.machine.overall == (False, "✗ checks fail: s04, s09 · exit 1 · q closes")


def test_many_studies_print_a_line_each_then_the_table_of_those_that_did_not_pass() -> None:
    ok = [Check("chargedOnce", True, "once"), Check("exitedCleanly", True, "exit 0")]
    rows = [(f"s{i}", list(ok)) for i in range(6)]
    rows[2] = ("s2", [ok[0], Check("exitedCleanly", False, "exit 1")])
    rows[4] = ("s4", [ok[0], Check("exitedCleanly", None, "has not ended")])
    console = Console(width=160, record=True, file=None, force_terminal=False)
    with console.capture() as got:
        for part in checks_report(rows):
            console.print(part)
    text = got.get()
    lines = [line for line in text.splitlines() if line.strip()]
    marks = [line.split()[0] for line in lines[2:8]]
    assert marks == ["✗", "?", "✓", "✓", "✓", "✓"], text  # failures first
    assert "s2" in lines[2] and "study · exitedCleanly: exit 1" in lines[2]
    assert "2 of 6 studies did not pass; their checks:" in text
    table = text.split("their checks:", 1)[1]
    assert "s2" in table and "s4" in table and "s0" not in table and "s5" not in table
    assert "✗ 1 of 12 checks failed" in text
    # Fewer than MANY_STUDIES: the table of every check, as before.
    with console.capture() as got:
        for part in checks_report(rows[: MANY_STUDIES - 1]):
            console.print(part)
    assert "did not pass" not in got.get() and "s0" in got.get()


def test_the_wall_clock_of_a_row_is_the_console_s() -> None:
    assert time.time() - NOW > -10 ** 9  # NOW is a fixed date: the tests give the console their own clock


# --- snapshots ----------------------------------------------------------------------------


def _a_busy_lab() -> list[StudyEvent]:
    """Twelve studies at different points: running, one lit up, killed, armed, crashed, finished either way."""
    events = [e for n, i in enumerate(IDS) for e in running(i, n)]
    events += [
        RecordsSeen("s01", (plan(3, "d1"), rec(4, "runStarted", NOW - 1, run="d1"))),
        StateChanged("s02", State.KILLED, "waiting for resume"),
        KillStep("s02", 1, "killed"),
        ArmChanged("s03", True, "after:runStarted/diagnosis"),
        ArmChanged("s04", True, "container:die/ablation#2", ("after:charge",)),
        StateChanged("s05", State.CRASHED, "exit 1"),
        StateChanged("s06", State.FINISHED_OK),
        Verdicts("s06", tuple(Check(f"c{k}", True, "") for k in range(20)), True, True),
        StateChanged("s07", State.FINISHED_FAIL),
        Verdicts("s07", (*(Check(f"c{k}", True, "") for k in range(18)), Check("chargedOnce", False, "twice"),
                         Check("x", None, "")), False, True),
        StateChanged("s08", State.RESUMING),
        KillStep("s08", 1, "resumed"),
    ]
    return events


def test_snapshot_the_overview_while_studies_run(snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        await pilot.app.feed(_a_busy_lab())
        await pilot.press("down", "down")
        await pilot.pause()

    assert snap_compare(console(IDS), terminal_size=SIZE, run_before=run_before)


def test_snapshot_the_overview_sorted_by_state_and_filtered(snap_compare: Any) -> None:
    async def run_before(pilot: Any) -> None:
        await pilot.app.feed(_a_busy_lab())
        await pilot.press("S")
        await pilot.press("slash")
        await typed(pilot, "state!=running")
        await pilot.pause()

    assert snap_compare(console(IDS), terminal_size=SIZE, run_before=run_before)


async def test_the_clock_draws_again_only_the_rows_whose_age_reads_differently() -> None:
    """Idle, the 2 s tick costs nothing when no age changed its words; ages past ten seconds move in tens."""
    wall = [NOW]
    app = console(IDS, wall)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await pilot.pause()
        overview = app.main.overview
        assert overview is not None
        for y in range(len(IDS)):
            overview.table.render_line(y)  # drawn as the screen draws them
        drawn: list[int] = []
        refresh_line = overview.table.refresh_line

        def counting(y: int) -> Any:
            drawn.append(y)
            return refresh_line(y)

        overview.table.refresh_line = counting  # type: ignore[method-assign]
        overview.tick()
        assert drawn == [], "no age moved: nothing drawn"
        wall[0] = NOW + 5  # s00's last record is 60 s old, s11's 71 s: each reads 1m still
        overview.tick()
        assert drawn == []
        wall[0] = NOW + 25  # 85-96 s: 1m still for all
        overview.tick()
        assert drawn == []
        app.main.deliver(RecordsSeen("s03", (rec(3, "note", NOW + 25),)))
        overview.flush()
        overview.table.render_line(3)
        drawn.clear()
        wall[0] = NOW + 30  # s03's record is 5 s old; the others' 90-101 s still read 1m
        overview.tick()
        assert drawn == [3], drawn
        overview.table.render_line(3)
        drawn.clear()
        wall[0] = NOW + 36  # 11 s: "10s"
        overview.tick()
        assert drawn == [3] and overview.table.age_shown("s03") == "5s"
        overview.table.render_line(3)
        drawn.clear()
        wall[0] = NOW + 44  # 19 s: still "10s"; the others 104-115 s, 1m
        overview.tick()
        assert drawn == []


def cells(strip: Any) -> list[tuple[str, Any]]:
    """A drawn line cell by cell: each character and its style, however the segments were cut."""
    return [(char, segment.style) for segment in strip for char in segment.text]


async def test_a_row_whose_age_alone_moved_is_its_old_line_with_the_new_age_and_the_same_as_drawn_whole() -> None:
    """Idle, every row's age moves each ten seconds and nothing else: the cell is put into the line drawn before
    (a fifth of the cost), and the line is the one a whole drawing gives, lit, selected, focused or not."""
    wall = [NOW]
    app = console(IDS, wall)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        await app.feed([KillStep("s02", 1, "resumed"), ArmChanged("s04", True, "after:charge")])
        await app.feed([RecordsSeen("s05", (plan(3, "d2"), rec(4, "runStarted", NOW, run="d2")))])  # s05 lit
        await pilot.pause()
        overview = app.main.overview
        assert overview is not None
        table = overview.table
        whole: list[int] = []
        render_row = table._render_row

        def counting(*args: Any) -> Any:
            whole.append(args[0].order)
            return render_row(*args)

        table._render_row = counting  # type: ignore[method-assign]
        lit = next(y for y, summary in enumerate(overview.rows()) if summary.id == "s05")
        for focused in (True, False):
            if focused:
                table.focus()
            else:
                app.screen.set_focus(None)
            await pilot.pause()
            assert table.has_focus_within is focused
            wall[0] = NOW
            for y in range(len(IDS)):
                table.render_line(y)  # drawn as the screen draws them
            whole.clear()
            for later in (1, 2, 15, 25, 70):  # s05 lit at 1 and 2 s, its age in seconds
                wall[0] = NOW + later
                for y in range(len(IDS)):
                    summary = overview.rows()[y]
                    line = table.render_line(y)
                    age = age_text(summary.age(wall[0]))
                    assert table.age_shown(summary.id) == age
                    cursor = y == table.cursor
                    selected, alert = cursor and table.has_focus_within, summary.alert(wall[0])
                    assert cells(line) == cells(render_row(summary, table.size.width, selected, cursor, alert, age)), (
                        y, later, focused)
            assert whole == [lit], "only ages moved but for the lit row going out: no other row drawn whole"
        assert overview.rows()[lit].alert(NOW + 2) and not overview.rows()[lit].alert(NOW + 15)
        assert table.render_line(0).cell_length == table.size.width
        # A row too narrow to hold the age column is drawn whole again.
        assert table._with_age(Strip.blank(10), "20s", table._base(False, False, False)) is None


async def test_container_events_from_the_engine_s_thread_leave_a_console_that_quits_clean(tmp_path: Path) -> None:
    """A container's events and problems reach the overview from the watch's thread; the timers its rows set then
    run in the app's context, so that ``q`` at the end quits with no traceback (once it ended in a LookupError, exit 1)."""
    from studymon.engine.kill.recording import EventRecorder
    from studymon.engine.live.containers import ContainerWatch
    from studymon.engine.runtimes import open_runtime
    from tests.faulty_runtime import FaultyInspect

    prefix = "ovctx-s00-"
    runtime = open_runtime("process")
    app = console(IDS)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(IDS) for e in running(i, n)])
        recorder = EventRecorder(prefix, runtime.history)
        seen: list[StudyEvent] = []

        def sink(event: StudyEvent) -> None:
            seen.append(event)
            overview = app.main.overview
            assert overview is not None
            if isinstance(event, Problem):
                overview.flush()  # a row was drawn just now (48 busy studies): this one is drawn by a timer
            app.main.deliver(event)  # as the app's sink does

        # The runtime fails its first inspect, as a busy engine does: a Problem, which the row shows (a timer).
        watch = ContainerWatch(
            "s00", "process", prefix, recorder, sink,
            open_stream_runtime=lambda backend: FaultyInspect(  # type: ignore[return-value]
                calls=1, real=open_runtime(backend), error=ConnectionResetError("the engine dropped the connection")
            ),
        )
        watch.start()
        try:
            assert await asyncio.to_thread(recorder.wait_live, 20.0)
            runtime.run(f"{prefix}d1", ["true"])
            assert runtime.wait(f"{prefix}d1", timeout=30) == 0
            for _ in range(400):
                if any(isinstance(e, ContainerChanged) and e.action == "die" for e in seen):
                    break
                await pilot.pause(0.05)
            assert any(isinstance(e, ContainerChanged) and e.action == "die" for e in seen), seen
            assert any(isinstance(e, Problem) for e in seen), seen
            await pilot.pause(0.3)  # the rows' draw timer has run
        finally:
            watch.stop()
            await watch.join()
            runtime.remove(f"{prefix}d1", force=True)
        await pilot.press("q")
    assert app.return_code in (0, None), app.return_code


async def test_the_cursor_is_always_on_screen_and_an_end_the_console_saw_is_on_its_row() -> None:
    """Down past the last visible row scrolls by one, so the cursor's row is the last shown; up past the first
    brings it back as the first.  A study that ended unfinished keeps its ✗, else reads unknown, with why."""
    ids = [f"r{i:02d}" for i in range(80)]
    app = console(ids)
    async with app.run_test(size=SIZE) as pilot:
        await app.feed([e for n, i in enumerate(ids) for e in running(i, n)])
        await pilot.pause()
        overview = app.main.overview
        assert overview is not None
        table = overview.table
        height = table.scrollable_content_region.height
        assert 0 < height < len(ids)
        for _ in range(height):
            await pilot.press("down")
        await pilot.pause()
        assert table.cursor == height and int(table.scroll_offset.y) == 1, "one row scrolled: the cursor is last"
        for _ in range(height):
            await pilot.press("up")
        await pilot.pause()
        assert table.cursor == 0 and int(table.scroll_offset.y) == 0
        overview.ended("r05", False, "exit 1: the study crashed")
        await pilot.pause()
        row = overview.summaries["r05"]
        assert row.ended and row.finished is False and row.ok is None and row.problem == "exit 1: the study crashed"
        overview.ended("nobody", True)  # a study with no row: nothing happens
