"""The explorer's console: a campaign run on a local Dask cluster, shown as the overview's rows (a row per
trial, each followed in its folder while it runs on this machine), its progress and its matrix; a trial opened
in its pane and back; a campaign stopped with q twice, its trials stopped and left for --resume."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from studymon.engine.events import State
from studymon.engine.explore.campaign import CampaignFolder, to_resume
from studymon.engine.explore.explorer import ExploreOptions
from studymon.tui.explore_app import ExploreApp, TrialScreen
from tests.test_console import wait_until
from tests.test_explore import _double
from tests.waits import until


def _steps() -> list[tuple[str, dict[str, Any]]]:
    """A campaign's steps as the explorer tells them: the trace, three trials on two workers, one failed."""
    steps: list[tuple[str, dict[str, Any]]] = [
        ("planned", {"classes": 3, "candidates": 9, "trials": 3}),
        ("cluster", {"scheduler": "tcp://127.0.0.1:1", "workers": ["tcp://127.0.0.1:2", "tcp://127.0.0.1:3"]}),
    ]
    points = ["after:studyOpen", "after:charge/diagnosis", "container:die/diagnosis"]
    classes = ["after:studyOpen · nothing", "after:charge · charged diagnosis", "container:die · exited diagnosis"]
    steps += [("submitted", {"n": n, "id": f"ex-{n}", "points": [points[n - 1]], "class": classes[n - 1]})
              for n in (1, 2, 3)]
    steps += [
        ("running", {"n": 1, "id": "ex-1", "worker": "tcp://127.0.0.1:2", "out": None}),
        ("running", {"n": 2, "id": "ex-2", "worker": "tcp://127.0.0.1:3", "out": None}),
        ("done", {"n": 1, "ok": True, "failed": [], "points": [points[0]], "out": None, "seconds": 6.0}),
        ("missed", {"n": 2, "detail": "the study had gone on", "out": None, "seconds": 4.0}),
        ("matrix", {"checks": ["chargedOnce"], "rows": {classes[0]: {"chargedOnce": "✓", "": "✓"},
                                                        classes[1]: {"": "missed"}},
                    "firstFailing": {}}),
    ]
    return steps


def _rows(app: ExploreApp) -> dict[str, str]:
    table = app.overview.table
    return {s.id: table.render_line(y).text for y, s in enumerate(app.overview.rows())}


async def test_the_steps_of_a_campaign_are_rows_labels_notes_progress_and_the_matrix() -> None:
    options = ExploreOptions(study="ex", folder=Path("/nowhere"), template={"containerPrefix": "smx"})
    app = ExploreApp(options, start_campaign=False, wall_clock=lambda: 1_800_000_000.0)
    async with app.run_test(size=(160, 48)) as pilot:
        for what, facts in _steps():
            app.take(what, facts)
        app.overview.flush()
        await pilot.pause()
        rows = _rows(app)
        assert list(rows) == ["ex-1", "ex-2", "ex-3"]
        assert "queued" in rows["ex-3"], rows
        assert "container:die/diagnosis  [container:die · exited diagnosis]" in rows["ex-3"], rows
        assert "missed" in rows["ex-2"] and "after:charge/diagnosis" in rows["ex-2"]
        assert "done" in rows["ex-1"], "no folder came back: the explorer's word"
        assert "3 trials" in app.overview.header.render().plain
        line = app.campaign.line()
        assert line == "9 points in 3 classes · 1 done · 0 running · 1 left · 1 missed · ~2s to go", line
        assert app.campaign.worker_line() == "workers: 127.0.0.1:2 1 done · 127.0.0.1:3 1 done"
        assert app.matrix_data["rows"]["after:charge · charged diagnosis"] == {"": "missed"}
        # The query reads a trial's label as its state.
        assert app.overview.set_query("state=queued")
        app.overview.flush()
        assert [s.id for s in app.overview.rows()] == ["ex-3"]
        # A trial with nothing to show yet opens no pane.
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, TrialScreen) or app.screen.study == "ex-3"


pytestmark = pytest.mark.slow


def _options(tmp: Path, name: str, faults: dict[str, str], max_trials: int) -> ExploreOptions:
    template = json.loads(_double(tmp, "honest", faults).read_text())
    return ExploreOptions(study=name, folder=tmp / "camp", template=template, workers=2, max_trials=max_trials)


def _notices(app: ExploreApp) -> list[str]:
    """What the app will say in its notifications from now on (widgets and screens notify through it)."""
    said: list[str] = []
    notify = app.notify

    def recording(message: str, *args: Any, **kwargs: Any) -> None:
        said.append(str(message))
        notify(message, *args, **kwargs)

    app.notify = recording  # type: ignore[method-assign]
    return said


def _trial_processes(study: str) -> list[psutil.Process]:
    """The trial runners and the doubles of campaign ``study``'s trials (``sme-ec-1-``, ``.../ec-1/...``), not
    those of another test's campaign."""
    trial = re.compile(rf"[-/]{re.escape(study)}-\d+[-/]")
    found = []
    for p in psutil.process_iter(["cmdline"]):
        line = " ".join(p.info["cmdline"] or [])
        if ("studymon.engine.explore.trial" in line or "points_study.js" in line) and trial.search(line):
            found.append(p)
    return found


async def test_a_campaign_in_the_console_a_row_per_trial_followed_live_its_matrix_and_a_trial_opened(
    tmp_path: Path,
) -> None:
    app = ExploreApp(_options(tmp_path, "ec", {"ec-5": "recharge"}, 5))
    said = _notices(app)
    followed_live: set[str] = set()
    seen_running = False
    seen_processes = False  # the matcher below finds this campaign's trials while they run
    async with app.run_test(size=(160, 48)) as pilot:
        deadline = time.monotonic() + 400
        while app.status is None:
            assert time.monotonic() < deadline, app.campaign.line()
            await pilot.pause(0.1)
            for n, study in app.ids.items():
                summary = app.overview.summaries[study]
                # Records on a trial's row while the explorer still says it runs: read from its folder live.
                if app.campaign.states.get(n) == "running" and summary.records:
                    followed_live.add(study)
                seen_running |= summary.state_words == "running"
            if not seen_processes and "running" in app.campaign.states.values():
                seen_processes = bool(_trial_processes("ec"))
        assert app.status == 1, app.campaign.line()
        assert seen_running and followed_live, "a local trial's row moves while it runs"
        body = json.loads((tmp_path / "camp" / "campaign.json").read_text())
        rows = app.overview.summaries
        assert list(rows) == ["ec", *(t["id"] for t in body["trials"])], "the trace, then a row per trial"
        for t in body["trials"]:
            row = rows[t["id"]]
            assert row.ok is t["ok"] and row.checks is not None, (row, t)
            assert " then ".join(t["points"]) in row.note and t["class"] in row.note
            assert row.state is (State.FINISHED_OK if t["ok"] else State.FINISHED_FAIL)
            assert row.records > 0 and row.round is not None, "its folder's records, round and stage"
        assert rows["ec-5"].ok is False
        assert "5 done" in app.campaign.line() and "ended · exit 1" in app.campaign.line()
        workers = app.campaign.workers
        assert len(workers) == 2 and sum(w.done for w in workers.values()) == 5, workers
        assert app.matrix_data["firstFailing"]["chargedOnce"] == "after:charge/diagnosis"
        assert app.overview.rows()[0].id == "ec-5", "at the end, failures first"
        # Enter opens the failed trial's pane, full screen, with its whole ledger; its study actions say no.
        app.overview.select_study("ec-5")
        await pilot.press("enter")
        await wait_until(pilot, "ec-5's pane", lambda: isinstance(app.screen, TrialScreen))
        assert isinstance(app.screen, TrialScreen) and app.screen.study == "ec-5"
        ledger = (tmp_path / "camp" / "trials" / "5" / "study" / "ledger.jsonl").read_text().splitlines()
        seqs = [json.loads(line)["seq"] for line in ledger]
        pane = app.screen.pane
        await wait_until(pilot, "its whole ledger", lambda: len(pane.stream.store.records) >= len(seqs))
        assert [r.seq for r in pane.stream.store.records] == seqs
        await pilot.press("k")
        await wait_until(pilot, "k's notice", lambda: any("run by its worker" in text for text in said))
        await pilot.press("escape")
        await wait_until(pilot, "back to the rows", lambda: not isinstance(app.screen, TrialScreen))
        assert app.overview.selected == "ec-5"
        await pilot.press("q")
    assert app.return_code == 1
    assert seen_processes and not _trial_processes("ec"), "the trials' processes were found running, none is left"


async def test_q_twice_stops_a_running_campaign_and_leaves_its_trials_for_resume(tmp_path: Path) -> None:
    app = ExploreApp(_options(tmp_path, "eq", {}, 8))
    said = _notices(app)
    async with app.run_test(size=(160, 48)) as pilot:
        deadline = time.monotonic() + 300
        while "running" not in app.campaign.states.values():
            assert time.monotonic() < deadline and app.status is None, app.campaign.line()
            await pilot.pause(0.1)
        await pilot.press("q")
        await wait_until(pilot, "q's question", lambda: any("q again stops it" in text for text in said))
        assert app.status is None, "one q only asks"
        await pilot.press("q")
        while app.is_running and time.monotonic() < deadline:
            await pilot.pause(0.1)
    assert app.return_code == 3, app.campaign.line()
    left = to_resume(CampaignFolder(tmp_path / "camp").trials())
    assert left, "the trials that did not end are left for --resume"
    until(lambda: not _trial_processes("eq"), 20, "the running trials stopped with their cluster")
