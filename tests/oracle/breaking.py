"""Ways to break a copy of a sound evidence folder by hand, one fact each, for the oracle's tests.

Each breaker takes a copied folder of a study killed once at its first
diagnosis run's ``runStarted`` (``after:runStarted/diagnosis``, target ``d1``)
and changes it the way a wrong study, or a wrong console, would have left
it; it returns the (scope, check) that must then be ✗.  The ledger and the
timeline are edited together where a record is added or removed, so that
only the fact meant is wrong.

``FILE_RULES`` hold docs/contract.md's "Which check a file fails" and the
tolerances it names: each changes one file of the same folder and returns
what each check it is about must then say: ✓ (``True``), ``?`` (``None``), or
✗ with words its reasons must hold (a string), on both sides of a tolerance
where there is one.
"""

from __future__ import annotations

import datetime
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Key = tuple[str, str]
Breaker = Callable[[Path], Key]
Expected = dict[Key, bool | str | None]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def first(rows: list[dict[str, Any]], kind: str, run: str = "d1") -> int:
    return next(i for i, r in enumerate(rows) if r["kind"] == kind and r["content"].get("run") == run)


def rewrite_ledger(out: Path, edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    """Edit the ledger's records (a record added has seq None), then renumber them, the timeline and the
    window's resultSeq to match; an added record was seen when the record after it was."""
    ledger = out / "study" / "ledger.jsonl"
    rows = edit(read_jsonl(ledger))
    seen = {t["seq"]: t["seenAt"] for t in read_jsonl(out / "timeline.jsonl")}
    renumbered: dict[int, int] = {}
    new_tl = []
    for i, r in enumerate(rows, start=1):
        old = r["seq"]
        if old is not None:
            renumbered[old] = i
        later = next((x["seq"] for x in rows[i - 1 :] if x["seq"] is not None and x["seq"] in seen), None)
        new_tl.append({"seq": i, "kind": r["kind"], "at": r["at"], "seenAt": seen[old if old is not None else later]})
        r["seq"] = i
    write_jsonl(ledger, rows)
    write_jsonl(out / "timeline.jsonl", new_tl)
    path = kill_dir(out) / "container-events-window.json"
    if path.exists():
        w = json.loads(path.read_text())
        for entry in w["targets"].values():
            if entry["resultSeq"] is not None:
                entry["resultSeq"] = renumbered.get(entry["resultSeq"], entry["resultSeq"])
        path.write_text(json.dumps(w))


def to_epoch(text: str) -> float:
    return datetime.datetime.fromisoformat(text).timestamp()


def kill_dir(out: Path) -> Path:
    return out / "kills" / "1"


def window(out: Path) -> dict[str, Any]:
    return json.loads((kill_dir(out) / "container-events-window.json").read_text())


def target_event(out: Path, action: str) -> dict[str, Any]:
    """The target's event of that action in the live recording (a copy)."""
    for row in read_jsonl(kill_dir(out) / "container-events-live.jsonl"):
        if row.get("Action") == action and row["Actor"]["Attributes"].get("studymon.run") == "d1":
            return json.loads(json.dumps(row))
    raise AssertionError(f"no {action} of d1 in the live recording")


def started_twice(out: Path) -> tuple[str, str]:
    """The target's container started again in the window: a new Id under its name."""
    die = target_event(out, "die")
    start = dict(die, status="start", Action="start", id="f" * 64)
    start["Actor"] = {
        "ID": "f" * 64,
        "Attributes": {k: v for k, v in die["Actor"]["Attributes"].items() if k != "exitCode"},
    }
    start["timeNano"] -= 500_000_000
    start["time"] = start["timeNano"] // 10**9
    rows = read_jsonl(kill_dir(out) / "container-events-live.jsonl")
    write_jsonl(kill_dir(out) / "container-events-live.jsonl", [start, *rows])
    return ("kill 1 · d1", "sameContainerNoRerun")


def charged_twice(out: Path) -> tuple[str, str]:
    """The resumed controller charged d1 again before waiting for it."""

    def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        i = first(rows, "runResult")
        charge = json.loads(json.dumps(rows[first(rows, "charge")]))
        charge["at"], charge["seq"] = rows[i]["at"], None
        return [*rows[:i], charge, *rows[i:]]

    rewrite_ledger(out, edit)
    return ("kill 1 · d1", "chargedOnce")


def result_lost(out: Path) -> tuple[str, str]:
    """d1's result and its round's settlement never written; the study went on to its halt."""

    def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        drop = {first(rows, "runResult"), first(rows, "diagnosisSettlement")}
        return [r for i, r in enumerate(rows) if i not in drop]

    rewrite_ledger(out, edit)
    return ("kill 1 · d1", "resultSettledAndFinished")


def end_missing(out: Path) -> tuple[str, str]:
    """The killed controller's end is not in launches.jsonl: the resume ran beside it."""
    rows = read_jsonl(out / "launches.jsonl")
    i = next(i for i, r in enumerate(rows) if r["event"] == "end")
    write_jsonl(out / "launches.jsonl", rows[:i] + rows[i + 1 :])
    return ("study", "exitedCleanly")


def ledger_at_kill_differs(out: Path) -> tuple[str, str]:
    """ledger-at-kill.json holds d1's charge with 10.0 where the ledger has 10."""
    path = kill_dir(out) / "ledger-at-kill.json"
    records = json.loads(path.read_text())
    for r in records:
        if r["kind"] == "charge":
            r["content"]["amount"] = float(r["content"]["amount"])
    path.write_text(json.dumps(records))
    return ("kill 1", "killEvidence")


def timeline_differs(out: Path) -> tuple[str, str]:
    """timeline.jsonl's copy of a record has another time than the ledger's."""
    rows = read_jsonl(out / "timeline.jsonl")
    rows[2]["at"] = "2020-01-01T00:00:00.000Z"
    write_jsonl(out / "timeline.jsonl", rows)
    return ("study", "ledgerWellFormed")


def recordings_disagree(out: Path) -> tuple[str, str]:
    """The read-back recording has the target's die with another exit code than the live one."""
    path = kill_dir(out) / "container-events.jsonl"
    rows = read_jsonl(path)
    for r in rows:
        if (
            r.get("Action") == "die"
            and r["Actor"]["Attributes"].get("studymon.run") == "d1"
            and r["Actor"]["Attributes"].get("studymon.study")
            == json.loads((out / "research.json").read_text())["study"]
        ):
            r["Actor"]["Attributes"]["exitCode"] = "1"
    write_jsonl(path, rows)
    return ("kill 1 · d1", "sameContainerNoRerun")


def outcome_differs(out: Path) -> tuple[str, str]:
    (out / "outcome.json").write_text(json.dumps({"code": 1, "signal": None}))
    return ("study", "exitedCleanly")


def window_since_differs(out: Path) -> tuple[str, str]:
    path = kill_dir(out) / "container-events-window.json"
    w = json.loads(path.read_text())
    w["sinceEpoch"] -= 5
    w["since"] = stamp(w["sinceEpoch"], 9)
    path.write_text(json.dumps(w))
    return ("kill 1", "killEvidence")


def twin_planned(out: Path) -> tuple[str, str]:
    """After the kill the study plans d1's work again, under another run id."""

    def edit(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        i = first(rows, "runResult")
        plan = json.loads(json.dumps(rows[first(rows, "runPlanned")]))
        plan["content"]["run"] = "d1b"
        plan["content"]["experiments"] = plan["content"]["experiments"][:1]
        plan["at"], plan["seq"] = rows[i]["at"], None
        return [*rows[:i], plan, *rows[i:]]

    rewrite_ledger(out, edit)
    return ("kill 1 · d1", "chargedOnce")


def stamp(epoch: float, digits: int = 3) -> str:
    whole = int(epoch)
    frac = f"{epoch - whole:.{digits}f}"[2:]
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{frac}Z"


def result_written_unseen(out: Path) -> tuple[str, str]:
    """d1's result was seen while no controller ran: between the killed one's end and the resume."""
    launches = read_jsonl(out / "launches.jsonl")
    end = next(r for r in launches if r["event"] == "end")
    resume = next(r for r in launches if r["event"] == "start" and r["resume"])
    moment = (to_epoch(end["at"]) + to_epoch(resume["at"])) / 2
    rows = read_jsonl(out / "timeline.jsonl")
    for r in rows:
        if r["kind"] == "runResult":
            r["seenAt"] = stamp(moment)
            break
    write_jsonl(out / "timeline.jsonl", rows)
    return ("kill 1 · d1", "resultSettledAndFinished")


def die_after_result(out: Path) -> tuple[str, str]:
    """The result was written while the run still ran: its die comes seconds after it was seen."""
    for name in ("container-events-live.jsonl", "container-events.jsonl"):
        path = kill_dir(out) / name
        rows = read_jsonl(path)
        for r in rows:
            if r.get("Action") in ("die", "destroy") and r["Actor"]["Attributes"].get("studymon.run") == "d1":
                r["timeNano"] += 3 * 10**9
                r["time"] = r["timeNano"] // 10**9
        write_jsonl(path, rows)
    path = kill_dir(out) / "container-events-window.json"
    w = json.loads(path.read_text())
    w["untilEpoch"] += 4
    w["until"] = stamp(w["untilEpoch"], 9)
    path.write_text(json.dumps(w))
    return ("kill 1 · d1", "sameContainerNoRerun")


def ledger_line_copied_before_the_kill(out: Path) -> tuple[str, str]:
    """A record written after the kill copied into the ledger before the kill's last record: the ledger's
    records by seq to beforeKillSeq are still ledger-at-kill.json's, but its first records are not."""
    before = json.loads((kill_dir(out) / "kill.json").read_text())["beforeKillSeq"]
    ledger = out / "study" / "ledger.jsonl"
    lines = ledger.read_text(encoding="utf-8").splitlines(keepends=True)
    later = next(line for line in lines if json.loads(line)["seq"] == before + 1)
    lines.insert(before - 1, later)
    ledger.write_text("".join(lines), encoding="utf-8")
    return ("kill 1", "killEvidence")


def trigger_seen_a_second_earlier(out: Path) -> tuple[str, str]:
    """kill.json's triggerSeenEpoch a second before its triggerSeenAt: one time written twice, two times."""
    path = kill_dir(out) / "kill.json"
    k = json.loads(path.read_text())
    k["triggerSeenEpoch"] -= 1.0
    path.write_text(json.dumps(k))
    return ("kill 1", "killEvidence")


def seen_before_any_controller(out: Path) -> tuple[str, str]:
    """A record after the kill seen a day before the first controller started: timeline.jsonl is held to no
    record seen before the first controller started (docs/contract.md, "Which check a file fails":
    ledgerWellFormed), whatever kill it follows."""
    before = json.loads((kill_dir(out) / "kill.json").read_text())["beforeKillSeq"]
    rows = read_jsonl(out / "timeline.jsonl")
    for r in rows:
        if r["seq"] == before + 1:
            r["seenAt"] = stamp(to_epoch(r["seenAt"]) - 86400)
    write_jsonl(out / "timeline.jsonl", rows)
    return ("study", "ledgerWellFormed")


def window_entry_null(out: Path) -> tuple[str, str]:
    """The window file's entry for the target is null, not its resultSeq and resultSeenEpoch."""
    path = kill_dir(out) / "container-events-window.json"
    w = json.loads(path.read_text())
    w["targets"]["d1"] = None
    path.write_text(json.dumps(w))
    return ("kill 1", "killEvidence")


def charged_started_twice(out: Path) -> tuple[str, str]:
    """For a study killed after d1's charge (kill 1) then at its runStarted (kill 2): the resume that
    started d1's container started a second one under its name in kill 1's window."""
    path = out / "kills" / "1" / "container-events-live.jsonl"
    rows = read_jsonl(path)
    start = json.loads(json.dumps(next(r for r in rows if r.get("Action") == "start")))
    start["id"] = start["Actor"]["ID"] = "e" * 64
    start["timeNano"] += 10**8
    start["time"] = start["timeNano"] // 10**9
    write_jsonl(path, [*rows, start])
    return ("kill 1 · d1", "sameContainerNoRerun")


def exec_in_flight(out: Path) -> tuple[str, str]:
    """For the same study: a command run inside d1's container in kill 2's window, before its die."""
    path = out / "kills" / "2" / "container-events-live.jsonl"
    rows = read_jsonl(path)
    ex = json.loads(json.dumps(next(r for r in rows if r.get("Action") == "die")))
    ex["Action"] = ex["status"] = "exec_start: sh -c true"
    ex["timeNano"] -= 10**7
    ex["time"] = ex["timeNano"] // 10**9
    write_jsonl(path, [ex, *rows])
    return ("kill 2 · d1", "sameContainerNoRerun")


TWO_POINT_BREAKERS: dict[str, Breaker] = {
    "a charged target's container started twice": charged_started_twice,
    "an exec in an in-flight target's container": exec_in_flight,
}

BREAKERS: dict[str, Breaker] = {
    "started twice": started_twice,
    "charged twice": charged_twice,
    "result lost": result_lost,
    "controller end missing": end_missing,
    "ledger-at-kill.json differs from the ledger": ledger_at_kill_differs,
    "timeline.jsonl differs from the ledger": timeline_differs,
    "the recordings disagree": recordings_disagree,
    "outcome.json differs from launches.jsonl": outcome_differs,
    "the window starts elsewhere than kill.json": window_since_differs,
    "a twin planned after the kill": twin_planned,
    "a result seen while no controller ran": result_written_unseen,
    "a die after the result was seen": die_after_result,
    "a ledger line copied before the kill": ledger_line_copied_before_the_kill,
    "kill.json's triggerSeenEpoch a second off its text": trigger_seen_a_second_earlier,
    "a record after the kill seen before any controller started": seen_before_any_controller,
    "the window's entry for the target null": window_entry_null,
}


# --- which check a file fails (docs/contract.md) -----------------------------------------------

LWF, EC, KT = ("study", "ledgerWellFormed"), ("study", "exitedCleanly"), ("study", "killTriggered")
KE, KD = ("kill 1", "killEvidence"), ("kill 1", "killDelivered")
SCN1, RSF1 = ("kill 1 · d1", "sameContainerNoRerun"), ("kill 1 · d1", "resultSettledAndFinished")


def shifted(text: str, ms: float) -> str:
    """An RFC 3339 time of the console's (milliseconds, Z) moved by ms milliseconds, exactly."""
    t = datetime.datetime.fromisoformat(text) + datetime.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _timeline_line_earlier(out: Path, ms: int) -> None:
    """timeline.jsonl's last line seen ms milliseconds before the line before it."""
    path = out / "timeline.jsonl"
    rows = read_jsonl(path)
    rows[-1]["seenAt"] = shifted(rows[-2]["seenAt"], -ms)
    write_jsonl(path, rows)


def timeline_a_line_2ms_earlier(out: Path) -> Expected:
    _timeline_line_earlier(out, 2)
    return {LWF: "is earlier than line", KE: "is earlier than line"}


def timeline_a_line_1ms_earlier(out: Path) -> Expected:
    """KEEPER_SLACK: a line one millisecond earlier than the one before it keeps the order."""
    _timeline_line_earlier(out, 1)
    return {LWF: True, KE: True}


def timeline_line_moved(out: Path) -> Expected:
    """A line of the study's start moved after the kill's: out of time order (its values as they were)."""
    path = out / "timeline.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    line = lines.pop(2)
    lines.insert(len(lines) - 2, line)
    path.write_text("".join(lines), encoding="utf-8")
    return {LWF: "is earlier than line", KE: "is earlier than line"}


def timeline_missing(out: Path) -> Expected:
    (out / "timeline.jsonl").unlink()
    return {LWF: "timeline.jsonl: missing", KE: "timeline.jsonl: missing"}


def timeline_missing_and_ledger_empty(out: Path) -> Expected:
    """No record in the ledger: a missing timeline.jsonl fails ledgerWellFormed only once the ledger holds one;
    every kill's killEvidence still.  The empty ledger fails ledgerWellFormed by itself, the study finished
    ("the ledger holds a record": README.md, open question 67)."""
    (out / "timeline.jsonl").unlink()
    (out / "study" / "ledger.jsonl").write_bytes(b"")
    return {LWF: "the ledger holds no record", KE: "timeline.jsonl: missing"}


def timeline_line_not_a_record(out: Path) -> Expected:
    """A line whose seenAt is a number, not a time."""
    path = out / "timeline.jsonl"
    rows = read_jsonl(path)
    rows[1]["seenAt"] = 47
    write_jsonl(path, rows)
    return {LWF: "line 2: not a record", KE: "line 2: not a record"}


def timeline_torn_last_line(out: Path) -> Expected:
    """The last line cut before its end of line (a console that died mid-write): left out."""
    path = out / "timeline.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 20])
    return {LWF: True, KE: True}


def machine_at_a_number(out: Path) -> Expected:
    path = out / "machine.jsonl"
    rows = read_jsonl(path)
    sample = next(r for r in rows if r["label"] == "sample")
    sample["at"] = 47
    write_jsonl(path, rows)
    return {EC: "at is not a time"}


def machine_label_unknown(out: Path) -> Expected:
    path = out / "machine.jsonl"
    rows = read_jsonl(path)
    rows[0]["label"] = "snapshot"
    write_jsonl(path, rows)
    return {EC: "no label the console writes"}


def machine_snapshot_without_containers(out: Path) -> Expected:
    path = out / "machine.jsonl"
    rows = read_jsonl(path)
    del next(r for r in rows if r["label"] == "end")["containers"]
    write_jsonl(path, rows)
    return {EC: "without its processes and containers"}


def machine_out_of_order(out: Path) -> Expected:
    """The end snapshot written first: the start snapshot after it is dated earlier."""
    path = out / "machine.jsonl"
    rows = read_jsonl(path)
    # A sample may be written after the end snapshot (each kind is in time order, not the file), so the end
    # snapshot is found by its label, not taken as the last line.
    assert rows[0]["label"] == "start", [r["label"] for r in rows]
    end = next(i for i, r in enumerate(rows) if r["label"] == "end")
    write_jsonl(path, [rows[end], *rows[:end], *rows[end + 1 :]])
    return {EC: "machine.jsonl line 2 is earlier than line 1"}


def machine_snapshot_after_a_later_sample(out: Path) -> Expected:
    """A heavy snapshot dated when its event came and written once taken, after a sample dated later: each kind
    is in time order, and the file holds."""
    path = out / "machine.jsonl"
    rows = read_jsonl(path)
    i = next(i for i, r in enumerate(rows) if r["label"] == "sample")
    snapshot = rows[i - 1]
    assert snapshot["label"] != "sample", [r["label"] for r in rows]
    rows[i - 1], rows[i] = rows[i], snapshot
    write_jsonl(path, rows)
    return {EC: True}


def machine_missing(out: Path) -> Expected:
    (out / "machine.jsonl").unlink()
    return {EC: "machine.jsonl: missing"}


def machine_grown_with_zeros(out: Path) -> Expected:
    """NUL bytes after the last end of line: a torn last line, left out."""
    with open(out / "machine.jsonl", "ab") as f:
        f.write(b"\0" * 4096)
    return {EC: True}


def launches_out_of_order(out: Path) -> Expected:
    """The killed controller's end written after the resume's start, each line's time as it was: the story
    told by time still holds (killDelivered: README.md, open question 27), the file's order does not."""
    path = out / "launches.jsonl"
    rows = read_jsonl(path)
    assert [r["event"] for r in rows] == ["start", "end", "start", "end"], rows
    write_jsonl(path, [rows[0], rows[2], rows[1], rows[3]])
    return {EC: "launches.jsonl line 3 is earlier than line 2", KD: True}


def _set_type(path: Path, line: int, value: Any) -> None:
    rows = read_jsonl(path)
    if value is None:
        rows[line].pop("Type")
    else:
        rows[line]["Type"] = value
    write_jsonl(path, rows)


def event_of_another_type(out: Path) -> Expected:
    """A network's event in the read-back recording: a line that is not its record."""
    path = kill_dir(out) / "container-events.jsonl"
    _set_type(path, 0, "network")
    return {SCN1: "container-events.jsonl line 1: an event that is not a container's"}


def event_without_type(out: Path) -> Expected:
    """An event of the live recording without its Type: "an event without its Type container" is not its
    record (docs/contract.md, "Which check a file fails")."""
    _set_type(kill_dir(out) / "container-events-live.jsonl", 0, None)
    return {SCN1: "container-events-live.jsonl line 1: an event that is not a container's"}


def event_without_action(out: Path) -> Expected:
    """An event of the live recording with Docker's older status and no Action."""
    path = kill_dir(out) / "container-events-live.jsonl"
    rows = read_jsonl(path)
    rows[0].pop("Action")
    write_jsonl(path, rows)
    return {SCN1: "container-events-live.jsonl line 1: an event without its Action"}


def recording_torn_last_line(out: Path) -> Expected:
    """The live recording's last line torn (a console that died mid-write): left out."""
    with open(kill_dir(out) / "container-events-live.jsonl", "a", encoding="utf-8") as f:
        f.write('{"status": "sta')
    return {SCN1: True}


def readback_missing(out: Path) -> Expected:
    (kill_dir(out) / "container-events.jsonl").unlink()
    return {SCN1: "container-events.jsonl", KE: "container-events.jsonl: missing"}


def _state(out: Path, file: str, **state: Any) -> None:
    path = kill_dir(out) / file
    snap = json.loads(path.read_text())
    for inspect in snap.values():
        inspect["State"].update(state)
    path.write_text(json.dumps(snap))


def running_not_a_boolean(out: Path) -> Expected:
    """State.Running 1: an inspect of the wrong shape (the target's check, not killEvidence)."""
    _state(out, "container-after-kill.json", Running=1)
    return {SCN1: "State.Running is not a boolean", KE: True}


def running_says_otherwise_than_status(out: Path) -> Expected:
    _state(out, "container-before.json", Running=False)
    return {SCN1: "State.Running and State.Status disagree", KE: True}


def paused_running_true(out: Path) -> Expected:
    """The target paused at the kill, State.Running true as Docker writes it: of the right shape, and not
    running (an in-flight target's container-before.json shows it running)."""
    _state(out, "container-before.json", Running=True, Status="paused")
    return {SCN1: "'paused', not running", KE: True}


def paused_running_false(out: Path) -> Expected:
    _state(out, "container-before.json", Running=False, Status="paused")
    return {SCN1: "State.Running and State.Status disagree", KE: True}


def exit_code_a_text(out: Path) -> Expected:
    _state(out, "container-after-kill.json", ExitCode="0")
    return {SCN1: "State.ExitCode is not an integer", KE: True}


def finished_at_a_number(out: Path) -> Expected:
    """State.FinishedAt written, and not a text: of the wrong shape (README.md, open question 76)."""
    _state(out, "container-before-resume.json", FinishedAt=20)
    return {SCN1: "State.FinishedAt is not a text", KE: True}


def status_and_times_not_written(out: Path) -> Expected:
    """Every running container's State.Status, StartedAt and FinishedAt not written, in every snapshot: "those
    four where written", so of the right shape, and with State.Running true still running (open question 76)."""
    for file in ("container-before.json", "container-after-kill.json", "container-before-resume.json"):
        path = kill_dir(out) / file
        snap = json.loads(path.read_text())
        for inspect in snap.values():
            if inspect is not None and inspect["State"].get("Status") == "running":
                for key in ("Status", "StartedAt", "FinishedAt"):
                    del inspect["State"][key]
        path.write_text(json.dumps(snap))
    return {SCN1: True, KE: True}


def frozen_ms_null(out: Path) -> Expected:
    """kill.json's frozenMs written null: not a number (README.md, open question 75)."""
    path = kill_dir(out) / "kill.json"
    k = json.loads(path.read_text())
    assert isinstance(k.get("frozenMs"), (int, float)), k.get("frozenMs")
    k["frozenMs"] = None
    path.write_text(json.dumps(k))
    return {KE: "kill.json: frozenMs is not a number", SCN1: True}


def _window_until(out: Path, seconds: float) -> None:
    """The window's until moved off its untilEpoch (TEXT_SLACK: 2 µs)."""
    path = kill_dir(out) / "container-events-window.json"
    w = json.loads(path.read_text())
    w["until"] = stamp(w["untilEpoch"] + seconds, 9)
    path.write_text(json.dumps(w))


def window_until_5us_off(out: Path) -> Expected:
    _window_until(out, 5e-6)
    return {KE: "a time and its epoch disagree"}


def window_until_1us_off(out: Path) -> Expected:
    _window_until(out, 1e-6)
    return {KE: True}


def _window_seen(out: Path, seconds: float) -> None:
    path = kill_dir(out) / "container-events-window.json"
    w = json.loads(path.read_text())
    w["targets"]["d1"]["resultSeenEpoch"] += seconds
    path.write_text(json.dumps(w))


def result_seen_2ms_off(out: Path) -> Expected:
    """The window's resultSeenEpoch 2 ms after timeline.jsonl's seenAt of its resultSeq: more than WRITTEN_MS."""
    _window_seen(out, 0.002)
    return {KE: "the window says seq"}


def result_seen_within_a_ms(out: Path) -> Expected:
    _window_seen(out, 0.0005)
    return {KE: True}


def _arms(out: Path) -> list[dict[str, Any]]:
    rows = read_jsonl(out / "arms.jsonl")
    assert [r["event"] for r in rows] == ["arm", "fired"], rows
    return rows


def fired_twice(out: Path) -> Expected:
    """The point armed again, and a second fired line naming the same kill."""
    arm, fired = _arms(out)
    write_jsonl(out / "arms.jsonl", [arm, fired, dict(arm, at=fired["at"]), fired])
    return {KT: "kill 1 fired twice"}


def _fired_before_seen(out: Path, ms: int) -> None:
    arm, fired = _arms(out)
    seq = json.loads((kill_dir(out) / "kill.json").read_text())["triggerSeq"]
    seen = next(r["seenAt"] for r in read_jsonl(out / "timeline.jsonl") if r["seq"] == seq)
    fired["at"] = shifted(seen, -ms)
    write_jsonl(out / "arms.jsonl", [arm, fired])


def fired_3ms_before_seen(out: Path) -> Expected:
    _fired_before_seen(out, 3)
    return {KT: "fired before seq"}


def fired_2ms_before_seen(out: Path) -> Expected:
    """SEEN_SLACK: a fired line 2 ms before its record's seenAt, both stamped to the millisecond."""
    _fired_before_seen(out, 2)
    return {KT: True}


def _armed_after_fired(out: Path, ms: int) -> None:
    arm, fired = _arms(out)
    arm["at"] = shifted(fired["at"], ms)
    write_jsonl(out / "arms.jsonl", [arm, fired])


def arms_out_of_order(out: Path) -> Expected:
    """The arm line dated 2 ms after the fired line that follows it."""
    _armed_after_fired(out, 2)
    return {KT: "arms.jsonl line 2 is earlier than line 1"}


def arms_within_keeper_slack(out: Path) -> Expected:
    _armed_after_fired(out, 1)
    return {KT: True}


def _launch_times(out: Path) -> tuple[str, str]:
    """The first start's at and the final end's at."""
    rows = read_jsonl(out / "launches.jsonl")
    return next(r["at"] for r in rows if r["event"] == "start"), [r["at"] for r in rows if r["event"] == "end"][-1]


def _date_record(out: Path, seq: int, at: str) -> None:
    """A record's own at moved (the ledger's, and timeline.jsonl's copy of it), its seenAt as it was."""
    for path in (out / "study" / "ledger.jsonl", out / "timeline.jsonl"):
        rows = read_jsonl(path)
        next(r for r in rows if r["seq"] == seq)["at"] = at
        write_jsonl(path, rows)


def _last_seq(out: Path) -> int:
    return int(read_jsonl(out / "study" / "ledger.jsonl")[-1]["seq"])


def dated_within_record_lag(out: Path) -> Expected:
    """The halt dated 0.9 s after the final controller's end: RECORD_LAG (1 s) after an end."""
    _date_record(out, _last_seq(out), shifted(_launch_times(out)[1], 900))
    return {EC: True, LWF: True, KE: True}


def dated_past_record_lag(out: Path) -> Expected:
    """The halt dated 1.1 s after the final end, seen when it was: written by something that outlived its
    controller (docs/contract.md, "Records are written while a controller runs": by the record's own at)."""
    _date_record(out, _last_seq(out), shifted(_launch_times(out)[1], 1100))
    return {EC: "in no controller's life", LWF: True, KE: True}


def dated_before_the_first_start(out: Path) -> Expected:
    """studyOpen dated 1.1 s before the first start: written before any controller was started."""
    _date_record(out, 1, shifted(_launch_times(out)[0], -1100))
    return {EC: "in no controller's life", LWF: True}


def dated_within_record_lag_before_a_start(out: Path) -> Expected:
    """studyOpen dated 0.9 s before the first start (its at cut to one fraction digit, say): RECORD_LAG."""
    _date_record(out, 1, shifted(_launch_times(out)[0], -900))
    return {EC: True, LWF: True}


def _last_record_seen_after_the_end(out: Path, ms: int) -> None:
    end = _launch_times(out)[1]
    path = out / "timeline.jsonl"
    rows = read_jsonl(path)
    rows[-1]["seenAt"] = shifted(end, ms)
    write_jsonl(path, rows)


def seen_past_record_lag(out: Path) -> Expected:
    """The halt seen 1.1 s after the final end, dated while its controller ran: a console that was not
    watching sees records late, and a late seenAt alone is nothing wrong."""
    _last_record_seen_after_the_end(out, 1100)
    return {EC: True, LWF: True, KE: True}


def seen_a_minute_after_the_end(out: Path) -> Expected:
    _last_record_seen_after_the_end(out, 60_000)
    return {EC: True, LWF: True, KE: True}


def result_seen_before_the_resume(out: Path) -> Expected:
    """The target's result seen between the killed controller's end and the resume, dated while the resumed
    controller ran: the kill's own rule names the target's check, and not exitedCleanly."""
    result_written_unseen(out)
    return {RSF1: "before the first start after kill 1", EC: True}


def result_dated_and_seen_before_any_start(out: Path) -> Expected:
    """The target's result dated 2 s before the first start and seen between the kill and the resume: the
    kill's own rule names the target's check (by seenAt), and exitedCleanly fails too (by its at), whatever
    kill it follows."""
    result_written_unseen(out)
    seq = next(r["seq"] for r in read_jsonl(out / "study" / "ledger.jsonl") if r["kind"] == "runResult")
    _date_record(out, seq, shifted(_launch_times(out)[0], -2000))
    return {RSF1: "before the first start after kill 1", EC: "in no controller's life"}


# launches.jsonl (docs/contract.md, "Which check a file fails"): a line that is not a launch fails
# exitedCleanly and every kill's killDelivered; a file only out of time order, exitedCleanly alone.


def _edit_start(out: Path, which: int, edit: Callable[[dict[str, Any]], None]) -> None:
    path = out / "launches.jsonl"
    rows = read_jsonl(path)
    edit([r for r in rows if r["event"] == "start"][which])
    write_jsonl(path, rows)


def launch_argv_disagrees(out: Path) -> Expected:
    """The resume's start says resume: true, its argv without --resume: a start that is not a launch."""

    def edit(start: dict[str, Any]) -> None:
        assert start["resume"] is True and "--resume" in start["argv"], start
        start["argv"] = [a for a in start["argv"] if a != "--resume"]

    _edit_start(out, 1, edit)
    return {EC: "argv and resume disagree", KD: "argv and resume disagree"}


def launch_resume_flipped(out: Path) -> Expected:
    """The first start says resume: true, its argv without --resume."""
    _edit_start(out, 0, lambda start: start.update(resume=True))
    return {EC: "argv and resume disagree", KD: "argv and resume disagree"}


def launch_resume_a_string(out: Path) -> Expected:
    _edit_start(out, 0, lambda start: start.update(resume="false"))
    return {EC: "resume is not true or false", KD: "resume is not true or false"}


def launch_argv_a_string(out: Path) -> Expected:
    _edit_start(out, 0, lambda start: start.update(argv=" ".join(start["argv"])))
    return {EC: "argv is not a list of strings", KD: "argv is not a list of strings"}


def launch_without_argv(out: Path) -> Expected:
    """argv is held only where written: starts without it are launches."""
    path = out / "launches.jsonl"
    rows = read_jsonl(path)
    for r in rows:
        r.pop("argv", None)
    write_jsonl(path, rows)
    return {EC: True, KD: True}


# A recording's event (docs/contract.md, "Per target: the story"): written whole, Docker's older status and
# id, where written, its Action and Actor.ID.


def _edit_live(out: Path, edit: Callable[[dict[str, Any]], None], line: int | None = 0) -> None:
    path = kill_dir(out) / "container-events-live.jsonl"
    rows = read_jsonl(path)
    for i, r in enumerate(rows):
        if (line is None or i == line) and "gap" not in r:
            edit(r)
    write_jsonl(path, rows)


def event_status_not_its_action(out: Path) -> Expected:
    def edit(event: dict[str, Any]) -> None:
        assert event["status"] == event["Action"], event
        event["status"] = "kill" if event["Action"] != "kill" else "die"

    _edit_live(out, edit)
    return {SCN1: "container-events-live.jsonl line 1: an event whose status is not its Action"}


def event_id_not_its_actor(out: Path) -> Expected:
    def edit(event: dict[str, Any]) -> None:
        assert event["id"] == event["Actor"]["ID"], event
        event["id"] = "0" * 64

    _edit_live(out, edit)
    return {SCN1: "container-events-live.jsonl line 1: an event whose id is not its Actor.ID"}


def events_without_older_fields(out: Path) -> Expected:
    """Events with the newer fields alone: status and id are held only where written."""

    def edit(event: dict[str, Any]) -> None:
        event.pop("status", None)
        event.pop("id", None)

    _edit_live(out, edit, line=None)
    return {SCN1: True}


# machine.jsonl (docs/contract.md): in time order within its samples, and within its snapshots.


def machine_sample_out_of_order(out: Path) -> Expected:
    """A sample dated a second before the sample written before it."""
    path = out / "machine.jsonl"
    rows = read_jsonl(path)
    i = next(i for i, r in enumerate(rows) if r["label"] == "sample")
    late = dict(rows[i], at=shifted(rows[i]["at"], -1000))
    write_jsonl(path, [*rows[: i + 1], late, *rows[i + 1 :]])
    return {EC: f"machine.jsonl line {i + 2} is earlier than line {i + 1}, of its kind"}


# arms.jsonl (docs/contract.md, "Which check a file fails", and docs/evidence.md): a line whose at is not a
# time, whose point or run is not a text (or null), or whose fromSeq is not a non-negative integer (or null)
# is not an arming line; a fired or missed line names the point armed first (a line without a point: the
# seed's).

SEED = "after:runStarted/diagnosis"


def _edit_fired(out: Path, **fields: Any) -> None:
    arm, fired = _arms(out)
    fired.update(fields)
    write_jsonl(out / "arms.jsonl", [arm, fired])


def arms_from_seq_a_string(out: Path) -> Expected:
    _edit_fired(out, fromSeq="0")
    return {KT: "fromSeq is not a non-negative integer"}


def arms_from_seq_negative(out: Path) -> Expected:
    _edit_fired(out, fromSeq=-1)
    return {KT: "fromSeq is not a non-negative integer"}


def arms_run_a_number(out: Path) -> Expected:
    _edit_fired(out, run=1)
    return {KT: "run is not a text"}


def arms_point_a_number(out: Path) -> Expected:
    _edit_fired(out, point=7)
    return {KT: "point is not a text"}


def arms_at_not_a_time(out: Path) -> Expected:
    _edit_fired(out, at="2026-02-30T00:00:00.000Z")
    return {KT: "at is not a time"}


def arms_fired_not_the_first_armed(out: Path) -> Expected:
    """Another point armed before the one that fired: the fired line takes a point out of its turn."""
    arm, fired = _arms(out)
    other = dict(arm, point="after:halt")
    write_jsonl(out / "arms.jsonl", [other, arm, fired])
    return {KT: "armed first"}


def arms_fired_without_a_point(out: Path) -> Expected:
    """The fired line without its point: it names the seed's, the point armed."""
    arm, fired = _arms(out)
    assert arm.get("point") in (None, SEED) and fired.get("point") in (None, SEED), (arm, fired)
    fired.pop("point", None)
    write_jsonl(out / "arms.jsonl", [arm, fired])
    return {KT: True}


def arms_armed_without_a_point_fired_elsewhere(out: Path) -> Expected:
    """The arm line without its point (the seed's), the fired line naming another point: not the one armed."""
    arm, fired = _arms(out)
    arm.pop("point", None)
    fired["point"] = "after:charge"
    write_jsonl(out / "arms.jsonl", [arm, fired])
    return {KT: "which is not armed"}


# The window file (docs/contract.md, "Which check a file fails", container-events-window.json once the window
# has closed): missing once it should have closed, unreadable, or holding a field that is not its record, it
# fails killEvidence and each target's sameContainerNoRerun and resultSettledAndFinished (their window ends
# where it says); the fired kill's folder is then not complete for its stage (killTriggered).

WINDOW = "container-events-window.json"


def _window_fails_all(ke: str, target: str, kt: str = "container-events-window.json") -> Expected:
    return {KE: ke, SCN1: target, RSF1: target, KT: kt}


def _edit_window(out: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    path = kill_dir(out) / WINDOW
    w = json.loads(path.read_text())
    edit(w)
    path.write_text(json.dumps(w))


def window_missing(out: Path) -> Expected:
    (kill_dir(out) / WINDOW).unlink()
    return _window_fails_all(f"{WINDOW}: missing (the study finished", f"{WINDOW}: missing", f"{WINDOW} missing")


def window_a_folder(out: Path) -> Expected:
    (kill_dir(out) / WINDOW).unlink()
    (kill_dir(out) / WINDOW).mkdir()
    return _window_fails_all("not a regular file", "not a regular file", f"{WINDOW} unreadable")


def window_a_fifo(out: Path) -> Expected:
    (kill_dir(out) / WINDOW).unlink()
    os.mkfifo(kill_dir(out) / WINDOW)
    return _window_fails_all("not a regular file", "not a regular file", f"{WINDOW} unreadable")


def window_a_link(out: Path) -> Expected:
    """A link inside the folder, to a copy of the window file beside it."""
    path = kill_dir(out) / WINDOW
    path.rename(kill_dir(out) / "window-copy.json")
    path.symlink_to("window-copy.json")
    return _window_fails_all("a symbolic link", "a symbolic link", f"{WINDOW} unreadable")


def window_past_its_cap(out: Path) -> Expected:
    with open(kill_dir(out) / WINDOW, "ab") as f:
        f.truncate(8 * 1024 * 1024 + 1)  # sparse
    return _window_fails_all("larger than", "larger than", f"{WINDOW} unreadable")


def window_not_json(out: Path) -> Expected:
    path = kill_dir(out) / WINDOW
    path.write_text(path.read_text()[:-3])
    return _window_fails_all(WINDOW, WINDOW, f"{WINDOW} not readable")


def window_not_utf8(out: Path) -> Expected:
    path = kill_dir(out) / WINDOW
    path.write_bytes(path.read_bytes().replace(b'"since"', b'"s\xe9nce"', 1))  # Latin-1, not UTF-8
    return _window_fails_all("not UTF-8", "not UTF-8", f"{WINDOW} not readable")


def window_targets_null(out: Path) -> Expected:
    _edit_window(out, lambda w: w.update(targets=None))
    return _window_fails_all("targets is not an object", "targets is not an object", f"{WINDOW} not its record")


def window_entry_without_result_seq(out: Path) -> Expected:
    _edit_window(out, lambda w: w["targets"]["d1"].pop("resultSeq"))
    why = "the entry for 'd1' has no resultSeq"
    return _window_fails_all(why, why, f"{WINDOW} not its record")


def window_result_seq_a_float(out: Path) -> Expected:
    def edit(w: dict[str, Any]) -> None:
        w["targets"]["d1"]["resultSeq"] = float(w["targets"]["d1"]["resultSeq"])

    _edit_window(out, edit)
    why = "resultSeq that is not an integer"
    return _window_fails_all(why, why, f"{WINDOW} not its record")


def window_result_seq_a_boolean(out: Path) -> Expected:
    _edit_window(out, lambda w: w["targets"]["d1"].update(resultSeq=True))
    why = "resultSeq that is not an integer"
    return _window_fails_all(why, why, f"{WINDOW} not its record")


def window_until_before_since(out: Path) -> Expected:
    def edit(w: dict[str, Any]) -> None:
        w["untilEpoch"] = w["sinceEpoch"] - 1
        w["until"] = stamp(w["untilEpoch"], 9)

    _edit_window(out, edit)
    why = "untilEpoch is before sinceEpoch"
    return _window_fails_all(why, why, f"{WINDOW} not its record")


def window_without_the_target(out: Path) -> Expected:
    """The window file without d1's entry: killEvidence (the window's targets are not the kill's), and d1's
    own checks (where its window ends is not said); the file is of its type, the folder complete
    (README.md, open question 29)."""
    _edit_window(out, lambda w: w.update(targets={}))
    why = "has no entry for d1"
    return {KE: "the window file's targets are not the kill's", SCN1: why, RSF1: why, KT: True}


def window_missing_every_result_in(out: Path) -> Expected:
    """The study not finished (the final controller's end and outcome.json gone: it may still run), and every
    target has its result: the window file missing is a window still open (docs/contract.md, "The window":
    only once the study has finished must a window whose targets all have their results have its file), so
    the checks that need it are ?, and the folder is complete for its stage."""
    path = out / "launches.jsonl"
    rows = read_jsonl(path)
    assert [r["event"] for r in rows] == ["start", "end", "start", "end"], rows
    write_jsonl(path, rows[:3])
    (out / "outcome.json").unlink()
    (kill_dir(out) / WINDOW).unlink()
    return {EC: None, KE: True, SCN1: None, RSF1: None, KT: True}


# launches.jsonl's end lines (docs/contract.md, "Controllers"): an end with code and signal both null is the
# console's "exit status lost" end, a sound end that is not exit 0 (not clean, no SIGKILL); one with both an
# exit code and a signal is not a launch.

LOST = {"code": None, "signal": None, "note": "exit status lost: its keeper is gone"}


def _edit_end(out: Path, which: int, **fields: Any) -> None:
    path = out / "launches.jsonl"
    rows = read_jsonl(path)
    [r for r in rows if r["event"] == "end"][which].update(fields)
    write_jsonl(path, rows)


def final_end_status_lost(out: Path) -> Expected:
    """The final controller's end written by the console as lost (and no outcome.json, which is written only
    after an exit 0): a launch, not exit 0, so exitedCleanly is ? (`--resume` continues); the kill holds."""
    _edit_end(out, -1, **LOST)
    (out / "outcome.json").unlink()
    return {EC: None, KD: True}


def killed_end_status_lost(out: Path) -> Expected:
    """The killed controller's end written as lost: a launch, and not an end by SIGKILL."""
    _edit_end(out, 0, **LOST)
    return {EC: True, KD: "did not end by SIGKILL"}


def end_with_code_and_signal(out: Path) -> Expected:
    _edit_end(out, 0, code=137, signal="SIGKILL")
    why = "both an exit code and a signal"
    return {EC: why, KD: why}


# kill.json's pid is a controller launches.jsonl started before the kill (killEvidence, whatever the trigger;
# killDelivered for a kill the console made); a prefix research.json cannot check fails killEvidence.


def kill_pid_the_resume_s(out: Path) -> Expected:
    """kill.json's pid the resumed controller's, started after the kill."""
    path = kill_dir(out) / "kill.json"
    k = json.loads(path.read_text())
    starts = [r for r in read_jsonl(out / "launches.jsonl") if r["event"] == "start"]
    assert k["pid"] == starts[0]["pid"] != starts[1]["pid"], (k["pid"], starts)
    k["pid"] = starts[1]["pid"]
    path.write_text(json.dumps(k))
    return {KE: "is no controller started before the kill", KD: "no controller of launches.jsonl"}


def research_missing(out: Path) -> Expected:
    assert "prefix" in json.loads((kill_dir(out) / "kill.json").read_text())
    (out / "research.json").unlink()
    return {KE: "prefix is not the study's stem"}


def research_without_study(out: Path) -> Expected:
    path = out / "research.json"
    data = json.loads(path.read_text())
    del data["study"]
    path.write_text(json.dumps(data))
    return {KE: "prefix is not the study's stem"}


def research_prefix_a_number(out: Path) -> Expected:
    path = out / "research.json"
    path.write_text(json.dumps(dict(json.loads(path.read_text()), containerPrefix=7)))
    return {KE: "prefix is not the study's stem"}


def launches_a_folder(out: Path) -> Expected:
    """launches.jsonl that cannot be read at all: exitedCleanly and killDelivered, and it counts as finished:
    nothing still to come is ?, a lost result is ✗."""
    (out / "launches.jsonl").unlink()
    (out / "launches.jsonl").mkdir()
    result_lost(out)
    return {
        EC: "launches.jsonl cannot be read",
        KD: "launches.jsonl cannot be read",
        RSF1: "the study finished without d1's result",
        ("study", "resultsAccounted"): "finished",
        ("study", "haltedAtExport"): True,
    }


FILE_RULES: dict[str, Callable[[Path], Expected]] = {
    "timeline.jsonl: a line 2 ms earlier than the one before it": timeline_a_line_2ms_earlier,
    "timeline.jsonl: a line 1 ms earlier than the one before it": timeline_a_line_1ms_earlier,
    "timeline.jsonl: a line moved": timeline_line_moved,
    "timeline.jsonl: missing": timeline_missing,
    "timeline.jsonl: missing, the ledger empty": timeline_missing_and_ledger_empty,
    "timeline.jsonl: a line not its record": timeline_line_not_a_record,
    "timeline.jsonl: the last line torn": timeline_torn_last_line,
    "machine.jsonl: an at that is a number": machine_at_a_number,
    "machine.jsonl: a label the console does not write": machine_label_unknown,
    "machine.jsonl: a snapshot without containers": machine_snapshot_without_containers,
    "machine.jsonl: out of time order": machine_out_of_order,
    "machine.jsonl: a snapshot written after a sample dated later": machine_snapshot_after_a_later_sample,
    "machine.jsonl: missing": machine_missing,
    "machine.jsonl: grown with NUL bytes": machine_grown_with_zeros,
    "launches.jsonl: out of time order": launches_out_of_order,
    "a recording: an event of another type": event_of_another_type,
    "a recording: an event without a Type": event_without_type,
    "a recording: an event without an Action": event_without_action,
    "a recording: the last line torn": recording_torn_last_line,
    "a recording: the read-back missing": readback_missing,
    "a snapshot: State.Running not a boolean": running_not_a_boolean,
    "a snapshot: State.Running says otherwise than State.Status": running_says_otherwise_than_status,
    "a snapshot: the target paused, State.Running true": paused_running_true,
    "a snapshot: the target paused, State.Running false": paused_running_false,
    "a snapshot: State.ExitCode a text": exit_code_a_text,
    "a snapshot: State.FinishedAt a number": finished_at_a_number,
    "a snapshot: State.Status, StartedAt and FinishedAt not written": status_and_times_not_written,
    "kill.json: frozenMs null": frozen_ms_null,
    "the window: until 5 µs off untilEpoch": window_until_5us_off,
    "the window: until 1 µs off untilEpoch": window_until_1us_off,
    "the window: resultSeenEpoch 2 ms off": result_seen_2ms_off,
    "the window: resultSeenEpoch half a ms off": result_seen_within_a_ms,
    "arms.jsonl: one kill fired twice": fired_twice,
    "arms.jsonl: fired 3 ms before its record was seen": fired_3ms_before_seen,
    "arms.jsonl: fired 2 ms before its record was seen": fired_2ms_before_seen,
    "arms.jsonl: out of time order": arms_out_of_order,
    "arms.jsonl: a line 1 ms earlier than the one before it": arms_within_keeper_slack,
    "a record dated 0.9 s after the final end": dated_within_record_lag,
    "a record dated 1.1 s after the final end": dated_past_record_lag,
    "a record dated 1.1 s before the first start": dated_before_the_first_start,
    "a record dated 0.9 s before the first start": dated_within_record_lag_before_a_start,
    "a record seen 1.1 s after the final end": seen_past_record_lag,
    "a record seen a minute after the final end": seen_a_minute_after_the_end,
    "a result seen between the kill and the resume": result_seen_before_the_resume,
    "a result dated before any start, seen before the resume": result_dated_and_seen_before_any_start,
    "launches.jsonl: argv without --resume for a resume": launch_argv_disagrees,
    "launches.jsonl: the first start's resume flipped": launch_resume_flipped,
    "launches.jsonl: resume a string": launch_resume_a_string,
    "launches.jsonl: argv a string": launch_argv_a_string,
    "launches.jsonl: no argv written": launch_without_argv,
    "a recording: an event whose status is not its Action": event_status_not_its_action,
    "a recording: an event whose id is not its Actor.ID": event_id_not_its_actor,
    "a recording: events without status and id": events_without_older_fields,
    "machine.jsonl: a sample out of time order": machine_sample_out_of_order,
    "arms.jsonl: fromSeq a string": arms_from_seq_a_string,
    "arms.jsonl: fromSeq negative": arms_from_seq_negative,
    "arms.jsonl: run a number": arms_run_a_number,
    "arms.jsonl: point a number": arms_point_a_number,
    "arms.jsonl: at not a time": arms_at_not_a_time,
    "arms.jsonl: fired for the point armed second": arms_fired_not_the_first_armed,
    "arms.jsonl: fired without a point": arms_fired_without_a_point,
    "arms.jsonl: armed without a point, fired for another": arms_armed_without_a_point_fired_elsewhere,
    "the window: missing once the study finished": window_missing,
    "the window: a folder": window_a_folder,
    "the window: a FIFO": window_a_fifo,
    "the window: a link inside the folder": window_a_link,
    "the window: past its cap": window_past_its_cap,
    "the window: not JSON": window_not_json,
    "the window: not UTF-8": window_not_utf8,
    "the window: targets null": window_targets_null,
    "the window: an entry without resultSeq": window_entry_without_result_seq,
    "the window: resultSeq a float": window_result_seq_a_float,
    "the window: resultSeq a boolean": window_result_seq_a_boolean,
    "the window: untilEpoch before sinceEpoch": window_until_before_since,
    "the window: no entry for the target": window_without_the_target,
    "launches.jsonl: the final end's exit status lost": final_end_status_lost,
    "launches.jsonl: the killed controller's exit status lost": killed_end_status_lost,
    "launches.jsonl: an end with a code and a signal": end_with_code_and_signal,
    "launches.jsonl: a folder": launches_a_folder,
    "kill.json: pid the resumed controller's": kill_pid_the_resume_s,
    "research.json: missing, kill.json writes a prefix": research_missing,
    "research.json: no study id": research_without_study,
    "research.json: containerPrefix a number": research_prefix_a_number,
}
