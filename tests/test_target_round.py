"""A diagnosis target's round (``engine/judge/machines.py``, ``ROUND``), row by row: its settlement and the proposal
it opens, in seq order, each row taken by the seqs of its case and not by the other's; and the timeline's end in
``resultSettledAndFinished``'s words.

A row added without its case here fails :func:`test_every_row_has_its_case`.
"""

from __future__ import annotations

import pytest

from studymon.engine.contract.ends import FINISHED, PAUSED
from studymon.engine.judge.machines import OPENED, ROUND, SETTLED
from studymon.engine.judge.target import _round_story

# (the settlement's seq, the last proposal opening's seq, finished) that take the row, and that do not.
Scene = tuple[int | None, int | None, bool]
CASES: dict[tuple[str, str], tuple[Scene, Scene]] = {
    ("unsettled", SETTLED): ((9, None, True), (None, None, True)),
    ("unsettled", OPENED): ((None, 4, True), (4, 9, True)),
    ("settled", OPENED): ((4, 9, True), (9, 4, True)),
    ("unsettled", FINISHED): ((None, None, True), (None, None, False)),
    ("unsettled", PAUSED): ((None, None, False), (None, None, True)),
    ("settled", FINISHED): ((9, 4, True), (9, 4, False)),
    ("settled", PAUSED): ((9, None, False), (9, 10, False)),
    ("opened", FINISHED): ((4, 9, True), (4, 9, False)),
    ("opened", PAUSED): ((4, 9, False), (4, 9, True)),
}
# The accounts keep a round's first settlement and its last proposal opening: a second of either is no event here.
UNREACHED = {("settled", SETTLED), ("opened", SETTLED), ("opened", OPENED)}


def test_every_row_has_its_case() -> None:
    rows = {(r.state, r.event) for r in ROUND.rows}
    assert rows == {(s, e) for s in ROUND.states for e in ROUND.events}
    assert rows == set(CASES) | UNREACHED
    assert all(ROUND.step(*key).breaks is None for key in UNREACHED)  # type: ignore[union-attr]


@pytest.mark.parametrize("key", sorted(CASES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_each_row_is_taken_by_its_case_and_not_by_the_other(key: tuple[str, str]) -> None:
    row = ROUND.step(*key)
    takes, not_takes = CASES[key]
    assert row in _round_story(*takes)
    assert row not in _round_story(*not_takes)


def test_the_round_s_end_in_the_contract_s_words() -> None:
    assert _round_story(4, 9, True)[-1].breaks is None
    for settled, opened, says in (
        (None, None, "no diagnosisSettlement for round {round}"),
        (9, 4, "no stageOpen proposal {round} after the settlement (seq {seq})"),
        (9, 9, "no stageOpen proposal {round} after the settlement (seq {seq})"),
    ):
        for finished in (True, False):
            end = _round_story(settled, opened, finished)[-1]
            assert (end.breaks, end.says, end.unknown) == ("resultSettledAndFinished", says, not finished)
