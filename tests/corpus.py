"""Evidence folders built by code: one sound killed study, and adversarial variants of it.

A :class:`Scenario` is what a study wrote to its ledger (entries in order,
``seq`` and ``at`` given when written) plus where the console killed it.
:func:`derive` turns a scenario into the whole evidence folder the console
would have written for it: research.json, the ledger, launches.jsonl,
arms.jsonl, timeline.jsonl, and per kill ``kill.json``,
``ledger-at-kill.json``, the three container snapshots, the live and
read-back lifecycle events and the window.
Times follow the ledger: record ``seq`` is written at ``T0 + seq`` seconds; a
run's container is created and started just before its ``runStarted`` and
dies just before its ``runResult``; a kill lands just after record
``beforeKillSeq``.

So there are two kinds of wrong folder, as there are two kinds of adversary:

* a scenario mutation (the study misbehaved, and the console recorded it
  faithfully): the scenario is edited, then derived;
* a file mutation (the evidence was forged or damaged afterwards): the
  derived files are edited.

:data:`CORPUS` lists the variants of the sound folder, each wrong in exactly
one way, with the exact checks it must fail (``False``) or leave unknown
(``None``); every other check must hold.  :data:`HOSTILE` lists folders
whose files are hostile (FIFOs, devices, links out of the folder, huge
sparse files, JSON of the wrong shape).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studymon.engine.io.clock import rfc3339_ms, rfc3339_ns

T0 = 1_796_000_000.0
STUDY = "s"
PREFIX = "inforsi"
COST = 10
FIRST_PID = 4242
MARKER = "HOSTILE-BYTES-7f3a"  # put in hostile files; must never reach the output

Files = dict[str, Any]  # path in OUT -> JSON value (.json), list of lines (.jsonl), or bytes


def t(seq: float) -> float:
    return T0 + seq


def container(run: str, study: str = STUDY, prefix: str = PREFIX) -> str:
    return f"{prefix}-{study}-{run}"


def container_id(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


@dataclass
class Entry:
    kind: str
    content: dict[str, Any]


@dataclass
class KillSpec:
    """A kill right after the first ``runStarted`` of ``run`` (``trigger`` auto or manual), or at another point
    of its story (§7): ``at`` ``charge`` (charged, not started), ``started`` (its container started just after its
    charge, no runStarted yet: unrecorded) or ``runResult`` (its result written, its round not settled)."""

    run: str
    trigger: str = "manual"
    at: str = "runStarted"


@dataclass
class Scenario:
    entries: list[Entry]
    kills: list[KillSpec]
    budget: float
    study: str = STUDY
    prefix: str = PREFIX
    final_code: int = 0


# --- building a sound study -------------------------------------------------------------


def experiments(rnd: int, n: int = 2) -> list[str]:
    return [f"e{rnd}{chr(97 + i)}" for i in range(n)]


def run_entries(run: str, purpose: str, cell: str, rnd: int, exps: list[str], study: str = STUDY) -> dict[str, Entry]:
    """The four records of one run (charge balance is filled in by :func:`derive`)."""
    return {
        "plan": Entry("runPlanned", {"run": run, "purpose": purpose, "object": cell, "round": rnd, "experiments": exps}),
        "charge": Entry("charge", {"run": run, "amount": COST}),
        "start": Entry("runStarted", {"run": run, "container": container(run, study)}),
        "result": Entry("runResult", {"run": run, "exitCode": 0, "outputs": {e: 0.5 + 0.01 * i for i, e in enumerate(exps)}}),
    }


def build(
    rounds: int = 3,
    ablation: tuple[bool, ...] = (True, True, False),
    overlap: tuple[bool, ...] = (False, True, False),
    kills: tuple[tuple[str, str], ...] = (("d1", "auto"), ("d3", "manual")),
    exps: int = 2,
) -> Scenario:
    """A sound study: ``rounds`` diagnosis rounds, ablations where asked, halted at export.

    ``overlap[r-1]``: the ablation of round ``r`` has its result only after
    the next round's diagnosis run started (two runs in flight at once).
    """
    entries: list[Entry] = [
        Entry("studyOpen", {"study": STUDY, "budget": 0, "config": {"rounds": rounds}}),
        Entry("decision", {"name": "seedExperiments", "round": 0, "output": {"experiments": experiments(1, exps)}}),
    ]
    runs = 0
    held: Entry | None = None  # an ablation result written after the next diagnosis start
    for r in range(1, rounds + 1):
        chosen = experiments(r, exps)
        d = run_entries(f"d{r}", "diagnosis", f"c{r % 3}", r, chosen)
        entries += [
            Entry("stageOpen", {"stage": "diagnosis", "round": r}),
            Entry("decision", {"name": "selectDiagnosis", "round": r, "output": {"chosen": chosen}}),
            d["plan"], d["charge"], d["start"],
        ]
        if held is not None:
            entries.append(held)
            held = None
        entries += [
            d["result"],
            Entry("diagnosisSettlement", {
                "round": r, "run": f"d{r}", "dropped": [],
                "judged": {"experiments": [{"id": e, "verdict": "kept", "score": 0.5} for e in chosen]},
            }),
            Entry("stageOpen", {"stage": "proposal", "round": r}),
            Entry("decision", {"name": "proposeExperiments", "round": r, "output": {"experiments": experiments(r + 1, exps)}}),
        ]
        runs += 1
        if r <= len(ablation) and ablation[r - 1]:
            a = run_entries(f"a{r}", "ablation", f"c{r % 3}", r, chosen[:1])
            entries += [Entry("stageOpen", {"stage": "ablation", "round": r}), a["plan"], a["charge"], a["start"]]
            if r < rounds and r <= len(overlap) and overlap[r - 1]:
                held = a["result"]
            else:
                entries.append(a["result"])
            runs += 1
    if held is not None:
        entries.append(held)
    entries.append(Entry("halt", {"reason": "balance exhausted"}))
    budget = runs * COST
    entries[0].content["budget"] = budget
    return Scenario(entries, [KillSpec(run, trig) for run, trig in kills], budget)


def sound() -> Scenario:
    """The corpus's sound study: 3 rounds; kill 1 automatic at d1's start; kill 2 manual with a2 and d3 in flight."""
    return build()


# --- from a scenario to the evidence folder ------------------------------------------------


def event(action: str, name: str, when: float, **attrs: str) -> dict[str, Any]:
    ns = int(round(when * 1e9))
    cid = container_id(name)
    return {
        "status": action, "id": cid, "from": "refstudy", "Type": "container", "Action": action,
        "Actor": {"ID": cid, "Attributes": {"image": "refstudy", "name": name, **attrs}},
        "scope": "local", "time": ns // 1_000_000_000, "timeNano": ns,
    }


def inspect(name: str, started: float, running: bool = True) -> dict[str, Any]:
    return {
        "Id": container_id(name), "Name": "/" + name,
        "State": {"Running": running, "Status": "running" if running else "exited",
                  "StartedAt": rfc3339_ns(int(round(started * 1e9))), "ExitCode": 0},
    }


def ev_time(e: dict[str, Any]) -> float:
    return e["timeNano"] / 1e9


def derive(s: Scenario) -> Files:
    files: Files = {}
    files["research.json"] = {"command": ["study"], "containerPrefix": s.prefix, "backend": "process", "study": s.study}
    balance = s.budget
    records = []
    for i, e in enumerate(s.entries, 1):
        content = copy.deepcopy(e.content)
        if e.kind == "charge" and "balance" not in content:
            amount = content.get("amount")
            balance = balance - amount if isinstance(amount, (int, float)) and not isinstance(amount, bool) else balance
            content["balance"] = balance
        records.append({"seq": i, "at": rfc3339_ms(t(i)), "kind": e.kind, "content": content})
    files["study/ledger.jsonl"] = records

    # Each run's container, from what the ledger says.
    starts: dict[str, tuple[int, str]] = {}
    results: dict[str, tuple[int, Any]] = {}
    first_diagnosis = None
    for r in records:
        c = r["content"]
        run = c.get("run")
        if not isinstance(run, str):
            continue
        if r["kind"] == "runPlanned" and first_diagnosis is None and c.get("purpose") == "diagnosis":
            first_diagnosis = run
        if r["kind"] == "runStarted" and run not in starts:
            starts[run] = (r["seq"], c.get("container"))
        if r["kind"] == "runResult" and run not in results:
            results[run] = (r["seq"], c.get("exitCode"))
    charges: dict[str, int] = {}
    for r in records:
        if r["kind"] == "charge" and isinstance(r["content"].get("run"), str):
            charges.setdefault(r["content"]["run"], r["seq"])
    # A kill between a container's start and its runStarted: that container started just after the charge.
    early = {spec.run: t(charges[spec.run]) for spec in s.kills if spec.at == "started"}
    events: list[dict[str, Any]] = []
    for run, (seq, name) in starts.items():
        if not isinstance(name, str):
            continue
        began = early.get(run, t(seq) - 0.6)
        events += [event("create", name, began + 0.01), event("start", name, began + 0.02)] if run in early else [
            event("create", name, t(seq) - 0.6), event("start", name, t(seq) - 0.5)]
        if run in results:
            rseq, code = results[run]
            code = code if isinstance(code, int) and not isinstance(code, bool) else 0
            events += [event("die", name, t(rseq) - 0.5, exitCode=str(code)), event("destroy", name, t(rseq) + 0.3)]
    events.sort(key=ev_time)

    launches = [{"event": "start", "pid": FIRST_PID, "at": rfc3339_ms(t(0.5)), "resume": False}]
    arms: list[dict[str, Any]] = []
    kill_seqs = []
    for n, spec in enumerate(s.kills, 1):
        seq = {"runStarted": lambda r: starts[r][0], "charge": charges.__getitem__, "started": charges.__getitem__,
               "runResult": lambda r: results[r][0]}[spec.at](spec.run)
        kill_seqs.append(seq)
        kill_at, since, resume = t(seq) + 0.1, t(seq) + 0.05, t(seq) + 0.3
        pid = FIRST_PID + n - 1
        targets = [run for run, (st, _) in starts.items() if st <= seq and not (run in results and results[run][0] <= seq)]
        plans = {r["content"]["run"]: r for r in records if r["kind"] == "runPlanned" and isinstance(r["content"].get("run"), str)}
        # What else the kill leaves unfinished (§7): a diagnosis result whose round is not settled yet, a run charged
        # but not started.  The window closes once each story has ended (a result; a settlement), or at the
        # study's end, which ends every story.
        ends = {run: results[run][0] for run in targets if run in results}
        unsettled = []
        for run, (st, _) in starts.items():
            plan = plans.get(run)
            if st > seq or run not in results or results[run][0] > seq or plan is None:
                continue
            if plan["content"].get("purpose") != "diagnosis":
                continue
            rnd = plan["content"].get("round")
            settled = [r["seq"] for r in records if r["kind"] == "diagnosisSettlement" and r["content"].get("round") == rnd]
            if settled and settled[0] <= seq:
                continue
            unsettled.append(run)
            if settled:
                ends[run] = settled[0]  # its story's end: the window waits for its settlement
        charged = sorted({r["content"]["run"] for r in records if r["kind"] == "charge" and r["seq"] <= seq
                          and r["content"].get("run") in plans and plans[r["content"]["run"]]["seq"] <= seq
                          and not (r["content"]["run"] in starts and starts[r["content"]["run"]][0] <= seq)
                          and not (r["content"]["run"] in results and results[r["content"]["run"]][0] <= seq)},
                         key=lambda run: plans[run]["seq"])
        ends.update({run: results[run][0] for run in charged if run in results})
        left = [(run, "inFlight", starts[run][0], starts[run][1]) for run in targets]
        left += [(run, "unsettled", starts[run][0], starts[run][1]) for run in unsettled]
        left += [(run, "unrecorded", None, container(run, s.study, s.prefix)) if run in early else (run, "charged", None, None)
                 for run in charged]
        folder = f"kills/{n}/"
        files[folder + "kill.json"] = {
            "trigger": spec.trigger, "at": rfc3339_ms(kill_at), "pid": pid, "beforeKillSeq": seq,
            "targets": [
                {"run": run, "class": kind, "cell": plans[run]["content"].get("object"),
                 "round": plans[run]["content"].get("round"), "planSeq": plans[run]["seq"], "startSeq": start,
                 "container": name}
                for run, kind, start, name in left
            ],
            "triggerSeq": seq if spec.trigger == "auto" else None,
            "triggerAt": rfc3339_ms(t(seq)), "signal": "SIGKILL", "signalled": True, "captureError": None,
            "prefix": f"{s.prefix}-{s.study}-", "since": rfc3339_ns(int(since * 1e9)), "sinceEpoch": since,
            "frozenEpoch": since, "killSentEpoch": kill_at, "killReturnedEpoch": kill_at + 0.001,
            # Each moment's text beside its epoch, as the console writes them (§6.9: one moment told twice).
            "frozenAt": rfc3339_ms(since), "killSentAt": rfc3339_ms(kill_at),
        }
        files[folder + "ledger-at-kill.json"] = copy.deepcopy(records[:seq])
        snapped = [(run, starts[run][1], t(starts[run][0]) - 0.5) for run in targets]
        snapped += [(run, name, early[run] + 0.02) for run, kind, _, name in left if kind == "unrecorded"]
        for file in ("container-before.json", "container-after-kill.json", "container-before-resume.json"):
            files[folder + file] = {name: inspect(name, began) for run, name, began in snapped}
        closed = all(run in ends for run, *_ in left) or s.final_code == 0
        seen = {run: t(ends[run]) + 0.1 for run, *_ in left if run in ends}
        until = (max(seen.values(), default=since) + 0.05 if all(run in ends for run, *_ in left)
                 else t(len(records)) + 0.2) if closed else None
        live_until = until if until is not None else float("inf")
        files[folder + "container-events-live.jsonl"] = [
            dict(copy.deepcopy(e), seenAt=rfc3339_ms(ev_time(e) + 0.002))
            # The recording starts before the kill: the targets' own create and start are in it.
            for e in events if since - 1.0 <= ev_time(e) <= live_until
        ]
        if closed:
            assert until is not None
            files[folder + "container-events.jsonl"] = [copy.deepcopy(e) for e in events if since <= ev_time(e) <= until]
            files[folder + "container-events-window.json"] = {
                "since": rfc3339_ns(int(since * 1e9)), "until": rfc3339_ns(int(until * 1e9)),
                "sinceEpoch": since, "untilEpoch": until,
                "targets": {run: {"resultSeq": ends.get(run), "resultSeenEpoch": seen.get(run)} for run, *_ in left},
            }
        launches += [
            {"event": "end", "pid": pid, "at": rfc3339_ms(kill_at + 0.05), "code": None, "signal": "SIGKILL"},
            {"event": "start", "pid": pid + 1, "at": rfc3339_ms(resume), "resume": True},
        ]
        if spec.trigger == "auto":
            # Every point is armed as the study starts, and fires in its turn (arms.jsonl is in time order).
            arms.insert(sum(1 for a in arms if a["event"] == "arm"), {"event": "arm", "at": rfc3339_ms(t(0.2))})
            arms.append({"event": "fired", "at": rfc3339_ms(kill_at + 0.01), "run": first_diagnosis, "kill": n})
    launches.append({"event": "end", "pid": FIRST_PID + len(s.kills), "at": rfc3339_ms(t(len(records)) + 0.5),
                     "code": s.final_code, "signal": None})
    files["launches.jsonl"] = launches
    # The console's snapshot of the machine at each start (§5), and the final end's outcome once it exited 0:
    # made from launches.jsonl as it is written (a test may change it first).
    files["machine.jsonl"] = AS_LAUNCHED
    files["outcome.json"] = AS_LAUNCHED
    if arms:
        files["arms.jsonl"] = arms
    # The console's view of each record (§5): seen 0.1 s after it was written, as the window's
    # resultSeenEpoch says; a kill's trigger record at once (the kill follows it within 0.1 s).
    # Every record after a kill was seen after the resumed controller started (§6.3).
    triggers = set(kill_seqs)
    files["timeline.jsonl"] = [
        {"seq": r["seq"], "kind": r["kind"], "at": r["at"],
         "seenAt": rfc3339_ms(t(r["seq"]) + (0.0 if r["seq"] in triggers else 0.1))}
        for r in records
    ]
    return files


class _AsLaunched:
    """A file the console writes from what launches.jsonl says (machine.jsonl's snapshots, outcome.json): made as
    the folder is written, from the launches it holds then."""

    def __repr__(self) -> str:
        return "AS_LAUNCHED"


AS_LAUNCHED: Any = _AsLaunched()


def as_written(files: Files) -> Files:
    """The files as the folder holds them once written: those made from launches.jsonl made now."""
    launches = [x for x in files.get("launches.jsonl", []) if isinstance(x, dict)]
    made = dict(files)
    if made.get("machine.jsonl") is AS_LAUNCHED:
        made["machine.jsonl"] = [
            {"at": x.get("at"), "label": "resume" if x.get("resume") else "start", "processes": [], "containers": []}
            for x in launches
            if x.get("event") == "start" and isinstance(x.get("at"), str)
        ]
    if made.get("outcome.json") is AS_LAUNCHED:
        ends = [x for x in launches if x.get("event") == "end"]
        starts = [x for x in launches if x.get("event") == "start"]
        final = ends[-1] if ends and starts and ends[-1].get("pid") == starts[-1].get("pid") else None
        if final is not None and final.get("code") == 0 and final.get("signal") is None:
            made["outcome.json"] = {"code": 0, "signal": None}
        else:
            del made["outcome.json"]
    arms = made.get("arms.jsonl")
    if isinstance(arms, list):
        # The console dates every arming line: a test's line written without its time takes the one before it.
        last = rfc3339_ms(t(0.2))
        dated = []
        for x in arms:
            if isinstance(x, dict) and "at" not in x:
                x = dict(x, at=last)
            elif isinstance(x, dict) and isinstance(x.get("at"), str):
                last = x["at"]
            dated.append(x)
        made["arms.jsonl"] = dated
    return made


def write(files: Files, out: Path) -> Path:
    files = as_written(files)
    for rel, value in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, bytes):
            path.write_bytes(value)
        elif rel.endswith(".jsonl"):
            path.write_text("".join((v if isinstance(v, str) else json.dumps(v)) + "\n" for v in value))
        else:
            path.write_text(json.dumps(value, indent=2))
    return out


# --- finding things in a scenario and in files ---------------------------------------------


def find(s: Scenario, kind: str, **match: Any) -> int:
    """Index of the first entry of ``kind`` whose content has ``match``."""
    for i, e in enumerate(s.entries):
        if e.kind == kind and all(e.content.get(k) == v for k, v in match.items()):
            return i
    raise KeyError((kind, match))


def kill_events(files: Files, n: int) -> list[list[dict[str, Any]]]:
    """Kill ``n``'s live and read-back event lists."""
    return [files[f"kills/{n}/container-events-live.jsonl"], files[f"kills/{n}/container-events.jsonl"]]


def window(files: Files, n: int) -> dict[str, Any]:
    return files[f"kills/{n}/container-events-window.json"]


def in_window(files: Files, n: int, at: float = 0.3) -> float:
    """A time inside kill ``n``'s window, ``at`` of the way from its start to its end."""
    w = window(files, n)
    return w["sinceEpoch"] + at * (w["untilEpoch"] - w["sinceEpoch"])


def add_event(files: Files, n: int, e: dict[str, Any], live: bool = True, readback: bool = True) -> None:
    live_lines, back = kill_events(files, n)
    if live:
        live_lines.append(dict(e, seenAt=rfc3339_ms(ev_time(e) + 0.002)))
    if readback:
        back.append(e)


def edit_events(files: Files, n: int, action: str, name: str, fn: Callable[[dict[str, Any]], None]) -> None:
    hit = 0
    for lines in kill_events(files, n):
        for e in lines:
            if e.get("Action") == action and e["Actor"]["Attributes"].get("name") == name:
                fn(e)
                hit += 1
    assert hit, (action, name)


def drop_events(files: Files, n: int, action: str, name: str) -> None:
    for lines in kill_events(files, n):
        lines[:] = [e for e in lines if not (e.get("Action") == action and e["Actor"]["Attributes"].get("name") == name)]


# --- the corpus ------------------------------------------------------------------------------

Key = tuple[str, str]  # (scope, check)


@dataclass
class Case:
    name: str
    why: str
    expected: dict[Key, bool | None]
    scenario: Callable[[Scenario], None] | None = None
    files: Callable[[Files], None] | None = None
    details: dict[Key, str] = field(default_factory=dict)  # exact details of some of the checks

    def build(self) -> Files:
        s = sound()
        if self.scenario is not None:
            self.scenario(s)
        files = derive(s)
        if self.files is not None:
            self.files(files)
        return files


K1 = "kill 1"
K2 = "kill 2"
KILL3 = "kill 3"
D1 = "kill 1 · d1"
A2 = "kill 2 · a2"
D3 = "kill 2 · d3"
ST = "study"


def F(*keys: Key) -> dict[Key, bool | None]:
    return dict.fromkeys(keys, False)


def U(*keys: Key) -> dict[Key, bool | None]:
    return dict.fromkeys(keys)


CORPUS: list[Case] = []


def case(name: str, why: str, expected: dict[Key, bool | None], *, scenario: Any = None, files: Any = None,
         details: dict[Key, str] | None = None) -> None:
    CORPUS.append(Case(name, why, expected, scenario, files, details or {}))


# The thirteen ways a wrong study was judged sound by contract v1.

def _redo_other_name(f: Files) -> None:
    other = container("d1") + "-again"
    add_event(f, 1, event("create", other, in_window(f, 1, 0.2)))
    add_event(f, 1, event("start", other, in_window(f, 1, 0.21)))


case("redo-in-another-container", "the killed run redone in a container with another name of the study",
     F((D1, "sameContainerNoRerun")), files=_redo_other_name)


def _rename_then_die_other(f: Files) -> None:
    name = container("d1")
    ren = event("rename", name + "-old", in_window(f, 1, 0.2), oldName="/" + name)
    ren["Actor"]["ID"] = ren["id"] = container_id(name)
    add_event(f, 1, ren)
    edit_events(f, 1, "die", name, lambda e: e["Actor"].update(ID="f" * 64) or e.update(id="f" * 64))


case("rename-die-of-other-id", "a rename, so the one die belongs to another container Id",
     F((D1, "sameContainerNoRerun")), files=_rename_then_die_other)


def _charge_unplanned(s: Scenario) -> None:
    at = find(s, "halt")
    s.entries[at:at] = [Entry("charge", {"run": "d1x", "amount": COST}),
                        Entry("runStarted", {"run": "d1x", "container": container("d1x")})]
    s.budget += 0  # the balance goes below zero: the books still add up


case("charge-without-plan", "a second charge and runStarted under a run id with no runPlanned",
     F((ST, "contractKept")), scenario=_charge_unplanned,
     details={(ST, "contractKept"): "rule 2, line 40: charge for run d1x, which has no runPlanned before it (1 more line breaks a rule)"})


def _charge_no_run(s: Scenario) -> None:
    at = find(s, "halt")
    s.entries[at:at] = [Entry("charge", {"amount": COST}), Entry("runStarted", {"container": container("d9")})]


case("charge-without-run", "charge and runStarted with no run field",
     F((ST, "contractKept")), scenario=_charge_no_run)


def _int_run_ids(s: Scenario) -> None:
    for e in s.entries:
        if e.content.get("run") == "a1":
            e.content["run"] = 7


case("integer-run-id", "an ablation run whose run id is an integer in all its records",
     F((ST, "contractKept")), scenario=_int_run_ids)


def _settle_before_result(s: Scenario) -> None:
    i = find(s, "runResult", run="d1")
    j = find(s, "diagnosisSettlement", round=1)
    s.entries[i], s.entries[j] = s.entries[j], s.entries[i]


case("settlement-before-result", "the killed run's round is settled before its result",
     F((ST, "contractKept"), (D1, "resultSettledAndFinished")), scenario=_settle_before_result)


def _second_settlement(s: Scenario) -> None:
    j = find(s, "diagnosisSettlement", round=1)
    other = copy.deepcopy(s.entries[j])
    other.content["judged"] = {"experiments": []}
    other.content["dropped"] = [{"experiment": e, "reason": "no result"} for e in experiments(1)]
    s.entries.insert(j + 1, other)


case("second-settlement", "a second, contradictory settlement of the killed run's round (rule 14: no one "
     "settlement names its result)",
     F((ST, "contractKept"), (ST, "resultsAccounted"), (D1, "resultSettledAndFinished")), scenario=_second_settlement)


def _settle_nothing(s: Scenario) -> None:
    j = find(s, "diagnosisSettlement", round=1)
    s.entries[j].content.update(dropped=[], judged={"experiments": []})


case("settlement-of-nothing", "a settlement judging none of the run's experiments",
     F((ST, "contractKept"), (D1, "resultSettledAndFinished")), scenario=_settle_nothing)


case("die-exit-137", "the die says exit 137 but runResult says 0",
     F((D1, "sameContainerNoRerun")),
     files=lambda f: edit_events(f, 1, "die", container("d1"), lambda e: e["Actor"]["Attributes"].update(exitCode="137")),
     details={(D1, "sameContainerNoRerun"): "the die says exit 137, runResult says 0"})


def _not_sigkill(f: Files) -> None:
    for line in f["launches.jsonl"]:
        if line["event"] == "end" and line["pid"] == FIRST_PID:
            line.update(code=0, signal=None)


case("killed-without-sigkill", "the killed controller did not die of SIGKILL (its keeper says exit 0)",
     F((K1, "killDelivered")), files=_not_sigkill,
     details={(K1, "killDelivered"): f"the keeper's end line for pid {FIRST_PID} says exit 0, not SIGKILL"})


def _fired_no_folder(f: Files) -> None:
    for rel in [r for r in f if r.startswith("kills/1/")]:
        del f[rel]


# The killed controller's end, with d1 in flight, is then claimed by no kill folder (§6.8): exitedCleanly says so.
case("fired-without-folder", "arms.jsonl says fired but kills/1/ is missing",
     F((ST, "killTriggered"), (K2, "killEvidence"), (ST, "exitedCleanly")), files=_fired_no_folder,
     details={(ST, "killTriggered"): "arms.jsonl says kill 1 fired, but kills/1/ is missing", (K2, "killEvidence"): "kills/1/ is missing: kills are numbered from 1",
              (ST, "exitedCleanly"): "launches.jsonl line 2: pid 4242 ended with d1 in flight, and no kill folder claims that end"})


def _wrong_container(s: Scenario) -> None:
    s.entries[find(s, "runStarted", run="a1")].content["container"] = "inforsi-s-a1-x"


case("container-name-not-the-contract", "runStarted.container is not <prefix>-<ID>-<run>",
     F((ST, "contractKept")), scenario=_wrong_container)


def _window_early(f: Files) -> None:
    window(f, 1)["targets"]["d1"]["resultSeq"] -= 1


case("window-closed-before-result", "the kill's window closed before the target's result was written: it names a "
     "record that is not the end of the target's story (§6.9)",
     F((K1, "killEvidence"), (D1, "resultSettledAndFinished")), files=_window_early,
     details={(D1, "resultSettledAndFinished"): "the result (seq 8) comes after the window closed (at seq 7)"})


# Every clause of §4 and every rule of §2a, one at a time.

def _gap(f: Files) -> None:
    live = f["kills/1/container-events-live.jsonl"]
    live.insert(1, {"gap": {"from": rfc3339_ms(in_window(f, 1, 0.1)), "to": rfc3339_ms(in_window(f, 1, 0.2))}})


case("gap-in-live-recording", "the live recording has a gap", U((D1, "sameContainerNoRerun")), files=_gap,
     details={(D1, "sameContainerNoRerun"): "the live recording has 1 gap in the window"})


def _gap_and_create(f: Files) -> None:
    _gap(f)
    add_event(f, 1, event("create", container("d1"), in_window(f, 1, 0.4)), readback=False)


case("gap-and-create", "a gap, and a create of the target seen live: false beats unknown",
     F((D1, "sameContainerNoRerun")), files=_gap_and_create)

case("window-file-missing", "the window is still open (its file is absent)",
     U((D1, "sameContainerNoRerun"), (D1, "resultSettledAndFinished")),
     files=lambda f: f.pop("kills/1/container-events-window.json"),
     details={(D1, "sameContainerNoRerun"): "window still open; `studymon run --resume` continues it"})

case("live-recording-missing", "container-events-live.jsonl is missing",
     F((K1, "killEvidence"), (ST, "killTriggered"), (D1, "sameContainerNoRerun")),
     files=lambda f: f.pop("kills/1/container-events-live.jsonl"),
     details={(K1, "killEvidence"): "missing: container-events-live.jsonl", (D1, "sameContainerNoRerun"): "container-events-live.jsonl: missing", (ST, "killTriggered"): "kills/1/ is incomplete: missing: container-events-live.jsonl"})

case("readback-missing", "container-events.jsonl is missing though the window closed",
     F((K1, "killEvidence"), (ST, "killTriggered"), (D1, "sameContainerNoRerun")),
     files=lambda f: f.pop("kills/1/container-events.jsonl"))

case("die-of-other-id", "the one die has another container Id",
     F((D1, "sameContainerNoRerun")),
     files=lambda f: edit_events(f, 1, "die", container("d1"), lambda e: e["Actor"].update(ID="e" * 64)))


def _rename(f: Files) -> None:
    name = container("d1")
    e = event("rename", name, in_window(f, 1, 0.2), oldName="/" + name + "-tmp")
    add_event(f, 1, e)


case("rename-of-target", "the target's container is renamed in its window", F((D1, "sameContainerNoRerun")), files=_rename)

case("create-of-target-readback-only", "the read-back has a create of the target that the live file lacks",
     F((D1, "sameContainerNoRerun")),
     files=lambda f: add_event(f, 1, event("create", container("d1"), in_window(f, 1, 0.3)), live=False))

case("kill-of-target", "a kill event for the target in its window", F((D1, "sameContainerNoRerun")),
     files=lambda f: add_event(f, 1, event("kill", container("d1"), in_window(f, 1, 0.3), signal="9")))

case("two-dies", "a second die of the target in its window", F((D1, "sameContainerNoRerun")),
     files=lambda f: add_event(f, 1, event("die", container("d1"), in_window(f, 1, 0.3), exitCode="0")))

case("no-die", "no die of the target in its window", F((D1, "sameContainerNoRerun")),
     files=lambda f: drop_events(f, 1, "die", container("d1")))

case("foreign-create", "a container of the study created in the window for no run planned after the kill",
     F((A2, "sameContainerNoRerun"), (D3, "sameContainerNoRerun")),
     files=lambda f: add_event(f, 2, event("create", container("zz"), in_window(f, 2, 0.5))),
     details={(A2, "sameContainerNoRerun"): "create of inforsi-s-zz at 2026-11-30T00:53:55.100Z in the window, and its run was not waiting to start at the kill"})


def _omit_target(f: Files) -> None:
    kill = f["kills/2/kill.json"]
    kill["targets"] = [t for t in kill["targets"] if t["run"] != "a2"]


case("targets-omit-in-flight-run", "kill.json's targets omit a run in flight at the kill",
     F((K2, "killEvidence")), files=_omit_target,
     details={(K2, "killEvidence"): "kill.json omits run a2, in flight at seq 34"})


def _at_kill_forged(f: Files) -> None:
    f["kills/1/ledger-at-kill.json"][3]["content"]["budget"] = 1


case("ledger-at-kill-not-a-prefix", "ledger-at-kill.json is not a prefix of the ledger",
     F((K1, "killEvidence")), files=_at_kill_forged)

case("ledger-at-kill-short", "ledger-at-kill.json stops before beforeKillSeq",
     F((K1, "killEvidence")), files=lambda f: f["kills/1/ledger-at-kill.json"].pop())

case("ledger-watched-replaced", "ledger-watch.jsonl recorded the ledger replaced while watched",
     F((ST, "ledgerWellFormed")),
     files=lambda f: f.__setitem__("ledger-watch.jsonl", [{"event": "replaced", "at": rfc3339_ms(t(20)), "offset": 4096,
                                                            "size": 100, "line": 19}]))


def _keeper_sigterm(f: Files) -> None:
    for line in f["launches.jsonl"]:
        if line["event"] == "end" and line["pid"] == FIRST_PID + 1:
            line["signal"] = "SIGTERM"


case("keeper-end-sigterm", "the keeper's end line of kill 2's controller says SIGTERM",
     F((K2, "killDelivered")), files=_keeper_sigterm)

case("not-signalled", "kill.json says SIGKILL was not sent", F((K1, "killDelivered")),
     files=lambda f: f["kills/1/kill.json"].update(signalled=False))

case("capture-error", "kill.json reports a capture error while frozen", F((K1, "killEvidence")),
     files=lambda f: f["kills/1/kill.json"].update(captureError="inspect timed out"))

case("trigger-seq-off", "the automatic kill's triggerSeq is not the first diagnosis start", F((ST, "killTriggered")),
     files=lambda f: f["kills/1/kill.json"].update(triggerSeq=f["kills/1/kill.json"]["triggerSeq"] - 1))

case("fired-kill-manual", "arms.jsonl says fired, kill.json says manual", F((ST, "killTriggered")),
     files=lambda f: f["kills/1/kill.json"].update(trigger="manual", triggerSeq=None))


def _missed(f: Files) -> None:
    f["arms.jsonl"][1] = {"event": "missed", "at": rfc3339_ms(t(7)), "run": "d1", "detail": "d1 already had its result"}


case("missed-and-auto-kill", "arms.jsonl says missed, yet an automatic kill folder exists", F((ST, "killTriggered")),
     files=_missed)


def _result_before_kill(f: Files) -> None:
    f["kills/1/kill.json"]["beforeKillSeq"] = window(f, 1)["targets"]["d1"]["resultSeq"]


case("result-at-or-before-kill", "beforeKillSeq moved to the target's result: the target was not in flight",
     F((K1, "killEvidence"), (D1, "resultSettledAndFinished")), files=_result_before_kill)

case("id-changes-before-resume", "container-before-resume.json shows another Id", F((D1, "sameContainerNoRerun")),
     files=lambda f: f["kills/1/container-before-resume.json"][container("d1")].update(Id="0" * 64))

case("started-at-changes", "container-after-kill.json shows another StartedAt", F((D1, "sameContainerNoRerun")),
     files=lambda f: f["kills/1/container-after-kill.json"][container("d1")]["State"].update(
         StartedAt="2026-11-30T00:00:00.000000000Z"))

case("not-running-after-kill", "the target's container was not running after the kill", F((D1, "sameContainerNoRerun")),
     files=lambda f: f["kills/1/container-after-kill.json"][container("d1")]["State"].update(Running=False))

case("before-resume-exited", "the target exited before the resume (a long manual pause): still sound", {},
     files=lambda f: f["kills/1/container-before-resume.json"][container("d1")]["State"].update(Running=False,
                                                                                                  Status="exited"))

case("window-starts-later", "the window's sinceEpoch moved after the kill's", F((K1, "killEvidence")),
     files=lambda f: window(f, 1).update(sinceEpoch=window(f, 1)["sinceEpoch"] + 0.01))

case("window-entry-missing", "the window has no entry for one target",
     F((D3, "sameContainerNoRerun"), (D3, "resultSettledAndFinished")),
     files=lambda f: window(f, 2)["targets"].pop("d3"))


def _recharge(s: Scenario) -> None:
    s.entries.insert(find(s, "runStarted", run="d1") + 1, Entry("charge", {"run": "d1", "amount": COST}))


case("recharge", "the killed run charged a second time after the kill",
     F((ST, "contractKept"), (ST, "chargedEqualsStarts"), (D1, "chargedOnce")), scenario=_recharge,
     details={(ST, "contractKept"): "rule 3, line 8: second charge for run d1", (D1, "chargedOnce"): "2 charges, 1 runStarted", (ST, "chargedEqualsStarts"): "run d1: 2 charges, 1 start"})


def _restart(s: Scenario) -> None:
    i = find(s, "runStarted", run="d1")
    s.entries.insert(i + 1, copy.deepcopy(s.entries[i]))


case("second-run-started", "a second runStarted for the killed run",
     F((ST, "contractKept"), (ST, "chargedEqualsStarts"), (D1, "chargedOnce")), scenario=_restart)


def _replan(s: Scenario) -> None:
    i = find(s, "runStarted", run="d1")
    again = run_entries("d1b", "diagnosis", "c1", 1, experiments(1))
    s.entries[i + 1:i + 1] = [again["plan"], again["charge"], again["start"], again["result"]]
    s.budget += COST
    s.entries[0].content["budget"] = s.budget


case("replanned-after-kill", "a run planned after the kill repeats the target (purpose, cell, round, experiments)",
     F((D1, "chargedOnce")), scenario=_replan,
     details={(D1, "chargedOnce"): "run d1b (planned at seq 8, after the kill) repeats it: same purpose, cell and round, and an experiment in common"})


def _export(s: Scenario) -> None:
    s.entries.append(Entry("export", {"path": "export.json"}))


case("export-after-halt", "an export follows the halt",
     F((ST, "haltedAtExport"), (D1, "resultSettledAndFinished"), (A2, "resultSettledAndFinished"),
       (D3, "resultSettledAndFinished")), scenario=_export)


def _no_proposal(s: Scenario) -> None:
    del s.entries[find(s, "stageOpen", stage="proposal", round=1)]


case("no-proposal-after-settlement", "no stageOpen proposal of the target's round", F((D1, "resultSettledAndFinished")),
     scenario=_no_proposal)


def _settle_other(s: Scenario) -> None:
    s.entries[find(s, "diagnosisSettlement", round=1)].content["run"] = "d2"


case("settlement-names-other-run", "the round's settlement names another run",
     F((ST, "contractKept"), (D1, "resultSettledAndFinished")), scenario=_settle_other)


def _select_twice(s: Scenario) -> None:
    i = find(s, "decision", name="selectDiagnosis", round=2)
    s.entries.insert(i + 1, copy.deepcopy(s.entries[i]))


case("second-selection", "a second selectDiagnosis of a round", F((ST, "contractKept")), scenario=_select_twice)


def _round_text(s: Scenario) -> None:
    s.entries[find(s, "stageOpen", stage="ablation", round=1)].content["round"] = "1"


case("round-not-int", "a round written as a string", F((ST, "contractKept")), scenario=_round_text)


def _exit_text(s: Scenario) -> None:
    s.entries[find(s, "runResult", run="a1")].content["exitCode"] = "0"


case("exit-code-not-int", "a runResult exitCode written as a string", F((ST, "contractKept")), scenario=_exit_text)


def _outputs_list(s: Scenario) -> None:
    s.entries[find(s, "runResult", run="a1")].content["outputs"] = [0.5]


case("outputs-not-object", "a runResult outputs written as a list", F((ST, "contractKept")), scenario=_outputs_list)


def _target_exit_text(s: Scenario) -> None:
    s.entries[find(s, "runResult", run="d1")].content["exitCode"] = "0"


case("target-exit-code-not-int", "the target's exitCode is a string: nothing to compare the die with",
     F((ST, "contractKept"), (D1, "sameContainerNoRerun")), scenario=_target_exit_text)


def _budget_text(s: Scenario) -> None:
    s.entries[0].content["budget"] = str(s.budget)


case("budget-not-number", "studyOpen's budget is a string",
     F((ST, "contractKept"), (ST, "chargedEqualsStarts")), scenario=_budget_text)


def _seq_gap(f: Files) -> None:
    ledger = f["study/ledger.jsonl"]
    for r in ledger[-3:]:
        r["seq"] += 1


case("seq-gap", "the ledger skips a seq near its end", F((ST, "ledgerWellFormed")), files=_seq_gap)

case("unclean-exit", "the last controller exits 1", F((ST, "exitedCleanly")),
     files=lambda f: f["launches.jsonl"][-1].update(code=1))


def _dup_plan(s: Scenario) -> None:
    i = find(s, "runPlanned", run="a1")
    s.entries.insert(i + 1, copy.deepcopy(s.entries[i]))


case("second-plan", "a run planned twice", F((ST, "contractKept")), scenario=_dup_plan)


def _result_without_start(s: Scenario) -> None:
    del s.entries[find(s, "runStarted", run="a1")]


case("result-without-start", "a run's result with no runStarted",
     F((ST, "contractKept"), (ST, "chargedEqualsStarts")), scenario=_result_without_start)


def _kill_number_hole(f: Files) -> None:
    for rel in [r for r in f if r.startswith("kills/2/")]:
        f["kills/3/" + rel[len("kills/2/"):]] = f.pop(rel)


case("kill-numbers-with-a-hole", "kills/2/ renumbered to kills/3/", F(("kill 3", "killEvidence")), files=_kill_number_hole)


def _stop_by_id(f: Files) -> None:
    name = container("d1")
    e = event("stop", "renamed-elsewhere", in_window(f, 1, 0.3))
    e["Actor"]["ID"] = e["id"] = container_id(name)
    add_event(f, 1, e)


case("stop-by-id", "a stop of the target's container Id under another name", F((D1, "sameContainerNoRerun")),
     files=_stop_by_id, details={(D1, "sameContainerNoRerun"): "stop of inforsi-s-d1 at 2026-11-30T00:53:27.380Z in its window"})


def _stop_after_result(f: Files) -> None:
    seen = window(f, 2)["targets"]["a2"]["resultSeenEpoch"]
    add_event(f, 2, event("stop", container("a2"), seen + 0.01))


def _rerun_same_name(f: Files) -> None:
    name = container("d1")
    for action, at in (("create", 0.3), ("start", 0.31)):
        e = event(action, name, in_window(f, 1, at))
        e["Actor"]["ID"] = e["id"] = "b" * 64
        add_event(f, 1, e)


case("rerun-same-name-new-id", "the run started again in a new container under the target's name",
     F((D1, "sameContainerNoRerun")), files=_rerun_same_name,
     details={(D1, "sameContainerNoRerun"): "create of inforsi-s-d1 at 2026-11-30T00:53:27.380Z in its window; "
                                            "start of inforsi-s-d1 at 2026-11-30T00:53:27.391Z in its window"})


def _foreign_after_window(f: Files) -> None:
    live, _ = kill_events(f, 1)
    e = event("create", container("zz"), window(f, 1)["untilEpoch"] + 0.001)
    live.append(dict(e, seenAt=rfc3339_ms(ev_time(e))))


case("foreign-create-after-the-window", "a container of the study created just after the window closed: still sound",
     {}, files=_foreign_after_window)


def _gap_in_readback(f: Files) -> None:
    kill_events(f, 1)[1].append({"gap": {"from": "a", "to": "b"}})


case("gap-line-in-read-back", "a gap line in the read-back, which is the runtime's events verbatim",
     F((D1, "sameContainerNoRerun")), files=_gap_in_readback,
     details={(D1, "sameContainerNoRerun"): "container-events.jsonl line 2: a gap line that is not a gap (from and to, two times in order)"})

case("stop-after-its-result", "a stop of a target after its result was seen, inside the kill's window: still sound",
     {}, files=_stop_after_result)

case("before-snapshot-missing", "container-before.json is missing",
     F((K1, "killEvidence"), (ST, "killTriggered"), (D1, "sameContainerNoRerun")),
     files=lambda f: f.pop("kills/1/container-before.json"),
     details={(D1, "sameContainerNoRerun"): "container-before.json: missing"})


def _delete_destroy(f: Files) -> None:
    drop_events(f, 1, "destroy", container("d1"))


case("destroy-dropped", "dropping a destroy event keeps the study sound", {}, files=_delete_destroy)


def _die_in_one_file(f: Files) -> None:
    live, _ = kill_events(f, 1)
    live[:] = [e for e in live if not (e.get("Action") == "die" and e["Actor"]["Attributes"]["name"] == container("d1"))]


case("die-only-read-back", "the die is in the read-back only: the union still has one", {}, files=_die_in_one_file)



# Contract v3, §6 and rules 7-14.
#
# v3 judges by the story sound evidence tells (allow, don't deny): each case below is wrong in
# one way v2's list of known wrongs let through, or is sound in a way v2 took for a wrong.  The
# expected checks are v3's, as PROTOCOL.md §6 and docs/contract.md (more exact, and agreeing)
# say; where they leave open which check a clause fails, the choice is named in a comment.

def _kills(f: Files) -> list[int]:
    n, out = 1, []
    while f"kills/{n}/kill.json" in f:
        out.append(n)
        n += 1
    return out


def _seq_of(f: Files, kind: str, **match: Any) -> int:
    """The seq of the first ledger record of ``kind`` whose content has ``match``."""
    for r in f["study/ledger.jsonl"]:
        if isinstance(r, dict) and r["kind"] == kind and all(r["content"].get(k) == v for k, v in match.items()):
            return r["seq"]
    raise KeyError((kind, match))


def _edit_record(f: Files, seq: int, fn: Callable[[dict[str, Any]], None]) -> None:
    """Edit record ``seq`` wherever the evidence holds it: the ledger and each ledger-at-kill.json."""
    for r in f["study/ledger.jsonl"]:
        if isinstance(r, dict) and r["seq"] == seq:
            fn(r)
    for n in _kills(f):
        for r in f[f"kills/{n}/ledger-at-kill.json"]:
            if r["seq"] == seq:
                fn(r)


def _set_at(f: Files, seq: int, at: str) -> None:
    """Record ``seq`` written at ``at`` (the ledger, ledger-at-kill.json and timeline.jsonl agree)."""
    _edit_record(f, seq, lambda r: r.update(at=at))
    for line in f["timeline.jsonl"]:
        if line["seq"] == seq:
            line["at"] = at


def _raw(f: Files, seq: int, old: str, new: str, at_kill: bool = True) -> None:
    """Record ``seq`` as raw text with ``old`` replaced by ``new`` (what json.dumps cannot write)."""
    ledger = f["study/ledger.jsonl"]
    for i, r in enumerate(ledger):
        if isinstance(r, dict) and r["seq"] == seq:
            text = json.dumps(r)
            assert old in text, (old, text)
            ledger[i] = text.replace(old, new)
    for n in _kills(f) if at_kill else []:
        rel = f"kills/{n}/ledger-at-kill.json"
        records = f[rel]
        if any(r["seq"] == seq for r in records):
            text = json.dumps(records, indent=2)
            assert text.count(old) == 1, old
            f[rel] = text.replace(old, new).encode()


def _ev(action: str, name: str, when: float, cid: str | None = None, **attrs: str) -> dict[str, Any]:
    e = event(action, name, when, **attrs)
    if cid is not None:
        e["id"] = e["Actor"]["ID"] = cid
    return e


def _add_raw_event(f: Files, n: int, e: dict[str, Any], seen: float) -> None:
    """An event whose times are not derive's (kept as given), in both recordings."""
    live, back = kill_events(f, n)
    live.append(dict(copy.deepcopy(e), seenAt=rfc3339_ms(seen)))
    back.append(copy.deepcopy(e))


def _research(**keys: Any) -> Callable[[Files], None]:
    return lambda f: f["research.json"].update(keys)


def _both(*fns: Callable[[Any], None]) -> Callable[[Any], None]:
    def run(x: Any) -> None:
        for fn in fns:
            fn(x)
    return run


D1_NAME = container("d1")
ALL_RSF = ((D1, "resultSettledAndFinished"), (A2, "resultSettledAndFinished"), (D3, "resultSettledAndFinished"))
HALTED = (ST, "haltedAtExport")
ACCOUNTED = (ST, "resultsAccounted")


# §6.4 Allowed events: in the kill's window a target's container may only die once (and be destroyed
# after that, oom just before it, or be looked at); any other action, known or not, is ✗ naming it.

def _target_action(action: str, n: int = 1, run: str = "d1", at: float = 0.3, **attrs: str) -> Callable[[Files], None]:
    return lambda f: add_event(f, n, event(action, container(run), in_window(f, n, at), **attrs))


for _action, _attrs in (("exec_create", {"execID": "e" * 64}), ("exec_start", {"execID": "e" * 64}),
                        ("exec_die", {"execID": "e" * 64, "exitCode": "0"}), ("restart", {}), ("pause", {}),
                        ("unpause", {}), ("update", {}), ("commit", {}), ("extract-to-dir", {}), ("frobnicate", {}),
                        ("exec_start: sh -c 'python run.py again'", {"execID": "e" * 64})):
    case(f"v3-{_action.split(':')[0]}{'-with-command' if ':' in _action else ''}-of-target",
         f"a {_action!r} event of the target's container in its window: not in the story",
         F((D1, "sameContainerNoRerun")), files=_target_action(_action, **_attrs))

for _action in ("attach", "detach", "resize", "top", "archive-path", "export", "health_status: healthy"):
    case(f"v3-passive-{_action.split(':')[0]}-of-target",
         f"a passive {_action!r} of the target's container in its window: still sound",
         {}, files=_target_action(_action))


def _die_at(f: Files) -> float:
    live = kill_events(f, 1)[0]
    return next(ev_time(e) for e in live if e["Action"] == "die" and e["Actor"]["Attributes"]["name"] == D1_NAME)


def _window_opens_late(f: Files) -> None:
    """The window file says the window opened after d1's die; kill.json (and the recordings) say it opened before."""
    w = window(f, 1)
    late = _die_at(f) + 0.05
    w["sinceEpoch"], w["since"] = late, rfc3339_ns(int(late * 1e9))


# A kill's window opens at the freeze, where kill.json says; the window file's copy is held to it (killEvidence), and
# the target's story is read from kill.json's since: its die is in its window.
case("v4-window-file-opens-after-the-die", "container-events-window.json says the window opened after d1's die",
     F((K1, "killEvidence")), files=_window_opens_late)


case("v3-destroy-after-die-in-window", "the target's container removed after its die, inside the window: sound", {},
     files=lambda f: add_event(f, 1, event("destroy", D1_NAME, _die_at(f) + 0.1)))

case("v3-destroy-before-die", "the target's container destroyed before its one die: not in the story",
     F((D1, "sameContainerNoRerun")), files=lambda f: add_event(f, 1, event("destroy", D1_NAME, _die_at(f) - 0.2)))


def _oom_result(s: Scenario) -> None:
    s.entries[find(s, "runResult", run="d1")].content["exitCode"] = 137


case("v3-oom-just-before-die", "the run was killed for memory: an oom just before its die (exit 137, as runResult "
     "says)", {}, scenario=_oom_result, files=lambda f: add_event(f, 1, event("oom", D1_NAME, _die_at(f) - 0.005)))

case("v3-oom-just-after-die", "the engine reported the oom 50 ms after the die (either order, within a second): sound",
     {}, scenario=_oom_result, files=lambda f: add_event(f, 1, event("oom", D1_NAME, _die_at(f) + 0.05)))


def _a2_oom(s: Scenario) -> None:
    s.entries[find(s, "runResult", run="a2")].content["exitCode"] = 137


def _oom_late(f: Files) -> None:
    live = kill_events(f, 2)[0]
    die = next(ev_time(e) for e in live if e["Action"] == "die" and e["Actor"]["Attributes"]["name"] == container("a2"))
    assert die + 1.1 < window(f, 2)["untilEpoch"]
    add_event(f, 2, event("oom", container("a2"), die + 1.1))


case("v3-oom-long-after-die", "an oom of a2 1.1 s after its die: not the one allowed around it",
     F((A2, "sameContainerNoRerun")), scenario=_a2_oom, files=_oom_late)


# §6.4 The target's name is never created or started in the kill's window, after its own result too.

def _rerun_after_result(f: Files) -> None:
    seen = window(f, 2)["targets"]["a2"]["resultSeenEpoch"]
    for action, dt in (("create", 0.2), ("start", 0.21)):
        add_event(f, 2, _ev(action, container("a2"), seen + dt, cid="c" * 64))


# Choice: a container of the study made in the window for a run that was not waiting to start is
# work off the books for every target of the kill (docs/contract.md: "a target's own name is never
# allowed"), so d3 fails too.
case("v3-target-name-remade-after-its-result", "a2's name created and started again after its result was seen, "
     "while kill 2's window is still open (d3 had no result yet)",
     F((A2, "sameContainerNoRerun"), (D3, "sameContainerNoRerun")), files=_rerun_after_result)


def _start_after_result(f: Files) -> None:
    seen = window(f, 1)["targets"]["d1"]["resultSeenEpoch"]
    assert seen + 0.02 < window(f, 1)["untilEpoch"]
    add_event(f, 1, _ev("start", D1_NAME, seen + 0.02, cid="c" * 64))


case("v3-target-name-started-after-its-result", "d1's name started after its result was seen, inside the window",
     F((D1, "sameContainerNoRerun")), files=_start_after_result)

# v2 judged a target's events only until its result was seen: this case's stop comes after it.
# In v3 the window is the kill's (sinceEpoch to untilEpoch), and `stop` is not in the story.
for _c in CORPUS:
    if _c.name == "stop-after-its-result":
        _c.why = "a stop of a target after its result was seen, inside the kill's window: not in the story (v3 §6.4)"
        _c.expected = F((A2, "sameContainerNoRerun"))


# §6.4 Snapshots agree with the events.  A target that exited just before the kill (FinishedAt
# before sinceEpoch) has its die stamped 10-25 ms later, inside the window: that is its one die.

def _exited_before_kill(code: int = 0, die_after: float = 0.02) -> Callable[[Files], None]:
    """d1 finished 10 ms before the window opened; its die stamped ``die_after`` later."""
    def edit(f: Files) -> None:
        finished = f["kills/1/kill.json"]["sinceEpoch"] - 0.01
        for file in ("container-before.json", "container-after-kill.json", "container-before-resume.json"):
            f[f"kills/1/{file}"][D1_NAME]["State"].update(
                Running=False, Status="exited", ExitCode=code, FinishedAt=rfc3339_ns(round(finished * 1e9)))
        ns = round((finished + die_after) * 1e9)
        assert ns / 1e9 < window(f, 1)["untilEpoch"]
        edit_events(f, 1, "die", D1_NAME, lambda e: e.update(time=ns // 1_000_000_000, timeNano=ns))
        for e in kill_events(f, 1)[0]:
            if e["Action"] == "die" and e["Actor"]["Attributes"]["name"] == D1_NAME:
                e["seenAt"] = rfc3339_ms(ns / 1e9 + 0.002)
    return edit


case("v3-exited-just-before-kill", "d1 exited 10 ms before the window; Docker stamped its die 20 ms later, inside "
     "it: the snapshots' exit is that die (Id, code, time)", {}, files=_exited_before_kill())

case("v3-exited-before-kill-code-differs", "the snapshots show exit 2, the one die and runResult say 0",
     F((D1, "sameContainerNoRerun")), files=_exited_before_kill(code=2))

case("v3-exited-before-kill-die-a-second-later", "the snapshots' FinishedAt is 1.06 s before the one die (inside "
     "the window): not the same time within a second", F((D1, "sameContainerNoRerun")),
     files=_exited_before_kill(die_after=1.06))

def _exited_before_resume(f: Files) -> None:
    """d1 exited while the kill waited for its resume: its die, then the snapshot before the resume shows that exit."""
    kill = f["kills/1/kill.json"]
    finished = kill["killSentEpoch"] + 0.09
    ns = round((finished + 0.015) * 1e9)
    edit_events(f, 1, "die", D1_NAME, lambda e: e.update(time=ns // 1_000_000_000, timeNano=ns))
    for e in kill_events(f, 1)[0]:
        if e["Action"] == "die" and e["Actor"]["Attributes"]["name"] == D1_NAME:
            e["seenAt"] = rfc3339_ms(ns / 1e9 + 0.002)
    f["kills/1/container-before-resume.json"][D1_NAME]["State"].update(
        Running=False, Status="exited", ExitCode=0, FinishedAt=rfc3339_ns(round(finished * 1e9)))


for _c in CORPUS:
    if _c.name == "before-resume-exited":
        # v3 §6.4: the exit the snapshot shows is the one die (code, and time within a second), so the
        # die comes before the snapshot; v2's folder (an exit with no FinishedAt, its die after the
        # resume) is the next case.
        _c.files = _exited_before_resume

case("v3-snapshot-exit-without-finished-at", "container-before-resume.json shows d1 exited with no FinishedAt, and "
     "its one die comes after the resume", F((D1, "sameContainerNoRerun")),
     files=lambda f: f["kills/1/container-before-resume.json"][D1_NAME]["State"].update(Running=False, Status="exited"))

case("v3-snapshot-name-of-another-container", "container-after-kill.json files d1 under a Name that is a1's",
     F((D1, "sameContainerNoRerun")),
     files=lambda f: f["kills/1/container-after-kill.json"][D1_NAME].update(Name="/" + container("a1")))
case("v4-snapshot-finished-at-not-a-text", "container-before-resume.json gives d1's FinishedAt as a number: the "
     "exit it dates cannot be held to the die", F((D1, "sameContainerNoRerun")),
     files=lambda f: f["kills/1/container-before-resume.json"][D1_NAME]["State"].update(FinishedAt=1.8e9))
case("v4-snapshot-another-container-s-entry-of-the-wrong-shape", "container-before.json holds an entry for a "
     "container of no target whose State.Running is a text: a snapshot not as the runtime gave it, whoever's entry",
     F((D1, "sameContainerNoRerun")),
     files=lambda f: f["kills/1/container-before.json"].update(
         {container("x9"): {"Id": "f" * 64, "Name": "/" + container("x9"), "State": {"Running": "true"}}}))
case("v4-snapshot-another-container-filed-under-another-name", "container-before.json files a container of no "
     "target under a name that is not its Name", F((D1, "sameContainerNoRerun")),
     files=lambda f: f["kills/1/container-before.json"].update(
         {container("x9"): {"Id": "f" * 64, "Name": "/" + container("x8"), "State": {"Running": False}}}))


def _names_without_slash(f: Files) -> None:
    for n in _kills(f):
        for file in ("container-before.json", "container-after-kill.json", "container-before-resume.json"):
            for name, entry in f[f"kills/{n}/{file}"].items():
                entry["Name"] = name


case("v3-snapshot-names-without-slash", "every snapshot's Name without the leading /: sound", {},
     files=_names_without_slash)


# §6.4 Recordings agree: one event (Id, action, timeNano) in both files with other attributes.

def _readback_die(fn: Callable[[dict[str, Any]], None]) -> Callable[[Files], None]:
    def edit(f: Files) -> None:
        for e in kill_events(f, 1)[1]:
            if e["Action"] == "die" and e["Actor"]["Attributes"]["name"] == D1_NAME:
                fn(e)
    return edit


case("v3-recordings-disagree-on-exit-code", "the live die says exit 0, the read-back's same die says exit 1",
     F((D1, "sameContainerNoRerun")), files=_readback_die(lambda e: e["Actor"]["Attributes"].update(exitCode="1")))

case("v3-recordings-disagree-on-name", "the read-back's copy of d1's die names another container",
     F((D1, "sameContainerNoRerun")),
     files=_readback_die(lambda e: e["Actor"]["Attributes"].update(name=container("d1x"))))


# §6.4 Times.

case("v3-time-an-hour-from-timenano", "d1's die: time is an hour away from its timeNano",
     F((D1, "sameContainerNoRerun")),
     files=lambda f: edit_events(f, 1, "die", D1_NAME, lambda e: e.update(time=e["time"] + 3600)))


def _whole_second(action: str, second_of: Callable[[Files], float]) -> Callable[[Files], None]:
    def edit(f: Files) -> None:
        when = second_of(f)
        e = event(action, D1_NAME, when, **({"exitCode": "0"} if action == "die" else {}))
        del e["timeNano"]
        e["time"] = int(when)
        _add_raw_event(f, 1, e, when + 0.002)
    return edit


case("v3-whole-second-start-overlapping-window-start",
     "a start of d1 with only a whole-second time, the second in which the window opens: it counts as inside",
     F((D1, "sameContainerNoRerun")), files=_whole_second("start", lambda f: window(f, 1)["sinceEpoch"] - 0.04))


def _die_whole_second(f: Files) -> None:
    for lines in kill_events(f, 1):
        for e in lines:
            if e["Action"] == "die" and e["Actor"]["Attributes"]["name"] == D1_NAME:
                del e["timeNano"]


case("v3-whole-second-die", "d1's one die has only a whole-second time (no timeNano): still its one die", {},
     files=_die_whole_second)


def _event_time(time: Any, time_nano: Any) -> Callable[[Files], None]:
    def edit(f: Files) -> None:
        e = event("attach", D1_NAME, in_window(f, 1, 0.3))
        e.update(time=time, timeNano=time_nano)
        _add_raw_event(f, 1, e, in_window(f, 1, 0.3))
    return edit


case("v3-event-time-beyond-year-9999", "an event of d1 whose time is past the year 9999: of the wrong shape",
     F((D1, "sameContainerNoRerun")), files=_event_time(300_000_000_000, 300_000_000_000 * 10 ** 9))
case("v3-event-time-negative", "an event of d1 whose time is negative: of the wrong shape",
     F((D1, "sameContainerNoRerun")), files=_event_time(-1, -1_000_000_000))
case("v3-event-time-not-a-number", "an event of d1 whose time and timeNano are text: of the wrong shape",
     F((D1, "sameContainerNoRerun")), files=_event_time("soon", "soon"))


# §6.4 Gaps: only one that overlaps the window makes a check ?; a gap line without both bounds is ✗.

def _live_gap(gap: dict[str, Any]) -> Callable[[Files], None]:
    return lambda f: kill_events(f, 1)[0].insert(1, {"gap": gap})


def _gap_before(f: Files) -> None:
    since = window(f, 1)["sinceEpoch"]
    _live_gap({"from": rfc3339_ms(since - 0.9), "to": rfc3339_ms(since - 0.5)})(f)


def _gap_over_start(f: Files) -> None:
    since = window(f, 1)["sinceEpoch"]
    _live_gap({"from": rfc3339_ms(since - 0.5), "to": rfc3339_ms(since + 0.01)})(f)


case("v3-gap-wholly-before-the-window", "the live stream was down before the window opened: sound", {},
     files=_gap_before)
case("v3-gap-over-the-window-start", "the live stream was down as the window opened", U((D1, "sameContainerNoRerun")),
     files=_gap_over_start)
case("v3-gap-without-its-end", "a gap line with only `from`: not an event", F((D1, "sameContainerNoRerun")),
     files=lambda f: _live_gap({"from": rfc3339_ms(in_window(f, 1, 0.1))})(f))


# §6.4 Work off the books: a container of the study started in the window for a run that never
# has a runStarted (v2 let it pass because the run was planned after the kill).

def _plan_unstarted(s: Scenario) -> None:
    i = find(s, "runStarted", run="d3")
    s.entries.insert(i + 1, Entry("runPlanned", {"run": "x9", "purpose": "probe", "object": "cz", "round": 3,
                                                 "experiments": ["ez"]}))


def _start_unstarted(f: Files) -> None:
    for action, at in (("create", 0.5), ("start", 0.51)):
        add_event(f, 2, event(action, container("x9"), in_window(f, 2, at)))


case("v3-work-off-the-books", "x9 is planned after kill 2 but never started in the ledger, yet its container is "
     "created and started in the window", F((A2, "sameContainerNoRerun"), (D3, "sameContainerNoRerun")),
     scenario=_plan_unstarted, files=_start_unstarted)


# §6.4 Twins: a run planned after the kill (or planned before and started after it) with a
# target's purpose, cell and round and any experiment id in common.

def _twin(run: str, purpose: str, cell: str, rnd: int, exps: list[str],
          plan_before_start_of: str | None = None) -> Callable[[Scenario], None]:
    """A whole run ``run`` just before the halt; its plan there too, or before ``plan_before_start_of``'s runStarted."""
    def edit(s: Scenario) -> None:
        again = run_entries(run, purpose, cell, rnd, exps)
        at = find(s, "halt")
        s.entries[at:at] = [again["charge"], again["start"], again["result"]]
        if plan_before_start_of is None:
            s.entries.insert(find(s, "halt") - 3, again["plan"])
        else:
            s.entries.insert(find(s, "runStarted", run=plan_before_start_of), again["plan"])
        s.budget += COST
        s.entries[0].content["budget"] = s.budget
    return edit


case("v3-twin-lists-an-id-twice", "a run planned after kill 2 with a2's purpose, cell and round lists e2a twice",
     F((A2, "chargedOnce")), scenario=_twin("a2b", "ablation", "c2", 2, ["e2a", "e2a"]))
case("v3-twin-adds-an-id", "a run planned after kill 2 with a2's purpose, cell and round and one id more",
     F((A2, "chargedOnce")), scenario=_twin("a2b", "ablation", "c2", 2, ["e2a", "e2z"]))
def _plan_only(run: str, purpose: str, cell: str, rnd: int, exps: list[str]) -> Callable[[Scenario], None]:
    def edit(s: Scenario) -> None:
        s.entries.insert(find(s, "halt"), run_entries(run, purpose, cell, rnd, exps)["plan"])
    return edit


# Planned only: a diagnosis twin that ran would have a result no settlement of its round can name.
case("v3-twin-one-id-in-common", "a diagnosis run planned after kill 1 in d1's cell and round shares only e1b with it",
     F((D1, "chargedOnce")), scenario=_plan_only("d1b", "diagnosis", "c1", 1, ["e1b", "e1z"]))
# A diagnosis twin that ran has a result no settlement of round 3 names (d3's does): rule 14 too.
case("v3-twin-planned-before-started-after", "d3b, planned before kill 2 (before d3 started) and started after it, "
     "repeats d3's e3a", F((D3, "chargedOnce"), ACCOUNTED),
     scenario=_twin("d3b", "diagnosis", "c0", 3, ["e3a"], plan_before_start_of="d3"))
case("v3-same-cell-other-experiments", "an ablation of a2's cell and round with no experiment in common: sound", {},
     scenario=_twin("a2b", "ablation", "c2", 2, ["e2b"]))


# §6.4 Lost is lost; rule 14 (resultsAccounted).  Once the study has finished (its final controller
# exited 0) a target without a result is ✗, never ?.

def _forget_d1(s: Scenario) -> None:
    del s.entries[find(s, "diagnosisSettlement", round=1)]
    del s.entries[find(s, "runResult", run="d1")]
    # Killed once only: d1, still without a result, would be a target of every later kill too.
    s.kills = s.kills[:1]


# The window never closed (no result): the console rightly wrote no window file and no read-back,
# so kill 1's folder is complete for its stage (killEvidence and killTriggered hold); d1 has no die,
# and once the study has finished nothing of a window is ?: sameContainerNoRerun ✗ too.
case("v3-lost-target-result", "after its only kill the study forgets d1 (no result, no settlement of round 1), halts "
     "and exits 0", F(ACCOUNTED, (D1, "resultSettledAndFinished"), (D1, "sameContainerNoRerun"), (D1, "chargedOnce")),
     scenario=_forget_d1)
# chargedOnce too: round 1 never settled, a1 (an ablation of d1's cell and round, with an experiment in common,
# planned after the kill) came before its settlement, so it repeats d1's work whatever its purpose (§6.9).

# Kill 2 (at d3's start) leaves d1 unsettled too (§7): its story there is settled once, which never comes.
case("v3-target-round-never-settled", "d1 has its result but round 1 is never settled; the study exits 0",
     F(ACCOUNTED, (D1, "resultSettledAndFinished"), ("kill 2 · d1", "resultSettledAndFinished"), (D1, "chargedOnce")),
     scenario=lambda s: s.entries.pop(find(s, "diagnosisSettlement", round=1)))


def _ablation_abandoned(s: Scenario) -> None:
    a3 = run_entries("a3", "ablation", "c0", 3, ["e3a"])
    at = find(s, "halt")
    s.entries[at:at] = [Entry("stageOpen", {"stage": "ablation", "round": 3}), a3["plan"], a3["charge"], a3["start"]]
    s.budget += COST
    s.entries[0].content["budget"] = s.budget


case("v3-ablation-never-resulted", "an ablation started after the last kill never has a result (no kill in flight)",
     F(ACCOUNTED), scenario=_ablation_abandoned)

case("v3-diagnosis-never-settled", "d2 (kill 2 leaves it unsettled) has a result; round 2 is never settled",
     F(ACCOUNTED, ("kill 2 · d2", "resultSettledAndFinished")),
     scenario=lambda s: s.entries.pop(find(s, "diagnosisSettlement", round=2)))


# §6.6 ? only where the study can still be resumed (or a gap).

def _service_error(s: Scenario) -> None:
    s.entries[find(s, "halt")] = Entry("serviceError", {"stage": "proposal", "round": 3,
                                                        "message": "the model service did not answer"})
    s.final_code = 75


case("v3-resumable-pending-halt", "the study stopped for a temporary failure (serviceError, exit 75) before its halt: "
     "--resume continues it, so what has not happened yet is ?",
     U(HALTED, (ST, "exitedCleanly"), *ALL_RSF), scenario=_service_error)

for _c in CORPUS:
    if _c.name == "window-file-missing":
        # v3: the study finished (exit 0) and d1 has its result, so the window must have closed:
        # its file is missing evidence, not a window still open (§6.4 lost is lost, §6.6).
        _c.why = "container-events-window.json is missing though every target has its result and the study finished"
        _c.expected = F((K1, "killEvidence"), (ST, "killTriggered"), (D1, "sameContainerNoRerun"),
                        (D1, "resultSettledAndFinished"))
        _c.details = {}
    if _c.name == "unclean-exit":
        # v3 §6.6: exit 1 is a crash that --resume continues; the clean exit has not happened yet, and
        # each target's resultSettledAndFinished asks that the study finished (docs/contract.md).
        _c.expected = U((ST, "exitedCleanly"), *ALL_RSF)


# §6.1 Attribution: labels, where present, decide whose a container is.

def _labelled(n: int, name: str, study: str | None, run: str | None, actions: tuple[str, ...] = ("create", "start"),
              cid: str | None = None) -> Callable[[Files], None]:
    labels = {k: v for k, v in (("studymon.study", study), ("studymon.run", run)) if v is not None}

    def edit(f: Files) -> None:
        for i, action in enumerate(actions):
            extra = {"exitCode": "0"} if action == "die" else {}
            add_event(f, n, _ev(action, name, in_window(f, n, 0.2 + 0.1 * i), cid=cid, **labels, **extra))
    return edit


case("v3-neighbour-study-s-x", "study s-x (stem inforsi-s-x-) ran beside it; its labelled containers' events are "
     "in the recording: not this study's", {},
     files=_labelled(2, container("r1", study="s-x"), "s-x", "r1", ("create", "start", "die", "destroy")))
# §6.1 as contract v4 settles it: a label disowns a container of the stem only when its name is in the labelled
# study's stem too (as v3-neighbour-study-s-x's is); inforsi-s-zz is not in study other's stem (inforsi-other-).
case("v3-stem-name-labelled-other-study", "a container under this study's stem, labelled as study other's but not "
     "named in its stem, made in kill 2's window: this study's, work off the books",
     F((A2, "sameContainerNoRerun"), (D3, "sameContainerNoRerun")), files=_labelled(2, container("zz"), "other", "zz"))
case("v4-stem-name-labelled-invalid-id", "a container under this study's stem labelled with no valid study id, "
     "made in kill 2's window: an invalid label disowns nothing",
     F((A2, "sameContainerNoRerun"), (D3, "sameContainerNoRerun")), files=_labelled(2, container("zz"), "no/id", "zz"))
case("v3-labelled-ours-under-another-name", "a container named outside the stem but labelled with this study's id "
     "(run zz, never started in the ledger) starts in the window",
     F((A2, "sameContainerNoRerun"), (D3, "sameContainerNoRerun")), files=_labelled(2, "lab-zz", STUDY, "zz"))
# A container labelled as a target's run is that target's (its events fail d3), and a container of
# the study made in the window for a run not waiting to start (work off the books, a2 too).
case("v3-labelled-as-target-run", "a container named elsewhere but labelled as run d3 of this study starts in the "
     "window", F((A2, "sameContainerNoRerun"), (D3, "sameContainerNoRerun")),
     files=_labelled(2, "lab-d3", STUDY, "d3", cid="d" * 64))
# Stems that extend one another never run at once (§6.1): an unlabelled name under the stem is ours.
case("v3-unlabelled-under-an-extending-stem", "an unlabelled inforsi-s-x-r1 (as a study s-x would name it) starts in "
     "the window: under this study's stem, with no label to say otherwise, it is this study's",
     F((A2, "sameContainerNoRerun"), (D3, "sameContainerNoRerun")),
     files=_labelled(2, container("r1", study="s-x"), None, None))
case("v3-unlabelled-outside-the-stem", "an unlabelled container outside the stem starts in the window: out of scope "
     "(no evidence can tie it to the study)", {}, files=_labelled(2, "elsewhere-d3", None, None, cid="e" * 64))


# §6.2 rule 7: studyOpen is line 1 and no other; its study is research.json's.

case("v3-rule7-study-open-of-another-study", "studyOpen names study t; research.json says s", F((ST, "contractKept")),
     scenario=lambda s: s.entries[0].content.update(study="t"))


def _second_open(s: Scenario) -> None:
    at = find(s, "halt")
    s.entries.insert(at, copy.deepcopy(s.entries[0]))


case("v3-rule7-second-study-open", "a second studyOpen, the same as the first, before the halt",
     F((ST, "contractKept")),
     scenario=_second_open)


def _open_second(s: Scenario) -> None:
    s.entries[0], s.entries[1] = s.entries[1], s.entries[0]


case("v3-rule7-study-open-not-first", "the first line is a decision; studyOpen is line 2, so no budget opens the "
     "study (the budget is line 1's)", F((ST, "contractKept"), (ST, "chargedEqualsStarts")), scenario=_open_second)


# §6.2 rule 8: `at` is an RFC 3339 UTC time.

def _at(value: str) -> Callable[[Files], None]:
    return lambda f: _set_at(f, _seq_of(f, "decision", name="proposeExperiments", round=3), value)


case("v3-rule8-at-not-a-time", "a record's at is not a time", F((ST, "contractKept")), files=_at("soon"))
case("v3-rule8-at-not-utc", "a record's at is a time two hours east of UTC", F((ST, "contractKept")),
     files=_at("2026-11-30T02:53:59.000+02:00"))
case("v3-rule8-at-impossible-date", "a record's at is the 13th month", F((ST, "contractKept")),
     files=_at("2026-13-30T00:53:59.000Z"))


def _retime(fmt: Callable[[int, str], str]) -> Callable[[Files], None]:
    """Every record's at rewritten as ``fmt(seq, at)``."""
    def edit(f: Files) -> None:
        for r in list(f["study/ledger.jsonl"]):
            _set_at(f, r["seq"], fmt(r["seq"], r["at"]))
    return edit


case("v3-rule8-plus-zero-offset", "every at written with +00:00 instead of Z: accepted", {},
     files=_retime(lambda _seq, at: at[:-1] + "+00:00"))
_FRACTIONS = (lambda at: at[:-5] + "Z", lambda at: at[:-2] + "Z", lambda at: at[:-1] + "000Z",
              lambda at: at[:-1] + "000000Z", lambda at: at)
case("v3-rule8-other-fraction-digits", "at written with 0, 2, 6, 9 and 3 fraction digits: accepted", {},
     files=_retime(lambda seq, at: _FRACTIONS[seq % len(_FRACTIONS)](at)))


# §6.2 rule 9: numbers are finite.

SENTINEL = 0.123456789


def _output_1e400(f: Files) -> None:
    seq = _seq_of(f, "runResult", run="a1")
    _edit_record(f, seq, lambda r: r["content"]["outputs"].update(e1a=SENTINEL))
    _raw(f, seq, repr(SENTINEL), "1e400")


# Choice: 1e400 is valid JSON that no finite number holds: the line parses (ledgerWellFormed holds)
# and breaks rule 9 (contractKept), as §6.2 places it.
case("v3-rule9-1e400", "an output of a1 written 1e400 (in the ledger and kill 2's ledger-at-kill.json alike)",
     F((ST, "contractKept")), files=_output_1e400)


def _overflow(s: Scenario) -> None:
    for run in ("a1", "d2"):
        s.entries[find(s, "charge", run=run)].content["amount"] = 1e308
    s.budget = 1e308
    s.entries[0].content["budget"] = s.budget


# Every number in every line is finite (rule 9 holds, docs/contract.md: "every number in the line"), and the
# charges sum past the largest double: the books are held all the same, in halves, and balance (v2 compared inf
# with inf; a later judge failed a sound ledger for its float's range; the oracle adds them exactly).
case("v3-rule9-charges-overflow", "two charges of 1e308 against a budget of 1e308: the amounts sum past the "
     "largest double, and the books balance", {}, scenario=_overflow)


# §6.2 rule 10: no object in a line repeats a key; lone surrogate escapes are valid JSON.

def _dup_key(old: str, new: str) -> Callable[[Files], None]:
    return lambda f: _raw(f, _seq_of(f, "decision", name="proposeExperiments", round=3), old, new, at_kill=False)


case("v3-rule10-repeated-key-in-content", "a line whose content repeats `name` (same value): not a record",
     F((ST, "ledgerWellFormed")),
     files=_dup_key('"name": "proposeExperiments"', '"name": "proposeExperiments", "name": "proposeExperiments"'))
case("v3-rule10-repeated-top-level-key", "a line that repeats `kind` (same value): not a record",
     F((ST, "ledgerWellFormed")), files=_dup_key('"kind": "decision"', '"kind": "decision", "kind": "decision"'))
case("v3-rule10-lone-surrogate", "a decision's free-text note holds \\ud83d (a cut emoji, as JavaScript writes it), "
     "in the ledger and both ledger-at-kill.json: accepted", {},
     files=lambda f: _edit_record(f, 2, lambda r: r["content"]["output"].update(note="cut \ud83d")))


# §6.2 rule 11: settlements (on round 2, whose run d2 is no kill's target).

def _settlement2(fn: Callable[[dict[str, Any]], None]) -> Callable[[Scenario], None]:
    return lambda s: fn(s.entries[find(s, "diagnosisSettlement", round=2)].content)


# Round 2 is then left without its settlement: rule 14 fails too.
case("v3-rule11-settlement-round-not-its-runs", "d2 (round 2) is settled by a settlement of round 4",
     F((ST, "contractKept"), ACCOUNTED, ("kill 2 · d2", "resultSettledAndFinished")), scenario=_settlement2(lambda c: c.update(round=4)))


def _settle_twice(s: Scenario) -> None:
    i = find(s, "diagnosisSettlement", round=2)
    again = copy.deepcopy(s.entries[i])
    again.content["round"] = 4
    s.entries.insert(i + 1, again)


case("v3-rule11-settled-twice-in-two-rounds", "d2 settled by round 2's settlement and again by one of round 4",
     F((ST, "contractKept")), scenario=_settle_twice)
case("v3-rule11-judged-and-dropped", "e2a is both judged and dropped", F((ST, "contractKept")),
     scenario=_settlement2(lambda c: c.update(dropped=[{"experiment": "e2a", "reason": "flaky"}])))


def _judged_stranger(s: Scenario) -> None:
    _settlement2(lambda c: c["judged"]["experiments"].append({"id": "e9z", "verdict": "kept", "score": 0.5}))(s)
    s.entries[find(s, "runResult", run="d2")].content["outputs"]["e9z"] = 0.7


case("v3-rule11-judged-id-not-of-the-run", "the settlement judges e9z, neither d2's experiment nor chosen (though d2's "
     "outputs hold it)", F((ST, "contractKept")), scenario=_judged_stranger)
case("v3-rule11-judged-id-without-output", "e2b is judged, but d2's outputs hold no value for it",
     F((ST, "contractKept")),
     scenario=lambda s: s.entries[find(s, "runResult", run="d2")].content["outputs"].pop("e2b"))


def _chosen_beyond(s: Scenario) -> None:
    s.entries[find(s, "decision", name="selectDiagnosis", round=2)].content["output"]["chosen"] = ["e2a", "e2b", "e2c"]
    _settlement2(lambda c: c.update(dropped=[{"experiment": "e2c", "reason": "not run"}]))(s)


case("v3-rule11-chosen-id-dropped", "round 2 chose e2c too, which d2 does not run; the settlement drops it: sound", {},
     scenario=_chosen_beyond)


# §6.2 rule 12: nothing after the halt the study ends at (haltedAtExport).  As for an export after
# the halt (v2), every target's resultSettledAndFinished asks the study to end halted at export.

case("v3-rule12-stage-after-halt", "a stageOpen after the halt", F(HALTED, *ALL_RSF),
     scenario=lambda s: s.entries.append(Entry("stageOpen", {"stage": "proposal", "round": 4})))


def _run_after_halt(s: Scenario) -> None:
    a4 = run_entries("a4", "ablation", "c0", 3, ["e3b"])
    s.entries += [a4["plan"], a4["charge"], a4["start"], a4["result"]]


case("v3-rule12-run-after-halt", "a whole ablation run (plan, charge, start, result) after the halt",
     F(HALTED, *ALL_RSF), scenario=_run_after_halt)


# §6.2 rule 13: a "balance exhausted" halt leaves less than the dearest charge.

def _budget(n: float) -> Callable[[Scenario], None]:
    def edit(s: Scenario) -> None:
        s.budget = n
        s.entries[0].content["budget"] = n
    return edit


case("v3-rule13-a-whole-run-left", "balance exhausted with 10 left, a whole run's worth", F(HALTED, *ALL_RSF),
     scenario=_budget(60))


def _dear_first(s: Scenario) -> None:
    s.entries[find(s, "charge", run="d1")].content["amount"] = 20
    _budget(75)(s)


case("v3-rule13-less-than-the-dearest-run-left", "runs cost 20 and 10; the halt leaves 15, less than the dearest: "
     "sound", {}, scenario=_dear_first)


# §6.3 Controllers.

def _launch(f: Files, event_: str, pid: int) -> dict[str, Any]:
    return next(line for line in f["launches.jsonl"] if line["event"] == event_ and line["pid"] == pid)


case("v3-killed-pid-ended-before-the-kill", "the killed pid's only end is 50 ms before the kill: not the kill's",
     F((K1, "killDelivered")),
     files=lambda f: _launch(f, "end", FIRST_PID).update(at=rfc3339_ms(f["kills/1/kill.json"]["killSentEpoch"] - 0.05)))


def _resume_early(f: Files) -> None:
    launches = f["launches.jsonl"]
    start = _launch(f, "start", FIRST_PID + 1)
    end = _launch(f, "end", FIRST_PID)
    start["at"] = rfc3339_ms(f["kills/1/kill.json"]["killSentEpoch"] + 0.02)  # before the end, 50 ms after the kill
    launches.remove(start)
    launches.insert(launches.index(end), start)


# Both rules of "one at a time" (docs/contract.md): a start before the previous controller's end
# (exitedCleanly), a start after a kill before the killed controller's end (killDelivered).
case("v3-resume-before-the-killed-controller-ended", "the resumed controller started before the killed one's end",
     F((K1, "killDelivered"), (ST, "exitedCleanly")), files=_resume_early)


def _two_at_once(f: Files) -> None:
    launches = f["launches.jsonl"]
    at = launches.index(_launch(f, "end", FIRST_PID + 1))
    launches[at:at] = [{"event": "start", "pid": 5000, "at": rfc3339_ms(t(20.2)), "resume": True},
                       {"event": "end", "pid": 5000, "at": rfc3339_ms(t(20.6)), "code": 0, "signal": None}]


def _resumed_over(f: Files) -> None:
    _launch(f, "start", FIRST_PID + 1)["at"] = rfc3339_ms(f["kills/1/kill.json"]["killSentEpoch"] - 0.5)


# RESUMED_OVER: a start less than a second before the kill, while the killed controller still ran, was started over it.
case("v4-resume-started-over-the-killed-controller", "the resume's start is dated half a second before kill 1, while "
     "the killed controller ran (no start follows the kill, so its records after it are no resumed controller's)",
     F((K1, "killDelivered"), (ST, "exitedCleanly"), (K1, "killEvidence"), (D1, "resultSettledAndFinished")),
     files=_resumed_over)

case("v3-two-controllers-at-once", "a second controller started and ended while the first resumed one ran",
     F((ST, "exitedCleanly")), files=_two_at_once)


def _resume_late(f: Files) -> None:
    seq = _seq_of(f, "runResult", run="d1")
    assert next(line["seenAt"] for line in f["timeline.jsonl"] if line["seq"] == seq) == rfc3339_ms(t(seq) + 0.1)
    _launch(f, "start", FIRST_PID + 1)["at"] = rfc3339_ms(t(seq) + 0.12)


# The check that reads the record fails (docs/contract.md): the target's runResult, resultSettledAndFinished.
case("v3-record-seen-while-no-controller-ran", "d1's runResult was seen after the kill and before the resumed "
     "controller started: written by something that outlived the kill",
     F((D1, "resultSettledAndFinished")), files=_resume_late)


def _unseen(f: Files) -> None:
    seq = _seq_of(f, "runPlanned", run="d1")
    f["timeline.jsonl"] = [line for line in f["timeline.jsonl"] if line["seq"] != seq]


case("v3-record-before-the-kills-timeline-lacks", "d1's runPlanned, before every kill, is not in timeline.jsonl: "
     "sound (only records after a kill must have been seen from a resumed controller)", {}, files=_unseen)


def _unseen_after(f: Files) -> None:
    seq = _seq_of(f, "diagnosisSettlement", round=3)
    f["timeline.jsonl"] = [line for line in f["timeline.jsonl"] if line["seq"] != seq]


case("v3-record-after-kill-timeline-lacks", "round 3's settlement (after kill 2) is not in timeline.jsonl: written "
     "by something no console saw", F((D3, "resultSettledAndFinished")), files=_unseen_after)

def _before_kill_seen_late(f: Files) -> None:
    kill = f["kills/1/kill.json"]
    line = next(line for line in f["timeline.jsonl"] if line["seq"] == kill["beforeKillSeq"])
    line["seenAt"] = rfc3339_ms(kill["killSentEpoch"] + 1.0)


# beforeKillSeq is the last record the console had seen as it froze the controller: seen by the kill (§6.9).
case("v4-before-kill-seq-seen-after-the-kill", "the timeline says kill 1's beforeKillSeq was first seen a second "
     "after the kill (its trigger too: fired before it was seen)", F((K1, "killEvidence"), (ST, "killTriggered")),
     files=_before_kill_seen_late)

case("v3-final-controller-has-no-end", "the last end line is of an earlier pid (4243, code 0): the final controller "
     "(4244) has not ended, so the study has not finished", U((ST, "exitedCleanly"), *ALL_RSF),
     files=lambda f: f["launches.jsonl"][-1].update(pid=FIRST_PID + 1))


# §6.5 Evidence files; and the facts held twice (§6): kill.json and the window, ledger-at-kill.json.

def _no_since(f: Files) -> None:
    del f["kills/2/kill.json"]["since"]
    del f["kills/2/kill.json"]["sinceEpoch"]


case("v3-kill-json-without-since", "kill 2's kill.json has neither since nor sinceEpoch", F((K2, "killEvidence")),
     files=_no_since)
# The pid is held twice (kill.json, launches.jsonl): one kill.json does not give is held to nothing (§6.9).
case("v4-kill-json-without-its-pid", "kill 1's kill.json has no pid (and so no kill claims the end it made)",
     F((K1, "killDelivered"), (K1, "killEvidence"), (ST, "exitedCleanly")),
     files=lambda f: f["kills/1/kill.json"].pop("pid"))
case("v3-fired-line-without-run", "arms.jsonl's fired line does not name its run", F((ST, "killTriggered")),
     files=lambda f: f["arms.jsonl"][1].pop("run"))
case("v3-at-kill-float-for-int", "ledger-at-kill.json has round 1.0 where the ledger has 1", F((K1, "killEvidence")),
     files=lambda f: f["kills/1/ledger-at-kill.json"][4]["content"].update(round=1.0))
case("v3-at-kill-true-for-1", "ledger-at-kill.json has round true where the ledger has 1", F((K2, "killEvidence")),
     files=lambda f: f["kills/2/ledger-at-kill.json"][4]["content"].update(round=True))


def _extra_targets(f: Files) -> None:
    kill = f["kills/2/kill.json"]
    kill["targets"] += [
        {"run": run, "cell": "c2", "round": 2, "planSeq": 19, "startSeq": 21, "container": container(run)}
        for run in ("d2", "x1", "x2")
    ]


case("v3-listed-targets-beyond-in-flight", "kill.json lists d2, x1 and x2 beside the runs in flight: one ✗ with their "
     "count, no checks of their own", F((K2, "killEvidence")), files=_extra_targets)
case("v3-window-since-text-differs", "the window's since text is an hour after its sinceEpoch and kill.json's since",
     F((K2, "killEvidence")),
     files=lambda f: window(f, 2).update(since=rfc3339_ns(int((window(f, 2)["sinceEpoch"] + 3600) * 1e9))))
case("v3-window-extra-target", "the window has an entry for x9, which kill.json does not list", F((K2, "killEvidence")),
     files=lambda f: window(f, 2)["targets"].update(x9={"resultSeq": 35, "resultSeenEpoch": t(35) + 0.1}))

for _c in CORPUS:
    if _c.name == "window-entry-missing":
        # v3 §6: kill.json lists d3, the window file does not: the copies disagree.
        _c.expected = F((K2, "killEvidence"), (D3, "sameContainerNoRerun"), (D3, "resultSettledAndFinished"))
    if _c.name == "result-at-or-before-kill":
        # v3 §6.5: d1 was not in flight at beforeKillSeq 8, so it is a listed target beyond the runs in
        # flight: one ✗ of killEvidence, and no checks of its own; and the first diagnosis run is not
        # among the automatic kill's targets (killTriggered, docs/contract.md).
        # §7: with its result and round 1 not settled at seq 8, d1 is an unsettled target, whose window should
        # have waited for the settlement (seq 9).
        _c.expected = F((K1, "killEvidence"), (ST, "killTriggered"), (D1, "resultSettledAndFinished"))
    if _c.name == "replanned-after-kill":
        # v3 rule 14: the twin d1b's result is named by no settlement of round 1 (d1's is).
        _c.expected = F((D1, "chargedOnce"), ACCOUNTED)
    if _c.name == "settlement-names-other-run":
        # v3 rule 14: d1's result is named by no settlement of its round.
        _c.expected = F((ST, "contractKept"), (D1, "resultSettledAndFinished"), ACCOUNTED)
    if _c.name == "charge-without-plan":
        # v3 rule 14: d1x was started (runStarted) and never has a result.
        _c.expected = F((ST, "contractKept"), ACCOUNTED)


# §6.7 The expected end (research.json's expectEnd).

def _export(s: Scenario) -> None:
    s.entries.append(Entry("export", {"path": "export.json"}))


def _export_for_halt(s: Scenario) -> None:
    s.entries[find(s, "halt")] = Entry("export", {"path": "export.json"})


case("v3-expect-export-exported", "expectEnd export: the ledger ends halt, export; exit 0", {},
     scenario=_export, files=_research(expectEnd="export"))
case("v3-expect-export-without-halt", "expectEnd export: an export where the halt was; exit 0", {},
     scenario=_export_for_halt, files=_research(expectEnd="export"))
case("v3-expect-export-but-halted", "expectEnd export, but the study halted without exporting",
     F(HALTED, *ALL_RSF), files=_research(expectEnd="export"))
case("v3-expect-halt-said", "expectEnd halt, said outright: the seed's end", {}, files=_research(expectEnd="halt"))
case("v3-expect-halt-but-exported", "expectEnd halt, said outright, and an export follows the halt",
     F(HALTED, *ALL_RSF), scenario=_export, files=_research(expectEnd="halt"))
case("v3-expect-any-halt", "expectEnd any: halted at balance exhausted", {}, files=_research(expectEnd="any"))
case("v3-expect-any-export", "expectEnd any: halt, then export", {}, scenario=_export, files=_research(expectEnd="any"))
case("v3-expect-end-unknown", "expectEnd is none of halt, export, any", F(HALTED, *ALL_RSF),
     files=_research(expectEnd="sometimes"))
case("v3-expect-any-neither", "expectEnd any, but the ledger ends with neither a halt nor an export (exit 0)",
     F(HALTED, *ALL_RSF), scenario=lambda s: s.entries.pop(find(s, "halt")), files=_research(expectEnd="any"))


case("v3-expect-any-halt-after-export", "expectEnd any: the ledger ends export, then a halt that is not the full "
     "stop: the later of the two is what the study ends at", F(HALTED, *ALL_RSF),
     scenario=lambda s: (s.entries.insert(find(s, "halt"), Entry("export", {"path": "export.json"})),
                         s.entries.__setitem__(find(s, "halt"), Entry("halt", {"reason": "out of memory"}))),
     files=_research(expectEnd="any"))


# Found by an adversarial read of the judge (each once a crash, a false pass or a false failure).

def _cell_with_a_surrogate(f: Files) -> None:
    _edit_record(f, _seq_of(f, "runPlanned", run="a1"), lambda r: r["content"].update(object={"label": "at \ud83d"}))


case("v3-rule10-surrogate-in-a-cell", "a run's cell is an object holding a lone surrogate (what JavaScript writes "
     "for a cut emoji), in the ledger and both ledger-at-kill.json: accepted (it once crashed the plan index)", {},
     files=_cell_with_a_surrogate)


def _deep(levels: int) -> dict[str, Any]:
    deep: dict[str, Any] = {}
    v = deep
    for _ in range(levels):
        v["x"] = {}
        v = v["x"]
    return deep


def _deep_note(f: Files) -> None:
    _edit_record(f, 2, lambda r: r["content"]["output"].update(note=_deep(600)))


case("v3-a-record-nested-600-deep", "a decision's output nests 600 levels, in the ledger and both "
     "ledger-at-kill.json: the copies agree (their comparison once ran out of stack)", {}, files=_deep_note)


def _huge_amount(f: Files) -> None:
    _edit_record(f, _seq_of(f, "charge", run="a1"), lambda r: r["content"].update(amount=10**400))


case("v3-rule9-an-integer-beyond-a-double", "a1's charge amount is an integer literal of 401 digits (valid JSON, no "
     "double holds it): rule 9, no sum of the charges (it once crashed the accounts), and no dearest run to hold "
     "the full stop to (rule 13), which every target's end asks",
     F((ST, "contractKept"), (ST, "chargedEqualsStarts"), (ST, "haltedAtExport"), (D1, "resultSettledAndFinished"),
       (A2, "resultSettledAndFinished"), (D3, "resultSettledAndFinished")), files=_huge_amount)


def _unknown_kind_not_finite(f: Files) -> None:
    ledger = f["study/ledger.jsonl"]
    n = len(ledger)
    ledger.append({"seq": n + 1, "at": rfc3339_ms(t(n + 1)), "kind": f"{MARKER} \u001b[31m", "content": {"amount": 1e400}})
    kind = ledger[-1]["kind"]  # seen as it was written: the folder's two copies agree
    f["timeline.jsonl"].append({"seq": n + 1, "kind": kind, "at": rfc3339_ms(t(n + 1)), "seenAt": rfc3339_ms(t(n + 1) + 0.1)})
    f["launches.jsonl"][-1]["at"] = rfc3339_ms(t(n + 2))


case("v3-rule9-in-a-record-of-no-known-kind", "a record of a kind the contract does not name (its kind a study's "
     "free text) holds 1e400: rule 9, the kind not quoted, the line counted once",
     F((ST, "contractKept")), files=_unknown_kind_not_finite,
     details={(ST, "contractKept"): "rule 9, line 41: a record.amount is not finite"})


def _rewritten_after_seen(f: Files) -> None:
    seq = next(r["seq"] for r in f["study/ledger.jsonl"] if r["kind"] == "stageOpen")
    next(line for line in f["timeline.jsonl"] if line["seq"] == seq)["kind"] = "decision"


# §6.9: each record's kind, time and seq is held in the ledger and in timeline.jsonl; when they disagree the ledger
# was changed after the console saw it, whichever copy looks sound alone.
case("v4-the-ledger-changed-after-it-was-seen", "timeline.jsonl saw the first stageOpen's seq as a decision: the "
     "ledger's record is not the one a console saw", F((ST, "ledgerWellFormed")), files=_rewritten_after_seen)


def _seen_past_the_end(f: Files) -> None:
    n = len(f["study/ledger.jsonl"])
    f["timeline.jsonl"].append(dict(f["timeline.jsonl"][-1], seq=n + 1))


case("v4-a-record-seen-the-ledger-no-longer-holds", "timeline.jsonl saw a record past the ledger's last: the ledger "
     "lost a record after it was seen", F((ST, "ledgerWellFormed")), files=_seen_past_the_end)


def _die_after_its_result(f: Files) -> None:
    """a2's container dies a second after its result was seen, still in kill 2's window (d3 holds it open)."""
    name = container("a2")
    seen = window(f, 2)["targets"]["a2"]["resultSeenEpoch"]
    for action, when in (("die", seen + 1.02), ("destroy", seen + 1.03)):
        ns = round(when * 1e9)
        edit_events(f, 2, action, name, lambda e, ns=ns: e.update(time=ns // 10**9, timeNano=ns))
        for e in kill_events(f, 2)[0]:
            if e.get("Action") == action and e["Actor"]["Attributes"]["name"] == name:
                e["seenAt"] = rfc3339_ms(ns / 1e9 + 0.002)
    assert seen + 1.03 < window(f, 2)["untilEpoch"]


case("v3-die-after-the-result", "a2's result was written and seen before its container died: the study did not "
     "wait for its run (its window still open for d3)", F((A2, "sameContainerNoRerun")), files=_die_after_its_result)


def _one_kill_twice(f: Files) -> None:
    for name in [k for k in f if k.startswith("kills/2/")]:
        f[name.replace("kills/2/", "kills/3/")] = copy.deepcopy(f[name])


case("v3-one-kill-filed-twice", "kills/3/ is a copy of kills/2/: one controller, killed once, cannot be two kills",
     F((KILL3, "killDelivered")), files=_one_kill_twice)


# --- hostile and malformed files ---------------------------------------------------------------


@dataclass
class Hostile:
    """A sound folder with one file made hostile on disk (``prepare`` gets OUT)."""

    name: str
    prepare: Callable[[Path], None]
    failing: set[Key] = field(default_factory=set)  # checks that must not hold (at least these)


def _replace(out: Path, rel: str, make: Callable[[Path], None]) -> None:
    path = out / rel
    if path.exists() or path.is_symlink():
        path.unlink()
    make(path)


def _fifo(rel: str) -> Callable[[Path], None]:
    return lambda out: _replace(out, rel, lambda p: os.mkfifo(p))


def _link(rel: str, target: str) -> Callable[[Path], None]:
    return lambda out: _replace(out, rel, lambda p: os.symlink(target, p))


def _sparse(rel: str, size: int = 2 << 30) -> Callable[[Path], None]:
    def make(p: Path) -> None:
        with open(p, "wb") as fh:
            fh.write(MARKER.encode())
            fh.truncate(size)
    return lambda out: _replace(out, rel, make)


def _text(rel: str, text: str) -> Callable[[Path], None]:
    return lambda out: _replace(out, rel, lambda p: p.write_text(text))


def _secret_outside(out: Path) -> str:
    secret = out.parent / f"{out.name}-secret.json"
    secret.write_text(json.dumps({"trigger": MARKER, "targets": [MARKER]}))
    return str(secret)


def _link_out(rel: str) -> Callable[[Path], None]:
    return lambda out: _replace(out, rel, lambda p: os.symlink(_secret_outside(out), p))


def _dir(rel: str) -> Callable[[Path], None]:
    return lambda out: _replace(out, rel, lambda p: p.mkdir())


def _ledger_lines(lines: list[str]) -> Callable[[Path], None]:
    return _text("study/ledger.jsonl", "".join(line + "\n" for line in lines))


def _kill_folder_out(out: Path) -> None:
    """kills/1 moved out of OUT, and a symbolic link to it left in its place."""
    outside = out.parent / f"{out.name}-kill1"
    shutil.move(str(out / "kills" / "1"), outside)
    os.symlink(outside, out / "kills" / "1")


_M = json.dumps(MARKER)
HOSTILE: list[Hostile] = [
    Hostile("ledger-fifo", _fifo("study/ledger.jsonl"), {(ST, "ledgerWellFormed"), (ST, "contractKept")}),
    Hostile("ledger-dev-zero", _link("study/ledger.jsonl", "/dev/zero"), {(ST, "ledgerWellFormed")}),
    Hostile("ledger-link-out", _link_out("study/ledger.jsonl"), {(ST, "ledgerWellFormed")}),
    Hostile("ledger-sparse-2g", _sparse("study/ledger.jsonl"), {(ST, "ledgerWellFormed")}),
    Hostile("ledger-a-directory", _dir("study/ledger.jsonl"), {(ST, "ledgerWellFormed")}),
    Hostile("ledger-binary", _text("study/ledger.jsonl", MARKER + "\x00\x1b[31m" * 50 + "\n"), {(ST, "ledgerWellFormed")}),
    Hostile("kill-json-fifo", _fifo("kills/1/kill.json"), {(K1, "killEvidence"), (K1, "killDelivered")}),
    Hostile("kill-json-dev-zero", _link("kills/1/kill.json", "/dev/zero"), {(K1, "killEvidence")}),
    Hostile("kill-json-link-out", _link_out("kills/1/kill.json"), {(K1, "killEvidence")}),
    Hostile("kill-json-sparse-2g", _sparse("kills/1/kill.json"), {(K1, "killEvidence")}),
    Hostile("kill-json-a-list", _text("kills/1/kill.json", json.dumps([MARKER])), {(K1, "killEvidence")}),
    Hostile("kill-json-targets-object", _text("kills/1/kill.json", json.dumps(
        {"trigger": "auto", "at": MARKER, "pid": MARKER, "beforeKillSeq": MARKER, "targets": {"run": MARKER},
         "signalled": MARKER, "triggerSeq": [MARKER]})), {(K1, "killEvidence"), (K1, "killDelivered")}),
    Hostile("kill-json-target-strings", _text("kills/1/kill.json", json.dumps(
        {"trigger": "auto", "at": "2026-11-30T00:00:00.000Z", "pid": 1, "beforeKillSeq": 7, "signalled": True,
         "triggerSeq": 7, "targets": [MARKER, {"run": MARKER}, {"run": ["d1"]}]})), {(K1, "killEvidence")}),
    Hostile("snapshot-a-list", _text("kills/1/container-before.json", json.dumps([MARKER])),
            {(D1, "sameContainerNoRerun")}),
    Hostile("snapshot-entry-string", _text("kills/1/container-after-kill.json", json.dumps({container("d1"): MARKER})),
            {(D1, "sameContainerNoRerun")}),
    Hostile("snapshot-state-list", _text("kills/1/container-after-kill.json", json.dumps(
        {container("d1"): {"Id": [MARKER], "State": [MARKER]}})), {(D1, "sameContainerNoRerun")}),
    Hostile("window-a-list", _text("kills/1/container-events-window.json", json.dumps([MARKER])),
            {(D1, "sameContainerNoRerun"), (D1, "resultSettledAndFinished")}),
    Hostile("window-strings", _text("kills/1/container-events-window.json", json.dumps(
        {"sinceEpoch": MARKER, "untilEpoch": MARKER, "targets": [MARKER]})),
            {(D1, "sameContainerNoRerun"), (D1, "resultSettledAndFinished")}),
    Hostile("window-targets-strings", _text("kills/1/container-events-window.json", json.dumps(
        {"sinceEpoch": 1, "untilEpoch": 2, "targets": {"d1": {"resultSeq": MARKER, "resultSeenEpoch": [MARKER]}}})),
            {(D1, "sameContainerNoRerun"), (D1, "resultSettledAndFinished")}),
    Hostile("live-events-fifo", _fifo("kills/1/container-events-live.jsonl"), {(D1, "sameContainerNoRerun")}),
    Hostile("live-events-sparse-2g", _sparse("kills/1/container-events-live.jsonl"), {(D1, "sameContainerNoRerun")}),
    Hostile("live-events-garbage", _text("kills/1/container-events-live.jsonl",
                                         f"{MARKER}\n[{_M}]\n{{\"Action\": [{_M}]}}\n{{\"Action\": \"die\", \"timeNano\": {_M}}}\n"
                                         f"{{\"Action\": \"die\", \"timeNano\": 1, \"Actor\": [{_M}]}}\n{{\"gap\": {_M}}}\n"),
            {(D1, "sameContainerNoRerun")}),
    Hostile("readback-dev-zero", _link("kills/1/container-events.jsonl", "/dev/zero"), {(D1, "sameContainerNoRerun")}),
    Hostile("at-kill-link-out", _link_out("kills/1/ledger-at-kill.json"), {(K1, "killEvidence")}),
    Hostile("at-kill-an-object", _text("kills/1/ledger-at-kill.json", json.dumps({"seq": MARKER})), {(K1, "killEvidence")}),
    Hostile("at-kill-sparse-2g", _sparse("kills/1/ledger-at-kill.json"), {(K1, "killEvidence")}),
    Hostile("at-kill-deep", _text("kills/1/ledger-at-kill.json", "[" * 100_000 + _M), {(K1, "killEvidence")}),
    Hostile("launches-fifo", _fifo("launches.jsonl"), {(ST, "exitedCleanly"), (K1, "killDelivered")}),
    Hostile("launches-strings", _text("launches.jsonl", "".join(json.dumps(x) + "\n" for x in [
        {"event": "start", "pid": [MARKER]}, {"event": "end", "pid": {"x": MARKER}, "code": MARKER, "signal": MARKER},
        [MARKER], MARKER])), {(ST, "exitedCleanly"), (K1, "killDelivered")}),
    Hostile("arms-fifo", _fifo("arms.jsonl"), {(ST, "killTriggered")}),
    Hostile("arms-strings", _text("arms.jsonl", "".join(json.dumps(x) + "\n" for x in [
        {"event": "fired", "kill": MARKER, "run": [MARKER]}, {"event": "missed", "run": {"a": MARKER}, "detail": [MARKER]},
        MARKER])), {(ST, "killTriggered")}),
    Hostile("ledger-watch-fifo", _fifo("ledger-watch.jsonl"), {(ST, "ledgerWellFormed")}),
    Hostile("ledger-watch-strings", _text("ledger-watch.jsonl", json.dumps({"event": MARKER, "at": MARKER}) + "\n"),
            {(ST, "ledgerWellFormed")}),
    Hostile("research-list", _text("research.json", json.dumps([MARKER])), {(ST, "contractKept")}),
    Hostile("research-fifo", _fifo("research.json"), {(ST, "contractKept")}),
    Hostile("research-bad-ids", _text("research.json", json.dumps({"study": MARKER, "containerPrefix": [MARKER]})),
            {(ST, "contractKept")}),
    Hostile("kill-folder-link-out", lambda out: _kill_folder_out(out), {(ST, "killTriggered")}),
    Hostile("ledger-records-wrong-types", _ledger_lines([
        json.dumps({"seq": 1, "at": "x", "kind": "studyOpen", "content": {"budget": MARKER, "config": [MARKER]}}),
        json.dumps({"seq": 2, "at": "x", "kind": "runPlanned", "content": {"run": [MARKER], "round": {"r": MARKER},
                                                                           "experiments": MARKER}}),
        json.dumps({"seq": 3, "at": "x", "kind": "charge", "content": {"run": {"a": 1}, "amount": MARKER, "balance": [1]}}),
        json.dumps({"seq": 4, "at": "x", "kind": "runResult", "content": {"run": "d1", "exitCode": MARKER, "outputs": [MARKER]}}),
        json.dumps({"seq": 5, "at": "x", "kind": "diagnosisSettlement", "content": {"run": "d1", "round": [1],
                                                                                    "dropped": MARKER, "judged": [MARKER]}}),
        json.dumps({"seq": 6, "at": "x", "kind": "decision", "content": {"name": "selectDiagnosis", "round": {"a": 1},
                                                                         "output": [MARKER]}}),
        json.dumps({"seq": 7, "at": "x", "kind": "stageOpen", "content": {"stage": [MARKER], "round": [1]}}),
        json.dumps({"seq": 8, "at": "x", "kind": "halt", "content": {"reason": [MARKER]}}),
        json.dumps({"seq": 9, "at": [MARKER], "kind": {"k": MARKER}, "content": MARKER}),
    ]), {(ST, "contractKept")}),
]


# Contract v3 §6.5: details quote only validated values, never a study's free text, an unvalidated
# exit code or an action that is not in the story (it is named, but not with the file's bytes).

def _jsonl_edit(rel: str, fn: Callable[[list[Any]], None]) -> Callable[[Path], None]:
    def prepare(out: Path) -> None:
        path = out / rel
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        fn(lines)
        path.write_text("".join(json.dumps(v) + "\n" for v in lines))
    return prepare


def _in_both_recordings(fn: Callable[[list[Any]], None]) -> Callable[[Path], None]:
    live = _jsonl_edit("kills/1/container-events-live.jsonl", fn)
    back = _jsonl_edit("kills/1/container-events.jsonl", fn)

    def prepare(out: Path) -> None:
        live(out)
        back(out)
    return prepare


def _d1_die_code(lines: list[Any]) -> None:
    for e in lines:
        if e.get("Action") == "die" and e["Actor"]["Attributes"].get("name") == container("d1"):
            e["Actor"]["Attributes"]["exitCode"] = MARKER


def _d1_event(action: str) -> Callable[[list[Any]], None]:
    def add(lines: list[Any]) -> None:
        e = event(action, container("d1"), t(7.6))  # inside kill 1's window (sinceEpoch t(7.05), untilEpoch t(8.15))
        e["status"] = action
        lines.append(dict(e, seenAt=rfc3339_ms(t(7.602))))
    return add


def _halt_reason(lines: list[Any]) -> None:
    for r in lines:
        if r.get("kind") == "halt":
            r["content"]["reason"] = MARKER


HOSTILE += [
    Hostile("v3-die-exit-code-marker", _in_both_recordings(_d1_die_code), {(D1, "sameContainerNoRerun")}),
    Hostile("v3-unknown-action-marker", _in_both_recordings(_d1_event(MARKER)), {(D1, "sameContainerNoRerun")}),
    Hostile("v3-action-suffix-marker", _in_both_recordings(_d1_event("exec_start: " + MARKER)),
            {(D1, "sameContainerNoRerun")}),
    Hostile("v3-halt-reason-marker", _jsonl_edit("study/ledger.jsonl", _halt_reason), {(ST, "haltedAtExport")}),
]


# --- the per-study checks over records given whole (no evidence folder) --------------------------

from studymon.engine.contract.accounts import Accounts  # noqa: E402
from studymon.engine.contract.ledger import LedgerIssue, Record  # noqa: E402
from studymon.engine.contract.rules import RuleTally, is_int  # noqa: E402
from studymon.engine.evidence.records import LaunchEnd, LaunchStart, signal_name  # noqa: E402
from studymon.engine.judge.facts import Launches, LedgerFacts, StudyFacts  # noqa: E402
from studymon.engine.judge.study import (  # noqa: E402
    charged_equals_starts,
    contract_kept,
    exited_cleanly,
    halted_at_export,
    ledger_well_formed,
    results_accounted,
)
from studymon.engine.judge.verdict import SHOWN, Check  # noqa: E402


def study_checks(
    records: list[Record],
    issues: list[LedgerIssue],
    acc: Accounts,
    code: Any,
    signal: Any,
    ended: bool,
    contract: RuleTally | None = None,
    study: StudyFacts | None = None,
    ledger: LedgerFacts | None = None,
) -> list[Check]:
    """The per-study checks, in table order (without ``killTriggered``).

    Given only records and issues (a ledger read whole), the contract is
    checked over them without rule 4's names.
    """
    if ledger is None:
        ledger = LedgerFacts(len(records), records[-1].seq if records else 0, issues[: SHOWN + 1], len(issues))
    if study is None:
        study = StudyFacts(None, None)
    if contract is None:
        contract = RuleTally(study.container_prefix, study.id)
        for r in records:
            contract.add(r)
    launches = one_controller(code, signal, ended)
    return [
        ledger_well_formed(ledger),
        contract_kept(contract, study, ledger),
        halted_at_export(acc, ledger, study.expect_end, launches.finished),
        charged_equals_starts(acc, ledger),
        exited_cleanly(launches),
        results_accounted(acc, ledger, launches.finished),
    ]




def one_controller(code: Any, signal: Any, ended: bool) -> Launches:
    """One controller that ended so (or has not ended), for :func:`study_checks`."""
    launches = Launches(final=LaunchStart(1, 1.0, False))
    if ended:
        launches.final_end = LaunchEnd(1, 2.0, code if is_int(code) else None, signal_name(signal))
    return launches


# §7: what a kill at another point leaves unfinished, each class's story sound and broken.

def at_point(point: str, then: Callable[[Scenario], None] | None = None) -> Callable[[Scenario], None]:
    """One manual kill of d1 at ``point`` (KillSpec.at), and the scenario changed by ``then``."""
    def scenario(s: Scenario) -> None:
        s.kills = [KillSpec("d1", "manual", point)]
        if then is not None:
            then(s)
    return scenario


def _charged_again(s: Scenario) -> None:
    i = find(s, "charge", run="d1")
    s.entries.insert(i + 1, Entry("charge", {"run": "d1", "amount": COST}))
    s.budget += COST
    s.entries[0].content["budget"] = s.budget


def _settled_twice(s: Scenario) -> None:
    i = find(s, "diagnosisSettlement", round=1)
    s.entries.insert(i + 1, copy.deepcopy(s.entries[i]))


def _unrecorded_replaced(f: Files) -> None:
    """The resume removes the container that ran before its runStarted and starts the run in a new one."""
    name, fresh = container("d1"), "e" * 64
    add_event(f, 1, event("destroy", name, in_window(f, 1, 0.1)))
    for action, at in (("create", 0.11), ("start", 0.12)):
        e = event(action, name, in_window(f, 1, at))
        e["Actor"]["ID"] = e["id"] = fresh
        add_event(f, 1, e)
    edit_events(f, 1, "die", name, lambda e: e["Actor"].update(ID=fresh) or e.update(id=fresh))


def _run_again(f: Files) -> None:
    """d1's container made and started again in the window: its result is measured anew."""
    name = container("d1")
    add_event(f, 1, event("create", name, in_window(f, 1, 0.2)))
    add_event(f, 1, event("start", name, in_window(f, 1, 0.21)))


def _omit_targets(f: Files) -> None:
    f["kills/1/kill.json"]["targets"] = []


def _charged_started_before(f: Files) -> None:
    """d1's container started as the controller was frozen, but the snapshot at the kill does not show it: its
    create and start come before the window (the live recording, which starts earlier, holds them), its die in it."""
    name, since = container("d1"), f["kills/1/kill.json"]["sinceEpoch"]
    live, back = kill_events(f, 1)
    for at, action in ((since - 0.004, "create"), (since - 0.002, "start")):
        e = next(e for e in live if e["Action"] == action and e["Actor"]["Attributes"]["name"] == name)
        ns = round(at * 1e9)
        e.update(time=ns // 1_000_000_000, timeNano=ns, seenAt=rfc3339_ms(at + 0.001))
    back[:] = [e for e in back if not (e["Action"] in ("create", "start") and e["Actor"]["Attributes"]["name"] == name)]


# The sound story of each point is tests/test_corpus.py's test_each_point_s_sound_story_holds.
case("v3-point-charged-twice", "killed after d1's charge; the resume charges it again",
     F((ST, "contractKept"), (ST, "chargedEqualsStarts"), (D1, "chargedOnce")), scenario=at_point("charge", _charged_again))
case("v3-point-unrecorded-replaced", "killed after d1's container started; the resume removes it and runs d1 anew",
     F((D1, "sameContainerNoRerun")), scenario=at_point("started"), files=_unrecorded_replaced)
case("v3-point-unsettled-settled-twice", "killed after d1's result; the resume settles round 1 twice",
     F((ST, "contractKept"), (ST, "resultsAccounted"), (D1, "resultSettledAndFinished")),
     scenario=at_point("runResult", _settled_twice))
case("v3-point-unsettled-run-again", "killed after d1's result; the resume runs d1's container again",
     F((D1, "sameContainerNoRerun")), scenario=at_point("runResult"), files=_run_again)
case("v4-point-unsettled-filed-under-another-name", "killed after d1's result; container-after-kill.json files "
     "d1's exited container under its name, its Name another", F((D1, "sameContainerNoRerun")),
     scenario=at_point("runResult"),
     files=lambda f: f["kills/1/container-after-kill.json"].update({D1_NAME: {
         "Id": container_id(D1_NAME), "Name": "/" + D1_NAME + "y" * 20,
         "State": {"Running": False, "Status": "exited", "ExitCode": 0}}}))
case("v3-point-charged-run-twice", "killed after d1's charge; its container is started twice in the window",
     F((D1, "sameContainerNoRerun")), scenario=at_point("charge"), files=_run_again)
case("v4-point-charged-started-before-the-kill", "killed after d1's charge; its container started just before the "
     "window, which the snapshot at the kill does not show, and died in it", F((D1, "sameContainerNoRerun")),
     scenario=at_point("charge"), files=_charged_started_before)
case("v3-point-charged-omitted", "killed after d1's charge; kill.json lists no target",
     F((K1, "killEvidence")), scenario=at_point("charge"), files=_omit_targets)


# Failures whose proofs no case gave (docs/mutation.md, run 7's survivors): each a way of being wrong, with its
# proof pinned by tests/test_proofs.py and its verdicts held to the oracle's by tests/test_corpus_oracle.py.

def _kill_json(f: Files, n: int = 1) -> dict[str, Any]:
    return f[f"kills/{n}/kill.json"]


def _exit_shown(state: dict[str, Any], code: int, finished: str) -> None:
    state.update(Running=False, Status="exited", ExitCode=code, FinishedAt=finished)


def _exit_differs(f: Files) -> None:
    _exit_shown(f["kills/1/container-after-kill.json"][D1_NAME]["State"], 0, "2026-11-30T00:53:27.200000000Z")
    _exit_shown(f["kills/1/container-before-resume.json"][D1_NAME]["State"], 1, "2026-11-30T00:53:27.900000000Z")


case("v4-kill-json-without-pid", "kill 1's kill.json gives no pid: nothing holds it to a controller",
     F((K1, "killDelivered"), (K1, "killEvidence"), (ST, "exitedCleanly")),
     files=lambda f: _kill_json(f).pop("pid"))
case("v4-kill-json-target-s-cell-and-round-wrong", "kill 1's target d1 is given another cell and round than its "
     "runPlanned's", F((K1, "killEvidence")), files=lambda f: _kill_json(f)["targets"][0].update(cell="zeta", round=9))
case("v4-die-without-exit-code", "d1's die in kill 1's window has no exitCode",
     F((D1, "sameContainerNoRerun")),
     files=lambda f: edit_events(f, 1, "die", D1_NAME, lambda e: e["Actor"]["Attributes"].pop("exitCode", None)))
case("v4-point-charged-given-a-container", "killed after d1's charge; kill.json gives d1, charged but not started, "
     "its container", F((K1, "killEvidence"), (D1, "sameContainerNoRerun")), scenario=at_point("charge"),
     files=lambda f: _kill_json(f)["targets"][0].update(container=D1_NAME))
case("v4-outcome-missing", "the final controller exited 0 and outcome.json is not there",
     F((ST, "exitedCleanly")), files=lambda f: f.pop("outcome.json"))
case("v4-inspect-without-its-id", "container-before.json's entry for d1 has no Id",
     F((D1, "sameContainerNoRerun")), files=lambda f: f["kills/1/container-before.json"][D1_NAME].pop("Id"))
case("v4-snapshots-tell-two-exits", "the snapshot after the kill shows d1 exited 0, the one before the resume exited "
     "1 later", F((D1, "sameContainerNoRerun")), files=_exit_differs)
case("v4-snapshot-running-after-it-exited", "the snapshot after the kill shows d1 exited, the one before the resume "
     "running again, with the same Id and StartedAt", F((D1, "sameContainerNoRerun")),
     files=lambda f: _exit_shown(f["kills/1/container-after-kill.json"][D1_NAME]["State"], 0,
                                 "2026-11-30T00:53:27.200000000Z"))
case("v4-arms-fired-twice", "arms.jsonl says kill 1 fired a second time, with no point armed",
     F((ST, "killTriggered")), files=lambda f: f["arms.jsonl"].append(dict(f["arms.jsonl"][1],
                                                                             at="2026-11-30T00:53:27.300Z")))
case("v4-arms-back-in-time", "arms.jsonl's fired line is dated before its arm line", F((ST, "killTriggered")),
     files=lambda f: f["arms.jsonl"][1].update(at="2026-11-30T00:53:19.000Z"))
case("v4-result-seen-late-in-the-window-file", "container-events-window.json says d1's result was seen 1.4 s after "
     "timeline.jsonl saw it, past the window's end", F((K1, "killEvidence")),
     files=lambda f: f["kills/1/container-events-window.json"]["targets"]["d1"].update(resultSeenEpoch=1796000009.5))
case("v4-in-flight-target-started-in-its-window", "d1, running at the kill, has a start of its container in the "
     "window", F((D1, "sameContainerNoRerun")),
     files=lambda f: add_event(f, 1, event("start", D1_NAME, in_window(f, 1, 0.3))))
case("v4-point-charged-without-its-snapshot-after-the-kill", "killed after d1's charge; container-after-kill.json "
     "is not there", F((K1, "killEvidence"), (D1, "sameContainerNoRerun")), scenario=at_point("charge"),
     files=lambda f: f.pop("kills/1/container-after-kill.json"))


# Ways to fail a check that no case took (tests/test_corpus_reach.py lists those still untaken; docs/mutation.md,
# run 8): each a way of being wrong, its proof pinned by tests/test_proofs.py and its verdicts held to the oracle's.

def _ledger_record(f: Files, kind: str, **match: Any) -> dict[str, Any]:
    return next(r for r in f["study/ledger.jsonl"]
                if r["kind"] == kind and all(r["content"].get(k) == v for k, v in match.items()))


case("v4-launches-line-not-json", "launches.jsonl ends with a line that is not JSON",
     F((ST, "exitedCleanly"), (K1, "killDelivered"), (K2, "killDelivered")),
     files=lambda f: f["launches.jsonl"].append("not json"))
case("v4-launches-empty", "launches.jsonl holds no line: no controller is known to have started or ended",
     F((ST, "exitedCleanly"), (K1, "killDelivered"), (K1, "killEvidence"), (D1, "resultSettledAndFinished"),
       (K2, "killDelivered"), (K2, "killEvidence"), (A2, "resultSettledAndFinished"), (D3, "resultSettledAndFinished")),
     files=lambda f: f["launches.jsonl"].clear())
case("v4-research-container-prefix-not-a-text", "research.json's containerPrefix is a number: the study's containers "
     "cannot be named", F((ST, "contractKept"), (K1, "killEvidence"), (D1, "sameContainerNoRerun"), (K2, "killEvidence"),
                          (A2, "sameContainerNoRerun"), (D3, "sameContainerNoRerun")),
     files=lambda f: f["research.json"].update(containerPrefix=5))
case("v4-research-without-study-id", "research.json names no study", F(
     (ST, "contractKept"), (K1, "killEvidence"), (D1, "sameContainerNoRerun"), (K2, "killEvidence"),
     (A2, "sameContainerNoRerun"), (D3, "sameContainerNoRerun")), files=lambda f: f["research.json"].pop("study"))
case("v4-before-kill-seq-past-the-ledger", "kill 1's beforeKillSeq is past the ledger's last seq",
     F((ST, "killTriggered"), (K1, "killEvidence")), files=lambda f: _kill_json(f).update(beforeKillSeq=10_000))
case("v4-trigger-seq-after-before-kill-seq", "kill 1's triggerSeq comes after its beforeKillSeq",
     F((ST, "killTriggered"), (K1, "killEvidence")),
     files=lambda f: _kill_json(f).update(triggerSeq=_kill_json(f)["beforeKillSeq"] + 1))
case("v4-timeline-line-not-json", "timeline.jsonl ends with a line that is not JSON",
     F((ST, "ledgerWellFormed"), (K1, "killEvidence"), (K2, "killEvidence")),
     files=lambda f: f["timeline.jsonl"].append("{oops"))
case("v4-fired-from-seq-not-a-seq", "arms.jsonl's fired line gives fromSeq as a text", F((ST, "killTriggered")),
     files=lambda f: f["arms.jsonl"][1].update(fromSeq="x"))


def _d1_state(f: Files, file: str) -> dict[str, Any]:
    return f[f"kills/1/{file}"][D1_NAME]["State"]


case("v4-kill-json-missing", "kills/1/ holds no kill.json", F((ST, "exitedCleanly"), (ST, "killTriggered"),
     (K1, "killDelivered"), (K1, "killEvidence")), files=lambda f: f.pop("kills/1/kill.json"))
case("v4-arms-missing", "arms.jsonl is not there, and kill 1 was automatic", F((ST, "killTriggered")),
     files=lambda f: f.pop("arms.jsonl"))
case("v4-fired-kill-a-text", "arms.jsonl's fired line names its kill by a text", F((ST, "killTriggered")),
     files=lambda f: f["arms.jsonl"][1].update(kill="one"))
case("v4-fired-point-not-a-point", "arms.jsonl's fired line names no kill point", F((ST, "killTriggered")),
     files=lambda f: f["arms.jsonl"][1].update(point="nowhere:at-all"))
case("v4-ledger-empty", "the ledger holds no record", F(
     (ST, "ledgerWellFormed"), (ST, "contractKept"), (ST, "haltedAtExport"), (ST, "chargedEqualsStarts"),
     (ST, "killTriggered"), (K1, "killEvidence"), (K2, "killEvidence")), files=lambda f: f["study/ledger.jsonl"].clear())
case("v4-snapshot-without-started-at", "container-before.json's d1 has no StartedAt", F((D1, "sameContainerNoRerun")),
     files=lambda f: _d1_state(f, "container-before.json").pop("StartedAt"))
case("v4-in-flight-target-not-running-at-the-kill", "container-before.json shows d1, in flight, created and not "
     "running", F((D1, "sameContainerNoRerun")),
     files=lambda f: _d1_state(f, "container-before.json").update(Running=False, Status="created"))
case("v4-target-s-container-another", "kill.json gives d1 another container than the study's name for it",
     F((K1, "killEvidence"), (D1, "sameContainerNoRerun")),
     files=lambda f: f["kills/1/kill.json"]["targets"][0].update(container="inforsi-s-zz"))
case("v4-round-a-text", "d1's runPlanned gives its round as a text", F(
     (ST, "contractKept"), (ST, "resultsAccounted"), (K1, "killEvidence"), (D1, "resultSettledAndFinished"),
     (K2, "killEvidence"), ("kill 2 · d1", "sameContainerNoRerun"), ("kill 2 · d1", "resultSettledAndFinished")),
     files=lambda f: _ledger_record(f, "runPlanned", run="d1")["content"].update(round="one"))
case("v4-experiments-not-a-list", "d1's runPlanned gives its experiments as a text", F(
     (ST, "contractKept"), (K1, "killEvidence"), (D1, "resultSettledAndFinished"), (K2, "killEvidence")),
     files=lambda f: _ledger_record(f, "runPlanned", run="d1")["content"].update(experiments="e1a"))
case("v4-window-targets-a-number", "container-events-window.json's targets is a number", F(
     (ST, "killTriggered"), (K1, "killEvidence"), (D1, "sameContainerNoRerun"), (D1, "resultSettledAndFinished")),
     files=lambda f: f["kills/1/container-events-window.json"].update(targets=5))


def _destroyed_undied(f: Files) -> None:
    drop_events(f, 1, "die", D1_NAME)
    add_event(f, 1, event("destroy", D1_NAME, in_window(f, 1, 0.5)))


def _result_twice(f: Files) -> None:
    ledger = f["study/ledger.jsonl"]
    r = _ledger_record(f, "runResult", run="d1")
    ledger.insert(ledger.index(r) + 1, copy.deepcopy(r))


def _started_in_another(f: Files) -> None:
    starts = [r for r in f["study/ledger.jsonl"] if r["kind"] == "runStarted" and r["content"]["run"] == "d1"]
    starts[-1]["content"]["container"] = "inforsi-s-zz"


case("v4-launches-no-end-of-the-killed-controller", "launches.jsonl has no end line for the controller kill 1 killed",
     F((ST, "exitedCleanly"), (K1, "killDelivered")), files=lambda f: f["launches.jsonl"].pop(1))
case("v4-before-kill-seq-before-the-point-s-moment", "kill 1's beforeKillSeq is 6, before its point's moment (seq 7)",
     F((ST, "killTriggered"), (K1, "killEvidence"), (D1, "chargedOnce")),
     files=lambda f: f["kills/1/kill.json"].update(beforeKillSeq=6))
case("v4-fired-run-not-an-id", "arms.jsonl's fired line names a run that is no run id", F((ST, "killTriggered")),
     files=lambda f: f["arms.jsonl"][1].update(run="Not An Id"))
case("v4-ledger-watch-past-its-cap", "ledger-watch.jsonl holds a line of 2 MiB, past what the console writes",
     F((ST, "ledgerWellFormed")), files=lambda f: f.update({"ledger-watch.jsonl": ["x" * (2 << 20)]}))
case("v4-paused-in-its-window", "d1 is paused in kill 1's window", F((D1, "sameContainerNoRerun")),
     files=lambda f: add_event(f, 1, event("pause", D1_NAME, in_window(f, 1, 0.2))))
case("v4-destroyed-without-its-die", "d1's die is not in kill 1's window, its destroy is", F((D1, "sameContainerNoRerun")),
     files=_destroyed_undied)
case("v4-another-container-s-create-in-one-recording", "a create of another container of the study is in the live "
     "recording of kill 1 and not in the one read back", F((D1, "sameContainerNoRerun")),
     files=lambda f: add_event(f, 1, event("create", container("x9"), in_window(f, 1, 0.4)), readback=False))
case("v4-result-twice", "d1's runResult is written twice", F(
     (ST, "ledgerWellFormed"), (ST, "contractKept"), (ST, "resultsAccounted"), (D1, "sameContainerNoRerun"),
     (D1, "resultSettledAndFinished"), (K2, "killEvidence")), files=_result_twice)
case("v4-result-missing", "d1 has no runResult", F(
     (ST, "ledgerWellFormed"), (ST, "contractKept"), (ST, "resultsAccounted"), (K1, "killEvidence"),
     (D1, "sameContainerNoRerun"), (D1, "resultSettledAndFinished"), (K2, "killEvidence"),
     ("kill 2 · d1", "sameContainerNoRerun"), ("kill 2 · d1", "resultSettledAndFinished")),
     files=lambda f: f["study/ledger.jsonl"].remove(_ledger_record(f, "runResult", run="d1")))
case("v4-select-diagnosis-output-a-number", "round 1's selectDiagnosis gives its output as a number", F(
     (ST, "contractKept"), (K1, "killEvidence"), (D1, "resultSettledAndFinished"), (K2, "killEvidence")),
     files=lambda f: _ledger_record(f, "decision", name="selectDiagnosis", round=1)["content"].update(output=5))
case("v4-settlement-judged-a-number", "round 1's settlement gives judged as a number", F(
     (ST, "contractKept"), (D1, "resultSettledAndFinished"), (K2, "killEvidence")),
     files=lambda f: _ledger_record(f, "diagnosisSettlement", round=1)["content"].update(judged=5))
case("v4-point-charged-started-in-another-container", "killed after d1's charge; its runStarted after the kill names "
     "another container", F((ST, "contractKept"), (D1, "sameContainerNoRerun")), scenario=at_point("charge"),
     files=_started_in_another)


def _running_with_kill_2_s_window_open(f: Files) -> None:
    f["launches.jsonl"].pop()  # the last controller runs still: no end line, no outcome
    f.pop("outcome.json")
    f.pop("kills/2/container-events-window.json")


case("v4-running-with-a-window-open", "the last controller runs still, and kill 2's window is open (no window file "
     "yet): what the study may still write is not judged", U(
         (ST, "exitedCleanly"), (D1, "resultSettledAndFinished"), (A2, "sameContainerNoRerun"),
         (A2, "resultSettledAndFinished"), (D3, "sameContainerNoRerun"), (D3, "resultSettledAndFinished")),
     files=_running_with_kill_2_s_window_open)


def _timeline_line_again(f: Files, **changed: Any) -> None:
    f["timeline.jsonl"].insert(3, dict(copy.deepcopy(f["timeline.jsonl"][2]), **changed))


case("v4-seen-before-any-controller-started", "timeline.jsonl saw seq 1 before launches.jsonl's first start",
     F((ST, "ledgerWellFormed")), files=lambda f: f["timeline.jsonl"][0].update(seenAt="2026-11-30T00:53:19.000Z"))
case("v4-seen-twice", "timeline.jsonl has seq 3's line twice", F((ST, "ledgerWellFormed")),
     files=_timeline_line_again)
case("v4-seen-as-another-record", "timeline.jsonl saw seq 3 a second time, as a charge", F((ST, "ledgerWellFormed")),
     files=lambda f: _timeline_line_again(f, kind="charge"))


def _launch_line_again(f: Files, i: int, at: int, **changed: Any) -> None:
    f["launches.jsonl"].insert(at, dict(copy.deepcopy(f["launches.jsonl"][i]), **changed))


def _timeline_swapped(f: Files) -> None:
    t = f["timeline.jsonl"]
    t[3], t[4] = t[4], t[3]


case("v4-launches-start-twice", "launches.jsonl starts the first controller twice", F((ST, "exitedCleanly")),
     files=lambda f: _launch_line_again(f, 0, 1))
case("v4-launches-end-of-a-pid-never-started", "launches.jsonl ends a pid it never started", F((ST, "exitedCleanly")),
     files=lambda f: _launch_line_again(f, 1, 2, pid=999))
case("v4-machine-missing", "machine.jsonl is not there, though controllers started", F((ST, "exitedCleanly")),
     files=lambda f: f.pop("machine.jsonl"))
case("v4-outcome-not-json", "outcome.json is not JSON", F((ST, "exitedCleanly")),
     files=lambda f: f.update({"outcome.json": b"{x"}))
case("v4-timeline-out-of-order", "timeline.jsonl has seqs 4 and 5 the other way round", F(
     (ST, "ledgerWellFormed"), (K1, "killEvidence"), (K2, "killEvidence")), files=_timeline_swapped)
case("v4-ledger-at-kill-not-json", "kill 1's ledger-at-kill.json is not JSON", F((ST, "killTriggered"), (K1, "killEvidence")),
     files=lambda f: f.update({"kills/1/ledger-at-kill.json": b"[{"}))
case("v4-seen-study-open-at-another-time", "timeline.jsonl saw seq 1 with another time than the ledger's studyOpen has",
     F((ST, "ledgerWellFormed")), files=lambda f: f["timeline.jsonl"][0].update(at="2026-11-30T00:53:20.900Z"))
case("v4-ledger-missing", "the study finished, and study/ledger.jsonl is not there", F(
     (ST, "ledgerWellFormed"), (ST, "contractKept"), (ST, "haltedAtExport"), (ST, "chargedEqualsStarts"),
     (ST, "resultsAccounted"), (ST, "killTriggered"), (K1, "killEvidence"),
     *((scope, check) for scope in (D1, A2, D3) for check in ("sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished")),
     (K2, "killEvidence")), files=lambda f: f.pop("study/ledger.jsonl"))


def _points_named(f: Files, kill_json_point: str = "after:runStarted/diagnosis") -> None:
    """arms.jsonl as today's console writes it: each line names its point, the fired one counts from seq 0; and
    kill.json names the point it fired at (``kill_json_point``)."""
    for line in f["arms.jsonl"]:
        line["point"] = "after:runStarted/diagnosis"
    f["arms.jsonl"][1]["fromSeq"] = 0
    f["kills/1/kill.json"]["point"] = kill_json_point


def _running(f: Files) -> None:
    f["launches.jsonl"].pop()  # the last controller runs still: no end line, no outcome
    f.pop("outcome.json")


def _running_cut_after(kind: str, **match: Any) -> Callable[[Files], None]:
    """The study runs still, and has written its ledger up to the first ``kind`` record matching ``match``."""
    def cut(f: Files) -> None:
        _running(f)
        ledger = f["study/ledger.jsonl"]
        last = ledger.index(_ledger_record(f, kind, **match))
        del ledger[last + 1:], f["timeline.jsonl"][last + 1:]
    return cut


def _no_kill(s: Scenario) -> None:
    s.kills = []


def _many_in_flight(s: Scenario) -> None:
    """70 ablation runs started before d1, each with its result after it: more in flight at the kill than the judge
    follows one by one (TARGETS_PER_KILL)."""
    runs = [run_entries(f"x{n}", "ablation", "c9", 1, ["e1a"]) for n in range(70)]
    i = find(s, "runStarted", run="d1")
    s.entries[i:i] = [r[part] for r in runs for part in ("plan", "charge", "start")]
    j = find(s, "runResult", run="d1")
    s.entries[j + 1:j + 1] = [r["result"] for r in runs]
    s.budget += 70 * COST
    s.entries[0].content["budget"] = s.budget
    s.kills = [KillSpec("d1", "manual")]


case("v4-kill-json-without-before-kill-seq", "kill 1's kill.json gives no beforeKillSeq: its point's moment is not held "
     "to it, and no target is told of", F((ST, "killTriggered"), (K1, "killEvidence")),
     files=lambda f: _kill_json(f).pop("beforeKillSeq"))
case("v4-kill-json-names-another-point", "kill.json names after:charge, arms.jsonl fired at after:runStarted/diagnosis",
     F((ST, "killTriggered")), files=lambda f: _points_named(f, "after:charge"))
case("v4-resumed-as-a-fresh-start", "launches.jsonl's second controller starts with resume false, after one had run",
     F((ST, "exitedCleanly")), files=lambda f: f["launches.jsonl"][2].update(resume=False))
case("v4-outcome-says-the-final-controller-failed", "outcome.json says code 1, though it is written only for an exit 0",
     F((ST, "exitedCleanly")), files=lambda f: f.update({"outcome.json": {"code": 1, "signal": None}}))
case("v4-outcome-written-for-a-failed-controller", "the final controller exited 1, and outcome.json says 0",
     F((ST, "exitedCleanly")), files=lambda f: (f["launches.jsonl"][-1].update(code=1),
                                               f.update({"outcome.json": {"code": 0, "signal": None}})))
case("v4-machine-line-not-a-snapshot", "machine.jsonl's line is not a snapshot of the machine", F((ST, "exitedCleanly")),
     files=lambda f: f.update({"machine.jsonl": [{"pid": "x"}]}))
case("v4-oom-without-its-die", "d1 has an oom in kill 1's window and no die", F((D1, "sameContainerNoRerun")),
     files=lambda f: (drop_events(f, 1, "die", D1_NAME), add_event(f, 1, event("oom", D1_NAME, in_window(f, 1, 0.3)))))
case("v4-running-charged-not-started", "a study never killed runs still, d1 charged and not started yet: what it may "
     "still write is not judged", U((ST, "haltedAtExport"), (ST, "chargedEqualsStarts"), (ST, "exitedCleanly")),
     scenario=_no_kill, files=_running_cut_after("charge", run="d1"))
case("v4-more-in-flight-than-followed", "70 runs in flight at kill 1, more than the judge follows one by one",
     F((K1, "killEvidence")), scenario=_many_in_flight)

HOSTILE += [
    Hostile("timeline-fifo", _fifo("timeline.jsonl"), {(ST, "ledgerWellFormed"), (K1, "killEvidence")}),
    Hostile("machine-fifo", _fifo("machine.jsonl"), {(ST, "exitedCleanly")}),
]


def _awaiting_resume(n: int) -> Callable[[Files], None]:
    """The study killed by kill ``n`` and not resumed yet: the ledger as it stood at the kill, no controller after
    it, kill ``n``'s window open (its recording up to the kill) and no later kill."""
    def cut(f: Files) -> None:
        folder = f"kills/{n}/"
        kill = f[folder + "kill.json"]
        seq = kill["beforeKillSeq"]
        del f["study/ledger.jsonl"][seq:], f["timeline.jsonl"][seq:], f["launches.jsonl"][2 * n:]
        f.pop("outcome.json")
        for later in [rel for rel in f if rel.startswith("kills/") and int(rel.split("/")[1]) > n]:
            f.pop(later)
        if "arms.jsonl" in f:
            f["arms.jsonl"] = [a for a in f["arms.jsonl"] if a.get("kill", 0) <= n]
        for name in ("container-before-resume.json", "container-events.jsonl", "container-events-window.json"):
            f.pop(folder + name)
        live = folder + "container-events-live.jsonl"
        f[live] = [e for e in f[live] if ev_time(e) <= kill["killSentEpoch"] + 0.05]
    return cut


def _only_opened(s: Scenario) -> None:
    s.kills = []
    del s.entries[2:]


def _halted_unheld(s: Scenario) -> None:
    s.entries[0].content.pop("budget")
    s.entries.insert(1, Entry("halt", {"reason": "balance exhausted"}))


case("v4-killed-not-resumed-yet", "killed at kill 2 and not resumed yet: what the resume may still write is not judged",
     U((ST, "haltedAtExport"), (ST, "exitedCleanly"), (ST, "resultsAccounted"), (D1, "resultSettledAndFinished"),
       (A2, "sameContainerNoRerun"), (A2, "resultSettledAndFinished"), (D3, "sameContainerNoRerun"),
       (D3, "resultSettledAndFinished")), files=_awaiting_resume(2))
case("v4-killed-at-its-point-not-resumed-yet", "killed automatically at kill 1 and not resumed yet",
     U((ST, "haltedAtExport"), (ST, "exitedCleanly"), (ST, "resultsAccounted"), (D1, "sameContainerNoRerun"),
       (D1, "resultSettledAndFinished")), files=_awaiting_resume(1))
case("v4-fired-without-from-seq", "arms.jsonl's fired line names its point and gives no fromSeq to count it from",
     F((ST, "killTriggered")), files=lambda f: (_points_named(f), f["arms.jsonl"][1].pop("fromSeq")))
case("v4-halt-first-without-a-budget", "a full stop right after a studyOpen that gives no budget: rule 13 cannot be "
     "held", F((ST, "contractKept"), (ST, "haltedAtExport"), (ST, "chargedEqualsStarts"), (D1, "resultSettledAndFinished"),
               (A2, "resultSettledAndFinished"), (D3, "resultSettledAndFinished")), scenario=_halted_unheld)
case("v4-no-study-id-and-no-run", "research.json names no study, and the ledger holds no run: rule 7 cannot be checked",
     F((ST, "contractKept"), (ST, "haltedAtExport")), scenario=_only_opened,
     files=lambda f: f["research.json"].pop("study"))


def _capture_left_out(n: int) -> Callable[[Files], None]:
    """:func:`_awaiting_resume`, with the console dead in the middle of kill ``n``'s capture: no ledger-at-kill.json
    and no container-after-kill.json yet (the resume writes them before it starts the controller)."""
    def cut(f: Files) -> None:
        _awaiting_resume(n)(f)
        f.pop(f"kills/{n}/ledger-at-kill.json")
        f.pop(f"kills/{n}/container-after-kill.json")
    return cut




def _capture_left_out_resumed(f: Files) -> None:
    """Killed at kill 1 with its capture left out, and a controller started since without writing it: it runs still."""
    _capture_left_out(1)(f)
    f["launches.jsonl"].append({"event": "start", "pid": FIRST_PID + 1, "at": rfc3339_ms(t(7) + 0.3), "resume": True})


case("v4-just-started", "a study never killed, just started: its ledger is empty, nothing is judged yet", U(
     (ST, "ledgerWellFormed"), (ST, "haltedAtExport"), (ST, "chargedEqualsStarts"), (ST, "exitedCleanly")),
     scenario=_no_kill, files=lambda f: (_running(f), f["study/ledger.jsonl"].clear(), f["timeline.jsonl"].clear()))
case("v4-capture-left-out-not-resumed-yet", "killed at kill 1, the console died in the middle of its capture, and the "
     "study is not resumed yet: the resume writes what is missing", U(
         (ST, "haltedAtExport"), (ST, "exitedCleanly"), (ST, "resultsAccounted"), (ST, "killTriggered"),
         (K1, "killEvidence"), (D1, "sameContainerNoRerun"), (D1, "resultSettledAndFinished")),
     files=_capture_left_out(1))


def _stray_told_two_ways(f: Files) -> None:
    """A die of another container of the study in kill 1's window, with exit code 1 live and 2 read back."""
    at = in_window(f, 1, 0.3)
    add_event(f, 1, event("die", container("x9"), at, exitCode="1"), live=True, readback=False)
    add_event(f, 1, event("die", container("x9"), at, exitCode="2"), live=False, readback=True)


case("v4-another-container-s-die-told-two-ways", "the recordings of kill 1 disagree on another container's exit code",
     F((D1, "sameContainerNoRerun")), files=_stray_told_two_ways)
case("v4-live-recording-past-its-bad-lines", "kill 1's live recording holds 10 001 lines that are not events: it is "
     "read in part", F((D1, "sameContainerNoRerun")),
     files=lambda f: f["kills/1/container-events-live.jsonl"].extend(["x"] * 10_001))
case("v4-capture-left-out-resumed", "killed at kill 1 with its capture left out, and resumed without it: the resume "
     "that writes what is missing has passed", {**F((ST, "killTriggered"), (K1, "killEvidence"), (D1, "sameContainerNoRerun")),
                                                 **U((ST, "haltedAtExport"), (ST, "exitedCleanly"), (ST, "resultsAccounted"),
                                                     (D1, "resultSettledAndFinished"))},
     files=_capture_left_out_resumed)


def _books_past_a_double(s: Scenario) -> None:
    """Never killed; d1 and a1 each charge 1e308 of a 1e308 budget, and a1's balance is not what is left: the
    amounts and what the budget lost overflow a double, and do not add up in halves either."""
    s.kills = []
    s.budget = 1e308
    s.entries[0].content["budget"] = s.budget
    s.entries[find(s, "charge", run="d1")].content.update(amount=1e308, balance=0.0)
    a1 = find(s, "charge", run="a1")
    s.entries[a1].content.update(amount=1e308, balance=-1.2e308)
    for e in s.entries[a1 + 1:]:
        if e.kind == "charge":
            e.content.update(balance=-1.2e308 - 30)


case("v4-books-past-a-double", "the charges and what the budget lost are past a double's range, and differ",
     F((ST, "contractKept"), (ST, "chargedEqualsStarts")), scenario=_books_past_a_double)


def _two_points(s: Scenario) -> None:
    s.kills = [KillSpec("d1", "auto"), KillSpec("d3", "auto")]


def _two_points_named(second_from: int) -> Callable[[Files], None]:
    """Both kills fired at their points, named as today's console names them: the first diagnosis start, then the
    second counted from ``second_from`` (kill 1's beforeKillSeq, 7, in a sound folder: d3's start is its #2)."""
    def name(f: Files) -> None:
        first, second = "after:runStarted/diagnosis", "after:runStarted/diagnosis#2"
        arms = f["arms.jsonl"]
        arms[0]["point"], arms[1]["point"] = first, second
        arms[2].update(point=first, fromSeq=0)
        arms[3].update(point=second, fromSeq=second_from, run="d3")
        f["kills/1/kill.json"]["point"], f["kills/2/kill.json"]["point"] = first, second
    return name


case("v4-two-points-sound", "two kills at two points, the second counted from the first's kill: sound", {},
     scenario=_two_points, files=_two_points_named(7))
case("v4-second-point-counted-from-before-the-first-kill", "the second point counts from seq 3, before kill 1 (seq 7)",
     F((ST, "killTriggered")), scenario=_two_points, files=_two_points_named(3))


def _two_waiting(s: Scenario) -> None:
    """Killed just after d1's charge, with x1 (an ablation of another cell) planned and charged before d1: two runs
    waiting to start at the kill, each a target."""
    s.kills = [KillSpec("d1", "manual", "charge")]
    x1 = run_entries("x1", "ablation", "c9", 1, ["e1a"])
    at = find(s, "runPlanned", run="d1")
    s.entries[at:at] = [x1["plan"], x1["charge"]]
    s.budget += COST
    s.entries[0].content["budget"] = s.budget


def _resumed_making_x1(before_resume: bool = True) -> Callable[[Files], None]:
    """The resumed controller runs still: it has made x1's container and written nothing yet (its window open)."""
    def cut(f: Files) -> None:
        kill = f["kills/1/kill.json"]
        seq = kill["beforeKillSeq"]
        del f["study/ledger.jsonl"][seq:], f["timeline.jsonl"][seq:], f["launches.jsonl"][3:]
        f.pop("outcome.json")
        for name in ("container-events.jsonl", "container-events-window.json"):
            f.pop(f"kills/1/{name}")
        if not before_resume:
            f.pop("kills/1/container-before-resume.json")
        live = "kills/1/container-events-live.jsonl"
        f[live] = [e for e in f[live] if ev_time(e) <= kill["killSentEpoch"] + 0.05]
        at = kill["killSentEpoch"] + 0.5
        f[live].append(dict(event("create", container("x1"), at), seenAt=rfc3339_ms(at + 0.002)))
    return cut


_X1 = "kill 1 · x1"
_WAITING = ((ST, "haltedAtExport"), (ST, "chargedEqualsStarts"), (ST, "exitedCleanly"),
            *((scope, check) for scope in (_X1, D1) for check in ("sameContainerNoRerun", "chargedOnce",
                                                                  "resultSettledAndFinished")))
case("v4-resumed-making-a-waiting-run-s-container", "two runs waiting at the kill; the resume has made x1's container "
     "and not written its runStarted yet: nothing is judged of what it may still write", U(*_WAITING),
     scenario=_two_waiting, files=_resumed_making_x1())
case("v4-resumed-without-the-snapshot-before-it", "as above, and kills/1/ holds no container-before-resume.json though "
     "a controller started after the kill", {**U(*_WAITING), **F((K1, "killEvidence"), (_X1, "sameContainerNoRerun"),
                                                                  (D1, "sameContainerNoRerun"))},
     scenario=_two_waiting, files=_resumed_making_x1(before_resume=False))


def _frozen_ms(value: Any = None) -> Callable[[Files], None]:
    """kill 1's kill.json with frozenMs: killSentEpoch - frozenEpoch in milliseconds (None), or ``value``."""
    def put(f: Files) -> None:
        kill = _kill_json(f)
        kill["frozenMs"] = (kill["killSentEpoch"] - kill["frozenEpoch"]) * 1000 if value is None else value
    return put


case("v4-frozen-ms-written", "kill.json gives frozenMs, the freeze's length its two epochs say: sound", {},
     files=_frozen_ms())
case("v4-frozen-ms-not-the-freeze", "kill.json's frozenMs is 999, not killSentEpoch - frozenEpoch",
     F((K1, "killEvidence")), files=_frozen_ms(999))
case("v4-frozen-ms-a-text", "kill.json's frozenMs is a text", F((K1, "killEvidence")), files=_frozen_ms("x"))
