"""One row of the overview: what a study's events say of it, folded small, and how rows are sorted and filtered.

The overview shows one row per study when more studies run than fit side by
side.  A row needs a few facts (state, round, stage, budget, runs in flight,
the age of the last record, the armed point or the kill, the verdict), not
the events themselves: :class:`StudySummary` keeps those facts, in constant
memory whatever the study writes, and says whether an event changed them so
that the overview redraws only the rows that moved.

The filter is a small query (:class:`Query`): space-separated terms, all of
which must hold, each ``field=value``, ``field!=value`` or plain text found
in the id.  No Textual here: the headless printer and the tests use it too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from studymon.engine import (
    ArmChanged,
    KillStep,
    Problem,
    Progress,
    RecordsSeen,
    State,
    StateChanged,
    StudyEvent,
    Verdicts,
    parse_rfc3339,
    utc_epoch,
)
from studymon.widgets.states import state_label

ALERT_SECONDS = 5.0  # how long a diagnosis start lights its row up, as a pane
FRESH_SECONDS = 10.0  # a diagnosis start older than this when seen is history (a catch-up), not news
PURPOSES_KEPT = 4096  # runs whose purpose a row remembers, to know a diagnosis start when it comes

# The verdict's words in a row and in a query, by the check table's ok.
VERDICT_WORDS: dict[bool | None, str] = {True: "ok", False: "fail", None: "unknown"}
VERDICT_MARKS: dict[bool | None, str] = {True: "✓", False: "✗", None: "?"}


@dataclass
class StudySummary:
    """What the overview shows of one study.  ``order`` is its place in the command."""

    id: str
    order: int = 0
    state: State = State.STARTING
    detail: str = ""
    round: Any = None
    stage: str | None = None
    balance: float | None = None
    budget: float | None = None
    in_flight: int = 0
    records: int = 0
    last_record: float | None = None  # epoch seconds of the last record (its ``at``, else when it was seen)
    armed: str = ""  # the point counting now, "" when not armed
    kill: str = ""  # the last kill step, said short (``kill 1 resumed``)
    problem: str = ""
    checks: tuple[int, int, int] | None = None  # ✓, ✗, ? counts of the last verdicts
    ok: bool | None = None
    finished: bool = False  # the verdicts are a finished study's
    ended: bool = False  # the console saw the study end
    alert_until: float = 0.0  # wall-clock time until which the row is lit up (a diagnosis run started)
    alert_run: str = ""
    purposes: dict[str, str] = field(default_factory=dict)
    # Said by whoever owns the row rather than by the study's events (a campaign's trial: ``queued``,
    # ``missed``, ``lost`` as its state; its points and class as its note, after the point or kill).
    label: str = ""
    note: str = ""
    version: int = 0  # moved by whoever shows the row, each time its facts change

    def fold(self, event: StudyEvent, now: float) -> bool:
        """Take one of the study's events (``now``: wall-clock seconds); whether the row's facts changed."""
        if isinstance(event, RecordsSeen):
            return self._records(event, now)
        if isinstance(event, Progress):
            flight = len(event.in_flight)
            new = (event.round, event.stage, event.balance, event.budget, flight)
            old = (self.round, self.stage, self.balance, self.budget, self.in_flight)
            self.round, self.stage, self.balance, self.budget, self.in_flight = new
            return new != old
        if isinstance(event, StateChanged):
            self.state, self.detail = event.state, event.detail
            if event.state not in (State.RUNNING, State.STARTING, State.RESUMING):
                self.alert_until = 0.0
            return True
        if isinstance(event, ArmChanged):
            waiting = f" +{len(event.waiting)}" if event.waiting else ""
            self.armed = f"{event.point}{waiting}" if event.armed and event.point else ""
            return True
        if isinstance(event, KillStep):
            self.kill = f"kill {event.kill} {event.step}" if event.kill else event.step
            return True
        if isinstance(event, Verdicts):
            marks = [c.ok for c in event.checks]
            self.checks = (marks.count(True), marks.count(False), marks.count(None))
            self.ok, self.finished = event.ok, event.finished
            return True
        if isinstance(event, Problem):
            self.problem = event.message
            return True
        return False

    def _records(self, event: RecordsSeen, now: float) -> bool:
        self.records += len(event.records) + event.skipped
        for run, purpose in event.purposes:
            self._purpose(run, purpose)
        for record in event.records:
            if record.kind == "runPlanned":
                run, purpose = record.get("run"), record.get("purpose")
                if isinstance(run, str):
                    self._purpose(run, str(purpose or ""))
            elif record.kind == "runStarted":
                self._run_started(record.get("run"), record.at, now)
            elif record.kind == "runResult" and record.get("run") == self.alert_run:
                self.alert_until = 0.0  # over: a kill now would no longer catch it in flight
        if event.records:
            self.last_record = _epoch(event.records[-1].at, now)
        return bool(event.records) or event.skipped > 0

    def _purpose(self, run: str, purpose: str) -> None:
        if len(self.purposes) >= PURPOSES_KEPT and run not in self.purposes:
            self.purposes.pop(next(iter(self.purposes)))
        self.purposes[run] = purpose

    def _run_started(self, run: Any, at: str, now: float) -> None:
        if not isinstance(run, str) or self.purposes.get(run) != "diagnosis":
            return
        if now - _epoch(at, now) > FRESH_SECONDS:
            return
        self.alert_until, self.alert_run = now + ALERT_SECONDS, run

    def end(self, finished: bool, message: str = "") -> None:
        """The console saw the study end (finished or not, and why not)."""
        self.ended = True
        self.alert_until = 0.0
        if not finished:
            # Not finished: a ✗ stays, anything else may still change (exit 3), as the check table says.
            self.finished = False
            self.checks = self.checks or (0, 0, 0)
            if self.ok is not False:
                self.ok = None
            self.problem = message or self.problem

    # --- what a row shows -------------------------------------------------------
    def alert(self, now: float) -> bool:
        return now < self.alert_until

    def age(self, now: float) -> float | None:
        """Seconds since the last record (None: no record yet)."""
        return None if self.last_record is None else max(0.0, now - self.last_record)

    @property
    def verdict(self) -> str:
        """``ok``, ``fail``, ``unknown`` once verdicts came, else ``none``."""
        return VERDICT_WORDS[self.ok] if self.checks is not None else "none"

    @property
    def state_words(self) -> str:
        return self.label or state_label(self.state)

    def fields(self) -> dict[str, str]:
        """The row's facts as a query reads them (lower case)."""
        return {
            "id": self.id.lower(),
            "state": self.label or self.state.value,
            "stage": (self.stage or "").lower(),
            "round": "" if self.round is None else str(self.round).lower(),
            "verdict": self.verdict,
            "armed": "yes" if self.armed else "no",
            "kill": self.kill.lower(),
            "flight": str(self.in_flight),
        }


def _epoch(at: Any, now: float) -> float:
    # A record's own UTC time is read by arithmetic (a row takes one a record: strptime was a tenth of it);
    # another offset, by the general parser.
    value = utc_epoch(at)
    if value is not None:
        return value
    try:
        value = parse_rfc3339(at) if isinstance(at, str) else now
    except ValueError:
        return now
    return value if math.isfinite(value) else now


def age_text(seconds: float | None) -> str:
    """An age as ``htop`` and ``k9s`` write one: ``5s``, ``40s`` (in tens past ten seconds), ``3m``, ``2h``,
    ``4d``; ``-`` for none."""
    if seconds is None:
        return "-"
    s = int(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s // size}{unit}"
    # Past ten seconds, in tens: a quiet row is drawn again every ten seconds, not at every tick of the clock.
    return f"{s}s" if s < 10 else f"{s // 10 * 10}s"


# --- sorting ---------------------------------------------------------------------

# Failures first: what needs the operator comes to the top.
_VERDICT_RANK = {"fail": 0, "unknown": 1, "none": 2, "ok": 3}
_STATE_RANK = {
    State.ERROR: 0,
    State.SERVICE_ERROR: 0,
    State.CRASHED: 1,
    State.FINISHED_FAIL: 2,
    State.KILLED: 3,
    State.RESUMING: 4,
    State.STOPPING: 5,
    State.STOPPED: 6,
    State.RUNNING: 7,
    State.STARTING: 8,
    State.DETACHED: 9,
    State.FINISHED_OK: 10,
}

SORT_KEYS: tuple[str, ...] = ("order", "state", "id", "age", "verdict")
SORT_WORDS = {
    "order": "in the command's order",
    "state": "by state",
    "id": "by id",
    "age": "by last record, quietest first",
    "verdict": "by verdict, failures first",
}


def sort_key(name: str, now: float) -> Callable[[StudySummary], tuple[Any, ...]]:
    """The key that orders rows by ``name`` (one of :data:`SORT_KEYS`); ties keep the command's order."""
    if name == "state":
        return lambda s: (_STATE_RANK.get(s.state, 99), s.order)
    if name == "id":
        return lambda s: (s.id, s.order)
    if name == "age":  # the quietest first: a study that stopped writing is what to look at
        return lambda s: (-(a if (a := s.age(now)) is not None else math.inf), s.order)
    if name == "verdict":
        return lambda s: (_VERDICT_RANK[s.verdict], s.order)
    if name == "order":
        return lambda s: (s.order,)
    raise ValueError(f"no sort key {name!r}: one of {', '.join(SORT_KEYS)}")


# --- filtering --------------------------------------------------------------------

QUERY_FIELDS = ("id", "state", "stage", "round", "verdict", "armed", "kill", "flight")
QUERY_HELP = (
    "terms that must all hold: field=value or field!=value "
    f"({', '.join(QUERY_FIELDS)}), or text found in the id; e.g. state=running verdict!=ok"
)


class BadQuery(ValueError):
    """A filter that cannot be read; its text says what is wrong and how to write it."""


@dataclass(frozen=True)
class Term:
    field: str | None  # None: plain text, found in the id
    value: str
    negated: bool = False

    def holds(self, facts: dict[str, str]) -> bool:
        if self.field is None:
            return self.value in facts["id"]
        got = facts[self.field]
        # A state or a verdict is matched by its start, so state=fin finds both finished states.
        same = got == self.value or (self.field in ("state", "kill") and got.startswith(self.value))
        return same != self.negated


@dataclass(frozen=True)
class Query:
    """A parsed filter: every term must hold.  The empty query keeps every row."""

    terms: tuple[Term, ...] = ()
    text: str = ""

    @classmethod
    def parse(cls, text: str) -> Query:
        terms: list[Term] = []
        for word in text.split():
            if "=" not in word:
                terms.append(Term(None, word.lower()))
                continue
            name, _, value = word.partition("=")
            negated = name.endswith("!")
            name = name.removesuffix("!").lower()
            if name not in QUERY_FIELDS:
                raise BadQuery(f"no field {name!r} in {word!r}: {QUERY_HELP}")
            if not value:
                raise BadQuery(f"{word!r} has no value: write {name}=VALUE")
            terms.append(Term(name, value.lower(), negated))
        return cls(tuple(terms), text.strip())

    def holds(self, summary: StudySummary) -> bool:
        if not self.terms:
            return True
        facts = summary.fields()
        return all(t.holds(facts) for t in self.terms)
