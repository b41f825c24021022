"""A target's container in its kill's window, replayed through the container machine: each row has a story that
takes it and one that does not, and the table takes every story the watch can give.

The machine is data (``engine/judge/machines.py``, ``CONTAINER``); the
watch (``engine/judge/events.py``) keeps of a target's events what the
replay needs and replays them in time order.  This is a unit test of that
pure logic: the events are built here, as the recordings' parser gives them.
"""

from __future__ import annotations

import itertools

import pytest

from studymon.engine.contract.automata import Row
from studymon.engine.evidence.records import ContainerEvent
from studymon.engine.judge.events import ContainerStory, TargetTally
from studymon.engine.judge.machines import C_DESTROY, C_DIE, C_OOM, C_OTHER, C_START, CONTAINER, UNSTARTED

NAME = "inforsi-s-d1"
CID = "c1" * 32
S = 1_000_000_000  # a second, in ns
T0 = 1_780_000_000 * S

# The action each machine event stands for in a recording.
ACTION = {C_START: "start", C_OOM: "oom", C_DIE: "die", C_DESTROY: "destroy", C_OTHER: "exec_start"}


def event(action: str, at: float, cid: str = CID) -> ContainerEvent:
    ns = T0 + round(at * S)
    code = 0 if action == "die" else None
    return ContainerEvent(action, cid, NAME, None, ns, ns, code, None, None, {})


def replay(start: str, events: list[tuple[str, float]], fresh: bool = False) -> ContainerStory:
    """The story of a target given ``events`` in file order; a waiting or unmade (or ``fresh``) one is unrecorded or
    charged, its container known by Id and started in the window."""
    fresh = fresh or start in ("waiting", "unmade")
    watch = TargetTally("d1", NAME, frozenset({CID}), None, fresh=fresh, made=CID)
    for action, at in events:
        watch.note(event(action, at))
    return watch.story(start)


# How to reach each state, as (the state a story starts from, the events before), all before 3 s.
REACH: dict[str, tuple[str, list[tuple[str, float]]]] = {
    "unmade": ("unmade", []),
    "waiting": ("waiting", []),
    "running": ("running", []),
    "oomed": ("waiting", [("oom", 1)]),
    "exited": ("exited", []),
    "dead": ("waiting", [("die", 1)]),
    "removed": ("waiting", [("die", 1), ("destroy", 2)]),
    "vanished": ("waiting", [("destroy", 1)]),
}


@pytest.mark.parametrize("row", CONTAINER.rows, ids=lambda r: f"{r.state}-{r.event}")
def test_each_row_is_taken_by_its_story_and_not_by_the_story_before_it(row: Row) -> None:
    start, before = REACH[row.state]
    fresh = row.event == C_START  # only a target made in the window has a start of its own
    assert row not in replay(start, before, fresh).taken
    told = replay(start, [*before, (ACTION[row.event], 5)], fresh)
    assert told.taken[-1] is row, (told.taken, told.unexpected)
    assert told.state == row.next
    assert any(r is row for r, _ in told.broken) == (row.breaks is not None)


def test_each_state_is_reached_as_the_table_says() -> None:
    for state, (start, before) in REACH.items():
        assert replay(start, before).state == state


def test_the_table_takes_every_story_the_watch_can_give() -> None:
    """Up to four events of every kind the watch keeps, at every order of their times, from each start: no event
    ever meets a state the table has no row for (the replay would say so, as a contradiction of its own)."""
    for start, fresh in (("unmade", True), ("waiting", True), ("running", False), ("exited", False), ("exited", True)):
        for n in range(1, 5):
            for kinds in itertools.product(ACTION.values(), repeat=n):
                told = replay(start, [(k, 1 + i) for i, k in enumerate(kinds)], fresh)
                assert told.unexpected == [], (start, kinds)


def test_the_story_is_told_by_time_not_by_the_order_of_the_lines() -> None:
    """A destroy written first but dated after the die: the container died, then was removed."""
    assert replay("running", [("destroy", 2), ("die", 1)]).state == "removed"
    told = replay("running", [("die", 2), ("destroy", 1)])
    assert told.state == "dead" and [row.says for row, _ in told.broken] == ["a destroy of {name} comes before its die"]


def test_an_oom_reported_within_a_second_after_its_die_is_the_die_s_cause() -> None:
    assert replay("running", [("die", 1), ("oom", 1.9)]).broken == []
    late = replay("running", [("die", 1), ("oom", 2.1)])
    assert [row.says for row, _ in late.broken] == ["an oom of {name} comes after its die"]


def test_a_story_that_never_dies_is_said_apart() -> None:
    assert not replay("running", []).died and replay("exited", []).died
    assert replay("running", [("destroy", 1)]).vanished
    assert replay("running", [("oom", 1)]).undied_oom and not replay("running", [("oom", 1), ("die", 1.5)]).undied_oom


def test_a_charged_target_s_container_starts_before_anything_else_of_it() -> None:
    """Charged at the kill: nothing of its container had started, so a die (or an oom) before its start is of a
    container started before the kill that the snapshot did not show; an unrecorded one's start may precede the
    window, and its die alone is its story."""
    assert replay("unmade", [("start", 1), ("die", 2)]).broken == []
    for first in ("die", "oom"):
        told = replay("unmade", [(first, 1)])
        assert [row.says for row, _ in told.broken] == [UNSTARTED], first
    assert replay("waiting", [("die", 1)]).broken == []
