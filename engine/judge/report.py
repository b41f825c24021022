"""Judging a study from its evidence folder alone.

:func:`judge` reads ``OUT`` and gives every check of the study.  The live
session writes its evidence first and then calls the same function, so
``studymon run`` and ``studymon report`` cannot disagree.  Only a folder
that is not an evidence folder at all raises (:class:`NotEvidence`).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from studymon.engine.contract.rules import valid_container_name
from studymon.engine.io import safefile
from studymon.engine.judge.controllers import replay_controllers
from studymon.engine.judge.facts import KillEvidence
from studymon.engine.judge.kill import judge_targets, kill_checks
from studymon.engine.judge.read import (
    read_arms,
    read_events,
    read_kills,
    read_ledger,
    read_ledger_watch,
    read_machine,
    read_outcome,
    read_study,
)
from studymon.engine.judge.study import (
    charged_equals_starts,
    contract_kept,
    exited_cleanly,
    halted_at_export,
    kill_triggered,
    ledger_well_formed,
    results_accounted,
)
from studymon.engine.judge.target import PlanIndex
from studymon.engine.judge.text import action_text
from studymon.engine.judge.verdict import STUDY_CHECKS, Check, overall


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


def _kill_report(ev: KillEvidence, checks: list[Check]) -> dict[str, Any]:
    k = ev.kill
    by_scope: dict[str, list[Check]] = {}
    for c in checks:
        by_scope.setdefault(c.scope, []).append(c)
    targets = []
    for t in ev.targets:
        mine = by_scope.get(f"{ev.scope} · {t.run}", [])
        counted = ev.tally.target(t.run) if ev.tally else None
        targets.append(
            {
                "run": t.run,
                "container": t.container if valid_container_name(t.container) else None,
                "resultSeq": (ev.window.results.get(t.run) or {}).get("resultSeq") if ev.window else None,
                "events": None
                if counted is None
                else {
                    "forbidden": [{"action": action_text(a), "timeNano": ns} for a, ns in counted.forbidden],
                    "dies": [{"Id": i, "exitCode": code, "timeNano": ns} for i, code, ns in counted.dies.values()],
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
        "files": {f: ev.problem(f) or "ok" for f in KillFolder.FILES},
        "gaps": ev.tally.gaps if ev.tally else None,
        "checks": {c.name: c.ok for c in by_scope.get(ev.scope, [])},
        "details": {c.name: c.detail for c in by_scope.get(ev.scope, [])},
        "targets": targets,
    }


# While a judgement runs, the cyclic collector runs once per this many new objects instead of 700:
# a long ledger leaves a few objects per run in the accounts, and the collector went over them again
# and again (a fifth of judging a 200 000-record ledger).  The judge makes no cycles of its own.
YOUNG_COLLECTION = 50_000


class _Collector:
    """The collector's threshold raised while any judgement runs (the console's sessions may judge at once,
    each in a thread), and put back as it was when the last one ends."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.judging = 0
        self.threshold = gc.get_threshold()

    @contextmanager
    def fewer_collections(self) -> Iterator[None]:
        with self.lock:
            if self.judging == 0:
                self.threshold = gc.get_threshold()
                gc.set_threshold(max(YOUNG_COLLECTION, self.threshold[0]), *self.threshold[1:])
            self.judging += 1
        try:
            yield
        finally:
            with self.lock:
                self.judging -= 1
                if self.judging == 0:
                    gc.set_threshold(*self.threshold)


_COLLECTOR = _Collector()


def judge(out: Path) -> Judgement:
    """Every check of the study in ``out``, from the files alone."""
    with _COLLECTOR.fewer_collections():
        return _judge(Path(out))


def _judge(out: Path) -> Judgement:
    folder = EvidenceFolder(out)
    # launches.jsonl is the console's own mark: a folder with it is judged whatever else is missing (a research.json
    # gone fails the checks that need it); one without it is not a studymon evidence folder at all.
    if not safefile.exists(out, folder.LAUNCHES):
        raise NotEvidence(f"{out} is not a studymon evidence folder (no {folder.LAUNCHES})")
    study = read_study(out)
    kills = read_kills(folder, study)
    numbers = [ev.number for ev in kills]
    for i, ev in enumerate(kills):
        low = numbers[i - 1] if i else 0
        ev.missing_kills = list(range(low + 1, ev.number))

    launches = replay_controllers(out, kills)
    read_outcome(out, launches)
    read_machine(out, launches)
    arming = read_arms(out)
    acc, contract, ledger, issues = read_ledger(out, study, kills, arming, launches)
    read_ledger_watch(out, ledger)
    judge_targets(kills, acc, ledger, study)
    for ev in kills:
        ev.all_results = all(bool(acc.runs[t.run].results) for t in ev.targets if t.run in acc.runs)
    finished = launches.finished
    # No ledger yet (the controller stopped before it wrote one): a resume may still write it.  Not written yet: no
    # file at all, or an empty one that reads; a link, a folder or a FIFO is no ledger to come.
    ledger.pending = (
        not finished and (ledger.absent or (ledger.records == 0 and ledger.problem is None)) and ledger.issue_count == 0
    )
    for ev in kills:
        ev.finished = finished
        # The lines of launches.jsonl the kill's proofs name: its controller's end, and the end the study finished by.
        ev.keeper_end_where, ev.final_end_where = launches.end_where(ev.keeper_end), launches.final_end_where
        read_events(out, ev, acc, study)

    ended = halted_at_export(acc, ledger, study.expect_end, finished)
    for ev in kills:
        ev.end_ok, ev.end_proof = ended.ok, next(iter(ended.proofs), None)
    checks = [
        ledger_well_formed(ledger),
        contract_kept(contract, study, ledger),
        ended,
        charged_equals_starts(acc, ledger, finished),
        exited_cleanly(launches),
        results_accounted(acc, ledger, finished),
    ]
    triggered = kill_triggered(arming, kills, acc, ledger, finished, study)
    if triggered is not None:
        checks.append(triggered)
    reports = []
    index = PlanIndex(acc)
    for ev in kills:
        kchecks = kill_checks(ev, acc, study, ledger, index)
        checks.extend(kchecks)
        reports.append(_kill_report(ev, kchecks))

    def accounts() -> dict[str, Any]:
        doc = acc.as_json()
        doc["ledgerIssues"] = [i.as_json() for i in issues]
        doc["ledgerIssueCount"] = ledger.issue_count
        doc["contract"] = contract.first.text if contract.first else None
        doc["checks"] = {c.name: c.ok for c in checks if c.scope == "study" and c.name in STUDY_CHECKS}
        return doc

    return Judgement(study.id or out.name, out, checks, finished, launches.ending_json(), accounts, reports)


def report_checks(body: Any) -> list[Check]:
    """The checks of a ``report.json`` as :meth:`Judgement.report_json` writes them; an entry that is not one
    is left out (the folder may come from elsewhere: a campaign's worker)."""
    listed = body.get("checks") if isinstance(body, dict) else None
    return [
        Check(str(c.get("name", "")), c.get("ok"), str(c.get("detail", "")), str(c.get("scope", "")))
        for c in (listed if isinstance(listed, list) else [])
        if isinstance(c, dict) and c.get("ok") in (True, False, None)
    ]
