"""The checks of one target of a kill: ``sameContainerNoRerun``, ``chargedOnce``, ``resultSettledAndFinished``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studymon.engine.contract.accounts import Accounts, RunAccount, round_key
from studymon.engine.contract.automata import Proof, Row, Where, proof, unexpected
from studymon.engine.contract.ends import FINISHED, PAUSED
from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from studymon.engine.contract.ledger import Record
from studymon.engine.contract.rules import experiment_keys, is_int, key, plural, round_text, valid_id
from studymon.engine.contract.targets import CHARGED, UNRECORDED, UNSETTLED
from studymon.engine.evidence.records import KillTarget, Snapshot, inspect_problem, parse_snapshot
from studymon.engine.io.safefile import type_name
from studymon.engine.judge.events import ContainerStory, StoryEvent, TargetTally
from studymon.engine.judge.facts import KillEvidence, LedgerFacts, StudyFacts, ledger_line
from studymon.engine.judge.machines import (
    BOOKS,
    C_CHARGE,
    C_START,
    C_STARTED,
    CONTAINER,
    DESTROY_FIRST,
    FORBIDDEN,
    OOM_LATE,
    OPENED,
    R_AFTER,
    R_BEFORE,
    RESULTS,
    RESULTS_TWICE,
    ROUND,
    SETTLED,
    STARTED_AGAIN,
    STARTS,
    T_START,
    TWO_DIES,
    UNSTARTED,
)
from studymon.engine.judge.text import action_text, name_text, ns_text, run_text, short_id, time_text
from studymon.engine.judge.verdict import SHOWN, WINDOW_OPEN, Check, Verdict

FINISHED_OPEN = "the study finished with the window still open"
TARGET_CHECKS = ("sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished")
# What the contract makes of a target's story, for the proofs (§6.4, §7).
ONE_CONTAINER = "a target's run goes on in one container, which dies once in its window as its run ends (§6.4)"
ONE_CONTAINER_ONLY = "in its window a target's container does nothing but die once, as its run ends (§6.4)"
NOT_AGAIN = "nothing of the study's work is done again after a kill: no container of the study is made in its window"


def kill_seq(ev: KillEvidence) -> int:
    """The kill's beforeKillSeq: a kill without one has no targets (kill.judged_targets), so a target's kill has it."""
    assert ev.kill is not None and ev.kill.before_kill_seq is not None, "a target of a kill without its seq"
    return ev.kill.before_kill_seq


def _killed(ev: KillEvidence, t: KillTarget) -> tuple[Where, str]:
    """kill.json's own words of the target, for a proof."""
    return ev.at(KillFolder.KILL), f"beforeKillSeq {kill_seq(ev)}, target {t.run}"


def _finished_open(ev: KillEvidence) -> Proof:
    return proof(
        ev.at(KillFolder.WINDOW),
        "missing: the window is open",
        "a window closes once every target's story has ended, before the study finishes",
        ev.finished_at(),
    )


def _event(ev: KillEvidence, at: Where | None, said: str) -> tuple[Where, str]:
    """An event of a recording (where the tally kept its line; else the live recording as a whole)."""
    return (at or ev.at(KillFolder.LIVE)), said


def _forbidden(v: Verdict, ev: KillEvidence, name: str, counted: TargetTally, story: ContainerStory, then: str) -> None:
    """The target's events its story leaves no room for (the rows of the replay that say so), each with its line."""
    shown = story.breaking(FORBIDDEN)
    # The tally counts the actions outside the story beyond those it kept; a waiting target's own start that the
    # replay found after its container's end is one more.
    total = counted.forbidden_count + sum(1 for e in shown if e.event == C_START)

    def told(e: StoryEvent) -> str:
        of = name if e.id is None else f"container {short_id(e.id)} (not {name}'s Id)"
        return f"{action_text(e.action)} of {of} at {ns_text(e.ns)}"

    v.listed([f"{told(e)} in its window" for e in shown], total, "such event", "such events")
    v.proven(proof(*_event(ev, e.at, told(e)), then) for e in shown)
    for state, e in story.unexpected:
        said = f"{e.action or e.event} of {name} at {ns_text(e.ns)}"
        v.fail(f"{said}: {unexpected(CONTAINER, state, e.event)}", proof(*_event(ev, e.at, said), then))


def _destroy(ev: KillEvidence, name: str, counted: TargetTally) -> tuple[Where, str]:
    """The earliest destroy of the target's own container, as a proof names it."""
    return _event(ev, counted.story_destroy_at, f"destroy of {name} at {ns_text(counted.story_destroy or 0)}")


# --- per target ------------------------------------------------------------------------------


def target_checks(
    ev: KillEvidence,
    t: KillTarget,
    acc: Accounts,
    study: StudyFacts,
    ledger: LedgerFacts,
    plans: PlansAfter | None = None,
) -> list[Check]:
    scope = f"{ev.scope} · {t.run}"
    if ledger.pending:
        # No ledger written yet, and the study can still be resumed: nothing of a target's story can be told yet.
        said = f"the ledger cannot be judged: {ledger.problem or 'not written yet'}"
        return [Check(name, None, said, scope) for name in TARGET_CHECKS]
    acct = acc.runs.get(t.run)
    return [
        same_container_no_rerun(ev, t, acct, study, ledger, scope),
        charged_once(ev, t, acct, acc, ledger, scope, plans),
        result_settled_and_finished(ev, t, acct, acc, ledger, scope),
    ]


def snapshot_entry(ev: KillEvidence, file: str, name: str) -> tuple[Snapshot | None, str | None]:
    """The target's inspect in one snapshot file, or why there is none."""
    problem = ev.problem(file)
    if problem is not None:
        return None, problem
    entry = ev.snapshots[file].get(name)  # a file without a problem was read
    if entry is None:
        return None, f"{file} has no {name}"
    snap = parse_snapshot(entry)
    if isinstance(snap, str):
        return None, f"{file}: the entry for {name} is {snap}"
    return snap, None


@dataclass
class _Container:
    """What the snapshots say of the target's container: one Id, one start, and an exit if it had one."""

    snaps: dict[str, Snapshot] = field(default_factory=dict)
    exited_before: bool = False  # it exited just before the kill: its die may lie before the window
    exit: Snapshot | None = None  # the first snapshot that shows it exited
    exit_file: str = KillFolder.BEFORE  # the file that holds it

    @property
    def id(self) -> str | None:
        first = self.snaps.get(KillFolder.BEFORE)
        return first.id if first is not None else None


def same_container_no_rerun(
    ev: KillEvidence, t: KillTarget, acct: RunAccount | None, study: StudyFacts, ledger: LedgerFacts, scope: str
) -> Check:
    """The target's story in its container (§6.4, §7), by what the kill left it in.

    In flight, or unrecorded (its container started, no ``runStarted``):
    one container, only allowed events, one die that agrees; an unrecorded
    one is adopted, its one ``runStarted`` after the kill naming it.
    Charged but not started: started once after the kill, in one container.
    With its result but not settled: never run again.
    """
    v = Verdict("sameContainerNoRerun", scope)
    name = study.container(t.run)
    if name is None:
        v.fail(
            f"the container names cannot be checked: {study.problem}",
            proof(
                Where(EvidenceFolder.RESEARCH, 0),
                (study.problem or "no study id or container prefix").removeprefix(f"{EvidenceFolder.RESEARCH}: "),
                "a run's container is named from research.json: <containerPrefix>-<ID>-<run> (rule 4)",
            ),
        )
        return v.check(lambda: "")  # never shown: it failed
    if ledger.problem is not None:
        ledger.say(v)
    if t.kind in (CHARGED, UNSETTLED):
        # No container of theirs at the kill, but the snapshots are read as for any target: whether one of the study's
        # ran is what they show (docs/contract.md, "Which check a file fails": a snapshot).
        _snapshot_files(v, ev)
        if t.kind == UNSETTLED:
            _named(v, ev, t, name)  # its container ran to its end: kill.json names it as the ledger does
        return (_started_once if t.kind == CHARGED else _not_run_again)(v, ev, t, acct, name)
    _named(v, ev, t, name)
    box = _snapshots(v, ev, name)
    _window_entry(v, ev, t)
    counted = _study_events(v, ev, t, name)
    if counted is not None:
        _own_events(v, ev, name, counted, box, acct)
    n_dies = len(counted.dies) if counted else 0
    _starts(v, ev, t, acct, name)  # in flight: no row of its starts says anything here (chargedOnce counts them)
    adopted = ""
    if t.kind == UNRECORDED:
        adopted = "started before the kill without runStarted, adopted by its one runStarted after it; "
    return v.check(
        f"{name}: {adopted}one Id ({short_id(box.id)}) and StartedAt in {len(box.snaps)} snapshots; "
        f"in its window only {plural(n_dies, 'die')} and what may come with it, exit as runResult; "
        "no other container of the study made in the window"
    )


def _named(v: Verdict, ev: KillEvidence, t: KillTarget, name: str) -> None:
    """The target's container in kill.json is the one its name says (rule 4)."""
    if t.container != name:
        v.fail(
            f"the target's container in kill.json is not {name}",
            proof(
                ev.at(KillFolder.KILL),
                f"target {t.run}'s container is {name_text(t.container)}",
                f"a run's container is named from research.json: {name} (rule 4)",
            ),
        )


def _starts_after(ev: KillEvidence, acct: RunAccount | None) -> tuple[list[Record], int]:
    seq = kill_seq(ev)
    starts = acct.starts if acct is not None else []
    return [r for r in starts if r.seq > seq], seq


def _starts_story(
    ev: KillEvidence, t: KillTarget, acct: RunAccount | None
) -> tuple[dict[Row, Record | None], list[Record]]:
    """The target's runStarted records after its kill replayed through :data:`STARTS` from its class, then the
    timeline's end: each row taken with the first record that took it (None: the end), and the records."""
    after, _ = _starts_after(ev, acct)
    start = t.kind if t.kind in STARTS.states else STARTS.start
    rows = STARTS.replay([T_START] * len(after), FINISHED if ev.finished else PAUSED, start)
    taken: dict[Row, Record | None] = {}
    for row, r in zip(rows, [*after, None], strict=True):
        taken.setdefault(row, r)
    return taken, after


def _starts(v: Verdict, ev: KillEvidence, t: KillTarget, acct: RunAccount | None, name: str) -> None:
    """sameContainerNoRerun's view of the target's starts after its kill: each broken row said once, with its
    proof; the start that adopted or started it names its container (rule 4)."""
    taken, after = _starts_story(ev, t, acct)
    said: set[str] = set()
    for row, r in taken.items():
        if row.breaks is None:
            if r is not None and row.state in (UNRECORDED, CHARGED) and r.get("container") != name:
                v.fail(
                    f"the runStarted of {t.run} after the kill (seq {r.seq}) names {name_text(r.get('container'))}, "
                    f"not {name}",
                    _names_other(r, t, r.get("container"), name),
                )
            continue
        if row.says in said:
            continue
        said.add(row.says)
        say = v.unknown if row.unknown else v.fail
        if row.says == STARTED_AGAIN:
            lets = tuple((ledger_line(x), f"runStarted of {t.run} (seq {x.seq})") for x in after[:SHOWN])
            say(row.says.format(count=len(after), run=t.run), Proof(lets, row.then))
        elif r is not None:  # a start of a run with its result
            result = acct.results[0] if acct is not None and acct.results else None
            say(
                row.says.format(run=t.run, seq=r.seq),
                proof(
                    ledger_line(r),
                    f"runStarted of {t.run} (seq {r.seq}), after the kill",
                    row.then,
                    (ledger_line(result), f"runResult of {t.run}" + (f" (seq {result.seq})" if result else "")),
                    _killed(ev, t),
                ),
            )
        else:  # the end met a target still to adopt or to start
            seen = ((ev.at(KillFolder.BEFORE), f"{name} started"),) if t.kind == UNRECORDED else ()
            say(
                row.says.format(run=t.run, yet="" if ev.finished else " yet"),
                proof(
                    *_killed(ev, t),
                    row.then,
                    *seen,
                    (ledger_line(None), f"no runStarted of {t.run} after the kill"),
                    ev.finished_at(),
                ),
            )


def _names_other(r: Record, t: KillTarget, said: Any, name: str) -> Proof:
    return proof(
        ledger_line(r),
        f"the runStarted of {t.run} (seq {r.seq}) names {name_text(said)}",
        f"a run's container is named from research.json: {name} (rule 4)",
    )


def _started_once(v: Verdict, ev: KillEvidence, t: KillTarget, acct: RunAccount | None, name: str) -> Check:
    """A target charged but not started at the kill: after it, one runStarted naming one container made in the
    window, its one die agreeing with its result."""
    if t.container is not None:
        v.fail(
            f"kill.json gives {t.run}, charged but not started, a container",
            proof(
                ev.at(KillFolder.KILL),
                f"target {t.run}, charged but not started, has container {name_text(t.container)}",
                "a run charged but not started has no container yet",
            ),
        )
    _starts(v, ev, t, acct, name)
    _window_entry(v, ev, t)
    counted = _study_events(v, ev, t, name)
    if counted is not None:
        box = _Container()
        _own_events(v, ev, name, counted, box, acct, made=counted.made, charged=True)
    return v.check(
        f"{name}: started once after the kill, one container made in its window, its one die as runResult; "
        "no other container of the study made in the window"
    )


def _recordings_agree(v: Verdict, ev: KillEvidence, name: str, counted: TargetTally) -> None:
    """The two recordings hold each event of the target's in the window alike, whatever its class (§6.9)."""
    if not counted.disagree:
        return
    lets = (
        ((counted.disagree_at[0], f"an event of {name}"), (counted.disagree_at[1], "the same event, otherwise"))
        if counted.disagree_at is not None
        else ((ev.at(KillFolder.LIVE), f"an event of {name}"), (ev.at(KillFolder.READBACK), "it, otherwise"))
    )
    v.fail(
        f"the recordings disagree: {plural(counted.disagree, 'event')} of {name} differ between the two files",
        Proof(lets, "the live recording and the read-back hold each event of the window alike (§6.4)"),
    )


def _not_run_again(v: Verdict, ev: KillEvidence, t: KillTarget, acct: RunAccount | None, name: str) -> Check:
    """A target with its result but not settled at the kill: the resume settles it and never runs it again."""
    _starts(v, ev, t, acct, name)
    _window_entry(v, ev, t)
    counted = _study_events(v, ev, t, name)
    if counted is not None:
        # Its container exited before the kill: from there, anything but its die reported late and its removal
        # is the run done again.
        _forbidden(
            v,
            ev,
            name,
            counted,
            counted.story("exited"),
            "a run with its result is never run again: nothing of its container happens",
        )
        _recordings_agree(v, ev, name, counted)
    return v.check(f"{name}: had its result before the kill; not started again, nothing of it made in the window")


def _snapshot_files(v: Verdict, ev: KillEvidence) -> None:
    """Each snapshot file the kill's stage asks for is there and readable (``?`` for one a resume still writes), and
    holds inspect objects only."""
    for file in KillFolder.SNAPSHOTS:
        if file == KillFolder.BEFORE_RESUME and ev.may_continue and not ev.resumed and file in ev.missing:
            continue  # not resumed yet
        why = ev.problem(file)
        if why is not None:
            (v.unknown if file in ev.to_come() else v.fail)(
                why, ev.missing_proof(file, "each snapshot of the kill is written whole, as the runtime inspects it")
            )
        _inspects(v, ev, file)


def _inspects(v: Verdict, ev: KillEvidence, file: str, own: str | None = None) -> None:
    """A snapshot maps container names to the runtime's inspect objects (null: no such container then), each filed
    under its own Name, whatever container a target's story reads in it: one entry of another shape, or filed under
    another name, is a snapshot not as the runtime gave it (the target's ``own`` entry is said with the rest of its
    story)."""
    odd: list[tuple[str, str]] = []
    for name, entry in ev.snapshots.get(file, {}).items():
        if name == own or entry is None:
            continue
        why = inspect_problem(entry)
        if why is None and entry["Name"].removeprefix("/") != name.removeprefix("/"):
            why = "filed under another name than its Name"
        if why is not None:
            odd.append((name, why))
    if odd:
        name, why = odd[0]
        v.fail(
            f"{file}: the entry for {name_text(name)} is {why}"
            + (f" (and {len(odd) - 1} more)" if len(odd) > 1 else ""),
            proof(
                ev.at(file),
                f"the entry for {name_text(name)} is {why}",
                "a snapshot maps container names to the runtime's inspect objects (null: no such container), each "
                "filed under its own Name (§6.9)",
            ),
        )


def _snapshots(v: Verdict, ev: KillEvidence, name: str) -> _Container:
    """One container throughout: the same Id and StartedAt in every snapshot, each filed under its own name,
    running at the kill or exited just before it, and one exit once it has one."""
    box = _Container()
    since = ev.opens_ns
    for file in KillFolder.SNAPSHOTS:
        if file == KillFolder.BEFORE_RESUME and ev.may_continue and not ev.resumed and file in ev.missing:
            continue  # not resumed yet
        snap, why = snapshot_entry(ev, file, name)
        at = ev.at(file)
        _inspects(v, ev, file, name)
        if snap is None:
            (v.unknown if file in ev.to_come() else v.fail)(
                why or file,
                proof(
                    at,
                    (why or file).removeprefix(f"{file}: "),
                    "each snapshot of the kill holds the target's container, by its name, as the runtime inspects it",
                ),
            )
            continue
        box.snaps[file] = snap
        if snap.id is None:
            v.fail(f"{file}: {name} has no Id", proof(at, f"{name} has no Id", "an inspect object has its Id"))
        if snap.started_at is None:
            v.fail(
                f"{file}: {name} has no StartedAt",
                proof(at, f"{name} has no StartedAt", "a container started has its StartedAt"),
            )
        if snap.name != name:
            v.fail(
                f"{file}: the entry filed under {name} is another container's (its Name differs)",
                proof(
                    at,
                    f"the entry filed under {name} is named {name_text(snap.name)}",
                    "a snapshot files each container under its own name",
                ),
            )
        if snap.exited:
            if box.exit is None:
                box.exit, box.exit_file = snap, file
                # Exited in the first snapshot, or (read as the run ended) finished before the window.
                box.exited_before = file == KillFolder.BEFORE or (
                    file == KillFolder.AFTER
                    and since is not None
                    and snap.finished_ns is not None
                    and snap.finished_ns < since
                )
            elif (snap.exit_code, snap.finished_ns) != (box.exit.exit_code, box.exit.finished_ns):
                v.fail(
                    f"{file}: {name} shows another exit than the snapshot before",
                    proof(
                        at,
                        f"{name} exited with {_code(snap.exit_code)} at {_finished(snap)}",
                        "a container exits once",
                        (
                            ev.at(box.exit_file),
                            f"{name} exited with {_code(box.exit.exit_code)} at {_finished(box.exit)}",
                        ),
                    ),
                )
        elif box.exit is not None:
            v.fail(
                f"{file}: {name} exited, and here it is not that same exited container",
                proof(
                    at,
                    f"{name} is not exited",
                    "a container that exited stays exited: none is started again",
                    (ev.at(box.exit_file), f"{name} exited"),
                ),
            )
        elif file == KillFolder.BEFORE and snap.running is not True:
            v.fail(
                f"{file}: {name} is not running",
                proof(at, f"{name} is not running", "a target in flight at the kill runs in its container then"),
            )
        elif file != KillFolder.BEFORE and snap.running is not True:
            v.fail(
                f"{file}: {name} is neither running nor exited",
                proof(at, f"{name} is neither running nor exited", ONE_CONTAINER),
            )
    if len({s.id for s in box.snaps.values()}) > 1:
        v.fail(
            f"the Id of {name} changes across {', '.join(box.snaps)}",
            Proof(tuple((ev.at(f), f"{name} has Id {short_id(s.id)}") for f, s in box.snaps.items()), ONE_CONTAINER),
        )
    if len({s.started_at for s in box.snaps.values()}) > 1:
        v.fail(
            f"the StartedAt of {name} changes across {', '.join(box.snaps)}",
            Proof(
                tuple((ev.at(f), f"{name} started at {time_text(s.started_at)}") for f, s in box.snaps.items()),
                "a target's run goes on in one container, started once (§6.4)",
            ),
        )
    return box


def _finished(snap: Snapshot) -> str:
    return ns_text(snap.finished_ns) if snap.finished_ns is not None else "an unknown time"


def _code(code: int | None) -> str:
    return str(code) if code is not None else "unknown"


def _window_entry(v: Verdict, ev: KillEvidence, t: KillTarget) -> None:
    """The window file says when the target's result was seen, inside the window."""
    window = ev.window
    at = ev.at(KillFolder.WINDOW)
    if KillFolder.WINDOW in ev.problems:
        v.fail(ev.problems[KillFolder.WINDOW], _window_problem(ev))
    elif ev.may_continue:
        v.unknown(WINDOW_OPEN)
    elif ev.window_open:
        v.fail(FINISHED_OPEN, _finished_open(ev))
    elif window is not None:
        entry = window.results.get(t.run)
        if entry is None:
            v.fail(
                f"{KillFolder.WINDOW} has no entry for {t.run}",
                proof(at, f"no entry for {t.run}", "the window holds an entry for each target", _killed(ev, t)),
            )


def _window_problem(ev: KillEvidence) -> Proof:
    return ev.missing_proof(KillFolder.WINDOW, "the window file is read as the console writes it (§6.9)")


def _study_events(v: Verdict, ev: KillEvidence, t: KillTarget, own: str) -> TargetTally | None:
    """What the recordings say of the study in the window: readable, no gap, nothing made off the books."""
    for file in (KillFolder.LIVE, KillFolder.READBACK):
        problem = ev.problem(file)
        if problem is not None and not (file == KillFolder.READBACK and ev.may_continue and file in ev.missing):
            v.fail(problem, ev.missing_proof(file, "a kill's window is recorded live and read back whole (§6.4)"))
    tally = ev.tally
    if tally is None:
        v.unknown("the lifecycle events were not judged")  # never a pass without them
        return None
    counted = tally.target(t.run)
    for file, why in tally.stopped:
        said = f"{file}: {why}"
        v.fail(said, proof(ev.at(file), said, "a recording holds the runtime's events, each line one (§6.9)"))
    v.listed(tally.malformed, tally.malformed_count, "line that is not an event", "lines that are not events")
    v.proven(tally.malformed_proofs)
    foreign = [(other, action, ns) for other, action, ns in tally.foreign if other != own]
    v.listed(
        [
            f"{action} of {name_text(other)} at {ns_text(ns)} in the window, "
            "and its run was not waiting to start at the kill"
            for other, action, ns in foreign
        ],
        tally.foreign_count,
        "container of the study made in the window",
        "containers of the study made in the window",
    )
    v.proven(
        proof(
            *_event(ev, tally.at.get(e), f"{e[1]} of {name_text(e[0])} at {ns_text(e[2])}"),
            NOT_AGAIN + ", but for the runs waiting to start at the kill",
            _killed(ev, t),
        )
        for e in foreign
    )
    # The target's own container is judged with its story (a runStarted naming another is said there).
    off = [e for e in tally.unbooked if e[0] != own]
    unbooked = [
        f"{action} of {name_text(other)} at {ns_text(ns)} in the window, and no runStarted names it"
        for other, action, ns in off
    ]
    count = tally.unbooked_count - (len(tally.unbooked) - len(off))
    if ev.finished:
        v.listed(unbooked, count, "container made off the books", "containers made off the books")
        v.proven(
            proof(
                *_event(ev, tally.at.get(e), f"{e[1]} of {name_text(e[0])} at {ns_text(e[2])}"),
                "a run's container is made for its runStarted, which the ledger holds by the study's end",
                (ledger_line(None), "no runStarted of its run"),
                ev.finished_at(),
            )
            for e in off
        )
    elif unbooked:
        v.unknown(unbooked[0] + " yet")
    if tally.stray_disagree:
        lets = (
            ((tally.stray_disagree_at[0], "an event"), (tally.stray_disagree_at[1], "the same event, otherwise"))
            if tally.stray_disagree_at is not None
            else ((ev.at(KillFolder.LIVE), "an event"), (ev.at(KillFolder.READBACK), "it, otherwise"))
        )
        v.fail(
            f"the recordings disagree: {plural(tally.stray_disagree, 'event')} of other containers differ between "
            "the two files",
            Proof(lets, "the live recording and the read-back hold each event of the window alike (§6.9)"),
        )
    if tally.gaps:
        v.unknown(f"the live recording has {plural(tally.gaps, 'gap')} in the window")
    for restart in tally.restarts_said():
        v.explain(restart)
    return counted


def _own_events(
    v: Verdict,
    ev: KillEvidence,
    name: str,
    counted: TargetTally,
    box: _Container,
    acct: RunAccount | None,
    made: str | None = None,
    charged: bool = False,
) -> None:
    """The target's own events: nothing outside its story, its one die agreeing with the snapshots and the result.

    A ``charged`` target's story starts before anything of its container happened (``unmade``)."""
    fresh = "unmade" if charged else "waiting"
    story = counted.story("exited" if box.exited_before else fresh if counted.fresh else "running")
    _forbidden(v, ev, name, counted, story, ONE_CONTAINER_ONLY)
    for e in story.breaking(UNSTARTED):
        said = f"{action_text(e.action or e.event)} of {name} at {ns_text(e.ns)}"
        v.fail(
            f"{said} before any start of it in its window: its container was started before the kill, which "
            f"{KillFolder.BEFORE} does not show",
            proof(
                *_event(ev, e.at, said),
                "a run charged but not started at the kill has its container start in the window, before anything "
                "else of it happens (§7)",
                (ev.at(KillFolder.BEFORE), f"no started {name} at the kill"),
            ),
        )
    _recordings_agree(v, ev, name, counted)
    dies = story.dies
    died = [
        _event(ev, d.at, f"die of {name} ({short_id(d.id)}, exit {_code(d.code)}) at {ns_text(d.ns)}") for d in dies
    ]
    if story.breaking(TWO_DIES):
        v.fail(
            f"{'more than 2' if len(dies) > 2 else '2'} dies of {name} in its window", Proof(tuple(died), ONE_CONTAINER)
        )
    elif not story.died:
        if ev.may_continue:
            v.unknown(f"no die of {name} yet")
        else:
            v.fail(
                f"no die of {name} in its window",
                proof(
                    ev.at(KillFolder.LIVE),
                    f"no die of {name} in the window",
                    ONE_CONTAINER,
                    (ev.at(KillFolder.READBACK), f"no die of {name} in the window"),
                    (ev.at(box.exit_file), f"{name} exited after the kill")
                    if box.exit is not None
                    else (ev.at(KillFolder.BEFORE), f"{name} ran at the kill"),
                ),
            )
    die = dies[0] if dies else None
    if die is not None:
        first = died[0]
        own_id = box.id if box.id is not None else made
        if own_id is not None and die.id != own_id:
            v.fail(
                f"the die is of container {short_id(die.id)}, not of {short_id(own_id)}",
                proof(
                    *first,
                    ONE_CONTAINER,
                    (ev.at(KillFolder.BEFORE), f"{name} is container {short_id(own_id)}"),
                ),
            )
        if die.code is None:
            v.fail("the die has no exitCode", proof(*first, "a die says the exit code its container exited with"))
        shown = box.exit
        if shown is not None and (
            die.code != shown.exit_code or shown.finished_ns is None or abs(die.ns - shown.finished_ns) > 1_000_000_000
        ):
            v.fail(
                "the die is not the exit the snapshots show (exit code and time within a second)",
                proof(
                    *first,
                    "a container's die is its exit: the same exit code, within a second",
                    (ev.at(box.exit_file), f"{name} exited with {_code(shown.exit_code)} at {_finished(shown)}"),
                ),
            )
        # The result is the run's end as the study waited for it: its container died before the console
        # saw it.  Both on the runtime's clock; Docker stamps a die 10-25 ms after the exit, which a
        # study's wait may already see, so within a second is the die the result waited for.
        if counted.until_ns is not None and die.ns > counted.until_ns + 1_000_000_000:
            v.fail(
                f"the die of {name} comes after its result was seen: the study did not wait for its run",
                proof(
                    *first,
                    "a run's result is written once its container died: the study waits for its run",
                    (ev.at(KillFolder.WINDOW), f"its result was seen at {ns_text(counted.until_ns)}"),
                ),
            )
    destroy = _destroy(ev, name, counted)
    if story.breaking(DESTROY_FIRST) and dies:
        v.fail(
            f"a destroy of {name} comes before its die",
            proof(*destroy, "a container is removed after its die, never before", died[0]),
        )
    elif story.vanished:
        v.fail(
            f"a destroy of {name} with no die before it",
            proof(
                *destroy,
                "a container is removed after its die, never before",
                (ev.at(KillFolder.LIVE), f"no die of {name} in the window"),
            ),
        )
    oom = _event(ev, counted.oom_at, f"oom of {name} at {ns_text(counted.last_oom or 0)}")
    if story.breaking(OOM_LATE):
        v.fail(
            f"an oom of {name} comes after its die",
            proof(*oom, "an oom comes before the die it causes (within a second)", died[0]),
        )
    elif story.undied_oom:
        v.fail(
            f"an oom of {name} with no die after it",
            proof(
                *oom,
                "an oom kills the container: its die follows",
                (ev.at(KillFolder.LIVE), f"no die of {name} in the window"),
            ),
        )
    results = acct.results if acct else []
    code = die.code if die is not None else box.exit.exit_code if box.exit is not None else None
    if len(results) == 1:
        claimed = results[0].get("exitCode")
        if not is_int(claimed):
            v.fail(
                f"runResult's exitCode is {type_name(claimed)}, not an integer",
                proof(
                    ledger_line(results[0]),
                    f"runResult of {run_text(acct.run)} (seq {results[0].seq}): exitCode is {type_name(claimed)}",  # type: ignore[union-attr]
                    "a runResult says the exit code of its run's container, an integer",
                ),
            )
        elif code is not None and code != claimed:
            said = "the die says" if die is not None else "the snapshots show"
            v.fail(
                f"{said} exit {code}, runResult says {claimed}",
                proof(
                    ledger_line(results[0]),
                    f"runResult of {run_text(acct.run)} (seq {results[0].seq}): exit {claimed}",  # type: ignore[union-attr]
                    "a runResult says the exit code its run's container exited with",
                    died[0] if die is not None else (ev.at(box.exit_file), f"{name} exited with {code}"),
                ),
            )
    elif not ev.may_continue and (die is not None or box.exited_before):
        v.fail(
            f"{plural(len(results), 'runResult')} to compare the exit code with",
            Proof(
                (
                    *((ledger_line(r), f"runResult of {name} (seq {r.seq})") for r in results[:SHOWN]),
                    *(() if results else ((ledger_line(None), f"no runResult of the run of {name}"),)),
                    died[0] if die is not None else (ev.at(box.exit_file), f"{name} exited"),
                ),
                "a run whose container exited has one runResult",
            ),
        )


class PlanIndex:
    """Every planned run with what its work is (cell and round), worked out once per judgement."""

    def __init__(self, acc: Accounts) -> None:
        # (work, plan seq, first start seq or None, the run)
        self.plans = [
            (_work_key(a.plan), a.plan.seq, min((st.seq for st in a.starts), default=None), a)
            for a in acc.runs.values()
            if a.plan is not None
        ]

    def after(self, seq: int) -> PlansAfter:
        """The runs that may start after ``seq``, by what their work is.

        Those planned after it, and those planned before it but started only
        after it (§1 has a resume start a run that was not started): a twin of
        a target among them does its work again.  Built once per kill, so that
        looking for a target's repeat costs the same whatever the number of
        targets.
        """
        out: dict[tuple[Any, ...], list[tuple[RunAccount, int]]] = {}
        for work, planned, started, a in self.plans:
            if planned > seq:
                out.setdefault(work, []).append((a, planned))
            elif started is not None and started > seq:
                out.setdefault(work, []).append((a, started))
        return PlansAfter(out)


class PlansAfter:
    """The runs that may start after a kill, by their work, and within a work by each experiment id.

    A target's repeats are those of its cell and round with any experiment id
    in common, of its purpose, or of any purpose before its round was settled
    (§6.9): found through the ids, not by comparing every pair, so that
    thousands of targets and twins cost what their ids cost.
    """

    # Repeats of one target found before the search stops: a repeat fails the check, the count is only said.
    FOUND = 64

    def __init__(self, by_work: dict[tuple[Any, ...], list[tuple[RunAccount, int]]]) -> None:
        self.by_work = by_work  # each run with the moment it came after the kill: its plan's seq, else its start's
        self._by_id: dict[tuple[Any, ...], dict[Any, list[tuple[RunAccount, int]]]] = {}

    def _ids(self, work: tuple[Any, ...]) -> dict[Any, list[tuple[RunAccount, int]]]:
        index = self._by_id.get(work)
        if index is None:
            index = self._by_id[work] = {}
            for a, moment in self.by_work.get(work, []):
                for i in _experiment_ids(a.plan.get("experiments")):  # type: ignore[union-attr]
                    index.setdefault(i, []).append((a, moment))
        return index

    def repeats(
        self, plan: Record, acct: RunAccount | None, settled: int | None = None
    ) -> tuple[list[RunAccount], bool]:
        """The runs that repeat ``plan``'s work, in plan order (the first :attr:`FOUND`), and whether there are more.

        ``settled``: the seq of the settlement of the target's round (None: never settled), before which a run of
        any purpose repeats it."""
        work = _work_key(plan)
        if work not in self.by_work:
            return [], False
        purpose = key(plan.get("purpose"))
        index = self._ids(work)
        found: dict[int, RunAccount] = {}
        for i in _experiment_ids(plan.get("experiments")):
            for a, moment in index.get(i, ()):
                if a is acct or id(a) in found:
                    continue
                if key(a.plan.get("purpose")) != purpose and settled is not None and moment > settled:  # type: ignore[union-attr]
                    continue  # another purpose's run, once the round was settled: the round's next stage
                if len(found) == self.FOUND:
                    return _in_plan_order(found), True
                found[id(a)] = a
        return _in_plan_order(found), False


def _in_plan_order(found: dict[int, RunAccount]) -> list[RunAccount]:
    return sorted(found.values(), key=lambda a: a.plan.seq)  # type: ignore[union-attr]


def plans_after(acc: Accounts, seq: int) -> PlansAfter:
    """:meth:`PlanIndex.after` for one kill."""
    return PlanIndex(acc).after(seq)


def charged_once(
    ev: KillEvidence,
    t: KillTarget,
    acct: RunAccount | None,
    acc: Accounts,
    ledger: LedgerFacts,
    scope: str,
    plans: PlansAfter | None = None,
) -> Check:
    v = Verdict("chargedOnce", scope)
    if ledger.problem is not None:
        ledger.say(v)
    charges = len(acct.charges) if acct else 0
    starts = len(acct.starts) if acct else 0
    # The row the timeline's end takes in the target's books (machines.BOOKS), after its records in order.
    row = _books_story(acct, ev.finished)[-1]
    if row.breaks is not None:
        lets = [
            *((ledger_line(r), f"charge of {t.run} (seq {r.seq})") for r in (acct.charges if acct else [])[:SHOWN]),
            *((ledger_line(r), f"runStarted of {t.run} (seq {r.seq})") for r in (acct.starts if acct else [])[:SHOWN]),
        ]
        (v.unknown if row.unknown else v.fail)(
            row.says.format(charges=plural(charges, "charge"), starts=starts, run=t.run),
            Proof(tuple(lets) or ((ledger_line(None), f"no charge and no runStarted of {t.run}"),), row.then),
        )
    _unmanned(v, ev, t, ("runPlanned", "charge", "runStarted"))
    seq = kill_seq(ev)
    plan = acct.plan if acct else None
    if plan is None:
        v.fail(
            f"run {t.run} has no runPlanned",
            proof(
                ledger_line(None), f"no runPlanned of {t.run}", "a run is planned before it is charged", _killed(ev, t)
            ),
        )
    else:
        if plans is None:
            plans = plans_after(acc, seq)
        settlement = acc.settlements.get(round_key(plan.get("round")))
        repeats, more = plans.repeats(plan, acct, settlement.seq if settlement is not None else None)

        def alike(a: RunAccount) -> str:
            if key(a.plan.get("purpose")) == key(plan.get("purpose")):  # type: ignore[union-attr]
                return "same purpose, cell and round"
            return f"same cell and round, before round {round_text(plan.get('round'))} was settled"

        shown = [
            f"run {run_text(a.run)} (planned at seq {a.plan.seq}, "  # type: ignore[union-attr]
            f"{'after the kill' if a.plan.seq > seq else 'before the kill, started after it'}) repeats it: "  # type: ignore[union-attr]
            f"{alike(a)}, and an experiment in common"
            for a in repeats[:SHOWN]
        ]
        v.listed(shown, len(repeats), "such run", "such runs", more=more)
        v.proven(
            proof(
                ledger_line(a.plan),
                f"runPlanned of {run_text(a.run)} (seq {a.plan.seq}), started after the kill",  # type: ignore[union-attr]
                "no run planned or started after a kill does a target's work again: the same cell and round, and an "
                "experiment in common, of its purpose, or of any before its round is settled (§6.9)",
                (ledger_line(plan), f"runPlanned of {t.run} (seq {plan.seq}), a target of the kill"),
                _killed(ev, t),
            )
            for a in repeats[:SHOWN]
        )
    return v.check(f"1 charge, 1 runStarted; no run planned after the kill repeats {t.run}")


def _books_story(acct: RunAccount | None, finished: bool) -> list[Row]:
    """The target's charges and starts replayed through :data:`BOOKS` in the ledger's order, then the timeline's
    end: the rows taken, the end's last."""
    records = sorted([*(acct.charges if acct else []), *(acct.starts if acct else [])], key=lambda r: r.line)
    events = [C_CHARGE if r.kind == "charge" else C_STARTED for r in records]
    return BOOKS.replay(events, FINISHED if finished else PAUSED)


def _unmanned(v: Verdict, ev: KillEvidence, t: KillTarget, kinds: tuple[str, ...]) -> None:
    """The target's own records after the kill written while no controller started after it ran."""
    for run, kind, why, _, because in ev.unmanned:
        if run == t.run and kind in kinds:
            v.fail(why + ": written by something that outlived the kill", because)


def _work_key(plan: Record) -> tuple[Any, ...]:
    """What makes two plans of the same work: cell and round (as JSON, so 1 is not 1.0).

    Twins also share an experiment (:func:`_experiment_ids`): any id in common repeats the work; and a purpose,
    unless the other run came before the target's round was settled (:meth:`PlansAfter.repeats`).
    """
    return (key(plan.get("object")), key(plan.get("round")))


def _experiment_ids(value: Any) -> frozenset[Any]:
    """A plan's experiment ids as a set; a plan whose experiments are not a list stands for itself whole."""
    ids = experiment_keys(value, ids_only=False)
    return ids if ids is not None else frozenset({("whole", key(value))})


def result_settled_and_finished(
    ev: KillEvidence, t: KillTarget, acct: RunAccount | None, acc: Accounts, ledger: LedgerFacts, scope: str
) -> Check:
    v = Verdict("resultSettledAndFinished", scope)
    # While the window is open, what has not happened yet is unknown; what happened wrong fails.
    # What has not happened yet may still come while the study can be resumed (§6.6); once it has
    # finished, it is lost: the rows of the timeline's end say which (RESULTS, ROUND).
    if ledger.problem is not None:
        ledger.say(v)
    seq = kill_seq(ev)
    results = acct.results if acct else []
    result = results[0] if len(results) == 1 else None
    # The rows its results and the timeline's end took in the target's result machine (machines.RESULTS).
    for row in _results_story(ev, t, results, seq):
        if row.breaks is None:
            continue
        words = row.says.format(count=len(results), run=t.run, seq=getattr(result, "seq", None), kill=seq)
        if row.says == RESULTS_TWICE:
            why = Proof(
                tuple((ledger_line(r), f"runResult of {t.run} (seq {r.seq})") for r in results[:SHOWN]), row.then
            )
        elif result is None:  # no result at all
            why = proof(*_killed(ev, t), row.then, (ledger_line(None), f"no runResult of {t.run}"), ev.finished_at())
        else:
            left = "with its result, unsettled" if t.kind == UNSETTLED else "left unfinished"
            why = proof(
                ledger_line(result),
                f"runResult of {t.run} (seq {result.seq})",
                row.then,
                (
                    ev.at(KillFolder.KILL),
                    f"beforeKillSeq {seq}, target {t.run}{'' if t.kind == UNSETTLED else ','} {left}",
                ),
            )
        (v.unknown if row.unknown else v.fail)(words, why)
    if KillFolder.WINDOW in ev.problems:
        v.fail(ev.problems[KillFolder.WINDOW], _window_problem(ev))
    elif ev.may_continue:
        v.unknown(WINDOW_OPEN)
    elif ev.window_open:
        v.fail(FINISHED_OPEN, _finished_open(ev))
    elif ev.window is not None:
        entry = ev.window.results.get(t.run)
        closed_at = entry["resultSeq"] if entry else None
        # An unsettled target's story ends with its round's settlement (the window waited for it); any other's
        # with its result.
        ended = acc.settlements.get(round_key(acct.round)) if acct is not None else None
        end = (ended.seq if ended is not None else None) if t.kind == UNSETTLED else result.seq if result else None
        what = "settlement" if t.kind == UNSETTLED else "result"
        window = ev.at(KillFolder.WINDOW)
        if closed_at is None:
            v.fail(
                f"the window closed without {t.run}'s {what}",
                proof(
                    window,
                    f"closed, with no {what} of {t.run}",
                    f"a window closes once each target's story has ended with its {what}",
                ),
            )
        elif end is not None and end > closed_at:
            end_line = Where(EvidenceFolder.LEDGER, ended.line if t.kind == UNSETTLED and ended else 0)
            if result is not None and t.kind != UNSETTLED:
                end_line = ledger_line(result)
            v.fail(
                f"the {what} (seq {end}) comes after the window closed (at seq {closed_at})",
                proof(
                    end_line,
                    f"the {what} of {t.run} (seq {end})",
                    f"a window closes once each target's story has ended with its {what}",
                    (window, f"closed at seq {closed_at}"),
                ),
            )

    if acct is not None and acct.plan is not None and acct.purpose == "diagnosis":
        _settled(
            v, ev.finished, t.run, acct, acct.plan, result, acc, seq if t.kind == UNSETTLED else None, _killed(ev, t)
        )
    _unmanned(v, ev, t, ("runResult", "diagnosisSettlement"))
    if ev.end_ok is False:
        v.fail(
            "the study did not end as its template expects (haltedAtExport)",
            ev.end_proof or proof(ledger_line(None), "the study's end", "a study ends as its template expects (§6.7)"),
        )
    elif ev.end_ok is None:
        v.unknown("the study has not ended yet as its template expects")
    elif not ev.finished:
        v.unknown("the study has not finished yet")
    rnd = round_text(acct.round) if acct else "?"
    where = f"seq {result.seq}" if result else "?"
    settled = "; settled, then proposal " + rnd + " opened" if acct and acct.purpose == "diagnosis" else ""
    when = "before the kill, settled after it" if t.kind == UNSETTLED else "after the kill and inside the window"
    return v.check(f"one result at {where}, {when}{settled}; halted at export")


def _results_story(ev: KillEvidence, t: KillTarget, results: list[Record], seq: int) -> list[Row]:
    """The target's results replayed through :data:`RESULTS` from its class, each placed by ``seq``
    (beforeKillSeq), then the timeline's end: the rows taken, each once, in order."""
    events = [R_BEFORE if r.seq <= seq else R_AFTER for r in results]
    rows = RESULTS.replay(events, FINISHED if ev.finished else PAUSED, "done" if t.kind == UNSETTLED else "open")
    return list(dict.fromkeys(rows))


def _settled(
    v: Verdict,
    finished: bool,
    run: str,
    acct: RunAccount,
    plan: Record,
    result: Record | None,
    acc: Accounts,
    kill_seq: int | None = None,
    killed: tuple[Where, str] | None = None,
) -> None:
    """The diagnosis part: one settlement of the round, naming the run, after its result (and after ``kill_seq``
    for a target that was unsettled at the kill), complete."""
    planned_at = (ledger_line(plan), f"runPlanned of {run} (seq {plan.seq})")
    if not is_int(acct.round):
        v.fail(
            f"the round of {run} is {type_name(acct.round)}, not an integer",
            proof(planned_at[0], f"{planned_at[1]}: its round is {type_name(acct.round)}", "a round is an integer"),
        )
        return
    rnd = acct.round
    s = acc.settlements.get(round_key(rnd))
    opened = acc.proposal_opened.get(round_key(rnd))
    # The round's settlement and the proposal it opens, in the ledger's order, through machines.ROUND; then the end.
    end = _round_story(s.seq if s is not None else None, opened, finished)[-1]
    if s is None:
        if end.breaks is not None:
            (v.unknown if end.unknown else v.fail)(
                end.says.format(round=rnd),
                proof(*planned_at, end.then, (ledger_line(None), f"no diagnosisSettlement for round {rnd}")),
            )
        return
    settled = (Where(EvidenceFolder.LEDGER, s.line), f"the diagnosisSettlement of round {rnd} (seq {s.seq})")
    if s.count > 1:
        v.fail(
            f"{s.count} diagnosisSettlement for round {rnd}",
            proof(*settled, "a round is settled once", (ledger_line(None), f"{s.count - 1} more for round {rnd}")),
        )
    if kill_seq is not None and s.seq <= kill_seq:
        v.fail(
            f"the settlement of round {rnd} (seq {s.seq}) is not after the kill (seq {kill_seq})",
            proof(
                *settled,
                "a target unsettled at the kill is settled after it",
                killed or planned_at,
            ),
        )
    if s.run != run:
        v.fail(
            f"the settlement of round {rnd} names {s.run if valid_id(s.run) else 'another run'}, not {run}",
            proof(
                *settled,
                f"a round's settlement names its diagnosis run: {run}",
                planned_at,
            ),
        )
    if result is None:
        if not acct.results:
            v.fail(
                f"the settlement of round {rnd} (seq {s.seq}) comes with no runResult for {run}",
                proof(
                    *settled, "a round is settled on its run's result", (ledger_line(None), f"no runResult of {run}")
                ),
            )
    elif (s.seq, s.line) <= (result.seq, result.line):  # records of one seq (ledgerWellFormed ✗) by their lines
        v.fail(
            f"the settlement (seq {s.seq}) comes before the result (seq {result.seq})",
            proof(
                *settled,
                "a round is settled after its run's result",
                (ledger_line(result), f"runResult of {run} (seq {result.seq})"),
            ),
        )
    if s.accounted is None:
        v.fail(
            f"the settlement of round {rnd}: {s.problem}",
            proof(
                settled[0], f"{settled[1]}: {s.problem}", "a settlement accounts for each experiment, judged or dropped"
            ),
        )
    else:
        planned = experiment_keys(plan.get("experiments"), ids_only=False)
        if planned is None:
            v.fail(
                f"runPlanned.experiments of {run} is not a list",
                proof(
                    planned_at[0], f"{planned_at[1]}: its experiments are not a list", "a plan's experiments are a list"
                ),
            )
        elif planned - s.accounted:
            v.fail(
                f"the settlement leaves out {plural(len(planned - s.accounted), 'experiment')} of {run}",
                proof(
                    *settled,
                    "a settlement accounts for each experiment of its run, judged or dropped",
                    (planned_at[0], f"runPlanned of {run}: {plural(len(planned - s.accounted), 'experiment')} more"),
                ),
            )
        sel = acc.selections.get(round_key(rnd))
        if sel is not None:
            chose = (Where(EvidenceFolder.LEDGER, sel.line), f"selectDiagnosis of round {rnd} (seq {sel.seq})")
            if sel.chosen is None:
                v.fail(
                    f"selectDiagnosis of round {rnd}: {sel.problem}",
                    proof(chose[0], f"{chose[1]}: {sel.problem}", "a selectDiagnosis names the experiments it chose"),
                )
            elif sel.chosen - s.accounted:
                v.fail(
                    f"the settlement leaves out {plural(len(sel.chosen - s.accounted), 'chosen experiment')}",
                    proof(
                        *settled,
                        "a settlement accounts for each experiment the round chose",
                        (chose[0], f"{chose[1]}: {plural(len(sel.chosen - s.accounted), 'experiment')} more"),
                    ),
                )
    if end.breaks is not None:
        (v.unknown if end.unknown else v.fail)(
            end.says.format(round=rnd, seq=s.seq),
            proof(*settled, end.then, (ledger_line(None), f"no stageOpen proposal {rnd} after it")),
        )


def _round_story(settled: int | None, opened: int | None, finished: bool) -> list[Row]:
    """A round's settlement (its seq) and its last proposal opening, replayed through :data:`ROUND` in seq order
    (at one seq, which no ledger writes, the opening first: only one after the settlement opens on it), then the
    timeline's end: the rows taken, the end's last."""
    events: list[tuple[int, int, str]] = []
    if settled is not None:
        events.append((settled, 1, SETTLED))
    if opened is not None:
        events.append((opened, 0, OPENED))
    events.sort()
    return ROUND.replay((event for _, _, event in events), FINISHED if finished else PAUSED)
