"""The crash-point explorer: the plan of trials from the classes, the campaign's matrix and exit status, a trial
folder shipped back whole, and a campaign over the reference study on a local Dask cluster."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from studymon.engine.explore.campaign import (
    DONE,
    FAILED_TO_RUN,
    LOST,
    MISSED,
    PLANNED,
    CampaignFolder,
    Trial,
    campaign_status,
    matrix,
    to_resume,
)
from studymon.engine.explore.explorer import plan_trials
from studymon.engine.fs.fuse import NO_FUSE_ENV
from studymon.engine.explore.trial import unpack
from studymon.tui.explore_view import CampaignProgress
from tests.studies import jsonl, studymon
from tests.test_crashpoints import study


def test_a_trial_per_class_its_first_candidate_and_with_depth_2_a_second_kill_after_the_resume() -> None:
    from studymon.engine.explore.crashpoints import candidates, classes

    found = candidates(study(3).steps())
    by_class = classes(found)
    trials = plan_trials("s", found, all_points=False, depth=1, max_trials=None)
    assert [t.cls for t in trials] == list(by_class)
    assert [t.points for t in trials] == [[str(m[0].point)] for m in by_class.values()]
    assert [t.id for t in trials] == [f"s-{n}" for n in range(1, len(trials) + 1)]
    deep = plan_trials("s", found, all_points=False, depth=2, max_trials=None)
    assert len(deep) == 2 * len(by_class)
    charge = [t.points for t in deep if t.cls == "after:charge · charged diagnosis"]
    assert charge == [["after:charge/diagnosis"], ["after:charge/diagnosis", "after:charge/diagnosis"]]
    every = plan_trials("s", found, all_points=True, depth=1, max_trials=None)
    assert len(every) == len(found)
    assert len(plan_trials("s", found, all_points=True, depth=1, max_trials=5)) == 5


def _t(n: int, cls: str, state: str = DONE, ok: bool | None = True, **checks: bool | None) -> Trial:
    return Trial(n, f"s-{n}", [f"after:x#{n}"], cls, state=state, ok=ok, checks=checks)


def test_the_matrix_a_row_per_class_a_column_per_check_and_the_first_point_that_failed_each() -> None:
    trials = {
        1: _t(1, "A", chargedOnce=True, exitedCleanly=True),
        2: _t(2, "B", ok=False, chargedOnce=False, exitedCleanly=True),
        3: _t(3, "B", ok=False, chargedOnce=False, exitedCleanly=None),
        4: _t(4, "C", state=LOST, ok=None),
    }
    m = matrix(trials)
    assert m["checks"] == ["chargedOnce", "exitedCleanly"]
    assert m["rows"]["A"] == {"chargedOnce": "✓", "exitedCleanly": "✓", "": "✓"}
    assert m["rows"]["B"] == {"chargedOnce": "✗", "exitedCleanly": "?", "": "✗"}
    assert m["rows"]["C"] == {}, "a lost trial is no verdict"
    assert m["firstFailing"] == {"chargedOnce": "after:x#2"}


@pytest.mark.parametrize("states, status", [
    ([(DONE, True), (DONE, True)], 0),
    ([(DONE, True), (DONE, False)], 1),
    ([(DONE, True), (LOST, None)], 3),
    ([(DONE, True), (DONE, None)], 3),
    ([(DONE, True), (PLANNED, None)], 3),
    ([(LOST, None), (DONE, False)], 1),
])
def test_the_campaign_s_campaign_status(states: list[tuple[str, bool | None]], status: int) -> None:
    trials = {n: _t(n, f"c{n}", state=s, ok=ok) for n, (s, ok) in enumerate(states, 1)}
    assert campaign_status(trials) == status


def test_a_lost_trial_run_again_is_settled_by_its_new_run() -> None:
    trials = {1: _t(1, "A"), 2: _t(2, "B", state=LOST, ok=None)}
    assert campaign_status(trials) == 3
    trials[3] = Trial(3, "s-3", list(trials[2].points), "B", state=DONE, ok=True)
    assert campaign_status(trials) == 0
    trials[4] = _t(4, "C", state=LOST, ok=None)
    assert campaign_status(trials) == 3, "another point lost, not run again"


def test_resume_runs_each_lost_or_unrun_point_once_however_often_it_was_lost() -> None:
    trials = {1: _t(1, "A"), 2: _t(2, "B", state=LOST, ok=None), 3: _t(3, "C", state=PLANNED, ok=None),
              4: _t(4, "D", state=FAILED_TO_RUN, ok=None), 5: _t(5, "E", state=MISSED, ok=None)}
    assert [t.n for t in to_resume(trials)] == [2, 3, 4], "lost, never run, unable to run; not done, not missed"
    trials[6] = Trial(6, "s-6", list(trials[2].points), "B", state=LOST)  # run again, lost again
    assert [t.n for t in to_resume(trials)] == [6, 3, 4], "one trial per point: the latest"
    trials[7] = Trial(7, "s-7", list(trials[2].points), "B", state=DONE, ok=True)
    assert [t.n for t in to_resume(trials)] == [3, 4], "its point ran at last: nothing of it is left"


def test_a_campaign_s_progress_counts_each_trial_once_and_tells_the_time_to_go() -> None:
    clock = iter(range(100)).__next__
    c = CampaignProgress(clock=lambda: float(clock()))
    assert c.line().startswith("trace:")
    c.take("planned", {"classes": 3, "candidates": 7, "trials": 4})
    c.take("cluster", {"workers": ["tcp://h:1", "tcp://h:2"], "scheduler": "tcp://h:0"})
    for n in (1, 2, 3, 4):
        c.take("submitted", {"n": n, "id": f"s-{n}", "points": ["after:x"], "class": "A"})
    c.take("running", {"n": 1, "worker": "tcp://h:1"})
    c.take("running", {"n": 2, "worker": "tcp://h:2"})
    assert c.line() == "7 points in 3 classes · 0 done · 2 running · 2 left"
    assert c.to_go() is None, "no pace before a trial ended"
    c.take("done", {"n": 1, "seconds": 10.0, "ok": True})
    c.take("missed", {"n": 2, "seconds": 30.0})
    # Two trials left, none running: their mean time (20 s) each, over two workers.
    assert c.to_go() == 20.0 and c.line().endswith("· 1 missed · ~20s to go"), c.line()
    assert c.worker_line() == "workers: h:1 1 done · h:2 1 done"
    c.take("running", {"n": 3, "worker": "tcp://h:1"})
    assert c.worker_line() == "workers: h:1 1 done, running 3 · h:2 1 done"
    c.take("lost", {"n": 3, "detail": "gone"})
    c.take("ended", {"status": 3})
    assert c.line().endswith("1 lost · ended · exit 3"), c.line()


def test_a_missed_point_is_no_verdict_and_its_class_is_listed_as_missed() -> None:
    trials = {1: _t(1, "A"), 2: _t(2, "B", state=MISSED, ok=None)}
    assert campaign_status(trials) == 0, "no trial failed, none lost: the missed class is listed, not failed"
    assert matrix(trials)["rows"]["B"] == {"": "missed"}
    trials[3] = _t(3, "B", chargedOnce=True)  # its next candidate, hit
    assert matrix(trials)["rows"]["B"] == {"chargedOnce": "✓", "": "✓"}
    assert campaign_status({2: _t(2, "B", state=MISSED, ok=None)}) == 3, "nothing ran: nothing holds"


def test_the_journal_s_last_line_for_a_trial_is_what_it_is(tmp_path: Path) -> None:
    folder = CampaignFolder(tmp_path)
    folder.log(_t(1, "A", state=PLANNED, ok=None))
    folder.log(_t(1, "A", ok=False, chargedOnce=False))
    got = folder.trials()
    assert got[1].state == DONE and got[1].ok is False and got[1].checks == {"chargedOnce": False}
    assert len(jsonl(tmp_path / "trials.jsonl")) == 2, "appended, never rewritten"


def _tar(files: dict[str, bytes], link: tuple[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if link is not None:
            info = tarfile.TarInfo(link[0])
            info.type, info.linkname = tarfile.SYMTYPE, link[1]
            tar.addfile(info)
    return buf.getvalue()


def test_a_shipped_folder_is_written_whole_once_and_never_outside_itself(tmp_path: Path) -> None:
    dest = tmp_path / "trials" / "1"
    unpack(_tar({"./report.json": b"{}", "./study/ledger.jsonl": b"x\n"}), dest)
    assert (dest / "report.json").read_bytes() == b"{}" and (dest / "study" / "ledger.jsonl").is_file()
    with pytest.raises(FileExistsError, match="never overwritten"):
        unpack(_tar({"./report.json": b"[]"}), dest)
    assert (dest / "report.json").read_bytes() == b"{}"
    for hostile in (_tar({"../escaped": b"x"}), _tar({}, ("./out", "/etc/passwd"))):
        with pytest.raises(tarfile.TarError):
            unpack(hostile, tmp_path / "trials" / "2")
        assert not (tmp_path / "trials" / "2").exists() and not (tmp_path / "trials" / "escaped").exists()
        assert not list((tmp_path / "trials").glob(".*")), "no half-unpacked folder left"
    unpack(_tar({"/abs": b"x"}), tmp_path / "trials" / "3")  # an absolute name is taken inside
    assert (tmp_path / "trials" / "3" / "abs").read_bytes() == b"x"


DOUBLE = Path(__file__).resolve().parent / "doubles" / "points_study.js"


def _double(tmp: Path, fault: str, faults: dict[str, str] | None = None) -> Path:
    """The JavaScript double of the kill points (0.15 s between its steps, so a kill can land between any two);
    ``faults`` gives some studies (trials, by id) a recovery mistake of their own."""
    path = tmp / f"{fault}.json"
    path.write_text(json.dumps({"command": ["node", str(DOUBLE)], "backend": "process", "pause": 0.15,
                                "runSeconds": 0.5, "fault": fault, "faults": faults or {}, "containerPrefix": "sme"}))
    return path


@pytest.mark.slow
def test_a_campaign_on_a_local_cluster_holds_where_the_study_does_and_finds_a_recharge_at_its_point(
    tmp_path: Path,
) -> None:
    """Five classes, a trial each, on two local workers: the honest double's four hold; the fifth trial, the
    double that charges a run again when the crash came between its charge and its start, fails at that very
    class (after:charge, a diagnosis run charged), and the matrix names the point."""
    template = _double(tmp_path, "honest", {"ex-5": "recharge"})
    proc = studymon("explore", "--headless", "--template", str(template), "--workers", "2", "--max-trials", "5",
                    "ex=camp", cwd=tmp_path, timeout=600)
    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr[-4000:]
    camp = tmp_path / "camp"
    body = json.loads((camp / "campaign.json").read_text())
    assert body["study"] == "ex" and len(body["trials"]) == 5 and len(body["classes"]) > 10, body["classes"]
    assert [t["points"] for t in body["trials"]] == [[c["candidates"][0]] for c in body["classes"][:5]]
    honest, recharge = body["trials"][:4], body["trials"][4]
    assert all(t["state"] == "done" and t["ok"] is True for t in honest), honest
    assert recharge["points"] == ["after:charge/diagnosis"] and recharge["ok"] is False, recharge
    assert any(name.endswith("chargedOnce") for name in recharge["failed"]), recharge
    assert body["matrix"]["firstFailing"]["chargedOnce"] == "after:charge/diagnosis"
    assert body["matrix"]["rows"]["after:charge · charged diagnosis"]["chargedOnce"] == "✗"
    assert "chargedOnce at after:charge/diagnosis" in proc.stdout.split("first failing:", 1)[1], proc.stdout
    # Each trial is an evidence folder like any other: report judges it alone, as the campaign did.
    for trial in body["trials"]:
        out = camp / trial["out"]
        rep = studymon("report", "--json", str(out), cwd=tmp_path)
        assert rep.returncode == (0 if trial["ok"] else 1), rep.stdout + rep.stderr
        kill = json.loads((out / "kills" / "1" / "kill.json").read_text())
        assert kill["point"] == trial["points"][0], (kill["point"], trial)
        assert trial["worker"].startswith("tcp://127.0.0.1:") and trial["seconds"] > 0
    assert len({t["worker"] for t in body["trials"]}) == 2, "both workers ran trials"
    assert "studymon explore — ex" in proc.stdout and "campaign: exit 1" in proc.stdout
    # studymon report CAMPAIGN rebuilds it offline, judging every trial folder again.
    rep = studymon("report", str(camp), cwd=tmp_path)
    assert rep.returncode == 1 and "studymon explore — ex" in rep.stdout, rep.stdout + rep.stderr
    with (camp / "trials" / "2" / "study" / "ledger.jsonl").open("a") as f:
        f.write('{"seq": 1, "at": "2026-01-01T00:00:00.000Z", "kind": "halt", "content": {}}\n')
    studymon("report", str(camp), cwd=tmp_path)
    rebuilt = {t["n"]: t for t in json.loads((camp / "campaign.json").read_text())["trials"]}
    assert rebuilt[2]["ok"] is False and "study · ledgerWellFormed" in rebuilt[2]["failed"], rebuilt[2]
    assert rebuilt[1]["ok"] is True
    # The journal: a line per trial planned, one per trial ended.
    journal = jsonl(camp / "trials.jsonl")
    assert [line["n"] for line in journal if line["state"] == "planned"] == [1, 2, 3, 4, 5]
    assert sorted(line["n"] for line in journal if line["state"] == "done") == [1, 2, 3, 4, 5]


@pytest.mark.slow
def test_a_point_no_kill_can_land_at_is_tried_again_up_to_the_limit_and_its_class_listed_missed(
    tmp_path: Path,
) -> None:
    """Without the study's file system (no FUSE, forced here), the double that writes each result in one write with
    the record after it: no reader ever sees the ledger end at a result, so every ``after:runResult`` candidate is
    missed.  Each such class is tried at its next candidates up to the limit (or as many as it has), its row says
    missed, and the campaign, where nothing failed and nothing was lost, exits 0; every other class holds.  (With
    the file system those points are held exactly: tests/test_explore_acceptance.py.)"""
    from studymon.engine.explore.explorer import MISSED_TRIES

    template = _double(tmp_path, "one-write")
    proc = studymon("explore", "--headless", "--template", str(template), "--workers", "2", "ow=camp",
                    cwd=tmp_path, timeout=900, env={NO_FUSE_ENV: "1"})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    body = json.loads((tmp_path / "camp" / "campaign.json").read_text())
    rows = body["matrix"]["rows"]
    unreachable = [c for c in body["classes"] if all(p.startswith("after:runResult") for p in c["candidates"])]
    assert unreachable, [c["name"] for c in body["classes"]]
    retried = 0
    for c in body["classes"]:
        tried = [t for t in body["trials"] if t["class"] == c["name"]]
        if c in unreachable:
            assert [t["state"] for t in tried] == ["missed"] * min(MISSED_TRIES, len(c["candidates"])), tried
            assert [t["points"][0] for t in tried] == c["candidates"][:len(tried)], "the next candidate each time"
            assert all("before it was seen" in t["detail"] for t in tried), tried
            assert rows[c["name"]] == {"": "missed"}, rows[c["name"]]
            retried += len(tried) > 1
        else:
            assert [t["state"] for t in tried][-1] == "done" and tried[-1]["ok"] is True, (c["name"], tried)
    assert "campaign: exit 0" in proc.stdout
    assert retried, "a class of several candidates was tried again (the limit itself: tests/test_explore_logic.py)"
