"""One study's evidence folder, read once into plain typed values.

Each file is read through ``reading`` (safe, bounded) and parsed by hand
into small dataclasses; what cannot be read is kept as the reason, for the
checks that need it to fail with.  No verdict is given here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from tests.oracle.reading import (
    CAPS,
    BigInt,
    Refused,
    decode,
    is_int,
    parse_json,
    read_bytes,
    read_json,
    read_jsonl_objects,
    split_lines,
    strict_equal,
    strict_json,
)
from tests.oracle.times import KEEPER_SLACK, SEEN_SLACK, epoch, not_taken, parse_time

ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9_.-]{0,62}", re.ASCII)
# The ledger's kinds (docs/contract.md, §2's table).
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
# The kinds of a run's record: the only kinds a point's /PURPOSE may follow (docs/contract.md, killTriggered).
RUN_RECORD_KINDS = ("runPlanned", "charge", "runStarted", "runResult", "diagnosisSettlement")
ACTIONS = ("create", "start", "die")
MAX_POINT_N = 1_000_000
# A kill point's shape: `after:KIND[/PURPOSE][#N]` or `container:ACTION[/PURPOSE][#N]`.  The shape alone is not
# the grammar (a purpose after a kind of no run's record, an N past 1 000 000): ask parse_point, never this.
_POINT_SHAPE = re.compile(
    rf"(?:after:({'|'.join(KINDS)})|container:({'|'.join(ACTIONS)}))"
    r"(?:/([A-Za-z0-9][A-Za-z0-9_.-]{0,62}))?(?:#([0-9]+))?",
    re.ASCII,
)


def parse_point(value: Any) -> tuple[str, str, str | None, int] | None:
    """(mode, kind or action, purpose or None, N) of a kill point; None for any other value.  A power point
    (``parse_power_point``) is a point too, and gives the point it names, whose moment it has.

    docs/contract.md (killTriggered): "A kill point is written exactly so: KIND one of the ledger's kinds (§2),
    ACTION one of create, start, die; a /PURPOSE only after a kind of a run's record (runPlanned, charge,
    runStarted, runResult, diagnosisSettlement) or after an action, and written as a runPlanned writes one (a
    letter or digit, then up to 62 letters, digits, _, . or -); #N a count from 1 to 1 000 000 in ASCII digits.
    Any other text names no point: where an evidence file names one (arms.jsonl, kill.json, a campaign's
    journal), it is of the wrong type."  Letters are ASCII's, either case; an N with leading zeros (`#01`) is
    still a count in ASCII digits (README.md, open question 65).  One grammar for every file that names a point:
    kill.json's point (kills.py), arms.jsonl's lines (load_arms), a journal's points and campaign.json's plan
    (campaign.py).
    """
    power = parse_power_point(value)
    if power is not None:
        return power[0]
    return _parse_kill_point(value)


def _parse_kill_point(value: Any) -> tuple[str, str, str | None, int] | None:
    m = _POINT_SHAPE.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        return None
    kind, action, purpose, digits = m.groups()
    if purpose is not None and kind is not None and kind not in RUN_RECORD_KINDS:
        return None
    nth = 1
    if digits is not None:
        significant = digits.lstrip("0")
        if not significant or len(significant) > len(str(MAX_POINT_N)) or int(significant) > MAX_POINT_N:
            return None
        nth = int(significant)
    if kind is not None:
        return ("after", kind, purpose, nth)
    return ("container", action, purpose, nth)


def is_point(value: Any) -> bool:
    return parse_point(value) is not None


# A power loss's state (docs/contract.md, "Power loss (§9.3)"): `synced` (the default), `synced+K` (K from 1),
# `torn` or `zeros`.
_STATE = re.compile(r"(synced|torn|zeros)|synced\+([0-9]+)", re.ASCII)
POWER = "power:"


def parse_state(value: Any) -> tuple[str, str | None] | None:
    """(name, K's digits or None) of a power loss's state; None for any other value.  K is a count "from 1" in
    ASCII digits, kept as its significant digits (leading zeros aside, as #N's: README.md, open question 65), so
    that no K is ever too long to compare."""
    m = _STATE.fullmatch(value) if isinstance(value, str) else None
    if m is None:
        return None
    if m.group(1) is not None:
        return (m.group(1), None)
    digits = m.group(2).lstrip("0")
    return ("synced+", digits) if digits else None


def parse_power_point(value: Any) -> tuple[tuple[str, str, str | None, int], tuple[str, str | None]] | None:
    """(the point it names, its state) of a power point; None for any other value.

    docs/contract.md ("Power loss (§9.3)"): "A point may name a power loss: `power:after:KIND[/PURPOSE][#N][@STATE]`
    or `power:container:ACTION[/PURPOSE][#N][@STATE]`, where `STATE` is `synced` (the default), `synced+K` (`K`
    from 1), `torn` or `zeros`."  The point after `power:` is a kill point of the one grammar (parse_point), and
    the moment is its (README.md, open question 101)."""
    if not isinstance(value, str) or not value.startswith(POWER):
        return None
    inner, at, state = value[len(POWER) :].partition("@")
    point = _parse_kill_point(inner)
    parsed_state = parse_state(state) if at else ("synced", None)
    if point is None or parsed_state is None:
        return None
    return point, parsed_state


LEDGER_ISSUE_CAP = 10_000
# docs/contract.md, the caps: lines of a .jsonl file that are not its records; reading stops at the next one.
NON_RECORD_LINES = 1000


def valid_id(value: Any) -> bool:
    return isinstance(value, str) and ID_PATTERN.fullmatch(value) is not None


# --- research.json ----------------------------------------------------------------------------


@dataclass
class Research:
    study: str | None = None
    prefix: str | None = None
    expect_end: str | None = None
    problem: str | None = None  # why study or prefix cannot be read

    @property
    def stem(self) -> str | None:
        if self.study is None or self.prefix is None:
            return None
        return f"{self.prefix}-{self.study}-"


def load_research(out: Path) -> Research:
    try:
        data = read_json(out, "research.json", CAPS["research.json"])
    except Refused as exc:
        return Research(problem=str(exc))
    if not isinstance(data, dict):
        return Research(problem="research.json: not an object")
    r = Research()
    study = data.get("study")
    prefix = data.get("containerPrefix", "inforsi")
    expect = data.get("expectEnd", "halt")
    r.study = study if valid_id(study) else None
    r.prefix = prefix if isinstance(prefix, str) and prefix else None
    r.expect_end = expect if expect in ("halt", "export", "any") else None
    problems = []
    if r.study is None:
        problems.append("research.json: study is not a valid id")
    if r.prefix is None:
        problems.append("research.json: containerPrefix is not a non-empty string")
    r.problem = "; ".join(problems) or None
    return r


# --- the ledger -------------------------------------------------------------------------------


@dataclass
class Record:
    line: int
    seq: Any
    at: Any
    time: Fraction | None
    kind: str
    content: dict[str, Any]
    raw: dict[str, Any]
    nonfinite: bool
    # An integer beyond a double's range in the line (docs/contract.md, §2a rule 9; README.md, open question 93).
    beyond_double: bool = False

    def get(self, key: str) -> Any:
        return self.content.get(key)

    @property
    def run(self) -> Any:
        return self.content.get("run")


@dataclass
class Ledger:
    readable: bool = True
    reason: str | None = None
    missing: bool = False  # not there at all: not written yet, while the study can still be resumed
    records: list[Record] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)  # ledgerWellFormed's, each naming its line
    lines: int = 0
    torn: bool = False
    # The records read before the ledger stopped being read (its caps: more than LEDGER_ISSUE_CAP lines that
    # are not records), for a ledger not read to its end: docs/contract.md ("Records are written while a
    # controller runs") holds them to the controllers' lives too (README.md, open question 59).  Every other
    # check that needs the ledger fails it, and reads none of them.
    read_before_stop: list[Record] = field(default_factory=list)
    _index: dict[int, Record] | None = field(default=None, repr=False)

    @property
    def last_seq(self) -> int:
        return max((r.seq for r in self.records if isinstance(r.seq, int)), default=0)

    def by_seq(self, seq: Any) -> Record | None:
        if self._index is None:
            self._index = {}
            for r in self.records:
                if isinstance(r.seq, int):
                    self._index.setdefault(r.seq, r)
        return self._index.get(seq) if isinstance(seq, int) and not isinstance(seq, bool) else None

    def upto(self, seq: int) -> list[Record]:
        return [r for r in self.records if isinstance(r.seq, int) and r.seq <= seq]

    def at_kill(self, seq: int) -> list[Record]:
        """The ledger as it stood at a kill whose beforeKillSeq is ``seq``: docs/contract.md (killEvidence), "its
        records of a `seq` at most `beforeKillSeq` on lines up to the first line whose `seq` is `beforeKillSeq`
        (...): a line after that one was written after the kill, whatever `seq` it claims, and a `seq` after
        `beforeKillSeq` names a later record wherever its line stands".  Where no record has that seq, the seq
        alone (README.md, open question 91)."""
        kill_line = next((r.line for r in self.records if isinstance(r.seq, int) and r.seq == seq), None)
        return [r for r in self.upto(seq) if kill_line is None or r.line <= kill_line]

    def after(self, seq: int) -> list[Record]:
        return [r for r in self.records if not (isinstance(r.seq, int) and r.seq <= seq)]


def load_ledger(out: Path) -> Ledger:
    led = Ledger()
    try:
        data = read_bytes(out, "study/ledger.jsonl", CAPS["study/ledger.jsonl"])
    except Refused as exc:
        return Ledger(readable=False, reason=str(exc), missing=str(exc).endswith(": missing"))
    lines = split_lines(data)
    led.lines = lines.count
    led.torn = lines.torn is not None
    for number, raw in lines.whole:
        if len(led.issues) > LEDGER_ISSUE_CAP:
            return Ledger(
                readable=False,
                reason=f"more than {LEDGER_ISSUE_CAP} ledger lines are not records: not read to its end",
                read_before_stop=led.records,
            )
        try:
            text = decode(raw, "line")
        except Refused:
            led.issues.append(f"line {number}: not UTF-8")
            continue
        parsed = parse_json(text)
        if parsed.error is not None:
            led.issues.append(f"line {number}: {parsed.error}")
            continue
        v = parsed.value
        if not isinstance(v, dict):
            led.issues.append(f"line {number}: not an object")
            continue
        seq, at, kind, content = v.get("seq"), v.get("at"), v.get("kind"), v.get("content")
        if not is_int(seq) or not isinstance(at, str) or not isinstance(kind, str) or not isinstance(content, dict):
            led.issues.append(f"line {number}: seq, at, kind or content missing or of the wrong type")
            continue
        if seq != number or isinstance(seq, BigInt):
            led.issues.append(f"line {number}: seq {seq if isinstance(seq, int) else 'too large'}, not {number}")
        # docs/contract.md (§2, `seq`): "a line whose seq is below 1 is no record: nothing it says is counted"
        # (ledgerWellFormed fails for its seq, above; no rule, charge, start or result reads it: README.md, open
        # question 58).
        if seq.text.startswith("-") if isinstance(seq, BigInt) else seq < 1:
            continue
        led.records.append(
            Record(number, seq, at, parse_time(at), kind, content, v, parsed.nonfinite, parsed.beyond_double)
        )
    return led


# --- timeline.jsonl, launches.jsonl, arms.jsonl, ledger-watch.jsonl ----------------------------


@dataclass
class Seen:
    line: int
    seq: int
    kind: Any
    at: Any
    seen: Fraction


@dataclass(frozen=True)
class LossWindow:
    """What a power loss took, for reading ``timeline.jsonl``: kill ``n`` at ``at`` (kill.json's) lost the records
    of seq ``seq_after + 1`` to ``before_seq`` (power.json's ``ledgerSeqAfter``, kill.json's ``beforeKillSeq``)."""

    n: int
    at: Fraction
    seq_after: int
    before_seq: int


@dataclass
class Timeline:
    """timeline.jsonl: when a console first saw each record.

    docs/contract.md ("Which check a file fails"): the file missing, unreadable, holding a line that is not
    its record or out of time order fails ``ledgerWellFormed`` (missing: once the ledger holds a record) and
    every kill's ``killEvidence`` (``defects``); what it is held to (each seq seen once, as the ledger has
    it) is ``ledgerWellFormed``'s (``issues``).  A file with lines that are not records is still read past
    them (to the 1000th), so that the records it does hold are judged."""

    readable: bool = True  # the file was read at all (not missing, not refused unread)
    missing: bool = False
    reason: str | None = None
    by_seq: dict[int, Seen] = field(default_factory=dict)
    issues: list[str] = field(default_factory=list)
    defects: list[str] = field(default_factory=list)  # lines that are not records, out of time order
    bad_lines: int = 0
    # The lines that saw, before a power loss, a record it took (docs/contract.md, "Power loss (§9.3)": "the
    # records after those in ledger-at-kill.json are lost, as are the lines of timeline.jsonl that saw them before
    # the kill"): kill n -> seq -> its line.  Not in by_seq: never compared with the ledger as it ends, never a
    # seq "seen twice" with the resumed controller's record of that seq (README.md, open question 98).
    lost: dict[int, dict[int, Seen]] = field(default_factory=dict)

    def saw(self, rec: Record) -> Seen | None:
        """The line that saw this record, or None.  docs/contract.md ("Which check a file fails", timeline.jsonl:
        "each seq seen once, as the ledger holds it (a line that saw a seq as another record, its kind or at not
        the ledger's as written, tells nothing of when the ledger's record of that seq was seen)"): a line of the
        record's seq whose kind or at is another record's is not its sighting (README.md, open question 62).
        "As written": the at is compared as text, so the same instant written with other fraction digits
        (".908Z" and ".9080Z") is another record's at (README.md, open question 72)."""
        if not (isinstance(rec.seq, int) and not isinstance(rec.seq, bool)):
            return None
        line = self.by_seq.get(rec.seq)
        if line is None or line.kind != rec.kind:
            return None
        return line if strict_equal(line.at, rec.at) else None

    def saw_lost(self, n: int, rec: Record) -> Seen | None:
        """The line that saw, before power loss ``n``, this record it took (one of ledger-at-kill.json's), or
        None: its kind and at as written, as ``saw`` asks of the ledger's."""
        if not (isinstance(rec.seq, int) and not isinstance(rec.seq, bool)):
            return None
        line = self.lost.get(n, {}).get(rec.seq)
        if line is None or line.kind != rec.kind:
            return None
        return line if strict_equal(line.at, rec.at) else None

    def saw_other(self, rec: Record) -> bool:
        """A line of this record's seq saw it as another record (its kind or at not the ledger's as written): it
        "tells nothing of when the ledger's record of that seq was seen" (docs/contract.md, "Which check a file
        fails", timeline.jsonl), so the record is not known to be unseen either (README.md, open question 71)."""
        if not (isinstance(rec.seq, int) and not isinstance(rec.seq, bool)):
            return False
        return rec.seq in self.by_seq and self.saw(rec) is None

    @property
    def file_problems(self) -> list[str]:
        """What fails ledgerWellFormed and every kill's killEvidence: the file's own defects."""
        if not self.readable:
            return [f"timeline.jsonl cannot be read: {self.reason}"]
        return self.defects


def _lost_to(losses: tuple[LossWindow, ...], lost: dict[int, dict[int, Seen]], seq: int, seen: Fraction) -> int | None:
    """The power loss whose records a line of ``seq`` seen at ``seen`` saw before they were lost: the earliest loss
    whose lost seqs hold it, by whose kill's at (SEEN_SLACK: a record is seen by the kill's at) the line was seen,
    and whose sighting of that seq is not taken yet; None for a line of no loss.  ``losses`` in the order of their
    kills' at."""
    for loss in losses:
        if loss.seq_after < seq <= loss.before_seq and seen <= loss.at + SEEN_SLACK and seq not in lost.get(loss.n, {}):
            return loss.n
    return None


def load_timeline(out: Path, losses: tuple[LossWindow, ...] = ()) -> Timeline:
    """timeline.jsonl read; with the power losses the folder explains (``losses``), the lines that saw their lost
    records before the kill are set aside (``Timeline.lost``)."""
    tl = Timeline()
    losses = tuple(sorted(losses, key=lambda x: (x.at, x.n)))
    try:
        data = read_bytes(out, "timeline.jsonl", CAPS["timeline.jsonl"])
    except Refused as exc:
        text = str(exc)
        return Timeline(readable=False, missing=text.endswith(": missing"), reason=text)
    lines = split_lines(data)  # a torn last line (a console that died mid-write) is left out
    previous: Seen | None = None
    for number, raw in lines.whole:
        where = f"timeline.jsonl line {number}"
        if tl.bad_lines > NON_RECORD_LINES:
            tl.defects.append(
                f"timeline.jsonl: more than {NON_RECORD_LINES} lines that are not records; read no further"
            )
            break
        try:
            row = strict_json(decode(raw, "line"))
        except Refused as exc:
            tl.bad_lines += 1
            tl.defects.append(f"{where}: {exc}")
            continue
        seq = row.get("seq") if isinstance(row, dict) else None
        seen = parse_time(row.get("seenAt")) if isinstance(row, dict) else None
        if (
            not isinstance(row, dict)
            or not (isinstance(seq, int) and not isinstance(seq, bool) and seq >= 1)
            or seen is None
            or not isinstance(row.get("kind"), str)
            or not isinstance(row.get("at"), str)
        ):
            tl.bad_lines += 1
            tl.defects.append(f"{where}: not a record (seq, kind, at or seenAt missing or of the wrong type)")
            continue
        line = Seen(number, seq, row.get("kind"), row.get("at"), seen)
        # docs/contract.md: a line earlier than the one before it by more than KEEPER_SLACK breaks the order.
        if previous is not None and seen < previous.seen - KEEPER_SLACK:
            tl.defects.append(f"{where} is earlier than line {previous.line}: timeline.jsonl is appended in time order")
        previous = line
        loss = _lost_to(losses, tl.lost, seq, seen) if losses else None
        if loss is not None:
            tl.lost.setdefault(loss, {})[seq] = line
            continue
        if seq in tl.by_seq:
            tl.issues.append(f"{where}: seq {seq} seen twice")
            continue
        tl.by_seq[seq] = line
    return tl


# docs/contract.md ("Which check a file fails", launches.jsonl): an end's signal is "a signal's name": SIG and
# its name in capitals (SIGKILL, SIGTERM), or its number (SIG36) for one with no name; read by its form, not
# by a platform's list (README.md, open question 32).
SIGNAL_NAME = re.compile(r"SIG[A-Z0-9]+", re.ASCII)


@dataclass
class Launch:
    line: int
    event: str  # start | end
    pid: int
    at: Fraction
    resume: bool | None = None
    argv: list[str] | None = None
    start_time: float | None = None
    code: int | BigInt | None = None
    signal: str | None = None


@dataclass
class Launches:
    readable: bool = True
    reason: str | None = None
    lines: list[Launch] = field(default_factory=list)
    # Every `start` line of the file that is a launch, (line, pid, at), whether or not another line is a
    # launch or a JSON object: kill.json's pid is held to them (killEvidence, README.md, open questions 42, 57
    # and 66: a start line that is not a launch is no start of the pid).  None when the file itself could not
    # be read (missing, refused unread: a link, a folder, past its cap).
    starts: list[tuple[int, int, Fraction]] | None = None


def _not_a_launch(where: str, why: str) -> str:
    return f"{where}: not a launch: {why}"


def load_launches(out: Path) -> Launches:
    """launches.jsonl's lines, or why it cannot be read.

    docs/contract.md ("Which check a file fails"): a line that is not a launch fails ``exitedCleanly`` and
    every kill's ``killDelivered`` (the file is unreadable here); a file only out of time order fails
    ``exitedCleanly`` alone (``controllers.replay``).  A start is a launch when its ``resume`` is ``true`` or
    ``false`` and its ``argv``, where written, is a list of strings that says what ``resume`` says
    (``--resume`` in it or not): a start that disagrees with itself is not one (README.md, open question
    27).  ``argv`` written null is written, and not a list."""
    try:
        data = read_bytes(out, "launches.jsonl", CAPS["launches.jsonl"])
    except Refused as exc:
        return Launches(readable=False, reason=str(exc))
    # Every line read, each on its own: a line that is not a JSON object (not UTF-8, not JSON, a repeated key)
    # leaves the file not read whole, and the start lines of the others are still read (docs/contract.md,
    # killEvidence: "where launches.jsonl is not read whole and no start of the pid is read, the pid is not
    # held": a pid whose start is read is held, README.md, open question 57).  Past NON_RECORD_LINES such
    # lines reading stops (the caps).  A torn last line is left out.
    rows: list[tuple[int, dict[str, Any]]] = []
    broken: list[str] = []
    for number, raw in split_lines(data).whole:
        try:
            value = strict_json(decode(raw, f"line {number}"))
        except Refused as exc:
            broken.append(f"launches.jsonl line {number}: {exc}")
        else:
            if isinstance(value, dict):
                rows.append((number, value))
            else:
                broken.append(f"launches.jsonl line {number}: not an object")
        if len(broken) > NON_RECORD_LINES:
            break
    # Each object read as a launch, or why it is none.  docs/contract.md (killEvidence): "where launches.jsonl
    # is not read whole and no start of the pid is read, the pid is not held by its other copy"; a start line
    # that is not a launch ("a line not its record", e.g. `resume` not "true or false") is no start of the pid
    # (README.md, open question 66; open question 42 had counted any start line with a pid and a time).
    launches: list[Launch] = []
    faults: list[str] = []
    for number, row in rows:
        read = _launch(number, row)
        if isinstance(read, Launch):
            launches.append(read)
        else:
            faults.append(read)
    starts = [(x.line, x.pid, x.at) for x in launches if x.event == "start"]
    if broken:
        checked = Launches(readable=False, reason=broken[0])
    elif faults:
        checked = Launches(readable=False, reason=faults[0])
    else:
        checked = Launches(lines=launches)
    checked.starts = starts
    return checked


def _launch(number: int, row: dict[str, Any]) -> Launch | str:
    """The launch a line of launches.jsonl holds, or why it holds none (the file's fault, naming the line)."""
    event, pid, at = row.get("event"), row.get("pid"), parse_time(row.get("at"))
    where = f"launches.jsonl line {number}"
    if (
        event not in ("start", "end")
        or not (isinstance(pid, int) and not isinstance(pid, bool) and pid > 0)
        or at is None
    ):
        return _not_a_launch(where, "event, pid or at of the wrong shape")
    if event == "start":
        resume, argv, st = row.get("resume"), row.get("argv"), row.get("startTime")
        if not isinstance(resume, bool):
            return _not_a_launch(where, "resume is not true or false")
        if "argv" in row and not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
            return _not_a_launch(where, "argv is not a list of strings")
        if isinstance(argv, list) and ("--resume" in argv) != resume:
            return _not_a_launch(where, "argv and resume disagree about --resume")
        if st is not None and (isinstance(st, bool) or not isinstance(st, (int, float))):
            return _not_a_launch(where, "startTime is not a number")
        # startTime is the process's start time as epoch seconds, a time "greater than 0 and before the year
        # 10 000" (docs/contract.md, "Hostile evidence"): one below 0 or from the year 10 000 on is not of its
        # type.  0 is a start not read ("a controller gone before its keeper read its start"): of its type, and
        # never compared (check_snapshot; README.md, open question 82).
        if st is not None and not not_taken(st) and epoch(st) is None:
            return _not_a_launch(where, "startTime is not a time")
        return Launch(number, "start", pid, at, resume=resume, argv=argv, start_time=st)
    # An end says how the controller ended: an exit code, or a signal, never both (a process exits
    # with a code or is killed by a signal); neither is the console's "exit status lost" end
    # (docs/contract.md, "Controllers": a slow keeper may write its own after the console wrote the
    # status as lost), a sound end that is not exit 0 (README.md, open question 30).
    # Both keys are written, null where there is none (docs/evidence.md: `{"event": "end", pid, at,
    # code, signal}`): a key left out is neither an integer nor a signal's name nor null.
    if "code" not in row or "signal" not in row:
        return _not_a_launch(where, "an end without its code and signal (null where there is none)")
    code, signal = row.get("code"), row.get("signal")
    if not (code is None or is_int(code)):
        return _not_a_launch(where, "an end's code is not an integer or null")
    if not (signal is None or (isinstance(signal, str) and SIGNAL_NAME.fullmatch(signal) is not None)):
        return _not_a_launch(where, "an end's signal is not a signal's name or null")
    if code is not None and signal is not None:
        return _not_a_launch(where, "an end says both an exit code and a signal")
    return Launch(number, "end", pid, at, code=code, signal=signal)


@dataclass
class ArmLine:
    line: int
    event: str
    at: Fraction
    point: str | None
    raw: dict[str, Any]


@dataclass
class Arms:
    present: bool = False
    readable: bool = True
    reason: str | None = None
    lines: list[ArmLine] = field(default_factory=list)
    order_breaks: list[str] = field(default_factory=list)  # a line earlier than the one before it


def _arming_problem(row: dict[str, Any], at: Fraction | None) -> str | None:
    """Why a line of arms.jsonl is not an arming line, or None (docs/contract.md, "Which check a file
    fails": a line whose ``event``, ``at`` or ``point`` is not of its type; docs/evidence.md: ``fired``'s and
    ``missed``'s ``run`` and ``fromSeq``).  ``point`` a kill point (parse_point) or null, ``run`` a text or
    null, ``fromSeq`` a non-negative integer or null, each where written; ``at`` a time."""
    if row.get("event") not in ("arm", "disarm", "fired", "missed"):
        return "its event is none the console writes"
    if at is None:
        return "its at is not a time"
    run = row.get("run")
    if not (run is None or isinstance(run, str)):
        return "its run is not a text"
    # docs/contract.md (killTriggered): a point that is no kill point "is of the wrong type" in arms.jsonl.
    point = row.get("point")
    if not (point is None or isinstance(point, str)):
        return "its point is not a text"
    if not (point is None or is_point(point)):
        return "its point is no kill point"
    from_seq = row.get("fromSeq")
    if isinstance(from_seq, BigInt):
        non_negative = not from_seq.text.startswith("-")
    else:
        non_negative = isinstance(from_seq, int) and not isinstance(from_seq, bool) and from_seq >= 0
    if not (from_seq is None or non_negative):
        return "its fromSeq is not a non-negative integer"
    return None


def load_arms(out: Path) -> Arms:
    try:
        rows = read_jsonl_objects(out, "arms.jsonl", CAPS["arms.jsonl"])
    except Refused as exc:
        if str(exc).endswith(": missing"):
            return Arms(present=False)
        return Arms(present=True, readable=False, reason=str(exc))
    arms = Arms(present=True)
    for number, row in rows:
        at = parse_time(row.get("at"))
        problem = _arming_problem(row, at)
        if problem is not None or at is None:
            return Arms(present=True, readable=False, reason=f"arms.jsonl line {number}: not an arming line: {problem}")
        if arms.lines and at < arms.lines[-1].at - KEEPER_SLACK:
            arms.order_breaks.append(f"arms.jsonl line {number} is earlier than line {arms.lines[-1].line}")
        arms.lines.append(ArmLine(number, row["event"], at, row.get("point"), row))
    return arms


def load_watch(out: Path) -> tuple[int, str | None]:
    """(lines in ledger-watch.jsonl, or why it cannot be read); a missing file is no line."""
    try:
        data = read_bytes(out, "ledger-watch.jsonl", CAPS["ledger-watch.jsonl"])
    except Refused as exc:
        if str(exc).endswith(": missing"):
            return 0, None
        return 0, str(exc)
    return len([x for x in data.split(b"\n") if x.strip()]), None


@dataclass
class Outcome:
    present: bool
    code: Any = None
    signal: Any = None
    problem: str | None = None


def load_outcome(out: Path) -> Outcome:
    try:
        data = read_json(out, "outcome.json", CAPS["outcome.json"])
    except Refused as exc:
        if str(exc).endswith(": missing"):
            return Outcome(present=False)
        return Outcome(present=True, problem=str(exc))
    if not isinstance(data, dict):
        return Outcome(present=True, problem="outcome.json: not an object")
    return Outcome(present=True, code=data.get("code"), signal=data.get("signal"))


@dataclass
class Snapshot:
    label: str
    at: Fraction
    taken_in: Fraction
    processes: list[dict[str, Any]]


# docs/evidence.md (machine.jsonl): the labels the console writes, a light sample's and a heavy snapshot's.
SAMPLE = "sample"
SNAPSHOT_LABELS = ("start", "resume", "after-kill", "end")


@dataclass
class Machine:
    missing: bool = False
    problem: str | None = None  # unreadable, a line not its record, out of time order
    snapshots: list[Snapshot] = field(default_factory=list)


def load_machine(out: Path) -> Machine:
    """machine.jsonl's heavy snapshots (the light samples are not facts twice held, but each is a line of the
    file: its label and its time are held to their shapes and to the file's time order).

    docs/contract.md ("Which check a file fails"): a line with no label the console writes, an ``at`` that
    is not a time, a snapshot without its ``processes`` and ``containers`` lists, or out of time order fails
    ``exitedCleanly``; a torn last line is left out.  A heavy snapshot is dated when its event came and
    written once taken, so a light sample dated later may be written before it: the order is held within
    each kind, a line earlier than the one of its kind before it by more than KEEPER_SLACK (docs/contract.md:
    "in order only within its samples and within its snapshots")."""
    try:
        rows = read_jsonl_objects(out, "machine.jsonl", CAPS["machine.jsonl"])
    except Refused as exc:
        text = str(exc)
        return Machine(missing=text.endswith(": missing"), problem=text)
    m = Machine()
    previous: dict[bool, tuple[int, Fraction]] = {}  # the last sample's and the last snapshot's line and time
    for number, row in rows:
        where = f"machine.jsonl line {number}"
        label, at = row.get("label"), parse_time(row.get("at"))
        if label != SAMPLE and label not in SNAPSHOT_LABELS:
            return Machine(problem=f"{where}: a line with no label the console writes")
        if at is None:
            return Machine(problem=f"{where}: a line whose at is not a time")
        before = previous.get(label == SAMPLE)
        if before is not None and at < before[1] - KEEPER_SLACK:
            return Machine(problem=f"{where} is earlier than line {before[0]}, of its kind: out of time order")
        previous[label == SAMPLE] = (number, at)
        if label == SAMPLE:
            continue
        procs, containers, taken = row.get("processes"), row.get("containers"), row.get("takenIn", 0)
        if not isinstance(procs, list) or not isinstance(containers, list):
            return Machine(problem=f"{where}: a snapshot without its processes and containers lists")
        if isinstance(taken, bool) or not isinstance(taken, (int, float)) or not 0 <= taken < 3600:
            return Machine(problem=f"{where}: a snapshot whose takenIn is not a duration")
        if not all(isinstance(p, dict) for p in procs):
            return Machine(problem=f"{where}: a process of the wrong shape")
        m.snapshots.append(Snapshot(label, at, Fraction(taken), procs))
    return m
