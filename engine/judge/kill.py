"""The checks of one kill: ``killDelivered`` and ``killEvidence``, then the checks of each target."""

from __future__ import annotations

from typing import Any

from studymon.engine.accounts import Accounts, RunAccount
from studymon.engine.contract import is_int
from studymon.engine.folder import KillFolder
from studymon.engine.judge.facts import KillEvidence, KillFile, LedgerFacts, StudyFacts, Target
from studymon.engine.judge.target import plans_after, target_checks
from studymon.engine.judge.text import SIGNAL, run_text
from studymon.engine.judge.verdict import SIGKILL, WINDOW_OPEN, Check, Verdict


def kill_delivered(ev: KillEvidence) -> Check:
    v = Verdict("killDelivered", ev.scope)
    k = ev.kill
    if k is None:
        v.fail(ev.problem(KillFolder.KILL) or f"{KillFolder.KILL}: not read")
    else:
        _delivery(v, ev, k)
    return v.check(lambda: f"SIGKILL sent to pid {k.pid}; its keeper recorded the end by SIGKILL")  # type: ignore[union-attr]


def _delivery(v: Verdict, ev: KillEvidence, k: KillFile) -> None:
    for reason in k.delivery:
        v.fail(reason)
    if k.pid is not None:
        end = ev.keeper_end
        if ev.launches_problem is not None:
            v.fail(ev.launches_problem)
        elif end is None:
            v.fail(f"launches.jsonl has no end line for pid {k.pid}")
        elif end.get("signal") != SIGKILL:
            signal, code = end.get("signal"), end.get("code")
            if isinstance(signal, str) and SIGNAL.fullmatch(signal):
                how = f"says {signal}"
            elif is_int(code):
                how = f"says exit {code}"
            else:
                how = "has no status"
            v.fail(f"the keeper's end line for pid {k.pid} {how}, not SIGKILL")


def kill_evidence(ev: KillEvidence, acc: Accounts, ledger: LedgerFacts) -> Check:
    v = Verdict("killEvidence", ev.scope)
    for reason in ev.incomplete():
        v.fail(reason)
    for n in ev.missing_kills:
        v.fail(f"kills/{n}/ is missing: kills are numbered from 1")
    k = ev.kill
    if k is None:
        return v.check(lambda: "")  # never shown: kill.json is missing or unusable, a reason above
    for reason in k.problems:
        v.fail(reason)
    seq = k.before_kill_seq
    if ev.at_kill is not None:
        v.fail(ev.at_kill)
    # The window opens where kill.json says the kill's recording did (the same moment in both files,
    # to the microsecond): a later start would hide what happened just after the kill.
    if ev.window is not None and k.since_ns is not None and abs(ev.window.since_ns - k.since_ns) > 1000:
        v.fail(f"{KillFolder.WINDOW} starts at another time than kill.json's since")
    if ledger.problem is not None:
        v.fail(f"the ledger cannot be judged: {ledger.problem}")
    elif seq is not None:
        if seq > acc.last_seq:
            v.fail(f"beforeKillSeq {seq} is past the ledger's end (seq {acc.last_seq})")
        if k.trigger == "auto" and k.trigger_seq is not None and k.trigger_seq > seq:
            v.fail(f"triggerSeq {k.trigger_seq} comes after beforeKillSeq {seq}")
        listed = {t.run: t for t in k.targets}
        flying = {a.run: a for a in acc.in_flight_at(seq)}
        for run in sorted(set(flying) - set(listed)):
            v.fail(f"kill.json omits run {run_text(run)}, in flight at seq {seq}")
        for run in sorted(set(listed) - set(flying)):
            acct = acc.runs.get(run)
            early = [r.seq for r in acct.results if r.seq <= seq] if acct else []
            if early:
                v.fail(f"target {run} had its result at seq {early[0]}, before the kill (seq {seq})")
            else:
                v.fail(f"kill.json lists run {run}, not in flight at seq {seq}")
        for run in sorted(set(listed) & set(flying)):
            wrong = _target_disagrees(listed[run], flying[run])
            if wrong:
                v.fail(f"kill.json's target {run} disagrees with the ledger on {', '.join(wrong)}")
    runs = ", ".join(t.run for t in k.targets) or "no run"
    stage = f"; {WINDOW_OPEN}" if ev.window_open else ""
    return v.check(
        f"complete; targets ({runs}) are the runs in flight at seq {seq}; "
        f"ledger-at-kill.json is the ledger to that seq{stage}"
    )


def _target_disagrees(t: Target, acct: RunAccount) -> list[str]:
    plan = acct.plan
    facts = {
        "cell": (t.cell, acct.cell),
        "round": (t.round, acct.round),
        "planSeq": (t.plan_seq, plan.seq if plan else None),
        # A run in flight has a start.
        "startSeq": (t.start_seq, acct.starts[0].seq),
        "container": (t.container, acct.starts[0].get("container")),
    }
    return [name for name, (claimed, known) in facts.items() if not _same(claimed, known)]


def _same(a: Any, b: Any) -> bool:
    """JSON equality that tells 1 from 1.0 from True."""
    return type(a) is type(b) and a == b


def kill_checks(ev: KillEvidence, acc: Accounts, study: StudyFacts, ledger: LedgerFacts) -> list[Check]:
    """Every check of one kill: ``killDelivered``, ``killEvidence``, then three per target."""
    checks = [kill_delivered(ev), kill_evidence(ev, acc, ledger)]
    if ev.kill is not None and ev.kill.targets:
        seq = ev.kill.before_kill_seq
        plans = plans_after(acc, seq) if seq is not None else None
        for t in ev.kill.targets:
            checks += target_checks(ev, t, acc, study, ledger, plans)
    return checks
