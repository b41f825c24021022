"""Studies that drive their runs through ``$STUDYMON_RUNTIME``: what a study's environment says, and
that it reaches the console's own process runtime from the study's working folder.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from studymon.engine.runtimes.cli import prefix
from studymon.engine.runtimes.process import ProcessRuntime
from tests.studies import ROOT

pytestmark = pytest.mark.slow
TINY = ROOT / "tests" / "doubles" / "tiny_study.py"


def test_a_study_is_told_its_runtime_and_reaches_the_console_s_state_folder(tmp_path: Path) -> None:
    """From its own working folder (OUT), through the console's state folder given relative to the console's."""
    root = tmp_path / "procrt-rel"
    ProcessRuntime(root).run("smtest-seen", ["true"])
    look = (
        '{ printf "%s\\n" "$STUDYMON_RUNTIME" "$STUDYMON_PROCESS_RUNTIME"; '
        "$STUDYMON_RUNTIME ps -a --format '{{.Names}}'; } > seen.txt 2>&1; "
        f'exec {shlex.quote(sys.executable)} {shlex.quote(str(TINY))} "$@"'
    )
    (tmp_path / "t.json").write_text(json.dumps({"command": ["sh", "-c", look, "sh"], "backend": "process"}))
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", STUDYMON_PROCESS_RUNTIME="procrt-rel")
    proc = subprocess.run([sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", "t.json",
                           "s=s"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = (tmp_path / "s" / "seen.txt").read_text().splitlines()
    assert seen == [prefix("process"), str(root), "smtest-seen"], seen
