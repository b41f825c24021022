"""The per-study checks the ledger alone (with ``research.json`` and the timeline) decides.

``ledgerWellFormed`` (lines, seq, watch faults, the timeline's copy of each
record), ``contractKept`` (rules 1-11 and 15 of §2a/§6.2/§6.9, the first
broken one named with its line), ``haltedAtExport`` (rules 12, 13 and the
expected end), ``chargedEqualsStarts`` and ``resultsAccounted`` (rule 14).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from tests.oracle.evidence import Ledger, Record, Research, Timeline, valid_id
from tests.oracle.reading import BigInt, beyond_double, is_int, is_number, quote
from tests.oracle.verdict import Tally

RUN_KINDS = ("runPlanned", "charge", "runStarted", "runResult", "diagnosisSettlement")
WORK_KINDS = ("stageOpen", "decision", "runPlanned", "charge", "runStarted", "runResult", "diagnosisSettlement")
ROUND_KINDS = ("stageOpen", "decision", "runPlanned", "diagnosisSettlement", "serviceError")
S = "study"
ENDS = {"halt": "halt", "export": "export", "any": "halt or export"}


def exp_key(value: Any) -> str | None:
    """An experiment id by its JSON text (``1`` as ``"1"``); None for a value that is no id."""
    if isinstance(value, str):
        return value
    if isinstance(value, BigInt):
        return value.text
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def round_key(value: Any) -> str | None:
    if isinstance(value, BigInt):
        return value.text
    if is_int(value):
        return str(value)
    return None


def num(value: Any) -> Fraction | None:
    """A number of the books (`amount`, `balance`, `budget`), exactly; None for what is none.  An integer beyond a
    double's range is none: docs/contract.md, §2a rule 9, "Such a number is no number to the other rules: an
    `amount` or `balance` beyond a double's range is a charge without a numeric amount or balance (rule 13,
    `chargedEqualsStarts`)" (README.md, open question 93)."""
    if isinstance(value, bool) or not is_number(value) or beyond_double(value):
        return None
    return Fraction(value)


def amount(value: Fraction) -> str:
    """A sum of the ledger's numbers for a reason: as a float where one holds it; a sum past a double's range
    (numbers each within it, added exactly) by its size, never converted to a float (README.md, open question
    88)."""
    try:
        return str(float(value))
    except OverflowError:
        digits = int(abs(value)).bit_length() * 30103 // 100000 + 1
        return f"{'-' if value < 0 else ''}a number of about {digits} digits"


def id_list(value: Any) -> list[str] | None:
    if not isinstance(value, list):
        return None
    keys = [exp_key(v) for v in value]
    return None if any(k is None for k in keys) else [k for k in keys if k is not None]


@dataclass
class Run:
    name: str
    plans: list[Record] = field(default_factory=list)
    charges: list[Record] = field(default_factory=list)
    starts: list[Record] = field(default_factory=list)
    results: list[Record] = field(default_factory=list)
    settlements: list[Record] = field(default_factory=list)

    @property
    def plan(self) -> Record | None:
        return self.plans[0] if self.plans else None

    @property
    def purpose(self) -> Any:
        return self.plan.get("purpose") if self.plan else None

    @property
    def round(self) -> str | None:
        return round_key(self.plan.get("round")) if self.plan else None

    @property
    def experiments(self) -> list[str]:
        return (id_list(self.plan.get("experiments")) or []) if self.plan else []


def runs_of(records: list[Record]) -> dict[str, Run]:
    runs: dict[str, Run] = {}
    slot = {
        "runPlanned": "plans",
        "charge": "charges",
        "runStarted": "starts",
        "runResult": "results",
        "diagnosisSettlement": "settlements",
    }
    for r in records:
        if r.kind in slot and valid_id(r.run):
            getattr(runs.setdefault(r.run, Run(r.run)), slot[r.kind]).append(r)
    return runs


def chosen_by_round(records: list[Record]) -> dict[str, list[tuple[Record, list[str]]]]:
    out: dict[str, list[tuple[Record, list[str]]]] = {}
    for r in records:
        if r.kind == "decision" and r.get("name") == "selectDiagnosis":
            rk = round_key(r.get("round"))
            output = r.get("output")
            ids = id_list(output.get("chosen")) if isinstance(output, dict) else None
            if rk is not None and ids is not None:
                out.setdefault(rk, []).append((r, ids))
    return out


def settlement_parts(r: Record) -> tuple[list[str], list[str]] | None:
    """(judged ids, dropped ids) of a settlement, or None when its lists are of another shape."""
    dropped, judged = r.get("dropped"), r.get("judged")
    if not isinstance(dropped, list) or not isinstance(judged, dict) or not isinstance(judged.get("experiments"), list):
        return None
    d_ids, j_ids = [], []
    for d in dropped:
        k = exp_key(d.get("experiment")) if isinstance(d, dict) else None
        if k is None:
            return None
        d_ids.append(k)
    for j in judged["experiments"]:
        k = exp_key(j.get("id")) if isinstance(j, dict) else None
        if k is None:
            return None
        j_ids.append(k)
    return j_ids, d_ids


def line_breaks(r: Record) -> list[tuple[int, int, str]]:
    """Rules 8 and 9, which a line breaks whatever its kind."""
    out: list[tuple[int, int, str]] = []
    if r.time is None:
        out.append((r.line, 8, f"at {quote(r.at)} is not an RFC 3339 UTC time"))
    if r.nonfinite:
        out.append((r.line, 9, "a number is not finite"))
    if r.beyond_double:
        # docs/contract.md, §2a rule 9: "an integer literal beyond ±1.797…e308 (read exactly, but no double holds
        # it: the books are kept in doubles) ... break[s] it" (README.md, open question 93).
        out.append((r.line, 9, "an integer beyond a double's range"))
    return out


def rule_breaks(ledger: Ledger, research: Research) -> list[tuple[int, int, str]]:
    """Every (line, rule, message) of §2a's rules 1-11 and rule 15 that the records break."""
    out: list[tuple[int, int, str]] = []
    recs = ledger.records
    runs: dict[str, Run] = {}
    selects: dict[str, int] = {}
    settled_rounds: dict[str, int] = {}
    settled_runs: set[str] = set()
    budget: Fraction | None = None
    balance: Fraction | None = None
    first_budget: Any = None
    for r in recs:
        c, line = r.content, r.line
        out.extend(line_breaks(r))
        if r.kind == "studyOpen":
            if line != 1:
                out.append((line, 7, "studyOpen on a line other than the first"))
            if research.study is None:
                out.append((line, 7, "research.json's study cannot be read to compare"))
            elif c.get("study") != research.study:
                out.append((line, 7, "studyOpen's study is not research.json's"))
            if num(c.get("budget")) is None:  # a budget beyond a double's range is none (rule 9)
                out.append((line, 6, "budget is not a number"))
            if not isinstance(c.get("config"), dict):
                out.append((line, 6, "config is not an object"))
            first_budget = c.get("budget")
            budget = num(first_budget) if line == 1 else budget
        elif line == 1:
            out.append((line, 7, "line 1 is not studyOpen"))
        if r.kind in ROUND_KINDS and not is_int(c.get("round")):
            out.append((line, 6, f"{r.kind}'s round is not an integer"))
        if r.kind in RUN_KINDS:
            run = c.get("run")
            if not valid_id(run):
                out.append((line, 1, f"{r.kind}'s run is not a valid run id"))
                continue
            info = runs.setdefault(run, Run(run))
            if r.kind == "runPlanned":
                if info.plans:
                    out.append((line, 2, f"second runPlanned for run {run}"))
                info.plans.append(r)
                if id_list(c.get("experiments")) is None:
                    out.append((line, 5, f"runPlanned {run}'s experiments is not a list of ids"))
            elif r.kind in ("charge", "runStarted", "runResult"):
                if len(info.plans) != 1:
                    out.append((line, 2, f"{r.kind} for run {run}, which has no runPlanned before it"))
                if r.kind == "charge":
                    if info.charges:
                        out.append((line, 3, f"second charge for run {run}"))
                    if info.starts or info.results:
                        out.append((line, 3, f"charge for run {run} after its runStarted or runResult"))
                    info.charges.append(r)
                    a, b = num(c.get("amount")), num(c.get("balance"))
                    if a is None or b is None:
                        out.append((line, 6, "amount or balance is not a number"))
                    elif budget is not None:
                        expected = (balance if balance is not None else budget) - a
                        if abs(b - expected) > Fraction(1, 10**9) * max(Fraction(1), abs(budget)):
                            out.append(
                                (
                                    line,
                                    15,
                                    f"balance after run {run}'s charge is not the balance before minus its amount",
                                )
                            )
                    balance = b if b is not None else balance
                elif r.kind == "runStarted":
                    if not info.charges:
                        out.append((line, 3, f"runStarted for run {run} before any charge"))
                    if info.starts:
                        out.append((line, 3, f"second runStarted for run {run}"))
                    if info.results:
                        out.append((line, 3, f"runStarted for run {run} after its runResult"))
                    info.starts.append(r)
                    stem = research.stem
                    if stem is None:
                        out.append(
                            (
                                line,
                                4,
                                "research.json's prefix and study cannot be read: the container name cannot be checked",
                            )
                        )
                    elif c.get("container") != stem + run:
                        out.append((line, 4, f"runStarted {run}'s container is not {stem + run}"))
                else:
                    if not info.starts:
                        out.append((line, 3, f"runResult for run {run} before its runStarted"))
                    if info.results:
                        out.append((line, 3, f"second runResult for run {run}"))
                    info.results.append(r)
                    if not is_int(c.get("exitCode")):
                        out.append((line, 6, "exitCode is not an integer"))
                    if not isinstance(c.get("outputs"), dict):
                        out.append((line, 6, "outputs is not an object"))
            else:  # diagnosisSettlement: judged with the choices at the end (a later choice binds it too)
                rk = round_key(c.get("round"))
                if rk is not None:
                    if rk in settled_rounds:
                        out.append((line, 5, f"second diagnosisSettlement for round {rk}"))
                    settled_rounds[rk] = line
                if run in settled_runs:
                    out.append((line, 11, f"run {run} settled twice"))
                settled_runs.add(run)
                if not info.results:
                    out.append((line, 5, f"diagnosisSettlement before run {run}'s runResult"))
                if info.plan is not None and rk is not None and info.round != rk:
                    out.append((line, 11, f"settlement's round is not run {run}'s"))
                info.settlements.append(r)
        if r.kind == "decision" and c.get("name") == "selectDiagnosis":
            rk = round_key(c.get("round"))
            output = c.get("output")
            if not isinstance(output, dict) or id_list(output.get("chosen")) is None:
                out.append((line, 5, "selectDiagnosis's chosen is not a list of ids"))
            if rk is not None:
                if rk in selects:
                    out.append((line, 5, f"second selectDiagnosis for round {rk}"))
                selects[rk] = line
    # Each settlement against its run and every choice of its round, wherever the choice stands.
    chosen = chosen_by_round(recs)
    for info in runs.values():
        for s in info.settlements:
            parts = settlement_parts(s)
            if parts is None:
                out.append((s.line, 5, "a settlement's dropped or judged is of another shape"))
                continue
            judged, dropped = parts
            if len(set(judged)) != len(judged) or len(set(dropped)) != len(dropped):
                out.append((s.line, 11, "an experiment judged twice or dropped twice"))
            if set(judged) & set(dropped):
                out.append((s.line, 11, "an experiment both judged and dropped"))
            rk = round_key(s.get("round"))
            choices = [ids for _, ids in chosen.get(rk, [])] if rk is not None else []
            allowed = set(info.experiments).union(*choices) if choices else set(info.experiments)
            for j in judged:
                if j not in allowed:
                    out.append((s.line, 11, "a judged id is none of its run's experiments or its round's chosen"))
                    break
            outputs = info.results[0].get("outputs") if info.results else None
            if isinstance(outputs, dict) and any(j not in outputs for j in judged):
                out.append((s.line, 11, "a judged id has no value in its run's outputs"))
            accounted = set(judged) | set(dropped)
            if any(e not in accounted for e in info.experiments):
                out.append(
                    (s.line, 5, f"the settlement of run {info.name} leaves one of its experiments unaccounted for")
                )
            for choice, ids in chosen.get(rk, []) if rk is not None else []:
                if any(e not in accounted for e in ids):
                    out.append(
                        (max(s.line, choice.line), 5, f"a chosen id of round {rk} is neither judged nor dropped")
                    )
    return out


def ledger_unread(t: Tally, name: str, ledger: Ledger, finished: bool) -> bool:
    """Whether the ledger cannot be read, said against the check: docs/contract.md ("Which check a file
    fails", the ledger: "every check that reads it") fails it, and only a ledger not written yet (missing)
    while the study can still be resumed is ``?`` (README.md, open question 33)."""
    if ledger.readable:
        return False
    if ledger.missing and not finished:
        t.unknown(S, name, f"the ledger is not written yet ({ledger.reason})")
    else:
        t.fail(S, name, f"the ledger cannot be read: {ledger.reason}")
    return True


def first_to_come(ledger: Ledger, finished: bool) -> bool:
    """Whether the study may still write its first record: the ledger is there and readable, holds no whole line
    (empty, or only the torn start of its first), and the study has not finished.  docs/contract.md
    (ledgerWellFormed): "an empty or missing ledger is ✗, `?` while the study may still write its first"; §4:
    "a study that has not finished (its controller still runs, or it can be resumed) leaves `?` what it has not
    done yet".  A ledger with a whole line that is not a record has written its line 1, wrongly: ✗ at once
    (README.md, open questions 41 and 95)."""
    return ledger.readable and ledger.lines == 0 and not finished


def judge_ledger_well_formed(
    t: Tally, ledger: Ledger, timeline: Timeline, watch: tuple[int, str | None], finished: bool
) -> None:
    name = "ledgerWellFormed"
    t.add(S, name)
    if ledger_unread(t, name, ledger, finished):
        return
    # docs/contract.md (ledgerWellFormed): "the ledger holds a record (an empty or missing ledger is ✗, `?` while
    # the study may still write its first)"; a missing one is ledger_unread's (README.md, open question 67).
    if not ledger.records:
        (t.fail if finished else t.unknown)(S, name, "the ledger holds no record")
    for issue in ledger.issues[:3]:
        t.fail(S, name, issue)
    if len(ledger.issues) > 3:
        t.fail(S, name, f"and {len(ledger.issues) - 3} more lines that are not records")
    if ledger.torn:
        (t.fail if finished else t.unknown)(S, name, "the last line is not whole")
    lines, problem = watch
    if problem is not None:
        t.fail(S, name, problem)
    elif lines:
        t.fail(S, name, "ledger-watch.jsonl: the ledger was truncated or replaced while watched")
    # docs/contract.md ("Which check a file fails"): timeline.jsonl missing fails ledgerWellFormed once the
    # ledger holds a record; unreadable, a line that is not its record, or out of time order, always.
    if not timeline.readable:
        if not (timeline.missing and not ledger.records):
            t.fail(S, name, f"the timeline's copy of the records cannot be compared: {timeline.reason}")
        return
    for issue in timeline.defects[:3]:
        t.fail(S, name, issue)
    if len(timeline.defects) > 3:
        t.fail(S, name, f"and {len(timeline.defects) - 3} more timeline.jsonl lines out of order or not records")
    for issue in timeline.issues[:3]:
        t.fail(S, name, issue)
    for seq, seen in timeline.by_seq.items():
        rec = ledger.by_seq(seq)
        if rec is None:
            t.fail(
                S, name, f"timeline.jsonl line {seen.line}: seq {seq} was seen, and the ledger has no such record now"
            )
            continue
        if timeline.saw(rec) is None:
            t.fail(
                S,
                name,
                f"timeline.jsonl line {seen.line}: seq {seq}'s kind or time is not the ledger's line {rec.line}",
            )


def judge_contract_kept(t: Tally, ledger: Ledger, research: Research, finished: bool) -> None:
    name = "contractKept"
    t.add(S, name)
    if ledger_unread(t, name, ledger, finished):
        return
    breaks = sorted(rule_breaks(ledger, research))
    if breaks:
        line, rule, message = breaks[0]
        others = len({b[0] for b in breaks}) - 1
        t.fail(
            S,
            name,
            f"rule {rule}, line {line}: {message}"
            + (f" (and {others} more lines that break a rule)" if others else ""),
        )
    if not ledger.records:
        # §2a: the rules are "checked record by record": while the study may still write its first record, no
        # record breaks rule 7 (or any other), and the studyOpen not written yet is ledgerWellFormed's `?`
        # alone ("`?` while the study may still write its first"); once it has finished, or a line is there
        # and is no record, line 1 holds no studyOpen (README.md, open questions 41 and 95).
        if not first_to_come(ledger, finished):
            t.fail(S, name, "rule 7: the ledger has no studyOpen")
    elif ledger.records[0].line != 1:
        # §2a rule 7, "studyOpen is line 1": a first line that is not a record (a byte order mark before it,
        # not JSON, an object repeating a key, ...) holds no studyOpen, whatever ledgerWellFormed says of it
        # (README.md, open question 41).
        t.fail(S, name, "rule 7, line 1: not a record, so no studyOpen on line 1")


def judge_halted_at_export(t: Tally, ledger: Ledger, research: Research, finished: bool) -> None:
    name = "haltedAtExport"
    t.add(S, name)
    if ledger_unread(t, name, ledger, finished):
        return
    expect = research.expect_end
    if expect is None:
        t.fail(S, name, "research.json's expectEnd cannot be read or is none of halt, export, any")
        return
    recs = ledger.records
    open_or_fail = t.fail if finished else t.unknown
    halts = [r for r in recs if r.kind == "halt"]
    exports = [r for r in recs if r.kind == "export"]
    full = [h for h in halts if h.get("reason") == "balance exhausted"]
    end: Record | None
    if expect == "halt":
        end = halts[-1] if halts else None
    elif expect == "export":
        end = exports[-1] if exports else None
    else:
        both = halts[-1:] + exports[-1:]
        end = max(both, key=lambda r: r.line) if both else None
    if end is None:
        open_or_fail(
            S,
            name,
            f"no {ENDS[expect]} in the ledger (expectEnd {expect})",
        )
    else:
        if end.kind == "halt" and end.get("reason") != "balance exhausted":
            open_or_fail(S, name, f"the halt at line {end.line} is not 'balance exhausted'")
        if expect == "halt" and any(e.line > end.line for e in exports):
            open_or_fail(S, name, f"an export follows the halt at line {end.line}")
        after = [r for r in recs if r.line > end.line and r.kind in WORK_KINDS]
        if after:
            open_or_fail(S, name, f"rule 12: {after[0].kind} at line {after[0].line} after the end at line {end.line}")
    # Rule 13, for every "balance exhausted" halt (docs/contract.md, haltedAtExport): the balance it leaves (the
    # last charge's before it; the budget, with none before it) is less than the largest amount the study ever
    # charged.  A study that never charged keeps it; a charge before the halt whose amount or balance is not a
    # number cannot be held to it, and fails it.
    charges = [r for r in recs if r.kind == "charge"]
    amounts = [a for a in (num(r.get("amount")) for r in charges) if a is not None]
    budget = study_budget(ledger)
    for h in full if charges else []:
        before = [r for r in charges if r.line < h.line]
        odd = next((r for r in before if num(r.get("amount")) is None or num(r.get("balance")) is None), None)
        if odd is not None:
            t.fail(
                S,
                name,
                f"rule 13: the 'balance exhausted' halt at line {h.line} cannot be held to it: the charge at line "
                f"{odd.line} has no numeric amount and balance",
            )
            continue
        left = num(before[-1].get("balance")) if before else budget
        if left is None or not amounts or not left < max(amounts):
            t.fail(
                S,
                name,
                f"rule 13: the 'balance exhausted' halt at line {h.line} leaves a whole run's worth of budget",
            )


def study_budget(ledger: Ledger) -> Fraction | None:
    """The budget: the studyOpen's on line 1, and no other (rule 7: a studyOpen elsewhere gives none)."""
    recs = ledger.records
    if recs and recs[0].line == 1 and recs[0].kind == "studyOpen":
        return num(recs[0].get("budget"))
    return None


def judge_charged_equals_starts(t: Tally, ledger: Ledger, finished: bool) -> None:
    name = "chargedEqualsStarts"
    t.add(S, name)
    if ledger_unread(t, name, ledger, finished):
        return
    recs = ledger.records
    charges: dict[str, int] = {}
    starts: dict[str, int] = {}
    for r in recs:
        # §2a rule 14's last sentence: "a record whose run is not a run id (rule 1) is no record of a run: it
        # starts, charges, ends or settles none, here as in chargedEqualsStarts (a charge of no run still counts
        # in the sum of the amounts)" (README.md, open question 61).
        if not valid_id(r.run):
            continue
        if r.kind == "charge":
            charges[r.run] = charges.get(r.run, 0) + 1
        elif r.kind == "runStarted":
            starts[r.run] = starts.get(r.run, 0) + 1
    for run in sorted(set(charges) | set(starts)):
        c, s = charges.get(run, 0), starts.get(run, 0)
        if c == s:
            continue
        what = f"run {run} has {c} charge(s) and {s} runStarted"
        (t.unknown if (not finished and c == 1 and s == 0) else t.fail)(S, name, what)
    amounts = [(num(r.get("amount")), num(r.get("balance"))) for r in recs if r.kind == "charge"]
    if any(a is None or b is None for a, b in amounts):
        t.fail(S, name, "a charge's amount or balance is not a number")
        return
    budget = study_budget(ledger)
    if budget is None and first_to_come(ledger, finished):
        # "the amounts sum to `budget` (the `studyOpen`'s on line 1: rule 7)": a budget not written yet, while
        # the study may still write its studyOpen, is what it has not done yet: `?` (docs/contract.md, §4;
        # README.md, open question 95).
        t.unknown(S, name, "no budget yet: the study may still write its studyOpen (the ledger holds no record)")
        return
    if budget is None:
        t.fail(S, name, "no budget to compare the charges with (no studyOpen with a numeric budget on line 1)")
        return
    if amounts:
        total = sum((a for a, _ in amounts if a is not None), Fraction(0))
        last = amounts[-1][1]
        assert last is not None
        if abs(total - (budget - last)) > Fraction(1, 10**9) * max(Fraction(1), abs(budget)):
            t.fail(
                S,
                name,
                f"the amounts sum to {amount(total)}, not the budget minus the last balance ({amount(budget - last)})",
            )


def judge_results_accounted(t: Tally, ledger: Ledger, finished: bool) -> None:
    name = "resultsAccounted"
    t.add(S, name)
    if ledger_unread(t, name, ledger, finished):
        return
    runs = runs_of(ledger.records)
    later = t.fail if finished else t.unknown
    settlements: dict[str, list[Record]] = {}
    for r in ledger.records:
        if r.kind == "diagnosisSettlement":
            rk = round_key(r.get("round"))
            if rk is not None:
                settlements.setdefault(rk, []).append(r)
    for run in runs.values():
        if run.starts and not run.results:
            later(S, name, f"the study {'finished' if finished else 'has not finished'} without {run.name}'s result")
        if len(run.results) > 1:
            t.fail(S, name, f"run {run.name} has {len(run.results)} results")
        if run.results and run.purpose == "diagnosis":
            rk = run.round
            mine = settlements.get(rk, []) if rk is not None else []
            if len(mine) > 1:
                t.fail(S, name, f"round {rk} has {len(mine)} settlements")
            elif not any(s.run == run.name for s in mine):
                later(S, name, f"diagnosis run {run.name} has its result and no settlement of its round names it")
