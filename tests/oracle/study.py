"""``judge_study``: one study's evidence folder, judged from its files alone.

The per-study checks come from the ledger (``ledger_checks``) and the
controllers (``exitedCleanly`` here); then each kill folder, in number
order and within the caps, is judged by ``kills``, and the armed points by
``arms``.  Nothing is trusted that the folder says about its own verdict:
``report.json``, ``accounts.json`` and ``kill-report.json`` are not read.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from tests.oracle import arms as arms_mod
from tests.oracle.controllers import Controllers, replay
from tests.oracle.evidence import (
    Ledger,
    Outcome,
    Snapshot,
    Timeline,
    load_arms,
    load_launches,
    load_ledger,
    load_machine,
    load_outcome,
    load_research,
    load_timeline,
    load_watch,
)
from tests.oracle.killfolder import KillFolder, kill_folder_numbers, kill_folder_size, load_kill_folder
from tests.oracle.kills import KillView, StudyFacts, judge_kill
from tests.oracle.ledger_checks import (
    judge_charged_equals_starts,
    judge_contract_kept,
    judge_halted_at_export,
    judge_ledger_well_formed,
    judge_results_accounted,
)
from tests.oracle.power import judge_power_ledger, read_powers
from tests.oracle.reading import (
    ALL_KILL_FOLDERS_CAP,
    ALL_RECORDINGS_CAP,
    CAPS,
    MAX_KILL_FOLDERS,
    Refused,
    read_bytes,
)
from tests.oracle.times import SECOND, SEEN_SLACK, epoch, not_taken, show
from tests.oracle.verdict import OracleVerdict, Tally

S = "study"
EC = "exitedCleanly"
TOTAL_TARGETS = 256


def judge_study(out: Path) -> OracleVerdict:
    """The verdict of a study's folder; status 2 and no check for a folder without ``launches.jsonl``
    (docs/contract.md, "Hostile evidence": not a studymon evidence folder)."""
    try:
        read_bytes(Path(out), "launches.jsonl", CAPS["launches.jsonl"])
    except Refused as exc:
        if str(exc).endswith(": missing") or str(exc).startswith("the folder cannot be opened"):
            return OracleVerdict(2, {}, {(S, "notEvidence"): f"not a studymon evidence folder: {exc}"})
    t = Tally()
    try:
        _judge(Path(out), t)
    except Exception as exc:  # noqa: BLE001 - an oracle that breaks must still answer, and say so
        t.fail(S, "oracleError", f"the oracle failed on this folder: {type(exc).__name__}: {exc}")
    return t.verdict()


STUDY_CHECKS = ("ledgerWellFormed", "contractKept", "haltedAtExport", "chargedEqualsStarts", EC, "resultsAccounted")


def _judge(out: Path, t: Tally) -> None:
    research = load_research(out)
    ledger = load_ledger(out)
    for name in STUDY_CHECKS:
        t.add(S, name)  # the study's checks first, in their order, whatever a kill folder says before them
    # The kill folders, and their power.json, before the timeline: a power loss a folder explains sets aside the
    # timeline's lines that saw the records it took (docs/contract.md, "Power loss (§9.3)"; power.py).
    folders = kill_folders(out, t)
    powers = read_powers(out, folders, ledger)
    timeline = load_timeline(out, powers.windows)
    controllers = replay(load_launches(out))
    outcome = load_outcome(out)
    # docs/contract.md ("Controllers"): a folder with outcome.json cannot be resumed (the console refuses
    # it), so whatever launches.jsonl says, nothing in it is `?` for being still to come.
    finished = controllers.finished or outcome.present
    judge_ledger_well_formed(t, ledger, timeline, load_watch(out), finished)
    judge_power_ledger(t, ledger, timeline, powers, folders)
    judge_contract_kept(t, ledger, research, finished)
    judge_halted_at_export(t, ledger, research, finished)
    judge_charged_equals_starts(t, ledger, finished)
    t.add(S, EC)
    judge_results_accounted(t, ledger, finished)
    judge_exited_cleanly(out, t, controllers, outcome)
    halted = False if t.is_failing(S, "haltedAtExport") else None if t.unknowns[(S, "haltedAtExport")] else True
    facts = StudyFacts(ledger, research, timeline, controllers, finished, halted, powers=powers)
    claimed: dict[tuple[int, int], int] = {}
    budget = [TOTAL_TARGETS]
    views: list[KillView] = [judge_kill(facts, kf, t, claimed, budget) for kf in folders]
    arms = load_arms(out)
    if arms_mod.applies(arms, views):
        arms_mod.judge_kill_triggered(facts, arms, views, t)
    judge_ends_claimed(t, controllers, timeline, ledger, views)
    judge_records_dated(t, controllers, ledger)
    judge_seen_before_any_controller(t, controllers, timeline)


def judge_exited_cleanly(out: Path, t: Tally, cs: Controllers, outcome: Outcome) -> None:
    if not cs.readable:
        t.fail(S, EC, f"launches.jsonl cannot be read: {cs.reason}")
        return
    for v in cs.violations[:3]:
        t.fail(S, EC, v)
    final = cs.final
    if final is None:
        return
    if final.end is None:
        t.unknown(S, EC, f"the final controller (pid {final.pid}) has no end yet: it may still run")
    elif not final.clean:
        end = final.end
        how = (
            f"signal {end.signal}"
            if end.signal is not None
            else f"exit {end.code}"
            if end.code is not None
            else "an exit status lost (its keeper is gone)"
        )
        t.unknown(S, EC, f"the final controller (pid {final.pid}) ended by {how}; `studymon run --resume` continues it")
    # outcome.json: the final controller's code and signal, written when the study finished.
    if outcome.problem is not None:
        t.fail(S, EC, outcome.problem)
    elif final.clean and not outcome.present:
        t.fail(S, EC, "outcome.json is missing, and the study finished")
    elif outcome.present:
        if final.end is None:
            t.fail(S, EC, "outcome.json says the study ended, and its final controller has no end")
        elif not final.clean:
            # "written only once the final controller exited 0": one beside another end fails it.
            t.fail(S, EC, "outcome.json is there, and the final controller's end is not exit 0")
        elif not (
            type(outcome.code) is type(final.end.code)
            and outcome.code == final.end.code
            and outcome.signal == final.end.signal
        ):
            t.fail(S, EC, "outcome.json is not the final controller's end in launches.jsonl")
    # machine.jsonl (docs/contract.md, "Which check a file fails"): missing once a controller started,
    # unreadable, a line not its record or out of time order: exitedCleanly.  A controller seen in a
    # snapshot is one of launches.jsonl's, and alive then.
    machine = load_machine(out)
    if machine.problem is not None:
        if not (machine.missing and not cs.items):
            t.fail(S, EC, machine.problem)
        return
    for snap in machine.snapshots:
        check_snapshot(t, cs, snap)


def check_snapshot(t: Tally, cs: Controllers, snap: Snapshot) -> None:
    slack = snap.taken_in + SECOND
    argvs = [c.start.argv for c in cs.items if c.start.argv]
    for p in snap.processes:
        pid, started, args, status = p.get("pid"), p.get("started"), p.get("args"), p.get("status")
        if not isinstance(pid, int) or isinstance(pid, bool):
            continue
        if status in ("zombie", "dead"):
            continue
        for c in cs.items:
            st = c.start.start_time
            if (
                c.pid != pid
                or st is None
                # A start time not read (launches.jsonl's startTime 0) is not compared (docs/contract.md,
                # "Hostile evidence"; README.md, open question 82).
                or not_taken(st)
                # A process's start time that is no time (0 among them: README.md, open question 82) is no
                # controller's.
                or epoch(started) is None
                or abs(Fraction(started) - Fraction(st)) > Fraction(1, 20)
            ):
                continue
            if snap.at < c.start.at - slack or (c.end is not None and snap.at > c.end.at + slack):
                t.fail(
                    S,
                    EC,
                    f"machine.jsonl's {snap.label} snapshot at {show(snap.at)} shows pid {pid} alive "
                    "outside its life in launches.jsonl",
                )
            break
        else:
            # A process of the pid of a controller whose start was not read (startTime 0) may be that controller:
            # with no start time to compare, it is held neither to that controller's life nor as one
            # launches.jsonl does not name (README.md, open question 82).
            if any(c.pid == pid and not_taken(c.start.start_time) for c in cs.items):
                continue
            if isinstance(args, list) and args in argvs:
                t.fail(
                    S,
                    EC,
                    f"machine.jsonl's {snap.label} snapshot shows a controller (pid {pid}) "
                    "that launches.jsonl does not name",
                )


def kill_folders(out: Path, t: Tally) -> list[KillFolder]:
    try:
        # Only real folders are kill folders: a kills/<n> that is a link (dangling, out of OUT) or a file is
        # none, and its number is a hole (killfolder.kill_folder_numbers; README.md, open question 20).
        numbers = kill_folder_numbers(out)
    except Refused as exc:
        if str(exc).endswith(": missing"):
            return []
        t.fail("kill 1", "killEvidence", f"kills/ cannot be read: {exc}")
        t.fail("kill 1", "killDelivered", "kills/ cannot be read")
        return []
    folders: list[KillFolder] = []
    total = recordings = 0
    for i, n in enumerate(numbers):
        if i >= MAX_KILL_FOLDERS:
            kf = KillFolder(
                n, f"kills/{n}", unread=f"more than {MAX_KILL_FOLDERS} kill folders: kills/{n} and after are not read"
            )
            folders.append(kf)
            t.fail(f"kill {n}", "killDelivered", kf.unread or "")
            break
        rel = f"kills/{n}"
        size, rec = kill_folder_size(out, rel)
        total += size
        recordings += rec
        if total > ALL_KILL_FOLDERS_CAP or recordings > ALL_RECORDINGS_CAP:
            kf = KillFolder(n, rel, unread=f"{rel} is past the caps of all kill folders together: not read")
            t.fail(f"kill {n}", "killDelivered", kf.unread or "")
        else:
            kf = load_kill_folder(out, n)
        if n > 1 and n - 1 not in numbers:
            t.fail(
                f"kill {n}",
                "killEvidence",
                f"kills are not numbered without a hole: kills/{n - 1} is missing (no folder of that number)",
            )
        folders.append(kf)
    return folders


def in_flight_at(ledger: Ledger, timeline: Timeline, when: Fraction) -> list[str]:
    """Runs whose runStarted, and not their runResult, had been seen by a moment.

    docs/contract.md ("Every end while runs were in flight is claimed": "in flight by what a console had seen by
    then (its `runStarted` seen, its `runResult` not)"; "Which check a file fails", timeline.jsonl: "a line that
    saw a seq as another record ... tells nothing of when the ledger's record of that seq was seen").  A
    runStarted is seen only by a line that saw it as the ledger writes it; a runResult whose seq's line saw
    another record is not known to be unseen by then, so its run is not shown in flight (README.md, open
    question 71)."""
    started, done = set(), set()
    for r in ledger.records:
        if not isinstance(r.run, str):
            continue
        if r.kind == "runResult" and timeline.saw_other(r):
            done.add(r.run)  # not known unseen at the end: nothing is asked of it
            continue
        s = timeline.saw(r)  # a line that saw its seq as another record tells nothing of it
        if s is None or s.seen > when:
            continue
        if r.kind == "runStarted":
            started.add(r.run)
        elif r.kind == "runResult":
            done.add(r.run)
    return sorted(started - done)


def judge_ends_claimed(t: Tally, cs: Controllers, timeline: Timeline, ledger: Ledger, views: list[KillView]) -> None:
    """§6.8: every controller end while runs were in flight is claimed by a kill folder; nothing is asked of
    a stop (SIGINT, exit 130: docs/contract.md, the console stops a study it cannot write evidence for, and
    cannot write that folder either)."""
    if not cs.readable or not timeline.readable:
        return
    claimed = {id(v.controller) for v in views if v.controller is not None}
    unknown_pids = {v.pid for v in views if v.controller is None}
    for c in cs.items:
        if c.end is None or c.clean or id(c) in claimed or c.pid in unknown_pids:
            continue
        if c.end.code == 130 or c.end.signal == "SIGINT":
            continue
        flying = in_flight_at(ledger, timeline, c.end.at)
        if flying:
            t.fail(
                S,
                EC,
                f"pid {c.pid} ended at {show(c.end.at)} with {', '.join(flying[:3])} in flight, "
                "and no kill folder claims that end",
            )


def judge_records_dated(t: Tally, cs: Controllers, ledger: Ledger) -> None:
    """docs/contract.md ("Records are written while a controller runs", §6.9): every record's ``at`` (the
    writer's time) lies in a controller's life, from RECORD_LAG before its ``start`` to RECORD_LAG after its
    ``end`` (one still running has no end yet); a record dated in no controller's life was written by
    something that outlived its controller, or before any was started: exitedCleanly, whatever kill it
    follows (after a kill, the kill's own rule, ``kills.check_records_after``, also names the target's
    check, by ``seenAt``).  When a console saw a record is not this rule's: a console that was not watching
    sees a controller's last records only at the next ``--resume``.  A record whose ``at`` is not a time
    breaks rule 8 (contractKept) and is not dated here.

    A record ``timeline.jsonl`` saw before any controller started is the timeline's fault, not the
    controllers': ``judge_seen_before_any_controller``."""
    if not cs.readable or not cs.items:
        return
    bad = []
    # "the records read before the ledger stops being read (its caps) are held to it too": a ledger not read to
    # its end still has its records up to the stop dated (README.md, open question 59).
    for r in ledger.records if ledger.readable else ledger.read_before_stop:
        if not isinstance(r.seq, int):
            continue
        if r.time is not None and cs.lived_at(r.time) is None:
            bad.append(f"seq {r.seq} ({r.kind}) is dated {show(r.time)}, in no controller's life")
    for why in bad[:3]:
        t.fail(S, EC, why)
    if len(bad) > 3:
        t.fail(S, EC, f"and {len(bad) - 3} more records dated in no controller's life")


def judge_seen_before_any_controller(t: Tally, cs: Controllers, timeline: Timeline) -> None:
    """docs/contract.md ("Which check a file fails", timeline.jsonl, what it is held to): no record seen before
    the first controller started (by SEEN_SLACK: a start is stamped before the spawn, a seenAt when the
    console read the record).  Such a sighting fails ledgerWellFormed, not exitedCleanly (README.md, open
    question 34); the kills' own rule for the records after a kill still reads it."""
    if not cs.readable or not cs.items or not timeline.readable:
        return
    first_start = min(c.start.at for c in cs.items)
    # Every line of the file, those that saw a record a power loss took among them (Timeline.lost).
    lines = [*timeline.by_seq.values(), *(s for lost in timeline.lost.values() for s in lost.values())]
    bad = [
        f"timeline.jsonl line {s.line}: seq {s.seq} was seen at {show(s.seen)}, before any controller started"
        for s in sorted(lines, key=lambda s: s.line)
        if s.seen < first_start - SEEN_SLACK
    ]
    for why in bad[:3]:
        t.fail(S, "ledgerWellFormed", why)
    if len(bad) > 3:
        t.fail(S, "ledgerWellFormed", f"and {len(bad) - 3} more records seen before any controller started")
