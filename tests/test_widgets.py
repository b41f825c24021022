"""Pilot tests of the console's widgets, fed with real engine events and ledger records."""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.scrollbar import ScrollBar
from textual.widget import Widget
from textual.widgets import Button, Label, Static

from studymon.engine.contract.ledger import LedgerIssue, Record
from studymon.engine.events import (
    ArmChanged,
    ContainerChanged,
    ControllerEnded,
    ControllerStarted,
    KillStep,
    Problem,
    Progress,
    RecordsSeen,
    Sample,
    State,
    StateChanged,
    StudyLoad,
    Verdicts,
)
from studymon.engine.judge.verdict import Check
from studymon.tui.app import StudymonApp
from studymon.tui.explore_app import ExploreApp
from studymon.widgets.containers_table import ContainersTable
from studymon.widgets.controls import Controls
from studymon.widgets.dialogs import ConfirmScreen, HelpScreen, QuitScreen, RecordScreen
from studymon.widgets.ledger_lines import LedgerScrollBar
from studymon.widgets.ledger_store import plain_line, summarize
from studymon.widgets.ledger_stream import SHOWN_AT_ONCE_PER_SECOND, LedgerStream
from studymon.widgets.machine_bar import MachineBar
from studymon.widgets.study_header import StudyHeader
from studymon.widgets.study_pane import StudyPane, pane_id
from tests.waits import until_async

ROOT = Path(__file__).resolve().parent.parent
WIDGETS = ROOT / "widgets"

# A diagnosis round as the contract writes it, then a few others, cycled.
CONTENTS: list[tuple[str, dict[str, Any]]] = [
    ("studyOpen", {"study": "s1", "budget": 60, "config": {}}),
    ("stageOpen", {"stage": "diagnosis", "round": 1}),
    ("decision", {"name": "selectDiagnosis", "round": 1, "output": {"chosen": ["e1", "e2"]}}),
    ("runPlanned", {"run": "d1", "purpose": "diagnosis", "object": "alpha", "round": 1, "experiments": ["e1", "e2"]}),
    ("charge", {"run": "d1", "amount": 10, "balance": 50}),
    ("runStarted", {"run": "d1", "container": "inforsi-s1-d1"}),
    ("runResult", {"run": "d1", "exitCode": 0, "outputs": {"e1": 0.5, "e2": 0.7}}),
    (
        "diagnosisSettlement",
        {"round": 1, "run": "d1", "dropped": [{"experiment": "e2", "reason": "x"}],
         "judged": {"experiments": [{"id": "e1"}]}},
    ),
    ("halt", {"reason": "balance exhausted"}),
    ("oddity", {"zeta": [1, 2]}),
]


def make_records(n: int, start: int = 1) -> list[Record]:
    out = []
    for seq in range(start, start + n):
        kind, content = CONTENTS[(seq - 1) % len(CONTENTS)]
        at = f"2026-11-30T05:{(seq // 60) % 60:02d}:{seq % 60:02d}.{seq % 1000:03d}Z"
        out.append(Record(seq, at, kind, content, seq, seq * 100))
    return out


def strip_text(widget: Any, y: int) -> str:
    return widget.render_line(y).text


def label_text(label: Label) -> str:
    return str(label.content)


class Harness(App[None]):
    """A tiny app around one widget; it keeps every message the widgets post for the app."""

    def __init__(self, make: Callable[[], Widget]) -> None:
        super().__init__()
        self.make = make
        self.messages: list[Any] = []
        self.copied: list[str] = []

    def compose(self) -> ComposeResult:
        yield self.make()

    def copy_to_clipboard(self, text: str) -> None:
        self.copied.append(text)

    @on(LedgerStream.OpenRecord)
    @on(LedgerStream.SaveRequested)
    @on(Controls.Action)
    @on(StudyPane.ActionRequested)
    def keep(self, message: Any) -> None:
        self.messages.append(message)


# --- the policy --------------------------------------------------------------


def test_widgets_touch_no_files_processes_or_docker() -> None:
    forbidden = {"docker", "subprocess", "psutil", "watchfiles", "os", "socket", "shutil", "signal", "threading"}
    for path in sorted(WIDGETS.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in forbidden, f"{path.name} imports {name}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id != "open", f"{path.name} opens a file"
        assert ast.get_docstring(tree), f"{path.name} has no module docstring"


# Every widget class of widgets/ that has a style, and the module that holds it.
STYLED = {
    "study_pane": ["StudyPane"],
    "study_header": ["StudyHeader", "BalanceBar"],
    "ledger_stream": ["LedgerStream", "LedgerStatus"],
    "ledger_lines": ["LedgerLines"],
    "containers_table": ["ContainersTable"],
    "timeline": ["Timeline"],
    "controls": ["Controls"],
    "machine_bar": ["MachineBar"],
    "verdicts": ["VerdictPanel"],
    "overview": ["Overview", "OverviewHeader", "OverviewRows"],
    "dialogs": ["Dialog"],
}


def test_widgets_carry_their_style() -> None:
    """Each widget's style is its own DEFAULT_CSS, as toolong's are: no sheet of widgets/, none loaded by name.

    The apps' sheet (tui/app.tcss) holds only where the widgets go; a widget
    test mounts a widget and sees it styled, with no sheet at all.
    """
    assert not sorted(WIDGETS.glob("*.tcss")), "widgets/ has a style sheet: its rules belong in DEFAULT_CSS"
    for path in sorted(WIDGETS.glob("*.py")):
        text = path.read_text()
        for name in (".tcss", "CSS_PATH"):
            assert name not in text, f"{path.name} names {name}: a widget's style is its DEFAULT_CSS"
    for module, names in STYLED.items():
        loaded = importlib.import_module(f"studymon.widgets.{module}")
        for name in names:
            css = vars(getattr(loaded, name)).get("DEFAULT_CSS", "")  # its own, not a base's
            assert name in css and "{" in css, f"{module}.{name} has no DEFAULT_CSS of its own"
    for app in (StudymonApp, ExploreApp):
        paths = [app.CSS_PATH] if isinstance(app.CSS_PATH, (str, Path)) else list(app.CSS_PATH or [])
        where = Path(inspect.getfile(app)).resolve().parent
        assert [(where / path).resolve() for path in paths] == [ROOT / "tui" / "app.tcss"], app.__name__


# --- ledger stream -----------------------------------------------------------


def test_summaries_say_what_each_kind_holds() -> None:
    by_kind = {r.kind: r for r in make_records(len(CONTENTS))}
    assert summarize(by_kind["runPlanned"]) == "d1 diagnosis cell alpha round 1"
    assert summarize(by_kind["charge"]) == "d1 10 → 50"
    assert summarize(by_kind["runStarted"]) == "d1 in inforsi-s1-d1"
    assert summarize(by_kind["runResult"]) == "d1 exit 0, 2 outputs"
    assert summarize(by_kind["diagnosisSettlement"]) == "round 1 d1: 1 judged, 1 dropped"
    assert summarize(by_kind["stageOpen"]) == "diagnosis round 1"
    assert summarize(by_kind["decision"]) == "selectDiagnosis round 1 chose 2"
    assert summarize(by_kind["halt"]) == "balance exhausted"
    assert summarize(by_kind["oddity"]) == '{"zeta":[1,2]}'
    odd = Record(1, "2026-11-30T05:32:38.123Z", "runResult", {"outputs": 7}, 1, 0)
    assert "exit None, 0 outputs" in summarize(odd)
    line = plain_line(by_kind["charge"], 3)
    assert line.startswith("  5 05:00:05.005 charge     d1 10 → 50")


async def test_stream_keeps_at_most_max_records_of_200_000() -> None:
    app = Harness(lambda: LedgerStream(max_records=10_000, id="s"))
    async with app.run_test() as pilot:
        stream = app.query_one(LedgerStream)
        records = make_records(200_000)
        started = time.perf_counter()
        for i in range(0, len(records), 2_000):
            stream.add_records(records[i : i + 2_000])
        spent = time.perf_counter() - started
        stream.flush()
        await pilot.pause()
        assert stream.kept == 10_000
        assert stream.dropped == 190_000
        assert stream.store.records[0].seq == 190_001
        assert stream.line_count == 10_000
        assert spent < 5.0, f"adding 200 000 records took {spent:.2f}s"
        status = stream.status.render().plain
        assert "190000 earlier records not kept" in status
        assert "following" in status
        # Following: the bottom line on screen is the last record.
        height = stream.lines.scrollable_content_region.height
        assert strip_text(stream.lines, height - 1).lstrip().startswith("200000 ")
        # Only lines on screen were ever drawn.
        assert stream.lines.cached_lines <= 2 * height


async def test_a_burst_is_shown_in_one_catch_up_not_one_repaint_per_record() -> None:
    app = Harness(lambda: LedgerStream(refresh_interval=60.0, id="s"))
    async with app.run_test() as pilot:
        stream = app.query_one(LedgerStream)
        await pilot.pause()
        stream.add_records(make_records(5))  # after a quiet spell: shown at once
        assert stream.lines.virtual_size.height == 5
        for seq in range(6, 56):
            stream.add_records(make_records(1, start=seq))
        assert stream.kept == 55
        # Slow (at most SHOWN_AT_ONCE_PER_SECOND records within a second), each record showed at
        # once; past that the stream is busy, and the rest of the burst waits for the catch-up.
        assert stream.lines.virtual_size.height == SHOWN_AT_ONCE_PER_SECOND, "a burst waits for the next catch-up"
        stream.flush()
        await pilot.pause()
        assert stream.lines.virtual_size.height == 55
        height = stream.lines.scrollable_content_region.height
        assert strip_text(stream.lines, height - 1).lstrip().startswith("55 ")


def _textual_drawing(bar: ScrollBar) -> list[list[Any]]:
    """What Textual's own scrollbar draws in ``bar``'s state, from nothing kept."""
    bar._styles_cache.clear()
    return [list(strip) for strip in ScrollBar.render_lines(bar, bar.size.region)]


async def test_the_scrollbar_draws_again_only_when_its_thumb_moves_and_draws_what_textual_would() -> None:
    """Following a busy stream, the thumb stays in the bottom cell: no drawing per catch-up. Wherever the view
    is scrolled, what is shown is what Textual's scrollbar would draw."""
    app = Harness(lambda: LedgerStream(refresh_interval=0.0, id="s"))
    async with app.run_test(size=(60, 24)) as pilot:
        stream = app.query_one(LedgerStream)
        lines = stream.lines
        stream.add_records(make_records(1000))
        stream.flush()
        await pilot.pause()
        bar = lines.vertical_scrollbar
        assert isinstance(bar, LedgerScrollBar) and bar.display
        before = bar.draws
        for k in range(40):  # catch-ups of a following stream
            stream.add_records(make_records(25, start=1001 + 25 * k))
            stream.flush()
            await pilot.pause()
            shown = [list(strip) for strip in bar.render_lines(bar.size.region)]
            assert shown == _textual_drawing(bar)
        assert bar.draws - before <= 1, "the thumb stayed in the bottom cell"
        # Scrolled anywhere (by eighths of a cell and by whole pages), it draws what Textual would.
        rng = random.Random(7)  # noqa: S311 - seeded scroll positions, no secret
        for _ in range(60):
            lines.scroll_to(y=rng.uniform(0, lines.max_scroll_y), animate=False)
            await pilot.pause()
            shown = [list(strip) for strip in bar.render_lines(bar.size.region)]
            assert shown == _textual_drawing(bar)
            assert bar.thumb() is not None
        # The mouse over it changes its colours: drawn again.
        draws = bar.draws
        bar.mouse_over = True
        await pilot.pause()
        assert [list(strip) for strip in bar.render_lines(bar.size.region)] == _textual_drawing(bar)
        assert bar.draws == draws + 1


async def test_follow_stops_when_scrolled_up_and_resumes_on_end() -> None:
    app = Harness(lambda: LedgerStream(id="s"))
    async with app.run_test() as pilot:
        stream = app.query_one(LedgerStream)
        stream.focus()
        stream.add_records(make_records(200))
        stream.flush()
        await pilot.pause()
        lines = stream.lines
        assert stream.following and lines.scroll_y == lines.max_scroll_y
        # The operator scrolls up (mouse wheel or scrollbar): following stops, and it says so.
        lines.scroll_to(y=lines.max_scroll_y - 30, animate=False)
        await pilot.pause()
        assert not stream.following
        assert stream.has_class("-paused")
        assert "paused — End to follow" in stream.status.render().plain
        top = lines.scroll_y
        stream.add_records(make_records(50, start=201))
        stream.flush()
        await pilot.pause()
        assert lines.scroll_y == top, "new records must not move a paused view"
        await pilot.press("end")
        assert stream.following
        assert lines.scroll_y == lines.max_scroll_y
        height = lines.scrollable_content_region.height
        assert strip_text(lines, height - 1).lstrip().startswith("250 ")
        assert "following" in stream.status.render().plain
        # A key moves the cursor and stops following too.
        await pilot.press("up")
        assert not stream.following
        assert stream.cursor_record is not None and stream.cursor_record.seq == 249


async def test_paused_view_keeps_its_records_while_old_ones_fall_off() -> None:
    app = Harness(lambda: LedgerStream(max_records=100, id="s"))
    async with app.run_test() as pilot:
        stream = app.query_one(LedgerStream)
        stream.focus()
        stream.add_records(make_records(100))
        stream.flush()
        await pilot.pause()
        await pilot.press("home", "down", "down", "down", "down", "down")
        assert stream.cursor_record is not None
        assert stream.cursor_record.seq == 6
        stream.lines.scroll_to(y=3, animate=False)
        await pilot.pause()
        first_shown = strip_text(stream.lines, 0)
        stream.add_records(make_records(2, start=101))
        stream.flush()
        await pilot.pause()
        assert stream.dropped == 2
        assert strip_text(stream.lines, 0) == first_shown
        assert stream.cursor_record.seq == 6


async def test_filter_narrows_lines_and_escape_clears_it() -> None:
    app = Harness(lambda: LedgerStream(id="s"))
    async with app.run_test() as pilot:
        stream = app.query_one(LedgerStream)
        stream.focus()
        stream.add_records(make_records(100))
        stream.flush()
        await pilot.pause()
        await pilot.press("slash")
        assert stream.filter_input.display and stream.filter_input.has_focus
        await pilot.press(*"charge")
        await pilot.pause()
        assert stream.filter_text == "charge"
        assert stream.line_count == 10
        assert all(" charge " in line for line in stream.visible_lines())
        # Records that arrive while filtering are filtered too.
        stream.add_records(make_records(10, start=101))
        stream.flush()
        assert stream.line_count == 11
        # Any text, not only a kind: the content is searched as well.
        stream.set_filter("zeta")
        assert stream.line_count == 11 and all("oddity" in line for line in stream.visible_lines())
        stream.set_filter("charge")
        await pilot.press("escape")
        await pilot.pause()
        assert stream.filter_text == ""
        assert stream.line_count == 110
        assert not stream.filter_input.display
        assert stream.lines.has_focus


async def test_enter_opens_the_cursor_record_and_c_copies_it() -> None:
    app = Harness(lambda: LedgerStream(id="s"))
    async with app.run_test() as pilot:
        stream = app.query_one(LedgerStream)
        stream.focus()
        stream.add_records(make_records(40))
        stream.flush()
        await pilot.pause()
        await pilot.press("up", "up", "enter")
        await pilot.pause()
        opened = [m for m in app.messages if isinstance(m, LedgerStream.OpenRecord)]
        assert [m.record.seq for m in opened] == [38]
        await pilot.press("c")
        assert app.copied and '"seq":38' in app.copied[-1]
        # The cursor line is drawn highlighted (its own style), others are not.
        line = stream.cursor_line
        assert line is not None
        cursor_strip = stream.lines.render_line(line - int(stream.lines.scroll_y))
        other_strip = stream.lines.render_line(line - int(stream.lines.scroll_y) - 1)
        assert cursor_strip.text.lstrip().startswith("38 ")
        cursor_bg = {s.style.bgcolor for s in cursor_strip if s.style}
        other_bg = {s.style.bgcolor for s in other_strip if s.style}
        assert cursor_bg != other_bg


async def test_w_asks_to_save_the_visible_lines() -> None:
    app = Harness(lambda: LedgerStream(id="s"))
    async with app.run_test() as pilot:
        stream = app.query_one(LedgerStream)
        stream.focus()
        stream.add_records(make_records(30))
        stream.set_filter("runResult")
        await pilot.pause()
        await pilot.press("w")
        await pilot.pause()
        saved = [m for m in app.messages if isinstance(m, LedgerStream.SaveRequested)]
        assert len(saved) == 1
        assert saved[0].lines == [plain_line(r, 3) for r in make_records(30) if r.kind == "runResult"]


# --- containers table --------------------------------------------------------


def _inspect(status: str, started: str = "2026-11-30T05:00:00.000000000Z", code: int = 0) -> dict[str, Any]:
    state = {"Status": status, "Running": status == "running", "StartedAt": started, "ExitCode": code}
    return {"Id": "abc", "Name": "/x", "State": state}


async def test_containers_update_in_place() -> None:
    prefix = "inforsi-s1-"
    app = Harness(lambda: ContainersTable(prefix, id="t"))
    async with app.run_test() as pilot:
        table = app.query_one(ContainersTable)
        table.set_purpose("d1", "diagnosis")
        name = prefix + "d1"
        table.apply(ContainerChanged("s1", name, "create", _inspect("created"), "created"))
        await pilot.pause()
        assert table.row_count == 1
        assert table.get_row(name)[0].plain == "d1"
        assert table.get_row(name)[1].plain == "diagnosis"
        table.apply(ContainerChanged("s1", name, "start", _inspect("running"), "running"))
        from studymon.engine.io.clock import parse_rfc3339

        table.tick(parse_rfc3339("2026-11-30T05:03:07Z"))
        await pilot.pause()
        assert table.row_count == 1
        row = [c.plain for c in table.get_row(name)]
        assert row[2:4] == ["running", "3m07s"]
        table.apply(ContainerChanged("s1", name, "die", _inspect("exited", code=3), "exited", 3))
        await pilot.pause()
        assert table.row_count == 1
        assert [c.plain for c in table.get_row(name)][2:4] == ["exited", "exit 3"]
        table.apply(ContainerChanged("s1", name, "destroy", None, "removed"))
        await pilot.pause()
        assert table.row_count == 1
        assert table.status_of(name) == "removed"
        cells = table.get_row(name)
        assert cells[2].plain == "removed" and cells[3].plain == "exit 3"
        # Dimmed by its colour alone: a background of its own would hide the cursor row.
        assert cells[0].style.color == table.get_component_rich_style("containers--removed").color
        assert cells[0].style.bgcolor is None
        # A purpose learnt after the row exists fills the cell in place.
        other = prefix + "a1"
        table.apply(ContainerChanged("s1", other, "exists", _inspect("running"), "running"))
        table.set_purpose("a1", "ablation")
        assert table.get_row(other)[1].plain == "ablation"
        assert table.row_count == 2


async def test_containers_cap_rows_dropping_removed_first() -> None:
    app = Harness(lambda: ContainersTable("p-s-", max_rows=5, id="t"))
    async with app.run_test() as pilot:
        table = app.query_one(ContainersTable)
        table.apply(ContainerChanged("s", "p-s-keep", "start", _inspect("running"), "running"))
        for i in range(8):
            name = f"p-s-r{i}"
            table.apply(ContainerChanged("s", name, "die", _inspect("exited"), "exited", 0))
            table.apply(ContainerChanged("s", name, "destroy", None, "removed"))
        await pilot.pause()
        assert table.row_count == 5
        assert "p-s-keep" in table.names
        assert table.names[-1] == "p-s-r7"


# --- controls ----------------------------------------------------------------


async def test_controls_enable_per_state_and_post_actions() -> None:
    app = Harness(lambda: Controls(id="c"))
    async with app.run_test() as pilot:
        controls = app.query_one(Controls)
        kill, arm, resume, stop = (controls.query_one(f"#{i}", Button) for i in ("kill", "arm", "resume", "stop"))
        assert [str(b.label) for b in (kill, arm, resume, stop)] == ["Kill now", "Arm", "Resume", "Stop"]
        assert "(key: k)" in str(kill.tooltip)
        controls.running, controls.finished = True, False
        assert (kill.disabled, arm.disabled, resume.disabled, stop.disabled) == (False, False, True, False)
        controls.running = False  # killed
        assert (kill.disabled, resume.disabled, stop.disabled) == (True, False, True)
        controls.finished = True
        assert (kill.disabled, arm.disabled, resume.disabled, stop.disabled) == (True, True, True, True)
        controls.running, controls.finished, controls.armed = True, False, True
        assert "Armed" in str(arm.label) and arm.has_class("-armed")
        await pilot.pause()
        for button in ("#kill", "#arm", "#stop"):
            await pilot.click(button)
        await pilot.pause()
        assert [m.action for m in app.messages] == ["kill", "arm", "stop"]
        controls.running, controls.armed = False, False  # stopped
        assert str(arm.label) == "Arm"
        await pilot.click("#kill")  # disabled: nothing
        await pilot.click("#resume")
        await pilot.pause()
        assert [m.action for m in app.messages] == ["kill", "arm", "stop", "resume"]


# --- dialogs -----------------------------------------------------------------


async def test_confirm_defaults_to_cancel() -> None:
    app = Harness(lambda: Label("behind"))
    async with app.run_test() as pilot:
        answers: list[bool | None] = []
        app.push_screen(ConfirmScreen("Kill s1", "Kill the controller of s1 now?", "Kill"), answers.append)
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "cancel"
        await pilot.press("enter")
        await pilot.pause()
        assert answers == [False]
        app.push_screen(ConfirmScreen("Kill s1", "Kill now?", "Kill"), answers.append)
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        app.push_screen(ConfirmScreen("Kill s1", "Kill now?", "Kill"), answers.append)
        await pilot.pause()
        await pilot.press("left", "enter")
        await pilot.pause()
        assert answers == [False, False, True]


async def test_quit_offers_stop_detach_cancel() -> None:
    app = Harness(lambda: Label("behind"))
    async with app.run_test() as pilot:
        answers: list[str | None] = []
        app.push_screen(QuitScreen(["s1", "s2"]), answers.append)
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "cancel"
        await pilot.press("enter")
        await pilot.pause()
        app.push_screen(QuitScreen(1), answers.append)
        await pilot.pause()
        assert "1 study is still running" in str(app.screen.query_one("#dialog-question", Static).content)
        await pilot.click("#detach")
        await pilot.pause()
        app.push_screen(QuitScreen(["s1"]), answers.append)
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert answers == ["cancel", "detach", "cancel"]


async def test_record_and_help_screens() -> None:
    app = Harness(lambda: Label("behind"))
    async with app.run_test(size=(100, 40)) as pilot:
        record = make_records(8)[7]
        app.push_screen(RecordScreen(record))
        await pilot.pause()
        shown = app.screen.query_one("#record-json").visual
        assert shown is not None
        assert "diagnosisSettlement" in label_text(app.screen.query_one("#dialog-title", Label))
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, RecordScreen)
        app.push_screen(HelpScreen([("Study", [("k", "kill now"), ("a", "arm")])], "Watch, break, verify."))
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


# --- header, graph, machine bar ----------------------------------------------


def test_the_running_time_changes_its_text_once_a_minute_after_the_first() -> None:
    """An age as k9s writes it: seconds only in the first minute, so that a long study's clock does
    not repaint the screen at every tick."""
    from studymon.widgets.study_header import format_elapsed

    assert [format_elapsed(s) for s in (0, 59.9, 60, 3599, 3600, 3725, 86399, 86400 + 7300, -5)] == [
        "0s", "59s", "1m", "59m", "1h00m", "1h02m", "23h59m", "1d02h", "0s"]
    texts = {format_elapsed(600 + t / 2) for t in range(120)}  # a minute of ticks
    assert len(texts) <= 2


def test_the_machine_line_moves_at_most_every_five_seconds() -> None:
    """Its figures change with every sample (2.5 s); shown every 5 s, as machine.jsonl is written."""
    now = [1000.0]
    bar = MachineBar(lambda: now[0])
    shown = []
    for i in range(8):  # 20 s of samples, 2.5 s apart, each shown at the next 2 s tick
        bar._pending = {"load": [float(i), 0.0, 0.0], "cpu": 1.0, "memory": {"percent": 1.0}}
        bar.tick()
        shown.append(bar.text.split()[1])
        now[0] += 2.5
    assert shown == ["0.00", "0.00", "2.00", "2.00", "4.00", "4.00", "6.00", "6.00"]


async def test_header_badge_and_elapsed_from_an_injected_clock() -> None:
    now = [100.0]
    app = Harness(lambda: StudyHeader("s1", clock=lambda: now[0], id="h"))
    async with app.run_test(size=(60, 5)) as pilot:
        header = app.query_one(StudyHeader)
        badge = header.query_one("#state-badge", Label)
        assert header.elapsed_text == "-"
        header.process_started()
        header.state, header.state_detail = State.RUNNING, "pid 42"
        now[0] = 100.0 + 3725
        header.refresh_clock()
        await pilot.pause()
        assert header.elapsed_text == "1h02m"
        assert header.query_one("#elapsed").render() == "1h02m"
        assert label_text(badge) == "running" and badge.has_class("state-running")
        header.state = State.FINISHED_OK
        assert badge.has_class("state-finished-ok") and not badge.has_class("state-running")
        now[0] += 50
        assert header.elapsed_text == "1h02m", "the clock stops when the study has finished"
        header.armed = True
        await pilot.pause()
        assert header.query_one("#armed-badge").display
        header.progress = Progress("s1", 3, "diagnosis", 20.0, 60.0, ())
        header.controller = (42, None)
        assert label_text(header.query_one("#header-progress", Label)) == "pid 42 · round 3 · diagnosis"
        assert header.query_one("#balance").render().plain.endswith(" 40/60")


def test_machine_bar_text() -> None:
    bar = MachineBar()
    memory = {"used": 4 * 1024**3, "total": 16 * 1024**3, "percent": 25.0}
    bar.update_sample({"load": [1.5, 1.0, 0.5], "cpu": 42.4, "memory": memory})
    assert bar.text == "load 1.50 1.00 0.50 · cpu 42% · mem 4.0/16.0 GiB (25%)"


# --- the pane ------------------------------------------------------------------


async def test_pane_routes_every_event() -> None:
    now = [10.0]
    wall = 1_796_014_920.0  # 2026-11-30T05:02Z, just after the records' times
    app = Harness(lambda: StudyPane("s1", "inforsi", clock=lambda: now[0], wall_clock=lambda: wall))
    async with app.run_test(size=(60, 48)) as pilot:
        pane = app.query_one(StudyPane)
        assert pane.id == pane_id("s1")
        pane.post_event(ControllerStarted("s1", 4242, False))
        pane.post_event(StateChanged("s1", State.RUNNING, "pid 4242"))
        pane.post_event(RecordsSeen("s1", tuple(make_records(8)), (LedgerIssue("gap", 9, "seq 11 follows 9"),)))
        pane.post_event(Progress("s1", 1, "diagnosis", 50.0, 60.0, (("d1", "inforsi-s1-d1"),)))
        pane.post_event(ContainerChanged("s1", "inforsi-s1-d1", "start", _inspect("running"), "running"))
        pane.post_event(StudyLoad("s1", wall - 1, 180.0, 3 * 1024**3, (("inforsi-s1-d1", 179.0, 2 * 1024**3),)))
        # The machine's sample is the top line's, not the pane's: it draws nothing here.
        pane.post_event(Sample("s1", {"load": [0.5, 0, 0], "memory": {"percent": 30}, "cpu": 12.0}, 80.0))
        pane.post_event(ArmChanged("s1", True))
        pane.post_event(RecordsSeen("other", tuple(make_records(5))))  # another study's: ignored
        await pilot.pause()
        assert pane.stream.kept == 8
        assert pane.containers.get_row("inforsi-s1-d1")[1].plain == "diagnosis"
        assert "gap" in pane.header.note.text
        assert pane.header.armed and pane.controls.armed
        assert not pane.controls.button("kill").disabled and pane.controls.button("resume").disabled
        pane.post_event(KillStep("s1", 1, "frozen", "targets: ['d1']"))
        await pilot.pause()
        assert label_text(pane.header.query_one("#header-note", Label)) == "kill 1: frozen — targets: ['d1']"
        pane.post_event(StateChanged("s1", State.KILLED, "kill 1 (auto)"))
        pane.post_event(KillStep("s1", 1, "killed", "SIGKILL to pid 4242"))
        pane.post_event(ControllerEnded("s1", 4242, None, "SIGKILL"))
        await pilot.pause()
        assert pane.header.note.text == "kill 1: killed — SIGKILL to pid 4242"
        assert not pane.running and not pane.controls.button("resume").disabled
        assert "pid 4242 (SIGKILL)" in label_text(pane.header.query_one("#header-progress", Label))
        pane.post_event(ControllerStarted("s1", 4243, True))
        pane.post_event(KillStep("s1", 1, "resumed", "pid 4243", wall - 0.5))
        await pilot.pause()
        assert [(at, kind) for at, kind in pane.timeline.marks] == [(wall, "kill"), (wall - 0.5, "resume")]
        pane.flush()
        graph = pane.timeline.text(pane.timeline.size.width)
        assert "200%" in graph, graph  # the scale grew past 100 % for the study's 180 %
        assert "d1" in graph, graph  # its run's lane
        pane.post_event(Problem("s1", "container event stream stopped: boom"))
        await pilot.pause()
        assert pane.header.note.text.startswith("⚠ container event stream stopped")
        assert pane.header.query_one("#header-note").has_class("-problem")
        pane.post_event(ControllerEnded("s1", 4243, 0, None))
        pane.post_event(StateChanged("s1", State.FINISHED_OK))
        pane.post_event(Verdicts("s1", (Check("ledgerWellFormed", True, "ok"),), True, True))
        await pilot.pause()
        assert pane.finished
        assert pane.controls.button("resume").disabled and pane.controls.button("arm").disabled
        assert label_text(pane.header.query_one("#checks-badge", Label)) == "checks ✓"


async def test_pane_sees_the_controller_gone_from_the_state_alone() -> None:
    # A kill or a stop may be reported by its state only, with no ControllerEnded.
    app = Harness(lambda: StudyPane("s1", "inforsi", clock=lambda: 0.0, wall_clock=lambda: 0.0))
    async with app.run_test(size=(60, 48)) as pilot:
        pane = app.query_one(StudyPane)
        for gone in (State.KILLED, State.STOPPED, State.CRASHED, State.SERVICE_ERROR):
            pane.post_event(ControllerStarted("s1", 7, gone != State.KILLED))
            pane.post_event(StateChanged("s1", State.RUNNING, "pid 7"))
            await pilot.pause()
            assert pane.controls.button("resume").disabled and not pane.controls.button("kill").disabled
            pane.post_event(StateChanged("s1", gone, "gone"))
            await pilot.pause()
            assert not pane.running, gone
            assert not pane.controls.button("resume").disabled, gone
            assert pane.controls.button("kill").disabled and pane.controls.button("stop").disabled, gone


async def test_pane_asks_the_app_for_actions() -> None:
    app = Harness(lambda: StudyPane("s.1", "inforsi", clock=lambda: 0.0))
    async with app.run_test(size=(60, 48)) as pilot:
        pane = app.query_one(StudyPane)
        assert pane.id == "pane-s_1"
        pane.post_event(ControllerStarted("s.1", 7, False))
        pane.post_event(StateChanged("s.1", State.RUNNING))
        await pilot.pause()
        await pilot.click("#kill")
        await pilot.click("#arm")
        await pilot.pause()
        asked = [(m.study_id, m.action) for m in app.messages if isinstance(m, StudyPane.ActionRequested)]
        assert asked == [("s.1", "kill"), ("s.1", "arm")]
        assert not any(isinstance(m, Controls.Action) for m in app.messages)
        assert pane.has_focus_within
        app.set_focus(None)
        pane.focus_pane()
        await pilot.pause()
        assert app.focused is pane.stream.lines


class ThreePanes(App[None]):
    def compose(self) -> ComposeResult:
        yield MachineBar()
        with Horizontal():
            for study in ("s1", "s2", "s3"):
                yield StudyPane(study, "inforsi", clock=lambda: 0.0, wall_clock=lambda: 0.0)
        yield Label("footer")


async def test_three_panes_fit_160_by_48() -> None:
    app = ThreePanes()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        panes = list(app.query(StudyPane))
        assert len(panes) == 3
        for pane in panes:
            assert pane.region.width >= 50
            assert pane.stream.lines.region.height >= 20
            assert pane.header.region.height == 3
            assert pane.controls.region.height == 1  # one row: the rows go to the stream and the graph
            assert pane.timeline.region.height >= 10
            assert pane.region.bottom <= 47
        line = make_records(7)[6]
        panes[0].stream.add_records([line])
        panes[0].stream.flush()
        await pilot.pause()
        assert "d1 exit 0, 2 outputs" in strip_text(panes[0].stream.lines, 0)


# --- the table of actions -------------------------------------------------------


def test_one_table_makes_the_bindings_the_help_the_buttons_and_the_palette() -> None:
    from studymon.tui.app import StudymonApp
    from studymon.tui.explore_app import ExploreApp, TrialScreen
    from studymon.tui.screens import MainScreen, OpenedStudyScreen
    from studymon.widgets import keys
    from studymon.widgets.keys import Scope
    from studymon.widgets.overview import Overview

    owners = {Scope.APP: StudymonApp, Scope.SCREEN: MainScreen, Scope.STUDY: MainScreen, Scope.LEDGER: LedgerStream,
              Scope.OVERVIEW: Overview, Scope.OPENED: OpenedStudyScreen, Scope.EXPLORE: ExploreApp}
    for row in keys.KEYS:
        bound = [(b.key, b.action) for b in owners[row.scope].BINDINGS if isinstance(b, Binding)]
        for binding in row.bindings():
            assert (binding.key, binding.action) in bound, row
        assert row.textual or row.bindings(), row
    # Nothing is bound that the table does not say.
    table = {(b.key, b.action) for row in keys.KEYS for b in row.bindings()}
    for owner in (StudymonApp, MainScreen, LedgerStream, Overview, OpenedStudyScreen, ExploreApp, TrialScreen):
        assert {(b.key, b.action) for b in owner.BINDINGS if isinstance(b, Binding)} <= table, owner
    # A study opened from the overview, and a campaign's trial, have every study key its pane has on the main
    # screen (a trial's say they are not for it).
    study_keys = {(b.key, b.action) for row in keys.KEYS if row.scope is Scope.STUDY for b in row.bindings()}
    for opened in (OpenedStudyScreen, TrialScreen):
        assert study_keys <= {(b.key, b.action) for b in opened.BINDINGS if isinstance(b, Binding)}
    # The console's help lists every row but the explorer's, by where it applies.
    listed = {(title, text) for title, rows in keys.help_sections() for _, text in rows}
    for row in keys.KEYS:
        title = Scope.SCREEN.value if row.scope is Scope.APP else row.scope.value
        assert ((title, row.help) in listed) is (row.scope is not Scope.EXPLORE), row
    assert ("q ctrl+c", keys.QUIT_HELP) in keys.help_sections()[0][1]
    # The pane's buttons are the study actions, with the table's words.
    assert [(r.verb, r.label) for r in keys.study_actions()] == [
        ("kill", "Kill now"), ("arm", "Arm"), ("resume", "Resume"), ("stop", "Stop")]
    assert keys.shown_key("follow") == "End" and keys.shown_key("resume") == "r"


async def test_the_palette_lists_every_action_before_anything_is_typed() -> None:
    from textual.command import CommandList, CommandPalette

    from studymon.engine.contract.spec import StudySpec
    from studymon.tui.app import Planned, StudymonApp
    from studymon.widgets import keys

    nowhere = Path("/nonexistent/studymon-palette")
    app = StudymonApp([Planned(StudySpec(s, nowhere / s), "inforsi") for s in ("alpha", "beta")], start_engine=False)
    ours = [
        "Kill alpha now", "Arm or disarm alpha", "Resume alpha", "Stop alpha",
        "Kill beta now", "Arm or disarm beta", "Resume beta", "Stop beta", "Help", "Quit",
    ]
    # Textual's own commands come before or after ours (the providers answer in any order);
    # ours are told apart by their help, from the table of actions.
    helps = {row.help for row in keys.KEYS}
    async with app.run_test(size=(160, 48)) as pilot:

        def prompts() -> list[str]:
            """What the palette lists (nothing while it is not open)."""
            if not isinstance(app.screen, CommandPalette):
                return []
            shown = app.screen.query_one(CommandList)
            return [str(shown.get_option_at_index(i).prompt) for i in range(shown.option_count)]

        def listed() -> list[str] | None:
            """Our commands in the palette, once as many are listed as we have (they come in batches)."""
            mine = [p.split("\n")[0] for p in prompts() if p.split("\n")[-1] in helps]
            return mine if len(mine) >= len(ours) else None

        def highlighted() -> str | None:
            shown = app.screen.query_one(CommandList)
            index = shown.highlighted
            return None if index is None else str(shown.get_option_at_index(index).prompt).split("\n")[0]

        await pilot.press("ctrl+p")
        shown = await until_async(listed, 10, "the palette listing our commands", seen=lambda: (app.screen, prompts()))
        assert shown == ours
        await pilot.press(*"Help")
        await until_async(lambda: highlighted() == "Help", 10, "Help highlighted after typing it",
                          seen=lambda: (highlighted(), prompts()))
        await pilot.press("enter")
        await until_async(lambda: isinstance(app.screen, HelpScreen), 10, "the help, run from the palette",
                          seen=lambda: app.screen)
    assert not await asyncio.to_thread(nowhere.exists)


async def test_a_fresh_diagnosis_start_lights_its_pane_up_for_a_while_and_rings_with_bell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The moment of a manual kill draws the eye: the pane's -alert class, the note naming the run
    and the keys, the bell (with --bell); then all goes back, the earlier note too, after a few
    seconds, at the run's result, or when the controller is gone.  A start read late (a catch-up)
    or of a run of another purpose does not flash."""
    from studymon.engine.contract.spec import StudySpec
    from studymon.engine.events import KillStep, RecordsSeen
    from studymon.engine.io.clock import rfc3339_ms
    from studymon.tui.app import Planned, StudymonApp
    from studymon.widgets import study_pane

    monkeypatch.setattr(study_pane, "ALERT_SECONDS", 0.4)
    now = 1_790_000_000.0
    nowhere = Path("/nonexistent/studymon-alert")
    app = StudymonApp([Planned(StudySpec("a", nowhere / "a"), "inforsi")], start_engine=False,
                      wall_clock=lambda: now, bell=True)
    rings: list[int] = []
    monkeypatch.setattr(app, "bell", lambda: rings.append(1))

    def records(*specs: tuple[int, str, float, dict[str, Any]]) -> RecordsSeen:
        return RecordsSeen("a", tuple(Record(seq, rfc3339_ms(at), kind, content, seq, seq * 100)
                                      for seq, kind, at, content in specs))

    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.main.panes["a"]
        await app.feed([
            KillStep("a", 1, "settled", "every target has its result"),
            records((1, "runPlanned", now - 60, {"run": "d1", "purpose": "diagnosis"}),
                    (2, "runStarted", now - 59, {"run": "d1"}),  # a minute old: history
                    (3, "runPlanned", now - 1, {"run": "a1", "purpose": "ablation"}),
                    (4, "runStarted", now - 1, {"run": "a1"})),  # not a diagnosis
        ])
        assert not pane.has_class("-alert") and not rings
        assert pane.note.text.startswith("kill 1: settled")
        await app.feed([records((5, "runPlanned", now - 0.3, {"run": "d2", "purpose": "diagnosis"}),
                                (6, "runStarted", now - 0.2, {"run": "d2"}))])
        assert pane.has_class("-alert") and rings == [1]
        assert pane.note == study_pane.Note("▶ diagnosis d2 started — k k kills now", "alert")
        await until_async(lambda: not pane.has_class("-alert"), 10, "the alert to go by itself after ALERT_SECONDS")
        assert pane.note.text.startswith("kill 1: settled"), "the note before the alert comes back"
        # The run's result ends it early: the run is no longer in flight.
        monkeypatch.setattr(study_pane, "ALERT_SECONDS", 30.0)
        await app.feed([records((7, "runPlanned", now - 0.3, {"run": "d3", "purpose": "diagnosis"}),
                                (8, "runStarted", now - 0.2, {"run": "d3"}))])
        assert pane.has_class("-alert")
        await app.feed([records((9, "runResult", now - 0.1, {"run": "a1", "exitCode": 0}))])
        assert pane.has_class("-alert"), "another run's result changes nothing"
        assert "d3" in pane.timeline.highlights and pane.timeline.highlights["d3"] > now
        await app.feed([records((10, "runResult", now - 0.1, {"run": "d3", "exitCode": 0}))])
        assert not pane.has_class("-alert")
        assert pane.timeline.highlights["d3"] <= now, "its lane is lit no more"
        assert pane.note.text.startswith("kill 1: settled")
        # A controller that ends (here: its study finished) takes the alert with it: nothing to kill now.
        await app.feed([ControllerStarted("a", 4242, False), StateChanged("a", State.RUNNING, "pid 4242"),
                        records((11, "runPlanned", now - 0.3, {"run": "d4", "purpose": "diagnosis"}),
                                (12, "runStarted", now - 0.2, {"run": "d4"}))])
        assert pane.has_class("-alert")
        await app.feed([StateChanged("a", State.FINISHED_OK, "")])
        await pilot.pause()
        assert not pane.has_class("-alert")
        assert "kills now" not in pane.note.text


async def test_an_exported_screenshot_keeps_words_apart_from_their_neighbours() -> None:
    """In an SVG screenshot every run of text is stretched to its cells; viewers squeeze the spaces at
    a run's edges, which glued "machine" to "load" and the study id to its state badge.  No run that
    holds a word may start or end with a space."""
    import re

    from studymon.engine.contract.spec import StudySpec
    from studymon.tui.app import Planned, StudymonApp

    nowhere = Path("/nonexistent/studymon-svg")
    app = StudymonApp([Planned(StudySpec(s, nowhere / s), "inforsi") for s in ("alpha", "gamma")], start_engine=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.feed([
            ControllerStarted("gamma", 4242, False), StateChanged("gamma", State.RUNNING, ""), ArmChanged("gamma", True),
            Sample("gamma", {"load": [1.0, 0.5, 0.2], "cpu": 12.0, "memory": {"percent": 40.0, "used": 1, "total": 2}},
                   1.0),
        ])
        app.main.machine.overall = (True, "✓ every study ended")
        await pilot.pause()
        svg = app.export_screenshot()
    runs = [text.replace("&#160;", " ") for text in re.findall(r">([^<]*)</text>", svg)]
    worded = [r for r in runs if re.search(r"machine|load \d|running|ARMED|gamma|every study", r)]
    assert len(worded) >= 5, worded
    glued = [r for r in worded if r != r.strip()]
    assert not glued, glued


async def test_panes_sit_side_by_side_from_150_columns_and_stack_below() -> None:
    """Three panes fit side by side in 150 columns and more; below, they stack at full width, each with
    its stream, containers, timeline and one row of controls, and the screen scrolls."""
    from studymon.engine.contract.spec import StudySpec
    from studymon.tui.app import Planned, StudymonApp

    nowhere = Path("/nonexistent/studymon-layout")
    for width, stacked in ((160, False), (150, False), (149, True), (100, True)):
        app = StudymonApp([Planned(StudySpec(s, nowhere / s), "inforsi") for s in ("a", "b", "c")],
                          start_engine=False)
        async with app.run_test(size=(width, 48)) as pilot:
            await pilot.pause()
            panes = list(app.main.panes.values())
            xs = {p.region.x for p in panes}
            if stacked:
                assert len(xs) == 1 and all(p.region.width >= width - 2 for p in panes), (width, xs)
                assert panes[1].region.y > panes[0].region.y
            else:
                assert len(xs) == 3 and all(p.region.bottom <= 47 for p in panes), (width, xs)
            for p in panes:
                assert p.controls.outer_size.height == 1
                assert p.timeline.outer_size.height >= 10 and p.containers.outer_size.height >= 4
                assert p.stream.outer_size.height >= (20 if not stacked else 10), (width, p.stream.outer_size)
