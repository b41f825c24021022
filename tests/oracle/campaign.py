"""``judge_campaign``: a ``studymon explore`` folder (§8a), every trial judged again from its own folder.

The checks are docs/contract.md's ("Campaigns"), by their names:

* scope ``campaign``:
  ``journalWellFormed`` (every line of ``trials.jsonl`` is a trial of its fields and types, numbered
  one by one from 1, each planned then ended at most once with the same points and class),
  ``trialFolders`` (each trial folder examined is its own: a real folder inside the campaign, not the
  trace's nor another trial's, study ``<ID>-<n>`` with the campaign's template, armed at exactly the
  trial's points, each fired or missed in its turn, never disarmed), ``journalAgrees`` (each trial is
  what its folder says: done with its ``report.json``'s verdict and that verdict's exit status, missed
  with a point missed, lost without a folder; no folder of no trial; ``?`` for a planned trial whose
  folder is there; ✗ when the journal could not be read to its end and not one trial was read from it,
  folders or none), ``summaryAgrees`` (``campaign.json``'s plan well formed, its ``version`` the integer
  1 and each candidate's ``left`` exactly its four lists, its trials the journal's last line for each,
  its verdicts and matrix those judged now), ``trialsJudged`` (every trial folder examined within what
  one report reads: ``?`` past it), ``trialsRan`` (every point ran to a verdict:
  ``?`` for a trial lost, never run or unable to run whose points no later trial ran);
* scope ``trial N``, for every trial judged (its folder examined and its own, not missed):
  ``trialHolds``, the oracle's own verdict of the folder (``judge_study``: ✓ status 0, ✗ 1, ? 3).

A folder is a campaign when it has ``campaign.json`` or ``trials.jsonl``, of whatever kind; any other is
judged as a study's (``judge_study``: status 2 and no check without ``launches.jsonl``).

The oracle never writes: where the product would write ``campaign.json`` again (only verdicts or the
matrix differ, everything else holds, no trial planned, every done trial judged), it takes the rewrite
as done and gives ``summaryAgrees`` ✓.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.oracle.arms import SEED
from tests.oracle.evidence import Arms, is_point, load_arms, valid_id
from tests.oracle.killfolder import kill_folder_numbers, kill_folder_size
from tests.oracle.reading import (
    CAPS,
    MAX_KILL_FOLDERS,
    Refused,
    decode,
    file_size,
    folder_identity,
    has_entry,
    list_folder,
    list_folder_bounded,
    quote,
    read_bytes,
    read_json,
    split_lines,
    strict_equal,
    strict_json,
)
from tests.oracle.study import judge_study
from tests.oracle.verdict import OracleVerdict, Tally

KiB = 1024
MiB = 1024 * KiB
C = "campaign"
JW, TF, JA, SA, TJ, TR, TH = (
    "journalWellFormed",
    "trialFolders",
    "journalAgrees",
    "summaryAgrees",
    "trialsJudged",
    "trialsRan",
    "trialHolds",
)
STATES = ("planned", "done", "missed", "lost", "error")
ENDED = ("done", "missed", "lost", "error")
RAN = ("done", "missed")  # a trial whose points were run (hit or missed)
VERDICT_KEYS = ("ok", "failed", "unknown", "checks")
MARK = {True: "✓", False: "✗", None: "?"}
STATUS = {True: 0, False: 1, None: 3}
# The bounds of docs/contract.md's "Campaigns" table.
MAX_TRIALS = 10_000
MAX_BAD_LINES = 1000
MAX_TRIAL_ENTRIES = 20_000
EXAMINED_CAP = 32 * MiB
PER_TRIAL_FOLDER = 32 * KiB
PER_KILL_FOLDER = 32 * KiB
# The files of a study's folder the judge reads (beside the kill folders'), each counted within its cap
# (outcome.json's and machine.jsonl's are the oracle's own: README.md, open questions 8 and 23).
JUDGED_FILES = (
    "research.json",
    "study/ledger.jsonl",
    "timeline.jsonl",
    "launches.jsonl",
    "arms.jsonl",
    "ledger-watch.jsonl",
    "outcome.json",
    "machine.jsonl",
)


def is_campaign(folder: Path) -> bool:
    """docs/contract.md ("Campaigns"): `studymon report CAMPAIGN` takes "a folder that has `campaign.json` or
    `trials.jsonl`, of whatever kind": an entry of either name, a regular file or not (a link, a folder, a
    FIFO), makes the folder a campaign; a `trials/` folder alone does not (README.md, open question 83)."""
    return has_entry(folder, "campaign.json") or has_entry(folder, "trials.jsonl")


def judge_campaign(folder: Path) -> OracleVerdict:
    """A campaign's verdict; a folder that is no campaign (neither `campaign.json` nor `trials.jsonl`) is
    judged as `studymon report` judges any other folder, as a study's: without `launches.jsonl` it is not a
    studymon evidence folder (status 2, no check)."""
    if not is_campaign(Path(folder)):
        return judge_study(Path(folder))
    t = Tally()
    try:
        _judge(Path(folder), t)
    except Exception as exc:  # noqa: BLE001 - the oracle answers whatever the folder holds
        t.fail(C, "oracleError", f"the oracle failed on this folder: {type(exc).__name__}: {exc}")
    return t.verdict()


@dataclass
class Plan:
    """campaign.json, as far as it could be read."""

    readable: bool = False
    study: str | None = None
    template: dict[str, Any] | None = None
    point_class: dict[str, str] = field(default_factory=dict)
    trials: list[Any] | None = None
    matrix: Any = None


@dataclass
class JournalRead:
    """How far trials.jsonl was read: ``whole`` when to its end (a torn last line included), else ``why`` not
    (refused: missing, not a regular file, past its cap; or stopped past the bounds)."""

    whole: bool = False
    why: str | None = None


@dataclass
class Judged:
    """One trial's folder as examined: what the campaign checks read of it, and the oracle's verdict."""

    n: int
    arms: Arms | None = None
    own: bool = True
    verdict: OracleVerdict | None = None


def _judge(folder: Path, t: Tally) -> None:
    for name in (JW, TF, JA, SA, TJ, TR):
        t.add(C, name)
    plan = read_plan(folder, t)
    before: dict[int, dict[str, Any]] = {}
    read = JournalRead()
    journal = read_journal(folder, plan.study, t, before, read)
    entries = trial_entries(folder, t)
    judged = examine(folder, t, plan, journal, entries)
    journal_agrees(folder, t, journal, entries, judged, read)
    trials_ran(t, journal)
    for n in sorted(judged):
        j = judged[n]
        if j.verdict is None:
            continue
        scope = f"trial {n}"
        t.add(scope, TH)
        v = j.verdict
        if v.status == 2:
            t.fail(scope, TH, "the folder is not a studymon evidence folder (no launches.jsonl)")
        elif v.status == 1:
            t.fail(scope, TH, f"the folder fails {', '.join(sorted({name for (_, name) in v.failing()}))}")
        elif v.status == 3:
            t.unknown(scope, TH, f"the folder leaves {', '.join(sorted({name for (_, name) in v.unknown()}))} unknown")
    summary_agrees(t, plan, journal, judged, before)


# --- campaign.json ------------------------------------------------------------------------------


# What a candidate point leaves unfinished there: campaign.json's `left`, four lists of the purposes of its runs.
LEFT = ("inFlight", "charged", "unrecorded", "unsettled")


def read_plan(folder: Path, t: Tally) -> Plan:
    """campaign.json's plan; what is wrong with it fails summaryAgrees."""
    plan = Plan()
    try:
        data = read_json(folder, "campaign.json", CAPS["campaign.json"])
    except Refused as exc:
        t.fail(C, SA, str(exc))
        return plan
    if not isinstance(data, dict):
        t.fail(C, SA, "campaign.json: not an object")
        return plan
    plan.readable = True
    # docs/contract.md (summaryAgrees): "its plan well formed (its `version` the integer 1, the format
    # `docs/evidence.md` describes; ...": the JSON integer 1, not 1.0, true, "1", another integer, nor none
    # written (README.md, open question 78).
    version = data.get("version")
    if not (_int(version) and version == 1):
        t.fail(C, SA, "campaign.json: version is not 1")
    study = data.get("study")
    if valid_id(study):
        plan.study = study
    else:
        t.fail(C, SA, "campaign.json: study is not a valid id")
    if data.get("trace") != "trace":
        t.fail(C, SA, "campaign.json: trace is not the campaign's trace folder")
    template = data.get("template")
    if isinstance(template, dict):
        plan.template = template
    else:
        t.fail(C, SA, "campaign.json: template is not an object")
    points = data.get("points")
    order: list[str] = []
    grouped: dict[str, list[str]] = {}
    if not isinstance(points, list):
        t.fail(C, SA, "campaign.json: points is not a list")
    else:
        for i, entry in enumerate(points):
            point = entry.get("point") if isinstance(entry, dict) else None
            cls = entry.get("class") if isinstance(entry, dict) else None
            if (
                not isinstance(point, str)
                or not is_point(point)
                or not isinstance(cls, str)
                or not cls
                or not isinstance(entry.get("left"), dict)
            ):
                t.fail(C, SA, f"campaign.json: candidate point {i + 1} is not a point with its class")
                continue
            # docs/contract.md (summaryAgrees): "every candidate point with its class and what it leaves unfinished
            # there, `left`: exactly its four lists `inFlight`, `charged`, `unrecorded` and `unsettled` (no other
            # key), of the purposes of the runs it leaves so, each a text as the run's `runPlanned` wrote it (`"?"`
            # for a run with none: the ledger constrains no purpose's text, so neither does this)". Any text is a
            # purpose ("?", "", a long one); a key besides the four fails it (README.md, open questions 68, 77
            # and 78).
            left = entry["left"]
            if set(left) != set(LEFT) or not all(
                isinstance(left[k], list) and all(isinstance(r, str) for r in left[k]) for k in LEFT
            ):
                t.fail(C, SA, f"campaign.json: candidate point {i + 1}'s left is not its four lists of purposes")
            if point in plan.point_class:
                t.fail(C, SA, f"campaign.json: the point {quote(point)} is a candidate twice")
                continue
            plan.point_class[point] = cls
            if cls not in grouped:
                order.append(cls)
                grouped[cls] = []
            grouped[cls].append(point)
    classes = data.get("classes")
    want = [{"name": cls, "candidates": grouped[cls]} for cls in order]
    got = (
        [{"name": c.get("name"), "candidates": c.get("candidates")} if isinstance(c, dict) else c for c in classes]
        if isinstance(classes, list)
        else None
    )
    if got is None or not strict_equal(got, want):
        t.fail(C, SA, "campaign.json: classes are not its points grouped by class, in order")
    options = data.get("options")
    if not (
        isinstance(options, dict)
        and isinstance(options.get("all"), bool)
        and _int(options.get("depth"))
        and options["depth"] >= 1
        and (options.get("maxTrials") is None or (_int(options.get("maxTrials")) and options["maxTrials"] >= 0))
    ):
        t.fail(C, SA, "campaign.json: options (all, depth, maxTrials) of the wrong shape")
    trials = data.get("trials")
    if isinstance(trials, list):
        plan.trials = trials
    else:
        t.fail(C, SA, "campaign.json: trials is not a list")
    plan.matrix = data.get("matrix")
    return plan


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- the journal --------------------------------------------------------------------------------


def trial_problem(row: dict[str, Any], study: str | None) -> str | None:
    """Why a journal line is not a trial (its fields and their types), or None."""
    n = row.get("n")
    if not (_int(n) and n >= 1):
        return "n is not a trial number"
    ident = row.get("id")
    if study is not None:
        if ident != f"{study}-{n}":
            return f"id is not {study}-{n}"
    elif not (valid_id(ident) and ident.endswith(f"-{n}")):
        return f"id is not <ID>-{n}"
    points = row.get("points")
    if not (isinstance(points, list) and points and all(is_point(p) for p in points)):
        return "points are not kill points"
    cls = row.get("class")
    if not isinstance(cls, str) or not cls:
        return "class is not a class"
    if "cls" in row and row.get("cls") != cls:
        return "cls is not its class"
    if row.get("state") not in STATES:
        return "state is none of planned, done, missed, lost, error"
    if row.get("out") != f"trials/{n}":
        return f"out is not trials/{n}"
    if "ok" not in row or not (row["ok"] is None or isinstance(row["ok"], bool)):
        return "ok is not true, false or null"
    for key in ("failed", "unknown"):
        value = row.get(key)
        if not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
            return f"{key} is not a list of checks"
    checks = row.get("checks")
    if not (isinstance(checks, dict) and all(v is None or isinstance(v, bool) for v in checks.values())):
        return "checks is not a verdict per check"
    if row.get("exit") is not None and not _int(row.get("exit")):
        return "exit is not a status"
    if any(key in row and not (row[key] is None or isinstance(row[key], str)) for key in ("worker", "host")):
        return "worker or host is neither a text nor null"
    return None


def read_journal(
    folder: Path,
    study: str | None,
    t: Tally,
    before: dict[int, dict[str, Any]] | None = None,
    read: JournalRead | None = None,
) -> dict[int, dict[str, Any]]:
    """Each trial's last line (its word on it), and in ``before`` the line before it for a trial with more
    than one (``summaryAgrees``: campaign.json may lag by a line); in ``read``, whether it was read to its
    end; what breaks the journal fails journalWellFormed."""
    last: dict[int, dict[str, Any]] = {}
    first: dict[int, dict[str, Any]] = {}
    if read is None:
        read = JournalRead()
    try:
        data = read_bytes(folder, "trials.jsonl", CAPS["trials.jsonl"])
    except Refused as exc:
        t.fail(C, JW, str(exc))
        read.why = str(exc)
        return last
    lines = split_lines(data)
    bad = 0

    def broken(why: str) -> bool:
        nonlocal bad
        bad += 1
        t.fail(C, JW, why)
        if bad > MAX_BAD_LINES:
            read.why = f"more than {MAX_BAD_LINES} lines that are not trials or break one's story: not read further"
            t.fail(C, JW, read.why)
            return True
        return False

    for number, raw in lines.whole:
        where = f"trials.jsonl line {number}"
        try:
            row = strict_json(decode(raw, "line"))
        except Refused as exc:
            if broken(f"{where}: {exc}"):
                break
            continue
        if not isinstance(row, dict):
            if broken(f"{where}: not an object"):
                break
            continue
        problem = trial_problem(row, study)
        if problem is not None:
            if broken(f"{where}: not a trial ({problem})"):
                break
            continue
        n, state = row["n"], row["state"]
        story: str | None = None
        if n not in first:
            if n != len(first) + 1:
                story = f"{where}: trial {n} comes before trial {len(first) + 1}"
            elif state != "planned":
                story = f"{where}: trial {n} {state} before it was planned"
            if len(first) >= MAX_TRIALS:
                read.why = f"more than {MAX_TRIALS} trials: not read further"
                t.fail(C, JW, read.why)
                break
            first[n] = row
        else:
            prev = last[n]
            if prev["state"] != "planned":
                story = f"{where}: trial {n} {state} after it had ended ({prev['state']})"
            elif state == "planned":
                story = f"{where}: trial {n} planned twice"
            elif not strict_equal(row["points"], first[n]["points"]) or row["class"] != first[n]["class"]:
                story = f"{where}: trial {n} ends with other points or another class than it was planned with"
        if before is not None and n in last:
            before[n] = last[n]
        last[n] = row  # a later line for the same n supersedes: the journal's last word on it
        if story is not None and broken(story):
            break
    else:
        read.whole = True  # to its end: a torn last line is read, and is no trial
        # "every line of trials.jsonl is a trial": a last line without its end is not one.
        if lines.torn is not None:
            t.fail(C, JW, f"trials.jsonl line {lines.count + 1}: torn (no end of line), not a trial")
    return last


# --- the trial folders --------------------------------------------------------------------------


def trial_entries(folder: Path, t: Tally) -> set[str] | None:
    """The names under trials/ (at most the bound's), or None when there is no trials/ at all."""
    try:
        names, more = list_folder_bounded(folder, "trials", MAX_TRIAL_ENTRIES)
    except Refused as exc:
        if str(exc).endswith(": missing"):
            return None
        t.fail(C, TF, f"trials/ is not a folder of the campaign: {exc}")
        return None
    if more:
        t.fail(C, JA, f"trials/ holds more than {MAX_TRIAL_ENTRIES} entries: not looked at further")
    return set(names)


def folder_cost(path: Path) -> int:
    """What judging a trial folder reads, as docs/contract.md counts it: each file the judge reads within its
    cap, the first kill folders' files as the kills' budget counts them, the kills/ listing, and 32 KiB a
    trial folder and a kill folder."""
    cost = PER_TRIAL_FOLDER
    for rel in JUDGED_FILES:
        size = file_size(path, rel)
        if size is not None and size <= CAPS[rel]:
            cost += size
    try:
        names = list_folder(path, "kills")
    except Refused:
        return cost
    cost += sum(len(name.encode("utf-8", "surrogateescape")) + 1 for name in names)
    try:
        numbers = kill_folder_numbers(path)  # a link or a file named kills/<n> is no kill folder
    except Refused:
        return cost
    for n in numbers[:MAX_KILL_FOLDERS]:
        size, _ = kill_folder_size(path, f"kills/{n}")
        cost += size + PER_KILL_FOLDER
    return cost


def examine(
    folder: Path, t: Tally, plan: Plan, journal: dict[int, dict[str, Any]], entries: set[str] | None
) -> dict[int, Judged]:
    """Each trial's folder, in trial order, while what one report reads allows: trialFolders' checks, then
    the folder judged (a trial whose folder is its own and that was not missed)."""
    judged: dict[int, Judged] = {}
    trace = folder_identity(folder, "trace")
    seen: dict[tuple[int, int], str] = {}
    if trace is not None:
        seen[trace] = "the trace's"
    total = 0
    stopped: list[int] = []
    for n in sorted(journal):
        # Every trial's folder that is there, whatever its journal state but lost (docs/contract.md,
        # trialFolders): a planned trial's is examined and judged like a done one's; a lost trial's folder is
        # journalAgrees' fault alone.
        if entries is None or str(n) not in entries or journal[n]["state"] == "lost":
            continue
        rel = f"trials/{n}"
        ident = folder_identity(folder, rel)
        if ident is None:
            t.fail(C, TF, f"{rel} is not a folder of the campaign (a link, or not a folder)")
            continue
        if stopped:
            stopped.append(n)
            continue
        cost = folder_cost(folder / rel)
        if total + cost > EXAMINED_CAP:
            stopped.append(n)
            continue
        total += cost
        row = journal[n]
        j = Judged(n)
        judged[n] = j
        if ident in seen:
            t.fail(C, TF, f"{rel} is {seen[ident]} folder")
            j.own = False
        else:
            seen[ident] = f"trial {n}'s"
        path = folder / rel
        try:
            research = read_json(path, "research.json", CAPS["research.json"])
        except Refused as exc:
            research = None
            t.fail(C, TF, f"{rel}/{exc}")
            j.own = False
        if research is not None:
            want_id = row["id"]
            if not isinstance(research, dict) or research.get("study") != want_id:
                t.fail(C, TF, f"{rel}/research.json is not study {quote(want_id)}")
                j.own = False
            elif plan.template is not None and not strict_equal(research, {**plan.template, "study": want_id}):
                t.fail(C, TF, f"{rel}/research.json is not the campaign's template with the trial's study")
                j.own = False
        j.arms = load_arms(path)
        why = arms_problem(j.arms, row["points"])
        if why is not None:
            t.fail(C, TF, f"{rel}/arms.jsonl {why}")
            j.own = False
        if j.own and row["state"] != "missed":
            j.verdict = judge_study(path)
    if stopped:
        shown = ", ".join(f"trials/{n}" for n in stopped[:3])
        if len(stopped) > 3:
            shown += f" and {len(stopped) - 3} more"
        t.unknown(
            C,
            TJ,
            f"{shown} not examined: with it the folders would hold more than {EXAMINED_CAP // MiB} MiB, "
            "what one report reads (studymon report CAMPAIGN/trials/<n> judges one alone)",
        )
    return judged


def arms_problem(arms: Arms, points: list[str]) -> str | None:
    """Armed at exactly the trial's points in order, each fired or missed in its turn, never disarmed."""
    if not arms.present:
        return "is missing"
    if not arms.readable:
        return f"cannot be read ({arms.reason})"
    armed = [line.point if line.point is not None else SEED for line in arms.lines if line.event == "arm"]
    if armed != points:
        return "is not armed at exactly the trial's points, in order"
    if any(line.event == "disarm" for line in arms.lines):
        return "was disarmed"
    # Each fired or missed in its turn: the first point armed and not yet taken, when its line comes.
    waiting: list[str] = []
    for line in arms.lines:
        point = line.point if line.point is not None else SEED
        if line.event == "arm":
            waiting.append(point)
        elif not waiting or waiting.pop(0) != point:
            return f"line {line.line}: {line.event} at {quote(point)}, not its turn"
    return None


# --- the journal against the folders ------------------------------------------------------------


def report_verdict(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A trial folder's report.json as a verdict (ok, failed, unknown, checks), or why it cannot be read."""
    try:
        data = read_json(path, "report.json", CAPS["report.json"])
    except Refused as exc:
        return None, str(exc)
    if not isinstance(data, dict) or "ok" not in data or not isinstance(data.get("checks"), list):
        return None, "report.json: not a report (ok and checks)"
    ok = data.get("ok")
    if ok is not None and not isinstance(ok, bool):
        return None, "report.json: ok is not true, false or null"
    failed: list[str] = []
    unknown: list[str] = []
    checks: dict[str, bool | None] = {}
    for c in data["checks"]:
        if not isinstance(c, dict):
            return None, "report.json: a check of the wrong shape"
        name, scope, value = c.get("name"), c.get("scope"), c.get("ok")
        if not isinstance(name, str) or not isinstance(scope, str) or not (value is None or isinstance(value, bool)):
            return None, "report.json: a check of the wrong shape"
        if value is False:
            failed.append(f"{scope} · {name}")
        elif value is None:
            unknown.append(f"{scope} · {name}")
        checks[name] = worst(checks.get(name, True), value)
    return {"ok": ok, "failed": failed, "unknown": unknown, "checks": checks}, None


def worst(a: bool | None, b: bool | None) -> bool | None:
    return False if False in (a, b) else None if None in (a, b) else True


def journal_agrees(
    folder: Path,
    t: Tally,
    journal: dict[int, dict[str, Any]],
    entries: set[str] | None,
    judged: dict[int, Judged],
    read: JournalRead | None = None,
) -> None:
    names = entries or set()
    if read is not None and not read.whole and not journal:
        # docs/contract.md (journalAgrees): "✗ when `trials.jsonl` could not be read to its end and not one
        # trial was read from it (missing, not a regular file, or stopped): there is nothing to hold the
        # folders to, folders or none" (README.md, open question 84). No folder is then one "of no trial".
        t.fail(
            C,
            JA,
            f"the journal cannot be read ({read.why}) and not one trial was read from it: "
            "nothing to hold the folders to",
        )
        return
    for n in sorted(journal):
        row = journal[n]
        state, there = row["state"], str(n) in names
        rel = f"trials/{n}"
        if state == "planned":
            if there:
                t.unknown(C, JA, f"trial {n} is planned, but {rel} is there: the campaign may be running")
            continue
        if state == "lost":
            if there:
                t.fail(C, JA, f"trial {n} is lost, and {rel} is there")
            continue
        if state == "error":
            continue  # it could not run: perhaps a folder, perhaps none
        if not there:
            t.fail(C, JA, f"trial {n} is {state}, and {rel} is missing")
            continue
        j = judged.get(n)
        if j is None or j.arms is None or not j.own:
            # Not examined (trialFolders or trialsJudged say why), or not that trial's folder: "a trial whose
            # folder is not its own is not judged as that trial", and its report.json is not that trial's
            # (trialFolders' fault alone: README.md, open question 45).
            continue
        missed = [line for line in j.arms.lines if line.event == "missed"] if j.arms.readable else []
        if state == "missed":
            if not missed:
                t.fail(C, JA, f"trial {n} is missed, and its folder missed no point")
            continue
        # done
        if missed:
            t.fail(C, JA, f"trial {n} is done, and its folder missed a point")
        verdict, why = report_verdict(folder / rel)
        if verdict is None:
            t.fail(C, JA, f"trial {n}: {why}")
            continue
        differ = [key for key in VERDICT_KEYS if not strict_equal(row.get(key), verdict[key])]
        if differ:
            t.fail(C, JA, f"trial {n}: the journal's {', '.join(differ)} are not its report.json's")
        if not strict_equal(row.get("exit"), STATUS[verdict["ok"]]):
            t.fail(C, JA, f"trial {n}: the journal's exit is not its verdict's status ({STATUS[verdict['ok']]})")
    for name in sorted(names):
        if not (name.isdigit() and name.isascii() and str(int(name)) == name and int(name) in journal):
            t.fail(C, JA, f"trials/{quote(name)} is a folder of no trial of the journal")


def trials_ran(t: Tally, journal: dict[int, dict[str, Any]]) -> None:
    for n in sorted(journal):
        row = journal[n]
        if row["state"] in RAN:
            continue
        later = any(m > n and journal[m]["state"] in RAN and journal[m]["points"] == row["points"] for m in journal)
        if not later:
            how = {"planned": "never run", "lost": "lost", "error": "unable to run"}[row["state"]]
            t.unknown(
                C,
                TR,
                f"trial {n} was {how} and no later trial ran its points: "
                "`studymon explore --resume CAMPAIGN` runs them",
            )
    if not any(row["state"] == "done" for row in journal.values()):
        t.unknown(C, TR, "no trial ran to a verdict")


# --- campaign.json against the journal and the verdicts judged now ------------------------------


def judged_verdict(v: OracleVerdict) -> dict[str, Any]:
    checks: dict[str, bool | None] = {}
    for (_, name), value in v.checks.items():
        checks[name] = worst(checks.get(name, True), value)
    return {
        "ok": {0: True, 3: None}.get(v.status, False),
        "failed": [f"{s} · {name}" for (s, name), value in v.checks.items() if value is False],
        "unknown": [f"{s} · {name}" for (s, name), value in v.checks.items() if value is None],
        "checks": checks,
    }


def same_verdict(a: Any, b: dict[str, Any]) -> bool:
    """campaign.json's verdict of a trial against one judged now: the lists of checks as sets (the order
    the judge names its checks in is its own)."""
    if not isinstance(a, dict):
        return False
    return (
        a.get("ok") is b["ok"]
        and isinstance(a.get("failed"), list)
        and isinstance(a.get("unknown"), list)
        and sorted(map(str, a["failed"])) == sorted(b["failed"])
        and sorted(map(str, a["unknown"])) == sorted(b["unknown"])
        and strict_equal(a.get("checks"), b["checks"])
    )


def summary_agrees(
    t: Tally,
    plan: Plan,
    journal: dict[int, dict[str, Any]],
    judged: dict[int, Judged],
    before: dict[int, dict[str, Any]],
) -> None:
    """campaign.json's trials are the journal's last line for each, field by field; its verdicts and matrix
    those judged now.  docs/contract.md ("Campaigns", summaryAgrees): the explorer journals a line before it
    writes campaign.json again, so while a trial is planned (in the journal, as "`?` while a trial is planned"
    reads everywhere in the section: the campaign may be running) campaign.json may lag the journal by a
    trial's last line (``?``: a trial the journal has only planned and campaign.json does not list yet, or
    campaign.json's trial the journal's planned line while the journal has ended it), never lead it (a trial
    ended in campaign.json and planned in the journal, or one the journal does not have: ✗).  With no trial
    planned in the journal, a lag is a difference like any other (README.md, open question 22)."""
    if not plan.readable:
        return
    # A trial folder without launches.jsonl is not a studymon evidence folder (exit 2): the judge gives it no
    # verdict, so it is not judged now (nothing to hold campaign.json's verdict to, nor to write it again
    # with): every done trial was not judged, and a difference elsewhere is ✗ (README.md, open question 53).
    now = {n: judged_verdict(j.verdict) for n, j in judged.items() if j.verdict is not None and j.verdict.status != 2}
    verdicts_differ: list[str] = []
    listed: dict[int, dict[str, Any]] = {}
    for row in plan.trials or []:
        n = row.get("n") if isinstance(row, dict) else None
        if not _int(n):
            t.fail(C, SA, "campaign.json: a trial without its number")
            continue
        if n in listed:
            t.fail(C, SA, f"campaign.json lists trial {n} twice")
            continue
        listed[n] = row
    lagging: set[int] = set()
    running = any(row["state"] == "planned" for row in journal.values())
    if plan.trials is not None:
        for n in sorted(set(journal) - set(listed)):
            if journal[n]["state"] == "planned" and n not in before:
                lagging.add(n)
                t.unknown(C, SA, f"campaign.json does not list trial {n} yet, which the journal has just planned")
            else:
                t.fail(C, SA, f"campaign.json and the journal list different trials: campaign.json has no trial {n}")
        for n in sorted(set(listed) - set(journal)):
            t.fail(
                C,
                SA,
                f"campaign.json and the journal list different trials: the journal has no trial {n} "
                "(campaign.json leads it)",
            )
    for n in sorted(set(listed) & set(journal)):
        s, j = listed[n], journal[n]
        first = j["points"][0]
        if plan.point_class and plan.point_class.get(first) != j["class"]:
            t.fail(C, SA, f"trial {n}'s class is not its first point's in the plan")
        facts = sorted((set(s) | set(j)) - set(VERDICT_KEYS))
        differ = [key for key in facts if key not in s or key not in j or not strict_equal(s[key], j[key])]
        if differ:
            prev = before.get(n)
            if running and prev is not None and prev["state"] == "planned" and strict_equal(s, prev):
                lagging.add(n)
                t.unknown(
                    C,
                    SA,
                    f"campaign.json's trial {n} is the journal's line before its last (planned): "
                    "campaign.json may lag the journal by a line",
                )
                continue
            if j["state"] == "planned" and s.get("state") != "planned":
                t.fail(
                    C,
                    SA,
                    f"campaign.json says trial {n} ended ({quote(s.get('state'), 12)}), the journal's last line "
                    "for it says planned: campaign.json leads the journal",
                )
            else:
                t.fail(C, SA, f"campaign.json's trial {n} is not the journal's last line for it ({', '.join(differ)})")
        if n in now:
            if not same_verdict(s, now[n]):
                verdicts_differ.append(f"trial {n}'s verdict")
        elif any(key not in s or not strict_equal(s[key], j.get(key)) for key in VERDICT_KEYS):
            t.fail(C, SA, f"campaign.json's verdict of trial {n} is not the journal's, and it was not judged now")
    why = matrix_problem(plan, journal, now)
    if why is not None:
        verdicts_differ.append(why)
    if not verdicts_differ:
        return
    # The report writes campaign.json again with the verdicts judged now when nothing else is wrong.
    planned = running
    others_hold = all(not t.fails[(C, name)] and not t.unknowns[(C, name)] for name in (JW, TF, JA, SA, TJ))
    every_done_judged = all(n in now for n, row in journal.items() if row["state"] == "done")
    if others_hold and not planned and every_done_judged:
        return
    shown = "; ".join(verdicts_differ[:3])
    if planned:
        t.unknown(C, SA, f"campaign.json differs from what is judged now ({shown}), while a trial is planned")
    else:
        t.fail(C, SA, f"campaign.json differs from what is judged now ({shown})")


def matrix_problem(plan: Plan, journal: dict[int, dict[str, Any]], now: dict[int, dict[str, Any]]) -> str | None:
    """The matrix against the verdicts judged now: its shape, and each class's cell for each check of its
    trials judged now (✗ beats ? beats ✓ over them).  What else a cell holds (``missed``, a class of no trial
    judged) is not compared: the documents do not say how it is built (README.md, open questions)."""
    m = plan.matrix
    if not isinstance(m, dict):
        return "its matrix is not an object"
    checks, rows, first = m.get("checks"), m.get("rows"), m.get("firstFailing")
    if not (isinstance(checks, list) and all(isinstance(c, str) for c in checks)):
        return "its matrix's checks are not a list of checks"
    if not isinstance(rows, dict) or not all(isinstance(r, dict) for r in rows.values()):
        return "its matrix's rows are not per class and check"
    if not isinstance(first, dict):
        return "its matrix's firstFailing is not an object"
    by_class: dict[str, dict[str, bool | None]] = {}
    for n, verdict in now.items():
        if journal[n]["state"] != "done":
            continue
        cells = by_class.setdefault(journal[n]["class"], {})
        for name, value in verdict["checks"].items():
            cells[name] = worst(cells.get(name, True), value)
    for cls, cells in by_class.items():
        row = rows.get(cls)
        if not isinstance(row, dict):
            return "its matrix has no row for a class judged now"
        for name, value in cells.items():
            if name not in checks or row.get(name) != MARK[value]:
                return f"its matrix's {quote(name)} of a class is not the one judged now"
    return None
