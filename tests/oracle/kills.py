"""Each kill's checks: ``killDelivered``, ``killEvidence``, and per target the one story a sound folder tells.

For every kill the targets are computed from the ledger at ``beforeKillSeq``
(and the snapshot before the kill, for a container that started without its
``runStarted``); ``kill.json``, ``ledger-at-kill.json`` and the window file
must say the same.  Each target's story is then checked against the union
of the live and read-back recordings in the kill's window, the three
snapshots, the ledger after the kill, and who was running when each of its
records was seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from itertools import pairwise
from typing import Any

from tests.oracle.controllers import Controller, Controllers
from tests.oracle.evidence import Ledger, Record, Research, Seen, Timeline, parse_point, parse_power_point, valid_id
from tests.oracle.killfolder import PASSIVE, Event, Inspect, KillFolder, parse_inspect
from tests.oracle.ledger_checks import Run, chosen_by_round, id_list, round_key, runs_of, settlement_parts
from tests.oracle.power import POWER, PowerLoss, Powers
from tests.oracle.reading import is_int, quote, strict_equal
from tests.oracle.times import (
    FLOAT_SLACK,
    KEEPER_SLACK,
    MS,
    MS_SLACK,
    RESUMED_OVER,
    SECOND,
    SEEN_SLACK,
    TEXT_SLACK,
    WRITTEN_MS,
    epoch,
    not_taken,
    parse_time,
    show,
)
from tests.oracle.verdict import Tally

SCN, CO, RSF = "sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished"
TRIGGERS = ("auto", "manual", "crash", "stop")
MAX_TARGETS_A_KILL = 64
WINDOW = "container-events-window.json"
WINDOW_CLOSING = "the study finished: the window must be closed"


@dataclass
class Target:
    run: str
    cls: str  # inFlight | unrecorded | charged | unsettled
    info: Run
    plan: Record
    start: Record | None  # its runStarted at the kill
    container: str  # <prefix>-<ID>-<run>

    @property
    def diagnosis(self) -> bool:
        return self.plan.get("purpose") == "diagnosis"


@dataclass
class StudyFacts:
    """What every kill of a study is judged against."""

    ledger: Ledger
    research: Research
    timeline: Timeline
    controllers: Controllers
    finished: bool
    halted: bool | None  # haltedAtExport: holds, fails, or cannot tell yet
    _runs: dict[str, Run] | None = None
    # Every kill folder's power.json, read (power.read_powers): the power losses it explains, by kill.
    powers: Powers = field(default_factory=Powers)

    @property
    def runs(self) -> dict[str, Run]:
        """Every run of the whole ledger (computed once: each target reads it)."""
        if self._runs is None:
            self._runs = runs_of(self.ledger.records)
        return self._runs


def started_snapshot(ins: Inspect | None) -> bool:
    """Shown started (running or exited, not only created): a start time, and no status "created" (a status not
    written is judged by the start time alone); with no StartedAt written, its status as it stands, running or
    exited (Inspect.state).  A StartedAt written as Docker's zero time is a start that never came."""
    if ins is None:
        return False
    if ins.started_raw is None:
        return ins.state in ("running", "exited")
    return ins.started_at is not None and ins.started_at > 0 and ins.status != "created"


def lookup(snap: dict[str, Any] | None, name: str) -> tuple[bool, Any]:
    """(filed, raw inspect or None) for a container name, filed with or without the leading /."""
    if snap is None:
        return False, None
    for key in (name, "/" + name):
        if key in snap:
            return True, snap[key]
    return False, None


def compute_targets(
    f: StudyFacts, before_seq: int, before: dict[str, Any] | None, at_kill: list[Record] | None = None
) -> list[Target]:
    """The runs a kill left unfinished at before_seq, in the order they were planned.  ``at_kill`` is the ledger at
    the kill where it is not the ledger's own (a power loss's: ledger-at-kill.json, the ledger before the loss,
    README.md, open question 98).

    A run planned, not started and without a result by the ledger is ``unrecorded`` when container-before.json
    shows its container started, else ``charged`` when it was charged: docs/contract.md (killEvidence):
    "`unrecorded`: planned, not started and without a result by the ledger, its container
    (`<containerPrefix>-<ID>-<run>`) shown started (running or exited, not only created) in
    `container-before.json`"; "`charged`: planned and charged, not started and without a result, no started
    container".  The recordings do not class it: a start of it before the window that the snapshot does not
    show is a contradiction of the charged story ("The container's machine": "a container started before the
    kill, which `container-before.json` did not show: the target was not charged"), sameContainerNoRerun's
    (README.md, open question 89; it settles open question 16)."""
    stem = f.research.stem or ""
    upto = at_kill if at_kill is not None else f.ledger.at_kill(before_seq)
    runs = runs_of(upto)
    settled_rounds = {round_key(r.get("round")) for r in upto if r.kind == "diagnosisSettlement"}
    out = []
    for info in sorted(runs.values(), key=lambda r: r.plan.line if r.plan else 0):
        plan = info.plan
        if plan is None:
            continue
        name = stem + info.name
        cls = None
        if info.starts and not info.results:
            cls = "inFlight"
        elif not info.starts and not info.results:
            _, raw = lookup(before, name)
            ins, _ = parse_inspect(raw, name)
            if started_snapshot(ins):
                cls = "unrecorded"
            elif info.charges:
                cls = "charged"
        elif info.starts and info.results and plan.get("purpose") == "diagnosis" and info.round not in settled_rounds:
            cls = "unsettled"
        if cls is not None:
            out.append(Target(info.name, cls, info, plan, info.starts[0] if info.starts else None, name))
    return out


def ours(e: Event, research: Research) -> bool:
    """§6.1/§6.9: a container is the study's by its label, or by its stem unless a valid other study's label
    and that study's stem disown it."""
    study, stem, prefix = research.study, research.stem, research.prefix
    if study is None or stem is None:
        return False
    label = e.study_label
    if label == study:
        return True
    if not e.name.startswith(stem):
        return False
    return not (valid_id(label) and label != study and e.name.startswith(f"{prefix}-{label}-"))


@dataclass
class KillView:
    """One kill, read and cross-checked, ready for its targets' stories."""

    n: int
    kf: KillFolder
    scope: str
    trigger: str | None = None
    pid: int | None = None
    at: Fraction | None = None
    before_seq: int | None = None
    # Where the window opens: kill.json's since/sinceEpoch, one time; where kill.json gives no moment (missing,
    # not times, or two times), the window file's copy (docs/contract.md, "What the console writes": kill.json;
    # README.md, open question 81), and None while no copy gives one.
    since: Fraction | None = None
    # Why kill.json's since/sinceEpoch give no moment: the folder is incomplete (killEvidence, and
    # killTriggered's "complete for its stage": stage_incomplete).  None when they are one time.
    since_bad: str | None = None
    until: Fraction | None = None  # None while the window is open
    window_closed: bool = False  # the window file is there (read or not)
    # The window must have closed: the study finished (docs/contract.md, "The window").
    window_due: bool = False
    # Why the window file is not its record (read, and a field not of its type: killEvidence's, and the
    # folder is then incomplete); with why it is missing once due or unreadable, in window_bad.
    window_shape: list[str] = field(default_factory=list)
    # The window file missing once the window should have closed, unreadable, or not its record: killEvidence,
    # and every target's sameContainerNoRerun and resultSettledAndFinished ("their window ends where it
    # says": docs/contract.md, "Which check a file fails"); a target the file has no entry for, that target's.
    window_bad: list[str] = field(default_factory=list)
    window_bad_run: dict[str, list[str]] = field(default_factory=dict)
    incomplete: list[str] = field(default_factory=list)  # the stage's files missing or unreadable: why
    # The capture's files a console that died in the middle of it left out and the resume still writes
    # (capture_to_come): `?`, not incomplete (README.md, open question 96).
    to_come: list[str] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    judged: list[Target] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    recording_fail: list[str] = field(default_factory=list)
    recording_unknown: list[str] = field(default_factory=list)
    snapshots: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    controller: Controller | None = None
    resume: Controller | None = None
    # A controller started less than RESUMED_OVER before the kill while the killed one still ran: a resume
    # started over it (killDelivered ✗; README.md, open question 69).
    over: Controller | None = None
    result_seq: dict[str, Any] = field(default_factory=dict)
    result_seen: dict[str, Fraction | None] = field(default_factory=dict)
    # The snapshots' defects (a file of the stage missing or unreadable, an inspect of the wrong shape):
    # every target's sameContainerNoRerun (docs/contract.md, "Which check a file fails").
    snapshot_fail: list[str] = field(default_factory=list)
    # A snapshot of the capture still to come (capture_to_come): every target's sameContainerNoRerun `?`.
    snapshot_unknown: list[str] = field(default_factory=list)
    # The kill's own rule for the records after it (check_records_after): the first start after the kill.
    resume_at: Fraction | None = None
    # The power loss the kill folder's power.json explains (power.read_powers), trusted; None for a kill without
    # one, or whose power.json is not trusted (judged as a kill without a loss: README.md, open question 97).
    power: PowerLoss | None = None

    @property
    def split(self) -> int | None:
        """Where the ledger as it ends takes over from the ledger at the kill: records of a seq above this were
        written after the kill.  beforeKillSeq; for a power loss, ledgerSeqAfter (docs/contract.md, "Power loss
        (§9.3)": "the resumed controller writes its own from seq ledgerSeqAfter + 1"; README.md, open question
        98)."""
        return self.power.seq_after if self.power is not None else self.before_seq

    def at_kill(self) -> list[Record] | None:
        """The ledger at the kill where it is not the ledger's own records to beforeKillSeq: a power loss's."""
        return self.power.records if self.power is not None else None

    def record_at_kill(self, f: StudyFacts, seq: Any) -> Record | None:
        """The record of a seq as the ledger held it at the kill (a power loss's: ledger-at-kill.json's)."""
        return self.power.by_seq(seq) if self.power is not None else f.ledger.by_seq(seq)

    def seen_at_kill(self, f: StudyFacts, rec: Record) -> Seen | None:
        """The timeline line that saw a record of the ledger at the kill: for one a power loss took, the line that
        saw it before the kill (``Timeline.saw_lost``), never the resumed controller's record of that seq."""
        if self.power is not None and self.power.took(rec):
            return f.timeline.saw_lost(self.n, rec)
        return f.timeline.saw(rec)

    def took(self, rec: Record | None) -> bool:
        """Whether the kill's power loss took this record of the ledger at the kill."""
        return self.power is not None and self.power.took(rec)


def kill_view(f: StudyFacts, kf: KillFolder, t: Tally) -> KillView:
    """Reads kill.json's facts, adding killEvidence's failures as they are found."""
    scope = f"kill {kf.n}"
    v = KillView(kf.n, kf, scope)
    ev = "killEvidence"
    t.add(scope, ev)
    # timeline.jsonl missing, unreadable, holding a line that is not its record or out of time order: every
    # kill's killEvidence (docs/contract.md, "Which check a file fails").
    problems = f.timeline.file_problems
    for problem in problems[:3]:
        t.fail(scope, ev, problem)
    if len(problems) > 3:
        t.fail(scope, ev, f"and {len(problems) - 3} more timeline.jsonl lines out of order or not records")
    if kf.unread is not None:
        t.fail(scope, ev, kf.unread)
        return v
    for problem in kf.problems.values():
        t.fail(scope, ev, problem)
    # power.json (docs/contract.md, "Power loss (§9.3)"): one not trusted is why (power.read_power), and the kill
    # is judged as a kill without a loss; a loss trusted may have lost/ files not as it says (README.md, open
    # question 97).
    for problem in f.powers.problems.get(kf.n, []):
        t.fail(scope, ev, problem)
    v.power = f.powers.trusted.get(kf.n)
    k = kf.kill
    if k is None:
        if "kill.json" not in kf.problems:
            t.fail(scope, ev, f"{kf.rel}/kill.json: missing")
        return v
    trigger, pid, at, bks = k.get("trigger"), k.get("pid"), parse_time(k.get("at")), k.get("beforeKillSeq")
    v.trigger = trigger if trigger in TRIGGERS else None
    if v.trigger is None:
        t.fail(scope, ev, "kill.json: trigger is none of auto, manual, crash, stop")
    if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
        v.pid = pid
    else:
        t.fail(scope, ev, "kill.json: pid is not a positive integer")
    v.at = at
    if at is None:
        t.fail(scope, ev, "kill.json: at is not a time")
    if (
        isinstance(bks, int)
        and not isinstance(bks, bool)
        and bks >= 0
        # A ledger not read: ledger_unreadable_targets.  A power loss's beforeKillSeq is ledger-at-kill.json's, the
        # ledger before the loss (power.read_power holds it there), whatever seq the ledger ends at.
        and (bks <= f.ledger.last_seq or not f.ledger.readable or v.power is not None)
    ):
        v.before_seq = bks
    else:
        t.fail(scope, ev, "kill.json: beforeKillSeq is not a seq of the ledger")
    # docs/contract.md ("What the console writes", kill.json): since/sinceEpoch "required, and one time: the
    # window opens there; missing, not times or two times, they give no moment, the folder is incomplete, and
    # the window opens at container-events-window.json's copy" (window_opens).  README.md, open question 81.
    since_s, since_e = parse_time(k.get("since")), epoch(k.get("sinceEpoch"))
    if "since" not in k or "sinceEpoch" not in k:
        v.since_bad = "kill.json's since/sinceEpoch missing"
    elif since_s is None or since_e is None:
        v.since_bad = "kill.json's since/sinceEpoch not times"
    elif abs(since_s - since_e) > TEXT_SLACK:
        v.since_bad = "kill.json's since and sinceEpoch not one time"
    else:
        v.since = since_e
    if v.since_bad is not None:
        t.fail(scope, ev, f"{v.since_bad}: they give no moment, and the folder is incomplete")
    if k.get("captureError") is not None:
        t.fail(scope, ev, "kill.json: captureError is set: the capture failed")
    stem = f.research.stem
    if "prefix" in k and (stem is None or k.get("prefix") != stem):
        t.fail(scope, ev, "kill.json: prefix is not the study's stem")
    if not isinstance(k.get("targets"), list):
        t.fail(scope, ev, "kill.json: targets is not a list")
    # "kill.json's fields have their types (point, where written, a kill point of §7's grammar)": a point with a
    # control character after it, or of a kind the ledger has not, is none (README.md, open question 60).
    if k.get("point") is not None and parse_point(k.get("point")) is None:
        t.fail(scope, ev, "kill.json: point is not a kill point of §7's grammar")
    ts = k.get("triggerSeq")
    if ts is not None and not (
        isinstance(ts, int) and not isinstance(ts, bool) and v.before_seq is not None and 1 <= ts <= v.before_seq
    ):
        t.fail(scope, ev, "kill.json: triggerSeq is not a seq at or before beforeKillSeq")
    if k.get("triggerEvent") is not None and not isinstance(k.get("triggerEvent"), dict):
        t.fail(scope, ev, "kill.json: triggerEvent is not an event")
    # docs/contract.md (killEvidence): "kill.json's fields have their types (...; an automatic kill's
    # triggerEvent a container event, an object, when its point is a container: one, and its triggerSeq a seq
    # when its point is an after: one)": null or missing is not of that type.  The point's kind is read from
    # kill.json's own point (one that is none is failed above).  Whether the event or seq is the point's
    # moment is killTriggered's (arms.moment).  README.md, open question 73.
    kind = parse_point(k.get("point"))
    if v.trigger == "auto" and kind is not None:
        if kind[0] == "container" and not isinstance(k.get("triggerEvent"), dict):
            t.fail(scope, ev, "kill.json: an automatic kill at a container: point without its triggerEvent")
        if kind[0] == "after" and ts is None:
            t.fail(scope, ev, "kill.json: an automatic kill at an after: point without its triggerSeq")
    check_moment(k, v, t)
    signalled, signal = k.get("signalled"), k.get("signal")
    if v.trigger in ("crash", "stop") and (signalled is not False or signal is not None):
        t.fail(scope, ev, f"kill.json: a {v.trigger} the console did not make says a signal was sent")
    # When a record was seen is held twice (docs/contract.md, killEvidence, §6.9): an automatic kill's
    # triggerSeenEpoch is when timeline.jsonl saw triggerSeq, its seenAt that epoch truncated to the
    # millisecond (the epoch in [seenAt, seenAt + 1 ms), within a float's rounding); beforeKillSeq was seen by
    # the kill's at (SEEN_SLACK).  A timeline not read whole is not held to either.
    timeline_whole = f.timeline.readable and f.timeline.bad_lines == 0
    tsa = parse_time(k.get("triggerSeenAt"))
    # The line that saw the ledger's record of that seq (a line that saw it as another record tells nothing of
    # when it was seen: Timeline.saw).
    trigger_rec = v.record_at_kill(f, ts)
    seen = v.seen_at_kill(f, trigger_rec) if trigger_rec is not None else None
    if v.trigger == "auto" and timeline_whole and seen is not None:
        tse = epoch(k.get("triggerSeenEpoch"))
        if tse is not None:
            if not seen.seen - FLOAT_SLACK <= tse < seen.seen + MS + FLOAT_SLACK:
                t.fail(
                    scope,
                    ev,
                    f"kill.json: triggerSeenEpoch is not when timeline.jsonl saw seq {ts} "
                    "(its seenAt is not that epoch truncated to the millisecond)",
                )
        elif tsa is not None and abs(seen.seen - tsa) > WRITTEN_MS:
            # No epoch taken (written 0: "not compared", README.md, open question 82; or an older folder without
            # it; or one that is no time, which check_moment fails as such): its text, within WRITTEN_MS.
            t.fail(scope, ev, f"kill.json: triggerSeenAt is not when timeline.jsonl says seq {ts} was seen")
    # beforeKillSeq "the last record the console had seen as it froze the controller (for an end it did not
    # make: as it found the end, the ledger read to it), was seen by the kill's at": whatever the trigger, a
    # crash's and a stop's too (README.md, open question 80).  A trigger that is none is held as well.
    before_rec = v.record_at_kill(f, v.before_seq) if v.before_seq is not None else None
    if before_rec is not None and timeline_whole:
        seen = v.seen_at_kill(f, before_rec)
        if seen is not None and at is not None and seen.seen > at + SEEN_SLACK:
            t.fail(scope, ev, f"seq {v.before_seq} (beforeKillSeq) was first seen after the kill")
    return v


# kill.json's moment, written twice (docs/contract.md, killEvidence): each time's text and its epoch.
MOMENT_PAIRS = (("at", "killSentEpoch"), ("frozenAt", "frozenEpoch"), ("triggerSeenAt", "triggerSeenEpoch"))
MOMENT_ORDER = ("triggerSeenEpoch", "sinceEpoch", "frozenEpoch", "killSentEpoch", "killReturnedEpoch")
# kill.json's times that may not have been taken: written 0, they are of their type and not compared
# (docs/contract.md, "Hostile evidence"; README.md, open question 82).
MAY_NOT_BE_TAKEN = frozenset({"triggerSeenEpoch", "frozenEpoch", "killSentEpoch", "killReturnedEpoch"})


def check_moment(k: dict[str, Any], v: KillView, t: Tally) -> None:
    """`at` and `killSentAt` are one text; each time's text is its epoch truncated to the millisecond (the epoch
    in [text, text + 1 ms), within a float's rounding: FLOAT_SLACK); `frozenMs` is the freeze's length (a
    number: written null, or of any other type, it fails; not written, it is not compared);
    triggerSeenEpoch <= sinceEpoch <= frozenEpoch <= killSentEpoch <= killReturnedEpoch, each within a
    millisecond.  A time the console did not take, written 0, is not compared (nor one not written at all, as
    older folders have it): triggerSeenEpoch, frozenEpoch, killSentEpoch and killReturnedEpoch (docs/contract.md,
    "Hostile evidence": "Where a field holds a time that may not have been taken, 0 says so and that time is not
    compared").  sinceEpoch is not one of them: its 0 is no time, and fails as one (README.md, open questions 81
    and 82); so does any other value that is not a time (below 0, from the year 10 000 on), never compared."""
    scope, ev = v.scope, "killEvidence"
    taken: dict[str, Fraction] = {}
    for key in MOMENT_ORDER:
        raw = k.get(key)
        if raw is None or (key in MAY_NOT_BE_TAKEN and not_taken(raw)):
            continue
        value = epoch(raw)
        if value is None:
            t.fail(scope, ev, f"kill.json: {key} is not a time")
        else:
            taken[key] = value
    if "killSentAt" in k and k.get("killSentAt") != k.get("at"):
        t.fail(scope, ev, "kill.json: at and killSentAt are not one text")
    for text_key, epoch_key in MOMENT_PAIRS:
        if epoch_key not in taken:
            continue
        text = parse_time(k.get(text_key))
        if text is None:
            if text_key != "at":  # at's own shape is reported where it is read
                t.fail(scope, ev, f"kill.json: {text_key} is not a time, and {epoch_key} is")
        elif not text - FLOAT_SLACK <= taken[epoch_key] < text + MS + FLOAT_SLACK:
            # The text is its epoch truncated to the millisecond: the epoch lies in [text, text + 1 ms).
            t.fail(scope, ev, f"kill.json: {text_key} is not {epoch_key} truncated to the millisecond: not one time")
    # frozenMs is "the freeze's length (a number: written null, or of any other type, it is of the wrong
    # shape)" (docs/contract.md, killEvidence): a key written null fails; a key not written is not compared.
    if "frozenMs" in k:
        frozen_ms = k["frozenMs"]
        if isinstance(frozen_ms, bool) or not isinstance(frozen_ms, (int, float)):
            t.fail(scope, ev, "kill.json: frozenMs is not a number")
        elif "frozenEpoch" in taken and "killSentEpoch" in taken:
            length = taken["killSentEpoch"] - taken["frozenEpoch"]
            if abs(Fraction(frozen_ms) / 1000 - length) > MS:
                t.fail(scope, ev, "kill.json: frozenMs is not the freeze's length (killSentEpoch - frozenEpoch)")
    order = [key for key in MOMENT_ORDER if key in taken]
    for a, b in pairwise(order):
        if taken[a] > taken[b] + MS:
            t.fail(scope, ev, f"kill.json: {a} is after {b}")


def judge_kill(
    f: StudyFacts, kf: KillFolder, t: Tally, claimed: dict[tuple[int, int], int], budget: list[int]
) -> KillView:
    v = kill_view(f, kf, t)
    scope, ev = v.scope, "killEvidence"
    cons = f.controllers
    killed_and_resume(cons, v, t)
    if v.trigger in ("auto", "manual") or v.trigger is None:
        judge_delivered(f, v, t, claimed)
    elif v.controller is not None:
        # The end the console judged is the pid's end at or before kill.json's at, to the times' rounding
        # (FLOAT_SLACK, 1 µs): an end only after it is not the one the console saw (README.md, open question 43).
        end = v.controller.end
        if end is None or (v.at is not None and end.at > v.at + FLOAT_SLACK):
            t.fail(scope, ev, f"a {v.trigger} with no end of pid {v.pid} by then")
        else:
            key = (v.controller.pid, end.line)
            if key in claimed:
                t.fail(scope, ev, f"kill {claimed[key]} already claims pid {v.pid}'s end")
            claimed.setdefault(key, v.n)
    window_shape(v, t)
    window_opens(v)
    if not f.ledger.readable:
        v.incomplete = stage_incomplete(f, v)
        ledger_unreadable_targets(f, v, t, budget)
        return v
    if v.before_seq is None or v.kf.kill is None:
        v.incomplete = stage_incomplete(f, v)
        for_targets_unknowable(v, t)
        return v
    # The snapshots, then the targets.
    for name in ("container-before.json", "container-after-kill.json", "container-before-resume.json"):
        v.snapshots[name] = kf.snapshots.get(name)
    v.targets = compute_targets(f, v.before_seq, v.snapshots["container-before.json"], v.at_kill())
    v.window_due = window_due(f)
    v.incomplete = stage_incomplete(f, v)
    check_listed_targets(v, t)
    check_ledger_at_kill(f, v, t)
    check_files(f, v, t)
    check_window(f, v, t)
    v.events = union_events(f, v)
    # Targets judged one by one, within the caps.
    room = min(MAX_TARGETS_A_KILL, budget[0])
    v.judged = v.targets[:room]
    budget[0] -= len(v.judged)
    if len(v.targets) > len(v.judged):
        t.fail(scope, ev, f"{len(v.judged)} of {len(v.targets)} targets judged one by one (the caps)")
    check_records_after(f, v, t)
    for target in v.judged:
        judge_target(f, v, target, t)
    return v


def killed_and_resume(cons: Controllers, v: KillView, t: Tally) -> None:
    """The controller killed (kill.json's pid, started before the kill) and its resume, and the pid held to
    launches.jsonl (killEvidence: "kill.json's pid is a controller's that launches.jsonl started before the
    kill ... where launches.jsonl is not read whole and no start of the pid is read, the pid is not held by its
    other copy: ✗, naming the file's fault").

    The controllers are replayed by time (docs/contract.md, "Controllers"; §6.8): the resume is the first
    controller started at or after the kill (SEEN_SLACK: a start is stamped before the spawn), by time, never
    the next line of the file nor a controller started before the kill over the killed one (that one is
    exitedCleanly's "one at a time"; README.md, open question 63)."""
    scope, ev = v.scope, "killEvidence"
    if v.pid is None:
        return
    if cons.readable:
        if v.at is None:
            return
        killed = [c for c in cons.items if c.pid == v.pid and c.start.at <= v.at + MS_SLACK]
        v.controller = killed[-1] if killed else None
        if v.controller is None:
            t.fail(scope, ev, f"pid {v.pid} is no controller started before the kill")
            return
        v.resume = next((c for c in cons.items if c is not v.controller and c.start.at >= v.at - SEEN_SLACK), None)
        # docs/contract.md ("Controllers", RESUMED_OVER: "a `start` of another pid less than this before the kill,
        # while the killed controller still ran, was started over it"; "One at a time": "every start after a kill
        # comes after the killed controller's end (killDelivered ✗ otherwise)").  A start earlier than that, or
        # once the killed controller had ended, is no resume of the kill (exitedCleanly's, README.md, open
        # question 63); nor is a start of the killed pid itself (README.md, open question 70).
        killed = v.controller
        killed_end = cons.end_after(killed.pid, killed.start.at)
        v.over = next(
            (
                c
                for c in cons.items
                if c is not killed
                # RESUMED_OVER (the constants table): "a `start` of another pid ... (a line repeating the killed
                # controller's own start is no other controller: `exitedCleanly`'s)".
                and c.pid != killed.pid
                and killed.start.at <= c.start.at
                and v.at - RESUMED_OVER < c.start.at < v.at - SEEN_SLACK
                and (killed_end is None or killed_end.at > c.start.at)
            ),
            None,
        )
        return
    if cons.starts is None:
        # Not read at all (a link, a folder, past its cap): no start of the pid is read (README.md, open
        # question 52).
        t.fail(scope, ev, f"pid {v.pid} is not held to launches.jsonl: {cons.reason}")
    elif v.at is not None and not any(pid == v.pid and at <= v.at + MS_SLACK for _, pid, at in cons.starts):
        # Read, not whole (a line that is not a launch, or not a JSON object): the pid is held to the start
        # lines read, and a start line without that pid starts no such controller (README.md, open questions 42
        # and 57).  A pid whose start line is read is held, whatever the file's other lines.  A start line that
        # is not a launch ("`resume` is `true` or `false`": a line not its record) is no start of the pid
        # (README.md, open question 66).  killDelivered fails for the file already.
        t.fail(
            scope,
            ev,
            f"pid {v.pid} is not held to launches.jsonl: no start line of it before the kill is read ({cons.reason})",
        )


def ledger_unreadable_targets(f: StudyFacts, v: KillView, t: Tally, budget: list[int]) -> None:
    """The ledger cannot be read (docs/contract.md, "Which check a file fails", the ledger: "every check that
    reads it"): the targets cannot be computed from it, so the runs kill.json lists stand for them, and each
    gets its three checks, every one of which reads the ledger: ✗, or ``?`` only for a ledger not written yet
    (missing) while the study can still be resumed (README.md, open question 33)."""
    scope, ev = v.scope, "killEvidence"
    not_yet = f.ledger.missing and not f.finished
    (t.unknown if not_yet else t.fail)(
        scope, ev, f"the ledger cannot be read ({f.ledger.reason}): the kill cannot be held to it"
    )
    k = v.kf.kill or {}
    listed = k.get("targets") if isinstance(k.get("targets"), list) else []
    runs: list[str] = []
    for entry in listed:
        run = entry.get("run") if isinstance(entry, dict) else None
        if valid_id(run) and run not in runs:
            runs.append(run)
    room = min(MAX_TARGETS_A_KILL, budget[0])
    budget[0] -= min(room, len(runs))
    for run in runs[:room]:
        for name in (SCN, CO, RSF):
            if not_yet:
                t.unknown(f"{scope} · {run}", name, f"the ledger is not written yet ({f.ledger.reason})")
            else:
                t.fail(f"{scope} · {run}", name, f"the ledger cannot be read: {f.ledger.reason}")


def for_targets_unknowable(v: KillView, t: Tally) -> None:
    t.fail(v.scope, "killEvidence", "the targets cannot be known without kill.json's beforeKillSeq")


def judge_delivered(f: StudyFacts, v: KillView, t: Tally, claimed: dict[tuple[int, int], int]) -> None:
    scope, name = v.scope, "killDelivered"
    t.add(scope, name)
    k = v.kf.kill
    if k is None or v.kf.unread is not None:
        t.fail(scope, name, "kill.json cannot be read")
        return
    if k.get("signalled") is not True:
        t.fail(scope, name, "kill.json does not say the signal was sent")
    if "signal" in k and k.get("signal") != "SIGKILL":
        t.fail(scope, name, "kill.json's signal is not SIGKILL")
    if not f.controllers.readable:
        t.fail(scope, name, f"launches.jsonl cannot be read: {f.controllers.reason}")
        return
    c = v.controller
    if c is None or v.at is None:
        t.fail(scope, name, "no controller of launches.jsonl was running at the kill")
        return
    if v.over is not None:
        # docs/contract.md (RESUMED_OVER; "One at a time"): a start less than 1 s before the kill, while the killed
        # controller still ran, was started over it, a resume before the killed controller's end (README.md,
        # open question 69).
        t.fail(
            scope,
            name,
            f"pid {v.over.pid} started at {show(v.over.start.at)}, less than RESUMED_OVER before the kill, while pid "
            f"{c.pid} still ran: a resume started over it, before its end",
        )
    end = c.end
    if end is None:
        # "the killed controller's end, the first end of kill.json's pid at or after the kill's at": the replay
        # gives a controller started over the killed one (before the kill, by time) the killed one's place, and
        # the killed one no end; its end is still the pid's first end after the kill (README.md, open question
        # 63).  A controller that had ended before the kill ends once: no later end of it is the kill's.
        end = f.controllers.end_after(c.pid, v.at)
    if end is None or end.at < v.at - KEEPER_SLACK:
        if end is not None:
            t.fail(scope, name, f"pid {c.pid} ended at {show(end.at)}, before the kill")
        elif v.resume is not None:
            # docs/contract.md ("One at a time"; killDelivered: "the resume started after that end"): a console
            # resumes only once the killed controller has ended, so a later start with no end of it is ✗.
            t.fail(scope, name, f"pid {v.resume.pid} started after the kill, and pid {c.pid} has no end before it")
        elif f.finished:
            t.fail(scope, name, f"pid {c.pid} has no end")
        else:
            t.unknown(scope, name, f"pid {c.pid} has no end yet")
        return
    if end.signal != "SIGKILL":
        t.fail(scope, name, f"pid {c.pid} did not end by SIGKILL")
    # The end is held to kill.json's at alone (above, within KEEPER_SLACK): docs/contract.md (killDelivered)
    # names "the first end of kill.json's pid at or after the kill's at".  killSentEpoch is the same moment
    # written again; its disagreeing with at is killEvidence's (check_moment), never killDelivered's.
    if v.resume is not None and v.resume.start.at < end.at - MS_SLACK:
        t.fail(scope, name, f"the resume (pid {v.resume.pid}) started before pid {c.pid}'s end")
    key = (c.pid, end.line)
    if key in claimed:
        t.fail(scope, name, f"kill {claimed[key]} already claims the same end of pid {c.pid}")
    claimed.setdefault(key, v.n)


def check_listed_targets(v: KillView, t: Tally) -> None:
    scope, ev = v.scope, "killEvidence"
    k = v.kf.kill or {}
    listed = k.get("targets") if isinstance(k.get("targets"), list) else []
    expected = {x.run: x for x in v.targets}
    seen: set[str] = set()
    beyond = 0
    for entry in listed:
        run = entry.get("run") if isinstance(entry, dict) else None
        if not isinstance(run, str) or run not in expected:
            beyond += 1
            continue
        if run in seen:
            t.fail(scope, ev, f"kill.json lists {run} twice")
            continue
        seen.add(run)
        x = expected[run]
        assert isinstance(entry, dict)
        want = {
            "class": x.cls,
            "cell": x.plan.get("object"),
            "round": x.plan.get("round"),
            "planSeq": x.plan.seq,
            "startSeq": x.start.seq if x.start is not None else None,
            "container": x.start.get("container")
            if x.start is not None
            else (x.container if x.cls == "unrecorded" else None),
        }
        wrong = [key for key, value in want.items() if key not in entry or not strict_equal(entry[key], value)]
        if wrong:
            t.fail(scope, ev, f"kill.json's target {run}: {', '.join(wrong)} not as the ledger has it ({x.cls})")
    for run, x in expected.items():
        if run not in seen:
            t.fail(scope, ev, f"kill.json omits {run} ({x.cls})")
    if beyond:
        t.fail(scope, ev, f"kill.json lists {beyond} target(s) the kill did not leave unfinished")


def check_ledger_at_kill(f: StudyFacts, v: KillView, t: Tally) -> None:
    scope, ev = v.scope, "killEvidence"
    lak = v.kf.at_kill
    if lak is None:
        if "ledger-at-kill.json" in v.to_come:
            t.unknown(scope, ev, f"{v.kf.rel}/ledger-at-kill.json: missing; {TO_COME}")
        elif "ledger-at-kill.json" not in v.kf.problems:
            t.fail(scope, ev, f"{v.kf.rel}/ledger-at-kill.json: missing")
        return
    assert v.before_seq is not None
    if v.power is not None:
        # A power loss (docs/contract.md, "Power loss (§9.3)"): ledger-at-kill.json is the ledger before the loss,
        # its records after ledgerSeqAfter lost (power.read_power holds them to be the records to beforeKillSeq),
        # and "the ledger's first ledgerSeqAfter records must equal its first ledgerSeqAfter records": the copy
        # held to the ledger where the ledger still holds it (ledgerWellFormed says the ledger changed).
        if not v.power.kept_ok:
            t.fail(
                scope,
                ev,
                f"ledger-at-kill.json's records to seq {v.power.seq_after} (ledgerSeqAfter) are not the ledger's "
                "first records",
            )
        return
    # "equals the ledger's first records, ending at beforeKillSeq, exactly": the ledger as it stood at the
    # kill is a prefix of the file (it is only appended to), so its records are taken in file order up to
    # the first of seq beforeKillSeq, never picked by their seq (a line copied before the kill is in it).
    prefix: list[Record] = []
    if v.before_seq > 0:
        for r in f.ledger.records:
            prefix.append(r)
            if r.seq == v.before_seq:
                break
        else:
            t.fail(scope, ev, f"the ledger has no record of seq {v.before_seq} (beforeKillSeq)")
            return
    for i, (a, r) in enumerate(zip(lak, prefix, strict=False), start=1):
        if not strict_equal(a, r.raw):
            t.fail(scope, ev, f"ledger-at-kill.json's record {i} is not the ledger's record {i} (line {r.line})")
            return
    if len(lak) != len(prefix):
        t.fail(
            scope,
            ev,
            f"ledger-at-kill.json holds {len(lak)} records, the ledger {len(prefix)} to seq {v.before_seq}",
        )


STAGE_FILES = (
    "kill.json",
    "ledger-at-kill.json",
    "container-before.json",
    "container-after-kill.json",
    "container-events-live.jsonl",
)
# The capture's files that `studymon run --resume` writes when a console died in the middle of it.
CAPTURE_LATE = ("ledger-at-kill.json", "container-after-kill.json")
TO_COME = "`studymon run --resume` writes it before it starts the controller"


def capture_to_come(f: StudyFacts, v: KillView) -> list[str]:
    """The capture's files missing that the resume still writes: docs/contract.md (killEvidence): "a console that
    died in the middle of the capture leaves out `ledger-at-kill.json` or `container-after-kill.json`, and
    `studymon run --resume` writes them before it starts the controller, while nothing has changed them: missing
    while the study can still be resumed, they are `?`".  Only those two, only missing (one there and unreadable
    is written wrongly), only while the study has not finished (a finished one is resumed no more: ✗ as before),
    and only while no controller has started after the kill: the resume writes them before it starts one, and a
    later resume cannot write them "while nothing has changed them" (README.md, open question 96)."""
    if f.finished or v.resume is not None:
        return []
    return [name for name in CAPTURE_LATE if name not in v.kf.present]


def story_end(f: StudyFacts, x: Target) -> Record | None:
    """The record that ends a target's story (docs/contract.md, "The window"): its result; an ``unsettled``
    target's (its result written before the kill), its round's settlement."""
    if x.cls == "unsettled":
        rk = x.info.round
        return next(
            (r for r in f.ledger.records if r.kind == "diagnosisSettlement" and round_key(r.get("round")) == rk), None
        )
    return next((r for r in f.ledger.records if r.kind == "runResult" and r.run == x.run), None)


def window_due(f: StudyFacts) -> bool:
    """Whether the kill's window must have closed (docs/contract.md, "The window": "Once the study has finished
    ... a window whose targets all have their results must have its file"; "Which check a file fails": the
    window file "once the window has closed"): the study finished, which closes every window still open.
    While the study has not finished, a window file not there is a window still open, whatever the ledger
    says of its targets' stories: the checks that need it are ``?`` (README.md, open question 29)."""
    return f.finished


def window_opens(v: KillView) -> None:
    """Where kill.json gives no moment (``since_bad``), the window opens at the window file's copy
    (docs/contract.md, "What the console writes": kill.json's since/sinceEpoch "missing, not times or two times,
    they give no moment, the folder is incomplete, and the window opens at container-events-window.json's
    copy"): its ``sinceEpoch``, read as its ``untilEpoch`` is (check_window): the file's four times are times and
    the window does not close before it opens.  A window file still to come, or one whose times are not so,
    gives none either: every event of the target counts, as before (README.md, open question 81)."""
    w = v.kf.window
    if v.since is not None or v.since_bad is None or w is None:
        return
    s_str, s_ep = parse_time(w.get("since")), epoch(w.get("sinceEpoch"))
    u_str, u_ep = parse_time(w.get("until")), epoch(w.get("untilEpoch"))
    if s_str is None or s_ep is None or u_str is None or u_ep is None or u_ep < s_ep:
        return
    v.since = s_ep


def stage_files(f: StudyFacts, v: KillView) -> list[str]:
    """The files a kill folder holds at its stage (killEvidence): those of the capture; once the study was
    resumed the snapshot before the resume; once the window closed (or must have: the study finished, which
    closes it) the read-back recording and the window file too."""
    kf = v.kf
    v.window_closed = kf.window is not None or WINDOW in kf.present
    closed = v.window_closed or f.finished or v.window_due
    need = list(STAGE_FILES)
    if v.resume is not None or closed:
        need.append("container-before-resume.json")
    if closed:
        need += ["container-events.jsonl", WINDOW]
    # power.json: there, it is the folder's (read, and trusted or not); a kill at a power point writes it "before
    # the resume" (docs/contract.md, "Power loss (§9.3)"), so once a controller started after the kill, or the
    # study finished, it is of the stage (README.md, open question 97).
    power_point = parse_power_point((kf.kill or {}).get("point")) is not None
    if POWER in kf.present or (power_point and (v.resume is not None or f.finished)):
        need.append(POWER)
    return need


def stage_incomplete(f: StudyFacts, v: KillView) -> list[str]:
    """Why the folder is not complete for its stage ("present and readable", killEvidence): each file of
    its stage missing, or there and not readable as the console writes it (refused unread: a link, not a
    regular file, past its cap; or read and not UTF-8 JSON of its kind: not JSON, a repeated key, not the
    object or list it holds).  A field of the wrong type inside a file read is killEvidence's alone
    (README.md, open question 26), but for the window file: one that is not its record is unusable, and the
    folder is not complete (docs/contract.md, "Which check a file fails"; README.md, open question 29); and
    for kill.json's since/sinceEpoch: missing, not times or two times, "the folder is incomplete"
    (docs/contract.md, "What the console writes"; README.md, open question 81)."""
    kf = v.kf
    if kf.unread is not None:
        return [kf.unread]
    why = []
    # kill.json's since/sinceEpoch missing, not times or two times: "the folder is incomplete" (docs/contract.md,
    # "What the console writes"), for killTriggered's "complete for its stage" too (README.md, open question 81).
    if v.since_bad is not None:
        why.append(v.since_bad)
    v.to_come = capture_to_come(f, v)
    for name in stage_files(f, v):
        if name in v.to_come:
            continue  # still to come: `?` (killEvidence, killTriggered), not incomplete
        if name not in kf.present:
            why.append(f"{name} missing" + (f" ({WINDOW_CLOSING})" if name == WINDOW else ""))
        elif name in kf.unreadable:
            why.append(f"{name} unreadable")
        elif name in kf.problems:
            why.append(f"{name} not readable as the console writes it")
        elif name == WINDOW and v.window_shape:
            why.append(f"{name} not its record")
        elif name == POWER and kf.n in f.powers.untrusted:
            why.append(f"{name} not trusted")
    return why


def check_files(f: StudyFacts, v: KillView, t: Tally) -> None:
    scope, ev = v.scope, "killEvidence"
    kf = v.kf
    need = stage_files(f, v)
    for name in need:
        if name in v.to_come:
            t.unknown(scope, ev, f"{kf.rel}/{name}: missing; {TO_COME}")
        elif name not in kf.present:
            t.fail(scope, ev, f"{kf.rel}/{name}: missing" + (f" ({WINDOW_CLOSING})" if name == WINDOW else ""))
            if name == WINDOW:
                v.window_bad.insert(0, f"{kf.rel}/{name}: missing ({WINDOW_CLOSING})")
    # The snapshots (docs/contract.md, "Which check a file fails"): one of the stage missing or unreadable, or
    # an entry of the wrong shape, whoever's it is (not an inspect object or null; Id, Name or State of the wrong
    # type; State.Running not a boolean or not what State.Status says; State.Status, State.StartedAt or
    # State.FinishedAt not a text or State.ExitCode not an integer, those four where written), fails every
    # target's sameContainerNoRerun; so does an entry filed under another name than its Name.
    # killEvidence asks of a snapshot only that it is there and readable (above, and kill_view).
    for name in ("container-before.json", "container-after-kill.json", "container-before-resume.json"):
        if name in v.to_come:
            v.snapshot_unknown.append(f"{kf.rel}/{name}: missing; {TO_COME}")
        elif name in need and name not in kf.present:
            v.snapshot_fail.append(f"{kf.rel}/{name}: missing")
        elif name in kf.problems:
            v.snapshot_fail.append(kf.problems[name])
        snap = kf.snapshots.get(name)
        for filed, raw in (snap or {}).items():
            ins, problem = parse_inspect(raw, f"{name} {quote(filed)}")
            if problem is not None:
                v.snapshot_fail.append(problem)
            if ins is not None and ins.name != filed.lstrip("/"):
                v.snapshot_fail.append(f"{name}: the inspect filed under {quote(filed)} is named {quote(ins.name)}")


def window_entry_problem(entry: Any) -> str | None:
    """Why a target's entry in the window file is not of its type: ``{resultSeq, resultSeenEpoch}``, an
    integer seq and an epoch, or both null (docs/evidence.md: the study finished without it)."""
    if not isinstance(entry, dict):
        return "is not an object"
    if "resultSeq" not in entry or "resultSeenEpoch" not in entry:
        return "has no resultSeq or no resultSeenEpoch"
    rseq, rseen = entry["resultSeq"], entry["resultSeenEpoch"]
    if not (rseq is None or is_int(rseq)):
        return "has a resultSeq that is not an integer"
    if not (rseen is None or epoch(rseen) is not None):
        return "has a resultSeenEpoch that is not a time"
    if (rseq is None) != (rseen is None):
        return "has one of resultSeq and resultSeenEpoch null, and not the other"
    return None


def window_shape(v: KillView, t: Tally) -> None:
    """The window file, unreadable or not its record (docs/contract.md, "Which check a file fails"): its
    times not times or ``untilEpoch`` before ``sinceEpoch``, its ``targets`` not an object, an entry of the
    wrong type (no ``resultSeq``, one that is not an integer: a float, a boolean).  killEvidence, and every
    target's sameContainerNoRerun and resultSettledAndFinished (``window_bad``): their window ends where it
    says.  Where it is held to kill.json, the ledger and the timeline is ``check_window``'s."""
    scope, ev = v.scope, "killEvidence"
    kf = v.kf
    if WINDOW in kf.problems:
        v.window_bad.append(kf.problems[WINDOW])  # killEvidence has it already (kill_view)
        return
    w = kf.window
    if w is None:
        return
    why = []
    s_str, s_ep = parse_time(w.get("since")), epoch(w.get("sinceEpoch"))
    u_str, u_ep = parse_time(w.get("until")), epoch(w.get("untilEpoch"))
    if s_str is None or s_ep is None or u_str is None or u_ep is None:
        why.append("since, until or their epochs are not times")
    elif u_ep < s_ep:
        why.append("untilEpoch is before sinceEpoch: the window closes before it opens")
    targets = w.get("targets")
    if not isinstance(targets, dict):
        why.append("targets is not an object")
    else:
        for run, entry in targets.items():
            problem = window_entry_problem(entry)
            if problem is not None:
                why.append(f"the entry for {quote(run)} {problem}")
    v.window_shape = [f"{kf.rel}/{WINDOW}: {reason}" for reason in why]
    shown = v.window_shape[:3]
    if len(v.window_shape) > 3:
        shown.append(f"{kf.rel}/{WINDOW}: and {len(v.window_shape) - 3} more fields not of their types")
    for reason in shown:
        t.fail(scope, ev, reason)
    v.window_bad += shown


def check_window(f: StudyFacts, v: KillView, t: Tally) -> None:
    """The window file held to kill.json (``since``), the ledger (each target's ``resultSeq``) and the timeline
    (its ``resultSeenEpoch``): killEvidence.  Its own shape is ``window_shape``'s; a target of the kill the
    file has no entry for has no window end said: its own sameContainerNoRerun and
    resultSettledAndFinished too."""
    scope, ev = v.scope, "killEvidence"
    w = v.kf.window
    if w is None:
        return
    s_str, s_ep = parse_time(w.get("since")), epoch(w.get("sinceEpoch"))
    u_str, u_ep = parse_time(w.get("until")), epoch(w.get("untilEpoch"))
    if s_str is not None and s_ep is not None and u_str is not None and u_ep is not None:
        if abs(s_str - s_ep) > TEXT_SLACK or abs(u_str - u_ep) > TEXT_SLACK:
            t.fail(scope, ev, f"{WINDOW}: a time and its epoch disagree")
        if v.since is not None and abs(s_ep - v.since) > TEXT_SLACK:
            t.fail(scope, ev, "the window does not start where kill.json says the recording did")
        if u_ep >= s_ep:
            v.until = u_ep
    targets = w.get("targets")
    if not isinstance(targets, dict):
        return
    expected = {x.run: x for x in v.targets}
    if set(targets) != set(expected):
        t.fail(scope, ev, "the window file's targets are not the kill's")
    for run, x in expected.items():
        if run not in targets:
            # Said above for killEvidence; the target's own checks cannot tell where its window ends.
            v.window_bad_run.setdefault(run, []).append(
                f"{v.kf.rel}/{WINDOW} has no entry for {run}: where its window ends is not said"
            )
            continue
        entry = targets[run]
        if window_entry_problem(entry) is not None:
            continue  # the file's shape: window_shape
        rseq, rseen = entry["resultSeq"], entry["resultSeenEpoch"]
        # docs/contract.md (killEvidence): each target's resultSeq (when not null) is the record that ended its
        # story as the ledger holds it: its first runResult, or for an unsettled target its round's
        # diagnosisSettlement.
        end = story_end(f, x)
        if rseq is None:
            v.result_seq[run] = None
            if end is not None:
                t.fail(scope, ev, f"the window closed without {run}'s result, which the ledger has at seq {end.seq}")
            continue
        if end is None or rseq != end.seq:
            t.fail(scope, ev, f"the window's resultSeq for {run} is not the record that ended its story")
        v.result_seq[run] = rseq
        seen_epoch = epoch(rseen)
        v.result_seen[run] = seen_epoch
        # "each target's resultSeenEpoch in the window file is when timeline.jsonl saw its resultSeq (seenAt),
        # to the millisecond (WRITTEN_MS, either way: the window is on the runtime's clock, and the offset to
        # the console's is rounded to the millisecond): one console's clock wrote both".  Compared as numbers:
        # the epoch is a float (….182 may be stored as ….18199999…), so a float's rounding (FLOAT_SLACK) is
        # allowed past the millisecond.  README.md, open question 74.
        # The ledger's record of that seq (the story's end where it is that one), as the timeline saw it: a line
        # that saw the seq as another record tells nothing of it (Timeline.saw).
        rec = end if end is not None and end.seq == rseq else f.ledger.by_seq(rseq)
        seen = f.timeline.saw(rec) if rec is not None else None
        if seen is not None and seen_epoch is not None and abs(seen.seen - seen_epoch) > WRITTEN_MS + FLOAT_SLACK:
            t.fail(
                scope,
                ev,
                f"the window says seq {rseq} was seen at {show(seen_epoch)}, timeline.jsonl at {show(seen.seen)}",
            )
        # A result seen outside the window (more than WRITTEN_MS before sinceEpoch or after untilEpoch) is the
        # window file's own fault: killEvidence alone.
        if seen_epoch is not None and (
            (s_ep is not None and seen_epoch < s_ep - WRITTEN_MS)
            or (v.until is not None and seen_epoch > v.until + WRITTEN_MS)
        ):
            t.fail(scope, ev, f"{run}'s result was seen outside the window")


def union_events(f: StudyFacts, v: KillView) -> list[Event]:
    kf = v.kf
    # Both recordings, missing (at their stage) or unreadable, or holding a line that is not an event: every
    # target's sameContainerNoRerun (docs/contract.md, "Which check a file fails").
    if kf.live is None or kf.live.bad:
        v.recording_fail += (
            kf.live.bad[:3]
            if kf.live is not None
            else [
                kf.problems.get("container-events-live.jsonl")
                or "the live recording (container-events-live.jsonl) is missing or unreadable"
            ]
        )
    if kf.readback is not None and kf.readback.bad:
        v.recording_fail += kf.readback.bad[:3]
    elif kf.readback is None and (
        "container-events.jsonl" in kf.problems or "container-events.jsonl" in stage_files(f, v)
    ):
        v.recording_fail.append(
            kf.problems.get("container-events.jsonl")
            or "the read-back recording (container-events.jsonl) is missing, and the window has closed"
        )
    by_key: dict[tuple[str, str, Any], Event] = {}
    for rec in (kf.live, kf.readback):
        for e in rec.events if rec is not None else []:
            other = by_key.get(e.key)
            if other is None:
                by_key[e.key] = e
                continue
            for attr in ("exitCode", "name", "signal"):
                a, b = other.attrs.get(attr), e.attrs.get(attr)
                if attr == "name":
                    a = a.lstrip("/") if isinstance(a, str) else a
                    b = b.lstrip("/") if isinstance(b, str) else b
                if not strict_equal(a, b):
                    v.recording_fail.append(
                        f"the recordings disagree: {other.source} line {other.line} and {e.source} line {e.line} "
                        f"are one event with another {attr}"
                    )
    # Gaps and engine restarts that overlap the window leave the recording unable to tell.
    if v.since is not None:
        until = v.until
        for g in kf.live.gaps if kf.live is not None else []:
            if g.end >= v.since and (until is None or g.start <= until):
                v.recording_unknown.append(
                    f"a gap in the live recording from {show(g.start)} to {show(g.end)} overlaps the window"
                )
        for row in kf.restarts or []:
            r_from, r_to = parse_time(row.get("from")), parse_time(row.get("to"))
            if (
                r_from is None
                or r_to is None
                or r_from > r_to
                or not isinstance(row.get("before"), dict)
                or not isinstance(row.get("after"), dict)
            ):
                v.recording_fail.append("runtime-restarts.jsonl: a line that is not a restart")
                continue
            if r_to >= v.since and (until is None or r_from <= until):
                v.recording_unknown.insert(0, f"the Docker engine restarted between {show(r_from)} and {show(r_to)}")
    if "runtime-restarts.jsonl" in kf.problems:
        v.recording_fail.append(kf.problems["runtime-restarts.jsonl"])
    return sorted(by_key.values(), key=lambda e: (e.start, e.source, e.line))


def in_window(v: KillView, e: Event) -> bool:
    if v.since is None:
        return True
    return e.end >= v.since and (v.until is None or e.start <= v.until)


def timeline_tells(f: StudyFacts) -> bool:
    """Whether timeline.jsonl can say when (or whether) a record was seen, for a target's checks
    (docs/contract.md, "Which check a file fails"): one missing, unreadable or holding a line that is not a
    record seen tells nothing of it, and no target's check is judged by it (its defects are ledgerWellFormed's
    and every killEvidence's); one only out of time order is still read line by line, by each line's time."""
    return f.timeline.readable and f.timeline.bad_lines == 0


def seen_of(f: StudyFacts, rec: Record) -> Fraction | None:
    """When the timeline saw this record, where it tells: a line of its seq that saw another record (its kind
    or at not the ledger's) tells nothing of it (``Timeline.saw``; README.md, open question 62)."""
    s = f.timeline.saw(rec) if timeline_tells(f) else None
    return s.seen if s is not None else None


def check_records_after(f: StudyFacts, v: KillView, t: Tally) -> None:
    """docs/contract.md ("Controllers", records after a kill come from a resumed controller): every record after
    beforeKillSeq was seen no earlier than the ``at`` of the first start after the kill (the keeper stamps a
    start before it spawns the controller; both to the millisecond: SEEN_SLACK).  One seen before it was
    written by something that outlived the kill: it fails the check of the target it names that reads it
    (its runPlanned, charge or runStarted chargedOnce; its runResult or the settlement naming it
    resultSettledAndFinished), a record of no target killEvidence.  A target's record that no console saw
    (missing from timeline.jsonl) fails the same way.  A timeline missing, unreadable or holding a line that
    is not a record seen tells nothing of when (or whether) a record after the kill was seen: none of this is
    judged from it (``timeline_tells``), and its defect is ledgerWellFormed's and every killEvidence's alone;
    one only out of time order is still read, by each line's time.

    A record dated in no controller's life (its own ``at``) is exitedCleanly's too, whatever kill it
    follows (study.judge_records_dated); a record seen late, after the first start after the kill, is
    nothing by itself (a console that was not watching sees records late)."""
    assert v.before_seq is not None
    cons = f.controllers
    if not cons.readable or v.at is None:
        return
    first = next((c for c in cons.items if c.start.at >= v.at - SEEN_SLACK and c is not v.controller), None)
    v.resume_at = first.start.at if first is not None else None
    targets = {x.run: x for x in v.judged}
    if not timeline_tells(f):
        return
    split = v.split
    assert split is not None
    for r in f.ledger.after(split):
        run = r.run if isinstance(r.run, str) else None
        target = targets.get(run) if run is not None else None
        check = None
        if target is not None:
            check = (
                CO
                if r.kind in ("runPlanned", "charge", "runStarted")
                else RSF
                if r.kind in ("runResult", "diagnosisSettlement")
                else None
            )
        seen = seen_of(f, r)
        if seen is None and isinstance(r.seq, int) and r.seq in f.timeline.by_seq:
            # Its seq was seen as another record: that line tells nothing of when (the table's timeline row), and
            # the record is not missing from timeline.jsonl either; the difference is ledgerWellFormed's.
            continue
        if seen is None:
            if check is not None:
                t.fail(
                    f"{v.scope} · {run}",
                    check,
                    f"seq {r.seq} ({r.kind} of {run}) was seen by no console (not in timeline.jsonl)",
                )
            continue
        if v.resume_at is not None and seen >= v.resume_at - SEEN_SLACK:
            continue
        when = (
            f"before the first start after kill {v.n}"
            if v.resume_at is not None
            else f"and no start followed kill {v.n}"
        )
        why = f"seq {r.seq} ({r.kind}) was seen at {show(seen)}, {when}: written by something that outlived the kill"
        if check is not None:
            t.fail(f"{v.scope} · {run}", check, why)
        else:
            t.fail(v.scope, "killEvidence", why)


# --- the target's story ------------------------------------------------------------------------


def snapshot_of(v: KillView, file: str, name: str) -> tuple[bool, Inspect | None, str | None]:
    filed, raw = lookup(v.snapshots.get(file), name)
    if not filed:
        return False, None, None
    ins, problem = parse_inspect(raw, f"{file} {name}")
    return True, ins, problem


def shown(ins: Inspect) -> str:
    """How a snapshot shows a container's status, for a reason: its State.Status, or that none is written."""
    if ins.status is not None:
        return quote(ins.status)
    running = "not a boolean" if ins.running is None else str(ins.running).lower()
    return f"with no State.Status and State.Running {running}"


@dataclass
class Lost:
    """What a kill's power loss took of a target's own records at the kill (docs/contract.md, "Power loss (§9.3)";
    README.md, open question 99)."""

    start: bool = False  # its runStarted: the resumed study finds its container by name and adopts it
    result: bool = False  # an unsettled target's runResult: its one result is written again, after the loss
    charge: bool = False  # a charged target's charge (its run never started): no charge
    dissolved: bool = False  # that, and the ledger never charged it again: nothing of it to judge but its container


def lost_of(f: StudyFacts, v: KillView, x: Target) -> Lost:
    if v.power is None:
        return Lost()
    lost = Lost(
        start=v.took(x.start),
        result=x.cls == "unsettled" and v.took(x.info.results[0] if x.info.results else None),
        charge=x.cls == "charged" and v.took(x.info.charges[0] if x.info.charges else None),
    )
    if lost.charge:
        again = [
            r
            for r in f.ledger.after(v.split or 0)
            if r.run == x.run and r.kind in ("charge", "runStarted", "runResult", "diagnosisSettlement")
        ]
        lost.dissolved = not again
    return lost


def power_kill(v: KillView, e: Event) -> bool:
    """A ``kill`` of the target's container at a power loss, the console's: at the moment it "kills the controller
    and every run container of the study" (docs/contract.md, "Power loss (§9.3)"), and "once they are gone
    rewrites the study's files": a ``kill`` event no later than power.json's ``atEpoch`` (within a second: the
    runtime's clock and the console's) is the loss, not the study's (README.md, open question 100).  Any other
    ``kill`` is not in the story, as before."""
    return v.power is not None and e.verb == "kill" and e.start <= v.power.at_epoch + SECOND


def judge_target(f: StudyFacts, v: KillView, x: Target, t: Tally) -> None:
    scope = f"{v.scope} · {x.run}"
    for name in (SCN, CO, RSF):
        t.add(scope, name)
    open_window = not v.window_closed and not f.finished
    listed = [e for e in ((v.kf.kill or {}).get("targets") or []) if isinstance(e, dict) and e.get("run") == x.run]
    if x.cls in ("inFlight", "unsettled", "unrecorded") and listed and listed[0].get("container") != x.container:
        t.fail(scope, SCN, f"kill.json names another container than {x.container}")
    # docs/contract.md (sameContainerNoRerun): "a charged target's is null (it has no container yet: one named
    # there is ✗)": a key written with anything but null (a text, a number) fails; an absent key names no
    # container, so it is read as the null it should be (killEvidence holds the entry's fields; README.md,
    # open question 79).
    if x.cls == "charged" and listed and listed[0].get("container") is not None:
        t.fail(
            scope,
            SCN,
            f"kill.json names container {quote(listed[0]['container'])} for charged {x.run}, which has none "
            "yet: it is null",
        )
    judge_container_story(f, v, x, t, scope)
    judge_charged_once(f, v, x, t, scope)
    judge_result(f, v, x, t, scope)
    if open_window:
        for name in (SCN, RSF):
            t.unknown(scope, name, "window still open; `studymon run --resume` continues it")


def judge_container_story(f: StudyFacts, v: KillView, x: Target, t: Tally, scope: str) -> None:
    for problem in v.recording_fail + v.snapshot_fail:
        t.fail(scope, SCN, problem)
    # The window file missing once due, unreadable or not its record: their window ends where it says.
    for problem in v.window_bad + v.window_bad_run.get(x.run, []):
        t.fail(scope, SCN, problem)
        t.fail(scope, RSF, problem)
    after = f.ledger.after(v.split or 0)
    results = [r for r in f.ledger.records if r.kind == "runResult" and r.run == x.run]
    result = results[0] if results else None
    result_code = result.get("exitCode") if result is not None else None
    # When the console saw the result, for its die (docs/contract.md, "the study waited for its run"): the
    # earlier of the window's resultSeenEpoch and timeline.jsonl's seenAt of that record (the timeline's only
    # where it tells: timeline_tells).
    seen_copies = [seen_of(f, result) if result is not None else None]
    if result is not None and v.result_seq.get(x.run) == result.seq:
        seen_copies.append(v.result_seen.get(x.run))
    result_seen = min((c for c in seen_copies if c is not None), default=None)
    # The snapshots.
    snaps: dict[str, Inspect | None] = {}
    for file in ("container-before.json", "container-after-kill.json", "container-before-resume.json"):
        # An inspect of the wrong shape is among v.snapshot_fail; what can be read of it is still judged.
        filed, ins, _problem = snapshot_of(v, file, x.container)
        snaps[file] = ins if filed else None
        if x.cls in ("inFlight", "unrecorded"):
            if (
                file == "container-before-resume.json"
                and file not in v.kf.present
                and v.resume is None
                and not f.finished
            ):
                continue
            if file in v.to_come:
                continue  # the snapshot after the kill still to come: v.snapshot_unknown says so
            if not filed or ins is None:
                t.fail(scope, SCN, f"{file} does not show {x.container}")
    ids = {ins.id for ins in snaps.values() if ins is not None}
    mine = [
        e
        for e in v.events
        if in_window(v, e)
        and (
            e.name == x.container
            or (e.verb == "rename" and e.old_name == x.container)
            or e.id in ids
            or (ours(e, f.research) and e.run_label == x.run)
        )
    ]
    runs_started_after = [r for r in after if r.kind == "runStarted" and r.run == x.run]
    lost = lost_of(f, v, x)
    if lost.dissolved:
        story_dissolved(f, x, t, scope, mine)
    elif x.cls in ("inFlight", "unrecorded"):
        story_same_container(f, v, x, t, scope, snaps, mine, result, result_code, result_seen, lost.start)
    elif x.cls == "charged":
        story_charged(f, v, x, t, scope, mine, result, result_code, result_seen, runs_started_after)
    else:
        story_unsettled(f, v, x, t, scope, mine, result_code, runs_started_after, lost.start)
    if f.finished and x.cls in ("inFlight", "unrecorded", "charged"):
        # docs/contract.md ("By class", charged; the in-flight story: "dies once, as its runResult says"): once
        # the study has finished, a container that exited (a die in the window, or a snapshot's exit) with no
        # runResult, or more than one, to hold its exit code to fails it.
        exited = any(e.verb == "die" for e in mine) or any(
            ins is not None and ins.state == "exited" for ins in snaps.values()
        )
        if exited and len(results) != 1:
            t.fail(
                scope,
                SCN,
                f"{x.container} exited, and the study finished with {len(results)} runResults of {x.run} "
                "to hold its exit code to",
            )
    off_the_books(f, v, x, t, scope)
    for why in v.recording_unknown + v.snapshot_unknown:
        t.unknown(scope, SCN, why)


def code_matches(e: Event, code: Any) -> bool:
    attr = e.attrs.get("exitCode")
    return is_int(code) and isinstance(code, int) and isinstance(attr, str) and attr == str(code)


def story_same_container(
    f: StudyFacts,
    v: KillView,
    x: Target,
    t: Tally,
    scope: str,
    snaps: dict[str, Inspect | None],
    mine: list[Event],
    result: Record | None,
    result_code: Any,
    result_seen: Fraction | None,
    start_lost: bool = False,
) -> None:
    present = [(file, ins) for file, ins in snaps.items() if ins is not None]
    # With no snapshot (already a failure) the events are still judged, against no Id at all.
    first = present[0][1] if present else None
    for file, ins in present:
        assert ins is not None and first is not None
        # One StartedAt: a snapshot that writes none does not show the others' (as a zero time would not).
        if ins.id != first.id or ins.started_raw != first.started_raw:
            t.fail(scope, SCN, f"{file} shows another Id or StartedAt for {x.container}")
    before = snaps.get("container-before.json")
    after_kill = snaps.get("container-after-kill.json")
    exited_early = False
    # Each snapshot's status as it stands (Inspect.state): State.Status where written, else State.Running alone
    # ("running" when true, unknown when false: neither shown running nor shown exited).
    if before is not None:
        if before.state == "exited" and x.cls in ("inFlight", "unrecorded"):
            exited_early = True
        elif x.cls == "inFlight" and before.state != "running":
            if not (
                after_kill is not None
                and after_kill.state == "exited"
                and after_kill.finished_at is not None
                and v.since is not None
                and after_kill.finished_at < v.since
            ):
                t.fail(scope, SCN, f"container-before.json shows {x.container} {shown(before)}, not running")
        elif x.cls == "unrecorded" and not started_snapshot(before):
            t.fail(scope, SCN, f"container-before.json shows {x.container} not started")
        if (
            after_kill is not None
            and after_kill.state == "exited"
            and after_kill.finished_at is not None
            and v.since is not None
            and after_kill.finished_at < v.since
        ):
            exited_early = True
    for file, ins in present:
        assert ins is not None
        if file != "container-before.json" and ins.state not in ("running", "exited"):
            t.fail(scope, SCN, f"{file} shows {x.container} {shown(ins)}, neither running nor exited")
    # docs/contract.md (sameContainerNoRerun, the snapshots): "once one shows it exited, every later one shows
    # that same exit (`ExitCode`, `FinishedAt`): a container that exited never runs again under the same
    # `StartedAt` (a restart is a new start), so a later snapshot showing it running, or exited otherwise, did
    # not see the container the earlier one saw (✗)".  The snapshots in their order (before the kill, after it,
    # before the resume), whether it exited just before the kill or after it (README.md, open question 90).
    exited_in: tuple[str, Inspect] | None = None
    for file, ins in present:
        assert ins is not None
        if exited_in is None:
            if ins.state == "exited":
                exited_in = (file, ins)
            continue
        earlier, seen = exited_in
        if ins.state != "exited":
            t.fail(
                scope,
                SCN,
                f"{file} shows {x.container} {shown(ins)} after {earlier} showed it exited: a snapshot after the "
                "exit shows it running again, or not the container the earlier one saw",
            )
        elif ins.exit_code != seen.exit_code or ins.finished_at != seen.finished_at:
            t.fail(
                scope, SCN, f"{file} shows another exit of {x.container} than {earlier}: the snapshots show two exits"
            )
    the_id = first.id if first is not None else None
    dies = [e for e in mine if e.verb == "die"]
    exits = [ins for _, ins in present if ins is not None and ins.state == "exited"]
    if exited_early:
        ref = next((ins for ins in exits), None)
        assert ref is not None
        if result_code is not None and not (isinstance(result_code, int) and result_code == ref.exit_code):
            t.fail(scope, SCN, f"runResult's exitCode is not the snapshots' ExitCode {ref.exit_code}")
        for e in dies:
            if (
                e.id != the_id
                or not code_matches(e, ref.exit_code)
                or ref.finished_at is None
                or abs(e.start - ref.finished_at) > SECOND
            ):
                t.fail(
                    scope,
                    SCN,
                    f"a die of {x.container} in the window that is not the exit the snapshots show "
                    f"({e.source} line {e.line})",
                )
        if len(dies) > 1:
            t.fail(scope, SCN, f"{len(dies)} dies of {x.container} in its window")
        the_die = dies[0] if dies else None
    else:
        if len(dies) > 1:
            t.fail(scope, SCN, f"{len(dies)} dies of {x.container} in its window: it ran more than once")
        the_die = dies[0] if dies else None
        if the_die is None:
            if result is not None and (v.window_closed or f.finished):
                t.fail(scope, SCN, f"no die of {x.container} in its window, yet runResult was written")
            elif f.finished:
                t.fail(scope, SCN, f"the study finished without a die of {x.container}")
            else:
                t.unknown(scope, SCN, f"no die of {x.container} yet")
        else:
            if the_die.id != the_id:
                t.fail(scope, SCN, f"the die in the window is of another container (Id {quote(the_die.id, 12)})")
            if result is not None and not code_matches(the_die, result_code):
                t.fail(scope, SCN, "the die's exitCode is not runResult's")
            if result_seen is not None and the_die.start > result_seen + SECOND:
                t.fail(scope, SCN, "the die came after runResult was seen: a result written for a run still running")
            for ins in exits:
                if (
                    not code_matches(the_die, ins.exit_code)
                    or ins.finished_at is None
                    or abs(ins.finished_at - the_die.start) > SECOND
                ):
                    t.fail(scope, SCN, "a snapshot's exit is not the die's")
    # docs/contract.md ("By class", unrecorded): its container's first start (and create) may fall in the window
    # at any time before its die (a runtime may report a start late); one at or after the die is the run done
    # again.  An exit just before the kill with no die in the window ends it at the snapshots' FinishedAt.
    ended: Fraction | None = the_die.end if the_die is not None else None
    if ended is None and exited_early:
        ended = next((ins.finished_at for ins in exits), None)
    starts = creates = 0
    for e in mine:
        if e.verb == "die":
            continue
        if e.verb == "destroy":
            if (
                e.id != the_id
                or (the_die is None and not exited_early)
                or (the_die is not None and e.start < the_die.start)
            ):
                t.fail(scope, SCN, f"destroy of {x.container} not after its one die ({e.source} line {e.line})")
            continue
        if e.verb == "oom":
            if e.id != the_id or (the_die is not None and e.start > the_die.start + SECOND):
                t.fail(scope, SCN, f"oom not of the run's container before its die ({e.source} line {e.line})")
            continue
        if e.verb in PASSIVE or (power_kill(v, e) and e.id == the_id):
            continue
        if e.verb in ("start", "create") and x.cls == "unrecorded" and e.id == the_id:
            if e.verb == "start":
                starts += 1
            else:
                creates += 1
            count = starts if e.verb == "start" else creates
            if count == 1 and (ended is None or e.start < ended):
                continue
            t.fail(
                scope,
                SCN,
                f"{quote(e.action, 30)} of {x.container} in its window "
                f"{'a second time' if count > 1 else 'at or after its die'}: the run done again "
                f"({e.source} line {e.line})",
            )
            continue
        t.fail(scope, SCN, f"{quote(e.action, 30)} of {x.container} in its window ({e.source} line {e.line})")
    # An unrecorded target's container is adopted after the kill: exactly one runStarted naming it.  So is a target's
    # whose runStarted a power loss took while its container ran (docs/contract.md, "Power loss (§9.3)": "must not
    # be started again (sameContainerNoRerun: the resumed study finds it by name)"; README.md, open question 99).
    if x.cls == "unrecorded" or start_lost:
        rs = [r for r in f.ledger.after(v.split or 0) if r.kind == "runStarted" and r.run == x.run]
        if len(rs) > 1:
            t.fail(scope, SCN, f"{len(rs)} runStarted of {x.run} after the kill")
        elif not rs:
            (t.fail if f.finished else t.unknown)(scope, SCN, f"no runStarted adopts {x.container} after the kill")
        elif rs[0].get("container") != x.container:
            t.fail(scope, SCN, "the runStarted after the kill names another container")


def story_charged(
    f: StudyFacts,
    v: KillView,
    x: Target,
    t: Tally,
    scope: str,
    mine: list[Event],
    result: Record | None,
    result_code: Any,
    result_seen: Fraction | None,
    runs_started_after: list[Record],
) -> None:
    later = t.fail if f.finished else t.unknown
    if len(runs_started_after) > 1:
        t.fail(scope, SCN, f"{len(runs_started_after)} runStarted of {x.run} after the kill")
    elif not runs_started_after:
        later(scope, SCN, f"no runStarted of {x.run} after the kill")
    elif runs_started_after[0].get("container") != x.container:
        t.fail(scope, SCN, "its runStarted names another container")
    starts = [e for e in mine if e.verb == "start"]
    started_ids = {e.id for e in starts}
    if len(starts) > 1:
        t.fail(scope, SCN, f"{len(starts)} starts of {x.container} in its window: started more than once")
    if not starts:
        if result is not None:
            t.fail(scope, SCN, f"no start of {x.container} in its window, yet runResult was written")
        else:
            later(scope, SCN, f"{x.container} has not started")
    the_start = starts[0] if starts else None
    the_id = the_start.id if the_start is not None else None
    dies = [e for e in mine if e.verb == "die"]
    if len(dies) > 1:
        t.fail(scope, SCN, f"{len(dies)} dies of {x.container} in its window")
    the_die = dies[0] if dies else None
    # docs/contract.md ("By class", charged; "The container's machine", unmade): its one container starts in the
    # window before anything else of it happens; a die (or an oom) with no start of it in the window before it
    # is of a container started before the kill, which container-before.json did not show.  Two times in one
    # whole second (an event with only a time) may be in either order: only one surely earlier fails.
    for e in mine:
        if e.verb in ("die", "oom") and (the_start is None or (e.id == the_id and e.end <= the_start.start)):
            t.fail(
                scope,
                SCN,
                f"{e.verb} of {x.container} with no start of it in its window before it: started before the "
                f"kill, which container-before.json did not show ({e.source} line {e.line})",
            )
    if the_die is not None:
        if the_die.id != the_id:
            t.fail(scope, SCN, "the die is not of the container that started")
        if result is not None and not code_matches(the_die, result_code):
            t.fail(scope, SCN, "the die's exitCode is not runResult's")
        if result_seen is not None and the_die.start > result_seen + SECOND:
            t.fail(scope, SCN, "the die came after runResult was seen: a result written for a run still running")
    elif result is not None and (v.window_closed or f.finished):
        t.fail(scope, SCN, f"no die of {x.container} in its window, yet runResult was written")
    for e in mine:
        if e.verb in ("start", "die", "create") or e.verb in PASSIVE or (power_kill(v, e) and e.id == the_id):
            continue
        if e.verb == "destroy":
            if e.id in started_ids and (the_die is None or e.start < the_die.start):
                t.fail(scope, SCN, f"destroy of the running {x.container} ({e.source} line {e.line})")
            continue
        if e.verb == "oom" and e.id == the_id:
            # docs/contract.md (the table): an oom of that Id before its die, or at most a second after it.
            if the_die is not None and e.start > the_die.start + SECOND:
                t.fail(scope, SCN, f"oom of {x.container} after its die ({e.source} line {e.line})")
            continue
        t.fail(scope, SCN, f"{quote(e.action, 30)} of {x.container} in its window ({e.source} line {e.line})")


def story_unsettled(
    f: StudyFacts,
    v: KillView,
    x: Target,
    t: Tally,
    scope: str,
    mine: list[Event],
    result_code: Any,
    runs_started_after: list[Record],
    start_lost: bool = False,
) -> None:
    if start_lost:
        # Its runStarted taken by a power loss: the resumed study finds its container by name and writes it again,
        # once, naming that container (README.md, open question 99); never a new one (the events below).
        if len(runs_started_after) > 1:
            t.fail(scope, SCN, f"{len(runs_started_after)} runStarted of {x.run} after the kill")
        elif not runs_started_after:
            (t.fail if f.finished else t.unknown)(
                scope, SCN, f"no runStarted adopts {x.container} after the kill (its runStarted was lost)"
            )
        elif runs_started_after[0].get("container") != x.container:
            t.fail(scope, SCN, "the runStarted after the kill names another container")
    elif runs_started_after:
        t.fail(scope, SCN, f"{x.run} was started again after the kill (seq {runs_started_after[0].seq})")
    dies = [e for e in mine if e.verb == "die"]
    if len(dies) > 1:
        t.fail(scope, SCN, f"{len(dies)} dies of {x.container} in its window")
    for e in dies:
        if not code_matches(e, result_code):
            t.fail(scope, SCN, "a die in its window that is not its result's exit")
    for e in mine:
        if e.verb in ("die", "destroy", "oom") or e.verb in PASSIVE or power_kill(v, e):
            continue
        t.fail(
            scope,
            SCN,
            f"{quote(e.action, 30)} of {x.container} in its window: it had its result ({e.source} line {e.line})",
        )


def story_dissolved(f: StudyFacts, x: Target, t: Tally, scope: str, mine: list[Event]) -> None:
    """A ``charged`` target whose charge a power loss took, its run never started, and that the ledger never
    charged again: "a charge lost with its run never started is no charge" (docs/contract.md, "Power loss
    (§9.3)"): nothing of it was paid for or ran, so nothing is asked of it but that nothing of its container
    happens in the window (README.md, open question 99)."""
    later = t.fail if f.finished else t.unknown
    for e in mine:
        if e.verb in PASSIVE:
            continue
        later(
            scope,
            SCN,
            f"{quote(e.action, 30)} of {x.container} in its window, and no charge of {x.run} (its charge was lost "
            f"with the power) ({e.source} line {e.line})",
        )


def off_the_books(f: StudyFacts, v: KillView, x: Target, t: Tally, scope: str) -> None:
    """docs/contract.md ("work off the books"): a container of the study created or started in the window is
    allowed only for a run waiting to start at the kill (planned after beforeKillSeq, or planned before and
    not started by then), and only when a runStarted (a record: §2a) names that container by the study's
    end; else every target of the kill fails sameContainerNoRerun.  "A target's own name is never allowed":
    this bullet is every target's, so another target's name made in the window (an ``inFlight`` or
    ``unsettled`` target's: a run started at the kill, not waiting) fails x too, after that target's result as
    before it (README.md, open question 85).  x's own name is its story's to judge (for a ``charged`` or
    ``unrecorded`` target, a run waiting at the kill, its one start is the story); a waiting target's name is
    held here as any waiting run's."""
    stem = f.research.stem
    if stem is None:
        t.fail(scope, SCN, "research.json's stem cannot be read: whose containers are whose cannot be told")
        return
    bks = v.split or 0  # a power loss's: the resumed controller's records come after ledgerSeqAfter
    runs = f.runs
    targets = {y.container: y for y in v.targets}
    starts_by_run: dict[str, set[str]] = {}
    for e in v.events:
        if not in_window(v, e) or e.verb not in ("create", "start") or not ours(e, f.research):
            continue
        if e.name == x.container:
            continue  # its own name: its story judges it
        other = targets.get(e.name)
        if other is not None and other.cls in ("inFlight", "unsettled"):
            t.fail(
                scope,
                SCN,
                f"{quote(e.action, 20)} of {quote(e.name)}, target {other.run}'s own name, in the window: "
                f"never allowed ({e.source} line {e.line})",
            )
            continue
        # A container is the study's by its studymon.study label whatever its name (docs/contract.md, §3):
        # one labelled with a target's run under another name is no target's container, and is judged here
        # like any other (README.md, open question 51).
        run = e.name[len(stem) :] if e.name.startswith(stem) else e.run_label if isinstance(e.run_label, str) else None
        info = runs.get(run) if run is not None else None
        waiting = (
            info is not None
            and info.plan is not None
            and (info.plan.seq > bks or not any(s.seq <= bks for s in info.starts if isinstance(s.seq, int)))
        )
        if not waiting:
            t.fail(
                scope,
                SCN,
                f"{quote(e.action, 20)} of {quote(e.name)} in the window: "
                "no run of the study was waiting to start in it",
            )
            continue
        assert info is not None
        if not e.name.startswith(stem) or e.name != stem + info.name:
            t.fail(scope, SCN, f"a container of run {info.name} outside its name, made in the window")
            continue
        if e.verb == "start":
            starts_by_run.setdefault(info.name, set()).add(e.id)
        # Created or started: only when a runStarted names that container by the study's end (`?` until it has
        # finished).  A ledger line that would be that runStarted and is not a record (a repeated key, its kind
        # or run emptied, ...) is no runStarted: the container is off the books (docs/contract.md, §2a's last
        # paragraph: such a line "is not judged by these rules").
        if not any(s.get("container") == e.name for s in info.starts):
            (t.fail if f.finished else t.unknown)(
                scope,
                SCN,
                f"{quote(e.name)} {'started' if e.verb == 'start' else 'created'} in the window "
                "and no runStarted names it",
            )
    for run, ids in starts_by_run.items():
        if len(ids) > 1:
            t.fail(scope, SCN, f"run {run}, waiting at the kill, started {len(ids)} containers")


def judge_charged_once(f: StudyFacts, v: KillView, x: Target, t: Tally, scope: str) -> None:
    # The ledger's own charges and starts: a power loss may have taken the ones the ledger held at the kill
    # ("chargedOnce counts the ledger's": docs/contract.md, "Power loss (§9.3)"), and a run whose plan it took may
    # be none of the ledger's now.  A charge lost with its run never started, and not made again, is no charge:
    # nothing to count (README.md, open question 99).
    if lost_of(f, v, x).dissolved:
        return
    info = f.runs.get(x.run)
    charges = info.charges if info is not None else []
    starts = info.starts if info is not None else []
    later = t.fail if f.finished else t.unknown
    if len(charges) != 1:
        t.fail(scope, CO, f"{x.run} has {len(charges)} charges")
    if len(starts) > 1:
        t.fail(scope, CO, f"{x.run} has {len(starts)} runStarted")
    elif not starts:
        later(scope, CO, f"{x.run} has no runStarted{' yet' if not f.finished else ''}")
    bks = v.split or 0  # after the kill: a power loss's records after ledgerSeqAfter are the resumed controller's
    rk = x.info.round
    settle = next(
        (r for r in f.ledger.records if r.kind == "diagnosisSettlement" and round_key(r.get("round")) == rk), None
    )
    mine = set(x.info.experiments)
    for other in f.runs.values():
        if other.name == x.run or other.plan is None:
            continue
        started_after = [s for s in other.starts if isinstance(s.seq, int) and s.seq > bks]
        new = other.plan.seq > bks or bool(started_after)
        if not new or other.round != rk or not strict_equal(other.plan.get("object"), x.plan.get("object")):
            continue
        if not (mine & set(other.experiments)):
            continue
        moment = other.plan.seq if other.plan.seq > bks else started_after[0].seq
        before_settled = settle is None or moment < settle.seq
        if other.purpose == x.plan.get("purpose") or before_settled:
            t.fail(scope, CO, f"run {other.name} repeats {x.run}'s work (its cell, round and an experiment)")


def judge_result(f: StudyFacts, v: KillView, x: Target, t: Tally, scope: str) -> None:
    later = t.fail if f.finished else t.unknown
    if x.diagnosis and id_list(x.plan.get("experiments")) is None:
        # Its round's settlement accounts "for every experiment of its runPlanned": a plan without a list of
        # them cannot be held to that (docs/contract.md, resultSettledAndFinished), whether it came or not.
        t.fail(
            scope,
            RSF,
            f"{x.run}'s runPlanned has no list of experiments: its settlement cannot account for every experiment",
        )
    if x.diagnosis:
        # "accounting for every experiment of its runPlanned and every chosen id": a selectDiagnosis of its
        # round whose output is not an object, or whose chosen is not a list of ids, cannot be held to it
        # (README.md, open question 44).
        rk = x.info.round
        for r in f.ledger.records if rk is not None else []:
            if r.kind == "decision" and r.get("name") == "selectDiagnosis" and round_key(r.get("round")) == rk:
                output = r.get("output")
                if not isinstance(output, dict) or id_list(output.get("chosen")) is None:
                    t.fail(
                        scope,
                        RSF,
                        f"line {r.line}: round {rk}'s selectDiagnosis has no list of chosen ids: "
                        "its settlement cannot account for every chosen id",
                    )
    lost = lost_of(f, v, x)
    bks = v.split or 0  # after the kill: a power loss's records after ledgerSeqAfter are the resumed controller's
    results = [r for r in f.ledger.records if r.kind == "runResult" and r.run == x.run]
    if lost.dissolved:
        results = []  # no charge, nothing ran: no result is asked of it (README.md, open question 99)
    elif len(results) > 1:
        t.fail(scope, RSF, f"{x.run} has {len(results)} results")
    if not results:
        if not lost.dissolved:
            later(scope, RSF, f"the study {'finished' if f.finished else 'has not finished'} without {x.run}'s result")
    else:
        res = results[0]
        # An unsettled target's result is the one at or before the kill, unless a power loss took it: then its one
        # result is written again after the loss, as an open target's (README.md, open question 99).
        if x.cls == "unsettled" and not lost.result:
            if res.seq > bks:
                t.fail(scope, RSF, "its result is dated after the kill, yet it was unsettled at it")
        elif res.seq <= bks:
            t.fail(scope, RSF, "its result is not after the kill")
        rseq = v.result_seq.get(x.run)
        if isinstance(rseq, int) and res.seq > rseq:
            t.fail(scope, RSF, "its result comes after the record the window closed at")
        if x.diagnosis:
            rk = x.info.round
            settles = [
                r for r in f.ledger.records if r.kind == "diagnosisSettlement" and round_key(r.get("round")) == rk
            ]
            if len(settles) > 1:
                t.fail(scope, RSF, f"round {rk} is settled {len(settles)} times")
            if not settles:
                later(scope, RSF, f"round {rk} has no settlement{' yet' if not f.finished else ''}")
            else:
                s = settles[0]
                if s.run != x.run:
                    t.fail(scope, RSF, f"round {rk}'s settlement does not name {x.run}")
                if s.seq < res.seq or (x.cls == "unsettled" and s.seq <= bks):
                    t.fail(
                        scope,
                        RSF,
                        "the settlement is not after its result" + (" and the kill" if x.cls == "unsettled" else ""),
                    )
                # docs/contract.md (resultSettledAndFinished): "no later than the window's resultSeq for it (an
                # unsettled target's settlement, the record its window waited for, no later than it either)"
                # (README.md, open question 56).
                if x.cls == "unsettled" and isinstance(rseq, int) and s.seq > rseq:
                    t.fail(scope, RSF, "its round's settlement comes after the record the window closed at")
                parts = settlement_parts(s)
                chosen = [ids for _, ids in chosen_by_round(f.ledger.records).get(rk or "", [])]
                need = set(x.info.experiments).union(*chosen) if chosen else set(x.info.experiments)
                if parts is None or not need <= set(parts[0]) | set(parts[1]):
                    t.fail(scope, RSF, "the settlement does not account for every experiment")
                proposal = [
                    r
                    for r in f.ledger.records
                    if r.kind == "stageOpen"
                    and r.get("stage") == "proposal"
                    and round_key(r.get("round")) == rk
                    and r.seq > s.seq
                ]
                if not proposal:
                    later(scope, RSF, f"no stageOpen proposal {rk} follows the settlement")
    if f.halted is False:
        t.fail(scope, RSF, "the study did not end as haltedAtExport asks")
    elif f.halted is None or not f.finished:
        t.unknown(scope, RSF, "the study has not finished as haltedAtExport asks")
