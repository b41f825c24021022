"""The overview over real studies (the reference study, on the process runtime), driven by its keys:
open a running study and come back, kill one from its row (`k`, `k`) and resume it (`r`), the verdicts at the end,
failures first, and `q`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studymon.engine.events import State
from studymon.tui.app import StudymonApp
from studymon.tui.screens import OpenedStudyScreen
from studymon.widgets.dialogs import ConfirmScreen
from studymon.widgets.study_pane import StudyPane
from tests.test_console import SIZE, Lab, all_hold, failures, in_flight, kill_verdicts, starts, wait_exit, wait_until

pytestmark = pytest.mark.slow


async def test_a_kill_from_a_row_a_study_opened_and_back_and_the_verdicts_at_the_end(tmp_path: Path) -> None:
    lab = Lab(tmp_path, "process")
    try:
        # Five studies: more than fit side by side.  Longer runs leave room to catch c's in flight.
        planned = lab.fresh(["a", "b", "c", "d", "e"], diagnosisSeconds=5)
        app = StudymonApp(planned, save_dir=lab.tmp)
        async with app.run_test(size=SIZE) as pilot:
            overview = app.main.overview
            assert overview is not None and not app.main.panes
            sessions = app.supervisor.sessions
            await wait_until(pilot, "every study running", lambda: all(s.state == State.RUNNING for s in sessions.values()))

            # Open a, while it runs: its pane, full screen, with its ledger; Escape comes back to a's row.
            await pilot.press("enter")
            await wait_until(pilot, "a's pane", lambda: isinstance(app.screen, OpenedStudyScreen))
            assert app.screen.study == "a"
            pane = app.screen.query_one(StudyPane)
            await wait_until(pilot, "a's records in its pane", lambda: pane.stream.kept >= 3)
            await pilot.press("escape")
            await wait_until(pilot, "the overview again", lambda: not isinstance(app.screen, OpenedStudyScreen))
            assert app.main.current_study() == "a" and not list(app.query(StudyPane))

            # Kill c from its row, with its run in flight: k asks, k again kills.
            out = lab.tmp / "c"
            await wait_until(pilot, "c's run in flight", lambda: in_flight(app, "c"))
            await pilot.press("down", "down")
            assert app.main.current_study() == "c"
            await pilot.press("k")
            await wait_until(pilot, "the confirmation", lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("k")
            await wait_until(pilot, "kills/1/kill.json", (out / "kills" / "1" / "kill.json").is_file)
            assert json.loads((out / "kills" / "1" / "kill.json").read_text())["trigger"] == "manual"
            await wait_until(pilot, "c killed, its row saying so",
                             lambda: overview.summaries["c"].state == State.KILLED and sessions["c"].state == State.KILLED
                             and "waiting for resume" in overview.summaries["c"].detail)
            row = overview.table.render_line([r.id for r in overview.rows()].index("c")).text
            assert "killed" in row and "kill 1" in row, row
            await pilot.press("r")
            await wait_until(pilot, "c resumed", lambda: len(starts(out)) == 2)

            # Each study's diagnosis start lit its row up when it came.
            assert all(s.alert_run == "d1" for s in overview.summaries.values()), {
                i: s.alert_run for i, s in overview.summaries.items()}
            code = await wait_exit(app)
            # The end: every verdict in its row, the order failures first (none failed: the command's order).
            assert [s.id for s in overview.rows()] == ["a", "b", "c", "d", "e"]
            assert all(s.verdict == "ok" and s.finished for s in overview.summaries.values())
        assert code == 0, failures(app)
        for study in ("a", "b", "c", "d", "e"):
            all_hold(lab.tmp / study)
        assert all(kill_verdicts(out).values())
    finally:
        lab.cleanup()
