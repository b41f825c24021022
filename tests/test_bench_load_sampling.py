"""The load-sampling bench still runs and still measures: ``bench/load_sampling.py --quick``, Docker part and all.

The Docker part always runs here (the ``docker_engine`` fixture: it fails
when Docker is required and no engine answers), and a bench that cannot
reach an engine says so and exits non-zero rather than printing the rest.
The test checks that the bench works (exit 0, its tables printed, nothing
left behind) and that its figures are what it measured: the containers it
reports are the ones the engine's own event stream shows it creating and
removing, each row has as many samples as asked for and is the
percentiles and means of its samples (``--json``), totals are their parts'
sums, and ratios and the cheaper way are those of the figures.  Not the
numbers themselves beyond what any machine gives: those depend on the
machine, and a run this short says little.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.benches import NUMBER as N
from tests.benches import ROOT, assert_ordered, assert_ratio, assert_shown, percentile, row, run_bench

CONTAINERS, ROUNDS, SAMPLES = 2, 3, 10  # what --quick asks for


def _container_events(since: float, until: float, prefix: str) -> Counter[str]:
    """The Docker engine's own record: how many of each action containers named ``prefix...`` had."""
    found = subprocess.run(
        [  # noqa: S607 - the docker client on PATH, as the tests use it
            "docker",
            "events",
            "--since",
            f"{since:.3f}",
            "--until",
            f"{until:.3f}",
            "--filter",
            "type=container",
            "--format",
            "{{.Action}} {{.Actor.Attributes.name}}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return Counter(line.split()[0] for line in found.stdout.splitlines() if f" {prefix}" in line)


@pytest.mark.docker
@pytest.mark.usefixtures("docker_engine")
def test_load_sampling_quick_measures_the_containers_it_started(tmp_path: Path) -> None:
    began, wall = time.monotonic(), time.time()
    out = run_bench("load_sampling.py", "--quick", "--json", str(tmp_path / "ls.json"))
    took = time.monotonic() - began
    result = json.loads((tmp_path / "ls.json").read_text())
    header = re.search(
        rf"^part 1: {CONTAINERS} Docker containers \((loadbench-[0-9a-f]+-)\*\), {ROUNDS} rounds", out, re.MULTILINE
    )
    assert header, out
    # The engine saw the bench create, start and remove exactly the containers it says it read.
    events = _container_events(wall - 1, time.time() + 1, header.group(1))
    assert (events["create"], events["start"], events["destroy"]) == (CONTAINERS,) * 3, events
    left = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"name={header.group(1)}", "--format", "{{.Names}}"],  # noqa: S607
        capture_output=True,
        text=True,
        check=False,
    )
    assert left.stdout.strip() == "", f"containers left behind: {left.stdout}"

    # Part 1: each way's row is its samples', one sample a round; total = own + daemons, per run = total / runs.
    ways = {}
    for way in ("cgroup", "api"):
        raw, s = result["waySamples"][way], result["ways"][way]
        assert len(raw["wall_ms"]) == len(raw["cpu_ms"]) == s["samples"] == ROUNDS, raw
        printed = row(out, rf"^{way}\s+(\d+)" + rf"\s+({N})" * 6 + "$")
        assert printed[0] == ROUNDS, out
        assert_ordered(printed[1], printed[2], what=f"{way} wall p50, p90")
        own = sum(raw["cpu_ms"]) / ROUNDS
        assert_shown(
            printed[1:],
            [
                percentile(raw["wall_ms"], 50),
                percentile(raw["wall_ms"], 90),
                own,
                s["daemon_cpu_ms"],
                own + s["daemon_cpu_ms"],
                (own + s["daemon_cpu_ms"]) / CONTAINERS,
            ],
            3,
            way,
        )
        assert s["failures"] == 0, s
        ways[way] = printed
    ratio = row(out, rf"^ratio api/cgroup: total CPU x({N}), wall p50 x({N})$")
    assert_ratio(ratio[0], ways["api"][5], ways["cgroup"][5], 1, "api/cgroup total CPU")
    assert_ratio(ratio[1], ways["api"][1], ways["cgroup"][1], 1, "api/cgroup wall p50")
    cheaper = re.search(r"^cheaper: (cgroup|api) ", out, re.MULTILINE)
    assert cheaper and cheaper.group(1) == ("cgroup" if ways["cgroup"][5] <= ways["api"][5] else "api"), out

    # Part 2: one sample of three studies per design, as many as asked; % core is the mean over 2.5 s.
    designs = {}
    for raw in result["designSamples"]:
        name, runtime = raw["design"], raw["runtime"]
        assert len(raw["cpu_ms"]) == len(raw["wall_ms"]) == SAMPLES, raw
        printed = row(out, rf"^{re.escape(name)}\s+{re.escape(runtime)}\s+(\d+)" + rf"\s+({N})" * 4 + "$")
        mean = sum(raw["cpu_ms"]) / SAMPLES
        assert printed[0] == SAMPLES and mean > 0, (printed, raw)
        assert_shown(
            printed[1:],
            [mean, percentile(raw["cpu_ms"], 90), percentile(raw["wall_ms"], 50), mean / 25],
            3,
            f"{name} {runtime}",
        )
        designs[(name, runtime)] = printed
    assert set(designs) == {("engine", "docker"), ("engine", "process"), ("baseline (before)", "-")}, designs
    for runtime in ("docker", "process"):
        ratio = row(out, rf"^ratio engine \({runtime}\)/baseline: x({N})$")
        assert_ratio(
            ratio[0],
            designs[("engine", runtime)][1],
            designs[("baseline (before)", "-")][1],
            2,
            f"engine ({runtime})/baseline",
        )
    # Every sample timed lies within the run.
    timed = [*result["waySamples"]["cgroup"]["wall_ms"], *result["waySamples"]["api"]["wall_ms"]]
    timed += [x for raw in result["designSamples"] for x in raw["wall_ms"]]
    assert sum(timed) / 1e3 < took
    assert took < 60


def test_load_sampling_without_an_engine_says_so_and_fails(tmp_path: Path) -> None:
    """No pretending: asked for the Docker part where no engine answers, the bench measures nothing and exits 2."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "load_sampling.py"), "--quick", "--json", str(tmp_path / "ls.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"},
    )
    assert proc.returncode == 2, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "the Docker parts cannot be measured: no Docker engine" in proc.stderr, proc.stderr
    assert "--no-docker" in proc.stderr, proc.stderr
    assert "part 2" not in proc.stdout and not (tmp_path / "ls.json").exists(), proc.stdout
