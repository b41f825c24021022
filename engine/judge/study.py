"""The per-study checks: the ledger, the books, the end, and ``killTriggered``."""

from __future__ import annotations

import math
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from studymon.engine.contract.accounts import Accounts, RunAccount, round_key
from studymon.engine.contract.automata import Proof, Row, Where, proof
from studymon.engine.contract.ends import ENDS, FULL_STOP, HALT, STOP, broken, result_end
from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from studymon.engine.contract.ledger import Record
from studymon.engine.contract.rules import RuleTally, is_int, plural, round_text, valid_id
from studymon.engine.contract.spec import EXPECT_ENDS
from studymon.engine.contract.targets import IN_FLIGHT
from studymon.engine.evidence.records import ContainerEvent, parse_event
from studymon.engine.io.safefile import type_name
from studymon.engine.judge.facts import Arming, Fired, KillEvidence, Launches, LedgerFacts, StudyFacts, ledger_line
from studymon.engine.judge.machines import FIRE, MISS, POINT
from studymon.engine.judge.text import free_text, name_text, run_text, time_text
from studymon.engine.judge.verdict import RESUME_HINT, SHOWN, Check, Verdict

# research.json could not be read: the end the study expects (§6.7) is not known.
UNKNOWN_END = "unknown"
# What the contract makes of the ledger's lines, for the proofs.
LEDGER_LINES = "the ledger is one record a line, its seqs 1, 2, 3 and on in order, never changed once written (§6.9)"

# --- per study -----------------------------------------------------------------------


def ledger_well_formed(ledger: LedgerFacts) -> Check:
    v = Verdict("ledgerWellFormed", "study")
    if ledger.problem is not None:
        ledger.say(v, "")
    elif ledger.records == 0 and ledger.issue_count == 0:
        (v.unknown if ledger.pending else v.fail)(
            "the ledger is empty",
            proof(ledger_line(None), "no record", "a study's ledger holds its records, from its studyOpen on"),
        )
    v.listed(
        [f"line {i.line}: {i.kind} ({i.detail})" for i in ledger.issues[:SHOWN]], ledger.issue_count, "issue", "issues"
    )
    v.proven(proof(Where(EvidenceFolder.LEDGER, i.line), f"{i.kind} ({i.detail})", LEDGER_LINES) for i in ledger.issues)
    if ledger.watch_problem is not None:
        v.fail(
            ledger.watch_problem,
            proof(
                Where(EvidenceFolder.LEDGER_WATCH, 0),
                ledger.watch_problem.removeprefix(f"{EvidenceFolder.LEDGER_WATCH}: "),
                "the changes of the ledger seen while watched are read whole (§6.9)",
            ),
        )
    v.listed(ledger.faults, ledger.fault_count, "change seen while watched", "changes seen while watched")
    # Every line of ledger-watch.jsonl is a change seen: the n-th kept is its line n.
    v.proven(
        proof(Where(EvidenceFolder.LEDGER_WATCH, n), fault, LEDGER_LINES)
        for n, fault in enumerate(ledger.faults, start=1)
    )
    v.listed(ledger.seen_differ, ledger.seen_count, "record", "records")
    v.proven(ledger.seen_proofs)
    return v.check(f"{ledger.records} lines, seq 1..{ledger.last_seq}")


def fault_text(line: Any) -> str:
    """One ledger-watch.jsonl line as a reason."""
    if not isinstance(line, dict):
        return f"ledger-watch.jsonl holds {type_name(line)} where a fault belongs"
    event = line.get("event")
    what = event if event in ("truncated", "replaced") else "changed"
    return f"the ledger was {what} while watched at {time_text(line.get('at'))}"


def contract_kept(rules: RuleTally, study: StudyFacts, ledger: LedgerFacts) -> Check:
    v = Verdict("contractKept", "study")
    if ledger.problem is not None:
        ledger.say(v)
    if rules.first is not None:
        more = rules.broken_lines - 1
        first = rules.first
        v.fail(
            first.text + (f" ({more} more {'line breaks' if more == 1 else 'lines break'} a rule)" if more else ""),
            proof(Where(EvidenceFolder.LEDGER, first.line), f"seq {first.seq}", f"rule {first.rule}: {first.detail}"),
        )
    if not rules.line_one and not ledger.pending and ledger.problem is None:
        # No record on line 1 (no line at all, or one that is not a record): no studyOpen opened the study.
        v.fail(
            "rule 7: the ledger has no studyOpen on line 1",
            proof(Where(EvidenceFolder.LEDGER, 1), "no record", "rule 7: studyOpen is line 1 of every ledger"),
        )
    # Rule 7 holds line 1's studyOpen to research.json's study, rule 4 each runStarted's container to its names: a
    # research.json that cannot give them fails the rule that has something to hold, and only that one.
    if study.problem is not None and study.stem is None and rules.starts:
        v.fail(f"rule 4 cannot be checked: {study.problem}", _research(study.problem, "rule 4 names the containers"))
    elif study.problem is not None and study.id is None and rules.line_one:
        v.fail(f"rule 7 cannot be checked: {study.problem}", _research(study.problem, "rule 7 names the study"))
    return v.check(f"rules 1-9, 11 and 15 hold over {plural(rules.lines, 'record')}")


def _research(problem: str, why: str) -> Proof:
    """research.json's problem, for a check that needs it."""
    return proof(
        Where(EvidenceFolder.RESEARCH, 0),
        problem.removeprefix(f"{EvidenceFolder.RESEARCH}: "),
        f"{why} from research.json, read as the console writes it",
    )


def halted_at_export(
    acc: Accounts, ledger: LedgerFacts | None = None, expect: str = "halt", finished: bool = True
) -> Check:
    """The study ended as its template expects (§6.7), with nothing after that end (rules 12 and 13).

    While the study can still be resumed (not ``finished``), an end not
    reached yet is unknown, not a failure.
    """
    if ledger is not None and ledger.problem is not None:
        return Check(
            "haltedAtExport",
            None if ledger.pending else False,
            f"the ledger cannot be judged: {ledger.problem}",
            proofs=() if ledger.pending else (ledger.proof(),),
        )
    if expect == UNKNOWN_END:
        return Check(
            "haltedAtExport",
            False,
            "research.json cannot be read: the end the study expects is unknown",
            proofs=(_research("cannot be read", "the end a study expects (§6.7) is read"),),
        )
    if expect not in EXPECT_ENDS:
        return Check(
            "haltedAtExport",
            False,
            "research.json's expectEnd is not halt, export or any",
            proofs=(
                proof(
                    Where(EvidenceFolder.RESEARCH, 0), "expectEnd is not halt, export or any", "§6.7 names three ends"
                ),
            ),
        )
    v = Verdict("haltedAtExport", "study")
    expects = f"a study whose template expects {expect!r} ends so (§6.7), with nothing after that end (rule 12)"
    end, what = _end_record(acc, expect)
    # The rows the timeline's end took in the study's end machines (``contract/ends.py``): the check is their view.
    for row in broken(acc.end.end(expect, finished)):
        words = {
            "halt": getattr(acc.last_halt, "seq", None),
            "export": getattr(acc.last_export, "seq", None),
            "work": getattr(acc.last_work, "seq", None),
            "kind": getattr(acc.last_work, "kind", None),
            "what": what,
            "end": getattr(end, "seq", None),
        }
        (v.unknown if row.unknown else v.fail)(row.says.format(**words), _end_proof(row, acc, end, what, expects))
    _rule_13(v, acc)
    if end is None:
        return v.check("")
    said = FULL_STOP if what == "halt" else "the export"
    return v.check(f"{what} at seq {end.seq}: {said}; nothing after it")


def _end_record(acc: Accounts, expect: str) -> tuple[Record | None, str]:
    """The record the study ends at (its last halt, or its last export where an export may end it: under "any" the
    later of the two), and which of the two it is."""
    if expect == "halt" or (expect == "any" and acc.end.state(ENDS["any"]) in (STOP, HALT)):
        return acc.last_halt, "halt"
    return acc.last_export, "export"


def _end_proof(row: Row, acc: Accounts, end: Record | None, what: str, expects: str) -> Proof:
    """The records a broken end names, each with its line: the proof of the row the end took."""
    named = {name for _, name, _, _ in string.Formatter().parse(row.says) if name}
    lets: list[tuple[Where, str]] = []
    if "work" in named and acc.last_work is not None:
        lets.append((ledger_line(acc.last_work), f"{acc.last_work.kind} (seq {acc.last_work.seq})"))
    if "export" in named and acc.last_export is not None:
        lets.append((ledger_line(acc.last_export), f"an export (seq {acc.last_export.seq})"))
    if "halt" in named and acc.last_halt is not None:
        halt = acc.last_halt
        full = halt.get("reason") == FULL_STOP
        lets.append((ledger_line(halt), f"the last halt (seq {halt.seq})" + ("" if full else f", not {FULL_STOP!r}")))
    if "end" in named and end is not None:
        lets.append((ledger_line(end), f"the {what} the study ends at (seq {end.seq})"))
    if not lets:
        lets.append((ledger_line(None), row.says))
    return Proof(tuple(lets), expects)


def _rule_13(v: Verdict, acc: Accounts) -> None:
    """Rule 13, for every full stop, whatever the study ends at: the balance it left pays for no run."""
    stop, balance, dearest = acc.worst_stop, acc.worst_stop_balance, acc.max_amount
    if stop is None:
        return
    said = f"the halt (seq {stop.seq}): {FULL_STOP!r}"
    rule = "a study stops for its budget only once the balance left pays for no run (rule 13)"
    unheld = acc.unheld_stop
    if unheld is not None and dearest is not None:
        # No charge before it and no budget on line 1: the balance it left cannot be told, though the study charged.
        v.fail(
            f"the halt (seq {unheld.seq}) cannot be held to rule 13: no charge before it, and no budget on line 1",
            proof(
                ledger_line(unheld),
                f"the halt (seq {unheld.seq}): {FULL_STOP!r}",
                rule,
                (ledger_line(None), f"no charge before it; no studyOpen budget on line 1; the dearest run {dearest:g}"),
            ),
        )
        return
    if acc.bad_charge is not None and acc.bad_charge.line < stop.line:
        # One charge without its numbers: neither the balance left nor the dearest run can be told.
        v.fail(
            f"the halt (seq {stop.seq}) cannot be held to rule 13: the charge at seq {acc.bad_charge.seq} "
            "has no numeric amount and balance",
            proof(ledger_line(stop), said, rule, (ledger_line(acc.bad_charge), "a charge without its numbers")),
        )
    elif balance is not None and dearest is not None and balance >= dearest:
        v.fail(
            f"the budget is spent, says the halt (seq {stop.seq}), but the balance left ({balance:g}) "
            f"pays for the dearest run ({dearest:g})",
            proof(
                ledger_line(stop),
                said,
                rule,
                (ledger_line(None), f"the balance left is {balance:g}; the dearest run charged {dearest:g}"),
            ),
        )


def results_accounted(acc: Accounts, ledger: LedgerFacts, finished: bool) -> Check:
    """Rule 14: by the study's end, every started run has its one result and every diagnosis result its settlement.

    Whether or not a kill was in flight: a run abandoned on resume is lost.
    While the study can still be resumed, what is missing may still come.
    """
    v = Verdict("resultsAccounted", "study")
    if ledger.problem is not None:
        ledger.say(v)
    pending = v.fail if finished else v.unknown
    # A record whose run is no run id is no record of a run (rule 1, contractKept's): it starts, ends or settles
    # nothing here.
    runs = [a for a in acc.runs.values() if valid_id(a.run)]
    # The rows the timeline's end takes in each run's result machine (``contract/ends.py``): a run started without its
    # result breaks rule 14 (✗ once finished, ``?`` while a resume may still write it).
    lost = [(a, row) for a in runs for row in broken([result_end(a.result, finished)])]
    unsettled = [
        a
        for a in runs
        if a.purpose == "diagnosis"
        and a.results
        and getattr(acc.settlements.get(round_key(a.round)), "run", None) != a.run
    ]
    twice = [a for a in runs if len(a.results) > 1]
    rule = "by the study's end every started run has its one result, every diagnosis result its settlement (rule 14)"

    def started(a: RunAccount) -> Proof:
        return proof(
            ledger_line(a.starts[0]),
            f"runStarted of {run_text(a.run)} (seq {a.starts[0].seq})",
            rule,
            (ledger_line(None), f"no runResult of {run_text(a.run)}"),
        )

    def resulted(a: RunAccount) -> Proof:
        return proof(
            ledger_line(a.results[0]),
            f"runResult of {run_text(a.run)} (seq {a.results[0].seq}), a diagnosis run's",
            rule,
            (ledger_line(None), f"no diagnosisSettlement of round {round_text(a.round)} naming {run_text(a.run)}"),
        )

    _listed(pending, [(row.says.format(run=run_text(a.run)), started(a)) for a, row in lost], "run")
    if finished:
        _listed(
            pending,
            [
                (f"the study finished without a settlement of {run_text(a.run)}'s result", resulted(a))
                for a in unsettled
            ],
            "run",
        )
    else:
        _listed(pending, [(f"{run_text(a.run)}'s result has no settlement yet", None) for a in unsettled], "run")
    _listed(
        v.fail,
        [
            (
                f"{run_text(a.run)} has {len(a.results)} results",
                Proof(
                    tuple((ledger_line(r), f"runResult of {run_text(a.run)} (seq {r.seq})") for r in a.results[:SHOWN]),
                    "a run has one result (rule 14)",
                ),
            )
            for a in twice
        ],
        "run",
    )
    # A result is settled by its round's one settlement (rule 14): a round with more has no one settlement.
    rounds = sorted(
        {round_key(a.round) for a in acc.runs.values() if a.purpose == "diagnosis" and a.results},
        key=repr,
    )
    settled_again = [(r, acc.settlements[r]) for r in rounds if r in acc.settlements and acc.settlements[r].count > 1]
    _listed(
        v.fail,
        [
            (
                f"round {round_text(r)} has {s.count} settlements",
                proof(
                    Where(EvidenceFolder.LEDGER, s.line),
                    f"the first diagnosisSettlement of round {round_text(r)} (seq {s.seq}), of {s.count}",
                    "a diagnosis result is named by its round's one settlement (rule 14)",
                ),
            )
            for r, s in settled_again
        ],
        "round",
    )
    starts = sum(1 for a in acc.runs.values() if a.starts)
    return v.check(f"each of {plural(starts, 'started run')} has its one result, each diagnosis result its settlement")


def _listed(say: Callable[[str, Proof | None], None], reasons: list[tuple[str, Proof | None]], one: str) -> None:
    """The first few reasons (each with its proof), the last of them saying how many more there are."""
    shown = [reason for reason, _ in reasons[:SHOWN]]
    more = len(reasons) - len(shown)
    if shown and more > 0:
        shown[-1] += f" (and {plural(more, 'more ' + one)})"
    for reason, (_, why) in zip(shown, reasons, strict=False):
        say(reason, why)


def charged_equals_starts(acc: Accounts, ledger: LedgerFacts | None = None, finished: bool = True) -> Check:
    v = Verdict("chargedEqualsStarts", "study")
    if ledger is not None and ledger.problem is not None:
        ledger.say(v)
    # A study that has not finished may have charged a run it has not started yet (a crash between the two):
    # its resume starts it.
    waiting = [] if finished else [a for a in acc.runs.values() if len(a.charges) == 1 and not a.starts]
    if waiting:
        names = ", ".join(a.run if valid_id(a.run) else "?" for a in waiting[:SHOWN])
        v.unknown(
            f"charged, not started yet: {names}" + (f" and {len(waiting) - SHOWN} more" if len(waiting) > SHOWN else "")
        )
    pending = {id(a) for a in waiting}
    uneven = [a for a in acc.runs.values() if len(a.charges) != len(a.starts) and id(a) not in pending]
    if uneven:
        runs = ", ".join(
            f"run {a.run if valid_id(a.run) else '?'}: {plural(len(a.charges), 'charge')}, "
            f"{plural(len(a.starts), 'start')}"
            for a in uneven[:SHOWN]
        )
        more = len(uneven) - SHOWN
        v.fail(runs + (f" and {plural(more, 'more run')}" if more > 0 else ""))
        v.proven(_uneven(a) for a in uneven[:SHOWN])
    if acc.bad_charge is not None:
        first = acc.bad_charge.seq
        v.fail(
            f"{plural(acc.bad_charges, 'charge')} without a numeric amount and balance (first at seq {first})",
            proof(
                ledger_line(acc.bad_charge),
                f"a charge (seq {first}) without a numeric amount and balance",
                "a charge says what it cost and the balance left, two numbers",
            ),
        )
    if acc.budget is None:
        if not (ledger is not None and ledger.pending):
            v.fail(
                "no budget: studyOpen is missing or has no numeric budget",
                proof(ledger_line(None), "no studyOpen with a numeric budget", "a study opens with its budget"),
            )
        elif ledger.problem is None:  # an empty ledger, in a study that may still write it: not held yet
            v.unknown("no budget yet: the ledger has no record")
    elif acc.balance is not None:
        spent = acc.budget - acc.balance
        books = "the charges add up to what the budget lost: budget - balance"
        if not (math.isfinite(acc.charged) and math.isfinite(spent)):
            # Beyond a double's range: the same books in halves, each side finite when they can balance.
            half = acc.budget * 0.5 - acc.balance * 0.5
            if not (math.isfinite(acc.charged_half) and abs(acc.charged_half - half) <= 0.5e-9 * abs(acc.budget)):
                v.fail(
                    "the amounts do not add up to what the budget lost, beyond a double's range",
                    proof(ledger_line(None), "amounts that add up past the largest double", books),
                )
        elif abs(acc.charged - spent) > 1e-9 * max(1.0, abs(acc.budget)):
            v.fail(
                f"charges sum to {acc.charged:g} but budget {acc.budget:g} - balance {acc.balance:g} = {spent:g}",
                proof(
                    ledger_line(None),
                    f"charges summing to {acc.charged:g}, a budget of {acc.budget:g}, a last balance of "
                    f"{acc.balance:g}",
                    books,
                ),
            )
    starts = sum(len(a.starts) for a in acc.runs.values())
    return v.check(lambda: f"{plural(starts, 'start')}, {acc.charged:g} charged = {acc.budget:g} - {acc.balance:g}")


def _uneven(a: RunAccount) -> Proof:
    """A run charged other than once for each start: its charges and its starts."""
    run = run_text(a.run)
    lets = [
        *((ledger_line(r), f"charge of {run} (seq {r.seq})") for r in a.charges[:SHOWN]),
        *((ledger_line(r), f"runStarted of {run} (seq {r.seq})") for r in a.starts[:SHOWN]),
    ]
    if not a.starts:
        lets.append((ledger_line(None), f"no runStarted of {run}"))
    if not a.charges:
        lets.append((ledger_line(None), f"no charge of {run}"))
    return Proof(tuple(lets), "each start of a run is charged once, before it (§7)")


def exited_cleanly(launches: Launches) -> Check:
    """The final controller (the last start's pid) and its own end: exit 0, or not yet (§6.3)."""
    v = Verdict("exitedCleanly", "study")
    launched = Where(EvidenceFolder.LAUNCHES, 0)
    if launches.problem is not None:
        return Check(
            "exitedCleanly",
            False,
            launches.problem,
            proofs=(
                proof(
                    launched,
                    launches.problem.removeprefix(f"{EvidenceFolder.LAUNCHES}: "),
                    "the controllers' starts and ends are read from launches.jsonl, whole (§6.9)",
                ),
            ),
        )
    v.listed(launches.problems, launches.problem_count, "line that is not a launch", "lines that are not launches")
    # One controller at a time (§6.3); a resume over a killed one is also the kill's (killDelivered).
    v.listed(
        [f"two controllers at once: {reason}" for reason in launches.overlaps],
        launches.overlap_count,
        "such start",
        "such starts",
    )
    v.proven(proof(launched, reason, "one controller runs at a time (§6.3)") for reason in launches.overlaps)
    v.listed(launches.unlived, launches.unlived_count, "record", "records")
    v.proven(launches.proofs)
    final, end = launches.final, launches.final_end
    if final is None:
        v.fail("no controller started", proof(launched, "no start", "a study is run by its controllers (§6.3)"))
    elif end is None:
        v.unknown(f"the controller (pid {final.pid}) has not ended")
    elif not end.clean:
        if end.signal:
            how = f"was killed by {end.signal}"
        else:
            how = f"ended with exit {end.code}" if end.code is not None else "ended, its exit status lost"
        v.unknown(f"the controller {how}; {RESUME_HINT}")
    return v.check(lambda: f"exit 0 (pid {final.pid})")  # type: ignore[union-attr]


def kill_triggered(
    arming: Arming | None,
    kills: list[KillEvidence],
    acc: Accounts,
    ledger: LedgerFacts,
    finished: bool,
    study: StudyFacts | None = None,
) -> Check | None:
    """``killTriggered`` for an armed study (or one with an auto kill); None when nothing was armed.

    Each kill arms.jsonl says fired was made at its point's moment (§7): for
    ``after:KIND`` the N-th such record after the seq its point counted from,
    with nothing written after it before the kill; for ``container:ACTION``
    an event of that action of one of the study's run containers, whose run
    had not gone on to its next record.  A missed point is ? (not tested:
    v4), one still armed when the study finished ✗.
    """
    autos = [ev for ev in kills if ev.kill is not None and ev.kill.trigger == "auto"]
    if not autos and (arming is None or arming.is_quiet()):
        return None  # never armed, or armed then disarmed with nothing to judge
    v = Verdict("killTriggered", "study")
    arms = Where(EvidenceFolder.ARMS, 0)
    if arming is None:
        v.fail(
            "arms.jsonl: missing, but a kill was triggered automatically",
            proof(
                arms,
                "missing",
                "a console that kills at a point writes arms.jsonl: the point armed, and fired (§7)",
                *((ev.at(KillFolder.KILL), "trigger auto") for ev in autos[:SHOWN]),
            ),
        )
        arming = Arming()
    if arming.problem is not None:
        v.fail(
            arming.problem,
            proof(
                arms,
                arming.problem.removeprefix(f"{EvidenceFolder.ARMS}: "),
                "the points armed and fired are read from arms.jsonl, whole (§6.9)",
            ),
        )
    if arming.bad_lines:
        what = "line is not an arming event" if arming.bad_lines == 1 else "lines are not arming events"
        v.fail(
            f"arms.jsonl: {arming.bad_lines} {what}",
            proof(
                arming.bad_at or arms,
                arming.bad_why or "not an arming event",
                "each line of arms.jsonl is an arming event as the console writes it (§7)",
            ),
        )
    if arming.unarmed:
        v.fail(
            f"arms.jsonl: {plural(arming.unarmed, 'fired or missed line')} with no point armed",
            proof(arming.unarmed_at or arms, "a point fired or missed", POINT.take("unarmed", FIRE).says),
        )
    v.listed(arming.faults, arming.fault_count, "line", "lines")
    v.proven(arming.proofs)
    if ledger.problem is not None:
        ledger.say(v)
    # The row a missed point took (machines.POINT): never ✗, nothing was tested there.
    missed = POINT.take("armed", MISS)
    for run, detail, point in arming.missed:
        at = f" {point_said(point)}" if point is not None else ""
        words = missed.says.format(at=at, run=" " + run if valid_id(run) else "", detail=free_text(detail))
        (v.unknown if missed.unknown else v.fail)(words)
    by_number = {ev.number: ev for ev in kills}
    fired_numbers: set[int] = set()
    said: list[str] = []
    previous: tuple[int, int] | None = None  # the kill the line before fired, and its beforeKillSeq
    for f in arming.fired:
        number = f.kill
        if not is_int(number):
            v.fail(
                f"arms.jsonl has a fired line whose kill is {type_name(number)}, not a number",
                proof(f.where, f"fired, kill {type_name(number)}", "a fired line names its kill by its number (§7)"),
            )
            continue
        fired_numbers.add(number)
        fired = (f.where, f"kill {number} fired")
        ev = by_number.get(number)
        if ev is None:
            v.fail(
                f"arms.jsonl says kill {number} fired, but kills/{number}/ is missing",
                proof(
                    *fired,
                    "each kill fired has its folder (§6.8)",
                    (Where(KillFolder(Path(), number).rel(""), 0), "missing"),
                ),
            )
            continue
        proven = ev.incomplete_proven()
        if proven:
            reason, why = proven[0]
            v.fail(f"kills/{number}/ is incomplete: {reason}", Proof((fired, *why.let), why.then))
        elif ev.to_come():
            v.unknown(f"kills/{number}/ is not complete yet: the resume writes {', '.join(ev.to_come())}")
        k = ev.kill
        if k is None:
            continue
        killed = ev.at(KillFolder.KILL)
        # A point armed behind one that fired became current after that kill: it counts from no seq before it
        # (§6.9, point-counted-from: the same seq within one console).
        if previous is not None and not f.legacy and is_int(f.from_seq) and f.from_seq < previous[1]:
            v.fail(
                f"arms.jsonl: kill {number}'s point counts from seq {f.from_seq}, before kill {previous[0]} at seq "
                f"{previous[1]}",
                proof(
                    f.where,
                    f"kill {number} fired, counting from seq {f.from_seq}",
                    "a point armed behind one that fired counts from after that kill (§7)",
                    (by_number[previous[0]].at(KillFolder.KILL), f"beforeKillSeq {previous[1]}"),
                ),
            )
        if is_int(k.before_kill_seq):
            previous = (number, k.before_kill_seq)
        if k.trigger != "auto":
            v.fail(
                f"kill {number} was not triggered automatically",
                proof(
                    *fired,
                    "a kill fired at a point is triggered automatically",
                    (killed, f"trigger {free_text(k.trigger)}"),
                ),
            )
        point = f.point
        if point is None:
            v.fail(
                f"arms.jsonl's fired line for kill {number} names no kill point ({point_said(f.written)})",
                proof(f.where, f"kill {number} fired at {point_said(f.written)}", "a kill fires at a kill point (§7)"),
            )
            continue
        if not f.legacy and k.point != str(point):
            v.fail(
                f"kill {number}'s kill.json names {k.point or 'no point'}, arms.jsonl {point}",
                proof(
                    f.where,
                    f"kill {number} fired at {point}",
                    "a kill's folder names the point it fired at",
                    (killed, f"point {free_text(k.point) if k.point else 'none'}"),
                ),
            )
        if not valid_id(f.run) and f.run is not None:
            v.fail(
                f"arms.jsonl's fired line for kill {number} names no run",
                proof(
                    f.where,
                    f"kill {number} fired, at no run id",
                    "a fired line names the run its point was hit by, or none",
                ),
            )
        if f.seen_late is not None:
            v.fail(f.seen_late, f.seen_late_proof or proof(*fired, "a point fires once its record was seen (§7)"))
        if point.on_record:
            said.append(_after_point(v, f, ev, number))
        else:
            said.append(_container_point(v, f, ev, acc, study, number))
    for ev in autos:
        if ev.number not in fired_numbers:
            v.fail(
                f"kill {ev.number} was triggered automatically, but arms.jsonl has no fired line for it",
                proof(
                    ev.at(KillFolder.KILL),
                    "trigger auto",
                    "an automatic kill fires at a point armed, and arms.jsonl says so (§7)",
                    (arms, f"no fired line for kill {ev.number}"),
                ),
            )
    # The row the timeline's end takes for the points still armed (machines.POINT): ✗ finished, ? paused.
    end = arming.end(finished)
    if end is not None and end.breaks is not None:
        points = ", ".join(point_said(p) for p in arming.pending[:SHOWN])
        (v.unknown if end.unknown else v.fail)(
            end.says.format(points=points),
            proof(
                arms,
                f"armed at {points}, and neither fired nor missed",
                "a point armed fires or is missed before the study finishes (§7)",
                kills[0].finished_at() if kills else (Where(EvidenceFolder.LAUNCHES, 0), "the study finishes"),
            ),
        )
    return v.check(
        lambda: "; ".join(said) + ("; its folder is complete" if len(said) == 1 else "; their folders are complete")
    )


def point_said(point: Any) -> str:
    """A point as arms.jsonl names it (None: the seed's, an older console's line)."""
    if point is None:
        return "after:runStarted/diagnosis"
    return free_text(point) if isinstance(point, str) else type_name(point)


def _after_point(v: Verdict, f: Fired, ev: KillEvidence, number: int) -> str:
    """An ``after:`` point's kill: at the N-th such record after its fromSeq, nothing written after it."""
    k = ev.kill
    assert k is not None and f.point is not None
    point = f.point
    fired = (f.where, f"kill {number} fired at {point}")
    if not (is_int(f.from_seq) and f.from_seq >= 0):
        v.fail(
            f"arms.jsonl's fired line for kill {number} has fromSeq {type_name(f.from_seq)}, not a seq",
            proof(
                *fired, f"an after: point counts its records from a seq (§7), and fromSeq is {type_name(f.from_seq)}"
            ),
        )
        return ""
    after = f" after seq {f.from_seq}" if f.from_seq else ""
    if f.moment is None:
        v.fail(
            f"kill {number} fired at {point}, but the ledger has no such record{after}",
            proof(
                *fired,
                "an after: point fires at its record, in the ledger (§7)",
                (ledger_line(None), f"no such record{after}"),
            ),
        )
        return ""
    what = f"seq {f.moment}, {run_text(f.moment_run) + chr(39) + 's ' if valid_id(f.moment_run) else ''}{point.what}"
    moment = (Where(EvidenceFolder.LEDGER, f.moment_line), f"{what}: {point}'s moment")
    killed = ev.at(KillFolder.KILL)
    if k.trigger_seq != f.moment:
        fired_at = k.trigger_seq if k.trigger_seq is not None else "?"
        v.fail(
            f"kill {number} fired at seq {fired_at}, not at {point}'s moment ({what})",
            proof(killed, f"triggerSeq {fired_at}", "a kill at a point fires at its moment (§7)", moment, fired),
        )
    seq = k.before_kill_seq
    if seq is None:
        v.fail(
            f"kill {number}'s kill.json gives no beforeKillSeq: its point's moment ({what}) is not held to it",
            proof(
                killed,
                "no beforeKillSeq",
                "a kill at a point is made once its moment's record was seen: beforeKillSeq is that record (§7)",
                moment,
            ),
        )
    elif seq > f.moment:
        v.fail(
            f"kill {number} came after seq {seq}: the study had gone on past {point} ({what}), a missed point",
            proof(
                killed,
                f"beforeKillSeq {seq}",
                "a kill at a point is made before anything is written after its moment (§7)",
                moment,
            ),
        )
    elif seq < f.moment:
        v.fail(
            f"kill {number} says seq {seq} was the last record at the kill, before {point}'s moment ({what})",
            proof(
                killed,
                f"beforeKillSeq {seq}",
                "a kill at a point is made once its moment's record was seen: beforeKillSeq is that record (§7)",
                moment,
            ),
        )
    run = f.moment_run if valid_id(f.moment_run) else None
    if (valid_id(f.run) or run is not None) and f.run != run:
        v.fail(
            f"arms.jsonl says kill {number} fired at {run_text(f.run)}, not at {run_text(run)}",
            proof(
                f.where,
                f"kill {number} fired at {run_text(f.run)}",
                "a fired line names the run of its point's moment",
                moment,
            ),
        )
    if point.what == "runStarted" and run is not None and run not in {t.run for t in ev.targets if t.kind == IN_FLIGHT}:
        v.fail(
            f"the run {run_text(run)} whose start kill {number} fired at is not among its targets",
            proof(killed, "its targets", "a kill at a run's start leaves that run in flight, a target (§7)", moment),
        )
    return f"kill {number} fired at {point} ({what})"


def _container_point(
    v: Verdict, f: Fired, ev: KillEvidence, acc: Accounts, study: StudyFacts | None, number: int
) -> str:
    """A ``container:`` point's kill: at an event of that action of a run container of the study, whose run had not
    gone on to its next record by the kill."""
    k = ev.kill
    assert k is not None and f.point is not None
    point = f.point
    event = k.trigger_event
    fired = (f.where, f"kill {number} fired at {point}")
    killed = ev.at(KillFolder.KILL)
    if event is None:
        v.fail(
            f"kill {number} fired at {point}, but its kill.json has no triggerEvent",
            proof(killed, "no triggerEvent", "a kill at a container point names the event it fired at (§7)", fired),
        )
        return ""
    parsed = parse_event(event)
    if not isinstance(parsed, ContainerEvent):
        # The event the kill fired at, copied from the stream: held to the shape of every recorded event (§6.4).
        v.fail(
            f"kill {number}'s triggerEvent is not a container event: {parsed if isinstance(parsed, str) else 'a gap'}",
            proof(killed, "its triggerEvent", "a kill at a container point names the container event it fired at"),
        )
        return ""
    action, name = parsed.verb, parsed.name  # as every recorded event is read: its action, its name without "/"
    if action != point.what:
        v.fail(
            f"kill {number} fired at {point}, but its triggerEvent is a {point_said(action)}",
            proof(
                killed,
                f"its triggerEvent is a {point_said(action)}",
                "a kill at a container point fires at an event of its action (§7)",
                fired,
            ),
        )
    stem = study.stem if study is not None else None
    run = name[len(stem) :] if name is not None and stem is not None and name.startswith(stem) else None
    if run is None or not valid_id(run):
        v.fail(
            f"kill {number}'s triggerEvent is not of one of the study's run containers",
            proof(
                killed,
                f"its triggerEvent is of {name_text(name)}",
                "a container point fires at an event of one of the study's run containers (§7)",
            ),
        )
        return ""
    if f.run != run:
        v.fail(
            f"arms.jsonl says kill {number} fired at {run_text(f.run)}, not at {run_text(run)}",
            proof(
                f.where,
                f"kill {number} fired at {run_text(f.run)}",
                "a fired line names the run whose container's event it fired at",
                (killed, f"its triggerEvent is of {name_text(name)}"),
            ),
        )
    acct = acc.runs.get(run)
    # The event is of a run's container by its name: a run the ledger has a record of (whether it planned it is
    # rule 2's).  A point of a purpose asks the runPlanned's purpose, which a run without one cannot be shown to have.
    if acct is None:
        v.fail(
            f"kill {number}'s triggerEvent is of {run_text(run)}'s container, a run the ledger holds no record of",
            proof(
                killed,
                f"its triggerEvent is of {name_text(name)}",
                "a container point fires at an event of one of the study's run containers, each of a run in its ledger "
                "(§7)",
                (ledger_line(None), f"no record of {run_text(run)}"),
            ),
        )
        return ""
    if point.purpose is not None and acct.plan is None:
        v.fail(
            f"kill {number}'s triggerEvent is of {run_text(run)}'s container, a run the ledger never planned",
            proof(
                killed,
                f"its triggerEvent is of {name_text(name)}",
                f"a point for {point.purpose} runs fires at one of them, by its runPlanned's purpose (§7)",
                (ledger_line(None), f"no runPlanned of {run_text(run)}"),
            ),
        )
        return ""
    if point.purpose is not None and acct.purpose != point.purpose:
        purpose = acct.purpose
        v.fail(
            f"kill {number} fired at {point}, but {run_text(run)} is not a {point.purpose} run",
            proof(
                ledger_line(acct.plan),
                f"runPlanned of {run_text(run)}: purpose {free_text(purpose) if isinstance(purpose, str) else 'none'}",
                f"a point for {point.purpose} runs fires at one of them (§7)",
                (killed, f"its triggerEvent is of {name_text(name)}"),
                fired,
            ),
        )
    seq = k.before_kill_seq
    # A beforeKillSeq past the ledger's end is no seq of it (killEvidence says so): it places the kill nowhere.
    if seq is not None and seq <= acc.last_seq:
        later = acct.results if action == "die" else acct.starts
        done = [r for r in later if r.seq <= seq]
        if done:
            kind = "runResult" if action == "die" else "runStarted"
            v.fail(
                f"kill {number} came after {run_text(run)}'s {kind} (seq {done[0].seq}): {point} had passed, a missed "
                "point",
                proof(
                    ledger_line(done[0]),
                    f"{kind} of {run_text(run)} (seq {done[0].seq})",
                    "a kill at a container point is made before the run goes on to its next record (§7)",
                    (killed, f"beforeKillSeq {seq}"),
                ),
            )
    return f"kill {number} fired at {point} ({run_text(run)}'s {action})"
