"""A crash-point campaign's folder: its trace, its trials, its journal, and what they add up to.

    CAMPAIGN/
      campaign.json     the plan (study, template, points, classes) and every trial's outcome: rewritten whole
                        (temporary name, then rename) by the explorer as trials end
      trace/            one run of the study, unkilled, traced (an evidence folder)
      trials.jsonl      the journal: one line per trial planned, one per trial ended; appended, never changed
      trials/<n>/       trial n's evidence folder, as its worker shipped it back; written once

A trial's verdict is its folder's: ``ok`` true (every check ✓), false (one
✗), null (a ? left). A trial whose worker was lost is ``lost``: no verdict,
and ``studymon explore --resume`` runs its point again under a new number.
A trial whose point was missed (the study had gone on before the kill could
land) is ``missed``: its class is tried again at its next candidate.

``studymon report CAMPAIGN`` (:func:`rejudge`) trusts none of it as a
summary (contract §8a): it judges each trial from its own folder, which must
be study ``<ID>-<n>``, armed at exactly the trial's points and inside the
campaign, and holds the journal and ``campaign.json`` to what the folders
say.  It reads them as hostile evidence (:mod:`studymon.engine.io.safefile`,
capped, bounded in lines, trials and the bytes of trial folders judged) and
writes ``campaign.json`` again only with the verdicts judged now, when every
other fact in it was found to agree (``docs/contract.md``, "Campaigns").
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import stat
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from studymon.engine.contract.exits import EXIT_FAIL, EXIT_OK, EXIT_UNKNOWN
from studymon.engine.contract.exits import exit_status as checks_status
from studymon.engine.contract.folder import CAMPAIGN, JOURNAL, TRACE, TRIALS, EvidenceFolder, KillFolder
from studymon.engine.contract.killpoint import point_text
from studymon.engine.contract.rules import is_int, plural, valid_id
from studymon.engine.contract.targets import TARGET_CLASSES
from studymon.engine.evidence.records import parse_arm, same_json
from studymon.engine.evidence.writer import append_jsonl, read_jsonl
from studymon.engine.io import safefile
from studymon.engine.io.quoting import free_text
from studymon.engine.io.safefile import Unreadable, size_text, type_name
from studymon.engine.judge.verdict import SHOWN, Check, Verdict, overall

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
        body = summary_body(plan, [t.as_json() for t in trials.values()], matrix(trials))
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


def summary_body(plan: dict[str, Any], trials: list[dict[str, Any]], built: dict[str, Any]) -> dict[str, Any]:
    """campaign.json's content: the plan, every trial (as :meth:`Trial.as_json` gives it) and the matrix."""
    return {**plan, "trials": trials, "matrix": built}


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


def campaign_status(trials: dict[int, Trial]) -> int:
    """1 when a trial failed; 0 when every trial that ran held and none is lost, unknown or unrun (one run again
    by ``--resume`` is settled by its new run); 3 otherwise.

    A missed point is no verdict either way: its class was tried again at its next candidate, and a class
    whose every candidate was missed is listed as such in the matrix (a study that writes its records
    faster than a kill can land between them)."""
    done = [t for t in trials.values() if t.state == DONE]
    if any(t.ok is False for t in done):
        return EXIT_FAIL
    unsettled = to_resume(trials) + [t for t in done if t.ok is None]
    return EXIT_OK if done and not unsettled else EXIT_UNKNOWN


# --- studymon report CAMPAIGN: every trial judged from its own folder (contract §8a) -------------------------
#
# The journal and campaign.json are read as any evidence file of an OUT: inside the campaign only, regular
# files only (a link, even one inside, is not the file the explorer writes), capped, never echoed; every trial
# folder is looked at without following a link, and judged by the judge alone.  What a report reads is bounded
# (caps, lines, trials, and the bytes of the trial folders it judges) so that any campaign folder is reported
# in bounded time and memory (bench/report_hostile.py measures the largest within the bounds).

KiB = 1 << 10
MiB = 1 << 20
# A trial is two journal lines (planned, then ended) of under 1 KiB each: 10 000 trials are ~10-20 MiB.  Past
# TRIALS_LIMIT trials or BAD_LINES lines reading stops, so what is read is bounded by those, not by this.
JOURNAL_CAP = 64 * MiB
# campaign.json is read whole (as one JSON value, ~30 times its size in memory at worst): 16 MiB holds 10 000
# trials and a plan of as many candidate points, and parses within a few hundred MiB.
SUMMARY_CAP = 16 * MiB
# A trial folder's report.json (the verdict the journal repeats): its checks, a few per kill target.
REPORT_CAP = 8 * MiB
# Trials a journal may hold: a campaign runs a trial per class (tens), or per candidate point with --all.
TRIALS_LIMIT = 10_000
# Journal lines that are not a trial's (or break its story) before reading stops: the explorer writes none.
BAD_LINES = 1000
# What the trial folders examined in one report may hold together, counted as the judge reads them: each file
# it reads (within its cap), each kill folder's files, the kills/ listing, plus a weight for each trial folder
# and each kill folder (what judging one costs beyond its bytes: ~2-6 ms, as much as ~30 KiB of ledger).  32 MiB
# of the dearest bytes (a ledger and its timeline) are judged in ~3 s of CPU; a small trial of two kills counts
# ~135 KiB: ~250 trials in ~1.5 s (bench/report_hostile.py).  The folders past it are not examined (trialsJudged
# ?), and each can be judged alone with studymon report.
TRIALS_BUDGET = 32 * MiB
TRIAL_WEIGHT = 32 * KiB
KILL_WEIGHT = 32 * KiB
# Entries of trials/ looked at (beyond them the folder is no campaign's).
ENTRIES_LIMIT = 2 * TRIALS_LIMIT
MAX_POINTS = 2  # a trial's kill points: one, or two with --depth 2

STATES = (PLANNED, DONE, LOST, MISSED, FAILED_TO_RUN)
# A trial's story in the journal, as data: (its state so far, the state a line gives it) -> its state after.
JOURNAL_STEPS: dict[tuple[str | None, str], str] = {(None, PLANNED): PLANNED, **{(PLANNED, s): s for s in ENDED}}
# The fields of a journal line (Trial.as_json), those that are facts of the trial, and its verdict.
VERDICT_KEYS = ("ok", "failed", "unknown", "checks")
FACT_KEYS = ("n", "id", "points", "cls", "class", "state", "worker", "host", "seconds", "exit", "detail", "out")
LINE_KEYS = frozenset((*FACT_KEYS, *VERDICT_KEYS))
PLAN_KEYS = frozenset(("version", "study", "token", "template", "trace", "points", "classes", "options"))
SUMMARY_KEYS = PLAN_KEYS | {"trials", "matrix", "timing"}  # timing: the explorer's, once a run of it ended

# What is at trials/<n>.
MISSING, LINK, NOT_FOLDER, FOLDER = "missing", "link", "not a folder", "folder"
# What a trial folder's arms.jsonl says of its points.
FIRED, MISSED_THERE, ARMED = "fired", "missed", "armed"


def saved_matrix(folder: Path) -> tuple[str, Any]:
    """The study and the matrix ``campaign.json`` holds, as written (each shown quoted by whoever shows it); an
    empty study and no matrix when the file cannot be read: the explorer's own lines said why."""
    try:
        body = safefile.read_object(folder, CAMPAIGN)
    except Unreadable:
        return "", None
    study = body.get("study")
    return (study if isinstance(study, str) else ""), body.get("matrix")


def is_campaign(folder: Path) -> bool:
    """Whether ``folder`` is a campaign's (it has campaign.json or a journal, of any kind: a FIFO too)."""
    return any(os.path.lexists(folder / name) for name in (CAMPAIGN, JOURNAL))


@dataclass(slots=True)
class Entry:
    """A trial as a journal line (or campaign.json) tells it, its fields validated."""

    n: int
    id: str
    points: tuple[str, ...]  # each a kill point as studymon writes it
    cls: str
    state: str
    ok: bool | None
    detail: str
    exit: int | None
    facts: bytes  # FACT_KEYS as canonical JSON: what campaign.json repeats
    verdict: bytes  # VERDICT_KEYS as canonical JSON

    @property
    def said(self) -> str:
        """The trial's points, to show."""
        return " then ".join(self.points)


def _canonical(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def parse_entry(obj: Any) -> Entry | str:
    """A journal line's trial, or why it is none (in studymon's words: field names and types, never a value)."""
    if not isinstance(obj, dict):
        return f"{type_name(obj)} where a trial belongs"
    missing = sorted(LINE_KEYS - obj.keys())
    if missing:
        return f"no {missing[0]}" + (f" (and {plural(len(missing) - 1, 'more field')})" if len(missing) > 1 else "")
    if len(obj) != len(LINE_KEYS):
        return f"{plural(len(obj) - len(LINE_KEYS), 'field')} a trial does not have"
    n, trial_id, points, cls = obj["n"], obj["id"], obj["points"], obj["cls"]
    if not is_int(n) or n < 1:
        return "n is not a trial number"
    if not valid_id(trial_id) or not trial_id.endswith(f"-{n}"):
        return f"id is not a study id ending in -{n}"
    if not isinstance(points, list) or not 1 <= len(points) <= MAX_POINTS:
        return f"points is not a list of 1 to {MAX_POINTS} kill points"
    for p in points:
        point = point_text(p)
        if point is None or str(point) != p:
            return "points holds a text that is not a kill point"
    if not isinstance(cls, str) or not cls or obj["class"] != cls:
        return "cls and class are not the same class name"
    state = obj["state"]
    if state not in STATES:
        return "state is not one of " + ", ".join(STATES)
    if not any(obj["ok"] is x for x in (True, False, None)):
        return f"ok is {type_name(obj['ok'])}, not true, false or null"
    if not _is_str_list(obj["failed"]) or not _is_str_list(obj["unknown"]):
        return "failed or unknown is not a list of texts"
    checks = obj["checks"]
    if not isinstance(checks, dict) or not all(any(v is x for x in (True, False, None)) for v in checks.values()):
        return "checks is not an object of true, false or null"
    if not all(v is None or isinstance(v, str) for v in (obj["worker"], obj["host"])):
        return "worker or host is neither a text nor null"
    seconds, code = obj["seconds"], obj["exit"]
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))):
        return f"seconds is {type_name(seconds)}, not a number or null"
    if isinstance(seconds, float) and not math.isfinite(seconds):
        return "seconds is not a finite number"
    if code is not None and not is_int(code):
        return f"exit is {type_name(code)}, not an integer or null"
    if not isinstance(obj["detail"], str):
        return f"detail is {type_name(obj['detail'])}, not a text"
    if obj["out"] != f"{TRIALS}/{n}":
        return f"out is not {TRIALS}/{n}"
    return Entry(
        n,
        trial_id,
        tuple(points),
        cls,
        state,
        obj["ok"],
        obj["detail"],
        code,
        _canonical({k: obj[k] for k in FACT_KEYS}),
        _canonical({k: obj[k] for k in VERDICT_KEYS}),
    )


def exact_json(body: bytes) -> tuple[Any, str | None]:
    """``body`` as JSON, or why it is none: not UTF-8 JSON, or an object in it that repeats a key (orjson keeps
    the last copy silently: the copies may say different things)."""
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None, "not JSON in UTF-8"
    if safefile.repeats_a_key(body, value):
        return None, "an object repeats a key"
    return value, None


def _plain_file(root: str, rel: str) -> str | None:
    """Why ``root/rel`` is not a plain file of the campaign's own (None when it is one, or is missing)."""
    try:
        st = os.lstat(os.path.join(root, rel))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{rel}: cannot be looked at ({os.strerror(exc.errno or 0)})"
    if stat.S_ISLNK(st.st_mode):
        return f"{rel}: a symbolic link, not the file the explorer writes"
    return None


@dataclass
class Journal:
    """trials.jsonl as read: each trial's last line, and what is wrong with the journal."""

    study: str | None  # the campaign's study id (campaign.json's, else the first trial's)
    trials: dict[int, Entry] = field(default_factory=dict)
    lines: int = 0
    problem: str | None = None  # why it could not be read (to its end)
    problems: list[str] = field(default_factory=list)
    problem_count: int = 0

    def bad(self, text: str) -> None:
        self.problem_count += 1
        if len(self.problems) < SHOWN:
            self.problems.append(text)
        if self.problem_count > BAD_LINES:
            raise Unreadable(JOURNAL, f"more than {BAD_LINES} lines that are not trials or break one's story")

    def take(self, number: int, body: bytes) -> None:
        """One line, in order."""
        self.lines += 1
        value, why = exact_json(body)
        entry = parse_entry(value) if why is None else why
        if isinstance(entry, str):
            self.bad(f"line {number}: {entry}")
            return
        if self.study is None:
            study = entry.id.removesuffix(f"-{entry.n}")
            self.study = study if valid_id(study) else None
        if entry.id != f"{self.study}-{entry.n}":
            self.bad(f"line {number}: trial {entry.n}'s id is not {self.study}-{entry.n}")
            return
        before = self.trials.get(entry.n)
        if before is None:
            if len(self.trials) >= TRIALS_LIMIT:
                raise Unreadable(JOURNAL, f"more than {TRIALS_LIMIT} trials (line {number}): reading stopped")
            last = max(self.trials, default=0)
            if entry.n != last + 1:
                self.bad(f"line {number}: trial {entry.n} comes after trial {last}: trials are numbered one by one")
        elif (before.points, before.cls) != (entry.points, entry.cls):
            self.bad(f"line {number}: trial {entry.n}'s points or class are not those it was planned with")
        was = before.state if before is not None else None
        if (was, entry.state) not in JOURNAL_STEPS:
            self.bad(f"line {number}: trial {entry.n} {entry.state} after {'being ' + was if was else 'no line'}")
        self.trials[entry.n] = entry


def read_journal(root: str, study: str | None) -> Journal:
    """The journal of the campaign at ``root`` (its real path), read safely a chunk at a time."""
    journal = Journal(study)
    why = _plain_file(root, JOURNAL)
    if why is not None:
        journal.problem = why
        return journal
    number = 0
    pending = b""
    try:
        for chunk in safefile.ledger_chunks(root, JOURNAL, JOURNAL_CAP):
            parts = chunk.split(b"\n")
            parts[0] = pending + parts[0]
            pending = parts.pop()
            for body in parts:
                number += 1
                if body.strip():
                    journal.take(number, body)
                else:
                    journal.bad(f"line {number}: empty")  # the explorer writes none
        if pending.strip():
            journal.bad(f"line {number + 1}: torn (no end of line)")
    except Unreadable as exc:
        journal.problem = str(exc)
    return journal


@dataclass
class Summary:
    """campaign.json as read: its plan and trials, or why it is not this campaign's summary."""

    body: dict[str, Any] | None = None  # as read, when it is a campaign's summary
    problem: str | None = None
    study: str | None = None
    classes: dict[str, set[str]] = field(default_factory=dict)  # point -> the classes the plan gives it
    trials: dict[int, tuple[Entry, dict[str, Any]]] = field(default_factory=dict)  # n -> the trial, as written


def read_summary(root: str) -> Summary:
    """campaign.json of the campaign at ``root``, read safely and whole, its plan and trials validated."""
    why = _plain_file(root, CAMPAIGN)
    if why is not None:
        return Summary(problem=why)
    try:
        data = b"".join(safefile.ledger_chunks(root, CAMPAIGN, SUMMARY_CAP))
    except Unreadable as exc:
        return Summary(problem=str(exc))
    body, why = exact_json(data)
    del data
    if why is not None:
        return Summary(problem=f"{CAMPAIGN}: {why}")
    if not isinstance(body, dict):
        return Summary(problem=f"{CAMPAIGN}: {type_name(body)} where the campaign's summary belongs")
    missing = sorted((PLAN_KEYS | {"trials", "matrix"}) - body.keys())
    if missing:
        return Summary(problem=f"{CAMPAIGN}: no {missing[0]}")
    if body.keys() - SUMMARY_KEYS:
        return Summary(problem=f"{CAMPAIGN}: {plural(len(body.keys() - SUMMARY_KEYS), 'field')} a summary lacks")
    study = body["study"]
    shapes = [
        (body["version"] == 1 and is_int(body["version"]), "version is not 1"),
        (valid_id(study), "study is not a study id"),
        (body["trace"] == TRACE, f"trace is not {TRACE}"),
        (
            isinstance(body["token"], str) and re.fullmatch(r"[0-9a-f]{32}", body["token"]) is not None,
            "token is not 32 hexadecimal digits",
        ),
        (_options(body["options"]), "options is not the explorer's (all, depth, maxTrials)"),
        (_timing(body.get("timing", {})), "timing is not seconds by step (trace, cluster, trials)"),
        (
            all(isinstance(body[k], dict) for k in ("template", "options", "matrix")),
            "template, options or matrix is not an object",
        ),
        (isinstance(body["points"], list) and isinstance(body["classes"], list), "points or classes is not a list"),
        (isinstance(body["trials"], list), "trials is not a list"),
    ]
    for fine, said in shapes:
        if not fine:
            return Summary(problem=f"{CAMPAIGN}: {said}")
    summary = Summary(study=study)
    by_class: dict[str, list[str]] = {}
    for i, p in enumerate(body["points"]):
        point = point_text(p.get("point")) if isinstance(p, dict) else None
        if (
            point is None
            or p.keys() != {"point", "class", "left"}
            or str(point) != p["point"]
            or not isinstance(p["class"], str)
            or not _left(p["left"])
        ):
            return Summary(problem=f"{CAMPAIGN}: points[{i}] is not a kill point, its class and what it leaves")
        summary.classes.setdefault(p["point"], set()).add(p["class"])
        by_class.setdefault(p["class"], []).append(p["point"])
    # The classes: the points grouped by class, classes in the order of their first point, points in order.
    grouped = [{"name": name, "candidates": points} for name, points in by_class.items()]
    if not same_json(body["classes"], grouped):
        return Summary(problem=f"{CAMPAIGN}: classes is not its points grouped by class", study=study)
    for i, t in enumerate(body["trials"]):
        entry = parse_entry(t)
        if isinstance(entry, str):
            return Summary(problem=f"{CAMPAIGN}: trials[{i}]: {entry}", study=study)
        if entry.id != f"{study}-{entry.n}" or entry.n in summary.trials:
            return Summary(problem=f"{CAMPAIGN}: trials[{i}] is not trial {entry.n} of {study} once", study=study)
        summary.trials[entry.n] = (entry, t)
    summary.body = body
    return summary


def _left(value: Any) -> bool:
    """What a crash at a point leaves unfinished, as the explorer writes it: per category, purposes."""
    return (
        isinstance(value, dict)
        and value.keys() == set(TARGET_CLASSES)
        and all(_is_str_list(purposes) for purposes in value.values())
    )


def _options(value: Any) -> bool:
    """The explorer's options: ``{"all": bool, "depth": 1 or 2, "maxTrials": a count or null}``."""
    if not isinstance(value, dict) or value.keys() != {"all", "depth", "maxTrials"}:
        return False
    most = value["maxTrials"]
    return (
        isinstance(value["all"], bool)
        and value["depth"] in range(1, MAX_POINTS + 1)
        and is_int(value["depth"])
        and (most is None or (is_int(most) and most >= 1))
    )


def _timing(value: Any) -> bool:
    """The explorer's timing: seconds (finite, not negative) of its steps."""
    return (
        isinstance(value, dict)
        and value.keys() <= {"trace", "cluster", "trials"}
        and all(
            isinstance(s, (int, float)) and not isinstance(s, bool) and math.isfinite(s) and s >= 0
            for s in value.values()
        )
    )


@dataclass(slots=True)
class TrialFolder:
    """What ``trials/<n>`` is, and what it says of its trial."""

    n: int
    kind: str  # MISSING, LINK, NOT_FOLDER or FOLDER
    where: str = ""  # a link's end, in studymon's words
    inode: tuple[int, int] | None = None
    examined: bool = False
    problems: list[str] = field(default_factory=list)  # why it is not the trial's own folder
    fate: str | None = None  # FIRED (no point missed), MISSED_THERE, or ARMED (a point neither fired nor missed)
    missed: str = ""  # the point missed, and why (quoted)
    report: dict[str, Any] | None = None  # report.json's verdict (trial_verdict), as written when the trial ended
    report_problem: str | None = None
    checks: list[Check] | None = None  # judged now
    not_evidence: bool = False

    @property
    def own(self) -> bool:
        return self.kind == FOLDER and self.examined and not self.problems


def _look(root: str, n: int, trace: str) -> TrialFolder:
    """``trials/<n>`` without following a link: what it is, and for a link where it leads."""
    rel = os.path.join(TRIALS, str(n))
    path = os.path.join(root, rel)
    try:
        st = os.lstat(path)
    except OSError:
        return TrialFolder(n, MISSING)
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(path)
        head, _, name = real.rpartition(os.sep)
        if real == trace:
            where = "to the trace"
        elif head == os.path.join(root, TRIALS) and name.isdigit():
            where = f"to {TRIALS}/{int(name)}"
        elif real.startswith(root + os.sep):
            where = "to elsewhere in the campaign"
        else:
            where = "out of the campaign"
        return TrialFolder(n, LINK, where)
    if not stat.S_ISDIR(st.st_mode):
        return TrialFolder(n, NOT_FOLDER)
    return TrialFolder(n, FOLDER, inode=(st.st_dev, st.st_ino))


def _size(root: str, rel: str, cap: int) -> int:
    """The bytes the judge would read of ``root/rel``: its size, if a regular file within ``cap`` (else none)."""
    try:
        st = os.lstat(os.path.join(root, rel))
    except OSError:
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) and st.st_size <= cap else 0


def trial_weight(out: str, judged: bool, room: int) -> int | None:
    """What examining the trial folder ``out`` counts against :data:`TRIALS_BUDGET` (None: more than ``room``).

    Its files the judge reads (each within its cap), its report.json, and for a folder to be judged (``judged``)
    its kill folders as the judge counts them (the first :data:`KillFolder.LIMIT`), the kills/ listing (its size:
    the judge reads it), and the weights of the folder and of each kill folder.
    """
    caps = (
        EvidenceFolder.CAPS
        if judged
        else {r: EvidenceFolder.CAPS[r] for r in (EvidenceFolder.RESEARCH, EvidenceFolder.ARMS)}
    )
    weight = TRIAL_WEIGHT + _size(out, EvidenceFolder.REPORT, REPORT_CAP)
    weight += sum(_size(out, rel, cap) for rel, cap in caps.items())
    if not judged:
        return weight if weight <= room else None
    try:
        st = os.lstat(os.path.join(out, EvidenceFolder.KILLS))
        weight += st.st_size if stat.S_ISDIR(st.st_mode) else 0
    except OSError:
        pass
    if weight > room:
        return None  # not even listed: a kills/ of a million names costs its listing
    for kill in EvidenceFolder(Path(out)).kills(KillFolder.LIMIT):
        weight += kill.size()[0] + KILL_WEIGHT
        if weight > room:
            return None
    return weight


def examine(folder: TrialFolder, out: str, entry: Entry, study: str | None, template: dict[str, Any] | None) -> None:
    """Whether ``out`` is ``entry``'s own folder (research.json, arms.jsonl), and what its arms say of its points;
    the verdict it wrote when it ended (report.json)."""
    folder.examined = True
    research_cap = EvidenceFolder.CAPS[EvidenceFolder.RESEARCH]
    try:
        research = safefile.read_object(out, EvidenceFolder.RESEARCH, research_cap)
    except Unreadable as exc:
        if not (exc.missing and entry.state == FAILED_TO_RUN):  # a trial that could not run may have written none
            folder.problems.append(str(exc))
    else:
        said = research.get("study")
        if said != entry.id:
            whose = "no study id"
            if said == study:
                whose = "the trace's study"
            elif valid_id(said) and study is not None and said.startswith(f"{study}-"):
                whose = f"trial {said.removeprefix(study + '-')}'s study" if said[len(study) + 1 :].isdigit() else said
            elif valid_id(said):
                whose = f"study {said}"
            folder.problems.append(f"{EvidenceFolder.RESEARCH} is {whose}, not {entry.id}")
        elif template is not None and not same_json({k: v for k, v in research.items() if k != "study"}, template):
            folder.problems.append(f"{EvidenceFolder.RESEARCH} is not the campaign's template")
    if entry.state != FAILED_TO_RUN or safefile.exists(out, EvidenceFolder.ARMS):
        _arms(folder, out, entry)
    if entry.state == DONE:
        try:
            body = safefile.read_object(out, EvidenceFolder.REPORT, REPORT_CAP)
            checks = _report_checks(body)
            # Its verdict is written twice (§6.9): ``ok``, and the checks it sums up.
            said = body.get("ok", ...)
            if not isinstance(body.get("checks"), list) or not any(said is x for x in (True, False, None)):
                folder.report_problem = f"{EvidenceFolder.REPORT}: not a report (its ok and its checks)"
            elif said is not overall(checks):
                folder.report_problem = f"{EvidenceFolder.REPORT}: its ok is not its checks' verdict"
            else:
                folder.report = trial_verdict(checks)
        except Unreadable as exc:
            folder.report_problem = str(exc)


def _report_checks(body: dict[str, Any]) -> list[Check]:
    """report.json's checks, as the trial's worker read them (:func:`studymon.engine.judge.report.report_checks`)."""
    listed = body.get("checks")
    return [
        Check(str(c.get("name", "")), c.get("ok"), "", str(c.get("scope", "")))
        for c in (listed if isinstance(listed, list) else [])
        if isinstance(c, dict) and c.get("ok") in (True, False, None)
    ]


def _arms(folder: TrialFolder, out: str, entry: Entry) -> None:
    """arms.jsonl: armed at exactly the trial's points, in order, never disarmed; each fired or missed at the
    point it was the turn of; ``fate`` what it says."""
    armed: list[str] = []  # every point armed, in order (a few: reading stops past the trial's)
    pending: list[str] = []
    fate = FIRED
    problems: list[str] = []
    try:
        with safefile.JsonlFile(out, EvidenceFolder.ARMS, EvidenceFolder.CAPS[EvidenceFolder.ARMS]) as arms:
            for line in arms.lines():
                if line.problem == safefile.TORN:
                    continue  # a console that died writing it: not a line, in every file it appends to
                arm = parse_arm(line.value) if line.problem is None else line.problem
                if isinstance(arm, str):
                    problems.append(f"{EvidenceFolder.ARMS} line {line.number}: {arm}")
                    break
                point = point_text(arm.point)
                said = str(point) if point is not None and str(point) == arm.point else None
                if arm.event == "disarm":
                    problems.append(f"{EvidenceFolder.ARMS} line {line.number}: disarmed")
                    break
                if said is None:
                    problems.append(f"{EvidenceFolder.ARMS} line {line.number}: an {arm.event} line without a point")
                    break
                if arm.event == "arm":
                    armed.append(said)
                    pending.append(said)
                    if len(armed) > len(entry.points):
                        break
                    continue
                if not pending or pending[0] != said:
                    problems.append(f"{EvidenceFolder.ARMS} line {line.number}: {arm.event} at {said}, not its turn")
                    break
                pending.pop(0)
                if arm.event == "missed" and fate != MISSED_THERE:
                    fate, folder.missed = MISSED_THERE, f"{said}: {free_text(arm.detail, 80)}"
    except Unreadable as exc:
        problems.append(str(exc))
    if tuple(armed) != entry.points and not (entry.state == FAILED_TO_RUN and not armed):
        shown = " then ".join(armed[: MAX_POINTS + 1]) or "no point"
        problems.append(f"{EvidenceFolder.ARMS} arms {shown}, not the trial's {entry.said}")
    folder.problems += problems
    folder.fate = ARMED if pending and fate == FIRED else fate


def judge_trial(folder: TrialFolder, out: str) -> None:
    """The trial folder's every check, by the judge alone."""
    from studymon.engine.judge import NotEvidence, judge

    try:
        folder.checks = list(judge(Path(out)).checks)
    except NotEvidence:
        folder.not_evidence = True


@dataclass
class CampaignReport:
    """What ``studymon report CAMPAIGN`` says of one campaign: its checks, its matrix, and what it wrote."""

    folder: Path
    study: str | None
    checks: list[Check]
    matrix: dict[str, Any]
    written: str | None = None  # a line saying that campaign.json was written again, and why

    @property
    def status(self) -> int:
        return checks_status(c.ok for c in self.checks)


def rejudge(folder: Path) -> CampaignReport:
    """Judge a campaign offline from its trial folders, and hold its journal and campaign.json to them."""
    return _Rejudge(Path(folder)).run()


class _Rejudge:
    """One campaign report: the reads, then a check at a time."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.root = os.path.realpath(folder)
        self.summary = read_summary(self.root)
        self.journal = read_journal(self.root, self.summary.study)
        self.study = self.summary.study or self.journal.study
        self.trace = os.path.realpath(os.path.join(self.root, TRACE))
        self.folders: dict[int, TrialFolder] = {}
        self.trials_problem: str | None = None  # trials/ itself is not the campaign's folder of trials
        self.strangers: list[int] = []  # trials/<m> of no trial of the journal
        self.too_many = False
        self.spent = 0
        self.stopped_at: int | None = None  # the first trial folder past TRIALS_BUDGET
        self.verdicts: dict[int, dict[str, Any]] = {}  # judged now, by trial

    def run(self) -> CampaignReport:
        self._look()
        self._examine()
        checks = [
            self._journal_well_formed(),
            self._trial_folders(),
            self._journal_agrees(),
            self._trials_judged(),
            self._trials_ran(),
        ]
        summary, written = self._summary_agrees(checks)
        checks.insert(3, summary)
        checks += self._trial_checks()
        return CampaignReport(self.folder, self.study, checks, matrix(self._matrix_trials(examined_only=True)), written)

    # --- reading -------------------------------------------------------------------------------------------
    def _look(self) -> None:
        trials = os.path.join(self.root, TRIALS)
        try:
            st = os.lstat(trials)
        except OSError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            self.trials_problem = f"{TRIALS}/ is a symbolic link: no folder in it is the campaign's"
        elif st is not None and not stat.S_ISDIR(st.st_mode):
            self.trials_problem = f"{TRIALS}/ is not a folder"
        for n in self.journal.trials:
            self.folders[n] = _look(self.root, n, self.trace) if self.trials_problem is None else TrialFolder(n, LINK)
        if st is None or self.trials_problem is not None:
            return
        try:
            with os.scandir(trials) as entries:
                for i, e in enumerate(entries):
                    if i >= ENTRIES_LIMIT:
                        self.too_many = True
                        break
                    name = e.name
                    if name.isdigit() and name.isascii() and name == str(int(name)) and int(name) not in self.folders:
                        self.strangers.append(int(name))
        except OSError as exc:
            self.trials_problem = f"{TRIALS}/ cannot be listed ({os.strerror(exc.errno or 0)})"
        self.strangers.sort()

    def _examine(self) -> None:
        """Each trial folder that should be there, in trial order, while the budget holds."""
        template = self.summary.body.get("template") if self.summary.body is not None else None
        seen: dict[tuple[int, int], int] = {}
        try:
            st = os.lstat(self.trace)
            seen[(st.st_dev, st.st_ino)] = 0
        except OSError:
            pass
        for n, entry in self.journal.trials.items():
            f = self.folders[n]
            # A planned trial's folder is there only once it was renamed into place whole: it is examined as any
            # other (its journal line may be the only thing still to come, or a line moved to hide it).
            if f.kind != FOLDER or entry.state == LOST:
                continue
            if f.inode in seen:
                other = seen[f.inode]
                f.examined = True
                f.problems.append("the trace's folder" if other == 0 else f"the same folder as {TRIALS}/{other}")
                continue
            assert f.inode is not None
            seen[f.inode] = n
            if self.stopped_at is not None:
                continue
            out = os.path.join(self.root, TRIALS, str(n))
            weight = trial_weight(out, entry.state == DONE, TRIALS_BUDGET - self.spent)
            if weight is None:
                self.stopped_at = n
                continue
            self.spent += weight
            examine(f, out, entry, self.study, template if isinstance(template, dict) else None)
            # A planned trial's folder is whole once there (renamed into place): judged as a done one's.
            if entry.state in (DONE, PLANNED) and not f.problems and f.fate != MISSED_THERE:
                judge_trial(f, out)
                if f.checks is not None:
                    self.verdicts[n] = trial_verdict(f.checks)

    # --- the campaign's checks -----------------------------------------------------------------------------
    def _journal_well_formed(self) -> Check:
        j = self.journal
        v = Verdict("journalWellFormed", "campaign")
        if j.problem is not None:
            v.fail(j.problem)
        v.listed(j.problems, j.problem_count, "problem", "problems")
        return v.check(
            f"{plural(len(j.trials), 'trial')} in {plural(j.lines, 'line')}, numbered one by one, each planned "
            "then ended at most once"
        )

    def _trial_folders(self) -> Check:
        v = Verdict("trialFolders", "campaign")
        if self.trials_problem is not None:
            v.fail(self.trials_problem)
        shown: list[str] = []
        count = 0
        for n, f in self.folders.items():
            said = None
            if f.kind == LINK and self.trials_problem is None:
                said = f"{TRIALS}/{n} is a symbolic link {f.where}, not the trial's own folder"
            elif f.kind == NOT_FOLDER:
                said = f"{TRIALS}/{n} is not a folder"
            elif f.problems:
                said = f"{TRIALS}/{n}: {f.problems[0]}"
            if said is not None:
                count += 1
                if len(shown) < SHOWN:
                    shown.append(said)
        v.listed(shown, count, "trial folder", "trial folders")
        own = sum(1 for f in self.folders.values() if f.own)
        return v.check(
            f"{plural(own, 'trial folder')} examined, each its own: study {self.study or '<ID>'}-<n> (research.json) "
            "with the "
            "campaign's template, armed at its points (arms.jsonl), a folder inside the campaign"
        )

    def _journal_agrees(self) -> Check:
        v = Verdict("journalAgrees", "campaign")
        if self.journal.problem is not None and not self.journal.trials:
            v.fail("the journal cannot be read: nothing to hold the folders to (journalWellFormed)")
        if self.trials_problem is not None:
            v.fail(f"{self.trials_problem} (trialFolders)")
        fails: list[str] = []
        unknowns: list[str] = []
        counts = dict.fromkeys(STATES, 0)
        for n, entry in self.journal.trials.items():
            counts[entry.state] += 1
            f = self.folders[n]
            if self.trials_problem is not None:
                continue
            here = f"{TRIALS}/{n}"
            if entry.state in (DONE, MISSED) and f.kind == MISSING:
                fails.append(f"the journal says trial {n} {_said_state(entry.state)}, but {here} is missing")
            elif entry.state == LOST and f.kind != MISSING:
                fails.append(f"the journal says trial {n} was lost, but {here} is there")
            elif entry.state == PLANNED and f.kind != MISSING:
                unknowns.append(f"trial {n} is planned, but {here} is there: the campaign may be running")
            elif entry.state == DONE and f.own and f.fate == MISSED_THERE:
                fails.append(f"the journal says trial {n} is done, but its folder missed {f.missed}")
            elif entry.state == MISSED and f.own and f.fate != MISSED_THERE:
                fails.append(f"the journal says trial {n}'s point was missed, but its folder missed none")
            elif entry.state == DONE and f.own:
                fails += self._same_verdict(entry, f)
        v.listed(fails[:SHOWN], len(fails), "disagreement", "disagreements")
        for n in self.strangers[:SHOWN]:
            v.fail(f"{TRIALS}/{n} is no trial of the journal")
        if len(self.strangers) > SHOWN:
            v.fail(f"and {plural(len(self.strangers) - SHOWN, 'more folder')} of no trial")
        if self.too_many:
            v.fail(f"{TRIALS}/ holds more than {ENTRIES_LIMIT} entries: no campaign's")
        for said in unknowns[:SHOWN]:
            v.unknown(said)
        done, missed, lost = counts[DONE], counts[MISSED], counts[LOST]
        return v.check(
            f"every trial is what its folder says: {done} done (each fired at its points, its verdict its "
            f"report.json's), {missed} missed, {lost} lost (no folder)"
        )

    @staticmethod
    def _same_verdict(entry: Entry, f: TrialFolder) -> list[str]:
        """A done trial's verdict in the journal is its report.json's (written when it ended); its exit that
        verdict's status."""
        if f.report_problem is not None:
            return [f"trial {entry.n}: {f.report_problem}"]
        assert f.report is not None
        said = []
        if _canonical(f.report) != entry.verdict:
            said.append(f"the journal's verdict of trial {entry.n} is not its report.json's")
        if entry.exit is not None and entry.exit != checks_status([f.report["ok"]]):
            said.append(f"the journal's exit of trial {entry.n} is not its report.json's verdict's")
        return said

    def _trials_judged(self) -> Check:
        v = Verdict("trialsJudged", "campaign")
        if self.stopped_at is not None:
            past = sum(
                1
                for n, f in self.folders.items()
                if f.kind == FOLDER
                and not f.examined
                and n > self.stopped_at
                and self.journal.trials[n].state not in (LOST, PLANNED)
            )
            after = f" and {plural(past, 'trial folder')} after it" if past else ""
            v.unknown(
                f"{TRIALS}/{self.stopped_at}{after} not examined: "
                f"with it the folders would hold more than {size_text(TRIALS_BUDGET)}, what one report reads "
                f"(studymon report CAMPAIGN/{TRIALS}/<n> judges one alone)"
            )
        examined = sum(1 for f in self.folders.values() if f.examined)
        return v.check(
            f"every trial folder examined ({examined}: {size_text(self.spent)} of {size_text(TRIALS_BUDGET)})"
        )

    def _trials_ran(self) -> Check:
        v = Verdict("trialsRan", "campaign")
        trials = self._matrix_trials(examined_only=False)
        left = to_resume(trials)
        shown = []
        for t in left[:SHOWN]:
            why = f": {free_text(t.detail, 80)}" if t.detail else ""
            shown.append(f"trial {t.n} ({' then '.join(t.points)}) {_said_state(t.state)}{why}")
        for said in shown:
            v.unknown(said)
        if len(left) > SHOWN:
            v.unknown(f"and {plural(len(left) - SHOWN, 'more trial')}")
        if left:
            v.unknown("studymon explore --resume CAMPAIGN runs their points again")
        done = sum(1 for t in trials.values() if t.state == DONE)
        if not done:
            # No trial at all (a journal emptied, or one that cannot be read) is no point run either.
            v.unknown("no trial ran to a verdict")
        missed = sum(1 for t in trials.values() if t.state == MISSED)
        again = sum(1 for t in trials.values() if t.state in (LOST, FAILED_TO_RUN))
        rerun = f", {again} lost or unable to run and run again" if again else ""
        return v.check(f"every point ran: {done} done, {missed} missed{rerun}")

    def _summary_agrees(self, checks: list[Check]) -> tuple[Check, str | None]:
        """campaign.json against the journal (its plan and every trial's facts) and the folders (the verdicts and
        the matrix): written again when only its verdicts differ and nothing else was found wrong."""
        v = Verdict("summaryAgrees", "campaign")
        s, j = self.summary, self.journal
        if s.problem is not None:
            v.fail(s.problem)
            return v.check(""), None
        assert s.body is not None
        running = any(e.state == PLANNED for e in j.trials.values())
        facts: list[str] = []
        behind: list[str] = []  # what a campaign still running has journalled and not yet summed up
        for n, entry in j.trials.items():
            written = s.trials.get(n)
            # The explorer journals a trial (planned, then ended) before it writes campaign.json again: while it
            # runs, campaign.json may lag the journal by a line, never lead it (a trial ended there and planned in
            # the journal was ended by no journal line).
            if written is None:
                (behind if running else facts).append(f"{CAMPAIGN} has no trial {n}")
            elif written[0].facts != entry.facts:
                lag = running and written[0].state == PLANNED and entry.state != PLANNED
                (behind if lag else facts).append(f"{CAMPAIGN}'s trial {n} is not the journal's last line for it")
            elif entry.points[0] not in s.classes:
                facts.append(f"trial {n}'s point is no candidate of {CAMPAIGN}'s plan")
            elif entry.cls not in s.classes[entry.points[0]]:
                facts.append(f"trial {n}'s class is not its point's in {CAMPAIGN}'s plan")
        extra = sorted(s.trials.keys() - j.trials.keys())
        if extra:
            facts.append(f"{CAMPAIGN} has trial {extra[0]}, which the journal has not")
        for said in facts[:SHOWN]:
            v.fail(said)
        if len(facts) > SHOWN:
            v.fail(f"and {plural(len(facts) - SHOWN, 'more difference')}")
        for said in behind[:SHOWN]:
            v.unknown(f"{said} yet (the campaign may be running)")
        # The verdicts and the matrix: the folders' as judged now.
        stale = [
            n
            for n, verdict in self.verdicts.items()
            if n in s.trials and _canonical({k: s.trials[n][1][k] for k in VERDICT_KEYS}) != _canonical(verdict)
        ]
        every = j.problem is None and all(
            self.folders[n].own and n in self.verdicts for n, e in j.trials.items() if e.state == DONE
        )
        built = matrix(self._matrix_trials(examined_only=False)) if every else None  # as the explorer builds it
        stale_matrix = built is not None and _canonical(s.body["matrix"]) != _canonical(built)
        if not stale and not stale_matrix:
            judged = "" if every else " (of the trials judged)"
            return v.check(
                f"{CAMPAIGN} is the journal's, its verdicts and matrix the folders' as judged now{judged}"
            ), None
        what = (
            f"trial {stale[0]}'s verdict" + (f" (and {plural(len(stale) - 1, 'more')})" if len(stale) > 1 else "")
            if stale
            else "the matrix"
        )
        held = all(c.ok is True for c in checks if c.name != "trialsRan") and not v.failures and not v.unknowns
        if running or not held or built is None:
            why = "the campaign may be running" if running else "not every other fact of the campaign holds"
            (v.unknown if running else v.fail)(
                f"{CAMPAIGN}: {what} is not the folders' as judged now ({why}: not written again)"
            )
            return v.check(""), None
        body = summary_body(
            {k: val for k, val in s.body.items() if k not in ("trials", "matrix")},
            [{**t, **self.verdicts[n]} if n in self.verdicts else t for n, (_, t) in sorted(s.trials.items())],
            built,
        )
        try:
            write_whole(self.root, CAMPAIGN, body)
        except (OSError, ValueError) as exc:
            reason = os.strerror(exc.errno or 0) if isinstance(exc, OSError) else "it cannot be written as JSON"
            v.fail(f"{CAMPAIGN}: {what} is not the folders' as judged now, and it cannot be written again ({reason})")
            return v.check(""), None
        said = f"{CAMPAIGN} written again with {what} as judged now from the trial folders"
        return v.check(f"{CAMPAIGN} is the journal's; {said}"), said

    def _trial_checks(self) -> list[Check]:
        """One per trial judged: its folder's verdict."""
        out = []
        for n, f in self.folders.items():
            entry = self.journal.trials[n]
            if f.not_evidence:
                out.append(Check("trialHolds", False, f"{entry.said}: its folder is no evidence folder", f"trial {n}"))
            if f.checks is None:
                continue
            ok = overall(f.checks)
            head = f"{entry.said} [{free_text(entry.cls, 60)}]"
            if ok is True:
                detail = f"{head}: every check of its folder holds ({len(f.checks)})"
            else:
                named = [f"{c.scope} · {c.name}" for c in f.checks if c.ok is ok]
                more = f" and {len(named) - SHOWN} more" if len(named) > SHOWN else ""
                detail = f"{head}: {MARK[ok]} " + ", ".join(named[:SHOWN]) + more
            if entry.ok is not ok:
                detail += f"; it was {MARK[entry.ok]} when it ran (the journal)"
            out.append(Check("trialHolds", ok, detail, f"trial {n}"))
        return out

    def _matrix_trials(self, examined_only: bool) -> dict[int, Trial]:
        """The journal's trials with the verdicts judged now, for the matrix and the trials run again; only those
        whose folder was examined (done: judged) with ``examined_only``."""
        out: dict[int, Trial] = {}
        for n, e in self.journal.trials.items():
            f = self.folders[n]
            if examined_only and not (f.own and (e.state == MISSED or n in self.verdicts)):
                continue
            # Shown, a class is quoted; compared with campaign.json's matrix, it is as written.
            cls = free_text(e.cls) if examined_only else e.cls
            t = Trial(n, e.id, list(e.points), cls, state=e.state, detail=e.detail)
            verdict = self.verdicts.get(n)
            if verdict is not None:
                t.ok, t.failed, t.unknown, t.checks = (
                    verdict["ok"],
                    verdict["failed"],
                    verdict["unknown"],
                    verdict["checks"],
                )
            elif e.state == DONE:
                t.state = "unjudged" if examined_only else e.state
            out[n] = t
        return out


def _said_state(state: str) -> str:
    return {
        DONE: "is done",
        MISSED: "missed its point",
        LOST: "was lost",
        PLANNED: "never ran",
        FAILED_TO_RUN: "could not run",
    }[state]


def write_whole(root: str, name: str, body: Any) -> None:
    """``root/name`` written whole from ``body`` (JSON as the explorer writes campaign.json): a temporary file of
    a new name (never one that is there: no link is followed), then renamed over it."""
    data = (json.dumps(body, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    tmp = os.path.join(root, f".{name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, os.path.join(root, name))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
