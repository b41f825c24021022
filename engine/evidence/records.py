"""The records of the evidence folder, typed: what the engine writes (``to_json``) and the judge reads (``parse``).

One class per kind of record.  ``parse`` takes a JSON value as found in a
file an adversary may have written and gives the record, or the reason it
is not one; every field the judge uses is validated there, once, so a check
never meets a value of the wrong type.  Times are validated as dates
(``0 < t``, before the year 10 000), never trusted as given.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from studymon.engine.contract.folder import KillFolder
from studymon.engine.contract.killpoint import point_text
from studymon.engine.contract.rules import is_int, is_number, valid_id
from studymon.engine.contract.targets import IN_FLIGHT, TARGET_CLASSES
from studymon.engine.io.clock import rfc3339_ms, rfc3339_ns, utc_epoch
from studymon.engine.io.quoting import free_text
from studymon.engine.io.safefile import type_name

# Epoch seconds of 10000-01-01T00:00:00Z: a later time cannot be a date the console wrote.
LAST_DATE = 253_402_300_800.0
_SIGNAL = re.compile(r"SIG[A-Z0-9]{1,12}")


def epoch(value: Any) -> float | None:
    """Epoch seconds (a JSON number) that can be a date, or None."""
    if not is_number(value) or not math.isfinite(value) or not 0 < value < LAST_DATE:
        return None
    return float(value)


def epoch_ns(value: Any) -> int | None:
    """Epoch seconds that can be a date, as integer nanoseconds, or None."""
    seconds = epoch(value)
    return None if seconds is None else round(seconds * 1e9)


def time_epoch(value: Any) -> float | None:
    """An RFC 3339 UTC time as epoch seconds, if it is one and can be a date; else None."""
    seconds = utc_epoch(value)
    return seconds if seconds is not None and 0 < seconds < LAST_DATE else None


def same_json(a: Any, b: Any) -> bool:
    """JSON equality that tells ``1`` from ``1.0`` from ``true``: the same values of the same types, all levels.

    Mostly asked of two copies of a record that agree (``ledger-at-kill.json``
    beside the ledger), so that is tried first in C: Python's equality (which
    tells ``null`` from a number, not ``1`` from ``true``) and orjson's text of
    each (which tells the types apart: ``1``, ``1.0``, ``true``).  Where either
    says no, or orjson cannot write a value (an integer past 64 bits), the
    values are compared level by level.
    """
    try:
        if a == b and orjson.dumps(a) == orjson.dumps(b):
            return True
    except (TypeError, orjson.JSONEncodeError, RecursionError):
        pass
    return _same_json(a, b)


def _same_json(a: Any, b: Any) -> bool:
    """Level by level, over a stack: the copies may nest as deep as the ledger's parser let them."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((v, y[k]) for k, v in x.items())
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x is not y and x != y:  # one object is itself (as Python's equality of lists has it: a NaN)
            return False
    return True


def signal_name(value: Any) -> str | None:
    return value if isinstance(value, str) and _SIGNAL.fullmatch(value) else None


@dataclass(frozen=True, slots=True)
class LaunchStart:
    """A ``launches.jsonl`` line: a controller started."""

    pid: int | None  # None: the keeper could not start it (an end line with code 127 follows)
    at: float
    resume: bool

    def to_json(self) -> dict[str, Any]:
        return {"event": "start", "pid": self.pid, "at": rfc3339_ms(self.at), "resume": self.resume}


@dataclass(frozen=True, slots=True)
class LaunchEnd:
    """A ``launches.jsonl`` line: a controller ended, with its exit code or the signal that killed it."""

    pid: int | None  # None: the keeper could not start it
    at: float
    code: int | None
    signal: str | None

    def to_json(self) -> dict[str, Any]:
        return {"event": "end", "pid": self.pid, "at": rfc3339_ms(self.at), "code": self.code, "signal": self.signal}

    @property
    def clean(self) -> bool:
        return self.code == 0 and self.signal is None


NOT_STARTED = 127  # the keeper's end of a controller it could not start (as a shell says of a command not found)


def parse_launch(value: Any) -> LaunchStart | LaunchEnd | str:
    """A launches line, or why it is not one."""
    if not isinstance(value, dict):
        return f"{type_name(value)}, not a launch"
    event = value.get("event")
    pid = value.get("pid")
    at = time_epoch(value.get("at"))
    if event not in ("start", "end"):
        return "a line whose event is neither start nor end"
    if "pid" not in value:
        # The keeper writes the pid on every line, null only for a controller it could not start (§5).
        return f"{'a start' if event == 'start' else 'an end'} line without its pid (null where none was started)"
    if at is None:
        return f"{'a start' if event == 'start' else 'an end'} line whose at is not a time"
    if event == "start":
        if pid is not None and not (is_int(pid) and pid > 0):
            return "a start line whose pid is not a process id"
        if pid is None and not isinstance(value.get("error"), str):
            # Null only for a controller the keeper could not start, and then it says why (§5).
            return "a start line whose pid is null, without the error that says why no controller started"
        resume, argv = value.get("resume"), value.get("argv")
        if not isinstance(resume, bool):
            return "a start line whose resume is not true or false"
        started = value.get("startTime")
        if started is not None and not is_number(started):
            # The keeper's reading of the controller's start time (psutil's), where it has one: a number.
            return "a start line whose startTime is not a number"
        if started is not None and started != 0 and epoch(started) is None:
            # 0: a controller gone before its keeper read its start (a time not taken); else a time (§6.9).
            return "a start line whose startTime is not a time"
        if "argv" in value:  # written by every keeper; null is written, and no list
            if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
                return "a start line whose argv is not a list of strings"
            if ("--resume" in argv) != resume:
                # The fact is held twice (§6.9): the flag the controller was given, and the line's word for it.
                return "a start line whose resume and argv disagree about --resume"
        return LaunchStart(pid, at, resume)
    if pid is not None and not (is_int(pid) and pid > 0):
        return "an end line whose pid is not a process id"
    if "code" not in value or "signal" not in value:
        return "an end line without its code and signal (null where there is none)"
    code, signal = value.get("code"), value.get("signal")
    if code is not None and not is_int(code):
        return "an end line whose code is not an integer"
    if signal is not None and signal_name(signal) is None:
        return "an end line whose signal is not a signal's name"
    if code is not None and signal is not None:
        return "an end line with both a code and a signal: a process exits, or a signal ends it, never both"
    if pid is None and code != NOT_STARTED:
        return f"an end line whose pid is null, not exit {NOT_STARTED} (null only where no controller started)"
    return LaunchEnd(pid, at, code, signal)


# --- container lifecycle events -----------------------------------------------------------

STUDY_LABEL = "studymon.study"
RUN_LABEL = "studymon.run"
_EXIT = re.compile(r"-?\d{1,10}")
# The attributes two copies of one event must agree on (the live recording and the read-back).
COMPARED = ("exitCode", "name", "signal")


@dataclass(frozen=True, slots=True)
class ContainerEvent:
    """One lifecycle event of a container, as the runtime gave it: its time validated, its names read.

    ``lo_ns``..``hi_ns`` is when it happened: one instant with ``timeNano``;
    the whole second with only a whole-second ``time``.
    """

    verb: str  # the action's part before ``:``
    id: str | None
    name: str | None  # without the leading "/"
    old_name: str | None  # a rename's former name
    lo_ns: int
    hi_ns: int
    exit_code: int | None
    study: str | None  # the studymon.study label
    run: str | None  # the studymon.run label
    attributes: dict[str, Any] = field(compare=False, repr=False)  # the Actor's, as given

    @property
    def compared(self) -> tuple[str, ...]:
        """The attributes two copies must agree on; worked out only for the events of a target."""
        return tuple(repr(self.attributes.get(a)) for a in COMPARED)

    @property
    def key(self) -> tuple[Any, ...]:
        """What makes two copies one event: Id, action and time."""
        return (self.id, self.verb, self.lo_ns)


@dataclass(frozen=True, slots=True)
class Gap:
    """A stretch where the live stream was down: ``{"gap": {"from": <seenAt>, "to": <seenAt>}}``."""

    lo: float
    hi: float

    def to_json(self) -> dict[str, Any]:
        return {"gap": {"from": rfc3339_ms(self.lo), "to": rfc3339_ms(self.hi)}}


def _text(value: Any) -> str | None:
    return value.lstrip("/") if isinstance(value, str) else None


def parse_event(value: Any) -> ContainerEvent | Gap | str:
    """An event line: the event, a gap, or why it is neither.

    An event of something other than a container (an image, a network) is not
    a line of a recording: the console keeps only containers' events, live and
    read back, so such a line was put there by someone else.
    """
    if not isinstance(value, dict):
        return f"{type_name(value)}, not an event"
    if "gap" in value:
        gap = value["gap"]
        lo = time_epoch(gap.get("from")) if isinstance(gap, dict) else None
        hi = time_epoch(gap.get("to")) if isinstance(gap, dict) else None
        if lo is None or hi is None or hi < lo:
            return "a gap line that is not a gap (from and to, two times in order)"
        return Gap(lo, hi)
    if value.get("Type") != "container":
        return "an event that is not a container's (its Type is not container)"
    action = value.get("Action")
    if not isinstance(action, str) or not action:
        return "an event without an Action"
    # The older fields hold the Action and the Id a second time (§6.9): where written, they agree.
    if "status" in value and value["status"] != action:
        return "an event whose status and Action disagree"
    tn, t = value.get("timeNano"), value.get("time")
    whole = t * 1_000_000_000 if is_int(t) and 0 < t < LAST_DATE else None  # exact: an integer
    if is_int(tn):
        if not 0 < tn < LAST_DATE * 1e9:
            return "an event whose timeNano cannot be a date"
        if t is not None and (whole is None or abs(tn - whole) > 1_000_000_000):
            return "an event whose time and timeNano disagree"
        lo = hi = tn
    elif tn is not None:
        return "an event whose timeNano is not an integer"
    elif whole is not None:
        lo, hi = whole, whole + 999_999_999  # only the second is known: any part of it
    else:
        return "an event without a time that can be a date"
    actor = value.get("Actor")
    if not isinstance(actor, dict) or not isinstance(attrs := actor.get("Attributes"), dict):
        return "an event whose Actor is not an object with Attributes"
    cid, name = actor.get("ID"), attrs.get("name")
    if not isinstance(cid, str) or not cid:
        return "an event without its container's Id (Actor.ID)"
    if "id" in value and value["id"] != cid:
        return "an event whose id and Actor.ID disagree"
    if not isinstance(name, str) or not name.lstrip("/"):
        # "/" alone is the empty name with Docker's leading slash: no container's.
        return "an event without its container's name (Actor.Attributes.name)"
    code = attrs.get("exitCode")
    exit_code = code if is_int(code) else int(code) if isinstance(code, str) and _EXIT.fullmatch(code) else None
    study, run = attrs.get(STUDY_LABEL), attrs.get(RUN_LABEL)
    return ContainerEvent(
        verb=action.split(":", 1)[0],
        id=cid,
        name=_text(name),
        old_name=_text(attrs.get("oldName")),
        lo_ns=lo,
        hi_ns=hi,
        exit_code=exit_code,
        study=study if isinstance(study, str) else None,
        run=run if isinstance(run, str) else None,
        attributes=attrs,
    )


# --- container snapshots --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One container's inspect, as a snapshot file holds it under the container's name."""

    id: str | None
    name: str | None  # without the leading "/"
    running: bool | None
    status: str | None
    started_at: str | None
    finished_ns: int | None  # when it exited; None while it runs (Docker's zero time) or unreadable
    exit_code: int | None

    @property
    def exited(self) -> bool:
        return self.running is False and self.status == "exited"


# The statuses of a container whose process is there (Docker's State.Running true).
ALIVE_STATUSES = frozenset({"running", "paused", "restarting"})


def _state_shape(state: dict[str, Any]) -> str | None:
    """Why an inspect's ``State`` is not one a runtime writes: its fields of their types, and ``Running`` saying what
    ``Status`` says (the fact is held twice, §6.9: Docker says ``Running`` true for a container ``running``,
    ``paused`` or ``restarting``, false for any other; the judge's "running" is ``Status`` ``running`` alone)."""
    running, status, code = state.get("Running"), state.get("Status"), state.get("ExitCode")
    # Running is written by every runtime (Docker, and the process runtime after it): a State without it is none.
    if not isinstance(running, bool):
        return "an inspect whose State.Running is not true or false"
    if "Status" in state and not isinstance(status, str):
        return "an inspect whose State.Status is not a text"
    if "ExitCode" in state and not is_int(code):
        return "an inspect whose State.ExitCode is not an integer"
    # The times a snapshot holds twice with the events (§6.9): a time of another type would hide the exit it dates.
    for when in ("StartedAt", "FinishedAt"):
        if when in state and not isinstance(state[when], str):
            return f"an inspect whose State.{when} is not a text"
    if isinstance(status, str) and running != (status in ALIVE_STATUSES):
        return "an inspect whose State.Running and State.Status disagree"
    return None


def parse_snapshot(value: Any) -> Snapshot | str:
    """A snapshot's entry, or why it is not an inspect."""
    if not isinstance(value, dict):
        return f"{type_name(value)}, not an object"
    state = value.get("State")
    if isinstance(state, dict):
        why = _state_shape(state)
        if why is not None:
            return why
    state = state if isinstance(state, dict) else {}
    cid, name, started = value.get("Id"), value.get("Name"), state.get("StartedAt")
    finished = time_epoch(state.get("FinishedAt"))
    running, status, code = state.get("Running"), state.get("Status"), state.get("ExitCode")
    return Snapshot(
        id=cid if isinstance(cid, str) and cid else None,
        name=_text(name),
        # "Running" is State.Status running (§6.9): a paused or restarting container, though Running says true,
        # is not; Running alone stands only where no Status is written.
        running=(status == "running") if isinstance(status, str) else running if isinstance(running, bool) else None,
        status=status if isinstance(status, str) else None,
        started_at=started if isinstance(started, str) and started else None,
        finished_ns=None if finished is None else round(finished * 1e9),
        exit_code=code if is_int(code) else None,
    )


def inspect_problem(value: Any) -> str | None:
    """Why a snapshot's entry (not null) is not an inspect as a runtime writes one: an object with its ``Id``, its
    ``Name`` and a ``State`` of the right shape; None when it is one."""
    if not isinstance(value, dict):
        return "not an inspect object"
    cid, name, state = value.get("Id"), value.get("Name"), value.get("State")
    if not (isinstance(cid, str) and cid) or not isinstance(name, str) or not isinstance(state, dict):
        return "an inspect without its Id, Name or State"
    return _state_shape(state)


def started(snapshot: Any) -> bool:
    """Whether an inspect shows a container that was started (running or exited; not only created)."""
    if not isinstance(snapshot, dict):
        return False
    state = snapshot.get("State")
    if not isinstance(state, dict) or state.get("Status") == "created":
        return False
    when = state.get("StartedAt")
    return isinstance(when, str) and bool(when) and not when.startswith("0001-")


# --- kill.json -----------------------------------------------------------------------------------

SIGKILL = "SIGKILL"
# A kill the console made, armed (auto) or asked for (manual); an end it did not make (§7): a crash, or a stop.
TRIGGERS = ("auto", "manual", "crash", "stop")
ENDS = ("crash", "stop")


# What kill.json writes of each target besides its run and class.
TARGET_FACTS = ("cell", "round", "planSeq", "startSeq", "container")


@dataclass(slots=True)
class KillTarget:
    """A run a kill left unfinished: an entry of kill.json ``targets``.

    ``kind`` is what the kill left it in (``class`` in the file, one of
    :data:`TARGET_CLASSES`; an entry without one is in flight).  Parsed,
    only ``run`` and ``class`` are validated; the other fields are compared
    with the ledger as written, types included.
    """

    run: str
    cell: Any
    round: Any
    plan_seq: Any
    start_seq: Any
    container: Any
    kind: str = IN_FLIGHT

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "class": self.kind,
            "cell": self.cell,
            "round": self.round,
            "planSeq": self.plan_seq,
            "startSeq": self.start_seq,
            "container": self.container,
        }


@dataclass
class KillRecord:
    """kill.json: one kill, as the console made it.

    The writer fills every field; :func:`parse_kill` validates those the
    judge reads and gives the reasons one is wrong in two lists, so that one
    wrong field fails one check: ``problems`` for ``killEvidence``,
    ``delivery`` (the pid, ``signalled``, ``signal``) for ``killDelivered``.
    """

    trigger: str | None = None
    at_epoch: float | None = None  # when SIGKILL was sent
    pid: int | None = None
    before_kill_seq: int | None = None
    targets: list[KillTarget] = field(default_factory=list)
    trigger_seq: int | None = None
    signalled: bool = False
    since_epoch: float | None = None  # the runtime's clock at the freeze: the window opens here
    prefix: str | None = None
    capture_error: str | None = None
    # Only written, never judged: how the kill went, for whoever reads the folder.
    group_stopped: bool | None = None
    trigger_at: str | None = None
    trigger_seen: float = 0.0
    frozen: float = 0.0
    kill_returned: float = 0.0
    # The point an automatic kill fired at (contract §7), as written; a container point's event.
    point: str | None = None
    trigger_event: dict[str, Any] | None = None
    exact: bool = False  # held by the study's file system at its record (§9.1), not timed by signals
    problems: list[str] = field(default_factory=list)
    delivery: list[str] = field(default_factory=list)

    @property
    def since_ns(self) -> int | None:
        return None if self.since_epoch is None else round(self.since_epoch * 1e9)

    def to_json(self) -> dict[str, Any]:
        sent = self.at_epoch or 0.0
        since = self.since_epoch or 0.0
        return {
            "trigger": self.trigger,
            "at": rfc3339_ms(sent),
            "pid": self.pid,
            "beforeKillSeq": self.before_kill_seq,
            "targets": [t.to_json() for t in self.targets],
            "prefix": self.prefix,
            "signal": SIGKILL if self.trigger in ("auto", "manual") else None,  # an end it did not make: no signal
            "signalled": self.signalled,
            "groupStopped": self.group_stopped,
            "captureError": self.capture_error,
            "point": self.point,
            "exact": self.exact,
            "triggerSeq": self.trigger_seq,
            "triggerEvent": self.trigger_event,
            "triggerAt": self.trigger_at,
            "triggerSeenAt": rfc3339_ms(self.trigger_seen),
            "frozenAt": rfc3339_ms(self.frozen),
            "killSentAt": rfc3339_ms(sent),
            "triggerSeenEpoch": self.trigger_seen,
            "frozenEpoch": self.frozen,
            "killSentEpoch": sent,
            "killReturnedEpoch": self.kill_returned,
            "frozenMs": round((sent - self.frozen) * 1000, 3),
            "since": rfc3339_ns(int(since * 1e9)),
            "sinceEpoch": since,
        }


def no_since(file: str) -> str:
    return f"{file} has no since and sinceEpoch, two times, to open the window at"


# The window's times are written twice, as text to the nanosecond and as an epoch float (§6.9): they agree to
# the microsecond, with room for a float's rounding of today's epoch (a quarter of a microsecond) twice.
TEXT_SLACK = 2e-6
# A time written as RFC 3339 to the millisecond (truncated) against the same time as epoch seconds, or two stamps of
# one moment each taken to the millisecond.
WRITTEN_MS = 0.001


def _since(obj: dict[str, Any], file: str) -> tuple[float | None, str | None]:
    """When the kill's recording began: ``sinceEpoch``, which ``since`` (the same time as text) must match."""
    since = epoch(obj.get("sinceEpoch"))
    text = time_epoch(obj.get("since"))
    if since is None or text is None:
        return since, no_since(file)
    if abs(text - since) > TEXT_SLACK:
        return since, f"{file}: since and sinceEpoch are not the same time"
    return since, None


def parse_kill(obj: dict[str, Any], stem: str | None) -> KillRecord:
    """kill.json as the judge reads it; ``stem`` is the study's container stem (None: unknown)."""
    k = KillRecord()
    trigger = obj.get("trigger")
    if trigger in TRIGGERS:
        k.trigger = trigger
    else:
        k.problems.append(f"kill.json trigger is not one of {', '.join(TRIGGERS)}")
    k.at_epoch = time_epoch(obj.get("at"))
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
    point = obj.get("point")
    parsed = point_text(point)
    if parsed is not None:
        k.point = str(parsed)
    elif point is not None:
        k.problems.append(
            f"kill.json point is {free_text(point) if isinstance(point, str) else type_name(point)}, not a kill point"
        )
    event = obj.get("triggerEvent")
    on_event = parsed is not None and not parsed.on_record
    if isinstance(event, dict):
        k.trigger_event = event
    elif event is not None or (on_event and trigger == "auto"):
        k.problems.append(f"kill.json triggerEvent is {type_name(event)}, not a container event")
    k.trigger_seen = epoch(obj.get("triggerSeenEpoch")) or 0.0  # 0: a moment nobody saw (a manual kill)
    tseq = obj.get("triggerSeq")
    if is_int(tseq) and tseq >= 1:  # a record's seq: records are numbered from 1 (rule 1)
        k.trigger_seq = tseq
    elif is_int(tseq):
        k.problems.append(f"kill.json triggerSeq {tseq} is no record's seq (records are numbered from 1)")
    elif trigger == "auto" and not (on_event and tseq is None):
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
    if trigger in ENDS:
        # The trigger and the delivery are one fact told twice (§6.9): an end the console did not make sent nothing,
        # and says so with a null signal and signalled false.
        said = [f"signal is {type_name(obj.get('signal'))}"] if obj.get("signal") is not None else []
        said += ["signalled is true"] if signalled is True else []
        if said:
            k.problems.append(
                f"kill.json: an end the console did not make ({trigger}) says a signal was sent: {', '.join(said)}"
            )
    error = obj.get("captureError")
    if error is not None:
        k.problems.append(f"capture failed while the controller was frozen: {free_text(error)}")
    if "prefix" in obj and stem is None:
        # A fact held twice with one copy gone cannot be held to the other: unverified is not a pass (§6.9).
        k.problems.append("kill.json prefix cannot be held to the study's stem: research.json does not give it")
    elif "prefix" in obj and obj.get("prefix") != stem:
        k.problems.append(f"kill.json prefix is not the study's {stem}")
    k.since_epoch, why = _since(obj, KillFolder.KILL)
    if why is not None:
        k.problems.append(why)
        # kill.json's two copies of the moment its window opens that disagree give none: the window opens at the
        # window file's copy, itself held to these (killEvidence), and the folder is not complete (§6.9).
        k.since_epoch = None
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
        kind = t.get("class", IN_FLIGHT)
        if kind not in TARGET_CLASSES:
            k.problems.append(
                f"kill.json target {run}'s class is {free_text(kind)}, not one of {', '.join(TARGET_CLASSES)}"
            )
            continue
        seen.add(run)
        # Each of a target's facts is held twice, here and in the ledger or the snapshots (§6.9): a copy not written
        # cannot be held to the other, whatever the other says (null included).
        absent = [key for key in TARGET_FACTS if key not in t]
        if absent:
            k.problems.append(f"kill.json target {run} does not write its {', '.join(absent)}")
        k.targets.append(
            KillTarget(
                run, t.get("cell"), t.get("round"), t.get("planSeq"), t.get("startSeq"), t.get("container"), kind
            )
        )
    return k


# --- container-events-window.json --------------------------------------------------------------


@dataclass
class WindowRecord:
    """container-events-window.json: the kill's window, from the freeze until every target's result was seen."""

    since_epoch: float
    until_epoch: float
    results: dict[str, dict[str, Any]]  # run -> {"resultSeq": int | None, "resultSeenEpoch": float | None}
    notes: list[str] = field(default_factory=list)  # where the file disagrees with itself (for killEvidence)

    @property
    def since_ns(self) -> int:
        return round(self.since_epoch * 1e9)

    @property
    def until_ns(self) -> int:
        return round(self.until_epoch * 1e9)

    def seen_ns(self, run: str) -> int | None:
        seen = (self.results.get(run) or {}).get("resultSeenEpoch")
        return None if seen is None else round(seen * 1e9)

    def to_json(self) -> dict[str, Any]:
        return {
            "since": rfc3339_ns(int(self.since_epoch * 1e9)),
            "until": rfc3339_ns(int(self.until_epoch * 1e9)),
            "sinceEpoch": self.since_epoch,
            "untilEpoch": self.until_epoch,
            "targets": self.results,
        }


def parse_window(obj: dict[str, Any]) -> tuple[WindowRecord | None, str | None]:
    """The window, or why the file cannot be used (for every check that needs it)."""
    file = KillFolder.WINDOW
    # The times as text and as numbers are one fact twice: where they differ, killEvidence says so.
    since, why = _since(obj, file)
    notes = [why] if why is not None and since is not None else []
    until = epoch(obj.get("untilEpoch"))
    until_text = time_epoch(obj.get("until"))
    if until is not None and (until_text is None or abs(until_text - until) > TEXT_SLACK):
        notes.append(f"{file}: until and untilEpoch are not the same time")
    if since is None:
        return None, f"{file}: sinceEpoch is {type_name(obj.get('sinceEpoch'))}, not a time"
    if until is None:
        return None, f"{file}: untilEpoch is {type_name(obj.get('untilEpoch'))}, not a time"
    # A text that is no time at all is no field of the console's (every check that reads the file); one that is
    # another time than its epoch is the file disagreeing with itself (killEvidence, above).
    for key in ("since", "until"):
        if time_epoch(obj.get(key)) is None:
            return None, f"{file}: {key} is not a time"
    if until < since:
        return None, f"{file}: untilEpoch comes before sinceEpoch"
    targets = obj.get("targets")
    if not isinstance(targets, dict):
        return None, f"{file}: targets is {type_name(targets)}, not an object"
    results: dict[str, dict[str, Any]] = {}
    for run, entry in targets.items():
        if not isinstance(entry, dict):
            return None, f"{file}: a target's entry is {type_name(entry)}, not an object"
        seq = entry.get("resultSeq")
        seen = entry.get("resultSeenEpoch")
        if seq is not None and not is_int(seq):
            return None, f"{file}: a resultSeq is {type_name(seq)}, not an integer"
        if seen is not None and epoch(seen) is None:
            return None, f"{file}: a resultSeenEpoch is {type_name(seen)}, not a time"
        if "resultSeq" not in entry or "resultSeenEpoch" not in entry:
            return None, f"{file}: a target's entry without its resultSeq and resultSeenEpoch (null where none)"
        if (seq is None) != (seen is None):
            return None, f"{file}: a target's resultSeq and resultSeenEpoch are not both null or both set"
        results[run] = {"resultSeq": seq, "resultSeenEpoch": epoch(seen)}
        when = epoch(seen)
        # The console stamps each result seen to the millisecond and the window's end once it saw them all.
        if when is not None and not since - WRITTEN_MS <= when <= until + WRITTEN_MS:
            notes.append(f"{file}: {free_text(run, 40)}'s result was seen outside the window")
    return WindowRecord(since, until, results, notes), None


# --- arms.jsonl, timeline.jsonl, research.json ----------------------------------------------------

ARM_EVENTS = ("arm", "disarm", "fired", "missed")


@dataclass(frozen=True, slots=True)
class ArmLine:
    """An ``arms.jsonl`` line: a point armed, every point disarmed, a kill fired (its number and run), or a point
    missed (why).

    ``point`` is the point armed, fired at or missed (contract §7; a line
    without one is the seed's point, counted over the whole ledger);
    ``fromSeq`` on ``fired`` and ``missed`` is the seq after which the point
    counted its records.  Parsed, ``event`` is validated; the rest comes as
    written, for ``killTriggered`` to say what is wrong with each.
    """

    event: str
    at: float
    kill: Any = None
    run: Any = None
    detail: Any = None
    point: Any = None
    from_seq: Any = None

    def to_json(self) -> dict[str, Any]:
        line: dict[str, Any] = {"event": self.event, "at": rfc3339_ms(self.at)}
        if self.event in ("arm", "fired", "missed"):
            line["point"] = self.point
        if self.event == "fired":
            line.update(run=self.run, kill=self.kill, fromSeq=self.from_seq)
        elif self.event == "missed":
            line.update(run=self.run, detail=self.detail, fromSeq=self.from_seq)
        return line


def parse_arm(value: Any) -> ArmLine | str:
    """An arms.jsonl line, or why it is not one: its event, its time, and fields of their types (what they say is
    judged by ``killTriggered``)."""
    if not isinstance(value, dict) or value.get("event") not in ARM_EVENTS:
        return "not an arming event"
    at = time_epoch(value.get("at"))
    if at is None:
        return "an arming line whose at is not a time"
    point, run, from_seq = value.get("point"), value.get("run"), value.get("fromSeq")
    if not (point is None or isinstance(point, str)):
        return "an arming line whose point is not a text"
    if not (run is None or isinstance(run, str)):
        return "an arming line whose run is not a text"
    if not (from_seq is None or (is_int(from_seq) and from_seq >= 0)):
        return "an arming line whose fromSeq is not a seq"
    return ArmLine(
        value["event"],
        at,
        value.get("kill"),
        value.get("run"),
        value.get("detail"),
        value.get("point"),
        value.get("fromSeq"),
    )


@dataclass(frozen=True, slots=True)
class TimelineLine:
    """A ``timeline.jsonl`` line: a ledger record (``seq``, ``kind``, its ``at``) and when a console saw it."""

    seq: int
    kind: str
    at: str
    seen_at: float

    def to_json(self) -> dict[str, Any]:
        return self.line(self.seq, self.kind, self.at, rfc3339_ms(self.seen_at))

    @staticmethod
    def line(seq: int, kind: str, at: str, seen_at: str) -> dict[str, Any]:
        """The line itself, its time already written out: a batch seen at once shares one ``seenAt``."""
        return {"seq": seq, "kind": kind, "at": at, "seenAt": seen_at}


def parse_timeline(value: Any) -> TimelineLine | str:
    """A timeline line, as far as the judge reads it: its seq and when it was seen."""
    seq = value.get("seq") if isinstance(value, dict) else None
    if not is_int(seq) or seq < 1:
        return "a timeline line without a seq"
    assert isinstance(value, dict)
    seen = time_epoch(value.get("seenAt"))
    if seen is None:
        return "a timeline line whose seenAt is not a time"
    kind = value.get("kind")
    at = value.get("at")
    # The console copies both from a record it parsed, where they are text: a line without them is not its own.
    if not isinstance(kind, str) or not isinstance(at, str):
        return "a timeline line without its record's kind and at (texts)"
    return TimelineLine(seq, kind, at, seen)


@dataclass(frozen=True, slots=True)
class Research:
    """research.json as the judge reads it: who the study is, and what it is expected to end at.

    The file is the template the study was started with (written by
    ``spec.materialise``); every other key is the study's own.
    """

    study: str | None
    container_prefix: str | None
    expect_end: str  # "halt", "export", "any"; "?" when the file says something else
    problems: tuple[str, ...]


def parse_research(obj: dict[str, Any], default_prefix: str, expect_ends: tuple[str, ...]) -> Research:
    study = obj.get("study")
    prefix = obj.get("containerPrefix", default_prefix)
    expect = obj.get("expectEnd", "halt")
    problems = []
    if not valid_id(study):
        problems.append("research.json: study is not a valid study id")
    if not (isinstance(prefix, str) and re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}", prefix)):
        problems.append("research.json: containerPrefix is not a container name prefix")
        prefix = None
    return Research(
        study if valid_id(study) else None,
        prefix,
        expect if isinstance(expect, str) and expect in expect_ends else "?",
        tuple(problems),
    )
