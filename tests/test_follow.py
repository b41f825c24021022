"""Following a folder someone else writes (a campaign's trial): the events a session would have sent, each once.

A real evidence folder (the JavaScript double killed at a point and resumed, on the process runtime) is
followed whole, grown a piece at a time, and moved to its copy mid-way; a hostile folder is read as the
judge reads one: nothing through a link out of it, no line held whatever its length.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from studymon.engine.events import (
    ArmChanged,
    ControllerEnded,
    ControllerStarted,
    KillStep,
    Progress,
    RecordsSeen,
    State,
    StateChanged,
    StudyEvent,
    Verdicts,
)
from studymon.engine.explore.follow import FolderFollower
from tests.studies import jsonl, own_runtime_state, studymon
from tests.test_explore import _double

POINT = "after:charge/diagnosis"


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of the honest double killed once at its first diagnosis charge and resumed to its end."""
    tmp = tmp_path_factory.mktemp("follow")
    template = _double(tmp, "honest")
    with own_runtime_state(tmp_path_factory):
        proc = studymon("run", "--headless", "--template", str(template), "--kill", f"fw:{POINT}", "fw=out", cwd=tmp)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return tmp / "out"


def _all(follower: FolderFollower) -> list[StudyEvent]:
    events: list[StudyEvent] = []
    while more := follower.poll():
        events += more
    return events


def _records(events: list[StudyEvent]) -> list[int]:
    return [r.seq for e in events if isinstance(e, RecordsSeen) for r in e.records]


def test_a_whole_folder_tells_its_story_once(killed: Path) -> None:
    follower = FolderFollower("fw", killed)
    events = _all(follower)
    ledger = jsonl(killed / "study" / "ledger.jsonl")
    assert _records(events) == [r["seq"] for r in ledger], "every record, once, in order"
    starts = [e for e in events if isinstance(e, ControllerStarted)]
    ends = [e for e in events if isinstance(e, ControllerEnded)]
    assert [s.resume for s in starts] == [False, True], starts
    assert ends[0].signal == "SIGKILL" and ends[-1].code == 0, ends
    kills = [e for e in events if isinstance(e, KillStep)]
    assert [(k.kill, k.step, k.point) for k in kills] == [(1, "killed", POINT)], kills
    assert isinstance(kills[0].at, float) and kills[0].at > 0
    assert not any(isinstance(e, ArmChanged) and e.armed for e in events), "fired before the first look: not armed"
    report = json.loads((killed / "report.json").read_text())
    verdicts = [e for e in events if isinstance(e, Verdicts)]
    assert len(verdicts) == 1 and verdicts[0].ok is True and report["ok"] is True
    assert [(c.name, c.scope, c.ok) for c in verdicts[0].checks] == [
        (c["name"], c["scope"], c["ok"]) for c in report["checks"]
    ]
    progress = [e for e in events if isinstance(e, Progress)][-1]
    assert progress.in_flight == () and progress.balance == 0, progress
    states = [e.state for e in events if isinstance(e, StateChanged)]
    assert states[-1] is State.FINISHED_OK and follower.ended
    assert follower.poll() == [], "nothing new: nothing told"


def test_a_folder_that_grows_is_told_as_it_grows_and_a_copy_is_read_on_from_where_it_was(
    killed: Path, tmp_path: Path
) -> None:
    """The ledger and launches.jsonl arrive in pieces (a line cut in two among them); the kill folder and the
    report come later; mid-way the follower moves to the finished copy (a trial's folder shipped back)."""
    growing = tmp_path / "growing"
    (growing / "study").mkdir(parents=True)
    ledger = (killed / "study" / "ledger.jsonl").read_bytes()
    launches = (killed / "launches.jsonl").read_bytes()
    follower = FolderFollower("fw", growing)
    assert [type(e) for e in follower.poll()] == [StateChanged], "an empty folder: starting, nothing else"
    cut = len(ledger) // 3 + 7  # inside a line
    (growing / "study" / "ledger.jsonl").write_bytes(ledger[:cut])
    (growing / "launches.jsonl").write_bytes(launches[: launches.index(b"\n") + 1])
    arms = (killed / "arms.jsonl").read_bytes()
    (growing / "arms.jsonl").write_bytes(arms[: arms.index(b"\n") + 1])
    first = _all(follower)
    assert [(e.armed, e.point) for e in first if isinstance(e, ArmChanged)] == [(True, POINT)]
    whole = ledger[:cut].count(b"\n")
    assert _records(first) == list(range(1, whole + 1)), "whole lines only"
    assert any(isinstance(e, StateChanged) and e.state is State.RUNNING for e in first)
    with open(growing / "study" / "ledger.jsonl", "ab") as f:
        f.write(ledger[cut : 2 * cut])
    second = _all(follower)
    assert _records(second) == list(range(whole + 1, ledger[: 2 * cut].count(b"\n") + 1))
    follower.relocate(killed)  # the finished copy: read on from the same offsets
    rest = _all(follower)
    assert _records(first + second + rest) == [r["seq"] for r in jsonl(killed / "study" / "ledger.jsonl")]
    assert sum(isinstance(e, ControllerStarted) for e in first + second + rest) == 2, "no start told twice"
    assert any(isinstance(e, Verdicts) for e in rest)
    assert [(e.armed, e.point) for e in rest if isinstance(e, ArmChanged)] == [(False, None)], "then it fired"
    follower.close()


def test_a_hostile_folder_is_read_as_the_judge_reads_one(killed: Path, tmp_path: Path) -> None:
    """report.json and a kill.json through links out of the folder are not read; a line longer than a line
    may be is skipped, not held; a launches line that is not one is passed over."""
    out = tmp_path / "hostile"
    shutil.copytree(killed, out, symlinks=True)
    outside = tmp_path / "outside.json"
    outside.write_text((killed / "report.json").read_text())
    os.remove(out / "report.json")
    os.symlink(outside, out / "report.json")
    shutil.rmtree(out / "kills" / "1")
    (out / "kills" / "1").mkdir()
    os.symlink(killed / "kills" / "1" / "kill.json", out / "kills" / "1" / "kill.json")
    with open(out / "launches.jsonl", "ab") as f:
        f.write(b'{"event": "start", "pid": "me", "at": "now"}\n' + b"x" * (1 << 17) + b"\n")
    events = _all(FolderFollower("fw", out))
    assert not any(isinstance(e, (Verdicts, KillStep)) for e in events), events
    assert sum(isinstance(e, ControllerStarted) for e in events) == 2
    assert _records(events) == [r["seq"] for r in jsonl(killed / "study" / "ledger.jsonl")]
