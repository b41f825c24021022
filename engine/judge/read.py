"""Reading an evidence folder into the facts the checks are given.

Every file is read through :mod:`studymon.engine.safefile` (inside ``OUT``
only, regular files only, capped in size, never echoed), and a file that
cannot be used becomes the reason of the checks that need it; nothing here
raises on bad evidence.

The ledger is streamed once, a chunk at a time, into the accounts, the
contract watch and the comparison with each kill's ``ledger-at-kill.json``
(itself streamed), so memory holds what the checks need, not the ledger.
The order of reading follows what each step needs: the kill folders' small
files first (the ledger comparison needs them), the ledger, then the
launches and the lifecycle events (which need the accounts).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studymon.engine import safefile
from studymon.engine.accounts import Accounts
from studymon.engine.contract import ContractWatch, is_int, valid_container_name, valid_id
from studymon.engine.folder import EvidenceFolder, KillFolder
from studymon.engine.judge.events import EventTally, TargetWatch, planned_after
from studymon.engine.judge.facts import Arming, KillEvidence, LedgerFacts, StudyFacts, parse_kill, parse_window
from studymon.engine.judge.study import fault_text
from studymon.engine.judge.text import rfc3339_epoch
from studymon.engine.judge.verdict import SHOWN
from studymon.engine.ledger import LedgerIssue, LedgerParser, Record
from studymon.engine.safefile import JsonArray, JsonlFile, Unreadable
from studymon.engine.spec import DEFAULT_PREFIX

# A ledger with this many issues is garbage: reading stops, so a file of a
# billion empty lines costs seconds, not an hour.
ISSUE_LIMIT = 10_000
ISSUES_KEPT = 1000  # in accounts.json


def _lines(out: Path, rel: str) -> Iterator[safefile.Line]:
    with JsonlFile(out, rel) as f:
        yield from f.lines()


def last_ending(out: Path) -> tuple[dict[str, Any] | None, bool]:
    """The last controller end in launches.jsonl, and whether the last start has ended."""
    ending, _ = read_launches(Path(out), frozenset())
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


def read_launches(out: Path, pids: frozenset[int]) -> tuple[_Ending, dict[int, list[dict[str, Any]]]]:
    """The last end, and the end lines of ``pids`` (a few each)."""
    ending = _Ending()
    ends: dict[int, list[dict[str, Any]]] = {}
    try:
        for line in _lines(out, EvidenceFolder.LAUNCHES):
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


def keeper_end(ends: list[dict[str, Any]], at_epoch: float | None) -> dict[str, Any] | None:
    """The end line of the killed controller: the first of its pid's at or after the kill."""
    if not ends:
        return None
    if at_epoch is not None:
        for end in ends:
            when = rfc3339_epoch(end.get("at"))
            if when is not None and when >= at_epoch:
                return end
    return ends[-1]


def read_study(out: Path) -> StudyFacts:
    try:
        research = safefile.read_object(out, EvidenceFolder.RESEARCH)
    except Unreadable as exc:
        return StudyFacts(None, None, str(exc))
    study = research.get("study")
    prefix = research.get("containerPrefix", DEFAULT_PREFIX)
    problems = []
    if not valid_id(study):
        problems.append(f"{EvidenceFolder.RESEARCH}: study is not a valid study id")
    if not valid_container_name(prefix):
        problems.append(f"{EvidenceFolder.RESEARCH}: containerPrefix is not a container name prefix")
    return StudyFacts(
        study if valid_id(study) else None,
        prefix if valid_container_name(prefix) else None,
        "; ".join(problems) or None,
    )


def read_kill(folder: KillFolder, study: StudyFacts) -> KillEvidence:
    """The kill folder's small files (kill.json, snapshots, window); the streams come later."""
    ev = KillEvidence(folder.number)
    out = folder.out
    for file in KillFolder.FILES:
        if not safefile.exists(out, folder.rel(file)):
            ev.missing.add(file)
    if KillFolder.KILL not in ev.missing:
        try:
            ev.kill = parse_kill(safefile.read_object(out, folder.rel(KillFolder.KILL)), study)
        except Unreadable as exc:
            ev.problems[KillFolder.KILL] = f"{KillFolder.KILL}: {exc.reason}"
    for file in KillFolder.SNAPSHOTS:
        if file in ev.missing:
            continue
        try:
            ev.snapshots[file] = safefile.read_object(out, folder.rel(file))
        except Unreadable as exc:
            ev.problems[file] = f"{file}: {exc.reason}"
    if KillFolder.WINDOW not in ev.missing:
        try:
            ev.window, problem = parse_window(safefile.read_object(out, folder.rel(KillFolder.WINDOW)))
        except Unreadable as exc:
            problem = f"{KillFolder.WINDOW}: {exc.reason}"
        if problem is not None:
            ev.problems[KillFolder.WINDOW] = problem
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
            self._fail(f"{KillFolder.AT_KILL}: {exc.reason}")
            return
        self.index += 1
        if element != record.as_json():
            self._fail(f"{KillFolder.AT_KILL} differs from the ledger at record {self.index} (seq {record.seq})")
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
                    self._fail(f"{KillFolder.AT_KILL} holds more records than the ledger")
                except StopIteration:
                    pass
                except Unreadable as exc:
                    self._fail(f"{KillFolder.AT_KILL}: {exc.reason}")
            k = self.ev.kill
            if (
                self.ev.at_kill is None
                and k is not None
                and k.before_kill_seq is not None
                and self.last_seq != k.before_kill_seq
            ):
                self.ev.at_kill = (
                    f"{KillFolder.AT_KILL} ends at seq {self.last_seq}, not at beforeKillSeq {k.before_kill_seq}"
                )
        finally:
            self.array.close()


def read_ledger(
    out: Path, study: StudyFacts, kills: list[KillEvidence]
) -> tuple[Accounts, ContractWatch, LedgerFacts, list[LedgerIssue]]:
    acc = Accounts(trim=True)
    contract = ContractWatch(study.container_prefix, study.id)
    facts = LedgerFacts()
    kept: list[LedgerIssue] = []
    comparers: list[_AtKill] = []
    for ev in kills:
        if KillFolder.AT_KILL in ev.missing:
            continue
        try:
            comparers.append(_AtKill(ev, JsonArray(out, KillFolder(out, ev.number).rel(KillFolder.AT_KILL))))
        except Unreadable as exc:
            ev.problems[KillFolder.AT_KILL] = f"{KillFolder.AT_KILL}: {exc.reason}"
    parser = LedgerParser()

    def note(issues: list[LedgerIssue]) -> None:
        facts.issue_count += len(issues)
        room = ISSUES_KEPT - len(kept)
        if room > 0:
            kept.extend(issues[:room])

    chunks = safefile.ledger_chunks(out, EvidenceFolder.LEDGER)
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


def read_ledger_watch(out: Path, facts: LedgerFacts) -> None:
    """ledger-watch.jsonl: every line is a change of the ledger seen live."""
    if not safefile.exists(out, EvidenceFolder.LEDGER_WATCH):
        return
    try:
        for line in _lines(out, EvidenceFolder.LEDGER_WATCH):
            facts.fault_count += 1
            if len(facts.faults) < SHOWN:
                facts.faults.append(
                    fault_text(line.value)
                    if line.problem is None
                    else f"{EvidenceFolder.LEDGER_WATCH} line {line.number}: {line.problem}"
                )
    except Unreadable as exc:
        facts.watch_problem = str(exc)


def read_arms(out: Path) -> Arming | None:
    if not safefile.exists(out, EvidenceFolder.ARMS):
        return None
    arming = Arming()
    try:
        for line in _lines(out, EvidenceFolder.ARMS):
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


def read_events(out: Path, ev: KillEvidence, acc: Accounts, study: StudyFacts) -> None:
    """Tally the kill's lifecycle events: the live recording and the read-back, as one."""
    k = ev.kill
    if k is None:
        return
    window = ev.window
    since = window.since_ns if window is not None else k.since_ns
    if since is None or (window is None and KillFolder.WINDOW not in ev.missing):
        return  # no window start known (or the window file is unusable): the checks say so
    allowed = planned_after(acc, study.name_prefix, k.before_kill_seq)
    targets = []
    for t in k.targets:
        name = study.container(t.run)
        if name is None:
            continue
        ids = set()
        for file in KillFolder.SNAPSHOTS:
            entry = ev.snapshots.get(file, {}).get(name)
            if isinstance(entry, dict) and isinstance(entry.get("Id"), str):
                ids.add(entry["Id"])
        seen = window.results.get(t.run, {}).get("resultSeenNs") if window is not None else None
        targets.append(TargetWatch(t.run, name, frozenset(ids), seen))
    tally = EventTally(since, window.until_ns if window is not None else None, study.name_prefix, allowed, targets)
    for file, live in ((KillFolder.LIVE, True), (KillFolder.READBACK, False)):
        if file in ev.missing:
            continue
        try:
            for line in _lines(out, KillFolder(out, ev.number).rel(file)):
                where = f"{file} line {line.number}"
                if line.problem is not None:
                    tally.bad_line(where, line.problem)
                else:
                    tally.add(line.value, where, live)
        except Unreadable as exc:
            ev.problems[file] = f"{file}: {exc.reason}"
    restarts = KillFolder(out, ev.number).rel(KillFolder.RESTARTS)
    if safefile.exists(out, restarts):  # written only when the runtime restarted
        try:
            for line in _lines(out, restarts):
                where = f"{KillFolder.RESTARTS} line {line.number}"
                if line.problem is not None:
                    tally.bad_line(where, line.problem)
                else:
                    tally.restart(line.value, where)
        except Unreadable as exc:
            tally.bad_line(KillFolder.RESTARTS, exc.reason)
    ev.tally = tally
