"""Twenty-four real studies on one console, in tmux at 160x48, driven by keys as a person would.

``studymon run`` with 24 ``ID=OUT`` pairs (the reference study, on the process runtime) shows the overview: every
id on one screen.  The test opens s05 with Enter, kills it from its pane once a run of it has just started
(``k``, ``k``), resumes it (``r``), comes back with Escape, waits for every verdict in the overview, then ``q``:
the shell shows a line per study and the summary, and the exit status.
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

from studymon.engine.judge import judge
from tests.studies import template
from tests.test_e2e_tmux import HEIGHT, WIDTH, Tmux, a_fresh_run, in_flight
from tests.waits import until

ROOT = Path(__file__).resolve().parent.parent
IDS = [f"s{i:02d}" for i in range(1, 25)]
KILLED = "s05"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def row_of(screen: str, study: str) -> str:
    """The overview's row of ``study`` (its id is the row's first word, after the selection mark)."""
    for line in screen.splitlines():
        words = line.replace("┃", " ").split()
        while words and words[0] in ("›", "▶", "›▶"):
            words = words[1:]
        if words[:1] == [study]:
            return line
    return ""


def test_24_studies_on_one_screen_one_killed_from_its_pane(tmp_path: Path) -> None:
    t = template(tmp_path, budget=50, runCost=10, diagnosisSeconds=3, backend="process", containerPrefix="smt")
    env = {"PYTHONPATH": str(ROOT), "STUDYMON_PROCESS_RUNTIME": os.environ["STUDYMON_PROCESS_RUNTIME"]}
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    pairs = " ".join(f"{i}={i}" for i in IDS)
    command = (f"{exports} {shlex.quote(sys.executable)} -m studymon.tui.cli run --template {shlex.quote(str(t))} "
               f"{pairs}; echo EXIT=$?")
    term = Tmux(tmp_path)
    try:
        term.start(command)
        assert term.size() == (WIDTH, HEIGHT)
        screen = term.wait_for("every id in the overview, on one screen, and the footer",
                               lambda s: all(row_of(s, i) for i in IDS) and "24 studies" in s and "^p palette" in s,
                               timeout=60)
        assert "⏎ Open" in screen and "/ Filter" in screen and "k Kill now" in screen, screen

        # s05: the fifth row; Enter opens its pane full screen.
        term.keys("Down", "Down", "Down", "Down")
        term.wait_for("s05 selected", lambda s: row_of(s, KILLED).replace("┃", "").lstrip().startswith("›"), timeout=10)
        term.keys("Enter")
        term.wait_for("s05's pane", lambda s: "Kill now" in s and "Back" in s and KILLED in s and not row_of(s, "s06"),
                      timeout=15)
        ledger = tmp_path / KILLED / "study" / "ledger.jsonl"
        term.keys("k")
        term.wait_for("the kill confirmation", lambda s: f"Kill {KILLED} now?" in s, timeout=10)
        run, age = until(lambda: a_fresh_run(ledger), 60, f"a run of {KILLED} started just now", step=0.02,
                         seen=lambda: in_flight(ledger))
        term.keys("k")
        term.wait_for(f"{KILLED} killed", lambda s: "killed" in s and "kill 1" in s, timeout=30)
        term.keys("r")
        term.wait_for(f"{KILLED} resumed", lambda s: "resum" in s or "finished" in s, timeout=30)
        term.keys("Escape")
        term.wait_for("the overview again", lambda s: all(row_of(s, i) for i in IDS), timeout=10)

        # Every study ends: every verdict in its row, the top line says exit 0.
        screen = term.wait_for("every verdict", lambda s: "exit 0" in s and all("✓" in row_of(s, i) for i in IDS),
                               timeout=240)
        assert "kill 1" in row_of(screen, KILLED), row_of(screen, KILLED)
        term.keys("q")
        text = term.wait_for("the exit status line", lambda s: re.search(r"^EXIT=\d+", s, re.MULTILINE) is not None,
                             timeout=90, history=True)
    finally:
        term.kill()

    status = int(re.search(r"^EXIT=(\d+)", text, re.MULTILINE).group(1))
    assert status == 0, text
    # A line per study, then the summary; no table of failures.
    lines = text.split("studymon studies", 1)[1].splitlines()
    per_study = {line.split()[1]: line for line in lines if line.strip().startswith(("✓", "✗", "?"))
                 and len(line.split()) > 1 and line.split()[1] in IDS}
    assert sorted(per_study) == IDS and all(line.split()[0] == "✓" for line in per_study.values()), text
    assert "did not pass" not in text
    total = sum(len(judge(tmp_path / i).checks) for i in IDS)
    assert re.search(rf"^✓ all {total} checks hold$", text, re.MULTILINE), text
    kill = json.loads((tmp_path / KILLED / "kills" / "1" / "kill.json").read_text())
    assert kill["trigger"] == "manual" and [t["run"] for t in kill["targets"]] == [run], (kill, age)
