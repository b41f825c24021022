"""The accounts of a study, kept up to date record by record.

What the checks and the live views need from a ledger: every run with its
plans, charges, starts and results; the budget and the last balance; the
halts, exports, decisions and settlements; the current round and stage.  It
is built incrementally, so the live views never re-scan the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.ledger import Record

FULL_STOP = "balance exhausted"


def round_key(value: Any) -> Any:
    """A round as a dict key: rounds are ints in a sound ledger, but a bad one must not crash us."""
    return value if isinstance(value, (int, float, str, bool, type(None))) else repr(value)


@dataclass
class RunAccount:
    """Everything the ledger says about one run."""

    run: str
    plans: list[Record] = field(default_factory=list)
    charges: list[Record] = field(default_factory=list)
    starts: list[Record] = field(default_factory=list)
    results: list[Record] = field(default_factory=list)

    @property
    def plan(self) -> Record | None:
        return self.plans[0] if self.plans else None

    @property
    def purpose(self) -> str | None:
        return self.plan.get("purpose") if self.plan else None

    @property
    def cell(self) -> Any:
        return self.plan.get("object") if self.plan else None

    @property
    def round(self) -> Any:
        return self.plan.get("round") if self.plan else None

    @property
    def container(self) -> str | None:
        return self.starts[-1].get("container") if self.starts else None

    @property
    def in_flight(self) -> bool:
        """Started and without a result."""
        return bool(self.starts) and not self.results

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


@dataclass
class Accounts:
    """Incremental accounts over the records of one ledger."""

    runs: dict[str, RunAccount] = field(default_factory=dict)
    budget: float | None = None
    balance: float | None = None
    charged: float = 0.0
    round: Any = None
    stage: str | None = None
    halts: list[Record] = field(default_factory=list)
    exports: list[Record] = field(default_factory=list)
    service_errors: list[Record] = field(default_factory=list)
    # Only what the checks need is kept, so a long ledger costs little memory:
    # the selectDiagnosis decisions, the first settlement and the last proposal
    # opening of each round.
    decisions: dict[tuple[str, Any], Record] = field(default_factory=dict)
    settlements: dict[Any, Record] = field(default_factory=dict)
    proposal_opened: dict[Any, int] = field(default_factory=dict)  # round -> seq of its last stageOpen proposal
    first_diagnosis: str | None = None  # run id of the first runPlanned with purpose diagnosis
    last_seq: int = 0
    count: int = 0

    def _run(self, record: Record) -> RunAccount | None:
        run = record.get("run")
        if not isinstance(run, str):
            return None
        acct = self.runs.get(run)
        if acct is None:
            acct = self.runs[run] = RunAccount(run)
        return acct

    def add(self, record: Record) -> None:
        self.count += 1
        self.last_seq = record.seq
        kind = record.kind
        if kind == "studyOpen":
            budget = record.get("budget")
            if isinstance(budget, (int, float)):
                self.budget = budget
                if self.balance is None:
                    self.balance = budget
        elif kind == "stageOpen":
            self.stage = record.get("stage")
            self.round = record.get("round")
            if self.stage == "proposal":
                self.proposal_opened[round_key(self.round)] = record.seq
        elif kind == "decision":
            if record.get("name") == "selectDiagnosis":
                self.decisions[("selectDiagnosis", round_key(record.get("round")))] = record
        elif kind == "runPlanned":
            acct = self._run(record)
            if acct is not None:
                acct.plans.append(record)
                if self.first_diagnosis is None and record.get("purpose") == "diagnosis":
                    self.first_diagnosis = acct.run
        elif kind == "charge":
            acct = self._run(record)
            if acct is not None:
                acct.charges.append(record)
            amount = record.get("amount")
            if isinstance(amount, (int, float)):
                self.charged += amount
            balance = record.get("balance")
            if isinstance(balance, (int, float)):
                self.balance = balance
        elif kind == "runStarted":
            acct = self._run(record)
            if acct is not None:
                acct.starts.append(record)
        elif kind == "runResult":
            acct = self._run(record)
            if acct is not None:
                acct.results.append(record)
        elif kind == "diagnosisSettlement":
            # The first settlement of a round is the one the checks judge.
            self.settlements.setdefault(round_key(record.get("round")), record)
        elif kind == "halt":
            self.halts.append(record)
        elif kind == "export":
            self.exports.append(record)
        elif kind == "serviceError":
            self.service_errors.append(record)

    def extend(self, records: list[Record]) -> "Accounts":
        for r in records:
            self.add(r)
        return self

    def in_flight(self) -> list[RunAccount]:
        return [a for a in self.runs.values() if a.in_flight]

    @property
    def last_halt(self) -> Record | None:
        return self.halts[-1] if self.halts else None

    def halted_at_export(self) -> bool:
        halt = self.last_halt
        if halt is None or halt.get("reason") != FULL_STOP:
            return False
        return not any(e.seq > halt.seq for e in self.exports)

    def as_json(self) -> dict[str, Any]:
        halt = self.last_halt
        return {
            "budget": self.budget,
            "balance": self.balance,
            "charged": self.charged,
            "records": self.count,
            "lastSeq": self.last_seq,
            "halt": halt.as_json() if halt else None,
            "exports": [e.as_json() for e in self.exports],
            "serviceErrors": [e.as_json() for e in self.service_errors],
            "runs": [a.as_json() for a in self.runs.values()],
        }
