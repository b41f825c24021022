"""Evidence folders built by code: one sound killed study, and adversarial variants of it.

A :class:`Scenario` is what a study wrote to its ledger (entries in order,
``seq`` and ``at`` given when written) plus where the console killed it.
:func:`derive` turns a scenario into the whole evidence folder the console
would have written for it: research.json, the ledger, launches.jsonl,
arms.jsonl, and per kill ``kill.json``, ``ledger-at-kill.json``, the three
container snapshots, the live and read-back lifecycle events and the window.
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

from studymon.engine.clock import rfc3339_ms, rfc3339_ns

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
    """A kill right after the first ``runStarted`` of ``run`` (``trigger`` auto or manual)."""

    run: str
    trigger: str = "manual"


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
    events: list[dict[str, Any]] = []
    for run, (seq, name) in starts.items():
        if not isinstance(name, str):
            continue
        events += [event("create", name, t(seq) - 0.6), event("start", name, t(seq) - 0.5)]
        if run in results:
            rseq, code = results[run]
            code = code if isinstance(code, int) and not isinstance(code, bool) else 0
            events += [event("die", name, t(rseq) - 0.5, exitCode=str(code)), event("destroy", name, t(rseq) + 0.3)]
    events.sort(key=ev_time)

    launches = [{"event": "start", "pid": FIRST_PID, "at": rfc3339_ms(t(0.5)), "resume": False}]
    arms: list[dict[str, Any]] = []
    for n, spec in enumerate(s.kills, 1):
        seq = starts[spec.run][0]
        kill_at, since, resume = t(seq) + 0.1, t(seq) + 0.05, t(seq) + 0.3
        pid = FIRST_PID + n - 1
        targets = [run for run, (st, _) in starts.items() if st <= seq and not (run in results and results[run][0] <= seq)]
        plans = {r["content"]["run"]: r for r in records if r["kind"] == "runPlanned" and isinstance(r["content"].get("run"), str)}
        folder = f"kills/{n}/"
        files[folder + "kill.json"] = {
            "trigger": spec.trigger, "at": rfc3339_ms(kill_at), "pid": pid, "beforeKillSeq": seq,
            "targets": [
                {"run": run, "cell": plans[run]["content"].get("object"), "round": plans[run]["content"].get("round"),
                 "planSeq": plans[run]["seq"], "startSeq": starts[run][0], "container": starts[run][1]}
                for run in targets
            ],
            "triggerSeq": seq if spec.trigger == "auto" else None,
            "triggerAt": rfc3339_ms(t(seq)), "signal": "SIGKILL", "signalled": True, "captureError": None,
            "prefix": f"{s.prefix}-{s.study}-", "since": rfc3339_ns(int(since * 1e9)), "sinceEpoch": since,
            "frozenEpoch": since, "killSentEpoch": kill_at, "killReturnedEpoch": kill_at + 0.001,
        }
        files[folder + "ledger-at-kill.json"] = copy.deepcopy(records[:seq])
        names = [starts[run][1] for run in targets]
        for file in ("container-before.json", "container-after-kill.json", "container-before-resume.json"):
            files[folder + file] = {name: inspect(name, t(starts[run][0]) - 0.5) for run, name in zip(targets, names)}
        closed = all(run in results for run in targets)
        seen = {run: t(results[run][0]) + 0.1 for run in targets if run in results}
        until = max(seen.values(), default=since) + 0.05 if closed else None
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
                "targets": {run: {"resultSeq": results[run][0], "resultSeenEpoch": seen[run]} for run in targets},
            }
        launches += [
            {"event": "end", "pid": pid, "at": rfc3339_ms(kill_at + 0.05), "code": None, "signal": "SIGKILL"},
            {"event": "start", "pid": pid + 1, "at": rfc3339_ms(resume), "resume": True},
        ]
        if spec.trigger == "auto":
            arms += [{"event": "arm", "at": rfc3339_ms(t(0.2))},
                     {"event": "fired", "at": rfc3339_ms(kill_at + 0.01), "run": first_diagnosis, "kill": n}]
    launches.append({"event": "end", "pid": FIRST_PID + len(s.kills), "at": rfc3339_ms(t(len(records)) + 0.5),
                     "code": s.final_code, "signal": None})
    files["launches.jsonl"] = launches
    if arms:
        files["arms.jsonl"] = arms
    return files


def write(files: Files, out: Path) -> Path:
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


case("second-settlement", "a second, contradictory settlement of the killed run's round",
     F((ST, "contractKept"), (D1, "resultSettledAndFinished")), scenario=_second_settlement)


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


case("fired-without-folder", "arms.jsonl says fired but kills/1/ is missing",
     F((ST, "killTriggered"), (K2, "killEvidence")), files=_fired_no_folder,
     details={(ST, "killTriggered"): "arms.jsonl says kill 1 fired, but kills/1/ is missing", (K2, "killEvidence"): "kills/1/ is missing: kills are numbered from 1"})


def _wrong_container(s: Scenario) -> None:
    s.entries[find(s, "runStarted", run="a1")].content["container"] = "inforsi-s-a1-x"


case("container-name-not-the-contract", "runStarted.container is not <prefix>-<ID>-<run>",
     F((ST, "contractKept")), scenario=_wrong_container)


def _window_early(f: Files) -> None:
    window(f, 1)["targets"]["d1"]["resultSeq"] -= 1


case("window-closed-before-result", "the kill's window closed before the target's result was written",
     F((D1, "resultSettledAndFinished")), files=_window_early,
     details={(D1, "resultSettledAndFinished"): "the result (seq 8) comes after the window closed (at result seq 7)"})


# Every clause of §4 and every rule of §2a, one at a time.

def _gap(f: Files) -> None:
    live = f["kills/1/container-events-live.jsonl"]
    live.insert(1, {"gap": {"from": rfc3339_ms(in_window(f, 1, 0.1)), "to": rfc3339_ms(in_window(f, 1, 0.2))}})


case("gap-in-live-recording", "the live recording has a gap", U((D1, "sameContainerNoRerun")), files=_gap,
     details={(D1, "sameContainerNoRerun"): "the live recording has 1 gap"})


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
     details={(D1, "chargedOnce"): "run d1b (planned at seq 8, after the kill) repeats it: same purpose, cell, round and experiments"})


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
     details={(D1, "sameContainerNoRerun"): "container-events.jsonl line 2: a gap line that is not a gap"})

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
