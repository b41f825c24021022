"""The checks of one target of a kill: ``sameContainerNoRerun``, ``chargedOnce``, ``resultSettledAndFinished``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studymon.engine.accounts import Accounts, RunAccount, round_key
from studymon.engine.contract import experiment_keys, is_int, key, plural, round_text, valid_id
from studymon.engine.folder import KillFolder
from studymon.engine.judge.events import TargetWatch
from studymon.engine.judge.facts import KillEvidence, LedgerFacts, StudyFacts
from studymon.engine.judge.text import action_text, name_text, ns_text, run_text, short_id
from studymon.engine.judge.verdict import SHOWN, WINDOW_OPEN, Check, Verdict
from studymon.engine.ledger import Record
from studymon.engine.records import CHARGED, UNRECORDED, UNSETTLED, KillTarget, Snapshot, parse_snapshot
from studymon.engine.safefile import type_name

FINISHED_OPEN = "the study finished with the window still open"

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
        v.fail(f"the container names cannot be checked: {study.problem}")
        return v.check(lambda: "")  # never shown: it failed
    if ledger.problem is not None:
        ledger.say(v)
    if t.kind == CHARGED:
        return _started_once(v, ev, t, acct, name)
    if t.kind == UNSETTLED:
        return _not_run_again(v, ev, t, acct, name)
    if t.container != name:
        v.fail(f"the target's container in kill.json is not {name}")
    box = _snapshots(v, ev, name)
    _window_entry(v, ev, t)
    watch = _study_events(v, ev, t, name)
    if watch is not None:
        _own_events(v, ev, name, watch, box, acct)
    n_dies = len(watch.dies) if watch else 0
    adopted = ""
    if t.kind == UNRECORDED:
        _adopted(v, ev, t, acct, name)
        adopted = "started before the kill without runStarted, adopted by its one runStarted after it; "
    return v.check(
        f"{name}: {adopted}one Id ({short_id(box.id)}) and StartedAt in {len(box.snaps)} snapshots; "
        f"in its window only {plural(n_dies, 'die')} and what may come with it, exit as runResult; "
        "no other container of the study made in the window"
    )


def _starts_after(ev: KillEvidence, acct: RunAccount | None) -> tuple[list[Record], int | None]:
    seq = ev.kill.before_kill_seq if ev.kill else None
    starts = acct.starts if acct is not None else []
    return ([r for r in starts if r.seq > seq] if seq is not None else []), seq


def _adopted(v: Verdict, ev: KillEvidence, t: KillTarget, acct: RunAccount | None, name: str) -> None:
    """An unrecorded target: its container is the run; the resume records it, once, by that name."""
    after, _ = _starts_after(ev, acct)
    if not after:
        (v.fail if ev.finished else v.unknown)(
            f"no runStarted of {t.run} after the kill{'' if ev.finished else ' yet'}: its started container "
            "is not adopted"
        )
    for r in after[:1]:
        said = r.get("container")
        if said != name:
            v.fail(f"the runStarted of {t.run} after the kill (seq {r.seq}) names {name_text(said)}, not {name}")


def _started_once(v: Verdict, ev: KillEvidence, t: KillTarget, acct: RunAccount | None, name: str) -> Check:
    """A target charged but not started at the kill: after it, one runStarted naming one container made in the
    window, its one die agreeing with its result."""
    if t.container is not None:
        v.fail(f"kill.json gives {t.run}, charged but not started, a container")
    after, _ = _starts_after(ev, acct)
    if not after:
        (v.fail if ev.finished else v.unknown)(
            f"the study finished without starting {t.run} after the kill"
            if ev.finished
            else f"no runStarted of {t.run} after the kill yet"
        )
    elif after[0].get("container") != name:
        said = name_text(after[0].get("container"))
        v.fail(f"the runStarted of {t.run} after the kill (seq {after[0].seq}) names {said}, not {name}")
    _window_entry(v, ev, t)
    watch = _study_events(v, ev, t, name)
    if watch is not None:
        box = _Container()
        _own_events(v, ev, name, watch, box, acct, made=watch.made)
    return v.check(
        f"{name}: started once after the kill, one container made in its window, its one die as runResult; "
        "no other container of the study made in the window"
    )


def _not_run_again(v: Verdict, ev: KillEvidence, t: KillTarget, acct: RunAccount | None, name: str) -> Check:
    """A target with its result but not settled at the kill: the resume settles it and never runs it again."""
    after, _ = _starts_after(ev, acct)
    if after:
        v.fail(f"{t.run} had its result before the kill, and a runStarted after it (seq {after[0].seq})")
    _window_entry(v, ev, t)
    watch = _study_events(v, ev, t, name)
    if watch is not None:
        v.listed(
            [f"{action_text(action)} of {name} at {ns_text(ns)} in its window" for action, ns in watch.forbidden],
            watch.forbidden_count,
            "such event",
            "such events",
        )
    return v.check(f"{name}: had its result before the kill; not started again, nothing of it made in the window")


def _snapshots(v: Verdict, ev: KillEvidence, name: str) -> _Container:
    """One container throughout: the same Id and StartedAt in every snapshot, each filed under its own name,
    running at the kill or exited just before it, and one exit once it has one."""
    box = _Container()
    since = ev.window.since_ns if ev.window is not None else ev.kill.since_ns if ev.kill else None
    for file in KillFolder.SNAPSHOTS:
        if file == KillFolder.BEFORE_RESUME and ev.may_continue and file in ev.missing:
            continue  # not resumed yet
        snap, why = snapshot_entry(ev, file, name)
        if snap is None:
            (v.unknown if file in ev.to_come() else v.fail)(why or file)
            continue
        box.snaps[file] = snap
        if snap.id is None:
            v.fail(f"{file}: {name} has no Id")
        if snap.started_at is None:
            v.fail(f"{file}: {name} has no StartedAt")
        if snap.name != name:
            v.fail(f"{file}: the entry filed under {name} is another container's (its Name differs)")
        if snap.exited:
            if box.exit is None:
                box.exit = snap
                # Exited in the first snapshot, or (read as the run ended) finished before the window.
                box.exited_before = file == KillFolder.BEFORE or (
                    file == KillFolder.AFTER
                    and since is not None
                    and snap.finished_ns is not None
                    and snap.finished_ns < since
                )
            elif (snap.exit_code, snap.finished_ns) != (box.exit.exit_code, box.exit.finished_ns):
                v.fail(f"{file}: {name} shows another exit than the snapshot before")
        elif box.exit is not None:
            v.fail(f"{file}: {name} exited, and here it is not that same exited container")
        elif file == KillFolder.BEFORE and snap.running is not True:
            v.fail(f"{file}: {name} is not running")
        elif file != KillFolder.BEFORE and snap.running is not True:
            v.fail(f"{file}: {name} is neither running nor exited")
    if len({s.id for s in box.snaps.values()}) > 1:
        v.fail(f"the Id of {name} changes across {', '.join(box.snaps)}")
    if len({s.started_at for s in box.snaps.values()}) > 1:
        v.fail(f"the StartedAt of {name} changes across {', '.join(box.snaps)}")
    return box


def _window_entry(v: Verdict, ev: KillEvidence, t: KillTarget) -> None:
    """The window file says when the target's result was seen, inside the window."""
    window = ev.window
    if KillFolder.WINDOW in ev.problems:
        v.fail(ev.problems[KillFolder.WINDOW])
    elif ev.may_continue:
        v.unknown(WINDOW_OPEN)
    elif ev.window_open:
        v.fail(FINISHED_OPEN)
    elif window is not None:
        entry = window.results.get(t.run)
        if entry is None:
            v.fail(f"{KillFolder.WINDOW} has no entry for {t.run}")
        elif window.seen_ns(t.run) is None:
            # Closed as the study finished with the target's story unended: resultSettledAndFinished says what
            # never came.  A record named but no time for it is the file's fault.
            if entry.get("resultSeq") is not None:
                v.fail(f"{KillFolder.WINDOW} gives no time for {t.run}'s result")
        elif not window.since_ns <= window.seen_ns(t.run) <= window.until_ns:  # type: ignore[operator]
            v.fail(f"{KillFolder.WINDOW}: {t.run}'s result was seen outside the window")


def _study_events(v: Verdict, ev: KillEvidence, t: KillTarget, own: str) -> TargetWatch | None:
    """What the recordings say of the study in the window: readable, no gap, nothing made off the books."""
    for file in (KillFolder.LIVE, KillFolder.READBACK):
        problem = ev.problem(file)
        if problem is not None and not (file == KillFolder.READBACK and ev.may_continue and file in ev.missing):
            v.fail(problem)
    tally = ev.tally
    if tally is None:
        v.unknown("the lifecycle events were not judged")  # never a pass without them
        return None
    watch = tally.watch(t.run)
    v.listed(tally.malformed, tally.malformed_count, "line that is not an event", "lines that are not events")
    v.listed(
        [
            f"{action} of {name_text(other)} at {ns_text(ns)} in the window, "
            "and its run was not waiting to start at the kill"
            for other, action, ns in tally.foreign
            if other != own
        ],
        tally.foreign_count,
        "container of the study made in the window",
        "containers of the study made in the window",
    )
    unbooked = [
        f"{action} of {name_text(other)} at {ns_text(ns)} in the window, and its run has no runStarted"
        for other, action, ns in tally.unbooked
    ]
    if ev.finished:
        v.listed(unbooked, tally.unbooked_count, "container made off the books", "containers made off the books")
    elif unbooked:
        v.unknown(unbooked[0] + " yet")
    if tally.gaps:
        v.unknown(f"the live recording has {plural(tally.gaps, 'gap')} in the window")
    for restart in tally.restarts_said():
        v.explain(restart)
    return watch


def _own_events(
    v: Verdict,
    ev: KillEvidence,
    name: str,
    watch: TargetWatch,
    box: _Container,
    acct: RunAccount | None,
    made: str | None = None,
) -> None:
    """The target's own events: nothing outside its story, its one die agreeing with the snapshots and the result."""
    v.listed(
        [f"{action_text(action)} of {name} at {ns_text(ns)} in its window" for action, ns in watch.forbidden],
        watch.forbidden_count,
        "such event",
        "such events",
    )
    if watch.disagree:
        v.fail(f"the recordings disagree: {plural(watch.disagree, 'event')} of {name} differ between the two files")
    dies = sorted(watch.dies.values(), key=lambda d: d[2])
    if len(dies) > 1:
        v.fail(f"{'more than 2' if len(dies) > 2 else '2'} dies of {name} in its window")
    elif not dies and not box.exited_before:
        if ev.may_continue:
            v.unknown(f"no die of {name} yet")
        else:
            v.fail(f"no die of {name} in its window")
    die = dies[0] if dies else None
    if die is not None:
        die_id, die_code, die_ns = die
        own_id = box.id if box.id is not None else made
        if own_id is not None and die_id != own_id:
            v.fail(f"the die is of container {short_id(die_id)}, not of {short_id(own_id)}")
        if die_code is None:
            v.fail("the die has no exitCode")
        shown = box.exit
        if shown is not None and (
            die_code != shown.exit_code or shown.finished_ns is None or abs(die_ns - shown.finished_ns) > 1_000_000_000
        ):
            v.fail("the die is not the exit the snapshots show (exit code and time within a second)")
        if watch.story_destroy is not None and watch.story_destroy < die_ns:
            v.fail(f"a destroy of {name} comes before its die")
        # The result is the run's end as the study waited for it: its container died before the console
        # saw it.  Both on the runtime's clock; Docker stamps a die 10-25 ms after the exit, which a
        # study's wait may already see, so within a second is the die the result waited for.
        if watch.until_ns is not None and die_ns > watch.until_ns + 1_000_000_000:
            v.fail(f"the die of {name} comes after its result was seen: the study did not wait for its run")
        # The engine may report the oom just after the die it caused.
        if watch.last_oom is not None and watch.last_oom > die_ns + 1_000_000_000:
            v.fail(f"an oom of {name} comes after its die")
    else:
        if watch.story_destroy is not None and not box.exited_before:
            v.fail(f"a destroy of {name} with no die before it")
        if watch.last_oom is not None and not box.exited_before:
            v.fail(f"an oom of {name} with no die after it")
    results = acct.results if acct else []
    code = die[1] if die is not None else box.exit.exit_code if box.exit is not None else None
    if len(results) == 1:
        claimed = results[0].get("exitCode")
        if not is_int(claimed):
            v.fail(f"runResult's exitCode is {type_name(claimed)}, not an integer")
        elif code is not None and code != claimed:
            said = "the die says" if die is not None else "the snapshots show"
            v.fail(f"{said} exit {code}, runResult says {claimed}")
    elif not ev.may_continue and (die is not None or box.exited_before):
        v.fail(f"{plural(len(results), 'runResult')} to compare the exit code with")


class PlanIndex:
    """Every planned run with what its work is (purpose, cell, round), worked out once per judgement."""

    def __init__(self, acc: Accounts) -> None:
        # (key, plan seq, first start seq or None, the run)
        self.plans = [
            (_plan_key(a.plan), a.plan.seq, min((st.seq for st in a.starts), default=None), a)
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
        out: dict[tuple[Any, ...], list[RunAccount]] = {}
        for work, planned, started, a in self.plans:
            if planned > seq or (started is not None and started > seq):
                out.setdefault(work, []).append(a)
        return PlansAfter(out)


class PlansAfter:
    """The runs that may start after a kill, by their work, and within a work by each experiment id.

    A target's repeats are those of its work with any experiment id in
    common: found through the ids, not by comparing every pair, so that
    thousands of targets and twins cost what their ids cost.
    """

    # Repeats of one target found before the search stops: a repeat fails the check, the count is only said.
    FOUND = 64

    def __init__(self, by_work: dict[tuple[Any, ...], list[RunAccount]]) -> None:
        self.by_work = by_work
        self._by_id: dict[tuple[Any, ...], dict[Any, list[RunAccount]]] = {}

    def _ids(self, work: tuple[Any, ...]) -> dict[Any, list[RunAccount]]:
        index = self._by_id.get(work)
        if index is None:
            index = self._by_id[work] = {}
            for a in self.by_work.get(work, []):
                for i in _experiment_ids(a.plan.get("experiments")):  # type: ignore[union-attr]
                    index.setdefault(i, []).append(a)
        return index

    def repeats(self, plan: Record, acct: RunAccount | None) -> tuple[list[RunAccount], bool]:
        """The runs that repeat ``plan``'s work, in plan order (the first :attr:`FOUND`), and whether there are more."""
        work = _plan_key(plan)
        if work not in self.by_work:
            return [], False
        index = self._ids(work)
        found: dict[int, RunAccount] = {}
        for i in _experiment_ids(plan.get("experiments")):
            for a in index.get(i, ()):
                if a is not acct and id(a) not in found:
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
    if charges == 1 and starts == 0 and not ev.finished:
        v.unknown(f"1 charge, no runStarted yet: the resume starts {t.run}")  # charged but not started, as at the kill
    elif charges != 1 or starts != 1:
        v.fail(f"{plural(charges, 'charge')}, {starts} runStarted")
    for run, kind, why, _ in ev.unmanned:
        if run == t.run and kind in ("runPlanned", "charge", "runStarted"):
            v.fail(why + ": written by something that outlived the kill")
    seq = ev.kill.before_kill_seq if ev.kill else None
    plan = acct.plan if acct else None
    if seq is None:
        v.fail("kill.json has no beforeKillSeq: a repeat after the kill cannot be looked for")
    elif plan is None:
        v.fail(f"run {t.run} has no runPlanned")
    else:
        if plans is None:
            plans = plans_after(acc, seq)
        repeats, more = plans.repeats(plan, acct)
        shown = [
            f"run {run_text(a.run)} (planned at seq {a.plan.seq}, "  # type: ignore[union-attr]
            f"{'after the kill' if a.plan.seq > seq else 'before the kill, started after it'}) repeats it: "  # type: ignore[union-attr]
            "same purpose, cell and round, and an experiment in common"
            for a in repeats[:SHOWN]
        ]
        v.listed(shown, len(repeats), "such run", "such runs", more=more)
    return v.check(f"1 charge, 1 runStarted; no run planned after the kill repeats {t.run}")


def _plan_key(plan: Record) -> tuple[Any, ...]:
    """What makes two plans of the same work: purpose, cell and round (as JSON, so 1 is not 1.0).

    Twins also share an experiment (:func:`_experiment_ids`): any id in common repeats the work.
    """
    return (key(plan.get("purpose")), key(plan.get("object")), key(plan.get("round")))


def _experiment_ids(value: Any) -> frozenset[Any]:
    """A plan's experiment ids as a set; a plan whose experiments are not a list stands for itself whole."""
    ids = experiment_keys(value)
    return ids if ids is not None else frozenset({("whole", key(value))})


def result_settled_and_finished(
    ev: KillEvidence, t: KillTarget, acct: RunAccount | None, acc: Accounts, ledger: LedgerFacts, scope: str
) -> Check:
    v = Verdict("resultSettledAndFinished", scope)
    # While the window is open, what has not happened yet is unknown; what happened wrong fails.
    # What has not happened yet may still come while the study can be resumed (§6.6); once it has
    # finished, it is lost.
    pending = v.fail if ev.finished else v.unknown
    if ledger.problem is not None:
        ledger.say(v)
    seq = ev.kill.before_kill_seq if ev.kill else None
    results = acct.results if acct else []
    result: Record | None = None
    if not results:
        pending(f"the study finished without {t.run}'s result" if ev.finished else f"no runResult for {t.run} yet")
    elif len(results) > 1:
        v.fail(f"{len(results)} runResult for {t.run}")
    else:
        result = results[0]
        if seq is None:
            v.fail("kill.json has no beforeKillSeq to place the result after")
        elif t.kind == UNSETTLED:
            if result.seq > seq:
                v.fail(f"the result (seq {result.seq}) is not before the kill (seq {seq}), as kill.json says")
        elif result.seq <= seq:
            v.fail(f"the result (seq {result.seq}) is not after the kill (seq {seq})")
    if KillFolder.WINDOW in ev.problems:
        v.fail(ev.problems[KillFolder.WINDOW])
    elif ev.may_continue:
        v.unknown(WINDOW_OPEN)
    elif ev.window_open:
        v.fail(FINISHED_OPEN)
    elif ev.window is not None:
        entry = ev.window.results.get(t.run)
        closed_at = entry["resultSeq"] if entry else None
        # An unsettled target's story ends with its round's settlement (the window waited for it); any other's
        # with its result.
        ended = acc.settlements.get(round_key(acct.round)) if acct is not None else None
        end = (ended.seq if ended is not None else None) if t.kind == UNSETTLED else result.seq if result else None
        what = "settlement" if t.kind == UNSETTLED else "result"
        if closed_at is None:
            v.fail(f"the window closed without {t.run}'s {what}")
        elif end is not None and end > closed_at:
            v.fail(f"the {what} (seq {end}) comes after the window closed (at seq {closed_at})")

    if acct is not None and acct.plan is not None and acct.purpose == "diagnosis":
        _settled(v, pending, t.run, acct, acct.plan, result, acc, seq if t.kind == UNSETTLED else None)
    for run, kind, why, _ in ev.unmanned:
        if run == t.run and kind in ("runResult", "diagnosisSettlement"):
            v.fail(why + ": written by something that outlived the kill")
    if ev.end_ok is False:
        v.fail("the study did not end as its template expects (haltedAtExport)")
    elif ev.end_ok is None:
        v.unknown("the study has not ended yet as its template expects")
    elif not ev.finished:
        v.unknown("the study has not finished yet")
    rnd = round_text(acct.round) if acct else "?"
    where = f"seq {result.seq}" if result else "?"
    settled = "; settled, then proposal " + rnd + " opened" if acct and acct.purpose == "diagnosis" else ""
    when = "before the kill, settled after it" if t.kind == UNSETTLED else "after the kill and inside the window"
    return v.check(f"one result at {where}, {when}{settled}; halted at export")


def _settled(
    v: Verdict,
    pending: Any,
    run: str,
    acct: RunAccount,
    plan: Record,
    result: Record | None,
    acc: Accounts,
    kill_seq: int | None = None,
) -> None:
    """The diagnosis part: one settlement of the round, naming the run, after its result (and after ``kill_seq``
    for a target that was unsettled at the kill), complete."""
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
    if kill_seq is not None and s.seq <= kill_seq:
        v.fail(f"the settlement of round {rnd} (seq {s.seq}) is not after the kill (seq {kill_seq})")
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
