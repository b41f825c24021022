"""``judge_campaign``: a ``studymon explore`` folder (§8a), every trial judged again from its own folder.

Check names (the product's report has no fixed names for these):

* scope ``campaign``:
  ``journalReadable`` (``campaign.json`` and the journal ``trials.jsonl`` read safely and have
  their shapes), ``journalAgrees`` (``campaign.json``'s trials are the journal's last word on
  each trial), ``trialsAccounted`` (no folder under ``trials/`` that no trial names; no two trials,
  nor a trial and the trace, share a folder);
* scope ``trial N``, for every trial of the journal:
  ``holds`` (the oracle's own verdict of the trial's folder, as ``judge_study`` gives it:
  ✓ status 0, ✗ status 1, ? status 3; ? too for a trial not run yet), and ``recorded`` (the
  folder is the trial the journal says: inside the campaign, study ``<ID>-<n>``, armed at exactly
  the trial's points, fired or missed as its state says, and its recorded verdict and checks are
  what the folder shows).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.oracle.evidence import load_arms, load_research, valid_id
from tests.oracle.reading import CAPS, Refused, file_size, is_folder, list_folder, quote, read_json, read_jsonl_objects
from tests.oracle.study import judge_study
from tests.oracle.verdict import OracleVerdict, Tally

C = "campaign"
# "error" is in no document: the product writes it for a trial that could not be run or judged.
STATES = ("planned", "running", "done", "missed", "lost", "error")
VERDICTS = ("done", "missed")  # the states that carry a verdict of the trial's folder


def judge_campaign(folder: Path) -> OracleVerdict:
    t = Tally()
    try:
        _judge(Path(folder), t)
    except Exception as exc:  # noqa: BLE001 - the oracle answers whatever the folder holds
        t.fail(C, "oracleError", f"the oracle failed on this folder: {type(exc).__name__}: {exc}")
    return t.verdict()


def _trial_ok(row: dict[str, Any]) -> bool:
    n, points, out = row.get("n"), row.get("points"), row.get("out")
    return (
        isinstance(n, int)
        and not isinstance(n, bool)
        and n >= 1
        and isinstance(row.get("id"), str)
        and isinstance(points, list)
        and all(isinstance(p, str) for p in points)
        and row.get("state") in STATES
        and row.get("ok") in (True, False, None)
        and isinstance(out, str)
        and isinstance(row.get("checks", {}), dict)
    )


def _judge(folder: Path, t: Tally) -> None:
    for name in ("journalReadable", "journalAgrees", "trialsAccounted"):
        t.add(C, name)
    try:
        summary = read_json(folder, "campaign.json", CAPS["campaign.json"])
    except Refused as exc:
        summary = None
        t.fail(C, "journalReadable", str(exc))
    study = summary.get("study") if isinstance(summary, dict) else None
    if summary is not None and (
        not isinstance(summary, dict) or not valid_id(study) or not isinstance(summary.get("trials"), list)
    ):
        t.fail(C, "journalReadable", "campaign.json: study or trials of the wrong shape")
        study = None
    try:
        rows = read_jsonl_objects(folder, "trials.jsonl", CAPS["trials.jsonl"])
    except Refused as exc:
        t.fail(C, "journalReadable", str(exc))
        rows = []
    journal: dict[int, dict[str, Any]] = {}
    for number, row in rows:
        if not _trial_ok(row):
            t.fail(C, "journalReadable", f"trials.jsonl line {number}: a trial of the wrong shape")
            continue
        journal[row["n"]] = row  # the journal is appended to: its last line on a trial is its word
    if isinstance(summary, dict) and isinstance(summary.get("trials"), list):
        listed: dict[int, dict[str, Any]] = {}
        for row in summary["trials"]:
            if not isinstance(row, dict) or not _trial_ok(row):
                t.fail(C, "journalReadable", "campaign.json: a trial of the wrong shape")
                continue
            listed[row["n"]] = row
        if set(listed) != set(journal):
            t.fail(C, "journalAgrees", "campaign.json and the journal list different trials")
        for n in sorted(set(listed) & set(journal)):
            a, b = listed[n], journal[n]
            differ = [k for k in ("id", "points", "state", "ok", "out", "checks") if a.get(k) != b.get(k)]
            if differ:
                t.fail(C, "journalAgrees", f"trial {n}: campaign.json and the journal differ on {', '.join(differ)}")
    trace = summary.get("trace") if isinstance(summary, dict) else None
    outs: dict[str, int] = {}
    for n in sorted(journal):
        judge_trial(folder, t, study, n, journal[n], trace, outs)
    # Every trial folder is some trial's.
    try:
        names = list_folder(folder, "trials")
    except Refused as exc:
        names = []
        if journal and not str(exc).endswith(": missing"):
            t.fail(C, "trialsAccounted", str(exc))
    for name in names:
        if f"trials/{name}" not in outs:
            t.fail(C, "trialsAccounted", f"trials/{quote(name)} is a folder no trial of the journal names")


def judge_trial(
    folder: Path, t: Tally, study: Any, n: int, row: dict[str, Any], trace: Any, outs: dict[str, int]
) -> None:
    scope = f"trial {n}"
    t.add(scope, "holds")
    t.add(scope, "recorded")
    state, out, points = row["state"], row["out"], row["points"]
    if state in ("planned", "running"):
        t.unknown(scope, "holds", f"trial {n} is {state}: not run yet")
        t.unknown(scope, "recorded", f"trial {n} is {state}")
        return
    if not isinstance(study, str) or row["id"] != f"{study}-{n}":
        t.fail(scope, "recorded", f"trial {n}'s id is not the campaign's study followed by -{n}")
    parts = out.split("/")
    if out.startswith("/") or any(p in ("", ".", "..") for p in parts):
        t.fail(scope, "recorded", f"trial {n}'s folder {quote(out)} is not a path inside the campaign")
        t.fail(scope, "holds", "no folder to judge")
        return
    if out == trace or parts[0] == trace:
        t.fail(scope, "recorded", f"trial {n}'s folder is the trace")
        t.fail(C, "trialsAccounted", f"trial {n}'s folder is the trace")
    if out in outs:
        t.fail(scope, "recorded", f"trial {n}'s folder is trial {outs[out]}'s")
        t.fail(C, "trialsAccounted", f"trials {outs[out]} and {n} share {quote(out)}")
    outs.setdefault(out, n)
    if not is_folder(folder, out):
        t.fail(scope, "recorded", f"trial {n}'s folder {quote(out)} is missing, or a link, or not a folder")
        (t.fail if state in VERDICTS else t.unknown)(scope, "holds", "no folder to judge")
        return
    path = folder / out
    research = load_research(path)
    if research.study != row["id"]:
        t.fail(scope, "recorded", f"the folder's research.json is not study {quote(row['id'])}")
    verdict = judge_study(path)
    if state not in VERDICTS:
        # Lost or in error: never a verdict.  The folder must not hold one either.
        t.unknown(scope, "holds", f"trial {n} is {state}: nothing was judged")
        if verdict.status == 0 or file_size(path, "outcome.json") is not None:
            t.fail(scope, "recorded", f"the journal says {state}, and the folder holds a study that finished")
        return
    arms = load_arms(path)
    armed = [
        line.point if line.point is not None else "after:runStarted/diagnosis"
        for line in arms.lines
        if line.event == "arm"
    ]
    if not arms.readable or armed != points:
        t.fail(scope, "recorded", "the folder's arms.jsonl is not armed at exactly the trial's points")
    fired = [line.point for line in arms.lines if line.event == "fired"]
    missed = [line.point for line in arms.lines if line.event == "missed"]
    ok = row["ok"]
    if verdict.status == 0:
        t.add(scope, "holds")
    elif verdict.status == 1:
        failing = sorted({name for (_, name) in verdict.failing()})
        t.fail(scope, "holds", f"the folder fails {', '.join(failing)}")
    else:
        unknown = sorted({name for (_, name) in verdict.unknown()})
        t.unknown(scope, "holds", f"the folder leaves {', '.join(unknown)} unknown")
    if state == "done" and (missed or len(fired) != len(points)):
        t.fail(scope, "recorded", "the journal says done, and the folder's points did not all fire")
    if state == "missed" and not missed:
        t.fail(scope, "recorded", "the journal says missed, and the folder missed no point")
    want = {0: True, 1: False, 3: None}[verdict.status]
    if ok is not want:
        t.fail(scope, "recorded", f"the journal records ok {ok!r}, and the folder gives {want!r}")
    mine: dict[str, bool | None] = {}
    for (_, name), value in verdict.checks.items():
        prev = mine.get(name, True)
        mine[name] = False if False in (prev, value) else None if None in (prev, value) else True
    for name, value in (row.get("checks") or {}).items():
        if name in mine and mine[name] is not value:
            t.fail(
                scope, "recorded", f"the journal records {quote(name)} as {value!r}, the folder gives {mine[name]!r}"
            )
