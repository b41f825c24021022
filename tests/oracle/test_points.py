"""The kill point's grammar (docs/contract.md, commit 4d27161, killTriggered: "A kill point is written exactly so"),
held by every file that names a point: ``kill.json``, ``arms.jsonl``'s lines, a campaign's journal and
``campaign.json``'s plan.  README.md, open question 65.  No study is run.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.arms import judge_kill_triggered
from tests.oracle.campaign import JW, SA, read_journal, read_plan
from tests.oracle.controllers import Controllers
from tests.oracle.evidence import Ledger, Record, Research, Timeline, load_arms, parse_point
from tests.oracle.killfolder import KillFolder
from tests.oracle.kills import StudyFacts, kill_view
from tests.oracle.verdict import Tally

AT = "2027-01-15T08:00:00.000Z"
KILL = Fraction(1_800_000_000)

# Each rule of the grammar, one text that breaks it.
NOT_POINTS = {
    "a purpose after halt, no run's record": "after:halt/diagnosis",
    "a purpose after studyOpen": "after:studyOpen/diagnosis",
    "a purpose after decision": "after:decision/baseline",
    "a purpose starting with _": "after:runStarted/_diagnosis",
    "a purpose starting with -": "container:die/-x",
    "a purpose starting with .": "after:charge/.x",
    "a 64-character purpose": "after:runStarted/" + "a" * 64,
    "an empty purpose": "after:runStarted/",
    "a purpose with a character outside its set": "after:runStarted/diag+nosis",
    "a purpose of a non-ASCII letter": "after:runStarted/diagnosé",
    "#0": "after:charge#0",
    "#1000001": "after:charge#1000001",
    "#N of a non-ASCII digit": "after:charge#\u0661",
    "an empty #": "after:charge#",
    "a signed #N": "after:charge#+1",
    "an unknown kind": "after:restart",
    "a kind in another case": "after:RunStarted",
    "an unknown action": "container:stop",
    "an action after after:": "after:die",
    "a kind after container:": "container:charge",
    "a newline after it": "after:charge\n",
    "a space before it": " after:charge",
    "no mode": "charge",
    "#N before the purpose": "after:runStarted#2/diagnosis",
}
POINTS = {
    "after:runStarted/diagnosis#3": ("after", "runStarted", "diagnosis", 3),
    "container:die/abl.ation-2": ("container", "die", "abl.ation-2", 1),
    "after:halt": ("after", "halt", None, 1),
    "after:halt#2": ("after", "halt", None, 2),
    "after:diagnosisSettlement/d_1": ("after", "diagnosisSettlement", "d_1", 1),
    "after:runPlanned/Baseline": ("after", "runPlanned", "Baseline", 1),
    "container:create/9": ("container", "create", "9", 1),
    "container:start#7": ("container", "start", None, 7),
    "after:charge/" + "a" * 63: ("after", "charge", "a" * 63, 1),
    "after:charge#1000000": ("after", "charge", None, 1_000_000),
    "after:runResult/x#1": ("after", "runResult", "x", 1),
    "after:export": ("after", "export", None, 1),
}
GOOD = list(POINTS)
BAD = list(NOT_POINTS.values())
BAD_IDS = list(NOT_POINTS)
EVERY = [(p, True) for p in GOOD] + [(p, False) for p in BAD]
EVERY_IDS = GOOD + BAD_IDS


@pytest.mark.parametrize("point", GOOD)
def test_a_point_of_the_grammar_is_read(point: str) -> None:
    assert parse_point(point) == POINTS[point]


@pytest.mark.parametrize("point", BAD, ids=BAD_IDS)
def test_any_other_text_names_no_point(point: str) -> None:
    assert parse_point(point) is None


@pytest.mark.parametrize("value", [None, 3, ["after:charge"], {"point": "after:charge"}, b"after:charge"])
def test_a_value_that_is_no_text_names_no_point(value: Any) -> None:
    assert parse_point(value) is None


def test_a_zero_padded_count_is_still_a_count_in_ascii_digits() -> None:
    """ "#N a count from 1 to 1 000 000 in ASCII digits": #01 is 1, #0001000000 is 1 000 000 (open question 65)."""
    assert parse_point("after:charge#01") == ("after", "charge", None, 1)
    assert parse_point("after:charge#0001000000") == ("after", "charge", None, 1_000_000)
    assert parse_point("after:charge#00") is None
    assert parse_point("after:charge#" + "0" * 5000 + "1000001") is None


# --- kill.json's point ------------------------------------------------------------------------------------


def facts() -> StudyFacts:
    at = KILL
    records = [
        Record(1, 1, AT, at, "studyOpen", {}, {}, False),
        Record(2, 2, AT, at, "charge", {"run": "d1"}, {}, False),
    ]
    return StudyFacts(
        Ledger(records=records, lines=len(records)),
        Research(study="s", prefix="inforsi"),
        Timeline(),
        Controllers(readable=True),
        finished=True,
        halted=True,
    )


@pytest.mark.parametrize(("point", "holds"), EVERY, ids=EVERY_IDS)
def test_kill_json_s_point_is_held_to_the_grammar(point: str, holds: bool) -> None:
    kill = {"trigger": "auto", "pid": 100, "at": AT, "beforeKillSeq": 2, "targets": [], "point": point}
    t = Tally()
    kill_view(facts(), KillFolder(1, "kills/1", kill=kill), t)
    said = any(
        "point is not a kill point of §7's grammar" in why for why in t.fails.get(("kill 1", "killEvidence"), [])
    )
    assert said is not holds, t.fails


# --- arms.jsonl's lines -----------------------------------------------------------------------------------


def write_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def arms_rows(event: str, point: str) -> list[dict[str, Any]]:
    """arms.jsonl with ``point`` on its ``event`` line (the arm line, or a fired or missed line of an armed
    after:charge)."""
    if event == "arm":
        return [{"event": "arm", "at": AT, "point": point}]
    extra = {"kill": 1} if event == "fired" else {"detail": "missed: not tested"}
    return [
        {"event": "arm", "at": AT, "point": "after:charge"},
        {"event": event, "at": AT, "point": point, "run": None, "fromSeq": 0, **extra},
    ]


@pytest.mark.parametrize("event", ["arm", "fired", "missed", "disarm"])
@pytest.mark.parametrize(("point", "holds"), EVERY, ids=EVERY_IDS)
def test_an_arms_line_whose_point_is_none_is_of_the_wrong_type(
    tmp_path: Path, event: str, point: str, holds: bool
) -> None:
    """docs/contract.md: a line whose point "is not of its type" cannot be read: killTriggered ✗, whatever
    the line would have said (a missed one is no `?`)."""
    rows = arms_rows(event, point) if event != "disarm" else [{"event": "disarm", "at": AT, "point": point}]
    write_lines(tmp_path / "arms.jsonl", rows)
    arms = load_arms(tmp_path)
    assert arms.readable is holds, arms.reason
    if holds:
        return
    assert "its point is no kill point" in (arms.reason or ""), arms.reason
    t = Tally()
    judge_kill_triggered(facts(), arms, [], t)
    assert any("arms.jsonl cannot be read" in why for why in t.fails[("study", "killTriggered")]), t.fails


def test_an_arms_line_without_a_point_is_still_the_seed_s(tmp_path: Path) -> None:
    write_lines(tmp_path / "arms.jsonl", [{"event": "arm", "at": AT}, {"event": "arm", "at": AT, "point": None}])
    arms = load_arms(tmp_path)
    assert arms.readable and [line.point for line in arms.lines] == [None, None], arms.reason


# --- the campaign's journal and campaign.json's plan ------------------------------------------------------


def trial(point: str) -> dict[str, Any]:
    return {
        "n": 1,
        "id": "c-1",
        "points": [point],
        "class": "k",
        "state": "planned",
        "out": "trials/1",
        "ok": None,
        "failed": [],
        "unknown": [],
        "checks": {},
        "exit": None,
    }


@pytest.mark.parametrize(("point", "holds"), EVERY, ids=EVERY_IDS)
def test_a_journal_line_is_a_trial_only_at_kill_points(tmp_path: Path, point: str, holds: bool) -> None:
    write_lines(tmp_path / "trials.jsonl", [trial(point)])
    t = Tally()
    journal = read_journal(tmp_path, "c", t)
    fails = t.fails.get(("campaign", JW), [])
    said = "trials.jsonl line 1: not a trial (points are not kill points)" in fails
    assert said is not holds, fails
    assert (1 in journal) is holds, journal
    if holds:
        assert fails == [], fails


@pytest.mark.parametrize(("point", "holds"), EVERY, ids=EVERY_IDS)
def test_campaign_json_s_candidates_are_kill_points(tmp_path: Path, point: str, holds: bool) -> None:
    plan = {
        "version": 1,  # the integer 1 (README.md, open question 78)
        "study": "c",
        "trace": "trace",
        "template": {"study": "c"},
        # Each candidate with exactly its four lists of what it leaves unfinished (README.md, open questions 68,
        # 77 and 78).
        "points": [
            {"point": point, "class": "k", "left": {"inFlight": [], "charged": [], "unrecorded": [], "unsettled": []}}
        ],
        "classes": [{"name": "k", "candidates": [point]}] if holds else [],
        "options": {"all": False, "depth": 1, "maxTrials": None},
        "trials": [],
        "matrix": None,
    }
    (tmp_path / "campaign.json").write_text(json.dumps(plan), encoding="utf-8")
    t = Tally()
    read = read_plan(tmp_path, t)
    fails = t.fails.get(("campaign", SA), [])
    said = "campaign.json: candidate point 1 is not a point with its class" in fails
    assert said is not holds, fails
    assert (point in read.point_class) is holds
    if holds:
        assert fails == [], fails
