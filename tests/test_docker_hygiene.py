"""Docker connections and threads end with their user: a closed runtime, a stopped stream, an ended study.

Counted from the process's own descriptors: a socket whose peer
(``SO_PEERCRED``) is the Docker daemon is a connection to the engine,
whatever opened it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.events import StudyEvent
from studymon.engine.prepare import create_fresh, plan_fresh
from studymon.engine.runtimes.docker import DockerRuntime, daemon_identity
from studymon.engine.supervisor import Supervisor
from studymon.refstudy.image import IMAGE
from tests.studies import template

pytestmark = pytest.mark.docker

EVENT_THREADS = ("docker-events-closer",)


def engine_pid() -> int:
    runtime = DockerRuntime()
    try:
        identity = daemon_identity(runtime.socket_path)
    finally:
        runtime.close()
    if identity is None:
        pytest.skip("the Docker engine is not behind a local socket of this pid namespace")
    return identity["pid"]


def engine_sockets(pid: int) -> set[int]:
    """Our descriptors that are connections to the daemon ``pid``."""
    found = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                continue
            sock = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue  # closed in between
        try:
            if sock.family != socket.AF_UNIX:
                continue
            peer = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        except OSError:
            continue
        finally:
            sock.close()  # the duplicate only
        if peer == pid:
            found.add(int(name))
    return found


def threads_named(*prefixes: str) -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(prefixes)]


def test_a_closed_runtime_keeps_no_connection_and_its_stream_leaves_no_thread(docker_engine: None) -> None:
    pid = engine_pid()
    before = engine_sockets(pid)
    runtime = DockerRuntime()
    stop = threading.Event()
    live = threading.Event()
    seen: list[dict[str, Any]] = []
    streaming = threading.Thread(target=runtime.stream, args=(seen.append, stop),
                                 kwargs={"on_live": lambda _t: live.set()}, name="test-stream")
    streaming.start()
    try:
        assert live.wait(10)
        name = f"hy{uuid.uuid4().hex[:8]}"
        runtime.run(name, ["true"], image=IMAGE)
        assert runtime.wait(name, timeout=30) == 0
        runtime.remove(name)
        deadline = time.monotonic() + 10
        while not any(e.get("Action") == "destroy" and e["Actor"]["Attributes"].get("name") == name for e in seen):
            assert time.monotonic() < deadline, "no destroy event"
            time.sleep(0.01)
        # In use, the runtime holds connections (the stream's and the pool's): the count sees them.
        assert engine_sockets(pid) - before
    finally:
        stop.set()
        streaming.join(5)
    assert not streaming.is_alive()
    assert not threads_named(*EVENT_THREADS), "the stream's closer thread outlived it"
    runtime.close()
    runtime.close()  # idempotent
    assert engine_sockets(pid) <= before


def test_closing_a_runtime_ends_its_stream(docker_engine: None) -> None:
    pid = engine_pid()
    before = engine_sockets(pid)
    runtime = DockerRuntime()
    stop = threading.Event()
    live = threading.Event()
    gaps: list[tuple[Any, ...]] = []
    streaming = threading.Thread(target=runtime.stream, args=(lambda _e: None, stop),
                                 kwargs={"on_live": lambda _t: live.set(), "on_gap": lambda *a: gaps.append(a)},
                                 name="test-stream")
    streaming.start()
    assert live.wait(10)
    started = time.monotonic()
    runtime.close()
    streaming.join(5)
    assert not streaming.is_alive(), "the stream outlived its runtime"
    assert time.monotonic() - started < 2
    assert not threads_named(*EVENT_THREADS)
    assert engine_sockets(pid) <= before
    assert not gaps, "a closed runtime is not an engine that went away"


@pytest.mark.slow
def test_a_study_on_docker_leaves_no_connection_or_thread_behind(tmp_path: Path, docker_engine: None) -> None:
    pid = engine_pid()
    t = template(tmp_path, backend="docker", budget=10, diagnosisSeconds=1,
                 containerPrefix="hy" + uuid.uuid4().hex[:8])
    out = tmp_path / "h"
    specs, tpl, backend = plan_fresh([f"h={out}"], t, ["h"], "docker")
    create_fresh(specs, tpl, backend)
    before = engine_sockets(pid)
    events: list[StudyEvent] = []

    async def scenario() -> Any:
        sup = Supervisor(events.append)
        sup.add(specs[0], resume=False, armed=True)
        return (await asyncio.wait_for(sup.run(), 120))[0]

    result = asyncio.run(scenario())
    assert result.exit_status == 0, result.message
    # No waiting here: what the session opened is released by the time it returns.
    assert not threads_named("containers-h", *EVENT_THREADS), threading.enumerate()
    assert engine_sockets(pid) <= before
