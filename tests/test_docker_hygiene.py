"""Docker connections and threads end with their user: a closed runtime, a stopped stream, an ended study.

Counted from the process's own descriptors: a socket whose peer address is
the engine's (its Unix socket's path, or its TCP host and port) is a
connection to the engine, whatever opened it.  That holds for an engine in
another pid namespace or on another host as well as for a local one.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from studymon.engine.events import StudyEvent
from studymon.engine.launch.prepare import create_fresh, plan_fresh
from studymon.engine.live.supervisor import Supervisor
from studymon.engine.runtimes.docker import DockerRuntime
from studymon.refstudy.image import IMAGE
from tests.studies import template
from tests.waits import until

pytestmark = pytest.mark.docker

EVENT_THREADS = ("docker-events-closer",)


def engine_address() -> object:
    """The address our connections to the engine have as their peer: a socket path, or (ip, port)."""
    runtime = DockerRuntime()
    try:
        if runtime.socket_path:
            return os.path.realpath(runtime.socket_path)
        url = urlsplit(str(runtime.api.base_url))
    finally:
        runtime.close()
    if url.scheme in ("http", "https", "tcp") and url.hostname and url.port:
        return (socket.gethostbyname(url.hostname), url.port)
    pytest.skip(f"connections to an engine at {url.geturl()} are not sockets of this process")


def engine_sockets(address: object) -> set[int]:
    """Our descriptors that are connections to the engine at ``address``."""
    found = set()
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                continue
            sock = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue  # closed in between
        try:
            if sock.family not in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6):
                continue
            peer = sock.getpeername()
        except OSError:
            continue  # not connected
        finally:
            sock.close()  # the duplicate only
        if isinstance(peer, str) and peer:
            peer = os.path.realpath(peer)
        elif isinstance(peer, tuple):
            peer = peer[:2]  # an IPv6 peer has flow and scope too
        if peer == address:
            found.add(int(name))
    return found


def threads_named(*prefixes: str) -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(prefixes)]


def test_a_closed_runtime_keeps_no_connection_and_its_stream_leaves_no_thread(docker_engine: None) -> None:
    address = engine_address()
    before = engine_sockets(address)
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
        until(lambda: any(e.get("Action") == "destroy" and e["Actor"]["Attributes"].get("name") == name for e in seen),
              10, "the container's destroy event")
        # In use, the runtime holds connections (the stream's and the pool's): the count sees them.
        assert engine_sockets(address) - before
    finally:
        stop.set()
        streaming.join(5)
    assert not streaming.is_alive()
    assert not threads_named(*EVENT_THREADS), "the stream's closer thread outlived it"
    runtime.close()
    runtime.close()  # idempotent
    assert engine_sockets(address) <= before


def test_closing_a_runtime_ends_its_stream(docker_engine: None) -> None:
    address = engine_address()
    before = engine_sockets(address)
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
    assert engine_sockets(address) <= before
    assert not gaps, "a closed runtime is not an engine that went away"


@pytest.mark.slow
def test_a_study_on_docker_leaves_no_connection_or_thread_behind(tmp_path: Path, docker_engine: None) -> None:
    address = engine_address()
    t = template(tmp_path, backend="docker", budget=10, diagnosisSeconds=1,
                 containerPrefix="hy" + uuid.uuid4().hex[:8])
    out = tmp_path / "h"
    specs, tpl, backend = plan_fresh([f"h={out}"], t, ["h"], "docker")
    create_fresh(specs, tpl, backend)
    before = engine_sockets(address)
    events: list[StudyEvent] = []

    async def scenario() -> Any:
        sup = Supervisor(events.append)
        sup.add(specs[0], resume=False, armed=True)
        return (await asyncio.wait_for(sup.run(), 120))[0]

    result = asyncio.run(scenario())
    assert result.exit_status == 0, result.message
    # No waiting here: what the session opened is released by the time it returns.
    assert not threads_named("containers-h", *EVENT_THREADS), threading.enumerate()
    assert engine_sockets(address) <= before
