"""A target's starts after its kill (``engine/judge/machines.py``, ``STARTS``), row by row: each row taken by the
runStarted records of its case (and the timeline's end) and not by the other's, from the target's class at the
kill, and what each broken row makes of ``sameContainerNoRerun``.

A row added without its case here fails :func:`test_every_row_has_its_case`.
"""

from __future__ import annotations

import pytest

from studymon.engine.contract.accounts import RunAccount
from studymon.engine.contract.automata import Row
from studymon.engine.contract.ends import FINISHED, PAUSED
from studymon.engine.contract.ledger import Record
from studymon.engine.contract.targets import CHARGED, IN_FLIGHT, UNRECORDED, UNSETTLED
from studymon.engine.evidence.records import KillRecord, KillTarget
from studymon.engine.judge.facts import KillEvidence
from studymon.engine.judge.machines import STARTS, T_START
from studymon.engine.judge.target import _starts, _starts_story
from studymon.engine.judge.verdict import Verdict

KILLED_AT = 10  # beforeKillSeq: the starts after it are the target's starts after the kill
NAME = "inforsi-s-d1"

# (class at the kill, starts after the kill, finished) that take the row, and that do not.
Scene = tuple[str, int, bool]
CASES: dict[tuple[str, str], tuple[Scene, Scene]] = {
    ("inFlight", T_START): ((IN_FLIGHT, 1, True), (CHARGED, 1, True)),
    ("unrecorded", T_START): ((UNRECORDED, 1, True), (CHARGED, 1, True)),
    ("adopted", T_START): ((UNRECORDED, 2, True), (UNRECORDED, 1, True)),
    ("adopted again", T_START): ((UNRECORDED, 3, True), (UNRECORDED, 2, True)),
    ("charged", T_START): ((CHARGED, 1, True), (UNRECORDED, 1, True)),
    ("started", T_START): ((CHARGED, 2, True), (CHARGED, 1, True)),
    ("started again", T_START): ((CHARGED, 3, True), (CHARGED, 2, True)),
    ("unsettled", T_START): ((UNSETTLED, 1, True), (UNSETTLED, 0, True)),
    ("rerun", T_START): ((UNSETTLED, 2, True), (UNSETTLED, 1, True)),
    **{
        (state, end): ((cls, n, end == FINISHED), (cls, n, end != FINISHED))
        for state, cls, n in (
            ("inFlight", IN_FLIGHT, 0),
            ("unrecorded", UNRECORDED, 0),
            ("adopted", UNRECORDED, 1),
            ("adopted again", UNRECORDED, 2),
            ("charged", CHARGED, 0),
            ("started", CHARGED, 1),
            ("started again", CHARGED, 2),
            ("unsettled", UNSETTLED, 0),
            ("rerun", UNSETTLED, 1),
        )
        for end in (FINISHED, PAUSED)
    },
}


def scene(cls: str, starts: int, finished: bool) -> tuple[KillEvidence, KillTarget, RunAccount]:
    ev = KillEvidence(1)
    ev.kill = KillRecord(trigger="auto", at_epoch=1_780_000_000.0, pid=7, before_kill_seq=KILLED_AT, signalled=True)
    ev.finished = finished
    t = KillTarget("d1", "c", 1, 2, None, NAME if cls != CHARGED else None, kind=cls)
    acct = RunAccount("d1")
    # One start before the kill for a run started then (in flight, or with its result), then those after it.
    before = [5] if cls in (IN_FLIGHT, UNSETTLED) else []
    for seq in [*before, *range(KILLED_AT + 1, KILLED_AT + 1 + starts)]:
        acct.starts.append(Record(seq, "t", "runStarted", {"run": "d1", "container": NAME}, seq, 0))
    if cls == UNSETTLED:
        acct.results.append(Record(6, "t", "runResult", {"run": "d1", "exitCode": 0}, 6, 0))
    return ev, t, acct


def taken(s: Scene) -> set[Row]:
    return set(_starts_story(*scene(*s))[0])


def test_every_row_has_its_case() -> None:
    rows = {(r.state, r.event) for r in STARTS.rows}
    assert rows - set(CASES) == set(), "a row without its case: add one to CASES"
    assert set(CASES) - rows == set(), "a case of no row"
    assert rows == {(s, e) for s in STARTS.states for e in STARTS.events}, "a state meets every event"


@pytest.mark.parametrize("key", sorted(CASES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_each_row_is_taken_by_its_case_and_not_by_the_other(key: tuple[str, str]) -> None:
    row = STARTS.step(*key)
    assert row is not None
    takes, not_takes = CASES[key]
    assert row in taken(takes)
    assert row not in taken(not_takes)
    ev, t, acct = scene(*takes)
    v = Verdict("sameContainerNoRerun", "kill 1 · d1")
    _starts(v, ev, t, acct, NAME)
    check = v.check("held")
    if row.breaks is None:
        return
    # A broken row is the check's verdict, in the row's words: ? where the row says so, ✗ otherwise.
    assert check.ok is (None if row.unknown else False)
    assert row.says.split("{")[0] in check.detail or row.says.startswith("{"), check.detail
    if not row.unknown:
        assert check.proofs and check.proofs[0].then == row.then


def test_what_a_target_s_starts_say_in_the_contract_s_words() -> None:
    def said(cls: str, starts: int, finished: bool = True) -> tuple[bool | None, str]:
        ev, t, acct = scene(cls, starts, finished)
        v = Verdict("sameContainerNoRerun", "kill 1 · d1")
        _starts(v, ev, t, acct, NAME)
        check = v.check("held")
        return check.ok, check.detail

    assert said(IN_FLIGHT, 0) == said(IN_FLIGHT, 2) == (True, "held")  # chargedOnce counts an in-flight run's starts
    assert said(UNRECORDED, 1) == said(CHARGED, 1) == said(UNSETTLED, 0) == (True, "held")
    assert said(UNRECORDED, 0) == (
        False,
        "no runStarted of d1 after the kill: its started container is not adopted",
    )
    assert said(UNRECORDED, 0, False) == (
        None,
        "no runStarted of d1 after the kill yet: its started container is not adopted",
    )
    assert said(UNRECORDED, 3) == (False, "3 runStarted of d1 after the kill")
    assert said(CHARGED, 0) == (False, "the study finished without starting d1 after the kill")
    assert said(CHARGED, 0, False) == (None, "no runStarted of d1 after the kill yet")
    assert said(CHARGED, 2) == (False, "2 runStarted of d1 after the kill")
    assert said(UNSETTLED, 2) == (False, "d1 had its result before the kill, and a runStarted after it (seq 11)")


def test_the_start_that_adopts_or_starts_a_target_names_its_container() -> None:
    for cls in (UNRECORDED, CHARGED):
        ev, t, acct = scene(cls, 1, True)
        acct.starts[-1] = Record(11, "t", "runStarted", {"run": "d1", "container": "inforsi-s-d9"}, 11, 0)
        v = Verdict("sameContainerNoRerun", "kill 1 · d1")
        _starts(v, ev, t, acct, NAME)
        assert v.check("held").detail == f"the runStarted of d1 after the kill (seq 11) names inforsi-s-d9, not {NAME}"
