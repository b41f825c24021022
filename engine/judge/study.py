"""The per-study checks: the ledger, the books, the end, and ``killTriggered``."""

from __future__ import annotations

from typing import Any

from studymon.engine.accounts import FULL_STOP, Accounts
from studymon.engine.contract import ContractWatch, is_int, plural, valid_id
from studymon.engine.judge.facts import Arming, KillEvidence, LedgerFacts, StudyFacts
from studymon.engine.judge.text import SIGNAL, free_text, run_text, time_text
from studymon.engine.judge.verdict import SHOWN, Check, Verdict
from studymon.engine.ledger import LedgerIssue, Record
from studymon.engine.safefile import type_name

# --- per study -----------------------------------------------------------------------


def ledger_well_formed(ledger: LedgerFacts) -> Check:
    v = Verdict("ledgerWellFormed", "study")
    if ledger.problem is not None:
        v.fail(ledger.problem)
    elif ledger.records == 0 and ledger.issue_count == 0:
        v.fail("the ledger is empty")
    v.listed(
        [f"line {i.line}: {i.kind} ({i.detail})" for i in ledger.issues[:SHOWN]], ledger.issue_count, "issue", "issues"
    )
    if ledger.watch_problem is not None:
        v.fail(ledger.watch_problem)
    v.listed(ledger.faults, ledger.fault_count, "change seen while watched", "changes seen while watched")
    return v.check(f"{ledger.records} lines, seq 1..{ledger.last_seq}")


def fault_text(line: Any) -> str:
    """One ledger-watch.jsonl line as a reason."""
    if not isinstance(line, dict):
        return f"ledger-watch.jsonl holds {type_name(line)} where a fault belongs"
    event = line.get("event")
    what = event if event in ("truncated", "replaced") else "changed"
    return f"the ledger was {what} while watched at {time_text(line.get('at'))}"


def contract_kept(watch: ContractWatch, study: StudyFacts, ledger: LedgerFacts) -> Check:
    v = Verdict("contractKept", "study")
    if ledger.problem is not None:
        v.fail(f"the ledger cannot be judged: {ledger.problem}")
    if watch.first is not None:
        more = watch.broken_lines - 1
        v.fail(
            watch.first.text
            + (f" ({more} more {'line breaks' if more == 1 else 'lines break'} a rule)" if more else "")
        )
    if study.problem is not None:
        v.fail(f"rule 4 cannot be checked: {study.problem}")
    return v.check(f"rules 1-6 hold over {plural(watch.lines, 'record')}")


def halted_at_export(acc: Accounts, ledger: LedgerFacts | None = None) -> Check:
    if ledger is not None and ledger.problem is not None:
        return Check("haltedAtExport", False, f"the ledger cannot be judged: {ledger.problem}")
    halt = acc.last_halt
    if halt is None:
        return Check("haltedAtExport", False, "no halt in the ledger")
    if halt.get("reason") != FULL_STOP:
        return Check("haltedAtExport", False, f"the last halt (seq {halt.seq}) is not {FULL_STOP!r}")
    export = acc.last_export
    if export is not None and export.line > halt.line:
        return Check("haltedAtExport", False, f"an export (seq {export.seq}) follows the halt (seq {halt.seq})")
    return Check("haltedAtExport", True, f"halt at seq {halt.seq}: {FULL_STOP}, no export after it")


def charged_equals_starts(acc: Accounts, ledger: LedgerFacts | None = None) -> Check:
    v = Verdict("chargedEqualsStarts", "study")
    if ledger is not None and ledger.problem is not None:
        v.fail(f"the ledger cannot be judged: {ledger.problem}")
    uneven = [a for a in acc.runs.values() if len(a.charges) != len(a.starts)]
    if uneven:
        runs = ", ".join(
            f"run {a.run if valid_id(a.run) else '?'}: {plural(len(a.charges), 'charge')}, "
            f"{plural(len(a.starts), 'start')}"
            for a in uneven[:SHOWN]
        )
        more = len(uneven) - SHOWN
        v.fail(runs + (f" and {plural(more, 'more run')}" if more > 0 else ""))
    if acc.bad_charge is not None:
        first = acc.bad_charge.seq
        v.fail(f"{plural(acc.bad_charges, 'charge')} without a numeric amount and balance (first at seq {first})")
    if acc.budget is None:
        v.fail("no budget: studyOpen is missing or has no numeric budget")
    elif acc.balance is not None:
        spent = acc.budget - acc.balance
        if abs(acc.charged - spent) > 1e-9 * max(1.0, abs(acc.budget)):
            v.fail(f"charges sum to {acc.charged:g} but budget {acc.budget:g} - balance {acc.balance:g} = {spent:g}")
    starts = sum(len(a.starts) for a in acc.runs.values())
    return v.check(lambda: f"{plural(starts, 'start')}, {acc.charged:g} charged = {acc.budget:g} - {acc.balance:g}")


def exited_cleanly(code: Any, signal: Any = None, ended: bool = True, problem: str | None = None) -> Check:
    if problem is not None:
        return Check("exitedCleanly", False, problem)
    if not ended:
        return Check("exitedCleanly", None, "the controller has not ended")
    if is_int(code) and code == 0:
        return Check("exitedCleanly", True, "exit 0")
    if isinstance(signal, str) and SIGNAL.fullmatch(signal):
        return Check("exitedCleanly", False, f"killed by {signal}")
    if is_int(code):
        return Check("exitedCleanly", False, f"exit {code}")
    return Check("exitedCleanly", False, "the exit status was not recorded")


def study_checks(
    records: list[Record],
    issues: list[LedgerIssue],
    acc: Accounts,
    code: Any,
    signal: Any,
    ended: bool,
    contract: ContractWatch | None = None,
    study: StudyFacts | None = None,
    ledger: LedgerFacts | None = None,
) -> list[Check]:
    """The per-study checks, in table order (without ``killTriggered``).

    Given only records and issues (a ledger read whole), the contract is
    checked over them without rule 4's names.
    """
    if ledger is None:
        ledger = LedgerFacts(len(records), records[-1].seq if records else 0, issues[: SHOWN + 1], len(issues))
    if study is None:
        study = StudyFacts(None, None)
    if contract is None:
        contract = ContractWatch(study.container_prefix, study.id)
        for r in records:
            contract.add(r)
    return [
        ledger_well_formed(ledger),
        contract_kept(contract, study, ledger),
        halted_at_export(acc, ledger),
        charged_equals_starts(acc, ledger),
        exited_cleanly(code, signal, ended),
    ]


def kill_triggered(
    arming: Arming | None, kills: list[KillEvidence], acc: Accounts, ledger: LedgerFacts, finished: bool
) -> Check | None:
    """``killTriggered`` for an armed study (or one with an auto kill); None when nothing was armed."""
    autos = [ev for ev in kills if ev.kill is not None and ev.kill.trigger == "auto"]
    if not autos and (arming is None or arming.is_quiet()):
        return None  # never armed, or armed then disarmed with nothing to judge
    v = Verdict("killTriggered", "study")
    if arming is None:
        v.fail("arms.jsonl: missing, but a kill was triggered automatically")
        arming = Arming()
    if arming.problem is not None:
        v.fail(arming.problem)
    if arming.bad_lines:
        what = "line is not an arming event" if arming.bad_lines == 1 else "lines are not arming events"
        v.fail(f"arms.jsonl: {arming.bad_lines} {what}")
    if ledger.problem is not None:
        v.fail(f"the ledger cannot be judged: {ledger.problem}")
    for run, detail in arming.missed:
        v.fail(f"missed{' ' + run if valid_id(run) else ''}: {free_text(detail)}")
    first = acc.first_diagnosis
    first_text = run_text(first)
    first_acct = acc.runs.get(first) if first else None
    start = first_acct.starts[0].seq if first_acct and first_acct.starts else None
    by_number = {ev.number: ev for ev in kills}
    fired_numbers: set[int] = set()
    for number, run in arming.fired:
        if not is_int(number):
            v.fail(f"arms.jsonl has a fired line whose kill is {type_name(number)}, not a number")
            continue
        fired_numbers.add(number)
        ev = by_number.get(number)
        if ev is None:
            v.fail(f"arms.jsonl says kill {number} fired, but kills/{number}/ is missing")
            continue
        incomplete = ev.incomplete()
        if incomplete:
            v.fail(f"kills/{number}/ is incomplete: {incomplete[0]}")
        k = ev.kill
        if k is None:
            continue
        if k.trigger != "auto":
            v.fail(f"kill {number} was not triggered automatically")
        if first is None or start is None:
            v.fail("no diagnosis run started in the ledger")
            continue
        if k.trigger_seq != start:
            v.fail(
                f"kill {number} fired at seq {k.trigger_seq if k.trigger_seq is not None else '?'}, "
                f"not at {first_text}'s runStarted (seq {start})"
            )
        if first not in {t.run for t in k.targets}:
            v.fail(f"the first diagnosis run {first_text} is not among kill {number}'s targets")
        if run is not None and run != first:
            shown = run if valid_id(run) else "another run"
            v.fail(f"arms.jsonl says kill {number} fired at {shown}, not at {first_text}")
    for ev in autos:
        if ev.number not in fired_numbers:
            v.fail(f"kill {ev.number} was triggered automatically, but arms.jsonl has no fired line for it")
    if not arming.fired and not arming.missed and not autos and arming.armed_at_end:
        if start is not None:
            v.fail(f"armed, but the kill did not fire at {first_text}'s runStarted (seq {start})")
        elif finished:
            v.fail("armed, but no diagnosis run started while the study ran")
        else:
            v.unknown("armed; no diagnosis run has started yet")
    fired = ", ".join(f"kill {n}" for n, _ in arming.fired)
    return v.check(f"{fired} fired at {first_text}'s runStarted (seq {start}); its folder is complete")
