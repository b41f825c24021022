"""``killTriggered``: every armed point was taken in order, and each kill fired exactly at its point's moment.

``arms.jsonl`` is replayed as a queue of armed points (§7: taken in order,
each on the controller then running).  A ``fired`` line must name a kill
folder whose ``kill.json`` was triggered automatically at the same point,
and the moment must be the point's: the N-th matching record after
``fromSeq`` (and nothing written after it before the kill), or an event of
the named action of one of the study's run containers whose next record
was not written yet.  A missed point is ``?`` (v4: nothing was tested there).
"""

from __future__ import annotations

import json
from typing import Any

from tests.oracle.evidence import Arms, parse_point, valid_id
from tests.oracle.killfolder import parse_recording
from tests.oracle.kills import KillView, StudyFacts, ours
from tests.oracle.ledger_checks import runs_of
from tests.oracle.reading import quote
from tests.oracle.times import SEEN_SLACK
from tests.oracle.verdict import Tally

SEED = "after:runStarted/diagnosis"
MAX_FIRED = 16
MAX_ARMED = 64
S, KT = "study", "killTriggered"


def applies(arms: Arms, views: list[KillView]) -> bool:
    auto = any((v.kf.kill or {}).get("trigger") == "auto" for v in views)
    return (arms.present and (not arms.readable or bool(arms.lines))) or auto


def judge_kill_triggered(f: StudyFacts, arms: Arms, views: list[KillView], t: Tally) -> None:
    t.add(S, KT)
    if not arms.present:
        t.fail(S, KT, "a kill was triggered automatically and arms.jsonl is missing")
        return
    if not arms.readable:
        t.fail(S, KT, f"arms.jsonl cannot be read: {arms.reason}")
        return
    # Out of time order (a line earlier than the one before it by more than KEEPER_SLACK): killTriggered
    # (docs/contract.md, "Which check a file fails").
    for why in arms.order_breaks[:3]:
        t.fail(S, KT, why)
    by_n = {v.n: v for v in views}
    queue: list[str] = []
    fired_kills: set[int] = set()
    fired = 0
    previous_before: int | None = None
    for line in arms.lines:
        point = line.point if line.point is not None else SEED
        where = f"arms.jsonl line {line.line}"
        if line.event == "arm":
            queue.append(point)
            if len(queue) > MAX_ARMED:
                t.fail(S, KT, f"more than {MAX_ARMED} points armed at once")
                return
            continue
        if line.event == "disarm":
            queue.clear()
            continue
        if point not in queue:
            t.fail(S, KT, f"{where}: {line.event} for {quote(point)}, which is not armed")
            continue
        if queue[0] != point:
            t.fail(S, KT, f"{where}: {quote(point)} taken before {quote(queue[0])}, armed first")
        queue.remove(point)
        if line.event == "missed":
            t.unknown(S, KT, f"the point {quote(point)} was missed: nothing was tested there")
            continue
        fired += 1
        if fired > MAX_FIRED:
            t.fail(S, KT, f"more than {MAX_FIRED} fired lines: the rest are not judged")
            break
        kill_n = line.raw.get("kill")
        if not (isinstance(kill_n, int) and not isinstance(kill_n, bool)) or kill_n not in by_n:
            t.fail(S, KT, f"{where}: fired names no kill folder there")
            continue
        if kill_n in fired_kills:
            t.fail(S, KT, f"{where}: kill {kill_n} fired twice")
            continue
        fired_kills.add(kill_n)
        v = by_n[kill_n]
        k = v.kf.kill
        if k is None or v.kf.unread is not None:
            t.fail(S, KT, f"kill {kill_n}'s kill.json cannot be read")
            continue
        # "a kill whose folder is there and complete for its stage": killEvidence's files of its stage,
        # each there and readable (a file refused by its cap is not there for the judge).
        if v.incomplete:
            t.fail(S, KT, f"kill {kill_n}'s folder is not complete for its stage: {', '.join(v.incomplete)}")
        # The capture's files a console that died in the middle of it left out, which the resume still writes
        # (docs/contract.md, killEvidence: "missing while the study can still be resumed, they are `?`"): the
        # folder may still be completed (kills.capture_to_come; README.md, open question 96).
        if v.to_come:
            t.unknown(
                S,
                KT,
                f"kill {kill_n}'s folder is not complete yet: {', '.join(n + ' missing' for n in v.to_come)}; "
                "`studymon run --resume` writes them before it starts the controller",
            )
        kpoint = k.get("point")
        if k.get("trigger") != "auto" or not (kpoint == point or (kpoint is None and line.point is None)):
            t.fail(S, KT, f"kill {kill_n}'s kill.json is not an automatic kill at {quote(point)}")
        # A line without a point is the seed's: after:runStarted/diagnosis counted from the ledger's start.
        # fromSeq is a non-negative integer or null (evidence.load_arms); an after: point counts its moments
        # from it, so a fired line of one needs it (a container point's count is the console's).
        raw_from = line.raw.get("fromSeq") if line.point is not None else 0
        from_seq = raw_from if isinstance(raw_from, int) and not isinstance(raw_from, bool) else None
        parsed = parse_point(point)  # a power point's moment is the point it names' (README.md, open question 101)
        if from_seq is None and parsed is not None and parsed[0] == "after":
            t.fail(
                S,
                KT,
                f"{where}: a fired line without its fromSeq: the point's moments cannot be counted"
                if raw_from is None
                else f"{where}: fromSeq is past every seq the ledger can hold",
            )
            continue
        behind = previous_before is not None and from_seq is not None and from_seq < previous_before
        if line.point is not None and behind:
            t.fail(S, KT, f"{where}: counts from seq {from_seq}, before the previous kill at seq {previous_before}")
        moment(f, v, point, from_seq or 0, line.raw, t, where, line.at)
        # A power loss's ledger holds no seq after ledgerSeqAfter once it is over: a point armed behind it counts
        # from no seq before that (README.md, open question 101).
        previous_before = v.split
    for v in views:
        if (v.kf.kill or {}).get("trigger") == "auto" and v.n not in fired_kills:
            t.fail(S, KT, f"kill {v.n} was automatic and no fired line names it")
    if queue:
        (t.fail if f.finished else t.unknown)(
            S, KT, f"{quote(queue[0])} still armed{' when the study finished' if f.finished else ''}"
        )


def moment(
    f: StudyFacts, v: KillView, point: str, from_seq: int, fired: dict[str, Any], t: Tally, where: str, fired_at: Any
) -> None:
    parsed = parse_point(point)
    if parsed is None:
        t.fail(S, KT, f"{where}: {quote(point)} is no kill point of §7's grammar")
        return
    mode, what, purpose, nth = parsed
    k = v.kf.kill or {}
    # The ledger at the kill: for a power loss, ledger-at-kill.json's records, the lost ones among them (the point's
    # record is often one: held, never fsynced); the console counted them as they were written (README.md, open
    # question 101).
    records = v.at_kill()
    runs = runs_of(records) if records is not None else f.runs
    run = fired.get("run")
    if mode == "after":
        # docs/contract.md (killTriggered, after:): the records are "counted line by line as the ledger holds
        # them, as the console counted them while they were written": a record counts when its seq is above
        # fromSeq, and for a purpose when its run's runPlanned, on an earlier line, gives it (a run planned only
        # on a later line has no purpose yet).  README.md, open question 55.
        # A runPlanned gives its run its purpose on its own line (after:runPlanned/diagnosis counts it).
        matching = []
        purposes: dict[str, Any] = {}  # run -> the purpose its first runPlanned gave it, so far
        for r in records if records is not None else f.ledger.records:
            if r.kind == "runPlanned" and valid_id(r.run):
                purposes.setdefault(r.run, r.get("purpose"))
            if not (isinstance(r.seq, int) and r.seq > from_seq and r.kind == what):
                continue
            if purpose is not None and not (valid_id(r.run) and purposes.get(r.run) == purpose):
                continue
            matching.append(r)
        if len(matching) < nth:
            t.fail(S, KT, f"{where}: the ledger has no {nth}th record for {quote(point)} after seq {from_seq}")
            return
        rec = matching[nth - 1]
        if k.get("triggerSeq") != rec.seq:
            t.fail(S, KT, f"kill {v.n} fired at seq {k.get('triggerSeq')!r}, the point's moment is seq {rec.seq}")
        if v.before_seq != rec.seq:
            t.fail(
                S,
                KT,
                f"kill {v.n}: beforeKillSeq {v.before_seq} is not seq {rec.seq}: "
                "the point had passed and should have been missed",
            )
        if run != (rec.run if isinstance(rec.run, str) else None):
            t.fail(S, KT, f"{where}: fired.run is not seq {rec.seq}'s run")
        if what == "runStarted" and rec.run not in {x.run for x in v.targets}:
            t.fail(S, KT, f"kill {v.n}: the run it fired at is not among its targets")
        # docs/contract.md: a fired line is no earlier than when its record was seen, SEEN_SLACK aside (a
        # timeline line that saw that seq as another record tells nothing of it: Timeline.saw).
        seen = v.seen_at_kill(f, rec)
        if seen is not None and fired_at < seen.seen - SEEN_SLACK:
            t.fail(S, KT, f"{where}: fired before seq {rec.seq} was seen")
        return
    # container:ACTION[/PURPOSE][#N]
    event = k.get("triggerEvent")
    if k.get("triggerSeq") is not None:
        t.fail(S, KT, f"kill {v.n}: a container point with a triggerSeq")
    if not isinstance(event, dict):
        t.fail(S, KT, f"kill {v.n}: a container point without its triggerEvent")
        return
    try:
        line = json.dumps(event).encode() + b"\n"
    except RecursionError:  # nested deeper than the encoder recurses: no event (README.md, open question 87)
        line = b"null\n"
    rec_ = parse_recording(line, "readback", "triggerEvent")
    if rec_.bad or len(rec_.events) != 1:
        t.fail(S, KT, f"kill {v.n}: triggerEvent is not a container event")
        return
    e = rec_.events[0]
    stem = f.research.stem or ""
    if e.verb != what or what not in ("create", "start", "die"):
        t.fail(S, KT, f"kill {v.n}: triggerEvent is a {quote(e.action, 20)}, not a {quote(what)}")
    name_run = e.name[len(stem) :] if stem and e.name.startswith(stem) else None
    info = runs.get(name_run) if name_run is not None else None
    if info is None or not ours(e, f.research):
        t.fail(S, KT, f"kill {v.n}: triggerEvent is of no run container of the study")
        return
    if purpose is not None and info.purpose != purpose:
        t.fail(S, KT, f"kill {v.n}: triggerEvent's run is not of purpose {quote(purpose)}")
    if run != info.name:
        t.fail(S, KT, f"{where}: fired.run is not the triggerEvent's run")
    nxt = info.starts if what in ("create", "start") else info.results
    if v.before_seq is not None and any(isinstance(r.seq, int) and r.seq <= v.before_seq for r in nxt):
        t.fail(S, KT, f"kill {v.n}: the run's next record was already in the ledger at the kill: the point had passed")
