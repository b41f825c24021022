"""Many studies in one command: 64 run headless to their ends, each line of the log naming its study, and the end
says one line per study, then the checks of those that did not pass."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from studymon.engine.launch.prepare import MAX_STUDIES
from tests.studies import ROOT, studymon

pytestmark = pytest.mark.slow
TINY = ROOT / "tests" / "doubles" / "tiny_study.py"


def test_a_command_takes_at_least_64_studies() -> None:
    assert MAX_STUDIES >= 64


def test_64_studies_run_headless_each_line_naming_its_study(tmp_path: Path) -> None:
    good = tmp_path / "tiny.json"
    good.write_text(json.dumps({"command": [sys.executable, str(TINY)], "backend": "process", "fault": "none"}))
    ids = [f"s{i:02d}" for i in range(MAX_STUDIES)]
    started = time.monotonic()
    proc = studymon("run", "--headless", "--template", str(good), *(f"{i}={i}" for i in ids), cwd=tmp_path, timeout=600)
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    table_at = next(n for n, line in enumerate(lines) if line.startswith("studymon studies"))
    log = [line for line in lines[:table_at] if line.strip()]
    # No terminal: one line per notable event, each opening with its study's id.
    assert log and all(line.split()[0] in ids for line in log if not line.startswith(("studymon", " "))), log[:20]
    for i in ids:
        assert any(line.startswith(f"{i} checks ✓") for line in log), i
    # The end: a line per study, all ✓ with their counts, no table of failures (none failed), the sum.
    summary = [line.split() for line in lines[table_at + 2 : table_at + 2 + len(ids)]]
    assert [words[1] for words in summary] == ids
    assert all(words[0] == "✓" and words[2:] == ["6", "✓", "0", "✗", "0", "?"] for words in summary), summary
    assert lines[table_at + 2 + len(ids)] == f"✓ all {6 * len(ids)} checks hold"
    assert "did not pass" not in proc.stdout
    assert lines[-len(ids) :] == [f"{i}: evidence in {tmp_path / i}" for i in ids]
    assert took < 300, f"64 tiny studies took {took:.0f} s"


def test_the_live_block_of_many_studies_is_a_line_each() -> None:
    """On a terminal, from MANY_STUDIES on, the headless block is a row per study, as the console's overview."""
    import io

    from rich.console import Console

    from studymon.engine.events import KillStep, Progress, State, StateChanged
    from studymon.engine.judge.table import MANY_STUDIES
    from studymon.tui.headless import HeadlessView

    ids = [f"s{i:02d}" for i in range(48)]
    out = Console(file=io.StringIO(), width=160, force_terminal=True, color_system=None)
    view = HeadlessView(ids, out)
    view(StateChanged("s07", State.KILLED))
    view(Progress("s07", 2, "diagnosis", 30.0, 100.0, (("d2", None),)))
    view(KillStep("s07", 1, "killed", "SIGKILL to 4242"))
    with out.capture() as got:
        out.print(view.render())
    lines = got.get().splitlines()
    assert len(lines) == 1 + len(ids), lines[:3]
    row = next(line for line in lines if line.startswith("s07"))
    assert row.split()[:6] == ["s07", "killed", "2", "diagnosis", "70/100", "1"], row
    assert "kill 1: killed — SIGKILL to 4242" in row
    few = HeadlessView(ids[: MANY_STUDIES - 1], out)
    with out.capture() as got:
        out.print(few.render())
    assert "╭" in got.get(), "fewer studies: a block each, as before"
