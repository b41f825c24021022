"""The kill protocol: freeze, capture, SIGKILL, confirm, capture, resume, settle, record.

A kill is armed ("at the first diagnosis start") or manual ("now").  At the
trigger the controller's process group is stopped with SIGSTOP first: that
takes microseconds, and from then on nothing the study does can race the
evidence (it cannot write the target's result while the containers are
inspected).  Then the container snapshot is taken, SIGKILL is sent and
``kill.json`` written, the ledger at the kill is confirmed to have no result
for the targets, the container is captured again after the kill and before the
resume, the study is resumed, and when every target has its result (or the
resumed controller ends) the runtime's lifecycle events for the window are
saved.  Everything lands in ``OUT/kills/<n>/``, one file at a time, written
whole.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.clock import rfc3339_ms, rfc3339_ns
from engine.evidence import write_json, write_text
from engine.ledger import Record, read_ledger

if TYPE_CHECKING:
    from engine.session import StudySession


@dataclass
class Target:
    run: str
    cell: Any
    round: Any
    plan_seq: int | None
    start_seq: int
    container: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "cell": self.cell,
            "round": self.round,
            "planSeq": self.plan_seq,
            "startSeq": self.start_seq,
            "container": self.container,
        }


@dataclass
class KillPlan:
    """A kill struck: the controller is frozen and SIGKILLed; its evidence is still to write."""

    number: int
    trigger: str  # "auto" or "manual"
    trigger_record: Record | None
    trigger_seen: float  # time.time() when the trigger record was read
    frozen_at: float  # time.time() right after SIGSTOP
    since: float  # the runtime's clock at the freeze: the event window opens here
    targets: list[Target]
    before: dict[str, Any]  # target container inspects, taken while frozen
    kill_sent: float  # time.time() just before SIGKILL
    kill_returned: float  # time.time() once the signal call returned
    signalled: bool
    before_kill_seq: int
    auto_resume: bool = True


def next_kill_number(out: Path) -> int:
    root = out / "kills"
    if not root.is_dir():
        return 1
    numbers = [int(p.name) for p in root.iterdir() if p.name.isdigit()]
    return max(numbers, default=0) + 1


def targets_now(session: "StudySession", only: str | None = None) -> list[Target]:
    """Runs started and without a result (``only``: just that run)."""
    out = []
    for acct in session.accounts.runs.values():
        if only is not None and acct.run != only:
            continue
        if acct.in_flight:
            out.append(
                Target(
                    acct.run,
                    acct.cell,
                    acct.round,
                    acct.plan.seq if acct.plan else None,
                    acct.starts[-1].seq,
                    acct.container,
                )
            )
    return out


async def execute(session: "StudySession", plan: KillPlan) -> None:
    """Write the evidence of a kill already struck, resume, wait for the targets, save the window."""
    folder = session.spec.out / "kills" / str(plan.number)
    folder.mkdir(parents=True, exist_ok=False)
    runtime = session.runtime
    controller = session.controller
    assert controller is not None
    names = [t.container for t in plan.targets if t.container]
    write_json(
        folder / "kill.json",
        {
            "trigger": plan.trigger,
            "at": rfc3339_ms(plan.kill_sent),
            "pid": controller.pid,
            "beforeKillSeq": plan.before_kill_seq,
            "targets": [t.as_json() for t in plan.targets],
            "triggerSeq": plan.trigger_record.seq if plan.trigger_record else None,
            "triggerAt": plan.trigger_record.at if plan.trigger_record else None,
            "triggerSeenAt": rfc3339_ms(plan.trigger_seen),
            "frozenAt": rfc3339_ms(plan.frozen_at),
            "killSentAt": rfc3339_ms(plan.kill_sent),
            "triggerSeenEpoch": plan.trigger_seen,
            "frozenEpoch": plan.frozen_at,
            "killSentEpoch": plan.kill_sent,
            "killReturnedEpoch": plan.kill_returned,
            "signalled": plan.signalled,
            "since": rfc3339_ns(int(plan.since * 1e9)),
        },
    )
    write_json(folder / "container-before.json", plan.before)
    await controller.wait()
    session.drain()

    # The ledger exactly as it stood at the kill: the bytes read so far.
    at_kill, _ = await asyncio.to_thread(read_ledger, session.spec.ledger)
    write_json(folder / "ledger-at-kill.json", [r.as_json() for r in at_kill])
    settled_early = [t.run for t in plan.targets if any(
        r.kind == "runResult" and r.get("run") == t.run for r in at_kill)]
    if settled_early:
        session.kill_step(plan.number, "late", f"result already in the ledger at the kill: {settled_early}")

    write_json(folder / "container-after-kill.json", await asyncio.to_thread(session.inspect_many, names))
    await session.heavy_snapshot("after-kill")
    session.kill_step(plan.number, "captured", "container after the kill, machine snapshot")

    if not plan.auto_resume:
        session.enter_killed(plan.number)
        if not await session.resume_requested():
            session.kill_step(plan.number, "left", "closed before a resume; resume later with --resume")
            return
    write_json(folder / "container-before-resume.json", await asyncio.to_thread(session.inspect_many, names))
    await session.relaunch(resume=True)
    session.kill_step(plan.number, "resumed", f"pid {session.controller.pid if session.controller else '?'}")

    results = await session.wait_for_results([t.run for t in plan.targets])
    until = runtime.now()
    events = await asyncio.to_thread(runtime.events, plan.since, until)
    write_text(folder / "container-events.jsonl", "".join(_line(e) for e in events))
    write_json(
        folder / "container-events-window.json",
        {
            "since": rfc3339_ns(int(plan.since * 1e9)),
            "until": rfc3339_ns(int(until * 1e9)),
            "sinceEpoch": plan.since,
            "untilEpoch": until,
            "targets": {run: {"resultSeq": seq} for run, seq in results.items()},
        },
    )
    missing = [run for run, seq in results.items() if seq is None]
    session.kill_step(
        plan.number,
        "settled" if not missing else "unsettled",
        "every target has its result" if not missing else f"no result for {missing}",
    )


def _line(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False) + "\n"
