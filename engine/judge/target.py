"""The checks of one target of a kill: ``sameContainerNoRerun``, ``chargedOnce``, ``resultSettledAndFinished``."""

from __future__ import annotations

from typing import Any

import orjson

from studymon.engine.accounts import Accounts, RunAccount, round_key
from studymon.engine.clock import parse_rfc3339
from studymon.engine.contract import experiment_keys, is_int, plural, round_text, valid_id
from studymon.engine.folder import KillFolder
from studymon.engine.judge.facts import KillEvidence, LedgerFacts, StudyFacts, Target
from studymon.engine.judge.text import name_text, ns_text, run_text, short_id
from studymon.engine.judge.verdict import SHOWN, WINDOW_OPEN, Check, Verdict
from studymon.engine.ledger import Record
from studymon.engine.safefile import type_name

# --- per target ------------------------------------------------------------------------------


def target_checks(
    ev: KillEvidence,
    t: Target,
    acc: Accounts,
    study: StudyFacts,
    ledger: LedgerFacts,
    plans: dict[tuple[Any, ...], list[RunAccount]] | None = None,
) -> list[Check]:
    scope = f"{ev.scope} · {t.run}"
    acct = acc.runs.get(t.run)
    return [
        same_container_no_rerun(ev, t, acct, study, ledger, scope),
        charged_once(ev, t, acct, acc, ledger, scope, plans),
        result_settled_and_finished(ev, t, acct, acc, ledger, scope),
    ]


def snapshot_entry(ev: KillEvidence, file: str, name: str) -> tuple[dict[str, Any] | None, str | None]:
    """The target's inspect in one snapshot file, or why there is none."""
    problem = ev.problem(file)
    if problem is not None:
        return None, problem
    entry = ev.snapshots[file].get(name)  # a file without a problem was read
    if entry is None:
        return None, f"{file} has no {name}"
    if not isinstance(entry, dict):
        return None, f"{file}: the entry for {name} is {type_name(entry)}, not an object"
    return entry, None


def same_container_no_rerun(
    ev: KillEvidence, t: Target, acct: RunAccount | None, study: StudyFacts, ledger: LedgerFacts, scope: str
) -> Check:
    v = Verdict("sameContainerNoRerun", scope)
    name = study.container(t.run)
    if name is None:
        v.fail(f"the container names cannot be checked: {study.problem}")
        return v.check(lambda: "")  # never shown: it failed
    if t.container != name:
        v.fail(f"the target's container in kill.json is not {name}")
    if ledger.problem is not None:
        v.fail(f"the ledger cannot be judged: {ledger.problem}")

    # One container throughout: the same Id and StartedAt in every snapshot, running at the kill
    # (or exited just before it, with its result still to be written).
    ids: dict[str, Any] = {}
    started: dict[str, Any] = {}
    finished: dict[str, Any] = {}
    exited_at_kill = False
    exited_code: Any = None
    window_since = ev.window.since_ns if ev.window is not None else ev.kill.since_ns if ev.kill else None
    for file in KillFolder.SNAPSHOTS:
        if file == KillFolder.BEFORE_RESUME and ev.window_open and file in ev.missing:
            continue  # not resumed yet
        entry, why = snapshot_entry(ev, file, name)
        if entry is None:
            v.fail(why or file)
            continue
        state = entry.get("State")
        state = state if isinstance(state, dict) else {}
        if not (isinstance(entry.get("Id"), str) and entry.get("Id")):
            v.fail(f"{file}: {name} has no Id")
        if not (isinstance(state.get("StartedAt"), str) and state.get("StartedAt")):
            v.fail(f"{file}: {name} has no StartedAt")
        ids[file] = entry.get("Id")
        started[file] = state.get("StartedAt")
        if file == KillFolder.BEFORE and state.get("Running") is not True and state.get("Status") == "exited":
            # The run ended just before the kill and its result was not written yet: its
            # die lies before the window, and the snapshots must keep that one exit.
            exited_code = state.get("ExitCode")
            exited_at_kill = True
            finished[file] = state.get("FinishedAt")
            continue
        if (
            file == KillFolder.AFTER
            and not exited_at_kill
            and state.get("Running") is False
            and state.get("Status") == "exited"
            and _finished_before(state, window_since)
        ):
            # The snapshot before the kill was read as the run ended (the runtime had not
            # yet written its exit): it finished before the window, so its die lies before
            # it too, as if the first snapshot had shown it exited.
            exited_code = state.get("ExitCode")
            exited_at_kill = True
            finished[file] = state.get("FinishedAt")
            continue
        if exited_at_kill and file != KillFolder.BEFORE:
            if state.get("Running") is not False or state.get("ExitCode") != exited_code:
                v.fail(f"{file}: {name} exited before the kill, and here it is not that same exited container")
            finished[file] = state.get("FinishedAt")
        elif file == KillFolder.BEFORE and state.get("Running") is not True:
            v.fail(f"{file}: {name} is not running")
        elif file == KillFolder.AFTER and state.get("Running") is not True and state.get("Status") != "exited":
            # The run may end on its own between SIGKILL and this snapshot: the same
            # container (Id, StartedAt) having exited is its one die, judged below.
            v.fail(f"{file}: {name} is neither running nor exited")
    if len({repr(i) for i in ids.values()}) > 1:
        v.fail(f"the Id of {name} changes across {', '.join(ids)}")
    if len({repr(s) for s in started.values()}) > 1:
        v.fail(f"the StartedAt of {name} changes across {', '.join(started)}")
    if len({repr(f) for f in finished.values()}) > 1:
        v.fail(f"the FinishedAt of {name} changes across {', '.join(finished)}")
    the_id = ids.get(KillFolder.BEFORE)

    # The window: when the target's result was seen.
    window = ev.window
    if KillFolder.WINDOW in ev.problems:
        v.fail(ev.problems[KillFolder.WINDOW])
    elif ev.window_open:
        v.unknown(WINDOW_OPEN)
    elif window is not None:
        entry = window.results.get(t.run)
        if entry is None:
            v.fail(f"{KillFolder.WINDOW} has no entry for {t.run}")
        elif entry["resultSeenNs"] is None:
            v.fail(f"{KillFolder.WINDOW} gives no time for {t.run}'s result")
        elif not window.since_ns <= entry["resultSeenNs"] <= window.until_ns:
            v.fail(f"{KillFolder.WINDOW}: {t.run}'s result was seen outside the window")

    # The lifecycle events.
    for file in (KillFolder.LIVE, KillFolder.READBACK):
        problem = ev.problem(file)
        if problem is not None and not (file == KillFolder.READBACK and ev.window_open and file in ev.missing):
            v.fail(problem)
    tally = ev.tally
    watch = None
    if tally is not None:
        watch = tally.watch(t.run)
        v.listed(tally.malformed, tally.malformed_count, "line that is not an event", "lines that are not events")
        v.listed(
            [
                f"{action} of {name_text(other)} at {ns_text(ns)} in the window, "
                "and its run was not waiting to start at the kill"
                for other, action, ns in tally.foreign
            ],
            tally.foreign_count,
            "container of the study made in the window",
            "containers of the study made in the window",
        )
        if tally.gaps:
            v.unknown(f"the live recording has {plural(tally.gaps, 'gap')}")
        for restart in tally.restarts_for(watch):
            v.explain(restart)
    else:
        v.unknown("the lifecycle events were not judged")  # never a pass without them
    if watch is not None:
        v.listed(
            [f"{action} of {name} at {ns_text(ns)} in its window" for action, ns in watch.forbidden],
            watch.forbidden_count,
            "such event",
            "such events",
        )
        dies = list(watch.dies.values())
        if exited_at_kill:
            if dies:
                v.fail(f"{name} exited before the kill, and a die of it comes in its window")
            results = acct.results if acct else []
            if len(results) == 1:
                code = results[0].get("exitCode")
                if not is_int(code) or not is_int(exited_code) or code != exited_code:
                    v.fail(f"{name} exited {exited_code!r} before the kill, runResult says {code!r}")
            elif not ev.window_open:
                v.fail(f"{plural(len(results), 'runResult')} to compare the exit code with")
        elif len(dies) > 1:
            v.fail(f"{'more than 2' if len(dies) > 2 else '2'} dies of {name} in its window")
        elif not dies:
            if ev.window_open:
                v.unknown(f"no die of {name} yet")
            else:
                v.fail(f"no die of {name} in its window")
        else:
            die_id, die_code = dies[0]
            if the_id is not None and die_id != the_id:
                v.fail(f"the die is of container {short_id(die_id)}, not of {short_id(the_id)}")
            results = acct.results if acct else []
            if len(results) == 1:
                code = results[0].get("exitCode")
                if not is_int(code):
                    v.fail(f"runResult's exitCode is {type_name(code)}, not an integer")
                elif die_code is None:
                    v.fail("the die has no exitCode")
                elif die_code != code:
                    v.fail(f"the die says exit {die_code}, runResult says {code}")
            elif not ev.window_open:
                v.fail(f"{plural(len(results), 'runResult')} to compare the die's exit code with")
    n_dies = len(watch.dies) if watch else 0
    return v.check(
        f"{name}: one Id ({short_id(the_id)}) and StartedAt in {len(ids)} snapshots, running at the kill; "
        f"no create/start/rename/kill/stop and {plural(n_dies, 'die')} in its window, exit as runResult; "
        "no other container of the study made in the window"
    )


def _finished_before(state: dict[str, Any], since_ns: int | None) -> bool:
    """Whether a snapshot's ``FinishedAt`` lies before the window's start."""
    text = state.get("FinishedAt")
    if since_ns is None or not isinstance(text, str):
        return False
    try:
        finished = parse_rfc3339(text)
    except (ValueError, OverflowError):
        return False
    return 0 < finished * 1e9 < since_ns


def _experiments(value: Any) -> Any:
    """A plan's experiments compared as a multiset, whatever they hold."""
    if isinstance(value, list):
        return tuple(sorted(orjson.dumps(x, option=orjson.OPT_SORT_KEYS) for x in value))
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def plans_after(acc: Accounts, seq: int) -> dict[tuple[Any, ...], list[RunAccount]]:
    """The runs that may start after ``seq``, by what they are (purpose, cell, round, experiments).

    Those planned after it, and those planned before it but started only
    after it (§1 has a resume start a run that was not started): a twin of a
    target among them does its work again.  Built once per kill, so that
    looking for a target's repeat costs the same whatever the number of
    targets.
    """
    out: dict[tuple[Any, ...], list[RunAccount]] = {}
    for a in acc.runs.values():
        if a.plan is None:
            continue
        started_after = bool(a.starts) and all(st.seq > seq for st in a.starts)
        if a.plan.seq > seq or started_after:
            out.setdefault(_plan_key(a.plan), []).append(a)
    return out


def charged_once(
    ev: KillEvidence,
    t: Target,
    acct: RunAccount | None,
    acc: Accounts,
    ledger: LedgerFacts,
    scope: str,
    plans: dict[tuple[Any, ...], list[RunAccount]] | None = None,
) -> Check:
    v = Verdict("chargedOnce", scope)
    if ledger.problem is not None:
        v.fail(f"the ledger cannot be judged: {ledger.problem}")
    charges = len(acct.charges) if acct else 0
    starts = len(acct.starts) if acct else 0
    if charges != 1 or starts != 1:
        v.fail(f"{plural(charges, 'charge')}, {starts} runStarted")
    seq = ev.kill.before_kill_seq if ev.kill else None
    plan = acct.plan if acct else None
    if seq is None:
        v.fail("kill.json has no beforeKillSeq: a repeat after the kill cannot be looked for")
    elif plan is None:
        v.fail(f"run {t.run} has no runPlanned")
    else:
        if plans is None:
            plans = plans_after(acc, seq)
        repeats = [a for a in plans.get(_plan_key(plan), []) if a is not acct]
        for a in repeats[:SHOWN]:
            when = "after the kill" if a.plan.seq > seq else "before the kill, started after it"  # type: ignore[union-attr]
            v.fail(
                f"run {run_text(a.run)} (planned at seq {a.plan.seq}, {when}) repeats it: "  # type: ignore[union-attr]
                "same purpose, cell, round and experiments"
            )
    return v.check(f"1 charge, 1 runStarted; no run planned after the kill repeats {t.run}")


def _canon(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _plan_key(plan: Record) -> tuple[Any, ...]:
    """What makes two plans the same run: purpose, cell, round and experiments (as JSON, so 1 is not 1.0)."""
    return (
        _canon(plan.get("purpose")),
        _canon(plan.get("object")),
        _canon(plan.get("round")),
        _experiments(plan.get("experiments")),
    )


def result_settled_and_finished(
    ev: KillEvidence, t: Target, acct: RunAccount | None, acc: Accounts, ledger: LedgerFacts, scope: str
) -> Check:
    v = Verdict("resultSettledAndFinished", scope)
    # While the window is open, what has not happened yet is unknown; what happened wrong fails.
    pending = v.unknown if ev.window_open else v.fail
    if ledger.problem is not None:
        v.fail(f"the ledger cannot be judged: {ledger.problem}")
    seq = ev.kill.before_kill_seq if ev.kill else None
    results = acct.results if acct else []
    result: Record | None = None
    if not results:
        pending(f"no runResult for {t.run}")
    elif len(results) > 1:
        v.fail(f"{len(results)} runResult for {t.run}")
    else:
        result = results[0]
        if seq is None:
            v.fail("kill.json has no beforeKillSeq to place the result after")
        elif result.seq <= seq:
            v.fail(f"the result (seq {result.seq}) is not after the kill (seq {seq})")
    if KillFolder.WINDOW in ev.problems:
        v.fail(ev.problems[KillFolder.WINDOW])
    elif ev.window_open:
        v.unknown(WINDOW_OPEN)
    elif ev.window is not None:
        entry = ev.window.results.get(t.run)
        closed_at = entry["resultSeq"] if entry else None
        if closed_at is None:
            v.fail(f"the window closed without {t.run}'s result")
        elif result is not None and result.seq > closed_at:
            v.fail(f"the result (seq {result.seq}) comes after the window closed (at result seq {closed_at})")

    if acct is not None and acct.plan is not None and acct.purpose == "diagnosis":
        _settled(v, pending, t.run, acct, acct.plan, result, acc)
    if not acc.halted_at_export():
        pending("the study did not end halted at export")
    rnd = round_text(acct.round) if acct else "?"
    where = f"seq {result.seq}" if result else "?"
    settled = "; settled, then proposal " + rnd + " opened" if acct and acct.purpose == "diagnosis" else ""
    return v.check(f"one result at {where}, after the kill and inside the window{settled}; halted at export")


def _settled(
    v: Verdict, pending: Any, run: str, acct: RunAccount, plan: Record, result: Record | None, acc: Accounts
) -> None:
    """The diagnosis part: one settlement of the round, naming the run, after its result, complete."""
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
