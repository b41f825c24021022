"""The checks of one kill: ``killDelivered`` and ``killEvidence``, then the checks of each target."""

from __future__ import annotations

from studymon.engine.accounts import Accounts, RunAccount
from studymon.engine.contract import plural, valid_id
from studymon.engine.folder import KillFolder
from studymon.engine.judge.facts import KillEvidence, LedgerFacts, StudyFacts
from studymon.engine.judge.target import PlanIndex, target_checks
from studymon.engine.judge.text import run_text
from studymon.engine.judge.verdict import SHOWN, WINDOW_OPEN, Check, Verdict
from studymon.engine.records import SIGKILL, KillRecord, KillTarget, same_json

# Listed targets judged when the ledger cannot say which runs were in flight.
LISTED_KEPT = 16
# The runs in flight whose story is told one by one: per kill, and over all kills together.  Each is
# three checks and three rows of the table; a study has a few in flight at a kill, and a ledger that
# puts thousands in flight at each of many kills made the judge and its table take minutes.
TARGETS_PER_KILL = 64
TARGETS_IN_ALL = 256
# The records of a target's run that its own checks judge when written while no controller ran.
TARGET_KINDS = frozenset({"runPlanned", "charge", "runStarted", "runResult", "diagnosisSettlement"})


def kill_delivered(ev: KillEvidence) -> Check:
    v = Verdict("killDelivered", ev.scope)
    k = ev.kill
    if k is None:
        v.fail(ev.problem(KillFolder.KILL) or f"{KillFolder.KILL}: not read")
    else:
        _delivery(v, ev, k)
    return v.check(lambda: f"SIGKILL sent to pid {k.pid}; its keeper recorded the end by SIGKILL")  # type: ignore[union-attr]


def _delivery(v: Verdict, ev: KillEvidence, k: KillRecord) -> None:
    for reason in k.delivery:
        v.fail(reason)
    if k.pid is not None:
        end = ev.keeper_end
        if ev.launches_problem is not None:
            v.fail(ev.launches_problem)
        elif end is None:
            v.fail(f"launches.jsonl has no end line for pid {k.pid} at or after the kill")
        elif end.signal != SIGKILL:
            if end.signal:
                how = f"says {end.signal}"
            else:
                how = f"says exit {end.code}" if end.code is not None else "has lost its status"
            v.fail(f"the keeper's end line for pid {k.pid} {how}, not SIGKILL")
        if ev.resumed_over:
            v.fail(f"a controller was started after the kill while pid {k.pid} had not ended")
        if ev.end_claimed_by is not None:
            v.fail(f"pid {k.pid}'s end is kill {ev.end_claimed_by}'s: a controller is killed once, by one kill")


def kill_evidence(ev: KillEvidence, acc: Accounts, ledger: LedgerFacts) -> Check:
    v = Verdict("killEvidence", ev.scope)
    if ev.unjudged and ev.kill is not None:  # said first: the kill's judgement is not whole
        v.fail(
            f"more runs in flight at seq {ev.kill.before_kill_seq} than the judge follows one by one (the first "
            f"{len(ev.targets)} are judged; {TARGETS_PER_KILL} a kill, {TARGETS_IN_ALL} in all): more than a study has"
        )
    incomplete = ev.incomplete()
    for reason in incomplete:
        v.fail(reason)
    later = ev.to_come()
    if later:
        v.unknown(f"missing: {', '.join(later)}; `studymon run --resume` writes it before it resumes")
    for n in ev.missing_kills:
        v.fail(f"kills/{n}/ is missing: kills are numbered from 1")
    k = ev.kill
    if k is None:
        return v.check(lambda: "")  # never shown: kill.json is missing or unusable, a reason above
    for reason in k.problems:
        if reason not in incomplete:  # kill.json without its since is said once
            v.fail(reason)
    seq = k.before_kill_seq
    if ev.at_kill is not None:
        v.fail(ev.at_kill)
    # The window opens where kill.json says the kill's recording did (the same moment in both files,
    # to the microsecond): a later start would hide what happened just after the kill.
    if ev.window is not None and k.since_ns is not None and abs(ev.window.since_ns - k.since_ns) > 1000:
        v.fail(f"{KillFolder.WINDOW} starts at another time than kill.json's since")
    if ev.timeline_problem is not None:
        v.fail(ev.timeline_problem)
    targets = {t.run for t in ev.targets}
    # A record of no target that no console saw is not judged (a console may have died); one seen
    # before any controller after the kill started was written by something that outlived it.
    # Those of a target's own run kinds are its checks' (chargedOnce, resultSettledAndFinished); any other
    # record, whatever run it names, is this check's.
    strays = [
        why for run, kind, why, never in ev.unmanned if (run not in targets or kind not in TARGET_KINDS) and not never
    ]
    if strays:
        more = ev.unmanned_count - len(ev.unmanned)
        v.fail(strays[0] + (f" (and {len(strays) - 1 + more} more such records)" if len(strays) > 1 or more else ""))
    if ev.window is not None:
        for note in ev.window.notes:
            v.fail(note)
        judged = {t.run for t in ev.targets}
        entries = set(ev.window.results)
        if entries != judged:
            v.fail(
                f"{KillFolder.WINDOW}'s targets are not the kill's: {plural(len(entries - judged), 'entry')} "
                f"of no target, {plural(len(judged - entries), 'target')} without one"
            )
    if ledger.problem is not None:
        ledger.say(v)
    elif seq is not None:
        if seq > acc.last_seq:
            v.fail(f"beforeKillSeq {seq} is past the ledger's end (seq {acc.last_seq})")
        if k.trigger == "auto" and k.trigger_seq is not None and k.trigger_seq > seq:
            v.fail(f"triggerSeq {k.trigger_seq} comes after beforeKillSeq {seq}")
        listed = {t.run: t for t in k.targets}
        flying = {a.run: a for a in acc.in_flight_at(seq)}
        for run in sorted(set(flying) - set(listed)):
            v.fail(f"kill.json omits run {run_text(run)}, in flight at seq {seq}")
        extra = sorted(set(listed) - set(flying))
        if extra:
            # One reason, whatever their number: the report's size follows the ledger, not kill.json.
            early = [
                (run, r.seq)
                for run in extra[:SHOWN]
                if run in acc.runs
                for r in acc.runs[run].results[:1]
                if r.seq <= seq
            ]
            names = ", ".join(extra[:SHOWN]) + (f" and {len(extra) - SHOWN} more" if len(extra) > SHOWN else "")
            why = "".join(f"; {run} had its result at seq {rseq}, before the kill" for run, rseq in early)
            v.fail(f"kill.json lists {plural(len(extra), 'run')} not in flight at seq {seq} ({names}){why}")
        for run in sorted(set(listed) & set(flying)):
            wrong = _target_disagrees(listed[run], flying[run])
            if wrong:
                v.fail(f"kill.json's target {run} disagrees with the ledger on {', '.join(wrong)}")
    runs = ", ".join(t.run for t in ev.targets) or "no run"
    stage = f"; {WINDOW_OPEN}" if ev.may_continue else ""
    return v.check(
        f"complete; targets ({runs}) are the runs in flight at seq {seq}; "
        f"ledger-at-kill.json is the ledger to that seq{stage}"
    )


def _target_disagrees(t: KillTarget, acct: RunAccount) -> list[str]:
    plan = acct.plan
    facts = {
        "cell": (t.cell, acct.cell),
        "round": (t.round, acct.round),
        "planSeq": (t.plan_seq, plan.seq if plan else None),
        # A run in flight has a start.
        "startSeq": (t.start_seq, acct.starts[0].seq),
        "container": (t.container, acct.starts[0].get("container")),
    }
    return [name for name, (claimed, known) in facts.items() if not same_json(claimed, known)]


def kill_checks(
    ev: KillEvidence, acc: Accounts, study: StudyFacts, ledger: LedgerFacts, index: PlanIndex | None = None
) -> list[Check]:
    """Every check of one kill: ``killDelivered``, ``killEvidence``, then three per target."""
    checks = [kill_delivered(ev), kill_evidence(ev, acc, ledger)]
    if ev.kill is not None and ev.targets:
        seq = ev.kill.before_kill_seq
        plans = (index or PlanIndex(acc)).after(seq) if seq is not None else None
        for t in ev.targets:
            checks += target_checks(ev, t, acc, study, ledger, plans)
    return checks


def judge_targets(kills: list[KillEvidence], acc: Accounts, ledger: LedgerFacts) -> None:
    """Each kill's targets, up to :data:`TARGETS_PER_KILL` a kill and :data:`TARGETS_IN_ALL` in all; the rest
    are counted (``killEvidence`` fails on them)."""
    left = TARGETS_IN_ALL
    for ev in kills:
        targets = judged_targets(ev, acc, ledger, min(TARGETS_PER_KILL, left) + 1)
        judged = min(len(targets), TARGETS_PER_KILL, left)
        ev.targets, ev.unjudged = targets[:judged], len(targets) > judged
        left -= judged


def judged_targets(ev: KillEvidence, acc: Accounts, ledger: LedgerFacts, most: int | None = None) -> list[KillTarget]:
    """The runs whose story the kill's checks tell: those in flight at ``beforeKillSeq`` by the ledger
    (the first ``most``).

    kill.json's list is compared with them (``killEvidence``) but does not
    add to them: a run it lists that was not in flight gets no checks of its
    own.  Without a ledger or a seq to go by, the first of the listed.
    """
    k = ev.kill
    if k is None:
        return []
    seq = k.before_kill_seq
    if seq is None or ledger.problem is not None:
        return k.targets[: min(LISTED_KEPT, most if most is not None else LISTED_KEPT)]
    listed = {t.run: t for t in k.targets}
    targets: list[KillTarget] = []
    for a in acc.in_flight_at(seq):
        if most is not None and len(targets) >= most:
            break
        if a.run in listed:
            targets.append(listed[a.run])
        elif valid_id(a.run):
            start = a.starts[0]
            targets.append(
                KillTarget(a.run, a.cell, a.round, a.plan.seq if a.plan else None, start.seq, start.get("container"))
            )
    return targets
