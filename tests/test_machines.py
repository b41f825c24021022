"""The controllers' and the kills' machines, row by row: each row has a case that takes it and one that does not.

The machines are data (``engine/judge/machines.py``); the replay
(``engine/judge/controllers.py``) takes them over a real ``launches.jsonl``
and kill moments, and says which rows it took.  A row added without its
case here fails :func:`test_every_row_has_its_case`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.contract.automata import Machine, Row
from studymon.engine.contract.ledger import Record
from studymon.engine.contract.rules import RESULTED_STATES, RUN, RuleTally
from studymon.engine.evidence.records import KillRecord
from studymon.engine.io.clock import rfc3339_ms
from studymon.engine.judge.controllers import ControllerReplay
from studymon.engine.judge.facts import KillEvidence
from studymon.engine.judge.machines import (
    BOOKS,
    CONTAINER,
    CONTROLLER,
    CONTROLLERS,
    GONE,
    KILL_MACHINE,
    MACHINES,
    POINT,
    RESULTS,
    RESUME,
    ROUND,
    STARTS,
)
from studymon.engine.judge.timeline import END, KILL, SEEN, START

T0 = 1_780_000_000.0


def st(pid: int, at: float) -> dict[str, Any]:
    return {"event": "start", "pid": pid, "at": rfc3339_ms(T0 + at), "resume": at > 1}


def fresh(pid: int, at: float) -> dict[str, Any]:
    """A start that does not say resume."""
    return {**st(pid, at), "resume": False}


def en(pid: int, at: float, signal: str | None = "SIGKILL") -> dict[str, Any]:
    return {"event": "end", "pid": pid, "at": rfc3339_ms(T0 + at), "code": None if signal else 0, "signal": signal}


@dataclass
class Story:
    """A replay of launch lines and kills ``(pid, at)``: the rows taken, and what the checks are given."""

    replay: ControllerReplay
    kills: list[KillEvidence]

    @property
    def taken(self) -> set[Row]:
        return self.replay.taken


def story(tmp: Path, lines: list[dict[str, Any]], kills: list[tuple[int, float]] = ()) -> Story:  # type: ignore[assignment]
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "launches.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    evs = []
    for n, (pid, at) in enumerate(kills, 1):
        ev = KillEvidence(n)
        ev.kill = KillRecord(trigger="auto", at_epoch=T0 + at, pid=pid, before_kill_seq=1, signalled=True)
        evs.append(ev)
    replay = ControllerReplay(tmp, evs)
    replay.run()
    return Story(replay, evs)


def row(machine: Machine, state: str, event: str) -> Row:
    found = machine.step(state, event)
    assert found is not None, f"{machine.name} has no row from {state} on {event}"
    return found


# Each row: (a replay that takes it, a replay that does not), as (lines, kills) pairs.
Scene = tuple[list[dict[str, Any]], list[tuple[int, float]]]
CASES: dict[tuple[str, str, str], tuple[Scene, Scene]] = {
    (CONTROLLER.name, "unseen", START): (([st(7, 1)], []), ([], [])),
    (CONTROLLER.name, "ended", START): (([st(7, 1), en(7, 2), st(7, 3)], []), ([st(7, 1), en(7, 2), st(8, 3)], [])),
    (CONTROLLER.name, "running", END): (([st(7, 1), en(7, 2)], []), ([st(7, 1), en(8, 2)], [])),
    (CONTROLLER.name, "running", KILL): (([st(7, 1), en(7, 3)], [(7, 2)]), ([st(7, 1), en(7, 3)], [(7, 0.5)])),
    (CONTROLLER.name, "killed", END): (([st(7, 1), en(7, 3)], [(7, 2)]), ([st(7, 1)], [(7, 2)])),
    (CONTROLLER.name, "killed", KILL): (([st(7, 1), en(7, 3)], [(7, 2), (7, 2.5)]), ([st(7, 1), en(7, 3)], [(7, 2)])),
    (CONTROLLER.name, "ended", KILL): (([st(7, 1), en(7, 2)], [(7, 3)]), ([st(7, 1), en(7, 3)], [(7, 2)])),
    (CONTROLLER.name, "unseen", KILL): (([st(7, 1), en(7, 3)], [(9, 2)]), ([st(7, 1), en(7, 3)], [(7, 2)])),
    (CONTROLLER.name, "unseen", END): (([st(7, 1), en(8, 2)], []), ([st(7, 1), en(7, 2)], [])),
    (CONTROLLER.name, "ended", END): (([st(7, 1), en(7, 2), en(7, 3)], []), ([st(7, 1), en(7, 2)], [])),
    (CONTROLLERS.name, "none", START): (([st(7, 1)], []), ([], [])),
    (CONTROLLERS.name, "none", RESUME): (([st(7, 2)], []), ([st(7, 1)], [])),
    (CONTROLLERS.name, "idle", RESUME): (([st(7, 1), en(7, 2), st(8, 3)], []), ([st(7, 1)], [])),
    (CONTROLLERS.name, "idle", START): (([st(7, 1), en(7, 2), fresh(8, 3)], []), ([st(7, 1), en(7, 2), st(8, 3)], [])),
    (CONTROLLERS.name, "busy", START): (([st(7, 1), fresh(8, 0.5)], []), ([st(7, 1), en(7, 2), st(8, 3)], [])),
    (CONTROLLERS.name, "busy", RESUME): (([st(7, 1), st(8, 2)], []), ([st(7, 1), en(7, 2), st(8, 3)], [])),
    (KILL_MACHINE.name, "unmade", START): (([st(7, 1), en(7, 3)], [(7, 2)]), ([st(7, 1), en(7, 3)], [(8, 0.5)])),
    (KILL_MACHINE.name, "unmade", KILL): (([st(7, 1), en(7, 3)], [(7, 2)]), ([st(7, 1), en(7, 3)], [])),
    (KILL_MACHINE.name, "made", END): (([st(7, 1), en(7, 3)], [(7, 2)]), ([st(7, 1)], [(7, 2)])),
    (KILL_MACHINE.name, "made", GONE): (([st(7, 1), en(7, 3)], [(9, 2)]), ([st(7, 1), en(7, 3)], [(7, 2)])),
    (KILL_MACHINE.name, "ended", START): (([st(7, 1), en(7, 3), st(8, 4)], [(7, 2)]), ([st(7, 1), en(7, 3)], [(7, 2)])),
    (KILL_MACHINE.name, "made", START): (
        ([st(7, 1), st(8, 3), en(7, 4)], [(7, 2)]),
        ([st(7, 1), en(7, 3), st(8, 4)], [(7, 2)]),
    ),
    (KILL_MACHINE.name, "resumed", START): (
        ([st(7, 1), en(7, 3), st(8, 4), en(8, 5, None), st(9, 6)], [(7, 2)]),
        ([st(7, 1), en(7, 3), st(8, 4)], [(7, 2)]),
    ),
    (KILL_MACHINE.name, "resumed", END): (
        ([st(7, 1), st(8, 3), en(7, 4)], [(7, 2)]),
        ([st(7, 1), en(7, 3), st(8, 4)], [(7, 2)]),
    ),
}

# The seen rows are judged against a kill's story at the time a record was seen: (the time, another time).
SEEN_AT: dict[str, tuple[float, float]] = {
    "unmade": (1.5, 4.5),
    "made": (2.5, 4.5),
    "ended": (3.5, 4.5),
    "resumed": (4.5, 1.5),
}
SEEN_SCENE: Scene = ([st(7, 1), en(7, 3), st(8, 4)], [(7, 2)])


def test_every_row_has_its_case() -> None:
    # The container machine's rows have their cases in tests/test_container_story.py, the point's in
    # tests/test_point_machine.py, a target's starts' and results' in tests/test_target_starts.py and
    # tests/test_target_results.py, their books' in tests/test_target_books.py,
    # a diagnosis target's round's in tests/test_target_round.py.
    apart = (CONTAINER, POINT, STARTS, RESULTS, BOOKS, ROUND)
    rows = {(m.name, r.state, r.event) for m in MACHINES if m not in apart for r in m.rows}
    cased = set(CASES) | {(KILL_MACHINE.name, state, SEEN) for state in SEEN_AT}
    assert rows - cased == set(), "a row without its case: add one to CASES"
    assert cased - rows == set(), "a case of no row"


@pytest.mark.parametrize("key", sorted(CASES), ids=lambda k: f"{k[0]}:{k[1]}-{k[2]}")
def test_each_row_is_taken_by_its_case_and_not_by_the_other(tmp_path: Path, key: tuple[str, str, str]) -> None:
    machine = next(m for m in MACHINES if m.name == key[0])
    wanted = row(machine, key[1], key[2])
    (takes, not_takes) = CASES[key]
    assert wanted in story(tmp_path / "takes", *takes).taken
    assert wanted not in story(tmp_path / "not", *not_takes).taken


@pytest.mark.parametrize("state", sorted(SEEN_AT))
def test_a_record_seen_takes_the_row_of_the_kill_s_state_then(tmp_path: Path, state: str) -> None:
    kill = story(tmp_path, *SEEN_SCENE).kills[0].story
    assert kill is not None
    at, other = SEEN_AT[state]
    wanted = row(KILL_MACHINE, state, SEEN)
    assert kill.seen(T0 + at) == wanted
    assert kill.seen(T0 + other) != wanted
    # Only a controller started after the kill writes what is seen after it (§6.3).
    assert (wanted.breaks is None) == (state == "resumed")


def test_what_the_rows_give_the_checks(tmp_path: Path) -> None:
    """The contradictions reach the checks in the rows' words."""
    ended = story(tmp_path / "a", [st(7, 1), en(7, 2)], [(7, 3)]).kills[0]
    assert ended.ended_before == "pid 7 had ended (launches.jsonl line 2) before the kill"
    twice = story(tmp_path / "b", [st(7, 1), en(7, 3)], [(7, 2), (7, 2.5)]).kills
    assert twice[1].end_claimed_by == 1 and twice[1].keeper_end is twice[0].keeper_end is not None
    over = story(tmp_path / "c", [st(7, 1), st(8, 3), en(7, 4)], [(7, 2)])
    assert over.kills[0].resumed_over and over.replay.launches.overlaps == ["pid 8 started while pid 7 had not ended"]
    # A start less than a second before the kill, while the killed controller ran, is a resume over it too.
    near = story(tmp_path / "d", [st(7, 1), st(8, 1.5), en(7, 3)], [(7, 2)])
    assert near.kills[0].resumed_over
    far = story(tmp_path / "e", [st(7, 1), st(8, 1.5), en(7, 5)], [(7, 2.6)])
    assert not far.kills[0].resumed_over and far.kills[0].keeper_end is not None


# --- the run: rules 2 and 3 as a machine -----------------------------------------------------------


def _run_records(kinds: list[str]) -> list[Record]:
    content = {
        "runPlanned": {"run": "d1", "purpose": "x", "object": "c", "round": 1, "experiments": []},
        "charge": {"run": "d1", "amount": 1, "balance": 1},
        "runStarted": {"run": "d1", "container": "inforsi-s-d1"},
        "runResult": {"run": "d1", "exitCode": 0, "outputs": {}},
    }
    opened = [("studyOpen", {"study": "s", "budget": 2, "config": {}})]
    return [
        Record(n, "2026-11-30T00:00:00.000Z", kind, dict(body), n, 0)
        for n, (kind, body) in enumerate(opened + [(k, content[k]) for k in kinds], 1)
    ]


def _reaching(state: str) -> list[str]:
    """Records that leave run d1 in ``state``: its plan first if it has one, then what it has had, in order."""
    planned, _, had = state.partition(":")
    return (["runPlanned"] if planned == "planned" else []) + (had.split("+") if had else [])


@pytest.mark.parametrize("taken", RUN.rows, ids=lambda r: f"{r.state}-{r.event}")
def test_each_run_row_is_taken_by_its_record_after_its_state(taken: Row) -> None:
    kinds = _reaching(taken.state)
    *before, last = _run_records([*kinds, taken.event])
    watch = RuleTally("inforsi", "s")
    for r in before:
        watch.add(r)
    assert watch._runs["d1"].state == taken.state if kinds else "d1" not in watch._runs
    breaks = watch._judge(last)  # the rules this one line breaks
    assert watch._runs["d1"].state == taken.next
    if taken.rule is None:
        assert breaks == []
    else:
        assert min(breaks) == (taken.rule, taken.says.format(kind=taken.event, run="d1", line=2))
    # The same record after another state takes another row.
    other = next(s for s in RUN.states if s != taken.state)
    assert RUN.step(other, taken.event) != taken


def test_the_run_machine_is_whole_and_its_sound_story_is_the_contract_s() -> None:
    assert {(r.state, r.event) for r in RUN.rows} == {(s, e) for s in RUN.states for e in RUN.events}
    story = ["runPlanned", "charge", "runStarted", "runResult"]
    state = RUN.start
    for kind in story:
        row = RUN.step(state, kind)
        assert row is not None and row.breaks is None
        state = row.next
    assert state in RESULTED_STATES
    # Beside the story, only a result after a start that broke rule 3 (no charge) breaks nothing more itself.
    assert {(r.state, r.event) for r in RUN.rows if r.breaks is None} == {
        ("unplanned", "runPlanned"),
        ("planned", "charge"),
        ("planned:charge", "runStarted"),
        ("planned:charge+runStarted", "runResult"),
        ("planned:runStarted", "runResult"),
    }


def test_a_long_launches_file_is_replayed_in_linear_time(tmp_path: Path) -> None:
    """Each start finds the controllers running at once: a file eight times longer takes about eight times as long
    (a start that scanned every controller before it took 64 times: 9.6 s for 40 000 lines, a file at its cap holds
    about 47 000).  Timed against the same replay of an eighth of it, in the same run, so that a busy machine slows
    both."""
    import gc
    import time

    from studymon.engine.io.clock import rfc3339_ms
    from studymon.engine.judge.controllers import replay_controllers

    def folder(n: int) -> Path:
        where = tmp_path / str(n)
        where.mkdir()
        lines = []
        for i in range(n):
            lines.append({"event": "start", "pid": 1000 + i, "at": rfc3339_ms(1_796_000_000 + 2 * i), "resume": i > 0})
            lines.append({"event": "end", "pid": 1000 + i, "at": rfc3339_ms(1_796_000_001 + 2 * i), "code": 1,
                          "signal": None})
        (where / "launches.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        return where

    def replay(where: Path, n: int) -> float:
        began = time.monotonic()
        launches = replay_controllers(where, [])
        took = time.monotonic() - began
        assert launches.final is not None and launches.final.pid == 1000 + n - 1 and launches.overlap_count == 0
        return took

    small, large = folder(2_500), folder(20_000)
    # The two taken in turn, the quickest of five of each: a busy moment slows one try of either, not all of one.
    # The collector is held off while they run: its full passes cost what the whole process holds (a test worker's
    # heap), not what the replay does, and on a loaded worker they made a linear replay look quadratic.
    eighth = whole = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            eighth = min(eighth, replay(small, 2_500))
            whole = min(whole, replay(large, 20_000))
    finally:
        gc.enable()
    # Eight times the lines: linear is 8, a scan of every controller before each start 64.  A loaded CI worker was
    # seen at 2.7 times the idle ratio (10.8 for 4 at a quarter), so the bound is halfway: 32.
    assert whole < 32 * eighth, (whole, eighth)
