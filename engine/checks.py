"""The verdicts: per-study checks from the ledger, per-kill checks from the kill evidence.

Pure functions over data already read; nothing here touches a file or a
process, so the same code judges a live session and an evidence folder
(:mod:`studymon.engine.report` does the reading).  A verdict is ``True`` (holds),
``False`` (fails) or ``None`` (unknown: the evidence needed is not there
yet).  As in Jepsen, false beats unknown beats pass: a check collects every
reason it fails and every reason it cannot tell, and fails if there is any
of the first.

The evidence may have been written by an adversary, so every value is
type-checked before use, and a detail never quotes a value from a file
unless it was validated first (run ids and container names that match their
patterns, integers); free text the console wrote itself (a missed kill's
detail) is shown cut short and stripped of control characters.

Check names and scopes, in table order (contract v2, §4):

* scope ``study``: ``ledgerWellFormed``, ``contractKept``, ``haltedAtExport``,
  ``chargedEqualsStarts``, ``exitedCleanly``, and ``killTriggered`` for an
  armed study;
* scope ``kill <n>``: ``killDelivered``, ``killEvidence``;
* scope ``kill <n> · <run>``: ``sameContainerNoRerun``, ``chargedOnce``,
  ``resultSettledAndFinished``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from studymon.engine.accounts import FULL_STOP, Accounts, RunAccount, round_key
from studymon.engine.clock import parse_rfc3339, rfc3339_ms
from studymon.engine.contract import (
    ContractWatch,
    experiment_keys,
    is_int,
    is_number,
    plural,
    round_text,
    valid_container_name,
    valid_id,
)
from studymon.engine.ledger import LedgerIssue, Record
from studymon.engine.safefile import type_name

STUDY_CHECKS = ("ledgerWellFormed", "contractKept", "haltedAtExport", "chargedEqualsStarts", "exitedCleanly")
KILL_CHECKS = ("killDelivered", "killEvidence")
TARGET_CHECKS = ("sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished")

# The files of kills/<n>/ (contract §5).
KILL_JSON = "kill.json"
AT_KILL = "ledger-at-kill.json"
BEFORE = "container-before.json"
AFTER = "container-after-kill.json"
BEFORE_RESUME = "container-before-resume.json"
READBACK = "container-events.jsonl"
LIVE = "container-events-live.jsonl"
WINDOW = "container-events-window.json"
# Beside the recording when its stream lost events to a restart of the runtime (docs/evidence.md);
# optional: only a console that saw a restart writes it.
RESTARTS = "runtime-restarts.jsonl"
RUNTIME_NAMES = {"docker": "the Docker engine", "process": "the process runtime"}
KILL_FILES = (KILL_JSON, AT_KILL, BEFORE, AFTER, BEFORE_RESUME, READBACK, LIVE, WINDOW)
# Written by the time the controller is resumed; the rest when the window closes.
AT_KILL_FILES = (KILL_JSON, AT_KILL, BEFORE, AFTER, LIVE)
SNAPSHOT_FILES = (BEFORE, AFTER, BEFORE_RESUME)

# Lifecycle actions that mean the target's container was touched, remade or renamed.
FORBIDDEN = ("create", "start", "rename", "kill", "stop")
SIGKILL = "SIGKILL"
WINDOW_OPEN = "window still open; `studymon run --resume` continues it"
SHOWN = 3  # reasons shown per check before "and N more"
# Distinct events remembered to count an event once when both the live recording and
# the read-back hold it; past this many, further ones may be counted twice (still a failure).
SEEN_KEPT = 256


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


class Verdict:
    """Reasons gathered for one check: any failure makes it ✗, else any unknown makes it ?."""

    def __init__(self, name: str, scope: str) -> None:
        self.name = name
        self.scope = scope
        self.failures: list[str] = []
        self.unknowns: list[str] = []
        self.context: list[str] = []

    def fail(self, reason: str) -> None:
        self.failures.append(reason)

    def unknown(self, reason: str) -> None:
        self.unknowns.append(reason)

    def explain(self, reason: str) -> None:
        """A fact that bears on every other reason (a runtime restart): shown first, fail or unknown.

        Alone it makes the check unknown, never a pass.
        """
        self.context.append(reason)

    def listed(self, shown: list[str], total: int, one: str, many: str) -> None:
        """Failures of one kind: the first few, the last of them saying how many more there are."""
        reasons = list(shown)
        more = total - len(reasons)
        if reasons and more > 0:
            reasons[-1] += f" (and {more} more {one if more == 1 else many})"
        for reason in reasons:
            self.fail(reason)

    def check(self, passed: str | Callable[[], str]) -> Check:
        """The verdict; ``passed`` (text, or a function giving it) is the detail when the check holds."""
        ok: bool | None
        if self.failures:
            ok, reasons = False, self.context + self.failures
        elif self.unknowns or self.context:
            ok, reasons = None, self.context + self.unknowns
        else:
            return Check(self.name, True, passed if isinstance(passed, str) else passed(), self.scope)
        shown = "; ".join(reasons[:SHOWN])
        more = f"; and {len(reasons) - SHOWN} more" if len(reasons) > SHOWN else ""
        return Check(self.name, ok, shown + more, self.scope)


# --- showing values from files --------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SIGNAL = re.compile(r"SIG[A-Z0-9]{1,12}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")


def free_text(value: Any, limit: int = 120) -> str:
    """Text the console wrote (a missed kill's detail), safe to print: no control characters, cut short."""
    if not isinstance(value, str):
        return type_name(value)
    text = _CONTROL.sub("?", value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def run_text(value: Any) -> str:
    """A run id for a detail, if it is one (rule 1); the accounts keep any string a ledger gives."""
    return value if valid_id(value) else "a run with an invalid id"


def name_text(value: Any) -> str:
    """A container name for a detail, if it is one; never arbitrary bytes."""
    return value if valid_container_name(value) else "a container"


def short_id(value: Any) -> str:
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_.:-]{1,128}", value):
        return value.split(":")[-1][:12]
    return "an unreadable Id"


def time_text(value: Any) -> str:
    return value if isinstance(value, str) and _TIME.fullmatch(value) else "an unreadable time"


def ns_text(ns: int) -> str:
    return rfc3339_ms(ns / 1e9)


def epoch_ns(value: Any) -> int | None:
    """Epoch seconds (a JSON number) as integer nanoseconds, or None."""
    if not is_number(value):
        return None
    try:
        return round(value * 1e9)
    except (OverflowError, ValueError):  # infinite, not a number, or beyond a float
        return None


def rfc3339_epoch(value: Any) -> float | None:
    if not isinstance(value, str) or not _TIME.fullmatch(value):
        return None
    try:
        return parse_rfc3339(value)
    except (ValueError, OverflowError):
        return None


# --- what the checks are given ----------------------------------------------------


@dataclass(frozen=True)
class StudyFacts:
    """Who the study is: its id and container prefix (from research.json), or why unknown."""

    id: str | None
    container_prefix: str | None
    problem: str | None = None

    @property
    def name_prefix(self) -> str | None:
        """``<containerPrefix>-<ID>-``: every container of the study starts so."""
        if self.id is None or self.container_prefix is None:
            return None
        return f"{self.container_prefix}-{self.id}-"

    def container(self, run: str) -> str | None:
        prefix = self.name_prefix
        return None if prefix is None else prefix + run


@dataclass
class LedgerFacts:
    """What reading the ledger found, beside the records (which went to the accounts)."""

    records: int = 0
    last_seq: int = 0
    issues: list[LedgerIssue] = field(default_factory=list)  # the first few
    issue_count: int = 0
    problem: str | None = None  # the ledger could not be read (to its end): every check that needs it fails
    faults: list[str] = field(default_factory=list)  # ledger-watch.jsonl lines as reasons (the first SHOWN)
    fault_count: int = 0
    watch_problem: str | None = None  # ledger-watch.jsonl could not be read


@dataclass(frozen=True)
class Ending:
    """The last controller's end (launches.jsonl), or why it is not known."""

    ended: bool
    code: Any = None
    signal: Any = None
    problem: str | None = None


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
    if isinstance(signal, str) and _SIGNAL.fullmatch(signal):
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


# --- the kill evidence, interpreted ---------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One entry of kill.json ``targets``."""

    run: str
    cell: Any
    round: Any
    plan_seq: Any
    start_seq: Any
    container: Any


@dataclass
class KillFile:
    """kill.json, its fields checked.

    ``problems`` are reasons for ``killEvidence``, ``delivery`` for
    ``killDelivered`` (the pid, ``signalled``, ``signal``), so one wrong
    field fails one check.
    """

    trigger: Any = None
    at_epoch: float | None = None
    pid: int | None = None
    before_kill_seq: int | None = None
    targets: list[Target] = field(default_factory=list)
    trigger_seq: int | None = None
    signalled: bool = False
    since_ns: int | None = None
    problems: list[str] = field(default_factory=list)
    delivery: list[str] = field(default_factory=list)


def parse_kill(obj: dict[str, Any], study: StudyFacts) -> KillFile:
    k = KillFile()
    trigger = obj.get("trigger")
    if trigger in ("auto", "manual"):
        k.trigger = trigger
    else:
        k.problems.append("kill.json trigger is neither auto nor manual")
    k.at_epoch = rfc3339_epoch(obj.get("at"))
    if k.at_epoch is None:
        k.problems.append("kill.json at is not an RFC 3339 time")
    pid = obj.get("pid")
    if is_int(pid) and pid > 0:
        k.pid = pid
    else:
        k.delivery.append(f"kill.json pid is {type_name(pid)}, not a process id")
    seq = obj.get("beforeKillSeq")
    if is_int(seq) and seq >= 0:
        k.before_kill_seq = seq
    else:
        k.problems.append(f"kill.json beforeKillSeq is {type_name(seq)}, not a seq")
    tseq = obj.get("triggerSeq")
    if is_int(tseq):
        k.trigger_seq = tseq
    elif trigger == "auto":
        k.problems.append(f"kill.json triggerSeq is {type_name(tseq)}, not a seq")
    signalled = obj.get("signalled")
    if signalled is True:
        k.signalled = True
    elif signalled is False:
        k.delivery.append("kill.json says SIGKILL was not sent")
    else:
        k.delivery.append(f"kill.json signalled is {type_name(signalled)}, not a boolean")
    if "signal" in obj and obj.get("signal") != SIGKILL:
        k.delivery.append("kill.json signal is not SIGKILL")
    error = obj.get("captureError")
    if error is not None:
        k.problems.append(f"capture failed while the controller was frozen: {free_text(error)}")
    if "prefix" in obj and study.name_prefix is not None and obj.get("prefix") != study.name_prefix:
        k.problems.append(f"kill.json prefix is not the study's {study.name_prefix}")
    k.since_ns = epoch_ns(obj.get("sinceEpoch"))
    if k.since_ns is None:
        since = rfc3339_epoch(obj.get("since"))
        k.since_ns = None if since is None else round(since * 1e9)
    targets = obj.get("targets")
    if not isinstance(targets, list):
        k.problems.append(f"kill.json targets is {type_name(targets)}, not a list")
        return k
    seen: set[str] = set()
    for i, t in enumerate(targets, 1):
        if not isinstance(t, dict):
            k.problems.append(f"kill.json target {i} is {type_name(t)}, not an object")
            continue
        run = t.get("run")
        if not valid_id(run):
            k.problems.append(f"kill.json target {i} has no valid run id")
            continue
        if run in seen:
            k.problems.append(f"kill.json lists run {run} twice")
            continue
        seen.add(run)
        k.targets.append(
            Target(run, t.get("cell"), t.get("round"), t.get("planSeq"), t.get("startSeq"), t.get("container"))
        )
    return k


@dataclass
class Window:
    """container-events-window.json: the window's bounds and each target's result."""

    since_ns: int
    until_ns: int
    results: dict[str, dict[str, Any]]  # run -> {"resultSeq": int|None, "resultSeenNs": int|None}


def parse_window(obj: dict[str, Any]) -> tuple[Window | None, str | None]:
    """The window, or why the file cannot be used (for every check that needs it)."""
    since = epoch_ns(obj.get("sinceEpoch"))
    until = epoch_ns(obj.get("untilEpoch"))
    if since is None:
        return None, f"{WINDOW}: sinceEpoch is {type_name(obj.get('sinceEpoch'))}, not a time"
    if until is None:
        return None, f"{WINDOW}: untilEpoch is {type_name(obj.get('untilEpoch'))}, not a time"
    if until < since:
        return None, f"{WINDOW}: untilEpoch comes before sinceEpoch"
    targets = obj.get("targets")
    if not isinstance(targets, dict):
        return None, f"{WINDOW}: targets is {type_name(targets)}, not an object"
    results: dict[str, dict[str, Any]] = {}
    for run, entry in targets.items():
        if not isinstance(entry, dict):
            return None, f"{WINDOW}: a target's entry is {type_name(entry)}, not an object"
        seq = entry.get("resultSeq")
        seen = entry.get("resultSeenEpoch")
        if seq is not None and not is_int(seq):
            return None, f"{WINDOW}: a resultSeq is {type_name(seq)}, not an integer"
        if seen is not None and epoch_ns(seen) is None:
            return None, f"{WINDOW}: a resultSeenEpoch is {type_name(seen)}, not a time"
        results[run] = {"resultSeq": seq, "resultSeenNs": epoch_ns(seen)}
    return Window(since, until, results), None


# --- container lifecycle events ---------------------------------------------------------


def event_ns(event: dict[str, Any]) -> int | None:
    tn = event.get("timeNano")
    if is_int(tn):
        return tn
    t = event.get("time")
    return epoch_ns(t)


def _exit_code(value: Any) -> int | None:
    if is_int(value):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,10}", value):
        return int(value)
    return None


@dataclass
class TargetWatch:
    """The lifecycle events that concern one target, within its window."""

    run: str
    name: str
    ids: frozenset[str]  # the Ids its snapshots show
    until_ns: int | None  # when its result was seen; None while the window is open
    forbidden: list[tuple[str, int]] = field(default_factory=list)  # (action, time), the first few
    forbidden_count: int = 0  # distinct ones (counted up to SEEN_KEPT)
    seen: set[tuple[Any, ...]] = field(default_factory=set)
    dies: dict[tuple[Any, ...], tuple[Any, int | None]] = field(default_factory=dict)  # key -> (Id, exit), at most 3


class EventTally:
    """Container lifecycle events, fed one at a time from the live recording and the read-back.

    Kept: for each target, its forbidden actions and its distinct ``die``
    events (the same event in both files is one: deduplicated by Id, action
    and time; two distinct dies already fail, so at most three are kept);
    the study containers created or started in the window for runs not
    planned after the kill; gap lines; lines that are not events.  Memory
    stays bounded whatever the files hold.
    """

    def __init__(
        self,
        since_ns: int | None,
        until_ns: int | None,
        name_prefix: str | None,
        allowed: frozenset[str],
        targets: list[TargetWatch],
    ) -> None:
        self.since_ns = since_ns
        self.until_ns = until_ns
        self.name_prefix = name_prefix
        self.allowed = allowed
        self.targets = targets
        self._target_names = frozenset(t.name for t in targets)
        # Targets by name and by Id: an event finds its targets at once, however many there are.
        self._by_run = {t.run: t for t in targets}
        self._by_name: dict[str, list[TargetWatch]] = {}
        self._by_id: dict[str, list[TargetWatch]] = {}
        for t in targets:
            self._by_name.setdefault(t.name, []).append(t)
            for i in t.ids:
                self._by_id.setdefault(i, []).append(t)
        self.gaps = 0
        self.restarts: list[tuple[str, str, int, str]] = []  # (runtime, from, from_ns, to), the first few
        self.restart_count = 0
        self.malformed: list[str] = []
        self.malformed_count = 0
        self.foreign: list[tuple[str, str, int]] = []  # (name, action, time), the first few
        self.foreign_count = 0
        self._seen: set[tuple[Any, ...]] = set()

    def watch(self, run: str) -> TargetWatch | None:
        return self._by_run.get(run)

    def bad_line(self, where: str, why: str) -> None:
        self.malformed_count += 1
        if len(self.malformed) < SHOWN:
            self.malformed.append(f"{where}: {why}")

    def restart(self, value: Any, where: str) -> None:
        """A line of runtime-restarts.jsonl: the runtime restarted between ``from`` and ``to``."""
        if not isinstance(value, dict):
            self.bad_line(where, f"{type_name(value)}, not a runtime restart")
            return
        runtime, start, end = value.get("runtime"), value.get("from"), value.get("to")
        start_epoch, end_epoch = rfc3339_epoch(start), rfc3339_epoch(end)
        if (
            not isinstance(runtime, str)
            or runtime not in RUNTIME_NAMES
            or not isinstance(start, str)
            or not isinstance(end, str)
            or start_epoch is None
            or end_epoch is None
            or end_epoch < start_epoch
        ):
            self.bad_line(where, "not a runtime restart (runtime, from, to)")
            return
        self.restart_count += 1
        if len(self.restarts) < SHOWN:
            self.restarts.append((runtime, start, int(start_epoch * 1e9), end))

    def restarts_for(self, watch: TargetWatch | None) -> list[str]:
        """What to say of the restarts that began before ``watch``'s result was seen (all of them without one)."""
        until = watch.until_ns if watch is not None else None
        shown = [
            f"{RUNTIME_NAMES[runtime]} restarted between {start} and {end}: what it did to the "
            "containers then is not in the live recording"
            for runtime, start, start_ns, end in self.restarts
            if until is None or start_ns <= until
        ]
        more = self.restart_count - len(self.restarts)
        if shown and more > 0:
            shown[-1] += f" (and {plural(more, 'more restart')})"
        return shown

    def add(self, value: Any, where: str, live: bool = True) -> None:
        if not isinstance(value, dict):
            self.bad_line(where, f"{type_name(value)}, not an event")
            return
        if "gap" in value:
            if live and isinstance(value["gap"], dict):
                self.gaps += 1
            else:
                self.bad_line(where, "a gap line that is not a gap")
            return
        kind = value.get("Type")
        if kind is not None and kind != "container":
            return
        action = value.get("Action", value.get("status"))
        if not isinstance(action, str):
            self.bad_line(where, "an event without an Action")
            return
        ns = event_ns(value)
        if ns is None:
            self.bad_line(where, "an event without a time")
            return
        actor = value.get("Actor", {})
        attrs = actor.get("Attributes", {}) if isinstance(actor, dict) else None
        if not isinstance(attrs, dict):
            self.bad_line(where, "an event whose Actor is not an object")
            return
        if self.since_ns is not None and ns < self.since_ns:
            return
        verb = action.split(":", 1)[0]
        cid = actor.get("ID") if isinstance(actor.get("ID"), str) else value.get("id")
        cid = cid if isinstance(cid, str) else None
        name = attrs.get("name")
        name = name.lstrip("/") if isinstance(name, str) else None
        old = attrs.get("oldName")
        old = old.lstrip("/") if isinstance(old, str) else None
        # The targets this event is about: by name, by Id, or renamed away from its name.
        concerned = {id(t): t for t in self._by_name.get(name, ())}  # type: ignore[arg-type]
        concerned.update((id(t), t) for t in self._by_id.get(cid, ()))  # type: ignore[arg-type]
        if verb == "rename":
            concerned.update((id(t), t) for t in self._by_name.get(old, ()))  # type: ignore[arg-type]
        for t in concerned.values():
            if t.until_ns is not None and ns > t.until_ns:
                continue
            k = (cid, verb, ns)
            if verb in FORBIDDEN and k not in t.seen:
                if len(t.seen) < SEEN_KEPT:
                    t.seen.add(k)
                t.forbidden_count += 1
                if len(t.forbidden) < SHOWN:
                    t.forbidden.append((verb, ns))
            elif verb == "die" and k not in t.dies and len(t.dies) < 3:
                t.dies[k] = (cid, _exit_code(attrs.get("exitCode")))
        if (
            verb in ("create", "start")
            and self.name_prefix is not None
            and name is not None
            and name.startswith(self.name_prefix)
            and name not in self.allowed
            and name not in self._target_names
            and (self.until_ns is None or ns <= self.until_ns)
            and (cid, verb, ns) not in self._seen
        ):
            if len(self._seen) < SEEN_KEPT:
                self._seen.add((cid, verb, ns))
            self.foreign_count += 1
            if len(self.foreign) < SHOWN:
                self.foreign.append((name, verb, ns))


def planned_after(acc: Accounts, study: StudyFacts, seq: int | None) -> frozenset[str]:
    """Container names the study may create in a kill's window: runs not yet started at ``seq``.

    A run planned after the kill, and also one planned (and perhaps charged)
    before it but not started by then: §1 has the resume start it.  Neither
    is a target; a target's own name is judged apart and never allowed.
    """
    prefix = study.name_prefix
    if prefix is None or seq is None:
        return frozenset()
    return frozenset(
        prefix + a.run
        for a in acc.runs.values()
        if a.plan is not None and (a.plan.seq > seq or not any(st.seq <= seq for st in a.starts))
    )


# --- per kill ----------------------------------------------------------------------------


@dataclass
class KillEvidence:
    """What kills/<n>/ holds, read and interpreted, for the checks of one kill."""

    number: int
    problems: dict[str, str] = field(default_factory=dict)  # file -> why it cannot be used (it is there)
    missing: set[str] = field(default_factory=set)  # files that are not there at all
    kill: KillFile | None = None
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict)  # file -> {name: inspect | None}
    window: Window | None = None
    at_kill: str | None = None  # why ledger-at-kill.json is not the ledger as it stood (None: it is)
    tally: EventTally | None = None  # None when the events could not be judged
    keeper_end: dict[str, Any] | None = None  # launches.jsonl end line of kill.json's pid
    launches_problem: str | None = None
    missing_kills: list[int] = field(default_factory=list)  # lower kill numbers with no folder

    @property
    def scope(self) -> str:
        return f"kill {self.number}"

    def problem(self, file: str) -> str | None:
        """Why ``file`` cannot be used (missing, or there but unusable), or None."""
        if file in self.missing:
            return f"{file}: missing"
        return self.problems.get(file)

    @property
    def window_open(self) -> bool:
        """The window file is not there (yet): the resumed controller ended before every result."""
        return WINDOW in self.missing

    def required(self) -> tuple[str, ...]:
        return AT_KILL_FILES if self.window_open else KILL_FILES

    def incomplete(self) -> list[str]:
        """Why the folder is not complete (for its stage): files missing or unusable."""
        required = self.required()
        missing = [f for f in required if f in self.missing]
        out = [f"missing: {', '.join(missing)}"] if missing else []
        out += [self.problems[f] for f in KILL_FILES if f in self.problems]
        return out


def kill_delivered(ev: KillEvidence) -> Check:
    v = Verdict("killDelivered", ev.scope)
    k = ev.kill
    if k is None:
        v.fail(ev.problem(KILL_JSON) or f"{KILL_JSON}: not read")
    else:
        _delivery(v, ev, k)
    return v.check(lambda: f"SIGKILL sent to pid {k.pid}; its keeper recorded the end by SIGKILL")  # type: ignore[union-attr]


def _delivery(v: Verdict, ev: KillEvidence, k: KillFile) -> None:
    for reason in k.delivery:
        v.fail(reason)
    if k.pid is not None:
        end = ev.keeper_end
        if ev.launches_problem is not None:
            v.fail(ev.launches_problem)
        elif end is None:
            v.fail(f"launches.jsonl has no end line for pid {k.pid}")
        elif end.get("signal") != SIGKILL:
            signal, code = end.get("signal"), end.get("code")
            if isinstance(signal, str) and _SIGNAL.fullmatch(signal):
                how = f"says {signal}"
            elif is_int(code):
                how = f"says exit {code}"
            else:
                how = "has no status"
            v.fail(f"the keeper's end line for pid {k.pid} {how}, not SIGKILL")


def kill_evidence(ev: KillEvidence, acc: Accounts, ledger: LedgerFacts) -> Check:
    v = Verdict("killEvidence", ev.scope)
    for reason in ev.incomplete():
        v.fail(reason)
    for n in ev.missing_kills:
        v.fail(f"kills/{n}/ is missing: kills are numbered from 1")
    k = ev.kill
    if k is None:
        return v.check(lambda: "")  # never shown: kill.json is missing or unusable, a reason above
    for reason in k.problems:
        v.fail(reason)
    seq = k.before_kill_seq
    if ev.at_kill is not None:
        v.fail(ev.at_kill)
    # The window opens where kill.json says the kill's recording did (the same moment in both files,
    # to the microsecond): a later start would hide what happened just after the kill.
    if ev.window is not None and k.since_ns is not None and abs(ev.window.since_ns - k.since_ns) > 1000:
        v.fail(f"{WINDOW} starts at another time than kill.json's since")
    if ledger.problem is not None:
        v.fail(f"the ledger cannot be judged: {ledger.problem}")
    elif seq is not None:
        if seq > acc.last_seq:
            v.fail(f"beforeKillSeq {seq} is past the ledger's end (seq {acc.last_seq})")
        if k.trigger == "auto" and k.trigger_seq is not None and k.trigger_seq > seq:
            v.fail(f"triggerSeq {k.trigger_seq} comes after beforeKillSeq {seq}")
        listed = {t.run: t for t in k.targets}
        flying = {a.run: a for a in acc.in_flight_at(seq)}
        for run in sorted(set(flying) - set(listed)):
            v.fail(f"kill.json omits run {run_text(run)}, in flight at seq {seq}")
        for run in sorted(set(listed) - set(flying)):
            acct = acc.runs.get(run)
            early = [r.seq for r in acct.results if r.seq <= seq] if acct else []
            if early:
                v.fail(f"target {run} had its result at seq {early[0]}, before the kill (seq {seq})")
            else:
                v.fail(f"kill.json lists run {run}, not in flight at seq {seq}")
        for run in sorted(set(listed) & set(flying)):
            wrong = _target_disagrees(listed[run], flying[run])
            if wrong:
                v.fail(f"kill.json's target {run} disagrees with the ledger on {', '.join(wrong)}")
    runs = ", ".join(t.run for t in k.targets) or "no run"
    stage = f"; {WINDOW_OPEN}" if ev.window_open else ""
    return v.check(
        f"complete; targets ({runs}) are the runs in flight at seq {seq}; "
        f"ledger-at-kill.json is the ledger to that seq{stage}"
    )


def _target_disagrees(t: Target, acct: RunAccount) -> list[str]:
    plan = acct.plan
    facts = {
        "cell": (t.cell, acct.cell),
        "round": (t.round, acct.round),
        "planSeq": (t.plan_seq, plan.seq if plan else None),
        # A run in flight has a start.
        "startSeq": (t.start_seq, acct.starts[0].seq),
        "container": (t.container, acct.starts[0].get("container")),
    }
    return [name for name, (claimed, known) in facts.items() if not _same(claimed, known)]


def _same(a: Any, b: Any) -> bool:
    """JSON equality that tells 1 from 1.0 from True."""
    return type(a) is type(b) and a == b


def kill_checks(ev: KillEvidence, acc: Accounts, study: StudyFacts, ledger: LedgerFacts) -> list[Check]:
    """Every check of one kill: ``killDelivered``, ``killEvidence``, then three per target."""
    checks = [kill_delivered(ev), kill_evidence(ev, acc, ledger)]
    if ev.kill is not None and ev.kill.targets:
        seq = ev.kill.before_kill_seq
        plans = plans_after(acc, seq) if seq is not None else None
        for t in ev.kill.targets:
            checks += target_checks(ev, t, acc, study, ledger, plans)
    return checks


# --- per target ------------------------------------------------------------------------------


def target_checks(
    ev: KillEvidence,
    t: Target,
    acc: Accounts,
    study: StudyFacts,
    ledger: LedgerFacts,
    plans: dict[tuple[Any, ...], list[RunAccount]] | None = None,
) -> list[Check]:
    scope = f"{ev.scope} · {t.run}"
    acct = acc.runs.get(t.run)
    return [
        same_container_no_rerun(ev, t, acct, study, ledger, scope),
        charged_once(ev, t, acct, acc, ledger, scope, plans),
        result_settled_and_finished(ev, t, acct, acc, ledger, scope),
    ]


def snapshot_entry(ev: KillEvidence, file: str, name: str) -> tuple[dict[str, Any] | None, str | None]:
    """The target's inspect in one snapshot file, or why there is none."""
    problem = ev.problem(file)
    if problem is not None:
        return None, problem
    entry = ev.snapshots[file].get(name)  # a file without a problem was read
    if entry is None:
        return None, f"{file} has no {name}"
    if not isinstance(entry, dict):
        return None, f"{file}: the entry for {name} is {type_name(entry)}, not an object"
    return entry, None


def same_container_no_rerun(
    ev: KillEvidence, t: Target, acct: RunAccount | None, study: StudyFacts, ledger: LedgerFacts, scope: str
) -> Check:
    v = Verdict("sameContainerNoRerun", scope)
    name = study.container(t.run)
    if name is None:
        v.fail(f"the container names cannot be checked: {study.problem}")
        return v.check(lambda: "")  # never shown: it failed
    if t.container != name:
        v.fail(f"the target's container in kill.json is not {name}")
    if ledger.problem is not None:
        v.fail(f"the ledger cannot be judged: {ledger.problem}")

    # One container throughout: the same Id and StartedAt in every snapshot, running at the kill
    # (or exited just before it, with its result still to be written).
    ids: dict[str, Any] = {}
    started: dict[str, Any] = {}
    finished: dict[str, Any] = {}
    exited_at_kill = False
    exited_code: Any = None
    window_since = ev.window.since_ns if ev.window is not None else ev.kill.since_ns if ev.kill else None
    for file in SNAPSHOT_FILES:
        if file == BEFORE_RESUME and ev.window_open and file in ev.missing:
            continue  # not resumed yet
        entry, why = snapshot_entry(ev, file, name)
        if entry is None:
            v.fail(why or file)
            continue
        state = entry.get("State")
        state = state if isinstance(state, dict) else {}
        if not (isinstance(entry.get("Id"), str) and entry.get("Id")):
            v.fail(f"{file}: {name} has no Id")
        if not (isinstance(state.get("StartedAt"), str) and state.get("StartedAt")):
            v.fail(f"{file}: {name} has no StartedAt")
        ids[file] = entry.get("Id")
        started[file] = state.get("StartedAt")
        if file == BEFORE and state.get("Running") is not True and state.get("Status") == "exited":
            # The run ended just before the kill and its result was not written yet: its
            # die lies before the window, and the snapshots must keep that one exit.
            exited_code = state.get("ExitCode")
            exited_at_kill = True
            finished[file] = state.get("FinishedAt")
            continue
        if (
            file == AFTER
            and not exited_at_kill
            and state.get("Running") is False
            and state.get("Status") == "exited"
            and _finished_before(state, window_since)
        ):
            # The snapshot before the kill was read as the run ended (the runtime had not
            # yet written its exit): it finished before the window, so its die lies before
            # it too, as if the first snapshot had shown it exited.
            exited_code = state.get("ExitCode")
            exited_at_kill = True
            finished[file] = state.get("FinishedAt")
            continue
        if exited_at_kill and file != BEFORE:
            if state.get("Running") is not False or state.get("ExitCode") != exited_code:
                v.fail(f"{file}: {name} exited before the kill, and here it is not that same exited container")
            finished[file] = state.get("FinishedAt")
        elif file == BEFORE and state.get("Running") is not True:
            v.fail(f"{file}: {name} is not running")
        elif file == AFTER and state.get("Running") is not True and state.get("Status") != "exited":
            # The run may end on its own between SIGKILL and this snapshot: the same
            # container (Id, StartedAt) having exited is its one die, judged below.
            v.fail(f"{file}: {name} is neither running nor exited")
    if len({repr(i) for i in ids.values()}) > 1:
        v.fail(f"the Id of {name} changes across {', '.join(ids)}")
    if len({repr(s) for s in started.values()}) > 1:
        v.fail(f"the StartedAt of {name} changes across {', '.join(started)}")
    if len({repr(f) for f in finished.values()}) > 1:
        v.fail(f"the FinishedAt of {name} changes across {', '.join(finished)}")
    the_id = ids.get(BEFORE)

    # The window: when the target's result was seen.
    window = ev.window
    if WINDOW in ev.problems:
        v.fail(ev.problems[WINDOW])
    elif ev.window_open:
        v.unknown(WINDOW_OPEN)
    elif window is not None:
        entry = window.results.get(t.run)
        if entry is None:
            v.fail(f"{WINDOW} has no entry for {t.run}")
        elif entry["resultSeenNs"] is None:
            v.fail(f"{WINDOW} gives no time for {t.run}'s result")
        elif not window.since_ns <= entry["resultSeenNs"] <= window.until_ns:
            v.fail(f"{WINDOW}: {t.run}'s result was seen outside the window")

    # The lifecycle events.
    for file in (LIVE, READBACK):
        problem = ev.problem(file)
        if problem is not None and not (file == READBACK and ev.window_open and file in ev.missing):
            v.fail(problem)
    tally = ev.tally
    watch = None
    if tally is not None:
        watch = tally.watch(t.run)
        v.listed(tally.malformed, tally.malformed_count, "line that is not an event", "lines that are not events")
        v.listed(
            [
                f"{action} of {name_text(other)} at {ns_text(ns)} in the window, "
                "and its run was not waiting to start at the kill"
                for other, action, ns in tally.foreign
            ],
            tally.foreign_count,
            "container of the study made in the window",
            "containers of the study made in the window",
        )
        if tally.gaps:
            v.unknown(f"the live recording has {plural(tally.gaps, 'gap')}")
        for restart in tally.restarts_for(watch):
            v.explain(restart)
    else:
        v.unknown("the lifecycle events were not judged")  # never a pass without them
    if watch is not None:
        v.listed(
            [f"{action} of {name} at {ns_text(ns)} in its window" for action, ns in watch.forbidden],
            watch.forbidden_count,
            "such event",
            "such events",
        )
        dies = list(watch.dies.values())
        if exited_at_kill:
            if dies:
                v.fail(f"{name} exited before the kill, and a die of it comes in its window")
            results = acct.results if acct else []
            if len(results) == 1:
                code = results[0].get("exitCode")
                if not is_int(code) or not is_int(exited_code) or code != exited_code:
                    v.fail(f"{name} exited {exited_code!r} before the kill, runResult says {code!r}")
            elif not ev.window_open:
                v.fail(f"{plural(len(results), 'runResult')} to compare the exit code with")
        elif len(dies) > 1:
            v.fail(f"{'more than 2' if len(dies) > 2 else '2'} dies of {name} in its window")
        elif not dies:
            if ev.window_open:
                v.unknown(f"no die of {name} yet")
            else:
                v.fail(f"no die of {name} in its window")
        else:
            die_id, die_code = dies[0]
            if the_id is not None and die_id != the_id:
                v.fail(f"the die is of container {short_id(die_id)}, not of {short_id(the_id)}")
            results = acct.results if acct else []
            if len(results) == 1:
                code = results[0].get("exitCode")
                if not is_int(code):
                    v.fail(f"runResult's exitCode is {type_name(code)}, not an integer")
                elif die_code is None:
                    v.fail("the die has no exitCode")
                elif die_code != code:
                    v.fail(f"the die says exit {die_code}, runResult says {code}")
            elif not ev.window_open:
                v.fail(f"{plural(len(results), 'runResult')} to compare the die's exit code with")
    n_dies = len(watch.dies) if watch else 0
    return v.check(
        f"{name}: one Id ({short_id(the_id)}) and StartedAt in {len(ids)} snapshots, running at the kill; "
        f"no create/start/rename/kill/stop and {plural(n_dies, 'die')} in its window, exit as runResult; "
        "no other container of the study made in the window"
    )


def _finished_before(state: dict[str, Any], since_ns: int | None) -> bool:
    """Whether a snapshot's ``FinishedAt`` lies before the window's start."""
    text = state.get("FinishedAt")
    if since_ns is None or not isinstance(text, str):
        return False
    try:
        finished = parse_rfc3339(text)
    except (ValueError, OverflowError):
        return False
    return 0 < finished * 1e9 < since_ns


def _experiments(value: Any) -> Any:
    """A plan's experiments compared as a multiset, whatever they hold."""
    if isinstance(value, list):
        return tuple(sorted(orjson.dumps(x, option=orjson.OPT_SORT_KEYS) for x in value))
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def plans_after(acc: Accounts, seq: int) -> dict[tuple[Any, ...], list[RunAccount]]:
    """The runs that may start after ``seq``, by what they are (purpose, cell, round, experiments).

    Those planned after it, and those planned before it but started only
    after it (§1 has a resume start a run that was not started): a twin of a
    target among them does its work again.  Built once per kill, so that
    looking for a target's repeat costs the same whatever the number of
    targets.
    """
    out: dict[tuple[Any, ...], list[RunAccount]] = {}
    for a in acc.runs.values():
        if a.plan is None:
            continue
        started_after = bool(a.starts) and all(st.seq > seq for st in a.starts)
        if a.plan.seq > seq or started_after:
            out.setdefault(_plan_key(a.plan), []).append(a)
    return out


def charged_once(
    ev: KillEvidence,
    t: Target,
    acct: RunAccount | None,
    acc: Accounts,
    ledger: LedgerFacts,
    scope: str,
    plans: dict[tuple[Any, ...], list[RunAccount]] | None = None,
) -> Check:
    v = Verdict("chargedOnce", scope)
    if ledger.problem is not None:
        v.fail(f"the ledger cannot be judged: {ledger.problem}")
    charges = len(acct.charges) if acct else 0
    starts = len(acct.starts) if acct else 0
    if charges != 1 or starts != 1:
        v.fail(f"{plural(charges, 'charge')}, {starts} runStarted")
    seq = ev.kill.before_kill_seq if ev.kill else None
    plan = acct.plan if acct else None
    if seq is None:
        v.fail("kill.json has no beforeKillSeq: a repeat after the kill cannot be looked for")
    elif plan is None:
        v.fail(f"run {t.run} has no runPlanned")
    else:
        if plans is None:
            plans = plans_after(acc, seq)
        repeats = [a for a in plans.get(_plan_key(plan), []) if a is not acct]
        for a in repeats[:SHOWN]:
            when = "after the kill" if a.plan.seq > seq else "before the kill, started after it"  # type: ignore[union-attr]
            v.fail(
                f"run {run_text(a.run)} (planned at seq {a.plan.seq}, {when}) repeats it: "  # type: ignore[union-attr]
                "same purpose, cell, round and experiments"
            )
    return v.check(f"1 charge, 1 runStarted; no run planned after the kill repeats {t.run}")


def _canon(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _plan_key(plan: Record) -> tuple[Any, ...]:
    """What makes two plans the same run: purpose, cell, round and experiments (as JSON, so 1 is not 1.0)."""
    return (
        _canon(plan.get("purpose")),
        _canon(plan.get("object")),
        _canon(plan.get("round")),
        _experiments(plan.get("experiments")),
    )


def result_settled_and_finished(
    ev: KillEvidence, t: Target, acct: RunAccount | None, acc: Accounts, ledger: LedgerFacts, scope: str
) -> Check:
    v = Verdict("resultSettledAndFinished", scope)
    # While the window is open, what has not happened yet is unknown; what happened wrong fails.
    pending = v.unknown if ev.window_open else v.fail
    if ledger.problem is not None:
        v.fail(f"the ledger cannot be judged: {ledger.problem}")
    seq = ev.kill.before_kill_seq if ev.kill else None
    results = acct.results if acct else []
    result: Record | None = None
    if not results:
        pending(f"no runResult for {t.run}")
    elif len(results) > 1:
        v.fail(f"{len(results)} runResult for {t.run}")
    else:
        result = results[0]
        if seq is None:
            v.fail("kill.json has no beforeKillSeq to place the result after")
        elif result.seq <= seq:
            v.fail(f"the result (seq {result.seq}) is not after the kill (seq {seq})")
    if WINDOW in ev.problems:
        v.fail(ev.problems[WINDOW])
    elif ev.window_open:
        v.unknown(WINDOW_OPEN)
    elif ev.window is not None:
        entry = ev.window.results.get(t.run)
        closed_at = entry["resultSeq"] if entry else None
        if closed_at is None:
            v.fail(f"the window closed without {t.run}'s result")
        elif result is not None and result.seq > closed_at:
            v.fail(f"the result (seq {result.seq}) comes after the window closed (at result seq {closed_at})")

    if acct is not None and acct.plan is not None and acct.purpose == "diagnosis":
        _settled(v, pending, t.run, acct, acct.plan, result, acc)
    if not acc.halted_at_export():
        pending("the study did not end halted at export")
    rnd = round_text(acct.round) if acct else "?"
    where = f"seq {result.seq}" if result else "?"
    settled = "; settled, then proposal " + rnd + " opened" if acct and acct.purpose == "diagnosis" else ""
    return v.check(f"one result at {where}, after the kill and inside the window{settled}; halted at export")


def _settled(
    v: Verdict, pending: Any, run: str, acct: RunAccount, plan: Record, result: Record | None, acc: Accounts
) -> None:
    """The diagnosis part: one settlement of the round, naming the run, after its result, complete."""
    if not is_int(acct.round):
        v.fail(f"the round of {run} is {type_name(acct.round)}, not an integer")
        return
    rnd = acct.round
    s = acc.settlements.get(round_key(rnd))
    if s is None:
        pending(f"no diagnosisSettlement for round {rnd}")
        return
    if s.count > 1:
        v.fail(f"{s.count} diagnosisSettlement for round {rnd}")
    if s.run != run:
        v.fail(f"the settlement of round {rnd} names {s.run if valid_id(s.run) else 'another run'}, not {run}")
    if result is None:
        if not acct.results:
            v.fail(f"the settlement of round {rnd} (seq {s.seq}) comes with no runResult for {run}")
    elif s.seq <= result.seq:
        v.fail(f"the settlement (seq {s.seq}) comes before the result (seq {result.seq})")
    if s.accounted is None:
        v.fail(f"the settlement of round {rnd}: {s.problem}")
    else:
        planned = experiment_keys(plan.get("experiments"))
        if planned is None:
            v.fail(f"runPlanned.experiments of {run} is not a list")
        elif planned - s.accounted:
            v.fail(f"the settlement leaves out {plural(len(planned - s.accounted), 'experiment')} of {run}")
        sel = acc.selections.get(round_key(rnd))
        if sel is not None:
            if sel.chosen is None:
                v.fail(f"selectDiagnosis of round {rnd}: {sel.problem}")
            elif sel.chosen - s.accounted:
                v.fail(f"the settlement leaves out {plural(len(sel.chosen - s.accounted), 'chosen experiment')}")
    opened = acc.proposal_opened.get(round_key(rnd))
    if opened is None or opened <= s.seq:
        pending(f"no stageOpen proposal {rnd} after the settlement (seq {s.seq})")


# --- killTriggered ----------------------------------------------------------------------------


@dataclass
class Arming:
    """What arms.jsonl says: each ``fired`` (kill number, run), ``missed`` details, and the end state."""

    fired: list[tuple[Any, Any]] = field(default_factory=list)  # (kill, run), the first few
    missed: list[Any] = field(default_factory=list)  # (run, detail), the first few
    armed_at_end: bool = False
    problem: str | None = None  # arms.jsonl could not be read
    bad_lines: int = 0

    def is_quiet(self) -> bool:
        """Nothing happened that killTriggered judges: no kill fired or missed, not armed at the end, all read."""
        return not (self.fired or self.missed or self.armed_at_end or self.problem or self.bad_lines)


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
