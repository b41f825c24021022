"""The launcher: own session, keeper-written launches, pid checked before a signal, SIGINT then SIGKILL."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

from studymon.engine.launch.launcher import Controller, find_running, first_start
from tests.waits import until, until_async

# Controllers that say "up" on their output (study.log) once their SIGINT handling is in place.
DEAF = (
    "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); print('up', flush=True)\n"
    "time.sleep(60)  # stands in for a study's own work\n"
)
POLITE = (
    "import time\n"
    "try:\n"
    "    print('up', flush=True)\n"
    "    time.sleep(60)  # stands in for a study's own work\n"
    "except KeyboardInterrupt:\n"
    "    raise SystemExit(130)\n"
)


def launches(out: Path) -> list[dict]:
    return [json.loads(l) for l in (out / "launches.jsonl").read_text().splitlines()]


async def _launch(out: Path, code: str) -> Controller:
    return await Controller.launch([sys.executable, "-c", code], out, dict(os.environ), resume=False)


async def _said_up(out: Path) -> None:
    """Until the controller has written "up" to study.log: its SIGINT handling is in place."""
    log = out / "study.log"
    await until_async(lambda: "up" in log.read_text().split(), 30, "the controller to say it is up",
                      seen=log.read_text)


def test_sigint_stops_a_polite_controller(tmp_path: Path) -> None:
    async def scenario() -> None:
        c = await _launch(tmp_path, POLITE)
        assert os.getpgid(c.pid) == c.pid and os.getsid(c.pid) == c.pid  # its own session and group
        await _said_up(tmp_path)  # inside its try: the SIGINT is a KeyboardInterrupt there
        ending = await c.stop(grace=5)
        assert (ending.code, ending.signal) == (130, None)

    asyncio.run(scenario())
    assert [(l["event"], l.get("code")) for l in launches(tmp_path)] == [("start", None), ("end", 130)]


def test_sigint_escalates_to_sigkill_after_the_grace(tmp_path: Path) -> None:
    async def scenario() -> float:
        c = await _launch(tmp_path, DEAF)
        await _said_up(tmp_path)  # SIGINT ignored from here on: only the SIGKILL can end it
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


# --- the freeze: confirmed stopped, and a killed group really gone ---------------------

# A parent and its child (one process group), each appending to the file argv[1]
# in a tight loop; the child's pid goes to argv[1].child.  The writes are large,
# so a SIGSTOP often lands in the middle of one: the kernel finishes the write
# before the writer stops, and a reader that took the signal's return for the
# stop would see the file grow.  The writers keep the file under 64 MiB.
WRITER = (
    "import os, sys\n"
    "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)\n"
    "chunk = b'x' * (8 << 20)\n"
    "while True:\n"
    "    os.write(fd, chunk)\n"
    "    if os.fstat(fd).st_size > (64 << 20):\n"
    "        os.ftruncate(fd, 0)\n"
)
WRITERS = f"""
import os, subprocess, sys
path = sys.argv[1]
child = subprocess.Popen([sys.executable, "-c", {WRITER!r}, path])
with open(path + ".tmp", "w") as fh:
    fh.write(str(child.pid))
os.replace(path + ".tmp", path + ".child")
exec({WRITER!r})
"""
# The same family, asleep.
SLEEPERS = r"""
import os, subprocess, sys, time
path = sys.argv[1]
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)  # a study's own work"])
with open(path + ".tmp", "w") as fh:
    fh.write(str(child.pid))
os.replace(path + ".tmp", path + ".child")
time.sleep(120)  # stands in for a study's own work
"""


async def _family(out: Path, code: str, path: Path) -> tuple[Controller, int]:
    """Launch ``code`` (a parent that starts a child); the controller and the child's pid."""
    path.touch()
    c = await Controller.launch([sys.executable, "-c", code, str(path)], out, dict(os.environ), resume=False)
    marker = Path(str(path) + ".child")
    await until_async(marker.exists, 30, "the child to be started")
    child = int(marker.read_text())
    assert os.getpgid(child) == c.pid
    return c, child


def _io(pid: int, field: str) -> int:
    """The counter ``field`` of /proc/<pid>/io (``wchar``: bytes written; ``syscr``: read calls)."""
    with open(f"/proc/{pid}/io") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/io")


def _written(pid: int) -> int:
    """Bytes the process ``pid`` has written so far (``wchar`` of /proc/<pid>/io)."""
    return _io(pid, "wchar")


async def _both_write(pids: tuple[int, int], since: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """Wait until both writers have written more than ``since``; their counts then."""

    def counts() -> tuple[int, ...] | None:
        now = tuple(_written(p) for p in pids)
        return now if all(n > s for n, s in zip(now, since)) else None

    return await until_async(counts, 30, "both writers to write", step=0.001)  # type: ignore[return-value]


def test_group_stopped_after_freeze_means_no_process_of_the_group_writes(tmp_path: Path) -> None:
    import subprocess

    path = tmp_path / "written"
    # The span over which nothing may be written: while a writer of the same kind, outside
    # the group and let run only then, writes four chunks (the group's writers, if not
    # stopped, would write meanwhile).  So the span is measured in work done, not in time.
    control_path = tmp_path / "control"
    control_path.touch()
    control = subprocess.Popen([sys.executable, "-c", WRITER, str(control_path)], start_new_session=True)

    def control_writes(chunks: int) -> None:
        base = _written(control.pid)
        os.kill(control.pid, signal.SIGCONT)
        until(lambda: _written(control.pid) >= base + chunks * (8 << 20), 30,
              f"the control writer to write {chunks} chunks", step=0.001)
        os.kill(control.pid, signal.SIGSTOP)

    async def scenario() -> None:
        c, child = await _family(tmp_path, WRITERS, path)
        pids = (c.pid, child)
        try:
            control_writes(1)
            counts = await _both_write(pids)
            for attempt in range(30):
                assert c.freeze()
                deadline = time.monotonic() + 5
                while not c.group_stopped():
                    assert time.monotonic() < deadline, f"attempt {attempt}: the group was never seen stopped"
                size = path.stat().st_size
                frozen = tuple(_written(p) for p in pids)
                control_writes(4)
                assert path.stat().st_size == size, f"attempt {attempt}: the file changed after group_stopped()"
                assert tuple(_written(p) for p in pids) == frozen, f"attempt {attempt}: a writer wrote while stopped"
                assert c.thaw()
                counts = await _both_write(pids, frozen)
        finally:
            c.kill()
            await c.wait()
            assert await c.wait_group_gone(30)
        assert counts

    try:
        asyncio.run(scenario())
    finally:
        control.kill()
        control.wait()


def test_a_group_is_not_gone_while_a_child_of_its_killed_leader_lives(tmp_path: Path) -> None:
    async def scenario() -> None:
        c, child = await _family(tmp_path, SLEEPERS, tmp_path / "family")
        try:
            os.kill(c.pid, signal.SIGKILL)  # the leader only
            ending = await c.wait()
            assert ending.signal == "SIGKILL"
            t0 = time.monotonic()
            assert await c.wait_group_gone(1.0) is False
            assert time.monotonic() - t0 >= 1.0
            os.kill(child, 0)  # still there
            assert not c.group_gone()
        finally:
            os.kill(child, signal.SIGKILL)
        assert await c.wait_group_gone(30.0) is True
        assert c.group_gone()

    asyncio.run(scenario())


def test_a_descendant_that_left_the_group_does_not_hold_up_the_stop(tmp_path: Path) -> None:
    """A run's shim detaches into a session of its own: SIGSTOP to the group never reaches it."""
    import subprocess

    import psutil

    code = (
        "import os, subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time\\nwhile True: pass'], start_new_session=True)\n"
        "while True: time.sleep(0.001)  # stands in for a study's own work\n"
    )
    leader = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        def detached_child() -> psutil.Process | None:
            # Started, and in a session of its own: between its fork and its setsid it is
            # still in the leader's group, where the SIGSTOP would reach it.
            for child in psutil.Process(leader.pid).children():
                with contextlib.suppress(ProcessLookupError):
                    if os.getsid(child.pid) == child.pid:
                        return child
            return None

        detached = until(detached_child, 10, "the detached process to be in a session of its own")
        controller = Controller(leader.pid, psutil.Process(leader.pid).create_time(), tmp_path, None)
        assert controller.freeze()
        until(controller.group_stopped, 5, "the group seen stopped (a process outside it must not hold it up)",
              step=0.001)
        assert detached.status() != psutil.STATUS_STOPPED
    finally:
        for p in psutil.Process(leader.pid).children(recursive=True):
            p.kill()
        leader.kill()
        leader.wait()


def test_a_group_caught_in_a_vfork_is_seen_stopped(tmp_path: Path) -> None:
    """A controller in the middle of starting a process (vfork) is stopped in effect: the confirmation must say so."""
    import asyncio

    from studymon.engine.launch.launcher import Controller

    code = "import subprocess\nwhile True:\n    subprocess.Popen(['true']).wait()\n"

    async def scenario() -> int:
        c = await Controller.launch([sys.executable, "-c", code], tmp_path, dict(os.environ), False)
        caught = 0
        try:
            for _ in range(3000):
                if caught >= 3:
                    break
                assert c.freeze()
                until(c.group_stopped, 0.5, "the stopped group confirmed", step=0.001)
                st = open(f"/proc/{c.pid}/stat").read()
                caught += st[st.rfind(")") + 2] == "D"
                reads = _io(c.pid, "syscr")
                c.thaw()
                # On to another start before the next freeze: each start reads its child's exec
                # pipe, so a read call means the vfork seen (if any) is over, never counted twice.
                until(lambda: _io(c.pid, "syscr") > reads, 5, "the controller to run on after the thaw", step=0.001)
        finally:
            c.kill()
            await c.wait()
        return caught

    caught = asyncio.run(scenario())
    # Most freezes land outside a vfork; the test is about the ones that land inside.
    assert caught >= 1, "no freeze landed inside a vfork: the test proved nothing"


def test_first_start_is_the_first_start_line_whatever_follows(tmp_path: Path) -> None:
    """The running time after a resume or an attach counts from here: the first `start`, never a later one."""
    launches = tmp_path / "launches.jsonl"
    assert first_start(tmp_path) is None  # no launches.jsonl yet
    launches.write_text(
        "not json\n"
        + json.dumps({"event": "end", "pid": 1, "at": "2026-01-01T00:00:00.000Z"}) + "\n"
        + json.dumps({"event": "start", "pid": 7, "at": "2026-01-01T10:00:00.500Z"}) + "\n"
        + json.dumps({"event": "start", "pid": 8, "at": "2026-01-01T11:00:00.000Z"}) + "\n"
    )
    assert first_start(tmp_path) == 1767261600.5
    # A first start whose time is not a time, or is not text: unknown, never a crash.
    launches.write_text(json.dumps({"event": "start", "pid": 7, "at": "yesterday"}) + "\n")
    assert first_start(tmp_path) is None
    launches.write_text(json.dumps({"event": "start", "pid": 7, "at": 12}) + "\n" + "[1, 2]\n")
    assert first_start(tmp_path) is None
