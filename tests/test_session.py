"""A study session driven directly through the engine API, as a front end does."""

from __future__ import annotations

import asyncio
from pathlib import Path

from studymon.engine.events import KillStep, ProcessEnded, StudyEvent
from studymon.engine.prepare import create_fresh, plan_fresh
from studymon.engine.supervisor import Supervisor
from tests.studies import template


async def _until(predicate, timeout: float) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.02)


def test_a_resume_asked_while_the_kill_is_still_capturing_is_kept(tmp_path: Path) -> None:
    """The console enables Resume as soon as the controller is gone; that resume must not be lost."""
    t = template(tmp_path, backend="process", budget=20, diagnosisSeconds=3)
    specs, tpl, backend = plan_fresh([f"a={tmp_path / 'a'}"], t, [], "process")
    create_fresh(specs, tpl, backend)
    events: list[StudyEvent] = []

    async def scenario() -> list:
        sup = Supervisor(events.append)
        s = sup.add(specs[0], resume=False, armed=False, linger=True)
        task = asyncio.ensure_future(sup.run())
        await _until(lambda: bool(s.accounts.in_flight()), 30)
        assert s.kill_now(auto_resume=False)
        await _until(lambda: s.controller is not None and s.controller.ending is not None, 10)
        assert s.resume()  # at once, while the kill is still capturing
        return await asyncio.wait_for(task, 60)

    results = asyncio.run(scenario())
    assert results[0].finished and results[0].judgement is not None and results[0].judgement.ok is True
    steps = [e.step for e in events if isinstance(e, KillStep)]
    assert "resumed" in steps and "settled" in steps
    ended = [(e.code, e.signal) for e in events if isinstance(e, ProcessEnded)]
    assert ended == [(None, "SIGKILL"), (0, None)]


def test_attaching_to_a_long_ledger_shows_its_end_first_and_keeps_memory_flat(tmp_path: Path) -> None:
    import json

    from studymon.engine.events import RecordsSeen
    from studymon.engine.evidence import append_jsonl, write_json
    from studymon.engine.pump import SHOWN_ON_CATCH_UP
    from studymon.engine.spec import StudySpec

    out = tmp_path / "long"
    (out / "study").mkdir(parents=True)
    write_json(out / "research.json", {"command": ["true"], "study": "long", "backend": "process"})
    append_jsonl(out / "launches.jsonl", {"event": "start", "pid": 1, "at": "x", "resume": False})
    append_jsonl(out / "launches.jsonl", {"event": "end", "pid": 1, "at": "x", "code": 1, "signal": None})
    n = 100_000
    with open(out / "study" / "ledger.jsonl", "w") as fh:
        fh.write(json.dumps({"seq": 1, "at": "t", "kind": "studyOpen", "content": {"budget": 0}}) + "\n")
        fh.writelines(
            json.dumps({"seq": seq, "at": "t", "kind": "stageOpen", "content": {"stage": "proposal", "round": seq}})
            + "\n"
            for seq in range(2, n + 1)
        )
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
