"""What keeps a record's way to the screen short: a slow study's records go through at once, a busy one's are batched.

The pace (:mod:`studymon.engine.io.pace`) is pure logic, tested with a clock
the test moves.  The ledger pump follows a real ledger file through real
inotify, with its gathering made 30 s long, so a record that waited for it
would plainly miss the test's generous deadline.  The stream view and the
pane run in a real (headless) Textual app, their refresh interval 60 s for
the same reason.  Last, the console keeps its start-up out of the cyclic
collector's full collections while it runs.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widget import Widget

import studymon.engine.live.pump as pump_module
from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.ledger import Record
from studymon.engine.contract.spec import StudySpec
from studymon.engine.events import Progress, RecordsSeen, StudyEvent
from studymon.engine.io.pace import Pace
from studymon.engine.kill.reads import LedgerReads
from studymon.engine.live.pump import READ_AT_ONCE_PER_SECOND, LedgerPump
from studymon.tui.app import Planned, StudymonApp
from studymon.widgets.ledger_stream import SHOWN_AT_ONCE_PER_SECOND, LedgerStream
from studymon.widgets.study_pane import StudyPane
from tests.waits import until_async

DEADLINE = 5.0  # seconds: generous, and still far below the 30 s gathering and 60 s refresh interval


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def record(seq: int) -> Record:
    return Record(seq, "2026-12-01T00:00:00.000Z", "decision", {"name": f"mk-{seq:05d}", "round": 1}, seq, seq * 100)


# --- the pace ----------------------------------------------------------------------
def test_pace_is_slow_up_to_its_rate_and_busy_beyond_it_for_a_second() -> None:
    clock = Clock()
    pace = Pace(5, clock)
    for _ in range(20):  # 5 a second, steady: slow all along
        pace.note()
        assert not pace.busy
        clock.now += 0.2
    pace.note(6)  # a burst: 6 at once, more than 5 within a second
    assert pace.busy
    clock.now += 0.99
    assert pace.busy
    clock.now += 0.02  # a second after the burst, nothing more came
    assert not pace.busy
    pace.note(10_000)  # a long burst is remembered as per_second + 1 times, no more
    assert pace.busy
    assert len(pace._times) == 6
    with pytest.raises(ValueError):
        Pace(0)


# --- the pump ----------------------------------------------------------------------
async def test_pump_reads_a_slow_ledger_at_each_append_and_gathers_a_busy_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pump_module, "GATHER", 30.0)
    spec = StudySpec("s1", tmp_path / "s1")
    spec.folder.study.mkdir(parents=True)
    ledger = spec.folder.ledger
    ledger.write_bytes(b"")
    seen: list[int] = []
    arrived = asyncio.Event()

    def emit(event: StudyEvent) -> None:
        if isinstance(event, RecordsSeen) and event.records:
            seen.extend(r.seq for r in event.records)
            arrived.set()

    reads = LedgerReads(spec.folder.ledger, Accounts())
    pump = LedgerPump(spec, reads, emit, on_records=lambda: None, on_write_error=lambda _: None)
    clock = Clock()
    pump.pace = Pace(READ_AT_ONCE_PER_SECOND, clock)
    pump.open()
    waits: list[float] = []  # the pump's waits on its notice, begun
    waited = asyncio.Event()
    wait_async = pump.notifier.wait_async

    async def noted_wait(timeout: float) -> bool:
        waits.append(timeout)
        waited.set()
        return await wait_async(timeout)

    pump.notifier.wait_async = noted_wait  # type: ignore[method-assign]
    task = asyncio.create_task(pump.run())

    def append(seq: int) -> None:
        with open(ledger, "ab") as fh:
            fh.write(
                json.dumps(
                    {
                        "seq": seq,
                        "at": "2026-12-01T00:00:00.000Z",
                        "kind": "decision",
                        "content": {"name": "x", "round": 1},
                    }
                ).encode()
                + b"\n"
            )

    async def shown(seq: int, within: float) -> bool:
        deadline = time.monotonic() + within
        while seq not in seen:
            arrived.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(arrived.wait(), left)
            except TimeoutError:
                return False
        return True

    try:
        await until_async(lambda: waits, DEADLINE, "the pump to wait on its notice", wake=waited)
        # Slow: a record every 0.2 s of the pace's clock, each read at once (not after 30 s).
        for seq in range(1, 6):
            append(seq)
            assert await shown(seq, DEADLINE), f"record {seq} of a slow ledger was not read at once"
            clock.now += 0.2
        # A burst: read at once until more than READ_AT_ONCE_PER_SECOND came within a second...
        clock.now += 1.0
        seq = 6
        while not pump.pace.busy:
            append(seq)
            assert await shown(seq, DEADLINE)
            seq += 1
            assert seq - 6 <= READ_AT_ONCE_PER_SECOND + 1
        assert seq - 6 == READ_AT_ONCE_PER_SECOND + 1
        # ... then busy: the next append is gathered (for 30 s here).
        append(seq)
        assert not await shown(seq, 0.5), "a busy ledger's append was read without gathering"
    finally:
        pump.stop()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        pump.close()


# --- the stream view and the pane ---------------------------------------------------
class Harness(App[None]):
    def __init__(self, make: Callable[[], Widget]) -> None:
        super().__init__()
        self.make = make

    def compose(self) -> ComposeResult:
        yield self.make()


async def test_a_slow_stream_shows_every_record_at_once_and_a_busy_one_waits_for_its_catch_up() -> None:
    clock = Clock()
    app = Harness(lambda: LedgerStream(refresh_interval=60.0, clock=clock, id="s"))
    async with app.run_test() as pilot:
        stream = app.query_one(LedgerStream)
        await pilot.pause()
        # Five a second (two within any 0.5 s, which the refresh interval used to hold back): each at once.
        for seq in range(1, 21):
            stream.add_records([record(seq)])
            assert stream.lines.virtual_size.height == seq, f"record {seq} of a slow stream waited"
            assert not stream.busy
            clock.now += 0.2
        # A burst: past SHOWN_AT_ONCE_PER_SECOND within a second the stream is busy, and waits.
        for seq in range(21, 21 + SHOWN_AT_ONCE_PER_SECOND):
            stream.add_records([record(seq)])
        assert stream.busy
        shown = stream.lines.virtual_size.height
        assert shown < 20 + SHOWN_AT_ONCE_PER_SECOND
        # A second later, with nothing in between, it is slow again: the next record shows the rest with it.
        clock.now += 1.01
        stream.add_records([record(21 + SHOWN_AT_ONCE_PER_SECOND)])
        assert not stream.busy
        assert stream.lines.virtual_size.height == 21 + SHOWN_AT_ONCE_PER_SECOND
        await pilot.pause()
        height = stream.lines.scrollable_content_region.height
        assert stream.lines.render_line(height - 1).text.lstrip().startswith(f"{21 + SHOWN_AT_ONCE_PER_SECOND} ")


async def test_the_pane_shows_a_slow_studys_progress_at_once_and_a_busy_ones_on_the_grid() -> None:
    app = Harness(lambda: StudyPane("s1", "inforsi", clock=lambda: 0.0, wall_clock=lambda: 0.0, refresh_interval=60.0))
    async with app.run_test(size=(60, 48)) as pilot:
        pane = app.query_one(StudyPane)
        await pilot.pause()
        for seq in (1, 2):
            pane.post_event(RecordsSeen("s1", (record(seq),)))
            pane.post_event(Progress("s1", seq, "proposal", 10.0, 10.0, ()))
            await pilot.pause()
            assert pane.progress is not None and pane.progress.round == seq, "a slow study's progress waited"
            assert pane.stream.line_count == seq
        busy = tuple(record(seq) for seq in range(3, 4 + SHOWN_AT_ONCE_PER_SECOND))
        pane.post_event(RecordsSeen("s1", busy))
        pane.post_event(Progress("s1", 3, "proposal", 10.0, 10.0, ()))
        await pilot.pause()
        assert pane.stream.busy
        assert pane.progress.round == 2, "a busy study's progress goes on the refresh grid"
        pane.flush()
        assert pane.progress.round == 3


# --- the collector -------------------------------------------------------------------
async def test_the_console_freezes_its_start_up_for_the_collector_and_thaws_it_on_leaving() -> None:
    gc.unfreeze()
    app = StudymonApp(
        [Planned(StudySpec("s1", Path("/nonexistent/studymon-latency/s1")), "inforsi")], start_engine=False
    )
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert gc.get_freeze_count() > 10_000, "the screen's objects are not frozen"
    assert gc.get_freeze_count() == 0, "the console left its objects frozen"
