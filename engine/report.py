"""Judging a study from its evidence folder alone.

:func:`judge` reads ``OUT`` (the ledger, launches, kills, arms) and gives
every check of the study.  The live session writes its evidence first and
then calls the same function, so ``studymon run`` and ``studymon report``
cannot disagree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.accounts import Accounts
from engine.checks import Check, kill_target_checks, lifecycle_checks, overall, study_checks
from engine.evidence import read_json, read_jsonl
from engine.ledger import read_ledger

KILL_FILES = (
    "kill.json",
    "ledger-at-kill.json",
    "container-before.json",
    "container-after-kill.json",
    "container-before-resume.json",
    "container-events.jsonl",
    "container-events-window.json",
)


class NotEvidence(ValueError):
    """The folder is not a studymon evidence folder."""


@dataclass
class Judgement:
    """Every check of one study, and the documents built on the way."""

    study: str
    out: Path
    checks: list[Check]
    finished: bool
    ending: dict[str, Any] | None
    accounts: dict[str, Any]
    kills: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool | None:
        return overall(self.checks)

    def report_json(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "out": str(self.out),
            "finished": self.finished,
            "ending": self.ending,
            "ok": self.ok,
            "checks": [c.as_json() for c in self.checks],
        }


def kill_folders(out: Path) -> list[Path]:
    root = out / "kills"
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if p.is_dir() and p.name.isdigit()), key=lambda p: int(p.name))


def last_ending(out: Path) -> tuple[dict[str, Any] | None, bool]:
    """The last controller end in launches.jsonl, and whether the last start has ended."""
    launches = read_jsonl(out / "launches.jsonl")
    ending = None
    ended = False
    for line in launches:
        if line.get("event") == "start":
            ended = False
        elif line.get("event") == "end":
            ending = {"code": line.get("code"), "signal": line.get("signal")}
            ended = True
    return ending, ended


def _load(path: Path) -> Any:
    try:
        return read_json(path)
    except FileNotFoundError:
        return None
    except json.JSONDecodeError:
        return None


def judge_kill(folder: Path, acc: Accounts) -> tuple[list[Check], dict[str, Any]]:
    """The checks of one kill folder, and its part of ``kill-report.json``."""
    n = folder.name
    missing = [f for f in KILL_FILES if not (folder / f).exists()]
    kill = _load(folder / "kill.json") or {}
    at_kill = _load(folder / "ledger-at-kill.json")
    window = _load(folder / "container-events-window.json") or {}
    snaps = {
        "before": _load(folder / "container-before.json") or {},
        "after-kill": _load(folder / "container-after-kill.json") or {},
        "before-resume": _load(folder / "container-before-resume.json") or {},
    }
    events = read_jsonl(folder / "container-events.jsonl")
    kill_seq = at_kill[-1]["seq"] if isinstance(at_kill, list) and at_kill else kill.get("beforeKillSeq", 0)
    targets = kill.get("targets") or []
    report: dict[str, Any] = {
        "kill": int(n),
        "trigger": kill.get("trigger"),
        "at": kill.get("at"),
        "killSeq": kill_seq,
        "missingFiles": missing,
        "targets": [],
    }
    checks: list[Check] = []
    if not kill:
        checks.append(Check("killEvidence", False, "kill.json is missing or unreadable", f"kill {n}"))
        return checks, report
    if missing:
        checks.append(Check("killEvidence", False, "missing: " + ", ".join(missing), f"kill {n}"))
    if not targets:
        checks.append(
            Check("killEvidence", not missing, "no run in flight at the kill; the per-study checks apply", f"kill {n}")
        )
    for target in targets:
        name = target.get("container")
        scope = f"kill {n} · {target.get('run')}"
        lifecycle = lifecycle_checks(
            name,
            {k: (v.get(name) if isinstance(v, dict) else None) for k, v in snaps.items()},
            events,
            None,
        )
        verdicts = kill_target_checks(target, kill_seq, lifecycle, acc, scope)
        if missing:
            # Without its evidence a lifecycle verdict would be a guess.
            verdicts = [
                Check(c.name, None if c.ok else c.ok, c.detail + " (evidence incomplete)", c.scope)
                if c.name == "sameContainerNoRerun"
                else c
                for c in verdicts
            ]
        checks.extend(verdicts)
        result_seq = (window.get("targets") or {}).get(target.get("run"), {}).get("resultSeq")
        report["targets"].append(
            {
                "target": target,
                "resultSeq": result_seq,
                "lifecycle": lifecycle,
                "checks": {c.name: c.ok for c in verdicts},
                "details": {c.name: c.detail for c in verdicts},
            }
        )
    return checks, report


def judge_arms(out: Path) -> list[Check]:
    """``killTriggered``: an armed kill fired at the first diagnosis start, or why not."""
    arms = read_jsonl(out / "arms.jsonl")
    if not arms:
        return []
    armed = False
    verdict: Check | None = None
    for line in arms:
        event = line.get("event")
        if event == "arm":
            armed = True
        elif event == "disarm":
            armed = False
        elif event == "fired":
            armed = False
            verdict = Check("killTriggered", True, f"kill {line.get('kill')} at the start of {line.get('run')}")
        elif event == "missed":
            armed = False
            verdict = Check("killTriggered", False, f"missed: {line.get('detail')}")
    if armed and verdict is None:
        return [Check("killTriggered", False, "armed, but no diagnosis run started while the study ran")]
    return [verdict] if verdict else []


def judge(out: Path) -> Judgement:
    """Every check of the study in ``out``, from the files alone."""
    out = Path(out)
    research = _load(out / "research.json")
    if not isinstance(research, dict) or not (out / "launches.jsonl").exists():
        raise NotEvidence(f"{out} is not a studymon evidence folder (no research.json or launches.jsonl)")
    records, issues = read_ledger(out / "study" / "ledger.jsonl")
    acc = Accounts().extend(records)
    ending, ended = last_ending(out)
    code = ending.get("code") if ending else None
    sig = ending.get("signal") if ending else None
    checks = study_checks(records, issues, acc, code, sig, ended)
    kills: list[dict[str, Any]] = []
    for folder in kill_folders(out):
        kchecks, kreport = judge_kill(folder, acc)
        checks.extend(kchecks)
        kills.append(kreport)
    checks.extend(judge_arms(out))
    accounts = acc.as_json()
    accounts["ledgerIssues"] = [i.as_json() for i in issues[:1000]]
    accounts["checks"] = {c.name: c.ok for c in checks if c.scope == "study" and c.name in (
        "ledgerWellFormed", "haltedAtExport", "chargedEqualsStarts", "exitedCleanly")}
    finished = ended and code == 0
    return Judgement(str(research.get("study")), out, checks, finished, ending, accounts, kills)
