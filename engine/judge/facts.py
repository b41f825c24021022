"""What the checks are given: the evidence folder read, parsed and interpreted.

Each fact is a value that was validated, or the reason it is not there;
the reading itself is in :mod:`studymon.engine.judge.read`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from studymon.engine.contract import is_int, valid_id
from studymon.engine.folder import KillFolder
from studymon.engine.judge.text import epoch_ns, free_text, rfc3339_epoch
from studymon.engine.judge.verdict import SIGKILL
from studymon.engine.ledger import LedgerIssue
from studymon.engine.safefile import type_name

if TYPE_CHECKING:
    from studymon.engine.judge.events import EventTally


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
        return None, f"{KillFolder.WINDOW}: sinceEpoch is {type_name(obj.get('sinceEpoch'))}, not a time"
    if until is None:
        return None, f"{KillFolder.WINDOW}: untilEpoch is {type_name(obj.get('untilEpoch'))}, not a time"
    if until < since:
        return None, f"{KillFolder.WINDOW}: untilEpoch comes before sinceEpoch"
    targets = obj.get("targets")
    if not isinstance(targets, dict):
        return None, f"{KillFolder.WINDOW}: targets is {type_name(targets)}, not an object"
    results: dict[str, dict[str, Any]] = {}
    for run, entry in targets.items():
        if not isinstance(entry, dict):
            return None, f"{KillFolder.WINDOW}: a target's entry is {type_name(entry)}, not an object"
        seq = entry.get("resultSeq")
        seen = entry.get("resultSeenEpoch")
        if seq is not None and not is_int(seq):
            return None, f"{KillFolder.WINDOW}: a resultSeq is {type_name(seq)}, not an integer"
        if seen is not None and epoch_ns(seen) is None:
            return None, f"{KillFolder.WINDOW}: a resultSeenEpoch is {type_name(seen)}, not a time"
        results[run] = {"resultSeq": seq, "resultSeenNs": epoch_ns(seen)}
    return Window(since, until, results), None


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
        return KillFolder.WINDOW in self.missing

    def required(self) -> tuple[str, ...]:
        return KillFolder.AT_KILL_FILES if self.window_open else KillFolder.FILES

    def incomplete(self) -> list[str]:
        """Why the folder is not complete (for its stage): files missing or unusable."""
        required = self.required()
        missing = [f for f in required if f in self.missing]
        out = [f"missing: {', '.join(missing)}"] if missing else []
        out += [self.problems[f] for f in KillFolder.FILES if f in self.problems]
        return out


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
