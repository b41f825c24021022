"""Each study's own load: the rate arithmetic, the readers, and whole studies on both runtimes.

The whole-study tests run two studies side by side through the real engine
(``Supervisor``, real processes, real Docker): one whose run computes hard
and one whose run only sleeps.  Their ``load.jsonl`` must tell them apart,
which the machine's load cannot.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.contract.spec import StudySpec
from studymon.engine.events import StudyEvent, StudyLoad
from studymon.engine.evidence.writer import write_json
from studymon.engine.io.clock import parse_rfc3339, rfc3339_ns
from studymon.engine.launch.prepare import create_fresh, plan_fresh
from studymon.engine.live.session import StudySession
from studymon.engine.live.supervisor import Supervisor
from studymon.engine.load import cgroup, studyload
from studymon.engine.load.cgroup import CgroupFiles, locate, parse_mountinfo, read_counters, read_mounts
from studymon.engine.load.dockerstats import counters_of
from studymon.engine.load.loadrate import LoadRates, Reading
from studymon.engine.load.proctree import ProcessTable, read_process
from studymon.engine.load.studyload import LoadMeter, load_line
from tests.waits import until, until_async

ROOT = Path(__file__).resolve().parent.parent
LOAD_STUDY = ROOT / "tests" / "doubles" / "load_study.py"
RFC3339_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


class Witness:
    """The CPU a computing process uses from now on, as psutil sees it: what a meter's rate must agree with.

    A busy machine gives a computing process less than a core; the meter
    must say what it got, which this reads over the same interval.
    """

    # The meter's interval lies within the witness's, a little shorter (an engine's stats call takes
    # a while): on a busy machine a computing process's share moves meanwhile.
    TOLERANCE = 15.0  # points of a core's percent, or a third of the rate, whichever is more

    def __init__(self, pid: int) -> None:
        import psutil

        self.process = psutil.Process(pid)
        self.cpu, self.at = self.used(), time.monotonic()

    def used(self) -> float:
        times = self.process.cpu_times()
        return times.user + times.system

    def spend(self, seconds: float, timeout: float = 30) -> None:
        """Wait until the process has computed ``seconds`` more: an interval worth a rate."""
        until(lambda: self.used() - self.cpu >= seconds, timeout, f"pid {self.process.pid} to compute {seconds} s")

    def rate(self) -> float:
        """Percent of one core since the witness began."""
        return (self.used() - self.cpu) / (time.monotonic() - self.at) * 100

    def agrees(self, measured: float) -> bool:
        rate = self.rate()
        return rate >= 10 and abs(measured - rate) <= max(self.TOLERANCE, rate / 3)


# --- the rates (pure) ----------------------------------------------------------------------
def test_a_counter_seen_twice_gives_its_growth_over_the_interval() -> None:
    rates = LoadRates(at=1000.0, mono=0.0, cores=2)
    first = rates.update([Reading("p", 5.0, 100, since=900.0)], at=1002.0, mono=2.0)
    assert first is not None and first.cpu == 0.0, "began before the start: only a base, no rate yet"
    second = rates.update([Reading("p", 6.5, 120, since=900.0)], at=1004.0, mono=4.0)
    assert second is not None
    assert second.cpu == pytest.approx(75.0)  # 1.5 CPU seconds in 2 s
    assert second.memory == 120
    assert second.tree_cpu == pytest.approx(75.0) and second.runs == ()


def test_the_interval_is_the_monotonic_clock_not_the_wall_clock() -> None:
    rates = LoadRates(at=1000.0, mono=0.0, cores=2)
    rates.update([Reading("p", 0.0, 0, since=None)], at=1002.0, mono=2.0)
    # The wall clock was set back an hour meanwhile: the rate still comes from the 2 s that passed.
    got = rates.update([Reading("p", 1.0, 0, since=None)], at=1002.0 - 3600, mono=4.0)
    assert got is not None and got.cpu == pytest.approx(50.0)


def test_a_run_that_appears_counts_only_what_it_used_since_it_began_inside_the_interval() -> None:
    rates = LoadRates(at=1000.0, mono=0.0, cores=2)
    rates.update([], at=1002.5, mono=2.5)
    # Started at 1003 (after the previous sample): all its 2 CPU seconds belong to this interval.
    got = rates.update([Reading("c1", 2.0, 10, since=1003.0, run="r1")], at=1005.0, mono=5.0)
    assert got is not None
    assert got.runs == (("r1", pytest.approx(80.0), 10),)
    assert got.cpu == pytest.approx(80.0)


def test_a_counter_first_seen_that_began_before_the_previous_sample_makes_no_spike() -> None:
    rates = LoadRates(at=1000.0, mono=0.0, cores=2)
    rates.update([], at=1002.5, mono=2.5)
    # 500 CPU seconds since long ago (an attached study's old controller, a run found late): not this interval's.
    got = rates.update([Reading("old", 500.0, 10, since=10.0, run="r1"), Reading("x", 9.0, 1, since=None)], 1005.0, 5.0)
    assert got is not None and got.cpu == 0.0
    assert got.runs == (("r1", 0.0, 10),)
    later = rates.update([Reading("old", 501.0, 10, since=10.0, run="r1")], at=1007.5, mono=7.5)
    assert later is not None and later.cpu == pytest.approx(40.0)


def test_a_run_that_disappears_leaves_no_negative() -> None:
    rates = LoadRates(at=1000.0, mono=0.0, cores=2)
    rates.update([Reading("a", 10.0, 5, None, "r1"), Reading("b", 10.0, 5, None, "r2")], at=1002.5, mono=2.5)
    got = rates.update([Reading("b", 11.0, 5, None, "r2")], at=1005.0, mono=5.0)
    assert got is not None
    assert got.runs == (("r2", pytest.approx(40.0), 5),)
    assert got.cpu == pytest.approx(40.0) and got.memory == 5


def test_a_counter_reset_counts_from_zero_when_it_restarted_inside_the_interval_and_never_goes_negative() -> None:
    rates = LoadRates(at=1000.0, mono=0.0, cores=2)
    rates.update([Reading("c", 100.0, 0, since=500.0, run="r")], at=1002.5, mono=2.5)
    # The container restarted at 1003: its counter began again at zero.
    got = rates.update([Reading("c", 1.0, 0, since=1003.0, run="r")], at=1005.0, mono=5.0)
    assert got is not None and got.cpu == pytest.approx(40.0)
    # A counter that went back with no start to tell when: a base only.
    rates.update([Reading("d", 100.0, 0, since=None)], at=1007.5, mono=7.5)
    got = rates.update([Reading("d", 3.0, 0, since=None)], at=1010.0, mono=10.0)
    assert got is not None and got.cpu == 0.0


def test_no_counter_grows_faster_than_every_core() -> None:
    rates = LoadRates(at=1000.0, mono=0.0, cores=2)
    rates.update([Reading("c", 0.0, 0, since=None)], at=1001.0, mono=1.0)
    got = rates.update([Reading("c", 50.0, 0, since=None)], at=1002.0, mono=2.0)
    assert got is not None and got.cpu == pytest.approx(200.0)


def test_a_counter_read_with_a_time_of_its_own_is_rated_over_its_own_interval() -> None:
    rates = LoadRates(at=1000.0, mono=0.0, cores=2)
    rates.update([Reading("c", 10.0, 0, None, "r", taken=1000.2), Reading("p", 0.0, 0, None)], at=1001.0, mono=1.0)
    # Read a second late this time: 2.3 s of its own between the readings, 2 s between the samples.
    got = rates.update([Reading("c", 12.3, 0, None, "r", taken=1002.5), Reading("p", 1.0, 0, None)], 1003.0, 3.0)
    assert got is not None
    assert got.runs == (("r", pytest.approx(100.0), 0),)
    assert got.tree_cpu == pytest.approx(50.0)
    # The same reading given again (no time of its own passed): no rate, never a division by zero.
    again = rates.update([Reading("c", 12.3, 0, None, "r", taken=1002.5)], at=1005.0, mono=5.0)
    assert again is not None and again.cpu == 0.0


def test_no_rate_when_no_time_has_passed() -> None:
    rates = LoadRates(at=1000.0, mono=5.0, cores=2)
    assert rates.update([Reading("c", 1.0, 0, None)], at=1000.0, mono=5.0) is None


def test_shares_are_summed_per_run_and_the_tree_apart() -> None:
    rates = LoadRates(at=1000.0, mono=0.0, cores=4)
    readings = [
        Reading("t1", 0.0, 100, None),
        Reading("t2", 0.0, 50, None),
        Reading("a1", 0.0, 10, None, "inforsi-s-b"),
        Reading("a2", 0.0, 20, None, "inforsi-s-b"),
        Reading("c", 0.0, 7, None, "inforsi-s-a"),
    ]
    rates.update(readings, at=1001.0, mono=1.0)
    grown = [Reading(r.key, 0.5, r.memory, None, r.run) for r in readings]
    got = rates.update(grown, at=1002.0, mono=2.0)
    assert got is not None
    assert got.tree_cpu == pytest.approx(100.0) and got.tree_memory == 150
    assert got.runs == (("inforsi-s-a", pytest.approx(50.0), 7), ("inforsi-s-b", pytest.approx(100.0), 30))
    assert got.cpu == pytest.approx(250.0) and got.memory == 187


# --- the line ---------------------------------------------------------------------------
def test_a_load_line_has_exactly_the_protocol_shape() -> None:
    line = load_line(StudyLoad("s", 1796083246.8641, 101.5, 2048, (("inforsi-s-r1", 99.0, 1024),)))
    assert list(line) == ["at", "cpu", "memory", "runs"]
    assert line["at"] == "2026-12-01T00:00:46.864Z"
    assert line == {
        "at": "2026-12-01T00:00:46.864Z",
        "cpu": 101.5,
        "memory": 2048,
        "runs": {"inforsi-s-r1": {"cpu": 99.0, "memory": 1024}},
    }
    assert json.loads(json.dumps(line)) == line


def assert_protocol_line(line: dict[str, Any]) -> None:
    assert set(line) == {"at", "cpu", "memory", "runs"}, line
    assert RFC3339_MS.match(line["at"]), line
    assert isinstance(line["cpu"], (int, float)) and line["cpu"] >= 0, line
    assert isinstance(line["memory"], int) and line["memory"] >= 0, line
    assert isinstance(line["runs"], dict), line
    for name, share in line["runs"].items():
        assert isinstance(name, str) and set(share) == {"cpu", "memory"}, line
        assert share["cpu"] >= 0 and isinstance(share["memory"], int) and share["memory"] >= 0, line


# --- the readers ------------------------------------------------------------------------------
def test_mountinfo_gives_the_v1_controllers_and_the_v2_mount() -> None:
    text = "\n".join(
        [
            "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
            "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct",
            "35 31 0:32 /inner /sys/fs/cgroup/mem\\040ory rw,relatime - cgroup cgroup rw,memory",
            "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
            "not a mountinfo line",
        ]
    )
    mounts = parse_mountinfo(text)
    assert mounts.v1["cpuacct"] == ("/", "/sys/fs/cgroup/cpu,cpuacct")
    assert mounts.v1["cpu"] == ("/", "/sys/fs/cgroup/cpu,cpuacct")
    assert mounts.v1["memory"] == ("/inner", "/sys/fs/cgroup/mem ory")
    assert mounts.v2 == ("/", "/sys/fs/cgroup/unified")
    assert cgroup._under(mounts.v1["memory"], "/inner/docker/abc") == "/sys/fs/cgroup/mem ory/docker/abc"
    assert cgroup._under(mounts.v1["memory"], "/elsewhere/abc") is None
    assert cgroup._under(mounts.v1["cpu"], "/../../docker/abc") is None


def test_cgroup_counters_are_read_from_v1_and_v2_files(tmp_path: Path) -> None:
    (tmp_path / "cpuacct.usage").write_text("2500000000\n")
    (tmp_path / "memory.usage_in_bytes").write_text("1000000\n")
    (tmp_path / "memory.stat").write_text("cache 5\nrss 7\ntotal_inactive_file 400000\n")
    (tmp_path / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n")
    (tmp_path / "memory.current").write_text("3000\n")
    (tmp_path / "memory.v2.stat").write_text("anon 1\ninactive_file 1000\n")
    v1 = CgroupFiles(
        str(tmp_path / "cpuacct.usage"),
        False,
        str(tmp_path / "memory.usage_in_bytes"),
        str(tmp_path / "memory.stat"),
        b"total_inactive_file",
    )
    v2 = CgroupFiles(
        str(tmp_path / "cpu.stat"),
        True,
        str(tmp_path / "memory.current"),
        str(tmp_path / "memory.v2.stat"),
        b"inactive_file",
    )
    assert read_counters(v1) == (2.5, 600000)
    assert read_counters(v2) == (1.5, 2000)
    (tmp_path / "cpu.stat").unlink()
    with pytest.raises(FileNotFoundError):
        read_counters(v2)


def test_engine_stats_are_read_as_docker_stats_shows_them() -> None:
    stats = {
        "read": "2026-12-01T00:00:00.123456789Z",
        "cpu_stats": {"cpu_usage": {"total_usage": 3_000_000_000}},
        "memory_stats": {"usage": 5000, "stats": {"total_inactive_file": 1000}},
    }
    read = parse_rfc3339("2026-12-01T00:00:00.123456789Z")
    assert counters_of(stats) == (3.0, 4000, read)
    stats["memory_stats"] = {"usage": 5000, "stats": {"inactive_file": 4000}}
    assert counters_of(stats) == (3.0, 1000, read)
    # A container that does not run: the engine answers with its zero time and no counters.
    assert counters_of({"read": "0001-01-01T00:00:00Z", "cpu_stats": {"cpu_usage": {"total_usage": 0}}}) is None
    assert counters_of({}) is None


def test_a_process_tree_is_found_and_its_counters_read() -> None:
    # The shell's two sleeps stand in for a controller's runs: a tree that lives while it is read.
    proc = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"])
    try:
        def whole() -> ProcessTable | None:
            table = ProcessTable()
            return table if len(table.tree(proc.pid)) >= 3 else None

        table = until(whole, 10, "the shell and its two children")
        tree = table.tree(proc.pid)
        assert tree[0] == proc.pid and len(tree) == 3
        assert table.tree(proc.pid, {tree[1]}) == [proc.pid, tree[2]]
        assert table.tree(proc.pid, {proc.pid}) == []
        counters = read_process(proc.pid)
        assert counters is not None and counters.memory > 0
        assert abs(counters.started - time.time()) < 15
    finally:
        proc.kill()
        proc.wait()
    assert read_process(proc.pid) is None


def _process_run(pid: int, created: float, started: float) -> dict[str, Any]:
    return {
        "Id": "x" * 64,
        "Created": rfc3339_ns(int(created * 1e9)),
        "State": {"Running": True, "Pid": pid, "StartedAt": rfc3339_ns(int(started * 1e9))},
    }


def test_a_process_run_is_read_only_if_its_pid_is_still_its_command() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # a run that computes
    try:
        begun = until(lambda: read_process(proc.pid), 10, "the run's counters")
        meter = LoadMeter("s", "process")
        own = {"inforsi-s-r1": _process_run(proc.pid, begun.started - 0.01, begun.started + 0.01)}
        # The same pid under a container made an hour later: another process holds the pid now.
        reused = {"inforsi-s-r1": _process_run(proc.pid, begun.started + 3600, begun.started + 3600)}
        witness = Witness(proc.pid)
        meter.measure(None, own, ProcessTable())
        witness.spend(0.5)
        load, _ = meter.measure(None, own, ProcessTable())
        assert load is not None
        measured = {n: c for n, c, _ in load.runs}["inforsi-s-r1"]
        assert witness.agrees(measured), (measured, witness.rate())
        assert meter.ways == {"inforsi-s-r1": "process"}
        load, _ = meter.measure(None, reused, ProcessTable())
        assert load is None, "no controller and no run read: no sample"
    finally:
        proc.kill()
        proc.wait()


def test_a_run_whose_start_inspect_lags_behind_its_start_event_is_inspected_again() -> None:
    from studymon.engine.runtimes.process import ProcessRuntime

    runtime = ProcessRuntime()
    name = "inforsi-s-r1"
    # What the watch may hold after the start event: the state as it was just before (created, no pid).
    created = runtime.run(name, [sys.executable, "-c", "while True: pass"])  # a run that computes
    stale = {**created, "State": {**created["State"], "Status": "created", "Running": False, "Pid": 0}}
    try:
        meter = LoadMeter("s", "process")
        witness = Witness(runtime.inspect(name)["State"]["Pid"])
        meter.measure(None, {name: stale}, ProcessTable())
        witness.spend(0.5)
        load, _ = meter.measure(None, {name: stale}, ProcessTable())
        assert meter.ways == {name: "process"}
        assert load is not None and load.runs[0][0] == name
        assert witness.agrees(load.runs[0][1]), (load.runs, witness.rate())
        meter.close()
    finally:
        runtime.remove(name, force=True)


def test_a_closed_meter_takes_no_sample() -> None:
    meter = LoadMeter("s", "process")
    meter.measure(os.getpid(), {}, ProcessTable())
    # The first reading is a base; a later one, once time has passed, is a sample.
    load = until(lambda: meter.measure(os.getpid(), {}, ProcessTable())[0], 10,
                 "a sample of a running controller alone")
    assert load.memory > 0
    meter.close()
    assert meter.measure(os.getpid(), {}, ProcessTable()) == (None, 0.0), "none once its session has let go"


# --- the session ------------------------------------------------------------------------------
def test_a_failed_write_of_load_jsonl_stops_nothing_else_and_keeps_the_event(tmp_path: Path) -> None:
    out = tmp_path / "s"
    (out / "study").mkdir(parents=True)
    write_json(out / "research.json", {"command": ["true"], "study": "s", "backend": "process"})
    (out / "load.jsonl").mkdir()  # cannot be appended to
    events: list[StudyEvent] = []
    load = StudyLoad("s", time.time(), 1.0, 10, ())

    async def scenario() -> StudySession:
        session = StudySession(StudySpec("s", out), events.append)
        session.on_load(load)
        session.on_load(load)  # after the first failure, nothing more is tried
        return session

    session = asyncio.run(scenario())
    assert session._write_error is not None and "load.jsonl" in str(session._write_error)
    assert session._write_failed.is_set(), "the session is woken to stop the study, as for machine.jsonl"
    assert events == [load, load], "the samples still reach the front end"


# --- whole studies -----------------------------------------------------------------------------
def _two_studies(tmp_path: Path, backend: str) -> tuple[dict[str, list[dict[str, Any]]], list[StudyEvent]]:
    """A computing study and a sleeping one side by side; their load.jsonl lines and the events."""
    template = {
        "command": [sys.executable, str(LOAD_STUDY)],
        "backend": backend,
        "work": {"hot": "compute", "cold": "sleep"},
        "workSeconds": 8,
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(template))
    specs, tpl, resolved = plan_fresh([f"hot={tmp_path / 'hot'}", f"cold={tmp_path / 'cold'}"], path, [], backend)
    create_fresh(specs, tpl, resolved)
    events: list[StudyEvent] = []

    async def scenario() -> list[Any]:
        sup = Supervisor(events.append)
        for spec in specs:
            sup.add(spec, resume=False, armed=False)
        return await asyncio.wait_for(sup.run(), 60)

    results = asyncio.run(scenario())
    assert all(r.finished for r in results), results
    lines = {}
    for spec in specs:
        text = (spec.out / "load.jsonl").read_text()
        assert text.endswith("\n")
        lines[spec.id] = [json.loads(line) for line in text.splitlines()]
        assert lines[spec.id], f"{spec.id}: no load sample"
        for line in lines[spec.id]:
            assert_protocol_line(line)
    return lines, events


def _check_hot_and_cold(lines: dict[str, list[dict[str, Any]]], events: list[StudyEvent]) -> None:
    hot, cold = lines["hot"], lines["cold"]
    peak = max(line["cpu"] for line in hot)
    assert peak >= 50, f"the computing study peaked at {peak} %: {hot}"
    run_peak = max(line["runs"].get("inforsi-hot-r1", {}).get("cpu", 0) for line in hot)
    assert run_peak >= 50, f"its run peaked at {run_peak} %: {hot}"
    assert max(line["cpu"] for line in cold) <= 20, f"the sleeping study: {cold}"
    assert any("inforsi-cold-r1" in line["runs"] for line in cold), cold
    assert any(line["memory"] > 0 for line in cold)
    # Samples while the study runs, 2.5 to 5 s apart.
    for study_lines in (hot, cold):
        times = [parse_rfc3339(line["at"]) for line in study_lines]
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert gaps and all(2.0 <= gap <= 5.0 for gap in gaps), gaps
    # Every line is a StudyLoad the session emitted, in the same order.
    for study, study_lines in lines.items():
        emitted = [load_line(e) for e in events if isinstance(e, StudyLoad) and e.study == study]
        assert emitted == study_lines


def test_a_computing_study_and_a_sleeping_one_differ_in_their_load_on_the_process_runtime(tmp_path: Path) -> None:
    lines, events = _two_studies(tmp_path, "process")
    _check_hot_and_cold(lines, events)


def test_a_computing_study_and_a_sleeping_one_differ_in_their_load_on_docker(
    docker_engine: None, tmp_path: Path
) -> None:
    lines, events = _two_studies(tmp_path, "docker")
    _check_hot_and_cold(lines, events)


# --- Docker: the cheap way, and the fallback ---------------------------------------------------------
def _container(name: str, script: str) -> dict[str, Any]:
    import docker

    client = docker.from_env()
    try:
        client.api.create_container("studymon/refstudy:1", ["sh", "-c", script], name=name)
        client.api.start(name)
        inspect: dict[str, Any] = client.api.inspect_container(name)
        return inspect
    finally:
        client.close()


def _remove(*names: str) -> None:
    import docker

    client = docker.from_env()
    try:
        for name in names:
            with contextlib.suppress(docker.errors.NotFound):
                client.api.remove_container(name, force=True)
    finally:
        client.close()


def test_docker_runs_are_read_from_their_cgroup_else_through_the_engine(
    docker_engine: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy, idle = f"inforsi-loadtest{os.getpid()}-r1", f"inforsi-loadtest{os.getpid()}-r2"
    try:
        containers = {busy: _container(busy, "while :; do :; done"), idle: _container(idle, "sleep 60")}
        inspect = containers[busy]
        if locate(inspect["State"]["Pid"], inspect["Id"], read_mounts()) is None:
            pytest.skip("the engine's cgroup files cannot be read here; only the API way applies")
        cheap, api = LoadMeter("s", "docker"), LoadMeter("s", "docker", cgroups=False)
        for way, meter in (("cgroup", cheap), ("api", api)):
            witness = Witness(inspect["State"]["Pid"])
            meter.measure(None, containers, ProcessTable())
            witness.spend(0.75)
            load, _ = meter.measure(None, containers, ProcessTable())
            assert meter.ways == {busy: way, idle: way}
            assert load is not None and [r[0] for r in load.runs] == [busy, idle]
            shares = {name: (cpu, memory) for name, cpu, memory in load.runs}
            assert witness.agrees(shares[busy][0]), (way, shares, witness.rate())
            assert shares[idle][0] <= 20, shares
            assert all(memory > 0 for _, memory in shares.values()), shares

        # A cgroup file that cannot be read (permissions, say) turns that run to the API, in the same sample.
        def refused(files: CgroupFiles) -> tuple[float, int]:
            raise PermissionError(13, "Permission denied", files.cpu)

        monkeypatch.setattr(studyload, "read_counters", refused)
        load, _ = cheap.measure(None, containers, ProcessTable())
        assert cheap.ways == {busy: "api", idle: "api"} and load is not None
        # From then on the engine's counters give the rate (the sample of the switch itself mixes
        # the two ways' clocks, so it is not compared).
        witness = Witness(inspect["State"]["Pid"])
        cheap.measure(None, containers, ProcessTable())
        witness.spend(0.75)
        load, _ = cheap.measure(None, containers, ProcessTable())
        assert cheap.ways == {busy: "api", idle: "api"} and load is not None
        assert witness.agrees(load.runs[0][1]), (load.runs, witness.rate())
        api.close()
        cheap.close()
    finally:
        _remove(busy, idle)
    # Once the containers are gone, their runs are simply not in the sample, and nothing is raised.
    meter = LoadMeter("s", "docker")
    assert meter.measure(None, containers, ProcessTable()) == (None, 0.0)
    meter.close()


async def test_the_console_draws_each_study_its_own_load(tmp_path: Path) -> None:
    """Two studies in the console, one whose run computes and one whose run sleeps: the first's graph
    reaches above half a core and the second's stays in the bottom row."""
    from studymon.tui.app import Planned, StudymonApp
    from studymon.widgets.timeline import GRAPH_ROWS, GUTTER

    template = {
        "command": [sys.executable, str(LOAD_STUDY)],
        "backend": "process",
        "work": {"hot": "compute", "cold": "sleep"},
        "workSeconds": 8,
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(template))
    specs, tpl, resolved = plan_fresh([f"hot={tmp_path / 'hot'}", f"cold={tmp_path / 'cold'}"], path, [], "process")
    create_fresh(specs, tpl, resolved)
    app = StudymonApp([Planned(s, "inforsi") for s in specs], save_dir=tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        deadline = time.monotonic() + 60
        while app.status is None:
            assert time.monotonic() < deadline, "the studies did not end"
            await pilot.pause(0.2)
        graphs = {}
        for sid, pane in app.main.panes.items():
            pane.flush()
            rows = pane.timeline.text(pane.timeline.size.width).split("\n")
            # The CPU rows from the top: the scale's labels, then the columns drawn.
            graphs[sid] = [row[GUTTER:] for row in rows[:GRAPH_ROWS]]
            assert rows[0].startswith(" 100%") or rows[0].startswith(" 200%"), rows
        await pilot.press("q")
    hot, cold = graphs["hot"], graphs["cold"]
    # Four rows of eighth blocks over 0..100 %: the third row from the top full, or anything drawn
    # above it, is half a core or more.
    assert "█" in hot[2] or any(ch not in " │" for ch in hot[0] + hot[1]), "\n".join(hot)
    assert all(ch in " │K R" for ch in "".join(cold[:3])), "\n".join(cold)
    assert any(ch not in " │" for ch in cold[3]), "the sleeping study's load is drawn too, low"


def test_samples_come_every_four_and_a_half_seconds_unless_a_graph_is_shown(tmp_path: Path) -> None:
    """No graph on screen (the overview, the headless run): a sample every 4.5 s after the first; one shown: 2.5 s.

    load.jsonl stays within its 2.5 to 5 s either way, and machine.jsonl
    takes a sample at least 4.4 s after the one before, at most 5 s.
    """
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"command": [sys.executable, str(LOAD_STUDY)], "backend": "process",
                                "work": "sleep", "workSeconds": 60}))
    specs, tpl, resolved = plan_fresh([f"slow={tmp_path / 'slow'}"], path, [], "process")
    create_fresh(specs, tpl, resolved)
    out = specs[0].out
    switched: list[float] = []

    def times(name: str, label: str | None = None) -> list[float]:
        lines = [json.loads(line) for line in (out / name).read_text().splitlines()] if (out / name).exists() else []
        return [parse_rfc3339(x["at"]) for x in lines if label is None or x.get("label") == label]

    async def scenario() -> None:
        sup = Supervisor(lambda _event: None)
        session = sup.add(specs[0], resume=False, armed=False)
        task = asyncio.ensure_future(sup.run())
        await until_async(lambda: len(times("load.jsonl")) >= 3, 60, "three samples at the quiet pace")
        switched.append(time.time())
        sup.show_graphs(True)
        await until_async(lambda: len(times("load.jsonl")) >= 7, 60, "four more at the graphs' pace")
        session.stop()
        await asyncio.wait_for(task, 30)

    asyncio.run(scenario())
    loads = times("load.jsonl")
    quiet = [b - a for a, b in itertools.pairwise(t for t in loads if t < switched[0])]
    shown = [b - a for a, b in itertools.pairwise(t for t in loads if t > switched[0] + 0.1)]
    assert len(quiet) >= 2 and all(4.4 <= gap <= 5.0 for gap in quiet), quiet
    assert len(shown) >= 3 and all(2.4 <= gap <= 3.0 for gap in shown), shown
    # The switch brings the next sample forward, never nearer than 2.5 s to the last.
    assert all(2.4 <= gap <= 5.0 for gap in (b - a for a, b in itertools.pairwise(loads))), loads
    # The first sample comes at the graphs' pace whatever is shown (a short study has one).
    started = parse_rfc3339(json.loads((out / "launches.jsonl").read_text().splitlines()[0])["at"])
    assert 2.0 <= loads[0] - started <= 3.5, (started, loads)
    machine = [b - a for a, b in itertools.pairwise(times("machine.jsonl", "sample"))]
    assert len(machine) >= 4 and all(4.4 <= gap <= 5.1 for gap in machine), machine
