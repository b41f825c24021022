"""The explorer's decisions, each in well under a second: the command line's campaign options, a trial's command
(every point armed), a missed point read from a trial's folder, and the retry of a missed point at its class's
next candidate, up to its limit.  What these decide is run for real in ``tests/test_explore*.py``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.contract.folder import EvidenceFolder
from studymon.engine.evidence.records import ArmLine
from studymon.engine.evidence.writer import append_jsonl
from studymon.engine.explore.campaign import DONE, FAILED_TO_RUN, LOST, MISSED, Trial
from studymon.engine.explore.crashpoints import candidates, classes
from studymon.engine.explore.explorer import MISSED_TRIES, ExploreOptions, Explorer, plan_trials
from studymon.engine.explore.trial import missed_points, trial_command, trial_outcome
from studymon.tui.cli import build_parser, explore_options
from tests.test_crashpoints import study

T0 = 1_800_000_000.0


# --- the command line ----------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "depth", "every", "most"), [
    ([], 1, False, None),
    (["--depth", "2"], 2, False, None),
    (["--all"], 1, True, None),
    (["--all", "--depth", "2", "--max-trials", "7"], 2, True, 7),
])
def test_the_command_line_s_depth_all_and_max_trials_reach_the_campaign(
    tmp_path: Path, argv: list[str], depth: int, every: bool, most: int | None
) -> None:
    args = build_parser().parse_args(["explore", *argv, f"s={tmp_path / 'camp'}"])
    options = explore_options(args)
    assert (options.depth, options.all_points, options.max_trials) == (depth, every, most)
    assert options.study == "s" and options.folder == tmp_path / "camp" and not options.resume
    assert not (tmp_path / "camp").exists(), "the options are read; nothing is written"


def test_depth_is_one_or_two() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["explore", "--depth", "3", "s=camp"])


# --- a trial ---------------------------------------------------------------------------------------


def test_a_trial_arms_every_one_of_its_points_in_order(tmp_path: Path) -> None:
    task = {"n": 4, "id": "s-4", "points": ["after:charge/diagnosis", "after:charge/diagnosis#1"],
            "template": {"containerPrefix": "inforsi", "backend": "process"}}
    argv = trial_command(task, tmp_path / "t.json", tmp_path / "s-4")
    assert argv[:3] == [sys.executable, "-m", "studymon.engine.explore.trial"]
    assert argv[3:6] == ["process", "inforsi-s-4-", "--"]
    assert argv[6:13] == [sys.executable, "-m", "studymon", "run", "--headless", "--template",
                          str(tmp_path / "t.json")]
    docker = trial_command({**task, "template": {"backend": "docker"}}, tmp_path / "t.json", tmp_path / "s-4")
    assert docker[3:5] == ["docker", "inforsi-s-4-"], "the template's backend, and the default prefix"
    kills = [argv[i + 1] for i, a in enumerate(argv) if a == "--kill"]
    assert kills == ["s-4:after:charge/diagnosis", "s-4:after:charge/diagnosis#1"]
    assert argv[-1] == f"s-4={tmp_path / 's-4'}" and "--headless" in argv


def test_a_trial_s_missed_points_are_read_from_its_arms(tmp_path: Path) -> None:
    arms = tmp_path / EvidenceFolder.ARMS
    assert missed_points(tmp_path) == [], "no arms.jsonl: nothing missed"
    append_jsonl(arms, ArmLine("arm", T0, point="after:decision#2").to_json())
    append_jsonl(arms, ArmLine("fired", T0 + 1, kill=1, run="d1", point="after:decision#2", from_seq=3).to_json())
    assert missed_points(tmp_path) == []
    append_jsonl(arms, ArmLine("arm", T0 + 2, point="after:stageOpen#3").to_json())
    append_jsonl(arms, ArmLine("missed", T0 + 3, run=None, point="after:stageOpen#3",
                               detail="the next record was written before the freeze", from_seq=9).to_json())
    with open(arms, "a", encoding="utf-8") as f:
        f.write("not json\n")
    assert missed_points(tmp_path) == ["after:stageOpen#3: the next record was written before the freeze"]


def test_a_trial_s_outcome_is_its_report_s_verdict_and_its_missed_points(tmp_path: Path) -> None:
    """What the worker sends back: a verdict from report.json, and the points arms.jsonl says were missed (which
    make the trial no verdict at the explorer); no report.json, and the trial could not run."""
    import json

    checks = [{"scope": "study", "name": "exitedCleanly", "ok": True, "detail": ""},
              {"scope": "kill 1", "name": "killTriggered", "ok": None, "detail": "missed"}]
    (tmp_path / EvidenceFolder.REPORT).write_text(json.dumps({"checks": checks}))
    append_jsonl(tmp_path / EvidenceFolder.ARMS, ArmLine("missed", T0, point="after:decision#2",
                                                          detail="too late", from_seq=4).to_json())
    got = trial_outcome(tmp_path, 3, "x" * 10_000)
    assert got["state"] == DONE and got["exit"] == 3 and got["ok"] is None
    assert got["missed"] == ["after:decision#2: too late"] and got["unknown"] == ["kill 1 · killTriggered"]
    assert len(got["output"]) < 10_000, "the output is kept short"
    (tmp_path / EvidenceFolder.REPORT).unlink()
    failed = trial_outcome(tmp_path, 1, "Traceback: boom")
    assert failed["state"] == "error" and "no report.json: exit 1" in failed["detail"] and "boom" in failed["detail"]


# --- a missed point is tried again at its class's next candidate -----------------------------------


class Ended:
    """What a trial's future gives the explorer once it ended: the worker's result, or what it raised."""

    def __init__(self, result: dict[str, Any] | BaseException) -> None:
        self._result = result

    def result(self) -> dict[str, Any]:
        if isinstance(self._result, BaseException):
            raise self._result
        return self._result


def explorer(tmp_path: Path, max_trials: int | None = None, depth: int = 1) -> Explorer:
    tmp_path.mkdir(exist_ok=True)
    e = Explorer(ExploreOptions(study="s", folder=tmp_path, max_trials=max_trials, depth=depth))
    e.plan = {"study": "s", "token": "t"}
    e.found = candidates(study(3).steps())
    for t in plan_trials("s", e.found, all_points=False, depth=depth, max_trials=max_trials):
        e.trials[t.n] = t
    return e


def missed(point: str) -> Ended:
    return Ended({"state": DONE, "exit": 3, "missed": [f"{point}: the next record came first"], "folder": b""})


def test_a_missed_point_is_tried_again_at_its_class_s_next_candidate_up_to_the_limit(tmp_path: Path) -> None:
    e = explorer(tmp_path)
    cls = next(name for name, members in classes(e.found).items() if len(members) > MISSED_TRIES + 1)
    members = [str(c.point) for c in classes(e.found)[cls]]
    trial = next(t for t in e.trials.values() if t.cls == cls)
    tried = [trial.points[0]]
    for _ in range(MISSED_TRIES - 1):
        retry = e._ended(trial, missed(trial.points[0]))
        assert trial.state == MISSED and trial.ok is None, "a missed point is no verdict"
        assert retry is not None and retry.cls == cls and retry.n == max(e.trials) + 1
        assert retry.points == [members[len(tried)]], "the next candidate of the class, in trace order"
        tried.append(retry.points[0])
        e.trials[retry.n] = retry
        trial = retry
    assert e._ended(trial, missed(trial.points[0])) is None, f"{MISSED_TRIES} missed: the class is left missed"
    assert [t.state for t in e.trials.values() if t.cls == cls] == [MISSED] * MISSED_TRIES


def test_a_class_with_no_candidate_left_or_a_campaign_at_its_most_trials_tries_no_more(tmp_path: Path) -> None:
    e = explorer(tmp_path)
    single = next(name for name, members in classes(e.found).items() if len(members) == 1)
    trial = next(t for t in e.trials.values() if t.cls == single)
    assert e._ended(trial, missed(trial.points[0])) is None, "its only candidate was tried"
    capped = explorer(tmp_path / "capped", max_trials=3)
    many = next(t for t in capped.trials.values() if len(classes(capped.found)[t.cls]) > 1)
    assert capped._ended(many, missed(many.points[0])) is None, "at --max-trials: no retry"


def test_a_depth_2_trial_missed_is_tried_again_with_its_second_kill(tmp_path: Path) -> None:
    e = explorer(tmp_path, depth=2)
    deep = next(t for t in e.trials.values() if len(t.points) == 2 and len(classes(e.found)[t.cls]) > 2)
    first = next(t for t in e.trials.values() if t.cls == deep.cls and len(t.points) == 1)
    e.trials[first.n].state = MISSED
    retry = e._ended(deep, missed(deep.points[0]))
    assert retry is not None and retry.points[1:] == deep.points[1:]
    assert retry.points[0] not in (first.points[0], deep.points[0])


def test_a_trial_that_ran_is_its_verdict_and_one_that_could_not_is_none(tmp_path: Path) -> None:
    e = explorer(tmp_path)
    a, b, c, d = list(e.trials.values())[:4]
    done = {"state": DONE, "exit": 1, "ok": False, "failed": ["chargedOnce"], "unknown": [],
            "checks": {"chargedOnce": False, "exitedCleanly": True}, "missed": [], "folder": b"", "seconds": 9.5}
    assert e._ended(a, Ended(done)) is None
    assert (a.state, a.ok, a.failed, a.checks["chargedOnce"], a.seconds) == (DONE, False, ["chargedOnce"], False, 9.5)
    assert e._ended(b, Ended({"state": "error", "detail": "no report.json", "folder": b""})) is None
    assert (b.state, b.ok) == (FAILED_TO_RUN, None)
    assert e._ended(c, Ended(OSError("the scheduler went away"))) is None
    assert (c.state, c.ok) == (LOST, None) and "scheduler went away" in c.detail
    # A second worker found the trial claimed by one that was lost while it ran: lost, never run twice.
    claimed = {"state": LOST, "worker": "tcp://h:1", "detail": "its worker tcp://h:1 was lost while it ran"}
    assert e._ended(d, Ended(claimed)) is None
    assert (d.state, d.ok, d.detail) == (LOST, None, claimed["detail"])
    ends = {t.n: t.state for t in e.folder.trials().values()}
    assert [ends[t.n] for t in (a, b, c, d)] == [DONE, FAILED_TO_RUN, LOST, LOST], "each end is in the journal"


# --- what the explorer says, and a trial's record ----------------------------------------------------


def test_each_end_of_a_trial_is_told_to_the_progress_with_its_facts(tmp_path: Path) -> None:
    """The console and the headless printer follow a campaign by these events: each kind, and its facts."""
    told: list[tuple[str, dict[str, Any]]] = []
    e = explorer(tmp_path)
    e.progress = lambda what, facts: told.append((what, facts))
    a, b, c, d, f = list(e.trials.values())[:5]
    e._ended(a, Ended({"state": DONE, "exit": 1, "ok": False, "failed": ["kill 1 · d1 · chargedOnce"],
                       "unknown": ["study · exitedCleanly"], "checks": {"chargedOnce": False}, "missed": [],
                       "folder": b"", "seconds": 4.0, "worker": "tcp://h:1"}))
    e._ended(b, Ended({"state": "error", "detail": "no report.json: exit 2", "folder": b""}))
    e._ended(c, Ended(OSError("the scheduler went away")))
    e._ended(d, Ended({"state": LOST, "worker": "tcp://h:2", "detail": "its worker tcp://h:2 was lost"}))
    e._ended(f, missed(f.points[0]))
    kinds = [what for what, _ in told]
    assert kinds[:4] == ["done", "error", "lost", "lost"] and kinds[4] == "missed", kinds
    done = told[0][1]
    assert (done["n"], done["ok"], done["failed"], done["points"], done["worker"], done["seconds"]) == (
        a.n, False, ["kill 1 · d1 · chargedOnce"], a.points, "tcp://h:1", 4.0)
    assert (a.unknown, a.exit) == (["study · exitedCleanly"], 1)
    assert told[1][1] == {"n": b.n, "detail": "no report.json: exit 2", "out": None}
    assert told[2][1] == {"n": c.n, "detail": "OSError: the scheduler went away"}
    assert told[3][1] == {"n": d.n, "detail": "its worker tcp://h:2 was lost"} and d.worker == "tcp://h:2"
    assert told[4][1]["n"] == f.n and "the next record came first" in told[4][1]["detail"]
    retry = e._next_candidate(f) if len(classes(e.found)[f.cls]) > 1 else None
    assert retry is None or retry.id == f"s-{retry.n}", "a retry is a study of its own, named as the plan's"


def test_a_trial_s_journal_line_reads_back_as_itself() -> None:
    t = Trial(7, "s-7", ["after:charge", "after:charge#1"], "after:charge · charged diagnosis", state=DONE, ok=False,
              failed=["kill 1 · d1 · chargedOnce"], unknown=[], checks={"chargedOnce": False}, worker="tcp://h:1",
              host="h", seconds=3.5, exit=1, detail="")
    line = t.as_json()
    assert line["class"] == "after:charge · charged diagnosis" and line["out"] == t.out
    back = Trial.from_json(line)
    assert back == t and back.cls == t.cls


def test_a_trial_s_verdict_is_by_check_name_over_its_scopes() -> None:
    from studymon.engine.explore.campaign import trial_verdict
    from studymon.engine.judge.verdict import Check

    got = trial_verdict([Check("chargedOnce", True, "", "kill 1 · d1"), Check("chargedOnce", False, "", "kill 1 · a1"),
                         Check("exitedCleanly", None, "", "study"), Check("killDelivered", True, "", "kill 1")])
    assert got == {"ok": False, "failed": ["kill 1 · a1 · chargedOnce"], "unknown": ["study · exitedCleanly"],
                   "checks": {"chargedOnce": False, "exitedCleanly": None, "killDelivered": True}}


def test_the_matrix_marks_the_worst_of_a_class_and_a_class_missed_until_one_of_its_trials_ran() -> None:
    from studymon.engine.explore.campaign import matrix

    def t(n: int, cls: str, state: str, ok: bool | None, **checks: bool | None) -> Trial:
        return Trial(n, f"s-{n}", [f"after:x#{n}"], cls, state=state, ok=ok, checks=dict(checks))

    rows = matrix({1: t(1, "A", MISSED, None), 2: t(2, "A", DONE, True, c=True),
                   3: t(3, "B", DONE, None, c=None), 4: t(4, "B", DONE, False, c=False), 5: t(5, "B", DONE, True, c=True),
                   6: t(6, "C", MISSED, None), 7: t(7, "C", MISSED, None)})["rows"]
    assert rows["A"] == {"": "✓", "c": "✓"}, "missed, then hit: the hit's verdict, no word of the miss"
    assert rows["B"] == {"": "✗", "c": "✗"}, "✗ beats ? beats ✓, whatever their order"
    assert rows["C"] == {"": "missed"}
    assert matrix({1: t(1, "D", DONE, None, c=None), 2: t(2, "D", DONE, True, c=True)})["rows"]["D"] == {
        "": "?", "c": "?"}


def test_a_trial_that_raised_on_its_worker_could_not_run_and_one_whose_worker_died_names_that_worker(
    tmp_path: Path,
) -> None:
    from distributed import KilledWorker

    told: list[tuple[str, dict[str, Any]]] = []
    e = explorer(tmp_path)
    e.progress = lambda what, facts: told.append((what, facts))
    a, b, c = list(e.trials.values())[:3]
    assert e._ended(a, Ended(RuntimeError("the trial's own failure"))) is None
    assert (a.state, a.detail) == (FAILED_TO_RUN, "RuntimeError: the trial's own failure")
    assert told[-1] == ("error", {"n": a.n, "detail": "RuntimeError: the trial's own failure"})

    class Worker:
        address = "tcp://10.0.0.9:4242"

    dead = KilledWorker("studymon-trial-t-2", Worker(), 0)  # type: ignore[arg-type]
    assert e._ended(b, Ended(dead)) is None
    assert b.state == LOST and b.worker == "tcp://10.0.0.9:4242", "the worker it was lost with, from the error"
    # A result as an older worker wrote it: no failed or unknown lists, no detail.
    assert e._ended(c, Ended({"state": DONE, "ok": True, "missed": [], "folder": b""})) is None
    assert (c.state, c.failed, c.unknown) == (DONE, [], [])
    d = list(e.trials.values())[3]
    assert e._ended(d, Ended({"state": LOST, "worker": "w"})) is None and d.detail == ""
