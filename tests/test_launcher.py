"""The launcher: own session, keeper-written launches, pid checked before a signal, SIGINT then SIGKILL."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from engine.launcher import Controller, find_running

DEAF = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
POLITE = "import time\ntry:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    raise SystemExit(130)"


def launches(out: Path) -> list[dict]:
    return [json.loads(l) for l in (out / "launches.jsonl").read_text().splitlines()]


async def _launch(out: Path, code: str) -> Controller:
    return await Controller.launch([sys.executable, "-c", code], out, dict(os.environ), resume=False)


def test_sigint_stops_a_polite_controller(tmp_path: Path) -> None:
    async def scenario() -> None:
        c = await _launch(tmp_path, POLITE)
        assert os.getpgid(c.pid) == c.pid and os.getsid(c.pid) == c.pid  # its own session and group
        await asyncio.sleep(0.3)
        ending = await c.stop(grace=5)
        assert (ending.code, ending.signal) == (130, None)

    asyncio.run(scenario())
    assert [(l["event"], l.get("code")) for l in launches(tmp_path)] == [("start", None), ("end", 130)]


def test_sigint_escalates_to_sigkill_after_the_grace(tmp_path: Path) -> None:
    async def scenario() -> float:
        c = await _launch(tmp_path, DEAF)
        await asyncio.sleep(0.3)
        t0 = time.monotonic()
        ending = await c.stop(grace=1.0)
        assert ending.signal == "SIGKILL"
        return time.monotonic() - t0

    took = asyncio.run(scenario())
    assert 0.9 < took < 10


def test_no_signal_to_a_process_that_is_not_the_one_started(tmp_path: Path) -> None:
    async def scenario() -> None:
        c = await _launch(tmp_path, DEAF)
        # Same pid, another start time: a recycled pid must never be signalled or attached.
        impostor = Controller(c.pid, c.start_time - 100.0, tmp_path, None)
        assert impostor.signal_group(0) is False
        assert Controller.attach(c.pid, c.start_time - 100.0, tmp_path) is None
        found = find_running(tmp_path)
        assert found is not None and found.pid == c.pid
        c.kill()
        ending = await c.wait()
        assert ending.signal == "SIGKILL"
        assert find_running(tmp_path) is None

    asyncio.run(scenario())


def test_a_command_that_cannot_start_is_reported(tmp_path: Path) -> None:
    async def scenario() -> None:
        try:
            await Controller.launch([str(tmp_path / "no-such-program")], tmp_path, dict(os.environ), resume=False)
        except RuntimeError as exc:
            assert "cannot start" in str(exc)
        else:
            raise AssertionError("launch of a missing program succeeded")

    asyncio.run(scenario())
    assert [l["event"] for l in launches(tmp_path)] == ["start", "end"]
