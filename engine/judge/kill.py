"""The checks of one kill: ``killDelivered`` and ``killEvidence``, then the checks of each target."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from studymon.engine.contract.accounts import Accounts, RunAccount, Settlement, round_key, story_end
from studymon.engine.contract.automata import Proof, Where, proof
from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from studymon.engine.contract.ledger import Record
from studymon.engine.contract.rules import plural, valid_id
from studymon.engine.contract.targets import CHARGED, IN_FLIGHT, UNRECORDED, UNSETTLED
from studymon.engine.evidence.records import ENDS, SIGKILL, KillRecord, KillTarget, same_json, started
from studymon.engine.judge.facts import KillEvidence, LedgerFacts, StudyFacts, ledger_line
from studymon.engine.judge.target import PlanIndex, target_checks
from studymon.engine.judge.text import name_text, ns_text, run_text
from studymon.engine.judge.timeline import ORDER_ROUNDING
from studymon.engine.judge.verdict import SHOWN, WINDOW_OPEN, Check, Verdict

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
        v.fail(
            ev.problem(KillFolder.KILL) or f"{KillFolder.KILL}: not read",
            ev.missing_proof(KillFolder.KILL, "each kill folder holds its kill's kill.json (§6.8)"),
        )
    else:
        _delivery(v, ev, k)
    return v.check(lambda: f"SIGKILL sent to pid {k.pid}; its keeper recorded the end by SIGKILL")  # type: ignore[union-attr]


def _delivery(v: Verdict, ev: KillEvidence, k: KillRecord) -> None:
    killed = ev.at(KillFolder.KILL)
    for reason in k.delivery:
        v.fail(
            reason,
            proof(killed, reason.removeprefix("kill.json "), "kill.json says SIGKILL was sent, to a controller's pid"),
        )
    if k.pid is not None:
        sent = f"SIGKILL sent to pid {k.pid}"
        launches = Where(EvidenceFolder.LAUNCHES, 0)
        end = ev.keeper_end
        end_at = ev.keeper_end_where or launches
        if ev.launches_problem is not None:
            v.fail(
                ev.launches_problem,
                proof(
                    launches,
                    ev.launches_problem,
                    "the killed controller's end is read from launches.jsonl, whole (§6.9)",
                    (killed, sent),
                ),
            )
        elif ev.unstarted is not None or ev.ended_before is not None:
            met = ev.unstarted or ev.ended_before
            v.fail(met, proof(killed, sent, "a kill meets a controller that runs", (launches, met)))  # type: ignore[arg-type]
        elif end is None:
            # What has not happened yet is ?, while the study can still be resumed (§6.6): a keeper may be slow.
            (v.fail if ev.finished else v.unknown)(
                f"launches.jsonl has no end line for pid {k.pid} at or after the kill",
                proof(
                    killed,
                    sent,
                    "the keeper of a killed controller records its end (§6.3)",
                    (launches, f"no end line for pid {k.pid} at or after the kill"),
                ),
            )
        elif end.signal != SIGKILL:
            if end.signal:
                how = f"says {end.signal}"
            else:
                how = f"says exit {end.code}" if end.code is not None else "has lost its status"
            v.fail(
                f"the keeper's end line for pid {k.pid} {how}, not SIGKILL",
                proof(
                    killed,
                    sent,
                    "a controller killed by SIGKILL ends by it, as its keeper records (§6.3)",
                    (end_at, f"pid {k.pid}'s end {how}"),
                ),
            )
        if ev.resumed_over:
            v.fail(
                f"a controller was started after the kill while pid {k.pid} had not ended",
                proof(
                    killed,
                    sent,
                    "a console resumes a study only once its killed controller has ended (§6.3)",
                    (launches, f"a controller starts after the kill, before pid {k.pid} ends"),
                ),
            )
        if ev.end_claimed_by is not None:
            v.fail(
                f"pid {k.pid}'s end is kill {ev.end_claimed_by}'s: a controller is killed once, by one kill",
                proof(
                    killed,
                    sent,
                    "a controller is killed once, by one kill",
                    (Where(KillFolder(Path(), ev.end_claimed_by).rel(KillFolder.KILL), 0), f"{sent}, earlier"),
                    (end_at, f"pid {k.pid}'s one end"),
                ),
            )


def kill_evidence(ev: KillEvidence, acc: Accounts, ledger: LedgerFacts, study: StudyFacts | None = None) -> Check:
    v = Verdict("killEvidence", ev.scope)
    study_prefix = study.stem if study is not None else None
    if ev.unjudged and ev.kill is not None:  # said first: the kill's judgement is not whole
        v.fail(
            f"more runs in flight at seq {ev.kill.before_kill_seq} than the judge follows one by one (the first "
            f"{len(ev.targets)} are judged; {TARGETS_PER_KILL} a kill, {TARGETS_IN_ALL} in all): more than a study has",
            proof(
                ev.at(KillFolder.KILL),
                f"beforeKillSeq {ev.kill.before_kill_seq}",
                f"a study leaves a few runs in flight at a kill, not more than {TARGETS_PER_KILL}",
                (ledger_line(None), f"more than {len(ev.targets)} runs unfinished at seq {ev.kill.before_kill_seq}"),
            ),
        )
    proven = ev.incomplete_proven()
    incomplete = [reason for reason, _ in proven]
    for reason, because in proven:
        v.fail(reason, because)
    later = ev.to_come()
    if later:
        v.unknown(f"missing: {', '.join(later)}; `studymon run --resume` writes it before it resumes")
    for n in ev.missing_kills:
        v.fail(
            f"kills/{n}/ is missing: kills are numbered from 1",
            proof(
                Where(KillFolder(Path(), n).rel(""), 0),
                "missing",
                "kill folders are numbered from 1, one for each kill",
                (ev.at(KillFolder.KILL), f"kill {ev.number}"),
            ),
        )
    k = ev.kill
    if k is None:
        return v.check(lambda: "")  # never shown: kill.json is missing or unusable, a reason above
    for reason in k.problems:
        if reason not in incomplete:  # kill.json without its since is said once
            v.fail(
                reason,
                proof(
                    ev.at(KillFolder.KILL),
                    reason.removeprefix("kill.json "),
                    "kill.json holds the kill as the console made it, each field of its type (§6.8)",
                ),
            )
    if k.pid is None:
        # The pid is held twice (§6.9), whatever the trigger: one kill.json does not give is held to nothing.
        said = next((r for r in k.delivery if r.startswith("kill.json pid ")), "kill.json gives no pid")
        v.fail(
            f"{said}: it cannot be held to a controller launches.jsonl started",
            proof(
                ev.at(KillFolder.KILL),
                said.removeprefix("kill.json "),
                "kill.json's pid is a controller's, which launches.jsonl started before the kill (§6.9)",
            ),
        )
    if ev.unstarted is not None:
        # Where launches.jsonl is not read whole, the start may be the line lost: the pid is still not held by its
        # other copy (§6.9), and the kill's evidence cannot be shown to be of a controller.
        _not_in_launches(
            v,
            ev,
            ev.unstarted + (f" ({ev.launches_problem})" if ev.launches_problem is not None else ""),
            f"pid {k.pid}",
            "kill.json's pid is a controller's, which launches.jsonl started before the kill (§6.9)",
            f"no start of pid {k.pid} by then",
        )
    # An end the console did not make is judged as a kill: the end it stands for is in launches.jsonl (§6.9).
    # The console judges an end it read from launches.jsonl: that end came by the kill's at (one only after it, by
    # more than the times' rounding, is not the end it saw).
    end = ev.keeper_end
    late = end is not None and (k.at_epoch is None or end.at > k.at_epoch + ORDER_ROUNDING)
    ends_unseen = ev.launches_problem is None and ev.ended_before is None and (end is None or late)
    if k.trigger in ENDS and k.pid is not None and ends_unseen:
        _not_in_launches(
            v,
            ev,
            f"kill.json says pid {k.pid} ended ({k.trigger}), but launches.jsonl has no end of that pid by then",
            f"pid {k.pid} ended ({k.trigger})",
            "an end the console did not make stands for an end in launches.jsonl (§6.9)",
            f"no end of pid {k.pid} by then",
        )
    seq = k.before_kill_seq
    if ev.at_kill is not None and ev.at_kill != ev.problems.get(KillFolder.AT_KILL):  # an unreadable one is said once
        lets = [(ev.at(KillFolder.AT_KILL), ev.at_kill.removeprefix(f"{KillFolder.AT_KILL}: "))]
        if ev.at_kill_line:
            lets.append((Where(EvidenceFolder.LEDGER, ev.at_kill_line), "the record as the ledger holds it"))
        else:
            lets.append((ev.at(KillFolder.KILL), f"beforeKillSeq {seq}"))
        v.fail(
            ev.at_kill,
            Proof(tuple(lets), "ledger-at-kill.json is the ledger as it stood at the kill, to beforeKillSeq"),
        )
    # The window opens where kill.json says the kill's recording did (the same moment in both files,
    # to the microsecond): a later start would hide what happened just after the kill.
    if ev.window is not None and k.since_ns is not None and abs(ev.window.since_ns - k.since_ns) > 1000:
        v.fail(
            f"{KillFolder.WINDOW} starts at another time than kill.json's since",
            proof(
                ev.at(KillFolder.WINDOW),
                f"the window opens at {ns_text(ev.window.since_ns)}",
                "the window opens where the kill's recording began, to the microsecond",
                (ev.at(KillFolder.KILL), f"the recording began at {ns_text(k.since_ns)}"),
            ),
        )
    if ev.timeline_problem is not None:
        v.fail(
            ev.timeline_problem,
            proof(
                Where(EvidenceFolder.TIMELINE, 0),
                ev.timeline_problem,
                "the kill's checks read from timeline.jsonl when each record after it was seen (§6.9)",
            ),
        )
    targets = {t.run for t in ev.targets}
    # A record of no target that no console saw is not judged (a console may have died); one seen
    # before any controller after the kill started was written by something that outlived it.
    # Those of a target's own run kinds are its checks' (chargedOnce, resultSettledAndFinished); any other
    # record, whatever run it names, is this check's.
    strays = [
        (why, because)
        for run, kind, why, never, because in ev.unmanned
        if (run not in targets or kind not in TARGET_KINDS) and not never
    ]
    if strays:
        more = ev.unmanned_count - len(ev.unmanned)
        v.fail(strays[0][0] + (f" (and {len(strays) - 1 + more} more such records)" if len(strays) > 1 or more else ""))
        v.proven(because for _, because in strays if because is not None)
    if ev.window is not None:
        for note in ev.window.notes:
            v.fail(
                note,
                proof(
                    ev.at(KillFolder.WINDOW),
                    note.removeprefix(f"{KillFolder.WINDOW}: "),
                    "the window file agrees with itself and with timeline.jsonl (§6.9)",
                ),
            )
        judged = {t.run for t in ev.targets}
        entries = set(ev.window.results)
        if entries != judged:
            v.fail(
                f"{KillFolder.WINDOW}'s targets are not the kill's: {plural(len(entries - judged), 'entry')} "
                f"of no target, {plural(len(judged - entries), 'target')} without one",
                proof(
                    ev.at(KillFolder.WINDOW),
                    f"{plural(len(entries), 'entry')}, {plural(len(entries - judged), 'entry')} of no target",
                    "the window holds one entry for each run the kill left unfinished, and no other",
                    (ev.at(KillFolder.KILL), f"{plural(len(judged), 'target')}, {len(judged - entries)} without one"),
                ),
            )
    if ledger.problem is not None:
        ledger.say(v)
    elif seq is not None:
        killed = ev.at(KillFolder.KILL)
        if seq > acc.last_seq:
            v.fail(
                f"beforeKillSeq {seq} is past the ledger's end (seq {acc.last_seq})",
                proof(
                    killed,
                    f"beforeKillSeq {seq}",
                    "a kill is made within the ledger as it stood",
                    (ledger_line(None), f"its last record is seq {acc.last_seq}"),
                ),
            )
        if k.trigger == "auto" and k.trigger_seq is not None and k.trigger_seq > seq:
            v.fail(
                f"triggerSeq {k.trigger_seq} comes after beforeKillSeq {seq}",
                proof(
                    killed,
                    f"triggerSeq {k.trigger_seq}, beforeKillSeq {seq}",
                    "an automatic kill is made once the record that triggers it was written, not before",
                ),
            )
        listed = {t.run: t for t in k.targets}
        left = left_at(acc, seq, ev.snapshots.get(KillFolder.BEFORE, {}), study_prefix, ev.cut_line)
        if ev.window is not None:
            _story_ends(v, ev, acc, left)
        for run in sorted(set(left) - set(listed)):
            v.fail(
                f"kill.json omits run {run_text(run)}, {CLASS_TEXT[left[run].kind]} at seq {seq}",
                proof(
                    killed,
                    f"its targets at beforeKillSeq {seq} omit run {run_text(run)}",
                    "kill.json lists every run the kill left unfinished",
                    *_left(ev, acc, left[run], seq),
                ),
            )
        extra = sorted(set(listed) - set(left))
        if extra:
            # One reason, whatever their number: the report's size follows the ledger, not kill.json.
            early = [
                (run, r) for run in extra[:SHOWN] if run in acc.runs for r in acc.runs[run].results[:1] if r.seq <= seq
            ]
            names = ", ".join(extra[:SHOWN]) + (f" and {len(extra) - SHOWN} more" if len(extra) > SHOWN else "")
            why = "".join(f"; {run} had its result at seq {r.seq}, before the kill" for run, r in early)
            v.fail(
                f"kill.json lists {plural(len(extra), 'run')} the kill did not leave unfinished at seq {seq} "
                f"({names}){why}",
                proof(
                    killed,
                    f"its targets at beforeKillSeq {seq} list {names}",
                    "kill.json lists only the runs the kill left unfinished",
                    *((ledger_line(r), f"the runResult of {run} (seq {r.seq})") for run, r in early),
                ),
            )
        for run in sorted(set(listed) & set(left)):
            wrong = _target_disagrees(listed[run], left[run])
            if wrong:
                v.fail(
                    f"kill.json's target {run} disagrees with the ledger on {', '.join(wrong)}",
                    proof(
                        killed,
                        f"its target {run} gives {', '.join(wrong)}",
                        "kill.json's targets are as the ledger holds them at the kill",
                        *_left(ev, acc, left[run], seq),
                    ),
                )
    runs = ", ".join(t.run if t.kind == IN_FLIGHT else f"{t.run} {CLASS_TEXT[t.kind]}" for t in ev.targets)
    what = "the runs in flight" if all(t.kind == IN_FLIGHT for t in ev.targets) else "what the kill left unfinished"
    stage = f"; {WINDOW_OPEN}" if ev.may_continue else ""
    return v.check(
        f"complete; targets ({runs or 'no run'}) are {what} at seq {seq}; "
        f"ledger-at-kill.json is the ledger to that seq{stage}"
    )


def _not_in_launches(v: Verdict, ev: KillEvidence, reason: str, says: str, then: str, missing: str) -> None:
    """kill.json says of its pid what launches.jsonl, the other copy of that fact, does not hold (§6.9)."""
    v.fail(reason, proof(ev.at(KillFolder.KILL), says, then, (Where(EvidenceFolder.LAUNCHES, 0), missing)))


def _story_ends(v: Verdict, ev: KillEvidence, acc: Accounts, left: dict[str, KillTarget]) -> None:
    """Each target's ``resultSeq`` in the window is the record the ledger holds as the end of its story (§6.9): its
    result, or an unsettled target's round's settlement.  The story is the one the ledger gives the run at the
    kill (``left``); a run kill.json lists and the ledger does not leave unfinished is said apart."""
    assert ev.window is not None
    for run, said_entry in list(ev.window.results.items())[:SHOWN]:
        said = said_entry.get("resultSeq")
        t = left.get(run)
        if said is None or t is None:
            continue  # the study finished without it (the target's own checks say what is lost), or no target
        ended = story_end(t.kind, t.run, t.round, acc)
        if said != ended:
            holds = f"seq {ended}" if ended is not None else "no such record"
            v.fail(
                f"{KillFolder.WINDOW}: {run_text(t.run)}'s resultSeq {said} is not the record that ended its story "
                f"({holds})",
                proof(
                    ev.at(KillFolder.WINDOW),
                    f"{run_text(t.run)}'s resultSeq is {said}",
                    "the window names the record that ended each target's story, as the ledger holds it (§6.9)",
                    (ledger_line(None), f"the record that ended {run_text(t.run)}'s story: {holds}"),
                ),
            )


def _left(ev: KillEvidence, acc: Accounts, t: KillTarget, seq: int) -> list[tuple[Where, str]]:
    """The lines that say what the kill left ``t`` in: its record in the ledger by ``seq`` that decides it (its
    runStarted, its runResult, its charge, its plan), and for a container started without runStarted, the snapshot."""
    a = acc.runs.get(t.run)
    kinds = {IN_FLIGHT: "starts", UNSETTLED: "results", CHARGED: "charges", UNRECORDED: "plans"}
    records = getattr(a, kinds.get(t.kind, "plans")) if a is not None else []
    r = next((r for r in records if r.seq <= seq), None)
    said = f"{r.kind} of {run_text(t.run)} (seq {r.seq})" if r is not None else f"run {run_text(t.run)}"
    lets = [(ledger_line(r), f"{said}: {CLASS_TEXT[t.kind]} at seq {seq}")]
    if t.kind == UNRECORDED:
        lets.append((ev.at(KillFolder.BEFORE), f"{name_text(t.container)} started"))
    return lets


def _target_disagrees(t: KillTarget, known: KillTarget) -> list[str]:
    facts = {
        "class": (t.kind, known.kind),
        "cell": (t.cell, known.cell),
        "round": (t.round, known.round),
        "planSeq": (t.plan_seq, known.plan_seq),
        "startSeq": (t.start_seq, known.start_seq),
        "container": (t.container, known.container),
    }
    return [name for name, (claimed, fact) in facts.items() if not same_json(claimed, fact)]


CLASS_TEXT = {
    IN_FLIGHT: "in flight",
    UNRECORDED: "its container started but no runStarted",
    CHARGED: "charged but not started",
    UNSETTLED: "with its result but not settled",
}


def left_at(
    acc: Accounts, seq: int, before: dict[str, Any], stem: str | None, cut_line: int | None = None
) -> dict[str, KillTarget]:
    """What a kill at ``seq`` left unfinished, by run, as the ledger and the snapshot at the kill tell it (§7).

    Started without a result (in flight); a diagnosis run with its result but
    its round not settled; planned but not started, with its container
    started in ``container-before.json`` (unrecorded); charged but not
    started (charged).  In the accounts' order, which is the ledger's.
    A record stood at the kill when its seq is at most ``seq`` and its line is at most ``cut_line``
    (beforeKillSeq's, where known): a line after the kill's was written after it whatever seq it claims, and a
    seq after it names a later record wherever its line stands (either breaks ledgerWellFormed).
    """

    def stood(r: Record | Settlement) -> bool:
        return r.seq <= seq and (cut_line is None or r.line <= cut_line)

    out: dict[str, KillTarget] = {}
    for a in acc.runs.values():
        plan = a.plan
        plan_seq = plan.seq if plan is not None else None
        start = next((r for r in a.starts if stood(r)), None)
        if start is not None:
            if not any(stood(r) for r in a.results):
                kind = IN_FLIGHT
            elif a.purpose == "diagnosis" and _unsettled_at(acc, a, stood):
                kind = UNSETTLED
            else:
                continue
            out[a.run] = KillTarget(a.run, a.cell, a.round, plan_seq, start.seq, start.get("container"), kind)
        elif plan is not None and stood(plan) and not any(stood(r) for r in a.results):
            name = stem + a.run if stem is not None else None
            if name is not None and started(before.get(name)):
                out[a.run] = KillTarget(a.run, a.cell, a.round, plan_seq, None, name, UNRECORDED)
            elif any(stood(r) for r in a.charges):
                out[a.run] = KillTarget(a.run, a.cell, a.round, plan_seq, None, None, CHARGED)
    return out


def _unsettled_at(acc: Accounts, a: RunAccount, stood: Callable[[Record | Settlement], bool]) -> bool:
    settled = acc.settlements.get(round_key(a.round))
    return settled is None or not stood(settled)


def kill_checks(
    ev: KillEvidence, acc: Accounts, study: StudyFacts, ledger: LedgerFacts, index: PlanIndex | None = None
) -> list[Check]:
    """Every check of one kill: ``killDelivered`` (not for an end the console did not make), ``killEvidence``, then
    three per target."""
    made = ev.kill is None or ev.kill.trigger not in ENDS
    checks = ([kill_delivered(ev)] if made else []) + [kill_evidence(ev, acc, ledger, study)]
    seq = ev.kill.before_kill_seq if ev.kill is not None else None
    if seq is not None and ev.targets:  # without a seq there are no targets to tell of (judged_targets)
        plans = (index or PlanIndex(acc)).after(seq)
        for t in ev.targets:
            checks += target_checks(ev, t, acc, study, ledger, plans)
    return checks


def judge_targets(
    kills: list[KillEvidence], acc: Accounts, ledger: LedgerFacts, study: StudyFacts | None = None
) -> None:
    """Each kill's targets, up to :data:`TARGETS_PER_KILL` a kill and :data:`TARGETS_IN_ALL` in all; the rest
    are counted (``killEvidence`` fails on them)."""
    left = TARGETS_IN_ALL
    for ev in kills:
        stem = study.stem if study is not None else None
        targets = judged_targets(ev, acc, ledger, min(TARGETS_PER_KILL, left) + 1, stem)
        judged = min(len(targets), TARGETS_PER_KILL, left)
        ev.targets, ev.unjudged = targets[:judged], len(targets) > judged
        left -= judged


def judged_targets(
    ev: KillEvidence, acc: Accounts, ledger: LedgerFacts, most: int | None = None, stem: str | None = None
) -> list[KillTarget]:
    """The runs whose story the kill's checks tell: those the kill left unfinished at ``beforeKillSeq``
    (:func:`left_at`; the first ``most``).

    kill.json's list is compared with them (``killEvidence``) but does not
    add to them: a run it lists that was not in flight gets no checks of its
    own.  Without a ledger to go by, the first of the listed; without a seq,
    none: what a kill left unfinished is told from its moment, and
    ``killEvidence`` fails on a kill.json that does not give it.
    """
    k = ev.kill
    if k is None or k.before_kill_seq is None:
        return []
    seq = k.before_kill_seq
    if ledger.problem is not None:
        return k.targets[: min(LISTED_KEPT, most if most is not None else LISTED_KEPT)]
    listed = {t.run: t for t in k.targets}
    targets: list[KillTarget] = []
    for run, known in left_at(acc, seq, ev.snapshots.get(KillFolder.BEFORE, {}), stem, ev.cut_line).items():
        if most is not None and len(targets) >= most:
            break
        if run in listed and listed[run].kind == known.kind:
            targets.append(listed[run])
        elif valid_id(run):
            targets.append(known)
    return targets
