"""Judging a study from its evidence folder alone.

:func:`judge` reads ``OUT`` (research.json, the ledger, launches, arms, the
ledger watch, the kill folders) and gives every check of the study.  The live
session writes its evidence first and then calls the same function, so
``studymon run`` and ``studymon report`` cannot disagree.

The folder may have been written by an adversary: every file is read through
:mod:`studymon.engine.safefile` (inside ``OUT`` only, regular files only, capped in
size, never echoed), and a file that cannot be used makes the checks that
need it fail with the reason; nothing here raises on bad evidence except
:class:`NotEvidence` for a folder that is not an evidence folder at all.

The ledger is streamed once, a chunk at a time, into the accounts, the
contract watch and the comparison with each kill's ``ledger-at-kill.json``
(itself streamed), so memory holds what the checks need, not the ledger.
The order of reading follows what each step needs: the kill folders' small
files first (the ledger comparison needs them), the ledger, then the
launches and the lifecycle events (which need the accounts).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studymon.engine import safefile
from studymon.engine.accounts import Accounts
from studymon.engine.checks import (
    AT_KILL,
    KILL_FILES,
    KILL_JSON,
    LIVE,
    READBACK,
    RESTARTS,
    SHOWN,
    SNAPSHOT_FILES,
    STUDY_CHECKS,
    WINDOW,
    Arming,
    Check,
    EventTally,
    KillEvidence,
    LedgerFacts,
    StudyFacts,
    TargetWatch,
    charged_equals_starts,
    contract_kept,
    exited_cleanly,
    fault_text,
    halted_at_export,
    kill_checks,
    kill_triggered,
    ledger_well_formed,
    overall,
    parse_kill,
    parse_window,
    planned_after,
    rfc3339_epoch,
)
from studymon.engine.contract import ContractWatch, is_int, valid_container_name, valid_id
from studymon.engine.ledger import LedgerIssue, LedgerParser, Record
from studymon.engine.safefile import JsonArray, JsonlFile, Unreadable

LEDGER = "study/ledger.jsonl"
LAUNCHES = "launches.jsonl"
ARMS = "arms.jsonl"
LEDGER_WATCH = "ledger-watch.jsonl"
RESEARCH = "research.json"
DEFAULT_PREFIX = "inforsi"
# A ledger with this many issues is garbage: reading stops, so a file of a
# billion empty lines costs seconds, not an hour.
ISSUE_LIMIT = 10_000
ISSUES_KEPT = 1000  # in accounts.json
_KILL_NAME = re.compile(r"[1-9][0-9]{0,5}")


class NotEvidence(ValueError):
    """The folder is not a studymon evidence folder."""


class Judgement:
    """Every check of one study, and the documents built on the way.

    ``accounts`` (the content of accounts.json) is built when first asked
    for: ``studymon report`` never needs it, and for a long ledger it is the
    largest thing a judgement holds.
    """

    def __init__(
        self,
        study: str,
        out: Path,
        checks: list[Check],
        finished: bool,
        ending: dict[str, Any] | None,
        accounts: dict[str, Any] | Callable[[], dict[str, Any]],
        kills: list[dict[str, Any]] | None = None,
    ) -> None:
        self.study = study
        self.out = out
        self.checks = checks
        self.finished = finished
        self.ending = ending
        self._accounts = accounts
        self.kills = kills if kills is not None else []

    @property
    def accounts(self) -> dict[str, Any]:
        if callable(self._accounts):
            self._accounts = self._accounts()
        return self._accounts

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


# --- the folder ------------------------------------------------------------------------


def _kill_names(out: Path) -> list[str]:
    """Names of the kill folders (``1``, ``2``, …) that are directories inside ``OUT``."""
    root = os.path.realpath(out)
    kills = os.path.join(root, "kills")
    real = os.path.realpath(kills)
    if not real.startswith(root + os.sep) or not os.path.isdir(real):
        return []
    try:
        names = os.listdir(real)
    except OSError:
        return []
    found = []
    for name in names:
        if not _KILL_NAME.fullmatch(name):
            continue
        path = os.path.realpath(os.path.join(real, name))
        if path.startswith(root + os.sep) and os.path.isdir(path):
            found.append(name)
    return sorted(found, key=int)


def kill_folders(out: Path) -> list[Path]:
    """The kill folders of ``out``, in order."""
    return [Path(out) / "kills" / name for name in _kill_names(Path(out))]


def _lines(out: Path, rel: str) -> Iterator[safefile.Line]:
    with JsonlFile(out, rel) as f:
        yield from f.lines()


def last_ending(out: Path) -> tuple[dict[str, Any] | None, bool]:
    """The last controller end in launches.jsonl, and whether the last start has ended."""
    ending, _ = _read_launches(Path(out), frozenset())
    return ending.as_json(), ending.ended


@dataclass
class _Ending:
    """The last ``end`` line (code and signal as written) and whether the last start has ended."""

    ended: bool = False
    seen: bool = False  # any end line at all
    code: Any = None
    signal: Any = None
    problem: str | None = None

    def as_json(self) -> dict[str, Any] | None:
        """The last end for the report: only an integer code and a signal name, nothing else from the file."""
        if not self.seen:
            return None
        signal = (
            self.signal if isinstance(self.signal, str) and re.fullmatch(r"SIG[A-Z0-9]{1,12}", self.signal) else None
        )
        return {"code": self.code if is_int(self.code) else None, "signal": signal}


def _read_launches(out: Path, pids: frozenset[int]) -> tuple[_Ending, dict[int, list[dict[str, Any]]]]:
    """The last end, and the end lines of ``pids`` (a few each)."""
    ending = _Ending()
    ends: dict[int, list[dict[str, Any]]] = {}
    try:
        for line in _lines(out, LAUNCHES):
            value = line.value
            if line.problem is not None or not isinstance(value, dict):
                continue
            event = value.get("event")
            if event == "start":
                ending.ended = False
            elif event == "end":
                ending.ended = ending.seen = True
                ending.code, ending.signal = value.get("code"), value.get("signal")
                pid = value.get("pid")
                if is_int(pid) and pid in pids and len(ends.setdefault(pid, [])) < 8:
                    ends[pid].append(value)
    except Unreadable as exc:
        return _Ending(problem=str(exc)), {}
    return ending, ends


def _keeper_end(ends: list[dict[str, Any]], at_epoch: float | None) -> dict[str, Any] | None:
    """The end line of the killed controller: the first of its pid's at or after the kill."""
    if not ends:
        return None
    if at_epoch is not None:
        for end in ends:
            when = rfc3339_epoch(end.get("at"))
            if when is not None and when >= at_epoch:
                return end
    return ends[-1]


def _read_study(out: Path) -> StudyFacts:
    try:
        research = safefile.read_object(out, RESEARCH)
    except Unreadable as exc:
        return StudyFacts(None, None, str(exc))
    study = research.get("study")
    prefix = research.get("containerPrefix", DEFAULT_PREFIX)
    problems = []
    if not valid_id(study):
        problems.append(f"{RESEARCH}: study is not a valid study id")
    if not valid_container_name(prefix):
        problems.append(f"{RESEARCH}: containerPrefix is not a container name prefix")
    return StudyFacts(
        study if valid_id(study) else None,
        prefix if valid_container_name(prefix) else None,
        "; ".join(problems) or None,
    )


def _read_kill(out: Path, name: str, study: StudyFacts) -> KillEvidence:
    """The kill folder's small files (kill.json, snapshots, window); the streams come later."""
    ev = KillEvidence(int(name))
    base = f"kills/{name}"
    for file in KILL_FILES:
        if not safefile.exists(out, f"{base}/{file}"):
            ev.missing.add(file)
    if KILL_JSON not in ev.missing:
        try:
            ev.kill = parse_kill(safefile.read_object(out, f"{base}/{KILL_JSON}"), study)
        except Unreadable as exc:
            ev.problems[KILL_JSON] = f"{KILL_JSON}: {exc.reason}"
    for file in SNAPSHOT_FILES:
        if file in ev.missing:
            continue
        try:
            ev.snapshots[file] = safefile.read_object(out, f"{base}/{file}")
        except Unreadable as exc:
            ev.problems[file] = f"{file}: {exc.reason}"
    if WINDOW not in ev.missing:
        try:
            ev.window, problem = parse_window(safefile.read_object(out, f"{base}/{WINDOW}"))
        except Unreadable as exc:
            problem = f"{WINDOW}: {exc.reason}"
        if problem is not None:
            ev.problems[WINDOW] = problem
    return ev


class _AtKill:
    """Compares a kill's ledger-at-kill.json with the ledger as it streams by."""

    def __init__(self, ev: KillEvidence, array: JsonArray) -> None:
        self.ev = ev
        self.array = array
        self.elements = array.elements()
        self.index = 0
        self.last_seq = 0
        self.done = False

    def _fail(self, why: str) -> None:
        self.ev.at_kill = why
        self.done = True

    def add(self, record: Record) -> None:
        if self.done:
            return
        try:
            element = next(self.elements)
        except StopIteration:
            self.done = True
            return
        except Unreadable as exc:
            self._fail(f"{AT_KILL}: {exc.reason}")
            return
        self.index += 1
        if element != record.as_json():
            self._fail(f"{AT_KILL} differs from the ledger at record {self.index} (seq {record.seq})")
        else:
            self.last_seq = record.seq

    def finish(self, ledger_ok: bool) -> None:
        """Judge what is left; with no usable ledger there is nothing to compare with (the checks say so)."""
        try:
            if not ledger_ok:
                return
            if not self.done:
                try:
                    next(self.elements)
                    self._fail(f"{AT_KILL} holds more records than the ledger")
                except StopIteration:
                    pass
                except Unreadable as exc:
                    self._fail(f"{AT_KILL}: {exc.reason}")
            k = self.ev.kill
            if (
                self.ev.at_kill is None
                and k is not None
                and k.before_kill_seq is not None
                and self.last_seq != k.before_kill_seq
            ):
                self.ev.at_kill = f"{AT_KILL} ends at seq {self.last_seq}, not at beforeKillSeq {k.before_kill_seq}"
        finally:
            self.array.close()


def _read_ledger(
    out: Path, study: StudyFacts, kills: list[KillEvidence]
) -> tuple[Accounts, ContractWatch, LedgerFacts, list[LedgerIssue]]:
    acc = Accounts(trim=True)
    contract = ContractWatch(study.container_prefix, study.id)
    facts = LedgerFacts()
    kept: list[LedgerIssue] = []
    comparers: list[_AtKill] = []
    for ev in kills:
        if AT_KILL in ev.missing:
            continue
        try:
            comparers.append(_AtKill(ev, JsonArray(out, f"kills/{ev.number}/{AT_KILL}")))
        except Unreadable as exc:
            ev.problems[AT_KILL] = f"{AT_KILL}: {exc.reason}"
    parser = LedgerParser()

    def note(issues: list[LedgerIssue]) -> None:
        facts.issue_count += len(issues)
        room = ISSUES_KEPT - len(kept)
        if room > 0:
            kept.extend(issues[:room])

    chunks = safefile.ledger_chunks(out, LEDGER)
    try:
        for chunk in chunks:
            records, issues = parser.feed(chunk)
            for r in records:
                acc.add(r)
                contract.add(r)
                for c in comparers:
                    c.add(r)
            note(issues)
            if facts.issue_count > ISSUE_LIMIT:
                facts.problem = f"reading stopped after {facts.issue_count} issues"
                break
        else:
            note(parser.finish())
    except Unreadable as exc:
        facts.problem = str(exc)
    finally:
        chunks.close()
        for c in comparers:
            c.finish(facts.problem is None)
    facts.records = acc.count
    facts.last_seq = acc.last_seq
    facts.issues = kept
    return acc, contract, facts, kept


def _read_ledger_watch(out: Path, facts: LedgerFacts) -> None:
    """ledger-watch.jsonl: every line is a change of the ledger seen live."""
    if not safefile.exists(out, LEDGER_WATCH):
        return
    try:
        for line in _lines(out, LEDGER_WATCH):
            facts.fault_count += 1
            if len(facts.faults) < SHOWN:
                facts.faults.append(
                    fault_text(line.value)
                    if line.problem is None
                    else f"{LEDGER_WATCH} line {line.number}: {line.problem}"
                )
    except Unreadable as exc:
        facts.watch_problem = str(exc)


def _read_arms(out: Path) -> Arming | None:
    if not safefile.exists(out, ARMS):
        return None
    arming = Arming()
    try:
        for line in _lines(out, ARMS):
            value = line.value
            if line.problem is not None or not isinstance(value, dict):
                arming.bad_lines += 1
                continue
            event = value.get("event")
            if event == "arm":
                arming.armed_at_end = True
            elif event == "disarm":
                arming.armed_at_end = False
            elif event == "fired":
                arming.armed_at_end = False
                if len(arming.fired) < 16:
                    arming.fired.append((value.get("kill"), value.get("run")))
            elif event == "missed":
                arming.armed_at_end = False
                if len(arming.missed) < SHOWN:
                    arming.missed.append((value.get("run"), value.get("detail")))
    except Unreadable as exc:
        arming.problem = str(exc)
    return arming


def _read_events(out: Path, ev: KillEvidence, acc: Accounts, study: StudyFacts) -> None:
    """Tally the kill's lifecycle events: the live recording and the read-back, as one."""
    k = ev.kill
    if k is None:
        return
    window = ev.window
    since = window.since_ns if window is not None else k.since_ns
    if since is None or (window is None and WINDOW not in ev.missing):
        return  # no window start known (or the window file is unusable): the checks say so
    allowed = planned_after(acc, study, k.before_kill_seq)
    targets = []
    for t in k.targets:
        name = study.container(t.run)
        if name is None:
            continue
        ids = set()
        for file in SNAPSHOT_FILES:
            entry = ev.snapshots.get(file, {}).get(name)
            if isinstance(entry, dict) and isinstance(entry.get("Id"), str):
                ids.add(entry["Id"])
        seen = window.results.get(t.run, {}).get("resultSeenNs") if window is not None else None
        targets.append(TargetWatch(t.run, name, frozenset(ids), seen))
    tally = EventTally(since, window.until_ns if window is not None else None, study.name_prefix, allowed, targets)
    for file, live in ((LIVE, True), (READBACK, False)):
        if file in ev.missing:
            continue
        try:
            for line in _lines(out, f"kills/{ev.number}/{file}"):
                where = f"{file} line {line.number}"
                if line.problem is not None:
                    tally.bad_line(where, line.problem)
                else:
                    tally.add(line.value, where, live)
        except Unreadable as exc:
            ev.problems[file] = f"{file}: {exc.reason}"
    restarts = f"kills/{ev.number}/{RESTARTS}"
    if safefile.exists(out, restarts):  # written only when the runtime restarted
        try:
            for line in _lines(out, restarts):
                where = f"{RESTARTS} line {line.number}"
                if line.problem is not None:
                    tally.bad_line(where, line.problem)
                else:
                    tally.restart(line.value, where)
        except Unreadable as exc:
            tally.bad_line(RESTARTS, exc.reason)
    ev.tally = tally


def _kill_report(ev: KillEvidence, checks: list[Check]) -> dict[str, Any]:
    k = ev.kill
    by_scope: dict[str, list[Check]] = {}
    for c in checks:
        by_scope.setdefault(c.scope, []).append(c)
    targets = []
    for t in k.targets if k else []:
        mine = by_scope.get(f"{ev.scope} · {t.run}", [])
        watch = ev.tally.watch(t.run) if ev.tally else None
        targets.append(
            {
                "run": t.run,
                "container": t.container if valid_container_name(t.container) else None,
                "resultSeq": (ev.window.results.get(t.run) or {}).get("resultSeq") if ev.window else None,
                "events": None
                if watch is None
                else {
                    "forbidden": [{"action": a, "timeNano": ns} for a, ns in watch.forbidden],
                    "dies": [{"Id": i, "exitCode": code} for i, code in watch.dies.values()],
                },
                "checks": {c.name: c.ok for c in mine},
                "details": {c.name: c.detail for c in mine},
            }
        )
    return {
        "kill": ev.number,
        "trigger": k.trigger if k else None,
        "beforeKillSeq": k.before_kill_seq if k else None,
        "windowOpen": ev.window_open,
        "files": {f: ev.problem(f) or "ok" for f in KILL_FILES},
        "gaps": ev.tally.gaps if ev.tally else None,
        "checks": {c.name: c.ok for c in by_scope.get(ev.scope, [])},
        "details": {c.name: c.detail for c in by_scope.get(ev.scope, [])},
        "targets": targets,
    }


def judge(out: Path) -> Judgement:
    """Every check of the study in ``out``, from the files alone."""
    out = Path(out)
    if not safefile.exists(out, RESEARCH) or not safefile.exists(out, LAUNCHES):
        raise NotEvidence(f"{out} is not a studymon evidence folder (no {RESEARCH} or {LAUNCHES})")
    study = _read_study(out)
    names = _kill_names(out)
    kills = [_read_kill(out, name, study) for name in names]
    numbers = [ev.number for ev in kills]
    for i, ev in enumerate(kills):
        low = numbers[i - 1] if i else 0
        ev.missing_kills = list(range(low + 1, ev.number))

    acc, contract, ledger, issues = _read_ledger(out, study, kills)
    _read_ledger_watch(out, ledger)
    pids = frozenset(ev.kill.pid for ev in kills if ev.kill is not None and ev.kill.pid is not None)
    ending, ends = _read_launches(out, pids)
    arming = _read_arms(out)
    for ev in kills:
        if ev.kill is not None and ev.kill.pid is not None:
            ev.keeper_end = _keeper_end(ends.get(ev.kill.pid, []), ev.kill.at_epoch)
        ev.launches_problem = ending.problem
        _read_events(out, ev, acc, study)

    finished = ending.ended and is_int(ending.code) and ending.code == 0
    checks = [
        ledger_well_formed(ledger),
        contract_kept(contract, study, ledger),
        halted_at_export(acc, ledger),
        charged_equals_starts(acc, ledger),
        exited_cleanly(ending.code, ending.signal, ending.ended, ending.problem),
    ]
    triggered = kill_triggered(arming, kills, acc, ledger, finished)
    if triggered is not None:
        checks.append(triggered)
    reports = []
    for ev in kills:
        kchecks = kill_checks(ev, acc, study, ledger)
        checks.extend(kchecks)
        reports.append(_kill_report(ev, kchecks))

    def accounts() -> dict[str, Any]:
        doc = acc.as_json()
        doc["ledgerIssues"] = [i.as_json() for i in issues]
        doc["ledgerIssueCount"] = ledger.issue_count
        doc["contract"] = contract.first.text if contract.first else None
        doc["checks"] = {c.name: c.ok for c in checks if c.scope == "study" and c.name in STUDY_CHECKS}
        return doc

    return Judgement(study.id or out.name, out, checks, finished, ending.as_json(), accounts, reports)
