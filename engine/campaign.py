"""A crash-point campaign's folder: its trace, its trials, its journal, and what they add up to.

    CAMPAIGN/
      campaign.json     the plan (study, template, points, classes) and every trial's outcome: rewritten whole
                        (temporary name, then rename) as trials end, from the two below; ``studymon report
                        CAMPAIGN`` builds it again from them
      trace/            one run of the study, unkilled, traced (an evidence folder)
      trials.jsonl      the journal: one line per trial planned, one per trial ended; appended, never changed
      trials/<n>/       trial n's evidence folder, as its worker shipped it back; written once

A trial's verdict is its folder's: ``ok`` true (every check ✓), false (one
✗), null (a ? left). A trial whose worker was lost is ``lost``: no verdict,
and ``studymon explore --resume`` runs its point again under a new number.
A trial whose point was missed (the study had gone on before the kill could
land) is ``missed``: its class is tried again at its next candidate.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from studymon.engine.evidence import append_jsonl, read_jsonl
from studymon.engine.judge.verdict import Check, overall

CAMPAIGN = "campaign.json"
TRACE = "trace"
TRIALS = "trials"
JOURNAL = "trials.jsonl"

# A trial's state in the journal.
PLANNED, DONE, LOST, MISSED, FAILED_TO_RUN = "planned", "done", "lost", "missed", "error"
ENDED = (DONE, LOST, MISSED, FAILED_TO_RUN)
MARK: dict[bool | None, str] = {True: "✓", False: "✗", None: "?"}


@dataclass
class Trial:
    """One trial: a fresh study killed at its points, resumed and judged."""

    n: int
    id: str  # the trial's study id, ``<ID>-<n>``
    points: list[str]  # the kill points, in order (two with --depth 2)
    cls: str  # the class its first point stands for
    state: str = PLANNED
    ok: bool | None = None
    failed: list[str] = field(default_factory=list)  # "scope · check" of each ✗
    unknown: list[str] = field(default_factory=list)  # "scope · check" of each ?
    checks: dict[str, bool | None] = field(default_factory=dict)  # by check name, over its scopes: ✗ beats ? beats ✓
    worker: str | None = None  # where it ran (the Dask worker's address), or the lost worker
    host: str | None = None
    seconds: float | None = None
    exit: int | None = None  # the trial's `studymon run` exit status
    detail: str = ""  # why it was lost, missed or could not run

    @property
    def out(self) -> str:
        return f"{TRIALS}/{self.n}"

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "class": self.cls, "out": self.out}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Trial:
        fields = {k: obj[k] for k in cls.__dataclass_fields__ if k in obj and k != "cls"}
        return cls(cls=str(obj.get("class", "")), **fields)


class CampaignFolder:
    """The paths of a campaign, its journal, and the summary built from them."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    @property
    def trace(self) -> Path:
        return self.folder / TRACE

    def trial_out(self, n: int) -> Path:
        return self.folder / TRIALS / str(n)

    @property
    def journal(self) -> Path:
        return self.folder / JOURNAL

    @property
    def summary(self) -> Path:
        return self.folder / CAMPAIGN

    def log(self, trial: Trial) -> None:
        """Append the trial as it stands now to the journal (a later line for the same ``n`` supersedes)."""
        append_jsonl(self.journal, trial.as_json())

    def trials(self) -> dict[int, Trial]:
        """Every trial, as the journal's last line for it says."""
        out: dict[int, Trial] = {}
        if not self.journal.exists():
            return out
        for line in read_jsonl(self.journal):
            if isinstance(line, dict) and isinstance(line.get("n"), int):
                out[line["n"]] = Trial.from_json(line)
        return dict(sorted(out.items()))

    def write_summary(self, plan: dict[str, Any], trials: dict[int, Trial]) -> None:
        """campaign.json: the plan and every trial, rewritten whole (temporary name, then rename)."""
        body = {**plan, "trials": [t.as_json() for t in trials.values()], "matrix": matrix(trials)}
        tmp = self.summary.with_name(f".{CAMPAIGN}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(body, f, ensure_ascii=False, indent=2)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.summary)

    def plan(self) -> dict[str, Any]:
        """The plan in campaign.json (empty when there is none yet)."""
        try:
            obj = json.loads(self.summary.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in obj.items() if k not in ("trials", "matrix")} if isinstance(obj, dict) else {}


def trial_verdict(checks: list[Check]) -> dict[str, Any]:
    """A trial's verdict from its folder's checks: ``ok``, the ``failed`` and ``unknown`` ones (``scope · name``),
    and per check name over its scopes (``checks``: ✗ beats ? beats ✓)."""
    by_name: dict[str, list[Check]] = {}
    for c in checks:
        by_name.setdefault(c.name, []).append(c)
    return {
        "ok": overall(checks),
        "failed": [f"{c.scope} · {c.name}" for c in checks if c.ok is False],
        "unknown": [f"{c.scope} · {c.name}" for c in checks if c.ok is None],
        "checks": {name: overall(same) for name, same in by_name.items()},
    }


def rejudge(folder: Path) -> int:
    """Rebuild a campaign offline: judge every trial folder again, write campaign.json again from the journal and
    those verdicts; its exit status."""
    from studymon.engine.judge import judge

    campaign = CampaignFolder(folder)
    plan, trials = campaign.plan(), campaign.trials()
    for t in trials.values():
        out = campaign.trial_out(t.n)
        if t.state != DONE or not out.is_dir():
            continue
        v = trial_verdict(judge(out).checks)
        t.ok, t.failed, t.unknown, t.checks = v["ok"], v["failed"], v["unknown"], v["checks"]
    campaign.write_summary(plan, trials)
    return exit_status(trials)


def matrix(trials: dict[int, Trial]) -> dict[str, Any]:
    """Per class, per check: ✓, ✗ or ? over the class's trials that ended with a verdict; per check, the first
    point that failed it (in trial order)."""
    checks: list[str] = []
    rows: dict[str, dict[str, str]] = {}
    first_failing: dict[str, str] = {}
    rank = {"✗": 0, "?": 1, "✓": 2}
    for t in trials.values():
        row = rows.setdefault(t.cls, {})
        if t.state == MISSED and "" not in row:
            row[""] = "missed"  # until a trial of the class ran
        if t.state != DONE:
            continue
        if row.get("") == "missed":
            del row[""]
        for check, ok in [*t.checks.items(), ("", t.ok)]:
            if check and check not in checks:
                checks.append(check)
            mark = MARK[ok]
            if check not in row or rank[mark] < rank.get(row[check], 3):
                row[check] = mark
            if check and ok is False:
                first_failing.setdefault(check, " then ".join(t.points))
    return {"checks": checks, "rows": rows, "firstFailing": first_failing}


def to_resume(trials: dict[int, Trial]) -> list[Trial]:
    """The trials ``--resume`` runs again: lost, never run or unable to run, whose points no later trial ran."""
    ran = {tuple(t.points) for t in trials.values() if t.state in (DONE, MISSED)}
    latest = {tuple(t.points): t for t in trials.values() if t.state in (PLANNED, LOST, FAILED_TO_RUN)}
    return [t for points, t in latest.items() if points not in ran]  # one per points: a lost rerun lost again


def exit_status(trials: dict[int, Trial]) -> int:
    """1 when a trial failed; 0 when every trial that ran held and none is lost, unknown or unrun (one run again
    by ``--resume`` is settled by its new run); 3 otherwise.

    A missed point is no verdict either way: its class was tried again at its next candidate, and a class
    whose every candidate was missed is listed as such in the matrix (a study that writes its records
    faster than a kill can land between them)."""
    done = [t for t in trials.values() if t.state == DONE]
    if any(t.ok is False for t in done):
        return 1
    unsettled = to_resume(trials) + [t for t in done if t.ok is None]
    return 0 if done and not unsettled else 3
