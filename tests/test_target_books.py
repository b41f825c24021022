"""A target's books (``engine/judge/machines.py``, ``BOOKS``), row by row: its charges and starts counted to two,
each row taken by the records of its case and not by the other's, and the timeline's end in ``chargedOnce``'s words.

A row added without its case here fails :func:`test_every_row_has_its_case`.
"""

from __future__ import annotations

import pytest

from studymon.engine.contract.accounts import RunAccount
from studymon.engine.contract.automata import Row
from studymon.engine.contract.ends import FINISHED
from studymon.engine.contract.ledger import Record
from studymon.engine.judge.machines import BOOKS, C_CHARGE, C_STARTED, books_state
from studymon.engine.judge.target import _books_story


def account(kinds: list[str]) -> RunAccount:
    """A run whose charges and starts are ``kinds``, one a line, in order."""
    acct = RunAccount("d1")
    for n, kind in enumerate(kinds, 1):
        (acct.charges if kind == C_CHARGE else acct.starts).append(Record(n, "t", kind, {"run": "d1"}, n, 0))
    return acct


def reaching(c: int, n: int) -> list[str]:
    return [C_CHARGE] * c + [C_STARTED] * n


STATES = {books_state(c, n): (c, n) for c in range(3) for n in range(3)}


def case(row: Row) -> tuple[list[Row], list[Row]]:
    """The rows taken by records that reach the row's state then take its event, and by others that do not."""
    c, n = STATES[row.state]
    kinds = reaching(c, n)
    if row.event in (C_CHARGE, C_STARTED):
        other = C_STARTED if row.event == C_CHARGE else C_CHARGE
        return _books_story(account([*kinds, row.event]), True), _books_story(account([*kinds, other]), True)
    finished = row.event == FINISHED
    return _books_story(account(kinds), finished), _books_story(account(kinds), not finished)


def test_every_row_has_its_case() -> None:
    assert {(r.state, r.event) for r in BOOKS.rows} == {(s, e) for s in BOOKS.states for e in BOOKS.events}
    assert set(STATES) == set(BOOKS.states)


@pytest.mark.parametrize("row", BOOKS.rows, ids=lambda r: f"{r.state}-{r.event}")
def test_each_row_is_taken_by_its_case_and_not_by_the_other(row: Row) -> None:
    takes, not_takes = case(row)
    assert row in takes
    assert row not in not_takes


def test_the_books_in_the_contract_s_words() -> None:
    """Charged once and started once holds; charged and not started yet is ? while a resume may come; any other
    count happened, ✗ finished or not."""
    for c in range(3):
        for n in range(3):
            for finished in (True, False):
                end = _books_story(account(reaching(c, n)), finished)[-1]
                if (c, n) == (1, 1):
                    assert end.breaks is None
                elif (c, n) == (1, 0) and not finished:
                    assert end.unknown and end.says == "1 charge, no runStarted yet: the resume starts {run}"
                else:
                    assert (
                        end.breaks == "chargedOnce" and not end.unknown and end.says == "{charges}, {starts} runStarted"
                    )
    # Counted to two: three charges are two or more, as two are.
    assert _books_story(account([C_CHARGE] * 3 + [C_STARTED]), True)[-1].state == books_state(2, 1)
