"""One ``kills/<n>/`` folder read into typed values: kill.json, the snapshots, the recordings, the window.

A file that cannot be read is kept as its reason (``problems``); an event
line of the wrong shape makes its recording unusable (the contract: a live
recording that holds lines that are not events fails the check), but is
still named.  The size caps across all kill folders are applied by the
caller, which decides which folders are read at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from tests.oracle.reading import (
    CAPS,
    Refused,
    decode,
    file_size,
    list_subfolders,
    parse_json,
    read_bytes,
    split_lines,
    strict_json,
)
from tests.oracle.times import epoch, event_time, parse_time

KILL_FILES = (
    "kill.json",
    "ledger-at-kill.json",
    "container-before.json",
    "container-after-kill.json",
    "container-before-resume.json",
    "container-events-live.jsonl",
    "container-events.jsonl",
    "container-events-window.json",
    "runtime-restarts.jsonl",
    "power.json",
)
SNAPSHOT_FILES = ("container-before.json", "container-after-kill.json", "container-before-resume.json")
RECORDINGS = ("container-events-live.jsonl", "container-events.jsonl")
NON_RECORD_LINES = 1000
# Actions a target's container may show in its window besides its one die and destroy (and
# an oom by it): a client reading the run, or the engine's health report.
PASSIVE = frozenset({"attach", "detach", "resize", "top", "archive-path", "export", "health_status"})


@dataclass
class Event:
    source: str  # "live" or "readback"
    line: int
    action: str
    verb: str  # the action's part before its first ":"
    id: str
    name: str
    old_name: str | None
    attrs: dict[str, Any]
    start: Fraction  # timeNano, or the start of the whole second of time
    end: Fraction  # timeNano, or the end of that second
    nano: int | None
    time: int | None
    seen: Fraction | None

    @property
    def key(self) -> tuple[str, str, Any]:
        return (self.id, self.action, self.nano if self.nano is not None else ("s", self.time))

    @property
    def study_label(self) -> Any:
        return self.attrs.get("studymon.study")

    @property
    def run_label(self) -> Any:
        return self.attrs.get("studymon.run")


@dataclass
class Gap:
    line: int
    start: Fraction
    end: Fraction


@dataclass
class Recording:
    events: list[Event] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)  # lines that are not events


def _name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return value.removeprefix("/")


def parse_recording(data: bytes, source: str, rel: str) -> Recording:
    rec = Recording()
    # A torn last line (a console that died mid-write) is not a record and is left out (docs/contract.md,
    # "Which check a file fails"); a torn line anywhere else is a line that is not an event.
    lines = split_lines(data)
    for number, raw in lines.whole:
        if len(rec.bad) > NON_RECORD_LINES:
            rec.bad.append(f"{rel}: more than {NON_RECORD_LINES} lines that are not events; not read further")
            break
        where = f"{rel} line {number}"
        try:
            obj = strict_json(decode(raw, "line"))
        except Refused as exc:
            rec.bad.append(f"{where}: {exc}")
            continue
        if not isinstance(obj, dict):
            rec.bad.append(f"{where}: not an object")
            continue
        if "gap" in obj:
            gap = obj["gap"]
            g_from = parse_time(gap.get("from")) if isinstance(gap, dict) else None
            g_to = parse_time(gap.get("to")) if isinstance(gap, dict) else None
            if source != "live" or g_from is None or g_to is None or g_from > g_to:
                rec.bad.append(f"{where}: a gap line without both bounds in order")
                continue
            rec.gaps.append(Gap(number, g_from, g_to))
            continue
        # docs/contract.md ("Which check a file fails"): an event without its Type container, Action, Actor.ID
        # or Actor.Attributes.name (a string) is a line that is not the recording's record, an event of another
        # type (an image's, a network's) among them, and one without a Type: only container events are
        # recorded (docs/evidence.md), each written whole.
        if obj.get("Type") != "container":
            rec.bad.append(f"{where}: an event that is not a container's (its Type is not container)")
            continue
        action = obj.get("Action")
        actor = obj.get("Actor")
        attrs = actor.get("Attributes") if isinstance(actor, dict) else None
        ident = actor.get("ID") if isinstance(actor, dict) else None
        if (
            not isinstance(action, str)
            or not action
            or not isinstance(attrs, dict)
            or not isinstance(ident, str)
            or not ident
        ):
            rec.bad.append(f"{where}: an event without its Action, Actor.ID or attributes")
            continue
        # docs/contract.md ("Per target: the story", the evidence): every line is an event as the runtime
        # writes it whole; Docker's older status and id, where written, are its Action and Actor.ID.
        if "status" in obj and obj["status"] != action:
            rec.bad.append(f"{where}: an event whose status is not its Action")
            continue
        if "id" in obj and obj["id"] != ident:
            rec.bad.append(f"{where}: an event whose id is not its Actor.ID")
            continue
        # A container's name is a non-empty text (with or without its leading "/"): an empty name ("" or "/")
        # names no container, and the line is not an event (README.md, open question 47).
        name = _name(attrs.get("name"))
        if not name:
            rec.bad.append(f"{where}: an event without a container name (a non-empty string)")
            continue
        start, end, problem = event_time(obj)
        if problem is not None or start is None or end is None:
            rec.bad.append(f"{where}: {problem}")
            continue
        seen = None
        if source == "live":
            seen = parse_time(obj.get("seenAt"))
            rb = obj.get("readBack", False)
            if seen is None or not isinstance(rb, bool):
                rec.bad.append(f"{where}: seenAt or readBack of the wrong shape")
                continue
        old = _name(attrs.get("oldName"))
        nano, t = obj.get("timeNano"), obj.get("time")
        rec.events.append(
            Event(
                source,
                number,
                action,
                action.split(":", 1)[0],
                ident,
                name,
                old,
                attrs,
                start,
                end,
                nano if isinstance(nano, int) else None,
                t if isinstance(t, int) else None,
                seen,
            )
        )
    return rec


@dataclass
class Inspect:
    id: str
    name: str
    status: str | None  # State.Status, None where not written
    running: bool | None  # State.Running, None where not a boolean (of the wrong shape)
    started_at: Fraction | None
    started_raw: str | None  # State.StartedAt as written, None where not written
    finished_at: Fraction | None
    exit_code: Any
    labels: dict[str, Any]

    @property
    def state(self) -> str | None:
        """The container's status as the checks judge it: ``State.Status`` where written; where it is not,
        ``State.Running`` alone stands: ``"running"`` when it is true, and unknown (None: neither shown running
        nor shown exited) when it is false or not a boolean (docs/contract.md, "Which check a file fails": the
        four of ``State`` are each judged "where written")."""
        if self.status is not None:
            return self.status
        return "running" if self.running is True else None


# Docker's State.Running is true for these statuses (docs/contract.md, "Which check a file fails").
RUNNING_STATUSES = ("running", "paused", "restarting")


def parse_inspect(value: Any, filed: str) -> tuple[Inspect | None, str | None]:
    """A Docker-shaped inspect, validated, and the problem with its shape; None for a container absent (null).

    docs/contract.md ("Which check a file fails", a snapshot): an entry is an inspect object (or null) with a
    non-empty text ``Id``, a text ``Name`` and a ``State`` object; an inspect whose ``State.Running`` is not a
    boolean (every runtime writes it), or whose ``State.Status``, ``State.StartedAt`` or ``State.FinishedAt`` is
    not a text or ``State.ExitCode`` not an integer ("those four where written"), or whose ``State.Running``
    says otherwise than ``State.Status`` (``true`` exactly when it is ``"running"``, ``"paused"`` or
    ``"restarting"``, as Docker writes them), is of the wrong shape: the problem is said.  One of the four not
    written is unknown (None: no status, no start time, no finish time, no exit code), and the container is
    judged as it stands without it, as for a missing time (``Inspect.state``: with no status, ``State.Running``
    alone says whether it runs).  Where only ``State.Running`` is wrong the rest of it is still returned, to be
    judged as it stands (a paused or restarting container is not running: its ``status`` says so)."""
    if value is None:
        return None, None
    if not isinstance(value, dict):
        return None, f"{filed}: not an inspect object"
    state = value.get("State")
    ident, name = value.get("Id"), _name(value.get("Name"))
    if not isinstance(ident, str) or not ident or name is None or not isinstance(state, dict):
        return None, f"{filed}: Id, Name or State of the wrong shape"
    # Each of the four "where written": a key present with a value of another type (null among them) is of the
    # wrong shape; a key not written is unknown.
    for key in ("Status", "StartedAt", "FinishedAt"):
        if key in state and not isinstance(state[key], str):
            return None, f"{filed}: State.{key} is not a text"
    status, started, finished, code = (
        state.get("Status"),
        state.get("StartedAt"),
        state.get("FinishedAt"),
        state.get("ExitCode"),
    )
    if "ExitCode" in state and not (isinstance(code, int) and not isinstance(code, bool)):
        return None, f"{filed}: State.ExitCode is not an integer"
    config = value.get("Config", {})
    labels = config.get("Labels") if isinstance(config, dict) else None
    labels = labels if isinstance(labels, dict) else {}
    running = state.get("Running")
    # Docker's zero time "0001-01-01T00:00:00Z" is a time that never came: None (as one not written).
    ins = Inspect(
        ident,
        name,
        status,
        running if isinstance(running, bool) else None,
        parse_time(started),
        started,
        parse_time(finished),
        code,
        labels,
    )
    if not isinstance(running, bool):
        return ins, f"{filed}: State.Running is not a boolean"
    if status is not None and running != (status in RUNNING_STATUSES):
        return ins, f"{filed}: State.Running and State.Status disagree"
    return ins, None


@dataclass
class KillFolder:
    n: int
    rel: str
    unread: str | None = None  # the whole folder was not read (caps): why
    problems: dict[str, str] = field(default_factory=dict)  # file -> why it cannot be used
    present: set[str] = field(default_factory=set)
    unreadable: set[str] = field(default_factory=set)  # there, and refused unread
    kill: dict[str, Any] | None = None
    at_kill: list[Any] | None = None
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict)  # file -> name -> raw inspect or None
    live: Recording | None = None
    readback: Recording | None = None
    window: dict[str, Any] | None = None
    restarts: list[dict[str, Any]] | None = None
    power: dict[str, Any] | None = None  # power.json, read as an object (power.read_power judges it)


def kill_folder_numbers(out: Path) -> list[int]:
    """The numbers of the kill folders in ``out/kills``, in order; Refused when ``kills/`` cannot be listed.

    A kill folder is ``kills/<n>`` (``n`` written 1, 2, …) that is a real folder inside ``out``: a name that is
    a symbolic link (dangling, out of the folder, even into it) or a file is no kill folder (docs/contract.md,
    "Hostile evidence": every file is read "through no symbolic link at all"; §5: "one folder per kill"), so
    its number is missing, a hole for ``killEvidence`` of the kill after it."""
    names = list_subfolders(out, "kills")
    return sorted(int(n) for n in names if n.isdigit() and n.isascii() and str(int(n)) == n and int(n) >= 1)


def kill_folder_size(out: Path, rel: str) -> tuple[int, int]:
    """(bytes of the folder's files within their caps, of which the recordings) as the caps count them."""
    total = rec = 0
    for name in KILL_FILES:
        size = file_size(out, f"{rel}/{name}")
        if size is None or size > CAPS[name]:
            continue
        total += size
        if name in RECORDINGS:
            rec += size
    return total, rec


def load_kill_folder(out: Path, n: int) -> KillFolder:
    rel = f"kills/{n}"
    kf = KillFolder(n, rel)
    for name in KILL_FILES:
        path = f"{rel}/{name}"
        try:
            data = read_bytes(out, path, CAPS[name])
        except Refused as exc:
            text = str(exc)
            if text.endswith(": missing"):
                continue
            # There, and refused unread (a link, not a regular file, past its cap, an error reading it).
            kf.present.add(name)
            kf.unreadable.add(name)
            kf.problems[name] = text if text.startswith(rel) else f"{path}: {text}"
            continue
        kf.present.add(name)
        try:
            if name.endswith(".jsonl"):
                if name == "container-events-live.jsonl":
                    kf.live = parse_recording(data, "live", path)
                elif name == "container-events.jsonl":
                    kf.readback = parse_recording(data, "readback", path)
                else:
                    rows = []
                    lines = split_lines(data)  # a torn last line is left out, as in every appended .jsonl
                    for number, raw in lines.whole:
                        v = strict_json(decode(raw, "line"))
                        if not isinstance(v, dict):
                            raise Refused(f"line {number}: not an object")
                        rows.append(v)
                    kf.restarts = rows
                continue
            if name == "ledger-at-kill.json":
                # The ledger's records as they stood, exactly: a number that is not finite there is judged
                # against the ledger's, where it is the ledger's fault when both hold it (docs/contract.md,
                # killEvidence: "a number that is not finite there as in the ledger (`1e400` in both) is the
                # ledger's fault (rule 9, `contractKept`), not the copy's: the two agree"; README.md, open
                # question 86): kept as the value it reads as, for check_ledger_at_kill to compare.
                parsed = parse_json(decode(data, path))
                if parsed.error is not None:
                    raise Refused(parsed.error)
                value = parsed.value
            else:
                value = strict_json(decode(data, path))
        except Refused as exc:
            # Read, and not what it should hold (not UTF-8, not JSON, a repeated key, a torn line).
            text = str(exc)
            kf.problems[name] = text if text.startswith(rel) else f"{path}: {text}"
            continue
        if name == "kill.json":
            if isinstance(value, dict):
                kf.kill = value
            else:
                kf.problems[name] = f"{path}: not an object"
        elif name == "ledger-at-kill.json":
            if isinstance(value, list):
                kf.at_kill = value
            else:
                kf.problems[name] = f"{path}: not a list of records"
        elif name in SNAPSHOT_FILES:
            if isinstance(value, dict):
                kf.snapshots[name] = value
            else:
                kf.problems[name] = f"{path}: not a map from container name to inspect"
        elif name == "container-events-window.json":
            if isinstance(value, dict):
                kf.window = value
            else:
                kf.problems[name] = f"{path}: not an object"
        elif name == "power.json":
            if isinstance(value, dict):
                kf.power = value
            else:
                kf.problems[name] = f"{path}: not an object"
    return kf


def epoch_field(obj: dict[str, Any], key: str) -> Fraction | None:
    return epoch(obj.get(key))
