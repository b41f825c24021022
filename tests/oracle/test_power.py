"""Power loss (§9.3), judged by the oracle on whole evidence folders built by hand (no study is run).

docs/contract.md ("Power loss (§9.3): `kills/<n>/power.json` and `kills/<n>/lost/`"): when a kill folder holds a
well-formed ``power.json``, the ledger may have shrunk at that kill: its first ``ledgerSeqAfter`` records are
``ledger-at-kill.json``'s first ``ledgerSeqAfter``, the records after those in ``ledger-at-kill.json`` are lost
(and the ``timeline.jsonl`` lines that saw them before the kill with them), and the resumed controller writes
its own from ``ledgerSeqAfter + 1``.  A shrink no ``power.json`` explains is ``ledgerWellFormed`` ✗; a run whose
``runStarted`` was lost but whose container ran is found by name, never started again
(``sameContainerNoRerun``); a charge lost with its run never started is no charge (``chargedOnce`` counts the
ledger's).  README.md, open questions 97-101.

Each test builds one study's folder (``PowerFolder``: research.json, the ledger before and after the loss,
timeline.jsonl, launches.jsonl, machine.jsonl, arms.jsonl, outcome.json, and ``kills/1/`` with kill.json,
ledger-at-kill.json, the three snapshots, both recordings, the window, ``power.json`` and ``lost/``), changes one
fact, and asks ``judge_study`` for the whole verdict.
"""

from __future__ import annotations

import calendar
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tests.oracle import judge_study
from tests.oracle.evidence import is_point, parse_point, parse_power_point
from tests.oracle.verdict import OracleVerdict

STUDY, PREFIX = "s", "inforsi"
STEM = f"{PREFIX}-{STUDY}-"
CID, CID2 = "c" * 64, "f" * 64
KILL = Fraction(1_800_000_000)  # kill.json's at: SIGKILL sent
SINCE = KILL - Fraction(20, 1000)  # the window opens at the freeze
RESUME = KILL + 2  # the resumed controller's start
END = RESUME + 8  # its end, exit 0
S, KE, KD, KT, LWF, CK = "study", "killEvidence", "killDelivered", "killTriggered", "ledgerWellFormed", "contractKept"
SCN, CO, RSF = "sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished"
K1, D1 = "kill 1", "kill 1 · d1"
SNAPSHOT_FILES = ("container-before.json", "container-after-kill.json", "container-before-resume.json")


def rfc3339(t: Fraction) -> str:
    whole = int(t)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((t - whole) * 1000):03d}Z"


def when(text: str) -> Fraction:
    return Fraction(calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))) + Fraction(int(text[20:23]), 1000)


def rec(seq: int, kind: str, at: Fraction, **content: Any) -> dict[str, Any]:
    return {"seq": seq, "at": rfc3339(at), "kind": kind, "content": content}


def as_bytes(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(as_bytes(rows))


def whole(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value), encoding="utf-8")


def plan(seq: int, run: str, at: Fraction) -> dict[str, Any]:
    return rec(seq, "runPlanned", at, run=run, purpose="diagnosis", object="x", round=1, experiments=["e1"])


def inspect(cid: str, status: str, code: int = 0, finished: Fraction | None = None) -> dict[str, Any]:
    """d1's container as ``docker inspect`` shows it: started just before the kill."""
    return {
        "Id": cid,
        "Name": "/" + STEM + "d1",
        "State": {
            "Status": status,
            "Running": status == "running",
            "StartedAt": rfc3339(KILL - Fraction(6, 10)),
            "FinishedAt": rfc3339(finished) if finished is not None else "0001-01-01T00:00:00Z",
            "ExitCode": code,
        },
        "Config": {"Labels": {"studymon.study": STUDY, "studymon.run": "d1"}},
    }


def event(action: str, at: Fraction, cid: str = CID, run: str = "d1", **attrs: str) -> dict[str, Any]:
    """A container event of a run's container as Docker writes it (as read back: no seenAt)."""
    ns = int(at * 10**9)
    labels = {"name": STEM + run, "studymon.study": STUDY, "studymon.run": run}
    return {
        "Type": "container",
        "Action": action,
        "Actor": {"ID": cid, "Attributes": {**labels, **attrs}},
        "time": ns // 10**9,
        "timeNano": ns,
    }


@dataclass
class PowerFolder:
    """One study killed once, resumed, and finished, its folder as the console writes it.

    - ``start``: a power loss at d1's runStarted (``power:after:runStarted/diagnosis``): the record (seq 6) was
      written and held, never fsynced, and is lost; d1's container ran and is killed with the controller (exit
      137); the resumed controller finds it by name, exited, and writes its runStarted (seq 6 again), its result
      (137), the settlement, the proposal and the full stop.  With ``state`` ``synced+1`` nothing is lost (the
      runStarted was kept), and the resumed controller only waits for d1.
    - ``charge``: a power loss at d1's charge: the charge (seq 5) is lost, no container was made; the resumed
      controller charges d1 again (seq 5), starts it once and goes on.
    - ``plan``: the same, with d1's plan (seq 4) not durable either: the resumed controller plans the work again
      as d2 and does it; d1, never charged again, is no charge.
    - ``result``: a power loss at d1's runResult (``power:after:runResult/diagnosis``): d1's container had exited,
      its result (seq 7) is lost, its round not settled; the resumed controller finds d1 started without a result,
      reads its container's exit by name and writes its result again (seq 7), then settles the round.
    - ``plain``: a kill at ``after:runStarted/diagnosis``, nothing lost, no power.json."""

    how: str = "start"
    state: str = "synced"
    before: list[dict[str, Any]] = field(default_factory=list)  # the ledger at the kill: ledger-at-kill.json
    ledger: list[dict[str, Any]] = field(default_factory=list)  # the ledger as it ends
    kept: int = 0  # ledgerSeqAfter
    kill: dict[str, Any] = field(default_factory=dict)
    power: dict[str, Any] | None = None
    lost_bytes: bytes = b""
    events: list[dict[str, Any]] = field(default_factory=list)
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict)
    window: dict[str, Any] = field(default_factory=dict)
    arms: list[dict[str, Any]] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        k = KILL
        head = [
            rec(1, "studyOpen", k - 9, study=STUDY, budget=10, config={}),
            rec(2, "stageOpen", k - 8, stage="diagnosis", round=1),
            rec(3, "decision", k - 7, name="selectDiagnosis", round=1, output={"chosen": ["e1"]}),
        ]
        planned = plan(4, "d1", k - 6)
        charge = rec(5, "charge", k - 5, run="d1", amount=10, balance=0)
        started = rec(6, "runStarted", k - Fraction(1, 2), run="d1", container=STEM + "d1")
        nothing_lost = self.how == "start" and self.state.startswith("synced+")
        if self.how in ("start", "plain"):
            self.before = [*head, planned, charge, started]
            self.kept = 6 if nothing_lost or self.how == "plain" else 5
            again = [] if self.kept == 6 else [rec(6, "runStarted", RESUME + 1, run="d1", container=STEM + "d1")]
            code = 0 if self.how == "plain" else 137
            self.ledger = [*self.before[: self.kept], *again, *self.tail("d1", code)]
            target = {"run": "d1", "class": "inFlight", "cell": "x", "round": 1, "planSeq": 4, "startSeq": 6}
            target["container"] = STEM + "d1"
            if self.how == "plain":
                running = inspect(CID, "running")
                self.snapshots = {name: {STEM + "d1": running} for name in SNAPSHOT_FILES}
                self.events = [event("die", RESUME + Fraction(14, 10), exitCode="0")]
            else:
                exited = inspect(CID, "exited", 137, KILL + Fraction(1, 10))
                self.snapshots = {
                    "container-before.json": {STEM + "d1": inspect(CID, "running")},
                    "container-after-kill.json": {STEM + "d1": exited},
                    "container-before-resume.json": {STEM + "d1": exited},
                }
                # The console kills the run's container with the controller (a machine that loses power loses its
                # containers too): Docker writes that kill and the die it causes; the study removes it once read.
                self.events = [
                    event("kill", KILL + Fraction(5, 100), signal="9"),
                    event("die", KILL + Fraction(1, 10), exitCode="137"),
                    event("destroy", RESUME + Fraction(16, 10)),
                ]
            trigger, point = 6, "power:after:runStarted/diagnosis"
        elif self.how == "result":
            early = rec(6, "runStarted", k - 3, run="d1", container=STEM + "d1")
            result = rec(7, "runResult", k - Fraction(1, 2), run="d1", exitCode=0, outputs={"e1": 1})
            self.before = [*head, planned, charge, early, result]
            self.kept = 6
            self.ledger = [*self.before[:6], *self.tail("d1", 0)]
            target = {"run": "d1", "class": "unsettled", "cell": "x", "round": 1, "planSeq": 4, "startSeq": 6}
            target["container"] = STEM + "d1"
            exited = inspect(CID, "exited", 0, KILL - 1)
            self.snapshots = {name: {STEM + "d1": exited} for name in SNAPSHOT_FILES}
            self.events = [event("destroy", RESUME + Fraction(37, 10))]
            trigger, point = 7, "power:after:runResult/diagnosis"
        else:
            self.before = [*head, planned, charge]
            self.kept = 4 if self.how == "charge" else 3
            run = "d1" if self.how == "charge" else "d2"
            replanned = [] if self.how == "charge" else [plan(4, "d2", RESUME + Fraction(1, 4))]
            self.ledger = [
                *self.before[: self.kept],
                *replanned,
                rec(5, "charge", RESUME + Fraction(1, 2), run=run, amount=10, balance=0),
                rec(6, "runStarted", RESUME + 1, run=run, container=STEM + run),
                *self.tail(run, 0),
            ]
            target = {"run": "d1", "class": "charged", "cell": "x", "round": 1, "planSeq": 4, "startSeq": None}
            target["container"] = None
            self.snapshots = {name: {} for name in SNAPSHOT_FILES}
            self.events = [
                event("create", RESUME + Fraction(8, 10), run=run),
                event("start", RESUME + Fraction(9, 10), run=run),
                event("die", RESUME + Fraction(14, 10), run=run, exitCode="0"),
            ]
            trigger, point = 5, "power:after:charge/diagnosis"
        if self.how == "plain":
            point = "after:runStarted/diagnosis"
        elif self.state != "synced":
            point += f"@{self.state}"
        self.kill = {
            "trigger": "auto",
            "at": rfc3339(KILL),
            "pid": 100,
            "beforeKillSeq": len(self.before),
            "targets": [target],
            "point": point,
            "triggerSeq": trigger,
            "triggerEvent": None,
            "prefix": STEM,
            "signal": "SIGKILL",
            "signalled": True,
            "captureError": None,
            "since": rfc3339(SINCE),
            "sinceEpoch": float(SINCE),
        }
        self.arms = [
            {"event": "arm", "at": rfc3339(KILL - 10), "point": point},
            {"event": "fired", "at": rfc3339(KILL), "point": point, "kill": 1, "run": "d1", "fromSeq": 0},
        ]
        if self.how != "plain":
            self.power = self.power_json(point)
        # Each file its own copies, so that a test changes one file's record at a time.
        self.before, self.ledger = json.loads(json.dumps(self.before)), json.loads(json.dumps(self.ledger))
        self.derive()

    def derive(self) -> None:
        """timeline.jsonl and the window file from the ledgers: every record as a console first saw it, 10 ms after
        it was written (the ledger before the kill, the lost records among them, then what the resumed controller
        wrote), and the window closed once the record that ended d1's story was seen (its result; an unsettled
        target's, its round's settlement), or when the study finished without it."""
        seen = [*self.before, *(r for r in self.ledger if when(r["at"]) > KILL)]
        self.timeline = [
            {"seq": r["seq"], "kind": r["kind"], "at": r["at"], "seenAt": rfc3339(when(r["at"]) + Fraction(1, 100))}
            for r in seen
        ]
        ends = "diagnosisSettlement" if self.how == "result" else "runResult"
        result = next((r for r in self.ledger if r["kind"] == ends and r["content"]["run"] == "d1"), None)
        d1: dict[str, Any] = {"resultSeq": None, "resultSeenEpoch": None}
        until = END - Fraction(1, 10)
        if result is not None:
            result_seen = when(result["at"]) + Fraction(1, 100)
            d1 = {"resultSeq": result["seq"], "resultSeenEpoch": float(result_seen)}
            until = result_seen + Fraction(1, 100)
        self.window = {
            "since": rfc3339(SINCE),
            "sinceEpoch": float(SINCE),
            "until": rfc3339(until),
            "untilEpoch": float(until),
            "targets": {"d1": d1},
        }

    def renumber(self, rows: list[dict[str, Any]]) -> None:
        """The ledger as it ends made these records, numbered 1, 2, …, and the timeline and window made again."""
        self.ledger = [{**r, "seq": i} for i, r in enumerate(rows, start=1)]
        self.derive()

    @staticmethod
    def tail(run: str, code: int) -> list[dict[str, Any]]:
        """What the resumed controller writes once its run has started: its result, the round settled, the next
        proposal, the full stop."""
        at = RESUME + 3
        return [
            rec(7, "runResult", at, run=run, exitCode=code, outputs={"e1": 1}),
            rec(
                8,
                "diagnosisSettlement",
                at + Fraction(1, 2),
                round=1,
                run=run,
                dropped=[],
                judged={"experiments": [{"id": "e1", "verdict": "ok", "score": 1}]},
            ),
            rec(9, "stageOpen", at + 1, stage="proposal", round=1),
            rec(10, "halt", at + 2, reason="balance exhausted"),
        ]

    def power_json(self, point: str) -> dict[str, Any]:
        """power.json as the console writes it, and the bytes it kept in lost/ledger.jsonl."""
        size_before = len(as_bytes(self.before))
        durable = len(as_bytes(self.before[: self.kept]))
        after, zeros = durable, 0
        if self.state == "torn":
            after = durable + 7  # the first record written since, cut before its end
        elif self.state == "zeros":
            after, zeros = size_before, size_before - durable
        elif self.state.startswith("synced+"):
            after = size_before  # the first K whole records written since: all of them, here
        cut = as_bytes(self.before)[after - zeros :]
        self.lost_bytes = cut
        return {
            "point": point,
            "state": self.state,
            "atEpoch": float(KILL + Fraction(1, 2)),
            "files": {
                "ledger.jsonl": {
                    "sizeBefore": size_before,
                    "durable": durable,
                    "sizeAfter": after,
                    "zeroTail": zeros,
                    "lost": "lost/ledger.jsonl" if cut else None,
                }
            },
            "removed": [],
            "ledgerSeqAfter": self.kept,
        }

    def write(self, out: Path) -> Path:
        whole(out / "research.json", {"command": ["python3", "-m", "study"], "study": STUDY, "backend": "docker"})
        (out / "study").mkdir(parents=True, exist_ok=True)
        (out / "study" / "ledger.jsonl").write_bytes(as_bytes(self.ledger))
        jsonl(out / "timeline.jsonl", self.timeline)
        jsonl(
            out / "launches.jsonl",
            [
                {"event": "start", "pid": 100, "at": rfc3339(KILL - 10), "resume": False},
                {"event": "end", "pid": 100, "at": rfc3339(KILL), "code": None, "signal": "SIGKILL"},
                {"event": "start", "pid": 200, "at": rfc3339(RESUME), "resume": True},
                {"event": "end", "pid": 200, "at": rfc3339(END), "code": 0, "signal": None},
            ],
        )
        snapshots = (("start", KILL - 10), ("after-kill", KILL + Fraction(1, 5)), ("resume", RESUME), ("end", END))
        jsonl(
            out / "machine.jsonl",
            [{"label": label, "at": rfc3339(at), "processes": [], "containers": []} for label, at in snapshots],
        )
        jsonl(out / "arms.jsonl", self.arms)
        whole(out / "outcome.json", {"code": 0, "signal": None})
        kill = out / "kills" / "1"
        whole(kill / "kill.json", self.kill)
        whole(kill / "ledger-at-kill.json", self.before)
        for name, snap in self.snapshots.items():
            whole(kill / name, snap)
        jsonl(kill / "container-events.jsonl", self.events)
        live = [{**e, "seenAt": rfc3339(Fraction(e["timeNano"], 10**9) + Fraction(1, 1000))} for e in self.events]
        jsonl(kill / "container-events-live.jsonl", live)
        whole(kill / "container-events-window.json", self.window)
        if self.power is not None:
            whole(kill / "power.json", self.power)
            if self.lost_bytes:
                (kill / "lost").mkdir()
                (kill / "lost" / "ledger.jsonl").write_bytes(self.lost_bytes)
        return out


def judged(out: Path) -> OracleVerdict:
    v = judge_study(out)
    assert (S, "oracleError") not in v.checks, v.reasons
    return v


def sound(v: OracleVerdict) -> bool:
    return v.status == 0 and all(v.checks.values())


def fails(v: OracleVerdict, key: tuple[str, str], said: str) -> None:
    assert v.checks.get(key) is False, (key, v.checks.get(key), v.reasons.get(key))
    assert said in v.reasons[key], (key, v.reasons[key])


# --- a sound power loss passes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("how", "state"),
    [
        ("plain", "synced"),
        ("start", "synced"),
        ("start", "torn"),
        ("start", "zeros"),
        ("start", "synced+1"),
        ("charge", "synced"),
        ("plan", "synced"),
        ("result", "synced"),
    ],
)
def test_a_sound_power_loss_passes(tmp_path: Path, how: str, state: str) -> None:
    """Each folder as a sound study and console leave it: every check holds.  ``start``: the resumed controller's
    runStarted (seq 6) is not d1's lost one, yet the timeline's line that saw the lost one before the kill is set
    aside (not "seq 6 seen twice"), the kill's targets are the ledger's before the loss (d1 in flight, as kill.json
    says), the die is the console's kill at the loss, and d1's container is adopted, not started again.  ``charge``:
    chargedOnce counts the ledger's charges, one (the lost one is no charge).  ``plan``: d1, planned and charged and
    both lost, is no charge: its work done again as d2 is no twin.  ``result``: d1, unsettled at the kill, has its one
    result after the loss (the one before it lost).  A plain kill is as sound as it was."""
    folder = PowerFolder(how, state)
    v = judged(folder.write(tmp_path))
    assert sound(v), v.failing() or v.unknown()
    for key in ((S, LWF), (K1, KE), (K1, KD), (S, KT), (D1, SCN), (D1, CO), (D1, RSF)):
        assert key in v.checks, key
    if how == "start" and state == "synced":
        assert folder.kept == 5 and [r["seq"] for r in folder.ledger[4:7]] == [5, 6, 7]
        assert folder.ledger[5] != folder.before[5]  # seq 6 was written again, after the loss


def test_a_power_loss_whose_lost_bytes_are_not_kept_is_still_read(tmp_path: Path) -> None:
    """lost/ledger.jsonl missing, or not the bytes cut: killEvidence ✗ ("Nothing is deleted"), and the loss is still
    read (the ledger's shrink is explained: ledgerWellFormed ✓)."""
    out = PowerFolder("start").write(tmp_path)
    (out / "kills" / "1" / "lost" / "ledger.jsonl").unlink()
    v = judged(out)
    fails(v, (K1, KE), "kills/1/lost/'ledger.jsonl': missing")
    assert v.checks[(S, LWF)] is True, v.reasons.get((S, LWF))
    (out / "kills" / "1" / "lost" / "ledger.jsonl").write_bytes(b"x")
    fails(judged(out), (K1, KE), "not the")


# --- the kept prefix is ledger-at-kill.json's ----------------------------------------------------------------------


def _at_kill_changed(f: PowerFolder) -> None:
    f.before[1]["content"]["round"] = 2  # ledger-at-kill.json's stageOpen: the ledger's says round 1


def _ledger_changed(f: PowerFolder) -> None:
    f.ledger[0]["content"]["config"] = {"seed": 1}  # the ledger's studyOpen, after the kill: not the copy's


def _kept_past_the_ledger(f: PowerFolder) -> None:
    assert f.power is not None
    f.power["ledgerSeqAfter"] = 6  # the ledger's seq 6 is the resumed controller's, not the one at the kill


@pytest.mark.parametrize("change", [_at_kill_changed, _ledger_changed, _kept_past_the_ledger])
def test_a_ledger_whose_kept_prefix_differs_from_ledger_at_kill_fails(
    tmp_path: Path, change: Callable[[PowerFolder], None]
) -> None:
    """The ledger's first ledgerSeqAfter records must equal ledger-at-kill.json's first ledgerSeqAfter: a record
    among them that differs (in ledger-at-kill.json, or in the ledger), or a ledgerSeqAfter that keeps a record the
    ledger no longer holds as it was, is a ledger changed, not cut: ledgerWellFormed ✗ (and killEvidence ✗, the
    copy not the ledger's)."""
    folder = PowerFolder("start")
    change(folder)
    v = judged(folder.write(tmp_path))
    fails(v, (S, LWF), "are not ledger-at-kill.json's")
    fails(v, (K1, KE), "are not the ledger's first records")


def test_the_resumed_controller_writes_from_ledger_seq_after_plus_one(tmp_path: Path) -> None:
    """A resumed controller that writes on from seq 7 (beforeKillSeq + 1) leaves a hole at 6: ledgerWellFormed ✗."""
    folder = PowerFolder("start")
    for row in folder.ledger[5:]:
        row["seq"] += 1
    folder.timeline = [{**line, "seq": line["seq"] + 1} if i >= 6 else line for i, line in enumerate(folder.timeline)]
    v = judged(folder.write(tmp_path))
    fails(v, (S, LWF), "seq 7, not 6")


def test_a_timeline_line_of_a_lost_record_is_held_to_ledger_at_kill(tmp_path: Path) -> None:
    """The line that saw seq 6 before the kill is not compared with the ledger's seq 6 (the resumed controller's),
    but with the record the loss took, as ledger-at-kill.json holds it (the fact held twice, §6.9)."""
    folder = PowerFolder("start")
    folder.timeline[5]["at"] = rfc3339(KILL - Fraction(4, 10))
    v = judged(folder.write(tmp_path))
    fails(v, (S, LWF), "lost at kill 1, is not ledger-at-kill.json's record")


# --- a shrink without power.json --------------------------------------------------------------------------------


@pytest.mark.parametrize("point", ["power:after:runStarted/diagnosis", "after:runStarted/diagnosis"])
def test_a_shrink_without_power_json_fails(tmp_path: Path, point: str) -> None:
    """The same folder, its power.json (and lost/) gone: nothing explains the ledger's seq 6 (the resumed
    controller's) that is not the one the timeline saw before the kill, nor ledger-at-kill.json's: ledgerWellFormed ✗
    as before, killEvidence ✗.  At a power point, power.json is missing besides (the folder incomplete)."""
    folder = PowerFolder("start")
    folder.power = None
    folder.kill["point"] = point
    for line in folder.arms:
        line["point"] = point
    v = judged(folder.write(tmp_path))
    fails(v, (S, LWF), "seq 6 seen twice")
    fails(v, (K1, KE), "ledger-at-kill.json's record 6 is not the ledger's record 6")
    if point.startswith("power:"):
        fails(v, (K1, KE), "kills/1/power.json: missing")
        fails(v, (S, KT), "power.json missing")


# --- a run whose runStarted was lost is not started again ------------------------------------------------------


def _second_container(f: PowerFolder) -> None:
    """The resumed study removes d1's container and runs d1 again in a new one, under the same name."""
    f.events = [
        *f.events[:2],
        event("destroy", RESUME + Fraction(5, 10)),
        event("create", RESUME + Fraction(6, 10), CID2),
        event("start", RESUME + Fraction(7, 10), CID2),
        event("die", RESUME + Fraction(29, 10), CID2, exitCode="0"),
    ]
    f.ledger[6]["content"]["exitCode"] = 0


def _never_adopted(f: PowerFolder) -> None:
    """The resumed study waits for d1's container and writes its result, and no runStarted for it."""
    f.renumber([r for r in f.ledger if r["kind"] != "runStarted"])


@pytest.mark.parametrize(
    ("change", "said"),
    [(_second_container, "'create' of inforsi-s-d1 in its window"), (_never_adopted, "no runStarted adopts")],
)
def test_a_run_whose_runstarted_was_lost_is_not_started_again(
    tmp_path: Path, change: Callable[[PowerFolder], None], said: str
) -> None:
    """d1's runStarted was lost, its container ran: the resumed study finds it by name and adopts it.  One that
    makes a second container for d1 ran it again; one that never writes d1's runStarted again adopts nothing:
    sameContainerNoRerun ✗ for both."""
    folder = PowerFolder("start")
    change(folder)
    v = judged(folder.write(tmp_path))
    fails(v, (D1, SCN), said)


def test_a_kill_of_the_container_after_the_loss_is_the_study_s(tmp_path: Path) -> None:
    """The console's kill of d1's container is allowed up to when the files were rewritten (atEpoch, within a
    second); a kill after the resume is not the loss's: sameContainerNoRerun ✗."""
    folder = PowerFolder("start")
    folder.events[0] = event("kill", RESUME + Fraction(3, 10), signal="9")
    folder.events[1] = event("die", RESUME + Fraction(4, 10), exitCode="137")
    for name in ("container-after-kill.json", "container-before-resume.json"):
        folder.snapshots[name] = {STEM + "d1": inspect(CID, "running")}
    fails(judged(folder.write(tmp_path)), (D1, SCN), "'kill' of inforsi-s-d1 in its window")


def test_a_charge_lost_and_charged_again_twice_is_not_charged_once(tmp_path: Path) -> None:
    """chargedOnce counts the ledger's charges: d1's lost charge is none, and the resumed controller's two are
    two."""
    folder = PowerFolder("charge")
    second = rec(0, "charge", RESUME + Fraction(3, 4), run="d1", amount=0, balance=0)
    folder.renumber([*folder.ledger[:5], second, *folder.ledger[5:]])
    fails(judged(folder.write(tmp_path)), (D1, CO), "d1 has 2 charges")


def _started_again(f: PowerFolder) -> None:
    """The resumed study writes d1's runStarted again, though the loss kept it."""
    again = rec(0, "runStarted", RESUME + 1, run="d1", container=STEM + "d1")
    f.renumber([*f.ledger[:6], again, *f.ledger[6:]])


def _no_result_again(f: PowerFolder) -> None:
    """The resumed study settles d1's round with no result of d1 (the one it had was lost)."""
    f.renumber([r for r in f.ledger if r["kind"] != "runResult"])


@pytest.mark.parametrize(
    ("change", "key", "said"),
    [
        (_started_again, (D1, SCN), "d1 was started again after the kill"),
        (_no_result_again, (D1, RSF), "the study finished without d1's result"),
    ],
)
def test_an_unsettled_target_whose_result_was_lost_has_one_result_after_the_loss(
    tmp_path: Path, change: Callable[[PowerFolder], None], key: tuple[str, str], said: str
) -> None:
    """d1's result was lost with its round unsettled: its runStarted, kept, is not written again, and its one result
    is written after the loss, before its round's settlement."""
    folder = PowerFolder("result")
    change(folder)
    fails(judged(folder.write(tmp_path)), key, said)


# --- a malformed power.json is not trusted ---------------------------------------------------------------------


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(p: dict[str, Any]) -> None:
        p[key] = value

    return change


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    def change(p: dict[str, Any]) -> None:
        del p[key]

    return change


def _entry(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(p: dict[str, Any]) -> None:
        p["files"]["ledger.jsonl"][key] = value

    return change


def _files_path(path: str) -> Callable[[dict[str, Any]], None]:
    def change(p: dict[str, Any]) -> None:
        p["files"][path] = p["files"].pop("ledger.jsonl")

    return change


MALFORMED: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "ledgerSeqAfter missing": (_drop("ledgerSeqAfter"), "ledgerSeqAfter is missing"),
    "ledgerSeqAfter a text": (_set("ledgerSeqAfter", "5"), "ledgerSeqAfter is not an integer"),
    "ledgerSeqAfter true": (_set("ledgerSeqAfter", True), "ledgerSeqAfter is not an integer"),
    "ledgerSeqAfter 5.0": (_set("ledgerSeqAfter", 5.0), "ledgerSeqAfter is not an integer"),
    "ledgerSeqAfter null": (_set("ledgerSeqAfter", None), "ledgerSeqAfter is not an integer"),
    "ledgerSeqAfter negative": (_set("ledgerSeqAfter", -1), "ledgerSeqAfter is negative"),
    "ledgerSeqAfter past beforeKillSeq": (_set("ledgerSeqAfter", 7), "beyond the kill's beforeKillSeq"),
    "ledgerSeqAfter huge": (_set("ledgerSeqAfter", 10**40), "beyond the kill's beforeKillSeq"),
    "point missing": (_drop("point"), "point is not a power point"),
    "point no power point": (_set("point", "after:runStarted/diagnosis"), "point is not a power point"),
    "point not kill.json's": (_set("point", "power:after:charge"), "point is not kill.json's"),
    "state missing": (_drop("state"), "state is none of"),
    "state synced+0": (_set("state", "synced+0"), "state is none of"),
    "state not its point's": (_set("state", "torn"), "state is not its point's"),
    "atEpoch 0": (_set("atEpoch", 0), "atEpoch is not a time"),
    "atEpoch a text": (_set("atEpoch", "1800000000.5"), "atEpoch is not a time"),
    "atEpoch before the kill": (_set("atEpoch", float(KILL - 5)), "atEpoch is before the kill"),
    "files null": (_set("files", None), "files is not an object"),
    "files a list": (_set("files", []), "files is not an object"),
    "sizeAfter negative": (_entry("sizeAfter", -1), "sizeAfter that is not a size"),
    "sizeBefore a text": (_entry("sizeBefore", "200"), "sizeBefore that is not a size"),
    "durable missing": (_entry("durable", None), "durable that is not a size"),
    "zeroTail when synced": (_entry("zeroTail", 3), "the state is not zeros"),
    "sizeAfter past sizeBefore": (_entry("sizeAfter", 10**6), "keeps more bytes than it had"),
    "lost elsewhere": (_entry("lost", "lost/other"), "does not name lost/<its path>"),
    "lost null while cut": (_entry("lost", None), "does not name lost/<its path>"),
    "a path out of the study": (_files_path("../ledger.jsonl"), "is not a path in the study's folder"),
    "removed null": (_set("removed", None), "removed is not a list of paths"),
    "removed absolute": (_set("removed", ["/etc/passwd"]), "removed is not a list of paths"),
}


def _untrusted(v: OracleVerdict, said: str) -> None:
    """A power.json not trusted explains no loss: killEvidence ✗ naming why, the folder incomplete (killTriggered ✗),
    and the ledger's shrink unexplained (ledgerWellFormed ✗); the kill is still judged, as one without a loss."""
    fails(v, (K1, KE), said)
    fails(v, (S, KT), "not complete for its stage")
    fails(v, (S, LWF), "no power.json explains a loss")
    fails(v, (S, LWF), "seq 6 seen twice")
    assert (D1, SCN) in v.checks and (D1, CO) in v.checks


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_power_json_is_not_trusted(tmp_path: Path, case: str) -> None:
    change, said = MALFORMED[case]
    folder = PowerFolder("start")
    assert folder.power is not None
    change(folder.power)
    _untrusted(judged(folder.write(tmp_path)), said)


def test_ledger_seq_after_beyond_what_ledger_at_kill_holds_is_not_trusted(tmp_path: Path) -> None:
    """ledger-at-kill.json cut to four records: ledgerSeqAfter 5 names a record it does not hold."""
    folder = PowerFolder("start")
    folder.before = folder.before[:4]
    _untrusted(judged(folder.write(tmp_path)), "ledgerSeqAfter 5 is beyond what ledger-at-kill.json holds")


def _not_json(path: Path) -> None:
    path.write_text('{"ledgerSeqAfter": 5', encoding="utf-8")


def _a_list(path: Path) -> None:
    path.write_text("[5]", encoding="utf-8")


def _repeated_key(path: Path) -> None:
    path.write_text('{"ledgerSeqAfter": 5, "ledgerSeqAfter": 5}', encoding="utf-8")


def _huge(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text[:-1] + " " * (1024 * 1024) + "}", encoding="utf-8")


def _a_link(path: Path) -> None:
    target = path.with_name("power-copy.json")
    path.rename(target)
    path.symlink_to(target.name)


def _a_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _a_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (_not_json, "power.json: not JSON"),
        (_a_list, "power.json: not an object"),
        (_repeated_key, "repeats the key"),
        (_huge, "larger than the 1048576 a study could write"),
        (_a_link, "power.json: a symbolic link"),
        (_a_folder, "power.json: a folder"),
        (_a_fifo, "power.json: a FIFO"),
    ],
)
def test_a_power_json_that_cannot_be_read_is_not_trusted(
    tmp_path: Path, change: Callable[[Path], None], said: str
) -> None:
    out = PowerFolder("start").write(tmp_path)
    change(out / "kills" / "1" / "power.json")
    v = judged(out)
    _untrusted(v, said)
    assert "power.json unreadable" in v.reasons[(S, KT)] or "power.json not readable" in v.reasons[(S, KT)]


def test_a_power_json_not_trusted_beside_a_ledger_that_did_not_shrink(tmp_path: Path) -> None:
    """A plain kill's folder with a power.json of nothing: killEvidence ✗ (and the folder incomplete), and the
    ledger, just what it was at the kill and more, has no shrink to explain: ledgerWellFormed ✓."""
    out = PowerFolder("plain").write(tmp_path)
    whole(out / "kills" / "1" / "power.json", {})
    v = judged(out)
    fails(v, (K1, KE), "point is not a power point")
    assert v.checks[(S, LWF)] is True, v.reasons.get((S, LWF))


# --- the power point's grammar -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("point", "state"),
    [
        ("power:after:runStarted/diagnosis", ("synced", None)),
        ("power:after:charge@synced", ("synced", None)),
        ("power:after:runStarted/diagnosis#2@synced+3", ("synced+", "3")),
        ("power:after:charge@synced+01", ("synced+", "1")),
        ("power:after:runResult@torn", ("torn", None)),
        ("power:container:die/baseline#2@zeros", ("zeros", None)),
    ],
)
def test_a_power_point_is_a_point(point: str, state: tuple[str, str | None]) -> None:
    parsed = parse_power_point(point)
    assert parsed is not None and parsed[1] == state
    assert is_point(point) and parse_point(point) == parsed[0]
    assert parse_point(point.removeprefix("power:").split("@")[0]) == parsed[0]


@pytest.mark.parametrize(
    "point",
    [
        "power:",
        "power:after:charge@",
        "power:after:charge@synced+0",
        "power:after:charge@synced+",
        "power:after:charge@Synced",
        "power:after:charge@torn@torn",
        "power:after:decisionx",
        "power:power:after:charge",
        "after:charge@torn",
        "power:after:charge@torn\n",
    ],
)
def test_what_is_no_power_point(point: str) -> None:
    assert parse_power_point(point) is None and not is_point(point)
