"""The load-sampling bench still runs: ``bench/load_sampling.py --quick``, end to end.

It checks that the bench works (exit 0, its tables printed, nothing left
behind), not its numbers beyond what any machine gives: those depend on the
machine, and a run this short says little.
"""

from __future__ import annotations

import re
import subprocess
import time

from tests.benches import run_bench

NUMBER = r"[\d.]+"


def test_load_sampling_quick_runs_and_prints_both_parts() -> None:
    began = time.monotonic()
    out = run_bench("load_sampling.py", "--quick")
    docker = re.search(r"^part 1: 2 Docker containers \((loadbench-[0-9a-f]+-)\*\), 3 rounds", out, re.M)
    if docker:
        for way in ("cgroup", "api"):
            assert re.search(rf"^{way}\s+3(\s+{NUMBER}){{6}}$", out, re.M), out
        assert re.search(rf"^ratio api/cgroup: total CPU x{NUMBER}, wall p50 x{NUMBER}$", out, re.M), out
        assert re.search(r"^cheaper: (cgroup|api) ", out, re.M), out
        assert re.search(rf"^engine\s+docker\s+10(\s+{NUMBER}){{4}}$", out, re.M), out
    assert re.search(rf"^engine\s+process\s+10(\s+{NUMBER}){{4}}$", out, re.M), out
    assert re.search(rf"^baseline \(before\)\s+-\s+10(\s+{NUMBER}){{4}}$", out, re.M), out
    assert re.search(rf"^ratio engine \(process\)/baseline: x{NUMBER}$", out, re.M), out
    assert time.monotonic() - began < 60
    if docker:
        # Every container the bench started is gone.
        left = subprocess.run(
            ["docker", "ps", "-a", "--filter", f"name={docker.group(1)}", "--format", "{{.Names}}"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert left.stdout.strip() == "", f"containers left behind: {left.stdout}"
