"""The machines' tables are what their builders build, and a machine refuses a table that is not one.

The tables are built once, when their module is imported (``engine/contract/rules.py``'s ``RUN``,
``engine/contract/ends.py``'s ``ENDS``, ``AFTER`` and ``RESULT``, ``engine/judge/machines.py``'s ``BOOKS``), and
the row-by-row tests judge with them as built then.  Building each again here, through the same
functions, holds those functions themselves: a change to one that changes a row fails this file
(mutation testing switches a change on only after the import, so only a second build can see it).
"""

from __future__ import annotations

import pytest

from studymon.engine.contract import ends
from studymon.engine.contract import rules as contract
from studymon.engine.contract.automata import Machine, Row
from studymon.engine.contract.spec import EXPECT_ENDS
from studymon.engine.judge import machines


def test_the_run_machine_is_what_its_builder_builds() -> None:
    assert contract._run_rows() == contract.RUN.rows
    assert tuple(contract.run_state(p, h) for p in (False, True) for h in range(8)) == contract.RUN.states


@pytest.mark.parametrize("expect", EXPECT_ENDS)
def test_the_study_s_end_machines_are_what_their_builders_build(expect: str) -> None:
    assert ends._ends_machine(expect) == ends.ENDS[expect]
    assert ends._ends_machine(expect).rows == ends.ENDS[expect].rows
    assert ends._after_machine(expect).rows == ends.AFTER[expect].rows
    assert ends._after_machine(expect).states == ends.AFTER[expect].states


def test_the_result_machine_is_what_its_builder_builds() -> None:
    assert ends._result_rows() == ends.RESULT.rows


def test_the_books_machine_is_what_its_builder_builds() -> None:
    assert machines._books_rows() == machines.BOOKS.rows
    assert tuple(machines.books_state(c, n) for c in range(3) for n in range(3)) == machines.BOOKS.states


def test_a_machine_refuses_a_table_that_is_not_one() -> None:
    """Every row goes from a state of the machine to one of it, and one row at most leaves a state on an event."""
    good = Machine("m", ("a", "b"), (Row("a", "e", "b"), Row("b", "e", "a")))
    assert good.start == "a" and good.events == frozenset({"e"})
    assert good.step("a", "e") == Row("a", "e", "b") and good.step("b", "e") == Row("b", "e", "a")
    assert good.step("a", "f") is None
    with pytest.raises(ValueError, match="names a state the machine does not have"):
        Machine("m", ("a",), (Row("a", "e", "z"),))
    with pytest.raises(ValueError, match="names a state the machine does not have"):
        Machine("m", ("a",), (Row("z", "e", "a"),))
    with pytest.raises(ValueError, match="two rows from 'a' on 'e'"):
        Machine("m", ("a", "b"), (Row("a", "e", "b"), Row("a", "e", "a")))


def test_the_end_machines_step_together_as_each_steps_alone() -> None:
    """The joint states the accounts step by one lookup are each machine's own steps, numbered once each (a fresh
    table: the shared one has learned its steps before any test runs)."""
    steps = ends._Steps()
    assert steps.states == [tuple(m.start for m in ends.STUDY_MACHINES)] and steps.numbers == {steps.states[0]: 0}
    at, states = 0, [m.start for m in ends.STUDY_MACHINES]
    story = [ends.WORK, ends.STOP, ends.EXPORT, ends.WORK, ends.HALT, ends.EXPORT, ends.STOP, ends.WORK, ends.STOP]
    for event in story:
        before = at
        at = steps.learn(at, event)
        states = [m.step(s, event).next for m, s in zip(ends.STUDY_MACHINES, states, strict=True)]  # type: ignore[union-attr]
        assert list(steps.states[at]) == states, event
        assert steps.next[(before, event)] == at
        assert steps.numbers[steps.states[at]] == at
    # A state met again keeps its number: the table holds each joint state once.
    assert len(steps.states) == len(set(steps.states)) == len(steps.numbers)
    assert steps.learn(0, ends.STOP) == steps.next[(0, ends.STOP)] == steps.numbers[steps.states[steps.learn(0, ends.STOP)]]


def test_a_replay_takes_one_row_an_event_then_the_end_s() -> None:
    """Machine.replay: from its first state (or the one given), each event's row in turn, then the end's; a state
    and event no row names is the code's fault, said as such (never a verdict)."""
    m = Machine("m", ("a", "b"), (Row("a", "e", "b"), Row("b", "e", "a"), Row("a", "end", "a"), Row("b", "end", "b")))
    assert m.replay(["e", "e", "e"], "end") == [
        Row("a", "e", "b"), Row("b", "e", "a"), Row("a", "e", "b"), Row("b", "end", "b")
    ]
    assert m.replay([], "end") == [Row("a", "end", "a")]
    assert m.replay(["e"], "end", start="b") == [Row("b", "e", "a"), Row("a", "end", "a")]
    assert m.take("a", "e") == Row("a", "e", "b")
    with pytest.raises(LookupError, match="m: no row from 'a' on 'f'"):
        m.take("a", "f")
    with pytest.raises(LookupError):
        m.replay(["e"], "f")
