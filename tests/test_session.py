"""A study session driven directly through the engine API, as a front end does."""

from __future__ import annotations

import asyncio
import json
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.contract.folder import KillFolder
from studymon.engine.contract.spec import StudySpec
from studymon.engine.events import ControllerEnded, KillStep, RecordsSeen, StudyEvent
from studymon.engine.evidence.writer import append_jsonl, write_json
from studymon.engine.io.clock import parse_rfc3339
from studymon.engine.launch.prepare import create_fresh, plan_fresh
from studymon.engine.live.pump import SHOWN_ON_CATCH_UP
from studymon.engine.live.supervisor import Supervisor
from tests.studies import launches, template
from tests.waits import until_async


def test_a_resume_asked_while_the_kill_is_still_capturing_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The console enables Resume as soon as the controller is gone; that resume must not be lost.

    The capture is held (its ledger-at-kill write waits at a gate) until the
    resume has been asked, so the resume comes while it is still capturing.
    """
    import studymon.engine.kill.protocol as kill_mod

    write_ledger_at_kill = kill_mod.write_ledger_at_kill
    capturing, go_on = threading.Event(), threading.Event()

    def held(folder: KillFolder, ledger: Path) -> None:
        capturing.set()
        assert go_on.wait(60), "the test never let the capture go on"
        write_ledger_at_kill(folder, ledger)

    monkeypatch.setattr(kill_mod, "write_ledger_at_kill", held)
    t = template(tmp_path, backend="process", budget=20, diagnosisSeconds=3)
    out = tmp_path / "a"
    specs, tpl, backend = plan_fresh([f"a={out}"], t, [], "process")
    create_fresh(specs, tpl, backend)
    events: list[StudyEvent] = []

    async def scenario() -> list:
        sup = Supervisor(events.append)
        s = sup.add(specs[0], resume=False, armed=False, linger=True)
        task = asyncio.ensure_future(sup.run())
        await until_async(lambda: bool(s.accounts.in_flight()), 30, "a run in flight")
        assert s.kill_now(auto_resume=False)
        await until_async(capturing.is_set, 30, "the kill to be capturing, its controller gone")
        assert s.controller is not None and s.controller.ending is not None
        assert s.resume()  # while the kill is still capturing
        assert not (out / "kills" / "1" / "ledger-at-kill.json").exists()
        assert len(launches(out)) == 2, "no controller was started over the capture"
        go_on.set()
        return await asyncio.wait_for(task, 60)

    results = asyncio.run(scenario())
    assert results[0].finished and results[0].judgement is not None and results[0].judgement.ok is True
    steps = [e.step for e in events if isinstance(e, KillStep)]
    assert "resumed" in steps and "settled" in steps
    ended = [(e.code, e.signal) for e in events if isinstance(e, ControllerEnded)]
    assert ended == [(None, "SIGKILL"), (0, None)]
    # The resume was kept, and made once the capture was whole.
    starts = [line for line in launches(out) if line["event"] == "start"]
    assert [line["resume"] for line in starts] == [False, True]
    captured = (out / "kills" / "1" / "container-after-kill.json").stat().st_mtime
    assert parse_rfc3339(starts[1]["at"]) >= captured - 0.01


def long_ledger(out: Path, n: int) -> None:
    """An attached study's folder whose ledger has ``n`` records: stages opening over a few rounds."""
    (out / "study").mkdir(parents=True)
    write_json(out / "research.json", {"command": ["true"], "study": "long", "backend": "process"})
    append_jsonl(out / "launches.jsonl", {"event": "start", "pid": 1, "at": "x", "resume": False})
    append_jsonl(out / "launches.jsonl", {"event": "end", "pid": 1, "at": "x", "code": 1, "signal": None})
    with open(out / "study" / "ledger.jsonl", "w") as fh:
        fh.write(json.dumps({"seq": 1, "at": "t", "kind": "studyOpen", "content": {"budget": 0}}) + "\n")
        # A handful of rounds: what the accounts keep per round is what the checks need, not per record.
        fh.writelines(
            json.dumps({"seq": seq, "at": "t", "kind": "stageOpen", "content": {"stage": "proposal", "round": seq % 7}})
            + "\n"
            for seq in range(2, n + 1)
        )


def test_attaching_to_a_long_ledger_shows_its_end_first(tmp_path: Path) -> None:
    out = tmp_path / "long"
    n = 100_000
    long_ledger(out, n)
    events: list[StudyEvent] = []

    async def scenario() -> None:
        sup = Supervisor(events.append)
        s = sup.add(StudySpec("long", out), resume=False, armed=False, attach=True)
        await asyncio.wait_for(sup.run(), 60)
        assert s.accounts.count == n

    asyncio.run(scenario())
    seen = [e for e in events if isinstance(e, RecordsSeen)]
    first = seen[0]
    assert first.records[-1].seq == n, "the ledger's end is shown first"
    assert first.skipped == first.records[0].seq - 1
    shown = [r.seq for e in seen for r in e.records]
    assert len(shown) == len(set(shown)), "no record is shown twice"
    assert len(shown) <= SHOWN_ON_CATCH_UP
    # The old console saw none of them: the timeline gets them all, once.
    with open(out / "timeline.jsonl") as timeline:
        assert sum(1 for _ in timeline) == n


def test_attaching_keeps_memory_flat_whatever_the_ledgers_length(tmp_path: Path) -> None:
    """The catch-up's peak of Python memory is the same for a ledger three times as long.

    Both are long enough for the peak's steady state: the records shown (at
    most SHOWN_ON_CATCH_UP) and one chunk's records being read (about 1 MiB).

    Measured with tracemalloc from the session's start until the catch-up has
    handed on what it shows; the judge that follows reads the ledger whole by
    design (it is bounded by the evidence's size caps) and is not measured.
    """
    peaks = {}
    for n in (25_000, 75_000):
        out = tmp_path / f"long{n}"
        long_ledger(out, n)
        seen: list[int] = []

        def sink(event: StudyEvent, seen: list[int] = seen) -> None:
            if isinstance(event, RecordsSeen) and tracemalloc.is_tracing():
                seen.append(len(event.records))
                if len(seen) == 2:  # the preview of the end, then the catch-up's records
                    seen.append(tracemalloc.get_traced_memory()[1])
                    tracemalloc.stop()

        async def scenario(out: Path = out, sink: Any = sink) -> None:
            sup = Supervisor(sink)
            sup.add(StudySpec("long", out), resume=False, armed=False, attach=True)
            tracemalloc.start()
            try:
                await asyncio.wait_for(sup.run(), 120)
            finally:
                tracemalloc.stop()

        asyncio.run(scenario())
        assert len(seen) == 3, seen
        peaks[n] = seen[2]
    # 50 000 more records may cost a little, never their size (kept, they would more than double it).
    assert peaks[75_000] <= peaks[25_000] * 1.1 + 500_000, peaks
