"""The point machine (``engine/judge/machines.py``, ``POINT``), row by row: each row taken by the arms.jsonl lines
(and the timeline's end) of its case and not by the other's, read as the judge reads them, and what each broken
row makes of ``killTriggered``.

A row added without its case here fails :func:`test_every_row_has_its_case`.
"""

from __future__ import annotations

from typing import Any

import pytest

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.automata import Row
from studymon.engine.contract.ends import FINISHED, PAUSED
from studymon.engine.evidence.records import parse_arm
from studymon.engine.judge.facts import Arming, LedgerFacts
from studymon.engine.judge.machines import ARM, DISARM, FIRE, MISS, POINT
from studymon.engine.judge.read import take_arm
from studymon.engine.judge.study import kill_triggered

AT = "2026-12-06T00:00:00.000Z"
A = {"event": "arm", "point": "after:charge"}
F = {"event": "fired", "kill": 1, "run": "d1", "point": "after:charge", "fromSeq": 0}
M = {"event": "missed", "run": "d1", "detail": "the record after it was written first", "point": "after:charge"}
D = {"event": "disarm"}

# (lines, whether the study finished) that take the row, and that do not.
Scene = tuple[list[dict[str, Any]], bool]
CASES: dict[tuple[str, str], tuple[Scene, Scene]] = {
    ("unarmed", ARM): (([A], True), ([], True)),
    ("unarmed", FIRE): (([F], True), ([A, F], True)),
    ("unarmed", MISS): (([M], True), ([A, M], True)),
    ("armed", FIRE): (([A, F], True), ([F], True)),
    ("armed", MISS): (([A, M], True), ([M], True)),
    ("armed", DISARM): (([A, D], True), ([D], True)),
    ("armed", FINISHED): (([A], True), ([A], False)),
    ("armed", PAUSED): (([A], False), ([A], True)),
    ("unarmed", FINISHED): (([], True), ([A], True)),
    ("unarmed", PAUSED): (([], False), ([A], False)),
    ("fired", FINISHED): (([A, F], True), ([A, F], False)),
    ("fired", PAUSED): (([A, F], False), ([A], False)),
    ("missed", FINISHED): (([A, M], True), ([A], True)),
    ("missed", PAUSED): (([A, M], False), ([A, F], False)),
    ("disarmed", FINISHED): (([A, D], True), ([A, F], True)),
    ("disarmed", PAUSED): (([A, D], False), ([A, D], True)),
}


def replay(lines: list[dict[str, Any]], finished: bool) -> tuple[Arming, set[Row], Any]:
    """The lines read in order, then the timeline's end: the rows taken, and killTriggered's verdict."""
    arming = Arming()
    for n, line in enumerate(lines, 1):
        arm = parse_arm(dict(line, at=AT))
        assert not isinstance(arm, str), arm
        take_arm(arming, arm, f"arms.jsonl line {n}")
    check = kill_triggered(arming, [], Accounts(), LedgerFacts(), finished)
    if check is None:  # nothing for killTriggered to judge: the end is met all the same
        arming.end(finished)
    return arming, arming.taken, check


def _row(state: str, event: str) -> Row:
    row = POINT.step(state, event)
    assert row is not None
    return row


def test_every_row_has_its_case() -> None:
    rows = {(r.state, r.event) for r in POINT.rows}
    assert rows - set(CASES) == set(), "a row without its case: add one to CASES"
    assert set(CASES) - rows == set(), "a case of no row"


@pytest.mark.parametrize("key", sorted(CASES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_each_row_is_taken_by_its_case_and_not_by_the_other(key: tuple[str, str]) -> None:
    wanted = _row(*key)
    takes, not_takes = CASES[key]
    _, taken, check = replay(*takes)
    assert wanted in taken
    assert wanted not in replay(*not_takes)[1]
    if wanted.breaks is None:
        return
    # A broken row is killTriggered's verdict: ? where the row says so, ✗ otherwise, in the row's words.
    assert check is not None and wanted.breaks == check.name
    assert check.ok is (None if wanted.unknown else False)
    words = wanted.says.split("{")[0]
    assert words in check.detail or (
        wanted.says == POINT.step("unarmed", FIRE).says and "no point armed" in check.detail
    )  # type: ignore[union-attr]


def test_the_point_s_sound_stories() -> None:
    """Armed then fired, or armed then disarmed: nothing to say but the kill's own checks; a missed point is never
    ✗ (v4: not tested); a point armed at the end is ✗ once finished, ? before."""
    arming, _, check = replay([A, D], True)
    assert check is None and arming.is_quiet()
    _, _, missed = replay([A, M], True)
    assert (
        missed.ok is None
        and missed.detail == "missed after:charge d1, not tested: the record after it was written first"
    )
    _, _, never = replay([A], True)
    assert (never.ok, never.detail) == (
        False,
        "armed at after:charge, but the study finished without a kill there (none fired, none was missed)",
    )
    assert replay([A], False)[2].detail == "armed at after:charge; its moment has not come yet"
    _, _, unarmed = replay([F], True)
    assert unarmed.ok is False and unarmed.detail.startswith("arms.jsonl: 1 fired or missed line with no point armed")
