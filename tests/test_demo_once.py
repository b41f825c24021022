"""Two demos at once on one machine: the second refuses before it writes anything, naming the first.

A demo's study ids are always alpha, beta and gamma; the first demo's keepers
hold them for as long as its studies run.  The second once wrote three folders,
then ended ``?`` for each study ("study id 'alpha' is in use") and printed a
``--resume`` command that could not help.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.test_cli_input import ROOT, studymon
from tests.waits import until


def test_a_second_demo_refuses_before_writing_and_names_the_running_one(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    first = subprocess.Popen(
        [sys.executable, "-m", "studymon.tui.cli", "demo", "--headless", "--backend", "process", "--out", "one"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        launches = [tmp_path / "one" / i / "launches.jsonl" for i in ("alpha", "beta", "gamma")]
        until(lambda: all(p.exists() for p in launches) or first.poll() is not None, 60, "the first demo's launches")
        assert first.poll() is None, "the first demo ended before the second could meet it"
        second = studymon("demo", "--headless", "--backend", "process", "--out", "two", cwd=tmp_path)
        assert second.returncode == 2, second.stdout + second.stderr
        said = second.stdout + second.stderr
        assert f"a studymon demo runs already, in {tmp_path / 'one'}" in said, said
        assert f"studymon attach {tmp_path / 'one' / 'alpha'}" in said and "nothing was written" in said, said
        assert "Traceback" not in said and "--resume" not in said, said
        assert not (tmp_path / "two").exists(), "nothing of the second demo is written"
    finally:
        if first.poll() is None:
            first.send_signal(signal.SIGINT)  # stops the studies at a safe point, evidence kept
        out, _ = first.communicate(timeout=120)
    assert first.returncode in (0, 3), out
