"""``studymon explore`` in a real terminal (tmux, 160x48): the campaign's console as a person sees it.

The JavaScript double, three trials on a local cluster of two workers: the progress and workers lines, the
trace's row and a row per trial with its point and class, the matrix filling in; Enter opens a trial's pane
and Escape comes back; at the end ``q`` closes the console and the shell shows the matrix and the exit status.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.test_e2e_tmux import HEIGHT, WIDTH, Tmux
from tests.test_explore import _double
from tests.test_overview_tmux import row_of

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_a_campaign_in_tmux_rows_matrix_a_trial_opened_then_the_matrix_in_the_shell(tmp_path: Path) -> None:
    t = _double(tmp_path, "honest")
    state = shlex.quote(os.environ["STUDYMON_PROCESS_RUNTIME"])
    command = (f"PYTHONPATH={shlex.quote(str(ROOT))} STUDYMON_PROCESS_RUNTIME={state} "
               f"{shlex.quote(sys.executable)} -m studymon.tui.cli explore "
               f"--template {shlex.quote(str(t))} --workers 2 --max-trials 3 tx=camp; echo EXIT=$?")
    term = Tmux(tmp_path)
    try:
        term.start(command)
        assert term.size() == (WIDTH, HEIGHT)
        term.wait_for("the trace's row", lambda s: row_of(s, "tx") and "the trace" in s, timeout=60)
        screen = term.wait_for("a row per trial, with its point and class",
                               lambda s: all(row_of(s, f"tx-{n}") for n in (1, 2, 3)) and "workers:" in s, timeout=90)
        assert "after:studyOpen" in row_of(screen, "tx-1"), screen
        screen = term.wait_for("every trial ended", lambda s: "3 done" in s and "ended · exit 0" in s, timeout=180)
        for n in (1, 2, 3):
            assert "✓" in row_of(screen, f"tx-{n}"), screen
        assert "studymon explore — tx" in screen and "after:studyOpen" in screen, "the matrix, a row per class"
        # The first row at the end is a trial's (sorted by verdict); Enter opens its pane, Escape comes back.
        term.keys("Enter")
        screen = term.wait_for("a trial's pane", lambda s: "runStarted" in s and "Back" in s and "3 done" not in s,
                               timeout=15)
        term.keys("k")
        term.wait_for("k says a trial's kills are its points", lambda s: "run by its worker" in s, timeout=10)
        term.keys("Escape")
        term.wait_for("the overview again", lambda s: "3 done" in s, timeout=10)
        term.keys("q")
        text = term.wait_for("the exit status line", lambda s: re.search(r"^EXIT=\d+", s, re.MULTILINE) is not None,
                             timeout=60, history=True)
        assert re.search(r"^EXIT=0$", text, re.MULTILINE), text[-3000:]
        assert "studymon explore — tx" in text, "the matrix, printed in the shell"
    finally:
        term.kill()
    body = json.loads((tmp_path / "camp" / "campaign.json").read_text())
    assert [t["ok"] for t in body["trials"]] == [True, True, True]
