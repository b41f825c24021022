"""The screen-latency bench still runs: a short run, in real terminals (tmux), through the real command line.

It checks that the bench works end to end (exit 0, a row per phase, the
kill line, the target lines), not the numbers: a run this short says
nothing about the targets.  Without toolong (CI does not install it) the
quick run measures studymon alone and says so; with toolong found it
measures both.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.benches import run_bench

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

from first_frame import find_toolong  # noqa: E402
from screen_latency import KILL_KEYS  # noqa: E402

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed: the bench runs the console in tmux"
)


def test_screen_latency_quick_measures_both_phases_and_the_kill() -> None:
    out = run_bench("screen_latency.py", "--quick", "--silent")
    programs = ["studymon"] + (["toolong"] if find_toolong(None) else [])
    if len(programs) == 1:
        assert "toolong not found: studymon measured alone" in out, out
    for phase, records in ((r"\(a\) 6 at 0\.3-1\.1 s", 6), (r"\(b\) 10 at 5/s", 10)):
        for program in programs:
            # n, p50, p90, max, missed: every record written was seen.
            row = rf"^{phase}\s+{program}\s+{records}(\s+[\d.]+){{3}}\s+0$"
            assert re.search(row, out, re.MULTILINE), out
        split = rf"^studymon {phase}, write -> engine read .* engine read -> visible: p50 [\d.]+"
        assert re.search(split, out, re.MULTILINE), out
        assert re.search(rf"^target {phase}: max <= 100 ms: (met|NOT MET) \(", out, re.MULTILINE), out
    assert re.search(
        rf"^manual kill, confirming key \({re.escape(KILL_KEYS[-1])}\) -> SIGKILL sent, 2 kills each of a fresh study: "
        r"p50 [\d.]+ / p99 [\d.]+ / max [\d.]+ ms$",
        out,
        re.MULTILINE,
    ), out
    assert re.search(r"^target kill key -> SIGKILL p99 <= 20 ms: (met|NOT MET) \(", out, re.MULTILINE), out
    assert "console exit status 0 after the study halted" in out, out
