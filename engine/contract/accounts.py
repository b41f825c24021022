"""The accounts of a study, kept up to date record by record.

What the checks and the live views need from a ledger: every run with its
plans, charges, starts and results; the budget and the last balance; the
last halt and export; per round the ``selectDiagnosis`` choice, the
settlement and the last proposal opening; the current round and stage.  It
is built incrementally (O(1) per record), so the live views never re-scan
the ledger, and it keeps only those facts: a long ledger is never held whole.
A judgement keeps a run's records trimmed to the fields the checks read
(``Accounts(trim=True)``).
"""

from __future__ import annotations

import sys
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from studymon.engine.contract.ends import ENDS, FULL_STOP, RESULT, WORK_KINDS, StudyEnd, step_result
from studymon.engine.contract.ledger import Record
from studymon.engine.contract.rules import SELECT, chosen_ids, is_number, settlement_accounted
from studymon.engine.contract.targets import UNSETTLED

# Bounded lists for the report: a hostile ledger of a million exports must not grow memory.
KEPT = 100
# The ids a round's selectDiagnosis decisions chose, held together up to this many (a hostile ledger may choose
# again and again): beyond it, a later decision's choice adds nothing.
CHOSEN_KEPT = 10_000


def round_key(value: Any) -> Any:
    """A round as a dict key: rounds are ints in a sound ledger, but a bad one must not crash us."""
    if isinstance(value, (bool, float)):
        # True == 1 and 1.0 == 1 as keys: a mistyped round must not stand for round 1.
        return (type(value).__name__, value)
    if isinstance(value, (int, str, type(None))):
        return value
    return repr(value)


@dataclass(slots=True)
class RunAccount:
    """Everything the ledger says about one run (results without their outputs)."""

    run: str
    plans: list[Record] = field(default_factory=list)
    charges: list[Record] = field(default_factory=list)
    starts: list[Record] = field(default_factory=list)
    results: list[Record] = field(default_factory=list)
    result: str = RESULT.start  # rule 14: whether it has its result once started (engine/contract/ends.py)

    @property
    def plan(self) -> Record | None:
        return self.plans[0] if self.plans else None

    @property
    def purpose(self) -> Any:
        return self.plan.get("purpose") if self.plan else None

    @property
    def cell(self) -> Any:
        return self.plan.get("object") if self.plan else None

    @property
    def round(self) -> Any:
        return self.plan.get("round") if self.plan else None

    @property
    def container(self) -> Any:
        return self.starts[-1].get("container") if self.starts else None

    @property
    def in_flight(self) -> bool:
        """Started and without a result."""
        return bool(self.starts) and not self.results

    def in_flight_at(self, seq: int) -> bool:
        """Started at or before ``seq`` and without a result at or before it."""
        return any(s.seq <= seq for s in self.starts) and not any(r.seq <= seq for r in self.results)

    def as_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "purpose": self.purpose,
            "cell": self.cell,
            "round": self.round,
            "container": self.container,
            "plans": [r.seq for r in self.plans],
            "charges": [{"seq": r.seq, "amount": r.get("amount"), "balance": r.get("balance")} for r in self.charges],
            "starts": [r.seq for r in self.starts],
            "results": [{"seq": r.seq, "exitCode": r.get("exitCode")} for r in self.results],
        }


@dataclass(slots=True)
class Selection:
    """The ``selectDiagnosis`` decisions of one round: every id they chose (a round that chose twice must account
    for both choices), the first one's seq and line, and how many."""

    seq: int
    chosen: frozenset[Hashable] | None
    problem: str | None
    count: int = 1
    line: int = 0  # the first one's line in the ledger


@dataclass(slots=True)
class Settlement:
    """The ``diagnosisSettlement`` of one round: the first one, and how many there are."""

    seq: int
    line: int
    run: Any
    accounted: frozenset[Hashable] | None  # experiment ids judged or dropped
    problem: str | None  # why ``accounted`` is None
    count: int = 1


def _intern(value: Any) -> Any:
    return sys.intern(value) if isinstance(value, str) else value


# Trimmed copies of a run's records, kind by kind (see ``Accounts.trim``): only the
# fields the checks read, the run id shared with the account, ``at`` kept only on a
# start (a kill's trigger), no byte offset.  Written out per kind: this is the hot path.
def _trim_plan(r: Record, run: str) -> Record:
    c = r.content
    exps = c.get("experiments")
    if isinstance(exps, list):
        # The same ids as the round's choice and settlement name: one string each.
        exps = [_intern(e) for e in exps]
    return Record(
        r.seq,
        r.at,
        "runPlanned",
        {
            "run": run,
            "purpose": _intern(c.get("purpose")),
            "object": _intern(c.get("object")),
            "round": c.get("round"),
            "experiments": exps,
        },
        r.line,
        0,
    )


def _trim_charge(r: Record, run: str) -> Record:
    c = r.content
    return Record(r.seq, "", "charge", {"run": run, "amount": c.get("amount"), "balance": c.get("balance")}, r.line, 0)


def _trim_start(r: Record, run: str) -> Record:
    return Record(r.seq, r.at, "runStarted", {"run": run, "container": r.content.get("container")}, r.line, 0)


def _trim_result(r: Record, run: str) -> Record:
    return Record(r.seq, "", "runResult", {"run": run, "exitCode": r.content.get("exitCode")}, r.line, 0)


@dataclass
class Accounts:
    """Incremental accounts over the records of one ledger.

    With ``trim`` a run's records are kept as trimmed copies (the fields the
    checks read, without ``outputs``): a judgement of a long ledger then holds
    about half the memory, for a few microseconds more per run record.  A live
    session keeps the records as read, which costs nothing per record.
    """

    trim: bool = False

    runs: dict[str, RunAccount] = field(default_factory=dict)
    budget: float | None = None
    balance: float | None = None
    charged: float = 0.0
    # The same sum of halves: finite wherever the amounts add up to what a finite budget and balance lost (at most
    # twice the largest double), so that books of amounts near the largest double are still held (§6.2 rule 9 is
    # of each number, not of their sum).
    charged_half: float = 0.0
    round: Any = None
    stage: Any = None
    last_halt: Record | None = None
    halts: int = 0
    last_export: Record | None = None
    exports: list[Record] = field(default_factory=list)  # the first KEPT
    export_count: int = 0
    service_errors: list[Record] = field(default_factory=list)  # the first KEPT
    service_error_count: int = 0
    # charges whose amount or balance is not a number (the first one, and how many)
    bad_charge: Record | None = None
    bad_charges: int = 0
    selections: dict[Any, Selection] = field(default_factory=dict)  # round -> selectDiagnosis
    settlements: dict[Any, Settlement] = field(default_factory=dict)  # round -> its first settlement
    proposal_opened: dict[Any, int] = field(default_factory=dict)  # round -> seq of its last stageOpen proposal
    first_diagnosis: str | None = None  # run id of the first runPlanned with purpose diagnosis
    # The last record of the kinds a study writes while it works (rule 12: none after its final halt).
    last_work: Record | None = None
    max_amount: float | None = None  # the largest amount charged (rule 13)
    # Rule 13 holds for every full stop: the one that left the most (the balance of the last charge before it) is
    # the one to hold to the dearest run, whatever comes after it.
    worst_stop: Record | None = None
    worst_stop_balance: float | None = None
    # The first full stop written when no balance was known (no charge before it, no budget on line 1): rule 13
    # cannot be held to it once the study has charged.
    unheld_stop: Record | None = None
    last_seq: int = 0
    count: int = 0
    # The study's end replayed as it comes: which record it ends at, and whether work follows (§6.7, rule 12).
    end: StudyEnd = field(default_factory=StudyEnd)

    def _run(self, record: Record) -> RunAccount | None:
        run = record.content.get("run")
        if not isinstance(run, str):
            return None
        acct = self.runs.get(run)
        if acct is None:
            acct = self.runs[run] = RunAccount(run)
        return acct

    def add(self, record: Record) -> None:
        self.count += 1
        self.last_seq = max(self.last_seq, record.seq)  # the ledger's end: its highest seq
        kind = record.kind
        if kind in WORK_KINDS:
            self.last_work = record if not self.trim else Record(record.seq, "", kind, {}, record.line, 0)
            self.end.add(kind)
        if kind == "runPlanned":
            acct = self._run(record)
            if acct is not None:
                acct.plans.append(_trim_plan(record, acct.run) if self.trim else record)
                if self.first_diagnosis is None and record.content.get("purpose") == "diagnosis":
                    self.first_diagnosis = acct.run
        elif kind == "charge":
            acct = self._run(record)
            if acct is not None:
                acct.charges.append(_trim_charge(record, acct.run) if self.trim else record)
            amount = record.content.get("amount")
            balance = record.content.get("balance")
            if is_number(amount):
                self.charged += amount
                self.charged_half += amount * 0.5
                if self.max_amount is None or amount > self.max_amount:
                    self.max_amount = amount
            if is_number(balance):
                self.balance = balance
            if not (is_number(amount) and is_number(balance)):
                self.bad_charges += 1
                if self.bad_charge is None:
                    self.bad_charge = record
        elif kind == "runStarted":
            acct = self._run(record)
            if acct is not None:
                acct.starts.append(_trim_start(record, acct.run) if self.trim else record)
                acct.result = step_result(acct.result, kind)
        elif kind == "runResult":
            acct = self._run(record)
            if acct is not None:
                acct.results.append(_trim_result(record, acct.run) if self.trim else record)
                acct.result = step_result(acct.result, kind)
        elif kind == "stageOpen":
            self.stage = record.content.get("stage")
            self.round = record.content.get("round")
            if self.stage == "proposal":
                self.proposal_opened[round_key(self.round)] = record.seq
        elif kind == "decision":
            if record.content.get("name") == SELECT:
                rnd = round_key(record.content.get("round"))
                known = self.selections.get(rnd)
                chosen, problem = chosen_ids(record.content)
                if known is None:
                    self.selections[rnd] = Selection(record.seq, chosen, problem, line=record.line)
                else:
                    known.count += 1
                    if known.chosen is not None and chosen is not None and len(known.chosen) < CHOSEN_KEPT:
                        known.chosen |= chosen
        elif kind == "diagnosisSettlement":
            rnd = round_key(record.content.get("round"))
            known_s = self.settlements.get(rnd)
            if known_s is None:
                accounted, problem = settlement_accounted(record.content)
                self.settlements[rnd] = Settlement(
                    record.seq, record.line, record.content.get("run"), accounted, problem
                )
            else:
                known_s.count += 1
        elif kind == "studyOpen" and record.line == 1:
            # The budget is studyOpen's on line 1 (rule 7): one anywhere else opens no study.
            budget = record.content.get("budget")
            if is_number(budget):
                self.budget = budget
                if self.balance is None:
                    self.balance = budget
        elif kind == "halt":
            self.end.add(kind, record.content.get("reason"))
            self.last_halt = record
            self.halts += 1
            worst = self.worst_stop_balance
            left_more = self.balance is not None and (worst is None or self.balance > worst)
            full = record.content.get("reason") == FULL_STOP
            if full and (self.worst_stop is None or left_more):
                self.worst_stop, self.worst_stop_balance = record, self.balance
            if full and self.balance is None and self.unheld_stop is None:
                self.unheld_stop = record
        elif kind == "export":
            self.end.add(kind)
            self.last_export = record
            self.export_count += 1
            if len(self.exports) < KEPT:
                self.exports.append(record)
        elif kind == "serviceError":
            self.service_error_count += 1
            if len(self.service_errors) < KEPT:
                self.service_errors.append(record)

    def extend(self, records: list[Record]) -> Accounts:
        for r in records:
            self.add(r)
        return self

    def in_flight(self) -> list[RunAccount]:
        return [a for a in self.runs.values() if a.in_flight]

    def in_flight_at(self, seq: int) -> list[RunAccount]:
        """The runs started and without a result as the ledger stood at ``seq``."""
        return [a for a in self.runs.values() if a.starts and a.in_flight_at(seq)]

    def halted_at_export(self) -> bool:
        """The last halt is the full stop and no export follows it: the end a study expecting its halt holds."""
        return self.end.state(ENDS["halt"]) == "full stop"

    def as_json(self) -> dict[str, Any]:
        halt = self.last_halt
        return {
            "budget": self.budget,
            "balance": self.balance,
            "charged": self.charged,
            "records": self.count,
            "lastSeq": self.last_seq,
            "halt": halt.as_json() if halt else None,
            "halts": self.halts,
            "exports": [e.as_json() for e in self.exports],
            "exportCount": self.export_count,
            "serviceErrors": [e.as_json() for e in self.service_errors],
            "serviceErrorCount": self.service_error_count,
            "runs": [a.as_json() for a in self.runs.values()],
        }


def story_end(kind: str, run: str, rnd: Any, accounts: Accounts) -> int | None:
    """The seq of the record that ends a kill target's story: its result, or for an ``unsettled`` one (``kind``) its
    round's settlement (after the kill: the window stays open until the resume has settled it, so that running it
    again is seen).  The console closes a window by it; the judge holds the window's ``resultSeq`` to it."""
    if kind == UNSETTLED:
        settled = accounts.settlements.get(round_key(rnd))
        return settled.seq if settled is not None else None
    acct = accounts.runs.get(run)
    return acct.results[0].seq if acct is not None and acct.results else None
