"""A study session driven directly through the engine API, as a front end does."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine.events import KillStep, ProcessEnded, StudyEvent
from engine.prepare import create_fresh, plan_fresh
from engine.supervisor import Supervisor
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
