"""The kill-reaction bench still runs: a few triggers through the real engine and the baseline.

It checks that the bench works end to end (exit 0, the summary printed), not
the numbers: those depend on the machine and are read by a person.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_kill_reaction_quick_runs_and_prints_p99() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "kill_reaction.py"), "--quick", "--silent"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    out = proc.stdout
    assert re.search(r"^engine\s+10\s+3\s+[\d.]+\s+[\d.]+\s+[\d.]+$", out, re.M), out
    assert re.search(r"^baseline\s+10\s+3\s+[\d.]+\s+[\d.]+\s+[\d.]+$", out, re.M), out
    assert re.search(r"^engine p99 target \(<= 2 ms at every size\): (met|MISSED) ", out, re.M), out
    assert "engine sessions that ran the study to its halt after the kill at 10 lines: 3/3" in out, out
