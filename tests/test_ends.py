"""The end of a study's timeline, row by row: each row of ``engine/contract/ends.py`` taken by the records that reach its
state and its event, through the accounts a judgement keeps, and its verdict seen in the check that is its view.

A row added without a way to reach its state fails :func:`test_every_state_is_reached`; a verdict the view gives
other than its row's fails the row's own case.
"""

from __future__ import annotations

from collections import deque

import pytest

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.automata import Machine, Row
from studymon.engine.contract.ends import (
    AFTER,
    ENDS,
    EXPORT,
    FINISHED,
    FULL_STOP,
    HALT,
    MACHINES,
    PAUSED,
    RECORDS,
    RESULT,
    STOP,
    STUDY_MACHINES,
    TIMELINE_ENDS,
    WORK,
)
from studymon.engine.contract.ledger import Record
from studymon.engine.judge.facts import LedgerFacts
from studymon.engine.judge.study import halted_at_export, results_accounted

# A record for each event of the study's end machines: the kinds a ledger writes.
CONTENT = {
    STOP: ("halt", {"reason": FULL_STOP}),
    HALT: ("halt", {"reason": "out of ideas"}),
    EXPORT: ("export", {"path": "x"}),
    WORK: ("stageOpen", {"stage": "proposal", "round": 1}),
}


def ledger(events: list[str]) -> Accounts:
    """The accounts of a ledger whose records are ``events``, in order, one a line."""
    acc = Accounts(trim=True)
    for n, event in enumerate(events, 1):
        kind, content = CONTENT[event]
        acc.add(Record(n, "2026-12-06T00:00:00.000Z", kind, dict(content), n, 0))
    return acc


def expect_of(machine: Machine) -> str:
    return next(e for e, m in (*ENDS.items(), *AFTER.items()) if m is machine)


def reaching(machine: Machine) -> dict[str, list[str]]:
    """For each state of a study's end machine, the shortest list of records that leaves it there."""
    paths: dict[str, list[str]] = {machine.start: []}
    queue = deque([machine.start])
    while queue:
        state = queue.popleft()
        for event in RECORDS:
            row = machine.step(state, event)
            assert row is not None
            if row.next not in paths:
                paths[row.next] = [*paths[state], event]
                queue.append(row.next)
    return paths


def test_every_state_is_reached_and_every_row_is_there() -> None:
    for machine in STUDY_MACHINES:
        assert set(reaching(machine)) == set(machine.states), f"{machine.name}: a state no ledger reaches"
        events = set(RECORDS) | set(TIMELINE_ENDS)
        assert {(r.state, r.event) for r in machine.rows} == {(s, e) for s in machine.states for e in events}
    assert {(r.state, r.event) for r in RESULT.rows} == {(s, e) for s in RESULT.states for e in RESULT.events}


STUDY_ROWS = [(m, r) for m in STUDY_MACHINES for r in m.rows]


@pytest.mark.parametrize(
    ("machine", "taken"), STUDY_ROWS, ids=lambda x: x.name if isinstance(x, Machine) else f"{x.state}-{x.event}"
)
def test_each_row_of_the_study_s_end_is_taken_by_its_records(machine: Machine, taken: Row) -> None:
    path = reaching(machine)[taken.state]
    acc = ledger(path)
    assert acc.end.state(machine) == taken.state
    if taken.event in RECORDS:
        after = ledger([*path, taken.event])
        assert after.end.state(machine) == taken.next
        # The same record from every other state takes another row.
        assert all(machine.step(s, taken.event) != taken for s in machine.states if s != taken.state)
        return
    # The timeline's end: the check is the view of the row taken, and the other end gives the other verdict.
    expect = expect_of(machine)
    finished = taken.event == FINISHED
    check = halted_at_export(acc, LedgerFacts(), expect, finished)
    other = halted_at_export(acc, LedgerFacts(), expect, not finished)
    rows = acc.end.end(expect, finished)
    assert taken in rows
    if taken.breaks is None:
        assert check.ok is (True if all(r.breaks is None for r in rows) else check.ok)
        return
    assert taken.breaks == "haltedAtExport" and taken.unknown == (not finished)
    said = taken.says.split("{")[0]
    assert said in check.detail, check.detail
    assert check.ok is (None if taken.unknown else False)
    # Paused, what may still come is ?; finished, it is ✗.
    assert other.ok is (False if taken.unknown else None) and said in other.detail
    if not taken.unknown:
        assert check.proofs, "a ✗ of the study's end comes with its proof"


def test_what_the_study_s_end_says_is_the_contract_s() -> None:
    """The sound stories end without a break; each broken end in the words of docs/contract.md."""
    sound = {"halt": [WORK, STOP], "export": [WORK, EXPORT], "any": [WORK, EXPORT, STOP]}
    for expect, path in sound.items():
        assert halted_at_export(ledger(path), LedgerFacts(), expect, True).ok is True
    assert halted_at_export(ledger([WORK, EXPORT]), LedgerFacts(), "any", True).ok is True
    said = {
        ("halt", (WORK,)): "no halt in the ledger",
        ("halt", (HALT,)): "the last halt (seq 1) is not 'balance exhausted'",
        ("halt", (STOP, EXPORT)): "an export (seq 2) follows the halt (seq 1)",
        ("halt", (STOP, WORK)): "stageOpen (seq 2) comes after the halt the study ends at (seq 1)",
        ("export", (STOP,)): "no export in the ledger",
        ("export", (EXPORT, WORK)): "stageOpen (seq 2) comes after the export the study ends at (seq 1)",
        ("any", ()): "neither a full stop nor an export",
        ("any", (EXPORT, HALT)): "the last halt (seq 2) is not 'balance exhausted'",
        ("any", (HALT, EXPORT, WORK)): "stageOpen (seq 3) comes after the export the study ends at (seq 2)",
    }
    for (expect, path), words in said.items():
        check = halted_at_export(ledger(list(path)), LedgerFacts(), expect, True)
        assert (check.ok, check.detail) == (False, words)
    # Both machines' breaks, each said: a short halt with work after it.
    both = halted_at_export(ledger([HALT, WORK]), LedgerFacts(), "halt", True)
    assert both.detail == (
        "the last halt (seq 1) is not 'balance exhausted'; stageOpen (seq 2) comes after the halt the study ends at "
        "(seq 1)"
    )


# --- a run's result (rule 14) ----------------------------------------------------------------------------

RUN_PATH = {"unstarted": [], "started": ["runStarted"], "resulted": ["runStarted", "runResult"]}


def run_ledger(kinds: list[str]) -> Accounts:
    opened = [
        ("studyOpen", {"study": "s", "budget": 2, "config": {}}),
        ("runPlanned", {"run": "a1", "purpose": "ablation", "object": "c", "round": 1, "experiments": []}),
        ("charge", {"run": "a1", "amount": 1, "balance": 1}),
    ]
    content = {"runStarted": {"run": "a1", "container": "inforsi-s-a1"}, "runResult": {"run": "a1", "exitCode": 0}}
    acc = Accounts(trim=True)
    for n, (kind, body) in enumerate([*opened, *((k, content[k]) for k in kinds)], 1):
        acc.add(Record(n, "2026-12-06T00:00:00.000Z", kind, dict(body), n, 0))
    return acc


@pytest.mark.parametrize("taken", RESULT.rows, ids=lambda r: f"{r.state}-{r.event}")
def test_each_row_of_a_run_s_result_is_taken_by_its_records(taken: Row) -> None:
    path = RUN_PATH[taken.state]
    acc = run_ledger(path)
    assert acc.runs["a1"].result == taken.state
    if taken.event not in TIMELINE_ENDS:
        assert run_ledger([*path, taken.event]).runs["a1"].result == taken.next
        return
    finished = taken.event == FINISHED
    check = results_accounted(acc, LedgerFacts(), finished)
    if taken.breaks is None:
        assert check.ok is True
        return
    assert check.detail == taken.says.format(run="a1")
    assert check.ok is (None if taken.event == PAUSED else False)
    assert taken.unknown == (taken.event == PAUSED)


def test_every_machine_of_the_end_is_in_the_list() -> None:
    assert set(MACHINES) == {*ENDS.values(), *AFTER.values(), RESULT}
    assert all(len(m.rows) == len(m.states) * len(m.events) for m in MACHINES)


def test_a_run_started_has_its_result_by_the_study_s_end() -> None:
    """Rule 14 in the contract's words: lost is lost once the study has finished, and ``?`` while it may resume."""
    lost = run_ledger(["runStarted"])
    assert (results_accounted(lost, LedgerFacts(), True).ok, results_accounted(lost, LedgerFacts(), True).detail) == (
        False,
        "the study finished without a1's result",
    )
    assert results_accounted(lost, LedgerFacts(), False).detail == "a1 has no result yet"
    for path in ([], ["runStarted", "runResult"]):
        assert results_accounted(run_ledger(path), LedgerFacts(), True).ok is True
