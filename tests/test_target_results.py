"""A target's results (``engine/judge/machines.py``, ``RESULTS``), row by row: each row taken by the runResult
records of its case, placed by beforeKillSeq (and the timeline's end), and not by the other's, from the target's
class at the kill; and what each broken row makes of ``resultSettledAndFinished``.

A row added without its case here fails :func:`test_every_row_has_its_case`.
"""

from __future__ import annotations

import pytest

from studymon.engine.contract.automata import Row
from studymon.engine.contract.ends import FINISHED, PAUSED
from studymon.engine.contract.ledger import Record
from studymon.engine.contract.targets import IN_FLIGHT, UNSETTLED
from studymon.engine.evidence.records import KillRecord, KillTarget
from studymon.engine.judge.facts import KillEvidence
from studymon.engine.judge.machines import R_AFTER, R_BEFORE, RESULTS
from studymon.engine.judge.target import _results_story

K = 10  # beforeKillSeq
B, A = 5, 11  # a result's seq before the kill, and after it

# (class, the results' seqs, beforeKillSeq, finished) that take the row, and that do not.
Scene = tuple[str, tuple[int, ...], int, bool]
# How each state is reached: the class, and the results' placings before the row's own event.
REACHED: dict[str, tuple[str, tuple[str, ...]]] = {
    "open": (IN_FLIGHT, ()),
    "done": (UNSETTLED, ()),
    "resulted": (IN_FLIGHT, (R_AFTER,)),
    "early": (IN_FLIGHT, (R_BEFORE,)),
    "late": (UNSETTLED, (R_AFTER,)),
    "twice": (IN_FLIGHT, (R_AFTER, R_AFTER)),
}


def scene(cls: str, events: tuple[str, ...], finished: bool = True) -> Scene:
    """The results whose placings are ``events``, in order: before the kill at seqs 1, 2, ..., after it from 11."""
    befores = iter(range(1, K + 1))
    afters = iter(range(K + 1, 100))
    seqs = tuple(next(afters) if e == R_AFTER else next(befores) for e in events)
    return (cls, seqs, K, finished)


def case(state: str, event: str) -> tuple[Scene, Scene]:
    cls, before = REACHED[state]
    if event in (FINISHED, PAUSED):
        finished = event == FINISHED
        other = (REACHED["done" if state == "open" else "open"][0], (), K, finished) if not before else None
        takes = scene(cls, before, finished)
        not_takes = other or scene(cls, before[:-1], finished)
        return takes, not_takes
    if state == "twice":
        return scene(cls, (*before, event)), scene(cls, before)
    return scene(cls, (*before, event)), scene(cls, before)


CASES = {(r.state, r.event): case(r.state, r.event) for r in RESULTS.rows}


def story(s: Scene) -> list[Row]:
    cls, seqs, kill, finished = s
    ev = KillEvidence(1)
    ev.kill = KillRecord(trigger="auto", at_epoch=1_780_000_000.0, pid=7, before_kill_seq=kill, signalled=True)
    ev.finished = finished
    t = KillTarget("d1", "c", 1, 2, None, "inforsi-s-d1", kind=cls)
    results = [Record(q, "t", "runResult", {"run": "d1", "exitCode": 0}, q, 0) for q in seqs]
    return _results_story(ev, t, results, kill)


def test_every_row_has_its_case() -> None:
    rows = {(r.state, r.event) for r in RESULTS.rows}
    assert rows == {(s, e) for s in RESULTS.states for e in RESULTS.events}, "a state meets every event"
    assert rows == set(CASES)


@pytest.mark.parametrize("key", sorted(CASES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_each_row_is_taken_by_its_case_and_not_by_the_other(key: tuple[str, str]) -> None:
    row = RESULTS.step(*key)
    assert row is not None
    takes, not_takes = CASES[key]
    assert row in story(takes)
    assert row not in story(not_takes)


def test_what_a_target_s_results_say() -> None:
    """The breaks, in the contract's words, and when each is ✗ or ?."""
    said = {
        (IN_FLIGHT, (), True): ["the study finished without {run}'s result"],
        (IN_FLIGHT, (), False): ["no runResult for {run} yet"],
        (IN_FLIGHT, (B,), True): ["the result (seq {seq}) is not after the kill (seq {kill})"],
        (IN_FLIGHT, (B,), False): ["the result (seq {seq}) is not after the kill (seq {kill})"],
        (UNSETTLED, (A,), False): ["the result (seq {seq}) is not before the kill (seq {kill}), as kill.json says"],
        (IN_FLIGHT, (A, A + 1), True): ["{count} runResult for {run}"],
        (IN_FLIGHT, (B, A), True): ["{count} runResult for {run}"],  # two results: no one result to place
        (IN_FLIGHT, (A,), True): [],
        (UNSETTLED, (B,), True): [],
    }
    for (cls, seqs, finished), words in said.items():
        rows = [r for r in story((cls, seqs, K, finished)) if r.breaks is not None]
        assert [r.says for r in rows] == words, (cls, seqs, finished)
        assert all(r.unknown == (r.says == "no runResult for {run} yet") for r in rows)
