"""A target's container story, judged by the oracle on evidence built by hand (no study is run).

docs/contract.md ("By class (§7)", "The container's machine"): an ``unrecorded``
target's container (the one ``container-before.json`` shows started, its
``Id``) may have its first ``start`` (and ``create``) reported in the kill's
window at any time before its ``die`` (a runtime may report a start late); a
start at or after the die, or a second one, is the run done again.  A
``charged`` target's container starts in the window before anything else of
it happens: a ``die`` or an ``oom`` with no start of it before it is of a
container started before the kill that the snapshot did not show.

Each test builds one kill of one target (the ledger, the timeline, the three
snapshots, the live recording as Docker writes it) and judges its story
(``kills.judge_container_story``) alone.
"""

from __future__ import annotations

import json
import time
from fractions import Fraction
from typing import Any

import pytest

from tests.oracle.controllers import Controllers
from tests.oracle.evidence import Ledger, Record, Research, Seen, Timeline
from tests.oracle.killfolder import KillFolder, parse_recording
from tests.oracle.kills import SCN, KillView, StudyFacts, Target, judge_container_story
from tests.oracle.ledger_checks import runs_of
from tests.oracle.verdict import Tally

STUDY, PREFIX = "s", "inforsi"
NAME = f"{PREFIX}-{STUDY}-d1"
CID = "c" * 64
OTHER = "e" * 64
KILL = Fraction(1_800_000_000)  # kill.json's at
SINCE = KILL - Fraction(20, 1000)  # the window opens at the freeze
SNAPSHOTS = ("container-before.json", "container-after-kill.json", "container-before-resume.json")
SCOPE = "kill 1 · d1"


def rfc3339(t: Fraction) -> str:
    whole = int(t)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((t - whole) * 10**9):09d}Z"


def event(action: str, after_kill: float, cid: str = CID, **attrs: str) -> dict[str, Any]:
    """A container event as Docker writes it, ``after_kill`` seconds after the kill, as the live recording holds
    it."""
    at = KILL + Fraction(after_kill).limit_denominator(10**6)
    ns = int(at * 10**9)
    return {
        "Type": "container",
        "Action": action,
        "Actor": {"ID": cid, "Attributes": {"name": NAME, "studymon.study": STUDY, "studymon.run": "d1", **attrs}},
        "time": ns // 10**9,
        "timeNano": ns,
        "seenAt": rfc3339(at + Fraction(1, 1000)),
        "readBack": False,
    }


def inspect(status: str = "running") -> dict[str, Any]:
    """d1's container as ``docker inspect`` shows it: started just before the kill, still running."""
    return {
        "Id": CID,
        "Name": "/" + NAME,
        "State": {
            "Status": status,
            "Running": status == "running",
            "StartedAt": rfc3339(KILL - Fraction(1, 10)),
            "FinishedAt": "0001-01-01T00:00:00Z",
            "ExitCode": 0,
        },
        "Config": {"Labels": {"studymon.study": STUDY, "studymon.run": "d1"}},
    }


def record(seq: int, kind: str, after_kill: float, **content: Any) -> Record:
    at = KILL + Fraction(after_kill).limit_denominator(10**6)
    return Record(seq, seq, rfc3339(at), at, kind, {"run": "d1", **content}, {}, False)


def judge(
    cls: str,
    events: list[dict[str, Any]],
    result_seen: float = 6.0,
    snapshots: dict[str, dict[str, Any]] | None = None,
) -> tuple[list[str], list[str]]:
    """The reasons against, and the unknowns of, d1's sameContainerNoRerun: d1 planned and charged at the kill
    (``beforeKillSeq`` 2), started (adopted, for an unrecorded target) and its result written after it; the
    study finished.  An ``unrecorded`` target's container is in every snapshot, running (or as ``snapshots``
    shows it, file by file); a ``charged`` one's in none."""
    records = [
        record(1, "runPlanned", -2.0, purpose="baseline", object="x", round=1),
        record(2, "charge", -1.0),
        record(3, "runStarted", 0.5, container=NAME),
        record(4, "runResult", result_seen - 0.001, exitCode=0),
    ]
    ledger = Ledger(records=records, lines=len(records))
    seen = {r.seq: Seen(r.line, r.seq, r.kind, r.at, r.time + Fraction(1, 1000)) for r in records}
    facts = StudyFacts(
        ledger,
        Research(study=STUDY, prefix=PREFIX),
        Timeline(by_seq=seen),
        Controllers(readable=True),
        finished=True,
        halted=True,
    )
    live = parse_recording(
        b"".join(json.dumps(e).encode() + b"\n" for e in events), "live", "kills/1/container-events-live.jsonl"
    )
    assert live.bad == [], live.bad
    shown = {NAME: inspect()} if cls == "unrecorded" else {}
    view = KillView(
        1,
        KillFolder(1, "kills/1", present=set(SNAPSHOTS), live=live),
        "kill 1",
        trigger="auto",
        at=KILL,
        before_seq=2,
        since=SINCE,
        until=KILL + Fraction(result_seen),
        window_closed=True,
        events=sorted(live.events, key=lambda e: (e.start, e.source, e.line)),
        snapshots={
            file: ({NAME: snapshots[file]} if snapshots and file in snapshots else dict(shown)) for file in SNAPSHOTS
        },
        result_seq={"d1": 4},
        result_seen={"d1": KILL + Fraction(result_seen)},
    )
    target = Target("d1", cls, runs_of(records)["d1"], records[0], None, NAME)
    view.targets = view.judged = [target]
    t = Tally()
    judge_container_story(facts, view, target, t, SCOPE)
    return t.fails.get((SCOPE, SCN), []), t.unknowns.get((SCOPE, SCN), [])


def die(after_kill: float, cid: str = CID) -> dict[str, Any]:
    return event("die", after_kill, cid, exitCode="0")


# --- unrecorded: its own start, reported late ----------------------------------------------------


def test_an_unrecorded_target_s_start_reported_3_s_after_the_kill_before_its_die_holds() -> None:
    """On a loaded machine Docker reported the start of the container the kill saw started three seconds after
    the kill: any time before its die, that first start (and its create) is the story, not a rerun."""
    fails, unknowns = judge("unrecorded", [event("create", 2.9), event("start", 3.0), die(5.0), event("destroy", 5.5)])
    assert fails == [] and unknowns == []


def test_an_unrecorded_target_s_start_long_after_the_kill_holds_while_it_is_before_its_die() -> None:
    fails, unknowns = judge("unrecorded", [event("start", 40.0), die(40.5)], result_seen=41.0)
    assert fails == [] and unknowns == []


@pytest.mark.parametrize("start", [5.0, 6.0])
def test_an_unrecorded_target_s_start_at_or_after_its_die_fails(start: float) -> None:
    """A start of its container at its die's time, or after it, is the run done again (sameContainerNoRerun ✗)."""
    fails, _ = judge("unrecorded", [die(5.0), event("start", start)], result_seen=6.5)
    assert any("at or after its die: the run done again" in why for why in fails), fails


def test_an_unrecorded_target_s_create_after_its_die_fails() -> None:
    fails, _ = judge("unrecorded", [event("start", 1.0), die(5.0), event("create", 5.2)])
    assert any("'create' of" in why and "at or after its die" in why for why in fails), fails


def test_an_unrecorded_target_s_second_start_before_its_die_fails() -> None:
    fails, _ = judge("unrecorded", [event("start", 1.0), event("start", 3.0), die(5.0)])
    assert any("a second time: the run done again" in why for why in fails), fails


def test_an_unrecorded_target_adopts_only_the_container_the_kill_saw() -> None:
    """A start under its name of another Id than container-before.json's is no start of its container."""
    fails, _ = judge("unrecorded", [event("start", 3.0, OTHER), die(5.0)])
    assert any("'start' of" in why and "in its window (live line 1)" in why for why in fails), fails


def test_a_start_in_the_same_whole_second_as_the_die_may_be_before_it() -> None:
    """An event with only a time is its whole second: a start and a die in one second may be in either order."""
    start, end = event("start", 4.2), die(4.7)
    for e in (start, end):
        del e["timeNano"]
    fails, unknowns = judge("unrecorded", [start, end])
    assert fails == [] and unknowns == []


# --- charged: its container starts in the window before anything else of it ----------------------


def test_a_charged_target_s_container_made_and_started_in_the_window_holds() -> None:
    fails, unknowns = judge("charged", [event("create", 0.6), event("start", 0.8), die(5.0), event("destroy", 5.5)])
    assert fails == [] and unknowns == []


@pytest.mark.parametrize("first", ["die", "oom"])
def test_a_charged_target_s_die_or_oom_before_its_start_fails(first: str) -> None:
    """A die (or an oom) of the container before its start: it was started before the kill, which the snapshot
    did not show (its one die, or an oom before the die, each of the Id that starts after it)."""
    events = [die(0.7), event("start", 0.8)] if first == "die" else [event("oom", 0.7), event("start", 0.8), die(5.0)]
    fails, _ = judge("charged", events)
    assert any(f"{first} of {NAME} with no start of it in its window before it" in why for why in fails), fails


@pytest.mark.parametrize("first", ["die", "oom"])
def test_a_charged_target_s_die_or_oom_with_no_start_at_all_fails(first: str) -> None:
    events = [die(5.0)] if first == "die" else [event("oom", 4.9), die(5.0)]
    fails, _ = judge("charged", events)
    assert any(f"{first} of {NAME} with no start of it in its window before it" in why for why in fails), fails


def test_a_charged_target_s_oom_more_than_a_second_after_its_die_fails() -> None:
    fails, _ = judge("charged", [event("start", 0.8), die(5.0), event("oom", 6.5)], result_seen=7.0)
    assert any(f"oom of {NAME} after its die" in why for why in fails), fails
    fails, unknowns = judge("charged", [event("start", 0.8), die(5.0), event("oom", 5.5)], result_seen=7.0)
    assert fails == [] and unknowns == []


# --- a snapshot that does not write State.Status, StartedAt or FinishedAt (README.md, open question 76) ----


def without(ins: dict[str, Any], *keys: str, **state: Any) -> dict[str, Any]:
    """An inspect with those keys of its State not written, and ``state`` over the rest."""
    ins = json.loads(json.dumps(ins))
    for key in keys:
        del ins["State"][key]
    ins["State"].update(state)
    return ins


def exited_at(after_kill: float) -> dict[str, Any]:
    """d1's container as a snapshot shows it exited with code 0, ``after_kill`` seconds after the kill."""
    ins = inspect("exited")
    ins["State"]["FinishedAt"] = rfc3339(KILL + Fraction(after_kill).limit_denominator(10**6))
    return ins


STORY = [event("start", 1.0), die(5.0), event("destroy", 5.5)]


def test_a_container_with_no_status_written_and_state_running_true_is_running() -> None:
    """docs/contract.md: State.Status, StartedAt and FinishedAt are each judged "where written"; with no status
    State.Running alone stands, and true is running (a FinishedAt not written is none, as Docker's zero time)."""
    shown = without(inspect(), "Status", "FinishedAt")
    fails, unknowns = judge("unrecorded", STORY, snapshots=dict.fromkeys(SNAPSHOTS, shown))
    assert fails == [] and unknowns == []


def test_an_exit_shown_with_no_status_written_is_not_shown_exited() -> None:
    """After the kill a snapshot shows the container "present, running or exited": State.Running false with no
    State.Status says it is not running, and nothing says it exited (its FinishedAt and ExitCode alone do not):
    judged as it stands, it is shown neither.  The same snapshot writing Status "exited" holds."""
    written = {"container-before-resume.json": exited_at(5.0)}
    fails, unknowns = judge("unrecorded", STORY, snapshots=written)
    assert fails == [] and unknowns == []
    unwritten = {"container-before-resume.json": without(exited_at(5.0), "Status")}
    fails, _ = judge("unrecorded", STORY, snapshots=unwritten)
    said = f"container-before-resume.json shows {NAME} with no State.Status and State.Running false, neither"
    assert fails == [said + " running nor exited"], fails


def test_a_snapshot_with_no_start_time_written_does_not_show_the_others_start() -> None:
    """All show one StartedAt: a snapshot that writes none does not show the one the others write.  Written in
    none, an unrecorded target's container is shown started before the kill by its status as it stands
    (running); with no status either and State.Running false it is not, as with Docker's zero time."""
    one = {"container-after-kill.json": without(inspect(), "StartedAt")}
    fails, _ = judge("unrecorded", STORY, snapshots=one)
    assert fails == [f"container-after-kill.json shows another Id or StartedAt for {NAME}"], fails
    fails, unknowns = judge("unrecorded", STORY, snapshots=dict.fromkeys(SNAPSHOTS, without(inspect(), "StartedAt")))
    assert fails == [] and unknowns == []
    neither = without(inspect(), "StartedAt", "Status", Running=False)
    fails, _ = judge("unrecorded", STORY, snapshots={"container-before.json": neither})
    assert f"container-before.json shows {NAME} not started" in fails, fails
    zero = without(inspect(), StartedAt="0001-01-01T00:00:00Z")
    fails, _ = judge("unrecorded", STORY, snapshots=dict.fromkeys(SNAPSHOTS, zero))
    assert fails == [f"container-before.json shows {NAME} not started"], fails
