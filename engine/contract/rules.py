"""The rules a ledger must keep (contract v2, §2a), checked record by record.

:class:`RuleTally` takes the ledger's records in order and remembers the
first line that breaks a rule (and how many lines do).  A run's records go
through :data:`RUN`, rules 2 and 3 written as a machine (a table of the
run's state, its record, the state after and the rule that record breaks);
the watch keeps per run and per round only the few facts the other rules
need (a plan's line, the planned and chosen experiment ids), so a long
ledger costs little memory and each record O(1) work.  ``contractKept`` (in :mod:`studymon.engine.judge.study`) turns it
into a verdict.

The rules, as numbered in the contract:

1. ``run`` in ``runPlanned``, ``charge``, ``runStarted``, ``runResult`` and
   ``diagnosisSettlement`` is a string matching the id pattern.
2. Every ``charge``, ``runStarted`` and ``runResult`` names a run with
   exactly one ``runPlanned``, earlier.
3. Per run: ``runPlanned`` < ``charge`` < ``runStarted`` < ``runResult``,
   at most one of each of the last three.
4. ``runStarted.container`` is exactly ``<containerPrefix>-<ID>-<run>``.
5. At most one ``selectDiagnosis`` and one ``diagnosisSettlement`` per round;
   a settlement follows the ``runResult`` of the run it names and accounts
   for every planned experiment of that run and every chosen id.
6. Field types: ``round`` an integer; ``amount``, ``balance``, ``budget``
   numbers; ``exitCode`` an integer; ``outputs``, ``config`` objects.

And those of contract v3 (§6.2):

7. ``studyOpen`` is line 1 and no other line; its ``study`` is research.json's.
8. ``at`` is an RFC 3339 UTC time.
9. Numbers are finite (the reader reports a literal beyond a double; the
   watch checks the amounts and what they add up to).
10. (A line that repeats a key is no record: the parser's, for ``ledgerWellFormed``.)
11. A settlement's ``round`` is its run's round; a run is settled at most
    once; an experiment is judged or dropped, never both; a judged id is
    one of its run's experiments or its round's chosen ids, and has a value
    in the run's ``runResult.outputs``.

Details never quote a value the ledger holds unless it was validated first
(run ids that match the pattern, integer rounds): a hostile ledger must not
put its bytes on the operator's terminal.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, TypeGuard

import orjson

from studymon.engine.contract.automata import Machine, Row
from studymon.engine.contract.ledger import DOUBLE_MAX, Record
from studymon.engine.io.clock import utc_epoch
from studymon.engine.io.safefile import type_name

ID_PATTERN = r"[a-z0-9][a-z0-9_.-]{0,62}"
_ID = re.compile(ID_PATTERN)
# Docker's own rule for container names, which a prefix must keep.
_CONTAINER_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}")

# The kinds of record the contract names (§2), in the order it lists them.
KINDS = (
    "studyOpen",
    "stageOpen",
    "decision",
    "runPlanned",
    "charge",
    "runStarted",
    "runResult",
    "diagnosisSettlement",
    "serviceError",
    "halt",
    "export",
)
KNOWN_KINDS = frozenset(KINDS)
RUN_KINDS = frozenset({"runPlanned", "charge", "runStarted", "runResult", "diagnosisSettlement"})
# Kinds whose content has a ``round`` (contract §2): it must be an integer.
ROUND_KINDS = frozenset({"stageOpen", "decision", "runPlanned", "diagnosisSettlement", "serviceError"})
SELECT = "selectDiagnosis"


def valid_id(value: Any) -> TypeGuard[str]:
    """A study or run id as the contract allows it."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def stem(container_prefix: str, study_id: str) -> str:
    """What every run container of the study is named with: ``<containerPrefix>-<ID>-`` (§6.1)."""
    return f"{container_prefix}-{study_id}-"


def studys_container(name: Any, label: Any, container_prefix: str, study: str) -> bool:
    """Whether a container is the study's (§6.1), by its name and its ``studymon.study`` label.

    Labelled with the study's id, whatever its name; otherwise in the study's stem
    (``<containerPrefix>-<ID>-``), unless its label is a valid id of another study
    and its name is in that study's stem too (two ids whose stems extend one
    another).  An empty or invalid label disowns nothing.
    """
    if label == study:
        return True
    if not isinstance(name, str) or not name.startswith(stem(container_prefix, study)):
        return False
    return not (valid_id(label) and name.startswith(stem(container_prefix, label)))


def valid_container_name(value: Any) -> bool:
    return isinstance(value, str) and _CONTAINER_NAME.fullmatch(value) is not None


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> TypeGuard[float]:
    """A JSON number the checks can do arithmetic with: a float, or an integer within a double's range
    (a 400-digit integer literal is valid JSON, and beyond a double it is rule 9's, not a number to add)."""
    if isinstance(value, float):
        return True
    return isinstance(value, int) and not isinstance(value, bool) and -DOUBLE_MAX <= value <= DOUBLE_MAX


def round_text(value: Any) -> str:
    """A round for a detail: the integer, or ``?`` for anything else (never echoed)."""
    return str(value) if is_int(value) else "?"


def key(value: Any) -> Hashable:
    """An experiment id as a set member, whatever JSON value it is.

    Strings and integers stand for themselves (no allocation: a long ledger
    holds many); ``True``, ``1.0`` and ``1`` must stay apart, so the others
    are tagged.
    """
    if isinstance(value, str):
        # One string for an id that the plan, the choice and the settlement all name.
        return sys.intern(value)
    if is_int(value):
        return value
    if isinstance(value, (float, bool)) or value is None:
        return (type(value).__name__, value)
    # As text: orjson's bytes keep a buffer of a few KiB each, which a long ledger's many keys add up to.
    try:
        return ("json", orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode())
    except (TypeError, orjson.JSONEncodeError):
        # What orjson will not write but the ledger may hold: a lone surrogate (rule 10 accepts it),
        # an integer past 64 bits, objects nested past 255 levels.
        return ("json", canonical_json(value))


class _Close(str):
    """A closing bracket on :func:`canonical_json`'s stack (a str of our own, not a value to write)."""

    __slots__ = ()


def canonical_json(value: Any) -> str:
    """JSON text of ``value`` with sorted keys and every non-ASCII character escaped, whatever its depth.

    A loop over a stack rather than ``json.dumps``'s recursion, for a value nested as deep as the
    ledger's parser allowed.
    """
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, _Close):
            out.append(v)
        elif isinstance(v, dict):
            out.append("{")
            stack.append(_Close("}"))
            for i, (k, item) in enumerate(sorted(v.items(), reverse=True)):
                stack.append(item)
                stack.append(_Close(json.dumps(k) + ":" if i == len(v) - 1 else "," + json.dumps(k) + ":"))
        elif isinstance(v, list):
            out.append("[")
            stack.append(_Close("]"))
            for i, item in enumerate(reversed(v)):
                stack.append(item)
                if i != len(v) - 1:
                    stack.append(_Close(","))
        else:
            out.append(json.dumps(v))
    return "".join(out)


def is_id_list(value: Any) -> bool:
    """Whether ``value`` is a list of experiment ids: each a string or an integer (a ``null``, a boolean, a
    number with a fraction, a list or an object is no id; rule 5)."""
    return isinstance(value, list) and all(isinstance(v, str) or is_int(v) for v in value)


def experiment_keys(value: Any, *, ids_only: bool = True) -> frozenset[Hashable] | None:
    """The ids in a list of experiment ids, or None when it is not one (:func:`is_id_list`).  ``ids_only``
    False: whatever the list holds, each value for itself (the stories after a kill compare plans as written)."""
    if not isinstance(value, list) or (ids_only and not is_id_list(value)):
        return None
    return frozenset(key(v) for v in value)


def settlement_accounted(content: dict[str, Any]) -> tuple[frozenset[Hashable] | None, str | None]:
    """The experiment ids a settlement judges or drops, or why it cannot say."""
    dropped = content.get("dropped")
    judged = content.get("judged")
    if not isinstance(dropped, list):
        return None, f"dropped is {type_name(dropped)}, not a list"
    experiments = judged.get("experiments") if isinstance(judged, dict) else None
    if not isinstance(experiments, list):
        return None, "judged is not an object with a list of experiments"
    ids: set[Hashable] = set()
    for d in dropped:
        if not isinstance(d, dict) or "experiment" not in d:
            return None, "an entry of dropped names no experiment"
        ids.add(key(d["experiment"]))
    for j in experiments:
        if not isinstance(j, dict) or "id" not in j:
            return None, "an entry of judged.experiments has no id"
        ids.add(key(j["id"]))
    return frozenset(ids), None


def valid_at(value: Any) -> bool:
    """Whether ``value`` is a time as rule 8 asks (a real date and time, in UTC)."""
    return utc_epoch(value) is not None


def judged_and_dropped(content: dict[str, Any]) -> tuple[list[Hashable], list[Hashable]]:
    """A settlement's judged ids and dropped ids, each as written; of a settlement :func:`settlement_accounted`
    took (its shape is checked there, once)."""
    return (
        [key(j["id"]) for j in content["judged"]["experiments"]],
        [key(d["experiment"]) for d in content["dropped"]],
    )


def chosen_ids(content: dict[str, Any]) -> tuple[frozenset[Hashable] | None, str | None]:
    """The ids a ``selectDiagnosis`` decision chose, or why it cannot say."""
    output = content.get("output")
    chosen = output.get("chosen") if isinstance(output, dict) else None
    ids = experiment_keys(chosen)
    if ids is None:
        return None, "output.chosen is not a list of ids"
    return ids, None


def plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "o", "u"):
        return f"{n} {word[:-1]}ies"
    return f"{n} {word}s"


@dataclass(frozen=True, slots=True)
class Broken:
    """The first line that breaks a rule: which rule, where, and what."""

    rule: int
    line: int
    seq: int
    detail: str

    @property
    def text(self) -> str:
        return f"rule {self.rule}, line {self.line}: {self.detail}"


# --- the run, as a machine (rules 2 and 3) -----------------------------------------------

PLAN, CHARGE, START, RESULT = "runPlanned", "charge", "runStarted", "runResult"
_HAD = ((CHARGE, 1), (START, 2), (RESULT, 4))  # the records of a run after its plan, in the order rule 3 asks


def run_state(planned: bool, had: int) -> str:
    """A run's state: whether it has its runPlanned, and which of its other records it has had (bits of
    :data:`_HAD`): ``planned:charge+runStarted`` is a run planned, charged and started."""
    records = [kind for kind, bit in _HAD if had & bit]
    return ("planned" if planned else "unplanned") + (":" + "+".join(records) if records else "")


def _words(kind: str, planned: bool, had: int) -> tuple[int, str] | None:
    """The rule a run's ``kind`` record breaks after what the run has had, in the words the check gives it (the
    lowest rule the line breaks), or None: the next step of its story."""
    if kind == PLAN:
        if planned:
            return 2, "second runPlanned for run {run} (the first is line {line})"
        return (3, "runPlanned for run {run} after its other records") if had else None
    if not planned:
        return 2, kind + " for run {run}, which has no runPlanned before it"
    charged, started, resulted = had & 1, had & 2, had & 4
    if kind == CHARGE:
        if charged:
            return 3, "second charge for run {run}"
        if started:
            return 3, "charge for run {run} after its runStarted"
        return (3, "charge for run {run} after its runResult") if resulted else None
    if kind == START:
        if started:
            return 3, "second runStarted for run {run}"
        if not charged:
            return 3, "runStarted for run {run} before its charge"
        return (3, "runStarted for run {run} after its runResult") if resulted else None
    if resulted:
        return 3, "second runResult for run {run}"
    return None if started else (3, "runResult for run {run} before its runStarted")


def _run_rows() -> tuple[Row, ...]:
    """Every (state, record) of a run: from whether it is planned and what it has had, to what it has after."""
    rows = []
    for planned in (False, True):
        for had in range(8):
            for kind in (PLAN, CHARGE, START, RESULT):
                bit = dict(_HAD).get(kind, 0)
                after = run_state(planned or kind == PLAN, had | bit)
                broken = _words(kind, planned, had)
                rule, says = broken if broken is not None else (None, "")
                rows.append(Row(run_state(planned, had), kind, after, "contractKept" if rule else None, says, rule))
    return tuple(rows)


# Rules 2 and 3 as a machine: a run's runPlanned, charge, runStarted and runResult, each from the state the run's
# records so far left it in.  The states are what the run has had, so that a record's words after a broken line
# are exact too (``tests/test_contract.py`` reads them line by line); the sound story is
# unplanned -> planned -> planned:charge -> planned:charge+runStarted -> planned:charge+runStarted+runResult.
RUN = Machine("run", tuple(run_state(p, h) for p in (False, True) for h in range(8)), _run_rows())
UNPLANNED = run_state(False, 0)
RESULTED_STATES = frozenset(state for state in RUN.states if state.endswith("runResult"))


class _Run:
    """What the rules need of one run: where it was planned, its planned experiments, what it has had."""

    __slots__ = ("_ids", "experiments", "outputs", "plan_line", "round", "settled", "state")

    def __init__(self, plan_line: int | None, experiments: Any, rnd: Any = None) -> None:
        self.plan_line = plan_line  # None: no runPlanned yet
        # The plan's experiments as written (a reference the accounts hold anyway);
        # turned into ids only when a settlement names the run, once.
        self.experiments = experiments
        self._ids: frozenset[Hashable] | bool | None = False  # False: not worked out yet
        self.round = rnd
        self.state = UNPLANNED  # in :data:`RUN`
        self.outputs: frozenset[Hashable] = frozenset()  # the ids its runResult has a value for
        self.settled = False

    def planned(self, line: int, experiments: Any, rnd: Any) -> None:
        """Its (first) runPlanned."""
        self.plan_line, self.experiments, self.round = line, experiments, rnd
        self._ids = False

    def step(self, kind: str, run: str, breaks: list[tuple[int, str]]) -> str:
        """One of the run's records through :data:`RUN`: its rule, if it breaks one; the state it met."""
        before = self.state
        row = RUN.take(before, kind)
        if row.rule is not None:
            breaks.append((row.rule, row.says.format(kind=kind, run=run, line=self.plan_line)))
        self.state = row.next
        return before

    def planned_ids(self) -> frozenset[Hashable] | None:
        """The plan's experiment ids (None: its experiments are not a list), worked out the first time asked:
        settlements may name one run many times, and a plan may list many experiments."""
        if self._ids is False:
            self._ids = experiment_keys(self.experiments)
        return self._ids  # type: ignore[return-value]


class _Round:
    """What the rules need of one (integer) round."""

    __slots__ = ("accounted", "chosen", "selections", "settlements")

    def __init__(self) -> None:
        self.selections = 0
        self.chosen: frozenset[Hashable] | None = None  # of the first selectDiagnosis
        self.settlements = 0
        self.accounted: frozenset[Hashable] | None = None

    def settled_both(self) -> None:
        """Once a round has its selection and its settlement, their ids are not needed any more:
        a second of either already breaks the rule."""
        if self.selections and self.settlements:
            self.chosen = self.accounted = None


class RuleTally:
    """The rules of §2a over a ledger, one record at a time.

    ``container_prefix`` and ``study`` give rule 4 its names; when either is
    unknown (``None``) rule 4 is not checked here and the caller says why.
    """

    def __init__(self, container_prefix: str | None, study: str | None) -> None:
        self.container_prefix = container_prefix
        self.study = study
        self.first: Broken | None = None
        self.broken_lines = 0
        self.lines = 0
        self._runs: dict[str, _Run] = {}
        self._rounds: dict[int, _Round] = {}
        self._last_line = 0  # the line of the last record added
        self.budget: float | None = None  # studyOpen's, on line 1
        self._balance: float | None = None  # the balance the last charge left (rule 15); None: the chain is lost
        self._nonfinite: set[int] = set()  # lines the reader found a non-finite number in, not added yet
        self.line_one = False  # a record stood on line 1 (rule 7 asks for studyOpen there)
        self.starts = 0  # runStarted records: what rule 4 holds to the containers' names

    def container(self, run: str) -> str | None:
        if self.container_prefix is None or self.study is None:
            return None
        return f"{self.container_prefix}-{self.study}-{run}"

    def add(self, record: Record) -> None:
        self.lines += 1
        if record.kind == START:
            self.starts += 1
        if record.line == 1:
            self.line_one = True
        self._last_line = record.line
        breaks = self._judge(record)
        self._v3(record, breaks)
        if self._nonfinite and record.line in self._nonfinite:
            self._nonfinite.discard(record.line)
            breaks.append((9, "a number that is not finite"))
        if breaks:
            self.broken_lines += 1
            if self.first is None:
                rule, detail = min(breaks, key=lambda b: b[0])
                self.first = Broken(rule, record.line, record.seq, detail)

    def nonfinite(self, line: int, seq: int) -> None:
        """The reader found a number beyond a double (``1e400``), or not a number, in line ``line`` (rule 9).

        Told before its record is added, the record's own breaks and this one count as one line.
        """
        if line > self._last_line:
            self._nonfinite.add(line)
            return
        self.broken_lines += 1
        if self.first is None or self.first.line > line:
            self.first = Broken(9, line, seq, "a number that is not finite")

    def _v3(self, r: Record, breaks: list[tuple[int, str]]) -> None:
        """Rules 7 and 8, and rule 9 on the numbers the checks add up."""
        if r.kind == "studyOpen":
            if r.line != 1:
                breaks.append((7, "studyOpen is not the first line, or not the only one"))
            elif self.study is not None and r.content.get("study") != self.study:
                breaks.append((7, f"studyOpen.study is not {self.study}, the study research.json names"))
        elif r.line == 1:
            breaks.append(
                (7, f"the first line is {r.kind if r.kind in KNOWN_KINDS else 'another kind'}, not studyOpen")
            )
        if not valid_at(r.at):
            breaks.append((8, "at is not an RFC 3339 UTC time"))
        c = r.content
        breaks.extend(
            (9, f"{r.kind if r.kind in KNOWN_KINDS else 'a record'}.{name} is not finite")
            for name in ("amount", "balance", "budget")
            if name in c and is_number(c[name]) and not math.isfinite(c[name])
        )

    # --- one record ------------------------------------------------------------
    def _judge(self, r: Record) -> list[tuple[int, str]]:
        c = r.content
        kind = r.kind
        breaks: list[tuple[int, str]] = []
        if kind in ROUND_KINDS and not is_int(c.get("round")):
            breaks.append(
                (6, f"{kind}.round is {type_name(c.get('round')) if 'round' in c else 'missing'}, not an integer")
            )
        run = c.get("run")
        if kind in RUN_KINDS and not valid_id(run):
            if "run" not in c:
                breaks.append((1, f"{kind} has no run"))
            elif not isinstance(run, str):
                breaks.append((1, f"{kind}.run is {type_name(run)}, not a string"))
            else:
                breaks.append((1, f"{kind}.run does not match the id pattern {ID_PATTERN}"))
            run = None
        if kind == "studyOpen":
            if not is_number(c.get("budget")):
                breaks.append((6, f"studyOpen.budget is {type_name(c.get('budget'))}, not a number"))
            elif self.budget is None and r.line == 1 and math.isfinite(c["budget"]):
                self.budget = self._balance = c["budget"]
            if not isinstance(c.get("config"), dict):
                breaks.append((6, f"studyOpen.config is {type_name(c.get('config'))}, not an object"))
        elif kind == "decision":
            if c.get("name") == SELECT:
                self._selection(c, breaks)
        elif kind == "diagnosisSettlement":
            # Counted for its round even when the run it names is not a run id.
            self._settlement(c, run, breaks)
        elif run is None:
            pass
        elif kind == "runPlanned":
            self._planned(r, run, breaks)
        elif kind == "charge":
            self._charge(c, run, breaks)
        elif kind == "runStarted":
            self._started(c, run, breaks)
        elif kind == "runResult":
            self._result(r, run, breaks)
        return breaks

    def _run(self, run: str) -> _Run:
        state = self._runs.get(run)
        if state is None:
            state = self._runs[run] = _Run(None, None)
        return state

    def _planned(self, r: Record, run: str, breaks: list[tuple[int, str]]) -> None:
        state = self._run(run)
        state.step(PLAN, run, breaks)
        if not is_id_list(r.get("experiments")):
            breaks.append((5, f"runPlanned.experiments of run {run} is not a list of ids"))
        if state.plan_line is None:
            state.planned(r.line, r.get("experiments"), r.get("round"))

    def _charge(self, c: dict[str, Any], run: str, breaks: list[tuple[int, str]]) -> None:
        self._run(run).step(CHARGE, run, breaks)
        wrong = [
            (6, f"charge.{name} is {type_name(c.get(name))}, not a number")
            for name in ("amount", "balance")
            if not is_number(c.get(name))
        ]
        breaks.extend(wrong)
        before, budget = self._balance, self.budget
        if wrong or before is None or budget is None:
            self._balance = None  # the chain is lost: chargedEqualsStarts judges the sum
            return
        amount: float = c["amount"]  # both numbers: ``wrong`` is empty
        balance: float = c["balance"]
        # Rule 15: each charge's balance is the previous balance (the budget's, for the first) minus its amount.
        expected = before - amount
        if not (math.isfinite(expected) and abs(balance - expected) <= 1e-9 * max(1.0, abs(budget))):
            breaks.append((15, f"balance after run {run}'s charge is not the balance before minus its amount"))
        self._balance = balance

    def _started(self, c: dict[str, Any], run: str, breaks: list[tuple[int, str]]) -> None:
        self._run(run).step(START, run, breaks)
        expected = self.container(run)
        if expected is not None and c.get("container") != expected:
            breaks.append((4, f"runStarted.container for run {run} is not {expected}"))

    def _result(self, r: Record, run: str, breaks: list[tuple[int, str]]) -> None:
        state = self._run(run)
        first = state.step(RESULT, run, breaks) not in RESULTED_STATES
        outputs = r.get("outputs")
        if first and isinstance(outputs, dict):
            state.outputs = frozenset(key(k) for k in outputs)
            if any(is_number(v) and not math.isfinite(v) for v in outputs.values()):
                breaks.append((9, f"runResult.outputs of run {run} holds a number that is not finite"))
        if not is_int(r.get("exitCode")):
            breaks.append((6, f"runResult.exitCode is {type_name(r.get('exitCode'))}, not an integer"))
        if not isinstance(r.get("outputs"), dict):
            breaks.append((6, f"runResult.outputs is {type_name(r.get('outputs'))}, not an object"))

    def _round(self, value: Any) -> _Round | None:
        if not is_int(value):
            return None
        state = self._rounds.get(value)
        if state is None:
            state = self._rounds[value] = _Round()
        return state

    def _selection(self, c: dict[str, Any], breaks: list[tuple[int, str]]) -> None:
        rnd = round_text(c.get("round"))
        state = self._round(c.get("round"))
        chosen, problem = chosen_ids(c)
        if problem is not None:
            breaks.append((5, f"selectDiagnosis of round {rnd}: {problem}"))
        if state is None:
            return
        state.selections += 1
        if state.selections > 1:
            breaks.append((5, f"second selectDiagnosis decision for round {rnd}"))
            return
        state.chosen = chosen
        if state.accounted is not None and chosen is not None:
            left = len(chosen - state.accounted)
            if left:
                breaks.append(
                    (
                        5,
                        (
                            f"selectDiagnosis of round {rnd}, after its settlement, chooses "
                            f"{plural(left, 'experiment')} the settlement leaves out"
                        ),
                    )
                )
        state.settled_both()

    def _settlement(self, c: dict[str, Any], run: str | None, breaks: list[tuple[int, str]]) -> None:
        rnd = round_text(c.get("round"))
        state = self._round(c.get("round"))
        if state is not None:
            state.settlements += 1
            if state.settlements > 1:
                breaks.append((5, f"second diagnosisSettlement for round {rnd}"))
        named = self._runs.get(run)  # type: ignore[arg-type]
        if run is not None and (named is None or named.state not in RESULTED_STATES):
            breaks.append((5, f"diagnosisSettlement of round {rnd} names run {run}, which has no runResult before it"))
        accounted, problem = settlement_accounted(c)
        if problem is not None:
            breaks.append((5, f"diagnosisSettlement of round {rnd}: {problem}"))
            return
        assert accounted is not None
        again = named is not None and named.settled  # breaks rule 11 whatever it holds: not compared again
        self._settled_rule_11(c, run, named, state, rnd, breaks)
        if state is not None and state.settlements == 1:
            state.accounted = accounted
        if named is not None and named.plan_line is not None and not again:
            planned = named.planned_ids()
            if planned is None:
                breaks.append(
                    (
                        5,
                        f"runPlanned.experiments of run {run} is not a list of ids: no settlement can account for it",
                    )
                )
            else:
                left = len(planned - accounted)
                if left:
                    breaks.append(
                        (
                            5,
                            (
                                f"diagnosisSettlement of round {rnd} leaves out "
                                f"{plural(left, 'experiment')} of run {run}"
                            ),
                        )
                    )
        if state is not None and state.chosen is not None:
            left = len(state.chosen - accounted)
            if left:
                breaks.append((5, f"diagnosisSettlement of round {rnd} leaves out {plural(left, 'chosen experiment')}"))
        if state is not None:
            state.settled_both()

    def _settled_rule_11(
        self,
        c: dict[str, Any],
        run: str | None,
        named: _Run | None,
        state: _Round | None,
        rnd: str,
        breaks: list[tuple[int, str]],
    ) -> None:
        """Rule 11: the settlement is of its run's round, the run's only one, and judges only what has a value."""
        judged, dropped = judged_and_dropped(c)
        if set(judged) & set(dropped):
            breaks.append((11, f"diagnosisSettlement of round {rnd} both judges and drops an experiment"))
        # §6.9: an experiment is judged at most once and dropped at most once.
        if len(set(judged)) < len(judged):
            breaks.append((11, f"diagnosisSettlement of round {rnd} judges an experiment twice"))
        if len(set(dropped)) < len(dropped):
            breaks.append((11, f"diagnosisSettlement of round {rnd} drops an experiment twice"))
        if named is None or named.plan_line is None:
            return
        if not (is_int(named.round) and is_int(c.get("round")) and named.round == c.get("round")):
            breaks.append((11, f"diagnosisSettlement of round {rnd} settles run {run}, which is of another round"))
        if named.settled:
            breaks.append((11, f"run {run} is settled a second time"))
        named.settled = True
        planned = named.planned_ids() or frozenset()
        chosen = state.chosen if state is not None and state.chosen is not None else frozenset()
        foreign = [j for j in judged if j not in planned and j not in chosen]
        if foreign:
            breaks.append(
                (11, f"diagnosisSettlement of round {rnd} judges {plural(len(foreign), 'id')} run {run} never had")
            )
        unvalued = [j for j in judged if j not in named.outputs]
        if unvalued and named.state in RESULTED_STATES:
            breaks.append(
                (
                    11,
                    (
                        f"diagnosisSettlement of round {rnd} judges {plural(len(unvalued), 'id')} "
                        f"with no output of run {run}"
                    ),
                )
            )
