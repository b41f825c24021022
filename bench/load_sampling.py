"""Load sampling: what a sample of each study's own load costs; Docker runs read from cgroup files vs. the Engine API.

The engine samples every study's load every 2.5 s, in the sampler's thread
(``engine/load/studyload.py``).  Two things are measured here, in one run:

1. **The two ways to a Docker run's counters, side by side.**  ``--containers``
   run containers (default 6: three studies of two runs) are started on the
   Docker engine from the reference study's image, sleeping (``--busy`` of
   them compute instead).  Each round reads every container once the cgroup
   way (``engine/load/cgroup.py``: ``cpuacct.usage`` or ``cpu.stat``, the memory
   usage and ``memory.stat``) and once the API way
   (``engine/load/dockerstats.py``: one ``/containers/<id>/stats?one-shot=true``
   request each, all at once from a few threads, as the engine asks), the order alternating from round to round, so machine
   noise hits both alike.  Rounds are ``--pace`` apart (1.1 s): Engine 20.10
   makes a stats request for a container asked less than about a second
   before wait some 0.7 s (measured), which the engine's 2.5 s between
   samples never meets, so the bench does not either.  Per sample (every container once): the wall time,
   this process's CPU time, and the CPU time of the Docker daemons
   (``dockerd``, ``containerd`` and the containers' shims, read from
   ``/proc`` before and after; an API request is work for them too).  The
   ratio is API over cgroup, on the total CPU.
2. **One sample of three studies, as the sampler takes it**: the machine's
   light sample, then each study's ``LoadMeter.measure`` (controller tree +
   two runs) with one ``ProcessTable``, that is the supervisor's
   ``_measure``.  Three controllers (a Python process with a second thread,
   sleeping) with two runs each: on Docker (the cgroup way, and the API way
   forced), and on the process runtime (its state in the bench's temporary
   folder).  Beside it the **baseline**, the sampler this replaces: the light
   sample every 2.5 s, and every other sample a walk of the machine's process
   table (``children_map``) and each controller tree's ``cpu_percent``
   through psutil.  Reported as CPU per sample and as percent of one core at
   one sample every 2.5 s (the baseline's walk counted at half its cost).
   The designs take turns sample by sample, in a rotating order; the API
   design is timed apart, ten samples ``--pace`` apart.

    python bench/load_sampling.py                  # 100 rounds, 6 containers (~3 min)
    python bench/load_sampling.py --rounds 300 --json load.json
    python bench/load_sampling.py --quick          # smoke run: 3 rounds, 2 containers, no "API forced" (~10 s)

Part 1 and the Docker lines of part 2 need a Docker engine with the
reference study's image (``studymon image``), on this machine (the cgroup
way reads the containers' cgroup files).  Without one the bench says why and
exits 2, measuring nothing: ``--no-docker`` leaves the Docker parts out, and
says so, for a machine that has no engine.  Exit status 0 when everything
asked for was measured, 2 when a measurement failed or Docker was needed and
is not there, 130 when interrupted.  Containers, controllers and the
temporary folder are removed on the way out, also on Ctrl-C and SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from studymon.engine.load.cgroup import CgroupFiles, locate, read_counters, read_mounts  # noqa: E402
from studymon.engine.load.proctree import ProcessTable  # noqa: E402
from studymon.engine.load.sampler import SAMPLE_EVERY, children_map, light_sample  # noqa: E402
from studymon.engine.load.studyload import LoadMeter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kill_reaction import percentile  # noqa: E402  (one definition of the percentiles for every bench)

IMAGE = "studymon/refstudy:1"
STUDIES = 3
DAEMONS = ("dockerd", "containerd", "containerd-shim", "containerd-shim-runc-v2")
# A sleeping controller with a second thread (a tree walk reads each thread's children).
CONTROLLER = (
    "import threading, time; threading.Thread(target=time.sleep, args=(3600,), daemon=True).start(); time.sleep(3600)"
)


class Interrupted(Exception):
    """SIGTERM: end like Ctrl-C, cleaning up."""


class NoDocker(Exception):
    """The Docker parts were asked for and cannot be measured here."""


def _on_term(_signum: int, _frame: object) -> None:
    raise Interrupted


# --- measuring -------------------------------------------------------------------------------
def daemon_pids() -> list[int]:
    return [proc.pid for proc in psutil.process_iter(["name"]) if (proc.info.get("name") or "") in DAEMONS]


def cpu_of(pids: list[int]) -> float:
    """CPU seconds (user + system) of ``pids``, from ``/proc/<pid>/stat`` (gone ones count 0)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        fields = data[data.rindex(b")") + 2 :].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks


@dataclass
class WayCost:
    """The cost of samples taken one way (each sample reads every container once)."""

    way: str
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)  # this process
    daemon_cpu_s: float = 0.0  # the daemons, summed over every sample (their ticks are 10 ms: per sample is noise)
    failures: int = 0

    def summary(self, containers: int) -> dict[str, float]:
        n = max(len(self.wall_ms), 1)
        own = sum(self.cpu_ms) / n
        daemon = self.daemon_cpu_s * 1000 / n
        return {
            "samples": len(self.wall_ms),
            "wall_p50_ms": percentile(self.wall_ms, 50),
            "wall_p90_ms": percentile(self.wall_ms, 90),
            "own_cpu_ms": own,
            "daemon_cpu_ms": daemon,
            "total_cpu_ms": own + daemon,
            "per_container_cpu_ms": (own + daemon) / max(containers, 1),
            "failures": self.failures,
        }


def timed(cost: WayCost, daemons: list[int], sample: Callable[[], int]) -> None:
    """Take one sample, adding its cost to ``cost``; ``sample`` returns how many readings failed."""
    d0 = cpu_of(daemons)
    c0, w0 = time.process_time(), time.perf_counter()
    failed = sample()
    w1, c1 = time.perf_counter(), time.process_time()
    cost.daemon_cpu_s += cpu_of(daemons) - d0
    cost.wall_ms.append((w1 - w0) * 1000)
    cost.cpu_ms.append((c1 - c0) * 1000)
    cost.failures += failed


# --- part 1: the two ways ------------------------------------------------------------------------
def compare_ways(inspects: list[dict[str, Any]], rounds: int, pace: float) -> tuple[WayCost, WayCost] | str:
    """Both ways over the same containers, alternating; or why the cgroup way is not available here."""
    from studymon.engine.load.dockerstats import DockerStats

    mounts = read_mounts()
    files: list[CgroupFiles] = []
    for inspect in inspects:
        found = locate(int(inspect["State"]["Pid"]), inspect["Id"], mounts)
        if found is None:
            return f"the cgroup files of {inspect['Name'].lstrip('/')} cannot be read here"
        files.append(found)
    api = DockerStats()
    ids = [i["Id"] for i in inspects]

    def by_cgroup() -> int:
        failed = 0
        for f in files:
            try:
                read_counters(f)
            except (OSError, ValueError):
                failed += 1
        return failed

    def by_api() -> int:
        # As the engine asks: every run of the sample at once (the engine answers requests made together together).
        return sum(1 for counters in api.read_many(ids) if counters is None)

    cgroup, stats = WayCost("cgroup"), WayCost("api")
    daemons = daemon_pids()
    try:
        by_cgroup(), by_api()  # warm: the first request opens the connection
        for i in range(rounds):
            time.sleep(pace)
            pair = [(cgroup, by_cgroup), (stats, by_api)]
            for cost, sample in pair if i % 2 == 0 else reversed(pair):
                timed(cost, daemons, sample)
    finally:
        api.close()
    return cgroup, stats


# --- part 2: one sample of three studies ---------------------------------------------------------
class OldSampler:
    """The sampler before each study's own load: a light sample every time, every other one the trees' CPU."""

    def __init__(self, controllers: list[int]) -> None:
        self.controllers = controllers
        self.count = 0
        self.procs: list[dict[int, psutil.Process]] = [{} for _ in controllers]

    def sample(self) -> None:
        light_sample()
        self.count += 1
        if self.count % 2 == 1:
            children = children_map()
            for i, root in enumerate(self.controllers):
                tree, j = [root], 0
                while j < len(tree):
                    tree.extend(children.get(tree[j], ()))
                    j += 1
                kept = {}
                for pid in tree:
                    try:
                        proc = self.procs[i].get(pid) or psutil.Process(pid)
                        proc.cpu_percent(interval=None)
                    except psutil.Error:
                        continue
                    kept[pid] = proc
                self.procs[i] = kept


def engine_sampler(
    backend: str, controllers: list[int], runs: list[dict[str, dict[str, Any]]], cgroups: bool = True
) -> Callable[[], None]:
    """The supervisor's ``_measure`` over three studies: the light sample, then each study's load."""
    meters = [LoadMeter(f"s{i}", backend, cgroups=cgroups) for i in range(len(controllers))]

    def sample() -> None:
        light_sample()
        table = ProcessTable()
        for meter, pid, running in zip(meters, controllers, runs, strict=True):
            load, _ = meter.measure(pid, running, table)
            if load is None or len(load.runs) != len(running):
                raise RuntimeError(f"{backend}: a study's sample lacks its runs: {load}")

    return sample


@dataclass
class DesignCost:
    design: str
    runtime: str
    cpu_ms: list[float] = field(default_factory=list)
    wall_ms: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float | str]:
        mean = sum(self.cpu_ms) / max(len(self.cpu_ms), 1)
        return {
            "design": self.design,
            "runtime": self.runtime,
            "samples": len(self.cpu_ms),
            "cpu_mean_ms": mean,
            "cpu_p90_ms": percentile(self.cpu_ms, 90),
            "wall_p50_ms": percentile(self.wall_ms, 50),
            "core_percent": mean / 1000 / SAMPLE_EVERY * 100,
        }


def time_designs(designs: list[tuple[DesignCost, Callable[[], None]]], count: int, pause: float = 0.05) -> None:
    """``count`` rounds, each design sampled once per round in a rotating order, rounds ``pause`` apart.

    One sample of each first sets the bases; a sampler sleeps between samples, so the bench does too.
    """
    for _, sample in designs:
        sample()
    for i in range(count):
        time.sleep(pause)
        for cost, sample in designs[i % len(designs) :] + designs[: i % len(designs)]:
            c0, w0 = time.process_time(), time.perf_counter()
            sample()
            w1, c1 = time.perf_counter(), time.process_time()
            cost.cpu_ms.append((c1 - c0) * 1000)
            cost.wall_ms.append((w1 - w0) * 1000)


# --- the scene -----------------------------------------------------------------------------------
class Scene:
    """Everything the bench starts, removed by :meth:`close` whatever happened."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.tag = secrets.token_hex(3)
        self.controllers: list[subprocess.Popen[bytes]] = []
        self.docker_names: list[str] = []
        self.docker: Any = None
        self.process_runtime: Any = None
        self.process_names: list[str] = []

    def start_controllers(self) -> list[int]:
        for _ in range(STUDIES):
            self.controllers.append(subprocess.Popen([sys.executable, "-c", CONTROLLER], start_new_session=True))
        return [p.pid for p in self.controllers]

    def start_docker(self, count: int, busy: int) -> list[dict[str, Any]] | str:
        try:
            import docker

            self.docker = docker.from_env(timeout=30)
            self.docker.ping()
            self.docker.images.get(IMAGE)
        except Exception as exc:  # noqa: BLE001 - the reason is printed
            return f"no Docker engine with {IMAGE} answers ({type(exc).__name__}: {exc})"
        api = self.docker.api
        for i in range(count):
            name = f"loadbench-{self.tag}-{i // 2}-r{i % 2}"
            script = "while :; do :; done" if i < busy else "sleep 3600"
            api.create_container(IMAGE, ["sh", "-c", script], name=name)
            self.docker_names.append(name)
            api.start(name)
        return [api.inspect_container(name) for name in self.docker_names]

    def start_process_runs(self, count: int) -> list[dict[str, Any]]:
        from studymon.engine.runtimes.process import ProcessRuntime

        root = self.work / "process-runtime"
        os.environ["STUDYMON_PROCESS_RUNTIME"] = str(root)  # the meters' own runtime, if one is opened, is this one
        self.process_runtime = ProcessRuntime(root)
        found = []
        for i in range(count):
            name = f"loadbench-{self.tag}-{i // 2}-r{i % 2}"
            self.process_names.append(name)
            found.append(self.process_runtime.run(name, ["sleep", "3600"]))
        return found

    def close(self) -> None:
        for proc in self.controllers:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if self.docker is not None:
            for name in self.docker_names:
                with contextlib.suppress(Exception):
                    self.docker.api.remove_container(name, force=True)
            with contextlib.suppress(Exception):
                self.docker.close()
        if self.process_runtime is not None:
            for name in self.process_names:
                with contextlib.suppress(Exception):
                    self.process_runtime.remove(name, force=True)


def per_study(inspects: list[dict[str, Any]]) -> list[dict[str, dict[str, Any]]]:
    """Two runs per study, by name."""
    out: list[dict[str, dict[str, Any]]] = [{} for _ in range(STUDIES)]
    for i, inspect in enumerate(inspects):
        out[(i // 2) % STUDIES][inspect["Name"].lstrip("/")] = inspect
    return out


# --- the report -------------------------------------------------------------------------------------
def print_ways(cgroup: dict[str, float], api: dict[str, float], containers: int, rounds: int, tag: str) -> None:
    print(f"part 1: {containers} Docker containers (loadbench-{tag}-*), {rounds} rounds, the two ways alternating")
    print(
        f"{'way':8} {'samples':>7} {'wall p50':>9} {'wall p90':>9} {'own CPU':>8} {'daemons':>8} {'total':>8} {'per run':>8}"
    )
    for name, s in (("cgroup", cgroup), ("api", api)):
        print(
            f"{name:8} {s['samples']:>7} {s['wall_p50_ms']:>9.3f} {s['wall_p90_ms']:>9.3f} {s['own_cpu_ms']:>8.3f} "
            f"{s['daemon_cpu_ms']:>8.3f} {s['total_cpu_ms']:>8.3f} {s['per_container_cpu_ms']:>8.3f}"
        )
    print("(milliseconds per sample of every container; CPU: this process, the Docker daemons, both)")
    ratio_cpu = api["total_cpu_ms"] / cgroup["total_cpu_ms"] if cgroup["total_cpu_ms"] > 0 else float("inf")
    ratio_wall = api["wall_p50_ms"] / cgroup["wall_p50_ms"] if cgroup["wall_p50_ms"] > 0 else float("inf")
    print(f"ratio api/cgroup: total CPU x{ratio_cpu:.1f}, wall p50 x{ratio_wall:.1f}")
    chosen = "cgroup" if cgroup["total_cpu_ms"] <= api["total_cpu_ms"] else "api"
    print(f"cheaper: {chosen} (the engine reads cgroup files where it can, the API where it cannot)")


def print_designs(rows: list[dict[str, Any]]) -> None:
    print(f"part 2: one sample of {STUDIES} studies with 2 runs each, as the sampler takes it every {SAMPLE_EVERY:g} s")
    print(f"{'design':18} {'runtime':8} {'samples':>7} {'CPU mean':>9} {'CPU p90':>8} {'wall p50':>9} {'% core':>7}")
    for r in rows:
        print(
            f"{r['design']:18} {r['runtime']:8} {r['samples']:>7} {r['cpu_mean_ms']:>9.3f} {r['cpu_p90_ms']:>8.3f} "
            f"{r['wall_p50_ms']:>9.3f} {r['core_percent']:>7.3f}"
        )
    print("(milliseconds per sample; % core: CPU mean over the 2.5 s between samples)")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100, help="rounds of part 1 (each: both ways once)")
    parser.add_argument("--pace", type=float, default=1.1, help="seconds between rounds of part 1 (and API samples)")
    parser.add_argument("--samples", type=int, default=100, help="samples per design in part 2")
    parser.add_argument("--containers", type=int, default=6, help="Docker containers (two per study)")
    parser.add_argument("--busy", type=int, default=0, help="how many of them compute instead of sleeping")
    parser.add_argument("--quick", action="store_true", help='3 rounds, 10 samples, 2 containers, no "API forced"')
    parser.add_argument(
        "--no-docker",
        action="store_true",
        help="leave out part 1 and the Docker lines of part 2 (a machine without a Docker engine)",
    )
    parser.add_argument("--json", type=Path, help="save the summary and every sample's times here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.samples, args.containers = 3, 10, 2
    return args


@contextlib.contextmanager
def scene(args: argparse.Namespace) -> Iterator[Scene]:
    work = Path(tempfile.mkdtemp(prefix="studymon-load-bench-"))
    current = Scene(work)
    try:
        yield current
    finally:
        current.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, current: Scene) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "kernel": platform.release(), "python": platform.python_version()},
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
    }
    controllers = current.start_controllers()
    designs: list[tuple[DesignCost, Callable[[], None]]] = []
    api_rows: list[dict[str, Any]] = []
    forced_costs: list[DesignCost] = []
    if args.no_docker:
        print("part 1 and the Docker lines of part 2 not run: --no-docker")
        summary["docker"] = None
    else:
        inspects = current.start_docker(args.containers, args.busy)
        if isinstance(inspects, str):
            raise NoDocker(inspects)
        summary["docker"] = current.docker.version().get("Version")
        compared = compare_ways(inspects, args.rounds, args.pace)
        if isinstance(compared, str):
            raise NoDocker(compared)
        cgroup, api = (c.summary(len(inspects)) for c in compared)
        summary["ways"] = {"cgroup": cgroup, "api": api}
        summary["waySamples"] = {c.way: {"wall_ms": c.wall_ms, "cpu_ms": c.cpu_ms} for c in compared}
        print_ways(cgroup, api, len(inspects), args.rounds, current.tag)
        if cgroup["failures"] or api["failures"]:
            raise RuntimeError(f"readings failed: cgroup {cgroup['failures']}, api {api['failures']}")
        print()
        six = per_study((inspects * STUDIES)[: 2 * STUDIES])  # two runs per study, repeated when fewer were asked
        if args.quick:
            print('("engine, API forced" left out of --quick: each of its samples waits about a second per study)')
        else:
            # Apart, paced like part 1 (each run is asked again within a second otherwise), so fewer samples.
            forced = DesignCost("engine, API forced", "docker")
            time_designs([(forced, engine_sampler("docker", controllers, six, cgroups=False))], 10, pause=args.pace)
            api_rows.append(forced.summary())
            forced_costs.append(forced)
        designs.append((DesignCost("engine", "docker"), engine_sampler("docker", controllers, six)))
    runs = current.start_process_runs(2 * STUDIES)
    designs.append((DesignCost("engine", "process"), engine_sampler("process", controllers, per_study(runs))))
    designs.append((DesignCost("baseline (before)", "-"), OldSampler(controllers).sample))
    time_designs(designs, args.samples)
    rows = [cost.summary() for cost, _ in designs[:-1]] + api_rows + [designs[-1][0].summary()]
    summary["designs"] = rows
    summary["designSamples"] = [
        {"design": c.design, "runtime": c.runtime, "cpu_ms": c.cpu_ms, "wall_ms": c.wall_ms}
        for c in [cost for cost, _ in designs[:-1]] + forced_costs + [designs[-1][0]]
    ]
    print_designs(rows)
    base = rows[-1]["cpu_mean_ms"]
    for r in rows[:-1]:
        ratio = r["cpu_mean_ms"] / base if base > 0 else float("inf")
        print(f"ratio {r['design']} ({r['runtime']})/baseline: x{ratio:.2f}")
    return summary


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _on_term)
    try:
        with scene(args) as current:
            summary = run(args, current)
    except (KeyboardInterrupt, Interrupted):
        print("interrupted", file=sys.stderr)
        return 130
    except NoDocker as exc:
        print(
            f"load_sampling: the Docker parts cannot be measured: {exc}; "
            "run where a local Docker engine has the image (studymon image), or give --no-docker",
            file=sys.stderr,
        )
        return 2
    except Exception as exc:  # noqa: BLE001 - the bench says what failed and exits 2
        print(f"failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
