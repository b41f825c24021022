"""A study's container watch over the real process runtime, when the runtime's inspect fails.

The only stand-in is a wrapper around the real runtime whose first inspects
raise (:class:`tests.faulty_runtime.FaultyInspect`), as a Docker engine does
that answers an error or drops the connection.  Containers, their events and
the stream are real.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from typing import Any

from studymon.engine.contract.folder import KillFolder
from studymon.engine.events import ContainerChanged, Problem, StudyEvent
from studymon.engine.kill.recording import EventRecorder
from studymon.engine.live.containers import ContainerWatch
from studymon.engine.runtimes import open_runtime
from tests.faulty_runtime import FaultyInspect
from tests.waits import until_async

PREFIX = "watchfault-s-"


async def _until(condition: Any, what: str, deadline: float = 20.0) -> None:
    await until_async(condition, deadline, what, step=0.02)


async def test_a_failed_inspect_costs_one_change_its_detail_not_the_stream() -> None:
    runtime = open_runtime("process")
    recorder = EventRecorder(PREFIX, runtime.history)
    seen: list[StudyEvent] = []
    watch = ContainerWatch(
        "s", "process", PREFIX, recorder, seen.append,
        open_stream_runtime=lambda backend: FaultyInspect(  # type: ignore[return-value]
            calls=2, real=open_runtime(backend), error=ConnectionResetError("the engine dropped the connection")
        ),
    )
    watch.start()
    try:
        assert await asyncio.to_thread(recorder.wait_live, 20.0), "the stream did not come up"

        def changes(name: str) -> list[ContainerChanged]:
            return [e for e in seen if isinstance(e, ContainerChanged) and e.name == name]

        # The first run's create and start are inspected while the runtime fails: the row still comes
        # and goes through its states, from what the events say.
        runtime.run(f"{PREFIX}r1", ["sh", "-c", "sleep 0.3"])
        assert runtime.wait(f"{PREFIX}r1", timeout=30) == 0
        await _until(lambda: [c.action for c in changes(f"{PREFIX}r1")] == ["create", "start", "die"], "r1's die")
        r1 = changes(f"{PREFIX}r1")
        assert [c.status for c in r1] == ["created", "running", "exited"]
        assert r1[0].inspect == {"Name": f"/{PREFIX}r1", "State": {"Status": "created"}}
        assert r1[2].exit_code == 0 and (r1[2].inspect or {}).get("Id"), "the runtime answers again: a full inspect"
        assert watch.statuses[f"{PREFIX}r1"] == "exited"

        # The stream went on: a later run is followed in full.
        runtime.run(f"{PREFIX}r2", ["true"])
        assert runtime.wait(f"{PREFIX}r2", timeout=30) == 0
        await _until(lambda: [c.action for c in changes(f"{PREFIX}r2")] == ["create", "start", "die"], "r2's die")
        assert recorder.live

        # Said once, as the runtime's fault, with the container's name; the stream never said it stopped.
        problems = [e.message for e in seen if isinstance(e, Problem)]
        assert len(problems) == 1, problems
        assert f"{PREFIX}r1" in problems[0] and "dropped the connection" in problems[0], problems
        assert not any("stream stopped" in p for p in problems)
    finally:
        watch.stop()
        await watch.join()
        for name in (f"{PREFIX}r1", f"{PREFIX}r2"):
            try:
                runtime.remove(name, force=True)
            except Exception:  # noqa: BLE001 - a run that never came has nothing to remove
                pass


def test_the_recording_takes_a_container_labelled_as_the_studys_whatever_its_name(tmp_path: Any) -> None:
    """§6.1: labels decide whose a container is; a run of the study under another name is recorded in its window."""
    runtime = open_runtime("process")
    recorder = EventRecorder(PREFIX, runtime.history, "s")
    folder = KillFolder(tmp_path, 1).path
    folder.mkdir(parents=True)
    recorder.on_live(runtime.now())
    recorder.open(1, KillFolder(tmp_path, 1), runtime.now() - 1, set(), runtime.now())

    def event(name: str, **labels: str) -> dict[str, Any]:
        return {"Type": "container", "Action": "start", "id": name, "timeNano": int(runtime.now() * 1e9),
                "Actor": {"ID": name, "Attributes": {"name": name, **labels}}}

    assert recorder.on_event(event("elsewhere-r9", **{"studymon.study": "s"}))  # labelled as this study's
    assert not recorder.on_event(event("elsewhere-r8", **{"studymon.study": "t"}))  # another study's
    assert not recorder.on_event(event("elsewhere-r7"))  # nobody's that the study can tell
    assert recorder.on_event(event(f"{PREFIX}r6"))  # under the study's stem
    lines = [json.loads(line) for line in (folder / "container-events-live.jsonl").read_text().splitlines()]
    recorded = [line["Actor"]["Attributes"]["name"] for line in lines if "Actor" in line]
    assert recorded == ["elsewhere-r9", f"{PREFIX}r6"]


CONTEXT_PREFIX = "watchctx-s-"
WHOSE: contextvars.ContextVar[str] = contextvars.ContextVar("whose")


async def test_what_the_stream_reports_runs_in_the_context_the_watch_was_started_in() -> None:
    """The stream's thread reports into the loop in the starter's context (a front end's, here a test's):
    a thread's own context is empty, and what a front end does with an event there (a timer) would fail
    later, outside it."""
    runtime = open_runtime("process")
    recorder = EventRecorder(CONTEXT_PREFIX, runtime.history)
    seen: list[tuple[str, StudyEvent]] = []
    WHOSE.set("the starter's")
    watch = ContainerWatch("s", "process", CONTEXT_PREFIX, recorder, lambda e: seen.append((WHOSE.get("none"), e)))
    watch.start()
    try:
        assert await asyncio.to_thread(recorder.wait_live, 20.0), "the stream did not come up"
        runtime.run(f"{CONTEXT_PREFIX}r1", ["true"])
        assert runtime.wait(f"{CONTEXT_PREFIX}r1", timeout=30) == 0
        await _until(lambda: any(isinstance(e, ContainerChanged) and e.action == "die" for _, e in seen), "r1's die")
        assert {whose for whose, _ in seen} == {"the starter's"}, seen
    finally:
        watch.stop()
        await watch.join()
        runtime.remove(f"{CONTEXT_PREFIX}r1", force=True)


def test_no_engine_module_calls_into_the_loop_from_a_thread_but_through_loopcall() -> None:
    """``call_soon_threadsafe`` runs its callback in the calling thread's context: every such call goes through
    :class:`~studymon.engine.io.loopcall.LoopCall`, which runs it in the context the engine was started in."""
    from pathlib import Path

    engine = Path(__file__).resolve().parents[1] / "engine"
    callers = sorted(
        str(p.relative_to(engine)) for p in engine.rglob("*.py") if "call_soon_threadsafe" in p.read_text()
    )
    assert callers == ["io/loopcall.py"], callers
