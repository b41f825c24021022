"""The two container runtimes, against the real thing: a Docker engine (skipped
without one, a failure with STUDYMON_REQUIRE_ALL=1) and the process runtime.

The same tests run on both, because the checks downstream are one piece of
code for both: inspect shapes, exit codes, logs, lists, event windows, name
conflicts, forced removal and the live stream.  Process-only tests prove what
Docker gives by construction: a container outlives a SIGKILLed starter, and a
lost shim is reported ``dead``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import psutil
import pytest

from studymon.engine.io.clock import parse_rfc3339
from studymon.engine.runtimes.base import ContainerConflict, NoSuchContainer, Runtime, RuntimeUnavailable
from studymon.engine.runtimes.process import ProcessRuntime
from studymon.refstudy.image import IMAGE
from tests.waits import until

ROOT = Path(__file__).resolve().parent.parent
PAYLOAD = ["sh", "-c", "sleep 1; echo '{\"a\": 1}'"]
LONG = ["sh", "-c", "sleep 30"]
NS_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


class Harness:
    """A runtime plus unique names for one test, and cleanup of what it made."""

    def __init__(self, runtime: Runtime) -> None:
        self.rt = runtime
        self.prefix = f"smtest-{uuid.uuid4().hex[:8]}-"

    def name(self, suffix: str) -> str:
        return self.prefix + suffix

    def run(self, suffix: str, command: list[str], **kw: Any) -> dict[str, Any]:
        return self.rt.run(self.name(suffix), command, image=IMAGE, **kw)

    def cleanup(self) -> None:
        for found in self.rt.list(self.prefix):
            try:
                self.rt.remove(found["Name"].lstrip("/"), force=True)
            except NoSuchContainer:
                pass


@pytest.fixture(params=["process", "docker"])
def h(request: pytest.FixtureRequest) -> Iterator[Harness]:
    if request.param == "docker":
        request.getfixturevalue("docker_engine")
        from studymon.engine.runtimes.docker import DockerRuntime

        runtime: Runtime = DockerRuntime()
    else:
        runtime = ProcessRuntime()
    harness = Harness(runtime)
    try:
        yield harness
    finally:
        harness.cleanup()


LIFECYCLE = ("create", "start", "die", "destroy")


def of(events: list[dict[str, Any]], name: str, actions: tuple[str, ...] = LIFECYCLE) -> list[str]:
    """The lifecycle actions of ``name``'s events, in order (Docker adds others, e.g. ``kill``)."""
    return [e["Action"] for e in events if e["Actor"]["Attributes"].get("name") == name and e["Action"] in actions]


def check_event_shape(event: dict[str, Any]) -> None:
    assert event["Type"] == "container"
    assert event["status"] == event["Action"]
    assert event["id"] == event["Actor"]["ID"] and re.fullmatch(r"[0-9a-f]{64}", event["id"])
    assert event["scope"] == "local" and "from" in event
    assert event["time"] == event["timeNano"] // 1_000_000_000


# --- both runtimes -----------------------------------------------------------------
def test_runtime_protocol(h: Harness) -> None:
    assert isinstance(h.rt, Runtime)
    assert h.rt.kind in ("docker", "process")
    assert abs(h.rt.now() - time.time()) < 5


def test_run_inspect_wait_logs(h: Harness) -> None:
    name = h.name("payload")
    started = h.run("payload", PAYLOAD, env={"SMTEST": "1"}, labels={"smtest": "yes"})
    assert started["Name"] == "/" + name
    assert re.fullmatch(r"[0-9a-f]{64}", started["Id"])
    st = started["State"]
    assert st["Running"] is True and st["Status"] == "running"
    assert NS_TIME.match(started["Created"]) and NS_TIME.match(st["StartedAt"])
    assert parse_rfc3339(st["StartedAt"]) >= parse_rfc3339(started["Created"])
    assert started["Config"]["Labels"]["smtest"] == "yes"
    assert started["Config"]["Image"] == IMAGE

    running = h.rt.inspect(name)
    assert running is not None and running["State"]["Running"] is True

    assert h.rt.wait(name, timeout=30) == 0
    done = h.rt.inspect(name)
    assert done is not None
    ds = done["State"]
    assert (ds["Running"], ds["Status"], ds["ExitCode"]) == (False, "exited", 0)
    assert done["Id"] == started["Id"] and ds["StartedAt"] == st["StartedAt"]
    assert parse_rfc3339(ds["FinishedAt"]) - parse_rfc3339(ds["StartedAt"]) >= 0.9
    assert json.loads(h.rt.logs(name)) == {"a": 1}


def test_exit_code_env_and_stdout_only(h: Harness) -> None:
    name = h.name("code")
    h.run("code", ["sh", "-c", 'echo "$SMTEST_VALUE"; echo noise >&2; exit 7'], env={"SMTEST_VALUE": "seen"})
    assert h.rt.wait(name, timeout=30) == 7
    assert h.rt.inspect(name)["State"]["ExitCode"] == 7  # type: ignore[index]
    assert h.rt.logs(name) == "seen\n"


def test_wait_times_out(h: Harness) -> None:
    name = h.name("slow")
    h.run("slow", LONG)
    begun = time.monotonic()
    assert h.rt.wait(name, timeout=0.5) is None
    assert time.monotonic() - begun < 5


def test_missing_names(h: Harness) -> None:
    missing = h.name("nothing")
    assert h.rt.inspect(missing) is None
    with pytest.raises(NoSuchContainer):
        h.rt.wait(missing, timeout=1)
    with pytest.raises(NoSuchContainer):
        h.rt.logs(missing)
    with pytest.raises(NoSuchContainer):
        h.rt.remove(missing, force=True)


def test_list_by_prefix(h: Harness) -> None:
    h.run("a-1", ["true"])
    h.run("a-2", ["true"])
    h.run("b-1", ["true"])
    names = sorted(i["Name"] for i in h.rt.list(h.name("a-")))
    assert names == ["/" + h.name("a-1"), "/" + h.name("a-2")]
    assert len(h.rt.list(h.prefix)) == 3
    # A prefix is a prefix, not a pattern: the dot must not match any character.
    assert h.rt.list(h.prefix.replace("-", ".")) == []


def test_events_in_window(h: Harness) -> None:
    before, target, after = h.name("before"), h.name("target"), h.name("after")
    h.run("before", ["true"])
    h.rt.wait(before, timeout=30)
    since = h.rt.now()
    h.run("target", PAYLOAD)
    assert h.rt.wait(target, timeout=30) == 0
    until = h.rt.now()
    h.run("after", ["true"])
    h.rt.wait(after, timeout=30)

    window = h.rt.events(since, until)
    assert of(window, target) == ["create", "start", "die"]
    assert of(window, before) == [] and of(window, after) == []
    for event in window:
        check_event_shape(event)
        assert since <= event["timeNano"] / 1e9 <= until
    die = [e for e in window if e["Action"] == "die" and e["Actor"]["Attributes"]["name"] == target][0]
    assert die["Actor"]["Attributes"]["exitCode"] == "0"
    assert die["Actor"]["Attributes"]["image"] == IMAGE


def test_events_sub_second_windows(h: Harness) -> None:
    """Windows are exact to well under a millisecond, boundaries included."""
    name = h.name("precise")
    since = h.rt.now()
    h.run("precise", ["true"])
    h.rt.wait(name, timeout=30)
    events = [e for e in h.rt.events(since, h.rt.now()) if e["Actor"]["Attributes"]["name"] == name]
    create, start = events[0]["timeNano"] / 1e9, events[1]["timeNano"] / 1e9
    assert start - create > 0.001
    assert of(h.rt.events(create, create), name) == ["create"]
    assert of(h.rt.events(start, start), name) == ["start"]
    assert of(h.rt.events(create + 0.0002, start - 0.0002), name) == []
    assert of(h.rt.events(create - 0.0002, start - 0.0002), name) == ["create"]
    assert of(h.rt.events(create + 0.0002, start + 0.0002), name) == ["start"]


def test_duplicate_name_conflicts(h: Harness) -> None:
    name = h.name("twice")
    first = h.run("twice", LONG)
    with pytest.raises(ContainerConflict):
        h.run("twice", PAYLOAD)
    still = h.rt.inspect(name)
    assert still is not None and still["Id"] == first["Id"] and still["State"]["Running"]


def test_remove_needs_force_when_running(h: Harness) -> None:
    name = h.name("busy")
    h.run("busy", LONG)
    with pytest.raises(ContainerConflict):
        h.rt.remove(name)
    assert h.rt.inspect(name)["State"]["Running"]  # type: ignore[index]


def test_remove_force_running_gives_die_and_destroy(h: Harness) -> None:
    name = h.name("doomed")
    h.run("doomed", LONG)
    since = h.rt.now()
    h.rt.remove(name, force=True)
    assert h.rt.inspect(name) is None
    # The engine may record the destroy a moment after answering.
    events = until(
        lambda: (lambda ev: ev if "destroy" in of(ev, name) else None)(h.rt.events(since, h.rt.now())),
        10, "the destroy event", step=0.02,
    )
    assert of(events, name) == ["die", "destroy"]
    assert of(events, name, ("kill", "die", "destroy")) == ["kill", "die", "destroy"]
    die = [e for e in events if e["Action"] == "die"][0]
    assert die["Actor"]["Attributes"]["exitCode"] == "137"
    with pytest.raises(NoSuchContainer):
        h.rt.remove(name, force=True)


def test_remove_exited(h: Harness) -> None:
    name = h.name("finished")
    h.run("finished", ["true"])
    h.rt.wait(name, timeout=30)
    h.rt.remove(name)
    assert h.rt.inspect(name) is None
    h.run("finished", ["true"])  # the name is free again


def check_stream(h: Harness, payload: list[str]) -> list[dict[str, Any]]:
    """Stream while a container runs ``payload``; its events arrive live, once each, and the stream stops."""
    name = h.name("streamed")
    got: list[dict[str, Any]] = []
    lock = threading.Lock()
    stop = threading.Event()

    def collect(event: dict[str, Any]) -> None:
        with lock:
            got.append(event)

    def snapshot() -> list[dict[str, Any]]:
        with lock:
            return list(got)

    thread = threading.Thread(target=h.rt.stream, args=(collect, stop), daemon=True)
    thread.start()
    # The stream only promises events after it has connected: run probes until one shows.
    probes = iter(range(100))

    def connected() -> bool:
        suffix = f"probe-{next(probes)}"
        h.run(suffix, ["true"])
        try:
            until(lambda: of(snapshot(), h.name(suffix)), 1.0, f"the events of {suffix}", step=0.02)
        except pytest.fail.Exception:
            return False  # not shown within a second: not connected yet, the next probe
        return True

    until(connected, 20, "the stream to connect", step=0.02)

    h.run("streamed", payload)
    until(lambda: of(snapshot(), name)[:1] == ["create"], 10, "create", step=0.02)
    assert h.rt.wait(name, timeout=30) == 0
    until(lambda: "die" in of(snapshot(), name), 10, "die", step=0.02)
    assert of(snapshot(), name) == ["create", "start", "die"]
    for event in snapshot():
        check_event_shape(event)
    keys = [(e["Action"], e["id"], e["timeNano"]) for e in snapshot()]
    assert len(keys) == len(set(keys))

    stopped = time.monotonic()
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
    assert time.monotonic() - stopped < 2.0
    return snapshot()


def test_stream_delivers_live_and_stops(h: Harness) -> None:
    check_stream(h, ["sh", "-c", "sleep 0.3"])


# --- Docker only -------------------------------------------------------------------
def test_docker_unreachable_is_clear(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from studymon.engine.runtimes.docker import DockerRuntime, docker_answers

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    begun = time.monotonic()
    assert docker_answers(0.5) is False
    assert time.monotonic() - begun < 5
    with pytest.raises(RuntimeUnavailable, match="no Docker engine answers"):
        DockerRuntime()


def test_docker_answers_and_clock(docker_engine: None) -> None:
    from studymon.engine.runtimes.docker import DockerRuntime, docker_answers

    assert docker_answers(3.0) is True
    rt = DockerRuntime()
    assert abs(rt.clock_offset) < 5 and rt.clock_uncertainty < 5
    begun = time.perf_counter()
    for _ in range(1000):
        rt.now()
    assert time.perf_counter() - begun < 0.1  # no round trip per call


def test_docker_stream_in_chunks(docker_engine: None) -> None:
    """The SSH way (no closable socket): one-second ``until`` chunks, nothing lost or doubled at the seams."""
    from studymon.engine.runtimes.docker import DockerRuntime

    rt = DockerRuntime()
    rt.closable_streams = False
    harness = Harness(rt)
    try:
        check_stream(harness, ["sh", "-c", "sleep 2.5"])  # spans at least two chunk seams
    finally:
        harness.cleanup()


# --- process runtime only ----------------------------------------------------------
STARTER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from studymon.engine.runtimes.process import ProcessRuntime
state = ProcessRuntime().run(sys.argv[2], ["sh", "-c", "sleep 1.5; echo done; exit 3"])
print(state["Id"], flush=True)
time.sleep(60)  # stands in for a study's own work
"""


def test_process_container_survives_sigkill_of_its_starter() -> None:
    rt = ProcessRuntime()
    name = f"smtest-{uuid.uuid4().hex[:8]}-orphan"
    since = rt.now()
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, str(ROOT), name],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        cid = starter.stdout.readline().strip()  # type: ignore[union-attr]
        assert re.fullmatch(r"[0-9a-f]{64}", cid)
        before = rt.inspect(name)
        assert before is not None and before["State"]["Running"]
        os.killpg(starter.pid, signal.SIGKILL)  # the starter and its whole group
        starter.wait(10)
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait()
    after = rt.inspect(name)
    assert after is not None and after["State"]["Running"]
    assert (after["Id"], after["State"]["StartedAt"]) == (cid, before["State"]["StartedAt"])
    assert not any(p.pid == starter.pid for p in psutil.Process(after["State"]["Pid"]).parents())

    assert rt.wait(name, timeout=30) == 3
    assert rt.logs(name) == "done\n"
    events = rt.events(since, rt.now())  # the die is recorded before the state wait reads
    assert of(events, name) == ["create", "start", "die"]
    assert events[-1]["Actor"]["Attributes"]["exitCode"] == "3"
    rt.remove(name)


def test_process_dead_shim_is_reported_dead() -> None:
    rt = ProcessRuntime()
    name = f"smtest-{uuid.uuid4().hex[:8]}-lost"
    started = rt.run(name, LONG)
    command = psutil.Process(started["State"]["Pid"])
    shim = command.parent()
    assert shim is not None
    shim.kill()
    dead = until(lambda: (lambda i: i if i and i["State"]["Status"] == "dead" else None)(rt.inspect(name)), 10, "dead",
                 step=0.02)
    assert dead["State"]["Running"] is False
    assert command.is_running()  # the command itself goes on
    assert rt.wait(name, timeout=0.3) is None  # not over while its command runs
    since = rt.now()
    rt.remove(name, force=True)
    assert not command.is_running() or command.status() == psutil.STATUS_ZOMBIE
    assert of(rt.events(since, rt.now()), name) == ["die", "destroy"]


def test_process_start_is_recorded_after_its_state_and_die_before_its_state(process_runtime_root: Path) -> None:
    """Whoever saw a start event and inspects the container then sees it started: a kill at a container's start
    inspects it after the event, and the other order let it see the container still created (the target was taken
    for a run charged but not started).  Whoever saw it exited finds its die recorded: a study waits for its run,
    and the console closes a window at the result it then writes."""
    from studymon.engine.runtimes.shim import _record_exit, _record_start

    rt = ProcessRuntime()
    name = f"smtest-{uuid.uuid4().hex[:8]}-order"
    rt.run(name, LONG)
    seen: list[tuple[str, str]] = []
    real = rt._append_event

    stamps: list[tuple[str, int, int]] = []  # (action, the event's time, when the state it follows was written)
    written = [0]
    write = rt.state.write_json

    def write_json(*args: Any, **kw: Any) -> None:
        write(*args, **kw)
        written[0] = time.time_ns()

    def append(event: dict[str, Any]) -> None:
        found = rt.inspect(name)
        seen.append((event["Action"], found["State"]["Status"] if found else "none"))
        stamps.append((event["Action"], event["timeNano"], written[0]))
        real(event)

    rt._append_event = append  # type: ignore[method-assign]
    rt.state.write_json = write_json  # type: ignore[method-assign]
    try:
        with rt._container(name) as dir_fd:
            state = rt._read(dir_fd, name, "state.json")
            assert state is not None
            # As the shim finds it before the start: created, on disk too.
            state["State"].update(Status="created", Running=False, Pid=0, StartedAt="0001-01-01T00:00:00Z")
            rt.state.write_json(dir_fd, "state.json", state)
            _record_start(rt, dir_fd, state, os.getpid())
            _record_exit(rt, dir_fd, state, 0)
    finally:
        rt._append_event = real  # type: ignore[method-assign]
        rt.remove(name, force=True)
    assert seen == [("start", "running"), ("die", "running")]
    # A start is stamped before its state is written: the creator returns once it reads the state and the study
    # records its run's start then, never before the start's time.
    (_, start_ns, start_written), _ = stamps
    assert 0 < start_ns <= start_written, (start_ns, start_written)


def test_process_start_failure_is_reported() -> None:
    rt = ProcessRuntime()
    name = f"smtest-{uuid.uuid4().hex[:8]}-nocmd"
    with pytest.raises(RuntimeError, match="did not start"):
        rt.run(name, ["/no/such/program"])
    found = rt.inspect(name)
    assert found is not None
    assert (found["State"]["Status"], found["State"]["ExitCode"]) == ("created", 127)
    assert rt.wait(name, timeout=1) == 127
    rt.remove(name)


def test_process_invalid_name_is_refused() -> None:
    with pytest.raises(ValueError, match="invalid container name"):
        ProcessRuntime().run("../escape", ["true"])


def test_process_root_defaults_to_xdg_state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("STUDYMON_PROCESS_RUNTIME")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert ProcessRuntime().root == tmp_path / "studymon" / "process-runtime"
