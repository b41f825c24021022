"""The verdicts: per-study checks from the ledger, per-kill checks from the kill evidence.

Pure functions over data already read; nothing here touches a file or a
process, so the same code judges a live session and an evidence folder.
A verdict is ``True`` (holds), ``False`` (fails) or ``None`` (unknown: the
evidence needed is missing).  As in Jepsen, false beats unknown beats pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from engine.accounts import FULL_STOP, Accounts, round_key
from engine.clock import parse_rfc3339
from engine.ledger import LedgerIssue, Record

STUDY_CHECKS = ("ledgerWellFormed", "haltedAtExport", "chargedEqualsStarts", "exitedCleanly")
KILL_CHECKS = ("sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished")


@dataclass(frozen=True)
class Check:
    """One verdict: the check's name, what it is about (``scope``), ok and why."""

    name: str
    ok: bool | None
    detail: str
    scope: str = "study"

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "scope": self.scope, "ok": self.ok, "detail": self.detail}


def overall(checks: Iterable[Check]) -> bool | None:
    """False if any check fails, else None if any is unknown, else True."""
    result: bool | None = True
    for c in checks:
        if c.ok is False:
            return False
        if c.ok is None:
            result = None
    return result


# --- per study -----------------------------------------------------------


def ledger_well_formed(records: list[Record], issues: list[LedgerIssue]) -> Check:
    if not records and not issues:
        return Check("ledgerWellFormed", False, "the ledger is empty or missing")
    if issues:
        shown = "; ".join(f"line {i.line}: {i.kind} ({i.detail})" for i in issues[:3])
        more = f" and {len(issues) - 3} more" if len(issues) > 3 else ""
        return Check("ledgerWellFormed", False, shown + more)
    return Check("ledgerWellFormed", True, f"{len(records)} lines, seq 1..{records[-1].seq}")


def halted_at_export(acc: Accounts) -> Check:
    halt = acc.last_halt
    if halt is None:
        return Check("haltedAtExport", False, "no halt in the ledger")
    if halt.get("reason") != FULL_STOP:
        return Check("haltedAtExport", False, f"last halt (seq {halt.seq}) says {halt.get('reason')!r}, not {FULL_STOP!r}")
    later = [e.seq for e in acc.exports if e.seq > halt.seq]
    if later:
        return Check("haltedAtExport", False, f"an export (seq {later[0]}) follows the halt (seq {halt.seq})")
    return Check("haltedAtExport", True, f"halt at seq {halt.seq}: {FULL_STOP}, no export after it")


def charged_equals_starts(acc: Accounts) -> Check:
    uneven = [
        f"{a.run}: {len(a.charges)} charge, {len(a.starts)} start"
        for a in acc.runs.values()
        if len(a.charges) != len(a.starts)
    ]
    if uneven:
        return Check("chargedEqualsStarts", False, "; ".join(uneven[:4]))
    if acc.budget is None:
        return Check("chargedEqualsStarts", False, "no budget: studyOpen is missing or has no numeric budget")
    if acc.balance is None:
        return Check("chargedEqualsStarts", False, "no balance")
    spent = acc.budget - acc.balance
    if abs(acc.charged - spent) > 1e-9 * max(1.0, abs(acc.budget)):
        return Check(
            "chargedEqualsStarts",
            False,
            f"charges sum to {acc.charged:g} but budget {acc.budget:g} - balance {acc.balance:g} = {spent:g}",
        )
    starts = sum(len(a.starts) for a in acc.runs.values())
    return Check("chargedEqualsStarts", True, f"{starts} starts, {acc.charged:g} charged = {acc.budget:g} - {acc.balance:g}")


def exited_cleanly(code: int | None, signal: str | None, ended: bool = True) -> Check:
    if not ended:
        return Check("exitedCleanly", None, "the controller has not ended")
    if code == 0:
        return Check("exitedCleanly", True, "exit 0")
    if signal:
        return Check("exitedCleanly", False, f"killed by {signal}")
    return Check("exitedCleanly", False, f"exit {code}")


def study_checks(
    records: list[Record], issues: list[LedgerIssue], acc: Accounts, code: int | None, signal: str | None, ended: bool
) -> list[Check]:
    return [
        ledger_well_formed(records, issues),
        halted_at_export(acc),
        charged_equals_starts(acc),
        exited_cleanly(code, signal, ended),
    ]


# --- per kill ------------------------------------------------------------


def _event_name(event: dict[str, Any]) -> str | None:
    actor = event.get("Actor") or {}
    name = (actor.get("Attributes") or {}).get("name")
    if name is None:
        name = (event.get("Actor") or {}).get("Attributes", {}).get("name")
    return name.lstrip("/") if isinstance(name, str) else None


def _event_action(event: dict[str, Any]) -> str:
    action = event.get("Action") or event.get("status") or ""
    # Docker writes e.g. "exec_start: sh" for exec actions; the verb is before the colon.
    return action.split(":", 1)[0]


def _event_ns(event: dict[str, Any]) -> int:
    if "timeNano" in event:
        return int(event["timeNano"])
    return int(float(event.get("time", 0)) * 1e9)


def lifecycle_checks(
    container: str,
    snapshots: dict[str, dict[str, Any] | None],
    events: list[dict[str, Any]],
    until_ns: int | None,
) -> dict[str, bool | None]:
    """The container facts behind ``sameContainerNoRerun``, one by one.

    ``snapshots`` maps ``before``, ``after-kill`` and ``before-resume`` to the
    target container's inspect (or None when it was not there).  ``events``
    are the runtime's lifecycle events in the window; ``until_ns`` is the time
    the target's result was seen (None when it never came: the whole window).
    """
    snaps = [snapshots.get(k) for k in ("before", "after-kill", "before-resume")]
    present = all(s is not None for s in snaps)
    ids = {s.get("Id") for s in snaps if s}
    started = {(s.get("State") or {}).get("StartedAt") for s in snaps if s}
    mine = [
        e
        for e in events
        if _event_name(e) == container and (until_ns is None or _event_ns(e) <= until_ns)
    ]
    actions = [_event_action(e) for e in mine]
    before = snapshots.get("before") or {}
    after = snapshots.get("after-kill") or {}
    return {
        "snapshotsPresent": present,
        "sameId": present and len(ids) == 1,
        "sameStartedAt": present and len(started) == 1,
        "runningBeforeKill": bool((before.get("State") or {}).get("Running")),
        "runningAfterKill": bool((after.get("State") or {}).get("Running")),
        "noCreateInWindow": "create" not in actions,
        "noStartInWindow": "start" not in actions,
        "oneDieInWindow": actions.count("die") == 1,
    }


def kill_target_checks(
    target: dict[str, Any],
    kill_seq: int,
    lifecycle: dict[str, bool | None],
    acc: Accounts,
    scope: str,
) -> list[Check]:
    """``sameContainerNoRerun``, ``chargedOnce``, ``resultSettledAndFinished`` for one target."""
    run = target.get("run")
    acct = acc.runs.get(run) if isinstance(run, str) else None
    checks: list[Check] = []

    # sameContainerNoRerun
    failed = [k for k, v in lifecycle.items() if not v]
    cell_plans = [
        r
        for a in acc.runs.values()
        for r in a.plans
        if r.get("object") == target.get("cell") and r.get("round") == target.get("round")
        and r.get("purpose") == (acct.purpose if acct else None)
    ]
    starts = len(acct.starts) if acct else 0
    if len(cell_plans) != 1:
        failed.append(f"{len(cell_plans)} runPlanned for cell {target.get('cell')!r} in round {target.get('round')}")
    if starts != 1:
        failed.append(f"{starts} runStarted")
    checks.append(
        Check(
            "sameContainerNoRerun",
            not failed,
            "; ".join(failed) if failed else "same Id and StartedAt through the kill; no create/start, one die",
            scope,
        )
    )

    # chargedOnce
    charges = len(acct.charges) if acct else 0
    ok = charges == 1 and starts == 1
    checks.append(Check("chargedOnce", ok, f"{charges} charge, {starts} runStarted", scope))

    # resultSettledAndFinished
    why: list[str] = []
    results = acct.results if acct else []
    if len(results) != 1:
        why.append(f"{len(results)} runResult")
    elif results[0].seq <= kill_seq:
        why.append(f"result at seq {results[0].seq} is not after the kill (seq {kill_seq})")
    rnd = round_key(target.get("round"))
    settlement = acc.settlements.get(rnd)
    if settlement is None:
        why.append(f"no diagnosisSettlement for round {rnd}")
    else:
        if settlement.get("run") != run:
            why.append(f"the settlement of round {rnd} names {settlement.get('run')!r}")
        decision = acc.decisions.get(("selectDiagnosis", rnd))
        chosen = list(((decision.get("output") or {}) if decision else {}).get("chosen") or [])
        if decision is None:
            why.append(f"no selectDiagnosis decision for round {rnd}")
        dropped = {d.get("experiment") for d in settlement.get("dropped") or [] if isinstance(d, dict)}
        judged = {
            j.get("id") for j in ((settlement.get("judged") or {}).get("experiments") or []) if isinstance(j, dict)
        }
        missing = [e for e in chosen if e not in dropped and e not in judged]
        if missing:
            why.append(f"settlement leaves out {missing[:3]}")
        if acc.proposal_opened.get(rnd, 0) <= settlement.seq:
            why.append(f"no stageOpen proposal {rnd} after the settlement")
    if not acc.halted_at_export():
        why.append("the study did not end halted at export")
    checks.append(
        Check(
            "resultSettledAndFinished",
            not why,
            "; ".join(why) if why else f"result at seq {results[0].seq}, settled, proposal {rnd} followed, halted",
            scope,
        )
    )
    return checks


def time_ns(text: str | None) -> int | None:
    if not text:
        return None
    return int(parse_rfc3339(text) * 1e9)
