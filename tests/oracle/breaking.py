"""Ways to break a copy of a sound evidence folder by hand, one fact each, for the oracle's tests.

Each breaker takes a copied folder of a study killed once at its first
diagnosis run's ``runStarted`` (``after:runStarted/diagnosis``, target ``d1``)
and changes it the way a wrong study, or a wrong console, would have left
it; it returns the (scope, check) that must then be ✗.  The ledger and the
timeline are edited together where a record is added or removed, so that
only the fact meant is wrong.
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Breaker = Callable[[Path], tuple[str, str]]


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
    """A record after the kill seen a day before the first controller started: a contradiction of the
    controllers' story (exitedCleanly), whatever kill it follows."""
    before = json.loads((kill_dir(out) / "kill.json").read_text())["beforeKillSeq"]
    rows = read_jsonl(out / "timeline.jsonl")
    for r in rows:
        if r["seq"] == before + 1:
            r["seenAt"] = stamp(to_epoch(r["seenAt"]) - 86400)
    write_jsonl(out / "timeline.jsonl", rows)
    return ("study", "exitedCleanly")


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
