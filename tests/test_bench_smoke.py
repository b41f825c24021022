"""The benches still run: short runs of the kill-reaction (alone and with company), console-load and first-frame benches.

They check that each bench works end to end (exit 0, the summary and target
lines printed), not the numbers: those depend on the machine, and runs this
short do not say whether a target is met.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.benches import run_bench

ROOT = Path(__file__).resolve().parent.parent


def test_kill_reaction_quick_runs_and_prints_p99() -> None:
    out = run_bench("kill_reaction.py", "--quick", "--silent")
    assert re.search(r"^engine\s+10\s+3\s+[\d.]+\s+[\d.]+\s+[\d.]+$", out, re.M), out
    assert re.search(r"^baseline\s+10\s+3\s+[\d.]+\s+[\d.]+\s+[\d.]+$", out, re.M), out
    assert re.search(r"^engine p99 target \(<= 2 ms at every size\): (met|MISSED) ", out, re.M), out
    assert "engine sessions that ran the study to its halt after the kill at 10 lines: 3/3" in out, out
    # The machine's floor beside it: the same pauses, a fixed piece of work, three samples.
    assert re.search(r"^machine floor: a fixed ~1 ms of work in this process after the same pauses, 3 samples: "
                     r"p50 [\d.]+ / p99 [\d.]+ / max [\d.]+ ms; over 2x its p50: \d/3$", out, re.M), out
    assert re.search(r"^engine at 10 lines over 2x its p50: \d/3; p99/p50 engine x[\d.]+, floor x[\d.]+$", out, re.M), out


def test_ledger_at_kill_quick_writes_the_same_bytes_both_ways() -> None:
    out = run_bench("ledger_at_kill.py", "--quick")
    assert "the two files are the same bytes" in out, out
    for design in ("streamed", "whole"):
        assert re.search(rf"^{design}\s+[\d.]+\s+\d+\s+\d+\s+[\d.]+\s+[\d.]+$", out, re.M), out
    assert re.search(r"^ratio whole/streamed: peak memory x[\d.]+, ", out, re.M), out


def test_kill_under_load_quick_runs_and_prints_both_modes() -> None:
    began = time.monotonic()
    out = run_bench("kill_under_load.py", "--quick", "--silent")
    assert "company: 2 studies x 50 records/s and a 20000-line burst, in the armed study's loop" in out, out
    figures = {}
    for mode in ("quiet", "company"):
        m = re.search(rf"^{mode}\s+10\s+2\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", out, re.M)
        assert m, out
        figures[mode] = [float(x) for x in m.groups()]
    # Only what any machine gives: a kill measured, not one that waited for the whole study.
    assert all(0 < x < 10_000 for xs in figures.values() for x in xs), figures
    assert re.search(r"^ratio company/quiet at 10 lines: p50 x[\d.]+, p99 x[\d.]+$", out, re.M), out
    assert re.search(r"^company triggers written while the burst was being read at 10 lines: \d/2 ", out, re.M), out
    assert "armed sessions that ran the study to its halt after the kill at 10 lines: quiet 2/2, company 2/2" in out, out
    assert re.search(r"^armed p99 target \(<= 2 ms, quiet and with company, at every size\): (met|MISSED) ", out, re.M), out
    assert re.search(r"^machine floor: a fixed ~1 ms of work in this process after the same pauses, 4 samples: ", out, re.M), out
    assert time.monotonic() - began < 60


# --- the console benches (real terminals: tmux) -----------------------------------
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed: the console benches run the console in tmux")


@needs_tmux
def test_console_load_quick_runs_and_prints_its_summary() -> None:
    out = run_bench("console_load.py", "--quick", "--no-toolong", "--silent")
    assert "console load: 3 studies x 50 records/s for 8 s, then idle 5 s" in out, out
    for phase in ("streaming", "idle"):
        assert re.search(rf"^studymon\s+{phase}\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+$", out, re.M), out
    assert re.search(r"^records behind the ledger at the end of streaming: studymon \[\d+, \d+, \d+\]$", out, re.M), out
    assert re.search(r"^console exit status -?\d+: ", out, re.M), out
    for target in (r"streaming CPU <= 10 % of a core", r"idle CPU <= 0\.5 % of a core", r"RSS <= 150 MB"):
        assert re.search(rf"^target {target}: (met|NOT MET) \(", out, re.M), out
    assert "toolong" not in out, out


@needs_tmux
def test_first_frame_quick_runs_and_prints_its_summary() -> None:
    out = run_bench("first_frame.py", "--quick", "--no-toolong", "--silent")
    assert re.search(r"^studymon\s+20000\s+2\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+$", out, re.M), out
    assert re.search(r"^studymon first-frame target \(<= 1 s in every trial\): (met|MISSED) \(20000 records [\d.]+ s\)$",
                     out, re.M), out


# --- the kill soak (whole studies on a runtime) ------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["process", pytest.param("docker", marks=pytest.mark.docker)])
def test_soak_quick_judges_every_study_right_and_loses_nothing(
    tmp_path: Path, runtime: str, request: pytest.FixtureRequest
) -> None:
    import json

    if runtime == "docker":
        request.getfixturevalue("docker_engine")
    result = tmp_path / "soak.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "soak.py"), "--quick", "--silent", "--runtime", runtime,
         "--json", str(result)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.is_file(), f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    summary = json.loads(result.read_text())["summary"]
    assert summary["trials"] > 0, proc.stderr
    assert summary["falsePasses"] == [], proc.stdout
    assert summary["falseFailures"] == [], proc.stdout
    assert summary["recordsLost"] == [], proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"


def test_notify_latency_quick_runs_and_prints_the_ratios() -> None:
    out = run_bench("notify_latency.py", "--quick", "--silent")
    for design in ("inotify", "watchfiles", "timer"):
        assert re.search(rf"^{design}\s+5(\s+[\d.]+){{5}}$", out, re.M), out
    assert re.search(r"^ratio watchfiles/inotify: p50 x\d+, p99 x\d+$", out, re.M), out
    assert re.search(r"^ratio timer/watchfiles: p50 x[\d.]+, p99 x[\d.]+$", out, re.M), out
    assert re.search(r"^watchfiles as the fallback .*: (serves|DOES NOT SERVE) ", out, re.M), out
