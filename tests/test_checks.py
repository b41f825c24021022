"""The verdict functions on hand-made evidence: each clause fails on its own, at its boundary."""

from __future__ import annotations

import copy
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.automata import Where
from studymon.engine.contract.folder import KillFolder
from studymon.engine.evidence.records import (
    ContainerEvent,
    KillRecord,
    KillTarget,
    LaunchEnd,
    LaunchStart,
    epoch_ns,
    parse_arm,
    parse_event,
    parse_kill,
    parse_window,
)
from studymon.engine.evidence.records import time_epoch as rfc3339_epoch
from studymon.engine.judge.controllers import replay_controllers
from studymon.engine.judge.events import EventTally, TargetTally, planned_after
from studymon.engine.judge.facts import Arming, Fired, KillEvidence, Launches, LedgerFacts, StudyFacts
from studymon.engine.judge.kill import judged_targets, kill_checks, kill_delivered, kill_evidence
from studymon.engine.judge.read import take_arm
from studymon.engine.judge.study import (
    charged_equals_starts,
    exited_cleanly,
    fault_text,
    halted_at_export,
    kill_triggered,
    ledger_well_formed,
    results_accounted,
)
from studymon.engine.judge.target import charged_once, result_settled_and_finished, same_container_no_rerun
from studymon.engine.judge.text import free_text, name_text, short_id, time_text
from studymon.engine.judge.verdict import WINDOW_OPEN, Check, Verdict, overall
from tests.corpus import study_checks

AFTER, AT_KILL, BEFORE, BEFORE_RESUME = KillFolder.AFTER, KillFolder.AT_KILL, KillFolder.BEFORE, KillFolder.BEFORE_RESUME
KILL_JSON, LIVE, READBACK, WINDOW = KillFolder.KILL, KillFolder.LIVE, KillFolder.READBACK, KillFolder.WINDOW
from studymon.engine.contract.ledger import LedgerIssue, Record
from tests.corpus import build, container, container_id, derive, write

STUDY = StudyFacts("s", "inforsi")
NAME = container("d1")
SCOPE = "kill 1 · d1"


def records(files: dict[str, Any]) -> list[Record]:
    return [Record(r["seq"], r["at"], r["kind"], r["content"], r["seq"], 0) for r in files["study/ledger.jsonl"]]


def accounts(files: dict[str, Any]) -> Accounts:
    return Accounts().extend(records(files))


def launch_facts(files: dict[str, Any], kills: list[KillEvidence] | None = None) -> Launches:
    """launches.jsonl as the judge replays it (:func:`replay_controllers`) with ``kills``, from the derived folder's
    lines."""
    with tempfile.TemporaryDirectory() as out:
        write({"launches.jsonl": files["launches.jsonl"]}, Path(out))
        return replay_controllers(Path(out), kills or [])


def evidence(files: dict[str, Any], n: int = 1, study: StudyFacts = STUDY) -> tuple[KillEvidence, Accounts]:
    """What report.py reads and works out for kill ``n`` (the timeline aside), built from a derived folder."""
    acc = accounts(files)
    ev = KillEvidence(n)
    base = f"kills/{n}/"
    for file in (KILL_JSON, AT_KILL, BEFORE, AFTER, BEFORE_RESUME, READBACK, LIVE, WINDOW):
        if base + file not in files:
            ev.missing.add(file)
    ev.kill = parse_kill(files[base + KILL_JSON], study.stem)
    for file in (BEFORE, AFTER, BEFORE_RESUME):
        if base + file in files:
            ev.snapshots[file] = files[base + file]
    if base + WINDOW in files:
        ev.window, problem = parse_window(files[base + WINDOW])
        assert problem is None
    ev.targets = judged_targets(ev, acc, LedgerFacts())
    ev.all_results = all(bool(acc.runs[t.run].results) for t in ev.targets if t.run in acc.runs)
    assert ev.kill.pid is not None and ev.kill.at_epoch is not None
    launches = launch_facts(files, [ev])
    ev.finished = launches.finished
    seq = ev.kill.before_kill_seq
    assert seq is not None
    since = ev.window.since_ns if ev.window else ev.kill.since_ns
    targets = []
    for t in ev.targets:  # as read_events does: the Ids the snapshots show, the time the result was seen
        name = container(t.run)
        ids = frozenset(e["Id"] for snaps in ev.snapshots.values() if isinstance(e := snaps.get(name), dict)
                        and isinstance(e.get("Id"), str))
        targets.append(TargetTally(t.run, name, ids, ev.window.seen_ns(t.run) if ev.window else None))
    allowed, unstarted = planned_after(acc, study.stem, seq)
    ev.tally = EventTally(since, ev.window.until_ns if ev.window else None, study.stem, allowed, targets,
                          study.id, unstarted)
    for file, live in ((LIVE, True), (READBACK, False)):
        for i, e in enumerate(files.get(base + file, []), 1):
            ev.tally.add(e, f"{file} line {i}", live)
    ev.end_ok = halted_at_export(acc, LedgerFacts(), "halt", ev.finished).ok
    return ev, acc


def resumable(files: dict[str, Any]) -> dict[str, Any]:
    """The folder with its final controller killed (no exit 0): the study has not finished, a resume continues it."""
    final = files["launches.jsonl"][-1]
    assert final["event"] == "end"
    final.update(code=None, signal="SIGKILL")
    return files


def one_kill() -> dict[str, Any]:
    """One round, killed at d1's start (automatic), resumed, settled, halted."""
    return derive(build(rounds=1, ablation=(False,), overlap=(False,), kills=(("d1", "auto"),)))


def verdicts(checks: list[Check]) -> dict[str, bool | None]:
    return {c.name: c.ok for c in checks}


def target(ev: KillEvidence) -> Any:
    return ev.targets[0]


def scnr(ev: KillEvidence, acc: Accounts, ledger: LedgerFacts | None = None) -> Check:
    return same_container_no_rerun(ev, target(ev), acc.runs.get("d1"), STUDY, ledger or LedgerFacts(), SCOPE)


def rsf(ev: KillEvidence, acc: Accounts, ledger: LedgerFacts | None = None) -> Check:
    return result_settled_and_finished(ev, target(ev), acc.runs.get("d1"), acc, ledger or LedgerFacts(), SCOPE)


def co(ev: KillEvidence, acc: Accounts) -> Check:
    return charged_once(ev, target(ev), acc.runs.get("d1"), acc, LedgerFacts(), SCOPE)


# --- the verdict algebra -------------------------------------------------------------------------


def test_overall_false_beats_unknown_beats_pass() -> None:
    ok, unknown, bad = Check("a", True, ""), Check("b", None, ""), Check("c", False, "")
    assert overall([]) is True
    assert overall([ok, ok]) is True
    assert overall([ok, unknown]) is None
    assert overall([unknown, bad, ok]) is False
    assert overall([bad, unknown]) is False


def test_verdict_gathers_reasons() -> None:
    v = Verdict("x", "kill 1")
    assert v.check("fine") == Check("x", True, "fine", "kill 1")
    v.unknown("u")
    assert v.check(lambda: "never") == Check("x", None, "u", "kill 1")
    for r in "abcd":
        v.fail(r)
    assert v.check("fine") == Check("x", False, "a; b; c; and 1 more", "kill 1")
    called = []
    Verdict("y", "s").check(lambda: called.append(1) or "ok")
    assert called == [1]


def test_check_as_json() -> None:
    assert Check("n", None, "d", "kill 2").as_json() == {"name": "n", "scope": "kill 2", "ok": None, "detail": "d"}


# --- showing values ------------------------------------------------------------------------------


def test_free_text_is_safe_and_short() -> None:
    assert free_text("a\x1b[31mb\nc\u202e") == "a?[31mb?c?"
    assert free_text("x" * 120) == "x" * 120
    assert free_text("x" * 121) == "x" * 119 + "…"
    assert free_text(["x"]) == "a list"


def test_names_ids_times_are_shown_only_when_valid() -> None:
    assert name_text("inforsi-s-d1") == "inforsi-s-d1" and name_text("a b") == "a container"
    assert short_id("ABCDEF0123456789") == "ABCDEF012345" and short_id("a" * 129) == "an unreadable Id"
    assert short_id("sha256:" + "a" * 64) == "a" * 12 and short_id("a/b") == "an unreadable Id" and short_id(None) == "an unreadable Id"
    assert time_text("2026-11-30T05:32:38.123Z") == "2026-11-30T05:32:38.123Z"
    assert time_text("2026-11-30 05:32") == "an unreadable time" and time_text(1) == "an unreadable time"


# Epoch seconds are a date only between 1970 and the year 10 000 (§6.4: never a crash, never trusted).
@pytest.mark.parametrize("value, ns", [(1.5, 1_500_000_000), (2, 2_000_000_000), (0, None), (-1, None), (True, None),
                                       ("1", None), (float("nan"), None), (float("inf"), None), (None, None),
                                       (1e300, None),
                                       # the last second before the year 10 000, to the nearest double
                                       (253_402_300_799, 253_402_300_798_999_986_176),
                                       (253_402_300_800, None)])
def test_epoch_ns(value: Any, ns: int | None) -> None:
    assert epoch_ns(value) == ns


def test_rfc3339_epoch() -> None:
    assert rfc3339_epoch("1970-01-01T00:00:01.500Z") == 1.5
    assert rfc3339_epoch("1970-01-01T00:00:01Z") == 1.0
    assert rfc3339_epoch("yesterday") is None and rfc3339_epoch(5) is None
    assert rfc3339_epoch("9999-99-99T99:99:99Z") is None


def _ev(**fields: Any) -> ContainerEvent | str | None:
    e = parse_event({"Type": "container", "Action": "die", "Actor": {"ID": "i", "Attributes": {"name": "/n"}}, **fields})
    return e if not isinstance(e, ContainerEvent) else e  # type: ignore[return-value]


def test_event_time() -> None:
    e = _ev(timeNano=5_500_000_000, time=5)
    assert isinstance(e, ContainerEvent) and (e.lo_ns, e.hi_ns) == (5_500_000_000, 5_500_000_000)
    # Only a whole second: any part of it.
    e = _ev(time=2)
    assert isinstance(e, ContainerEvent) and (e.lo_ns, e.hi_ns) == (2_000_000_000, 2_999_999_999)
    # time and timeNano a second apart at most; an hour apart is the wrong shape.
    assert isinstance(_ev(timeNano=6_000_000_000, time=5), ContainerEvent)
    assert _ev(timeNano=6_000_000_001, time=5) == "an event whose time and timeNano disagree"
    assert _ev(timeNano=5_000_000_000 + 3600 * 10**9, time=5) == "an event whose time and timeNano disagree"
    assert _ev(timeNano=True, time="x") == "an event whose timeNano is not an integer"
    assert _ev() == "an event without a time that can be a date"
    assert _ev(time=253_402_300_801) == "an event without a time that can be a date"  # past the year 9999
    assert _ev(time=-5) == "an event without a time that can be a date"
    assert _ev(timeNano=-5) == "an event whose timeNano cannot be a date"
    assert _ev(timeNano=10**30) == "an event whose timeNano cannot be a date"


# --- per study ------------------------------------------------------------------------------------


def test_ledger_well_formed() -> None:
    assert ledger_well_formed(LedgerFacts(3, 3)) == Check("ledgerWellFormed", True, "3 lines, seq 1..3")
    assert ledger_well_formed(LedgerFacts()) == Check("ledgerWellFormed", False, "the ledger is empty")
    assert ledger_well_formed(LedgerFacts(problem="study/ledger.jsonl: missing")).detail == "study/ledger.jsonl: missing"
    issues = [LedgerIssue("gap", i, f"g{i}") for i in range(1, 5)]
    c = ledger_well_formed(LedgerFacts(4, 9, issues, 4))
    assert c.ok is False and c.detail == "line 1: gap (g1); line 2: gap (g2); line 3: gap (g3) (and 1 more issue)"
    assert ledger_well_formed(LedgerFacts(0, 0, issues[:1], 1)).detail == "line 1: gap (g1)"
    c = ledger_well_formed(LedgerFacts(3, 3, faults=["the ledger was replaced while watched at x"], fault_count=1))
    assert c == Check("ledgerWellFormed", False, "the ledger was replaced while watched at x")
    assert ledger_well_formed(LedgerFacts(3, 3, watch_problem="ledger-watch.jsonl: a FIFO")).ok is False
    c = ledger_well_formed(LedgerFacts(3, 3, faults=["a", "b", "c"], fault_count=5))
    assert c.detail == "a; b; c (and 2 more changes seen while watched)"


def test_fault_text() -> None:
    assert fault_text({"event": "replaced", "at": "2026-11-30T05:32:38.123Z"}) == \
        "the ledger was replaced while watched at 2026-11-30T05:32:38.123Z"
    assert fault_text({"event": "truncated", "at": 3}) == "the ledger was truncated while watched at an unreadable time"
    assert fault_text({"event": "x\x1b"}) == "the ledger was changed while watched at an unreadable time"
    assert fault_text(["x"]) == "ledger-watch.jsonl holds a list where a fault belongs"


def rec(seq: int, kind: str, **content: Any) -> Record:
    return Record(seq, "t", kind, content, seq, 0)


def test_halted_at_export() -> None:
    halt = rec(2, "halt", reason="balance exhausted")

    def h(*recs: Record, ledger: LedgerFacts | None = None, expect: str = "halt", finished: bool = True) -> Check:
        return halted_at_export(Accounts().extend(list(recs)), ledger, expect, finished)

    assert h() == Check("haltedAtExport", False, "no halt in the ledger")
    assert h(halt) == Check(
        "haltedAtExport", True, "halt at seq 2: balance exhausted; nothing after it")
    assert h(rec(2, "halt", reason="out of ideas")) == Check(
        "haltedAtExport", False, "the last halt (seq 2) is not 'balance exhausted'")
    assert h(halt, rec(3, "export", path="x")) == Check("haltedAtExport", False, "an export (seq 3) follows the halt (seq 2)")
    assert h(rec(1, "export", path="x"), halt).ok is True
    # A later halt with another reason wins over an earlier full stop.
    assert h(halt, rec(3, "halt", reason="x")).ok is False
    assert h(halt, ledger=LedgerFacts(problem="p")) == Check("haltedAtExport", False, "the ledger cannot be judged: p")
    # "Follows" is the ledger's order of lines.
    assert h(Record(5, "t", "export", {}, 1, 0), Record(4, "t", "halt", {"reason": "balance exhausted"}, 2, 0)).ok is True


def test_halted_at_export_is_unknown_while_the_study_may_go_on() -> None:
    """§6.6: while the study can be resumed, the end it has not reached yet is unknown, not a failure."""
    def h(*recs: Record, finished: bool = False) -> Check:
        return halted_at_export(Accounts().extend(list(recs)), LedgerFacts(), "halt", finished)

    assert h() == Check("haltedAtExport", None, "no halt in the ledger")
    assert h(rec(2, "halt", reason="out of ideas")) == Check(
        "haltedAtExport", None, "the last halt (seq 2) is not 'balance exhausted'")
    assert h(rec(2, "halt", reason="balance exhausted"), rec(3, "export", path="x")) == Check(
        "haltedAtExport", None, "an export (seq 3) follows the halt (seq 2)")
    assert h(rec(2, "halt", reason="balance exhausted")).ok is True
    # What happened wrong fails all the same (rule 13).
    spent = [rec(1, "studyOpen", budget=20, config={}), rec(2, "charge", run="a", amount=10, balance=10),
             rec(3, "halt", reason="balance exhausted")]
    assert h(*spent).ok is False


@pytest.mark.parametrize("kind", ["stageOpen", "decision", "runPlanned", "charge", "runStarted", "runResult",
                                  "diagnosisSettlement"])
def test_halted_at_export_rule_12_nothing_after_the_end(kind: str) -> None:
    """Rule 12: after the halt the study ends at, no work; a serviceError or another halt is no work."""
    recs = [rec(2, "halt", reason="balance exhausted"), rec(3, kind, run="a", round=1)]
    c = halted_at_export(Accounts().extend(recs), LedgerFacts(), "halt", True)
    assert c == Check("haltedAtExport", False, f"{kind} (seq 3) comes after the halt the study ends at (seq 2)")
    assert halted_at_export(Accounts().extend(recs), LedgerFacts(), "halt", False).ok is None
    numbers = {"amount": 1, "balance": 0} if kind == "charge" else {}  # a charge without them fails rule 13
    before = [rec(1, kind, run="a", round=1, **numbers), rec(2, "halt", reason="balance exhausted")]
    assert halted_at_export(Accounts().extend(before), LedgerFacts(), "halt", True).ok is True
    quiet = [recs[0], rec(3, "serviceError", stage="proposal", round=1, message="m")]
    assert halted_at_export(Accounts().extend(quiet), LedgerFacts(), "halt", True).ok is True
    exported = [rec(2, "export", path="x"), rec(3, kind, run="a", round=1)]
    assert halted_at_export(Accounts().extend(exported), LedgerFacts(), "export", True) == Check(
        "haltedAtExport", False, f"{kind} (seq 3) comes after the export the study ends at (seq 2)")


def test_halted_at_export_rule_13_the_budget_is_spent() -> None:
    """Rule 13: a "balance exhausted" halt leaves less than the dearest amount ever charged."""
    def h(*amounts: tuple[float, float]) -> Check:
        recs = [rec(1, "studyOpen", budget=100, config={})]
        recs += [rec(2 + i, "charge", run=f"r{i}", amount=a, balance=b) for i, (a, b) in enumerate(amounts)]
        recs.append(rec(2 + len(amounts), "halt", reason="balance exhausted"))
        return halted_at_export(Accounts().extend(recs), LedgerFacts(), "halt", True)

    assert h((50, 50), (40, 10)).ok is True  # 10 left < 50, the dearest: sound
    assert h((45, 55), (45, 10)).ok is True
    assert h((45, 55), (10, 45)) == Check(
        "haltedAtExport", False,
        "the budget is spent, says the halt (seq 4), but the balance left (45) pays for the dearest run (45)")
    assert h((45, 55), (10, 44.5)).ok is True  # less than the dearest run left: runs may cost different amounts
    assert h((10, 90)).detail == (
        "the budget is spent, says the halt (seq 3), but the balance left (90) pays for the dearest run (10)")
    assert h().ok is True  # nothing charged: nothing to compare with


def test_halted_at_export_rule_13_every_full_stop() -> None:
    """Rule 13 holds for every "balance exhausted" halt, not only the last: a full stop written while a whole run's
    worth was left fails however the study ends after it."""
    recs = [rec(1, "studyOpen", budget=30, config={}), rec(2, "charge", run="a", amount=10, balance=20),
            rec(3, "halt", reason="balance exhausted"), rec(4, "charge", run="b", amount=10, balance=10),
            rec(5, "charge", run="c", amount=10, balance=0), rec(6, "halt", reason="balance exhausted")]
    c = halted_at_export(Accounts().extend(recs), LedgerFacts(), "halt", True)
    assert c.ok is False and "says the halt (seq 3), but the balance left (20) pays for the dearest run (10)" in (
        c.detail), c.detail


def test_halted_at_export_rule_13_needs_the_charges_numbers() -> None:
    """A charge before a full stop without a numeric amount or balance leaves the balance left and the dearest run
    unknown: rule 13 cannot be held, and fails; one after the stop is rule 12's alone."""
    open_ = rec(1, "studyOpen", budget=30, config={})
    stop = rec(3, "halt", reason="balance exhausted")
    bad = rec(2, "charge", run="a", amount="10", balance=20)
    c = halted_at_export(Accounts().extend([open_, bad, stop]), LedgerFacts(), "halt", True)
    assert c == Check("haltedAtExport", False, "the halt (seq 3) cannot be held to rule 13: the charge at seq 2 has "
                      "no numeric amount and balance"), c.detail
    assert c.proofs and c.proofs[0].let[1][0].line == 2
    good = rec(2, "charge", run="a", amount=30, balance=0)
    assert halted_at_export(Accounts().extend([open_, good, stop]), LedgerFacts(), "halt", True).ok is True


def test_halted_at_export_rule_13_whatever_the_study_ends_at() -> None:
    """Rule 13 holds of a "balance exhausted" halt whatever end the template expects (§6.2: a whole run's worth
    of budget left means a charge was counted twice somewhere), an export after it included."""
    recs = [rec(1, "studyOpen", budget=30, config={}), rec(2, "charge", run="a", amount=10, balance=20),
            rec(3, "halt", reason="balance exhausted"), rec(4, "export", path="x")]
    for expect in ("export", "any"):
        c = halted_at_export(Accounts().extend(recs), LedgerFacts(), expect, True)
        assert c.ok is False and "the balance left (20) pays for the dearest run (10)" in c.detail, (expect, c.detail)


def test_halted_at_export_expects_what_the_template_says() -> None:
    """§6.7: expectEnd halt (the default), export, or any; the check keeps its name and says what it expected."""
    halt, export = rec(2, "halt", reason="balance exhausted"), rec(3, "export", path="x")

    def h(*recs: Record, expect: str, finished: bool = True) -> Check:
        return halted_at_export(Accounts().extend(list(recs)), LedgerFacts(), expect, finished)

    assert h(halt, export, expect="export") == Check(
        "haltedAtExport", True, "export at seq 3: the export; nothing after it")
    assert h(halt, expect="export") == Check("haltedAtExport", False, "no export in the ledger")
    assert h(halt, expect="export", finished=False) == Check("haltedAtExport", None, "no export in the ledger")
    assert h(halt, expect="any") == Check(
        "haltedAtExport", True, "halt at seq 2: balance exhausted; nothing after it")
    assert h(halt, export, expect="any").detail == "export at seq 3: the export; nothing after it"
    assert h(rec(2, "halt", reason="out of ideas"), export, expect="any").ok is True
    assert h(rec(2, "halt", reason="out of ideas"), expect="any") == Check(
        "haltedAtExport", False, "the last halt (seq 2) is not 'balance exhausted'")
    # The later of the two is the end: a halt after the export must be the full stop.
    assert h(export, rec(4, "halt", reason="out of ideas"), expect="any") == Check(
        "haltedAtExport", False, "the last halt (seq 4) is not 'balance exhausted'")
    assert h(expect="any") == Check("haltedAtExport", False, "neither a full stop nor an export")
    assert h(halt, expect="later") == Check(
        "haltedAtExport", False, "research.json's expectEnd is not halt, export or any")
    assert h(halt, expect="?") == Check("haltedAtExport", False, "research.json's expectEnd is not halt, export or any")


def test_charged_equals_starts() -> None:
    base = [rec(1, "studyOpen", budget=20, config={}), rec(2, "runPlanned", run="a"),
            rec(3, "charge", run="a", amount=10, balance=10), rec(4, "runStarted", run="a")]
    assert charged_equals_starts(Accounts().extend(base)) == Check("chargedEqualsStarts", True, "1 start, 10 charged = 20 - 10")
    c = charged_equals_starts(Accounts().extend(base[:3]))
    assert c.ok is False and c.detail == "run a: 1 charge, 0 starts"
    c = charged_equals_starts(Accounts().extend(base[:2] + [rec(3, "charge", run="a", amount=10, balance=11), base[3]]))
    assert c.detail == "charges sum to 10 but budget 20 - balance 11 = 9"
    # Within the tolerance.
    assert charged_equals_starts(Accounts().extend(base[:2] + [rec(3, "charge", run="a", amount=10, balance=10 + 1e-12),
                                                               base[3]])).ok is True
    c = charged_equals_starts(Accounts().extend(base[1:]))
    assert c.detail == "no budget: studyOpen is missing or has no numeric budget"
    c = charged_equals_starts(Accounts().extend(base[:2] + [rec(3, "charge", run="a", amount="10", balance=10), base[3]]))
    assert c.ok is False and "1 charge without a numeric amount and balance (first at seq 3)" in c.detail
    assert charged_equals_starts(Accounts().extend(base), LedgerFacts(problem="p")).ok is False
    many = [rec(i, "charge", run=f"r{i}", amount=0, balance=10) for i in range(10, 15)]
    assert charged_equals_starts(Accounts().extend(base + many)).detail == (
        "run r10: 1 charge, 0 starts, run r11: 1 charge, 0 starts, run r12: 1 charge, 0 starts and 2 more runs")
    assert charged_equals_starts(Accounts().extend(base + many[:3])).detail.endswith("run r12: 1 charge, 0 starts")
    assert "1 more run" in charged_equals_starts(Accounts().extend(base + many[:4])).detail


def start(pid: int | None, at: float, resume: bool = False) -> dict[str, Any]:
    return LaunchStart(pid, at, resume).to_json()


def end(pid: int | None, at: float, code: int | None = 0, signal: str | None = None) -> dict[str, Any]:
    return LaunchEnd(pid, at, code, signal).to_json()


RESUME = "`studymon run --resume` continues it"


@pytest.mark.parametrize("lines, ok, detail", [
    ([start(7, 1), end(7, 2)], True, "exit 0 (pid 7)"),
    ([start(7, 1)], None, "the controller (pid 7) has not ended"),
    # A crash, a kill, exit 75 or 130: the study can be resumed (§1), so not yet a failure (§6.6).
    ([start(7, 1), end(7, 2, None, "SIGKILL")], None, f"the controller was killed by SIGKILL; {RESUME}"),
    ([start(7, 1), end(7, 2, 1)], None, f"the controller ended with exit 1; {RESUME}"),
    ([start(7, 1), end(7, 2, 75)], None, f"the controller ended with exit 75; {RESUME}"),
    # The final controller is the last start's pid, and its own end: not the last end line of the file.
    ([start(7, 1), end(7, 2), start(8, 3, True)], None, "the controller (pid 8) has not ended"),
    ([start(7, 1), end(7, 2, None, "SIGKILL"), start(8, 3, True), end(8, 4)], True, "exit 0 (pid 8)"),
    ([start(7, 1), end(7, 2, None, "SIGKILL"), start(8, 3, True), end(7, 4)], None,
     "the controller (pid 8) has not ended"),
    ([start(7, 1), end(7, 2, 1), start(8, 3, True), end(8, 4, 0), end(7, 5, 0)], True, "exit 0 (pid 8)"),
    # Lines that are not launches: named, never quoted.
    ([start(7, 1), dict(end(7, 2), code=False)], False,
     "launches.jsonl line 2: an end line whose code is not an integer"),
    ([start(7, 1), dict(end(7, 2), signal="x\x1b")], False,
     "launches.jsonl line 2: an end line whose signal is not a signal's name"),
    # The launcher's end for a controller whose keeper is gone: the status is lost, a resume can go on.
    ([start(7, 1), end(7, 2, None)], None, f"the controller ended, its exit status lost; {RESUME}"),
    # The keeper could not start the controller: a start without a pid, an end with 127.
    ([dict(start(None, 1), error="No such file"), end(None, 2, 127)], None,
     f"the controller ended with exit 127; {RESUME}"),
    # A null pid says no controller started: a start without the error that says why, an end not 127, is no launch.
    ([start(None, 1), end(None, 2, 127)], False,
     "launches.jsonl line 1: a start line whose pid is null, without the error that says why no controller started; "
     "no controller started"),
    ([dict(start(7, 1), at="yesterday"), end(7, 2)], False,
     "launches.jsonl line 1: a start line whose at is not a time; launches.jsonl line 2: pid 7 ends, but no start launched it; "
     "no controller started"),
    ([dict(start(7, 1), pid=0), end(7, 2)], False,
     "launches.jsonl line 1: a start line whose pid is not a process id; launches.jsonl line 2: pid 7 ends, but no start launched it; "
     "no controller started"),
    ([start(7, 1), dict(end(7, 2), pid="7")], False,
     "launches.jsonl line 2: an end line whose pid is not a process id"),
    ([start(7, 1), {"event": "begin", "pid": 7, "at": end(7, 2)["at"]}, end(7, 3)], False,
     "launches.jsonl line 2: a line whose event is neither start nor end"),
    ([[1], start(7, 1), end(7, 2)], False, "launches.jsonl line 1: a list, not a launch"),
    ([], False, "no controller started"),
    ([end(None, 2, 1)], False,
     "launches.jsonl line 1: an end line whose pid is null, not exit 127 (null only where no controller started); "
     "no controller started"),
    # One controller at a time (§6.3).
    ([start(7, 1), start(8, 2), end(8, 3)], False, "two controllers at once: pid 8 started while pid 7 had not ended"),
    # Past the few shown, the others are counted.
    ([start(7, 1), start(8, 2), start(9, 3), start(10, 4), start(11, 5), end(11, 6)], False,
     "two controllers at once: pid 8 started while pid 7 had not ended; two controllers at once: pid 9 started while "
     "pid 8 had not ended; two controllers at once: pid 10 started while pid 9 had not ended (and 1 more such start)"),
])
def test_exited_cleanly(lines: list[Any], ok: bool | None, detail: str) -> None:
    assert exited_cleanly(launch_facts({"launches.jsonl": lines})) == Check("exitedCleanly", ok, detail)


def test_exited_cleanly_without_a_readable_file() -> None:
    assert exited_cleanly(Launches(problem="launches.jsonl: a FIFO")) == Check(
        "exitedCleanly", False, "launches.jsonl: a FIFO")


def test_study_checks_over_records_alone() -> None:
    files = one_kill()
    recs = records(files)
    checks = study_checks(recs, [], Accounts().extend(recs), 0, None, True)
    assert [c.name for c in checks] == ["ledgerWellFormed", "contractKept", "haltedAtExport", "chargedEqualsStarts",
                                        "exitedCleanly", "resultsAccounted"]
    assert all(c.ok for c in checks), checks
    assert checks[0].detail == f"{len(recs)} lines, seq 1..{len(recs)}"
    assert checks[1].detail == f"rules 1-9, 11 and 15 hold over {len(recs)} records"
    assert checks[5].detail == "each of 1 started run has its one result, each diagnosis result its settlement"
    issues = [LedgerIssue("gap", i, "g") for i in range(1, 6)]
    checks = study_checks(recs[:2], issues, Accounts().extend(recs[:2]), 0, None, True)
    assert checks[0].detail == "line 1: gap (g); line 2: gap (g); line 3: gap (g) (and 2 more issues)"
    assert study_checks([], [], Accounts(), 0, None, True)[0].detail == "the ledger is empty"
    # Without names, rule 4 is not judged here; with them it is.
    bad = [replace(r, content=dict(r.content, container="x")) if r.kind == "runStarted" else r for r in recs]
    assert study_checks(bad, [], Accounts().extend(bad), 0, None, True)[1].ok is True
    checks = study_checks(bad, [], Accounts().extend(bad), 0, None, True, study=STUDY)
    assert checks[1].detail.startswith("rule 4, line 7: runStarted.container for run d1 is not inforsi-s-d1")
    # Rule 7 with the study's id: studyOpen names research.json's study.
    other = StudyFacts("t", "inforsi")
    checks = study_checks(recs, [], Accounts().extend(recs), 0, None, True, study=other)
    assert checks[1].detail.startswith("rule 7, line 1: studyOpen.study is not t, the study research.json names")
    # The template's expectEnd reaches haltedAtExport (§6.7).
    checks = study_checks(recs, [], Accounts().extend(recs), 0, None, True, study=replace(STUDY, expect_end="export"))
    assert checks[2] == Check("haltedAtExport", False, "no export in the ledger")


def test_results_accounted() -> None:
    """Rule 14: by the study's end every started run has its one result, every diagnosis result its settlement."""
    recs = records(one_kill())
    acc = Accounts().extend(recs)
    assert results_accounted(acc, LedgerFacts(), True) == Check(
        "resultsAccounted", True, "each of 1 started run has its one result, each diagnosis result its settlement")
    settlement = next(r for r in recs if r.kind == "diagnosisSettlement")
    unsettled = Accounts().extend([r for r in recs if r is not settlement])
    assert results_accounted(unsettled, LedgerFacts(), True) == Check(
        "resultsAccounted", False, "the study finished without a settlement of d1's result")
    assert results_accounted(unsettled, LedgerFacts(), False) == Check(
        "resultsAccounted", None, "d1's result has no settlement yet")
    # A settlement of the round that names another run is not d1's.
    other = Accounts().extend([replace(r, content=dict(r.content, run="d9")) if r is settlement else r for r in recs])
    assert results_accounted(other, LedgerFacts(), True).detail == (
        "the study finished without a settlement of d1's result")
    lost = Accounts().extend([r for r in recs if r.kind != "runResult"])
    c = results_accounted(lost, LedgerFacts(), True)
    assert c == Check("resultsAccounted", False, "the study finished without d1's result")
    assert results_accounted(lost, LedgerFacts(), False) == Check(
        "resultsAccounted", None, "d1 has no result yet")
    # Whether or not a kill was in flight: an ablation abandoned on resume is lost too, and needs no settlement.
    abl = records(derive(build(rounds=1, ablation=(True,), overlap=(False,), kills=())))
    assert results_accounted(Accounts().extend(abl), LedgerFacts(), True).ok is True
    gone = Accounts().extend([r for r in abl if not (r.kind == "runResult" and r.content["run"] == "a1")])
    assert results_accounted(gone, LedgerFacts(), True).detail == "the study finished without a1's result"
    # Two results fail at once: that happened, whatever comes next.
    result = next(r for r in recs if r.kind == "runResult")
    twice = Accounts().extend([*recs, replace(result, seq=99, line=99)])
    assert results_accounted(twice, LedgerFacts(), False) == Check("resultsAccounted", False, "d1 has 2 results")
    # So does a second settlement of its round (the same line written twice, say): no one settlement names it.
    again = Accounts().extend([*recs, replace(settlement, seq=99, line=99)])
    c = results_accounted(again, LedgerFacts(), False)
    assert c == Check("resultsAccounted", False, "round 1 has 2 settlements") and c.proofs, c.detail
    # Planned (and charged) but never started: no result is owed.
    assert results_accounted(Accounts().extend([r for r in recs if r.kind not in ("runStarted", "runResult")]),
                             LedgerFacts(), True).ok is True
    assert results_accounted(acc, LedgerFacts(problem="p"), True) == Check(
        "resultsAccounted", False, "the ledger cannot be judged: p")
    many = Accounts().extend([rec(1, "runPlanned", run=f"r{i}") for i in range(5)]
                             + [rec(2, "runStarted", run=f"r{i}") for i in range(5)])
    assert results_accounted(many, LedgerFacts(), True).detail == (
        "the study finished without r0's result; the study finished without r1's result; "
        "the study finished without r2's result (and 2 more runs)")


# --- kill.json and the window -----------------------------------------------------------------------


def test_parse_kill_sound() -> None:
    k = parse_kill(one_kill()["kills/1/kill.json"], STUDY.stem)
    assert (k.trigger, k.pid, k.before_kill_seq, k.trigger_seq, k.signalled) == ("auto", 4242, 7, 7, True)
    assert [t.run for t in k.targets] == ["d1"] and not k.problems and not k.delivery
    assert k.since_ns is not None and k.at_epoch is not None


# A target's facts, each written (what they say is compared with the ledger elsewhere).
WRITTEN = {"cell": "c", "round": 1, "planSeq": 2, "startSeq": None, "container": None}


@pytest.mark.parametrize("change, where, reason", [
    ({"trigger": "later"}, "problems", "kill.json trigger is not one of auto, manual, crash, stop"),
    ({"at": "soon"}, "problems", "kill.json at is not an RFC 3339 time"),
    ({"pid": 0}, "delivery", "kill.json pid is an integer, not a process id"),
    ({"pid": "1"}, "delivery", "kill.json pid is a string, not a process id"),
    ({"beforeKillSeq": -1}, "problems", "kill.json beforeKillSeq is an integer, not a seq"),
    ({"beforeKillSeq": 7.0}, "problems", "kill.json beforeKillSeq is a number, not a seq"),
    ({"triggerSeq": None}, "problems", "kill.json triggerSeq is null, not a seq"),
    ({"signalled": False}, "delivery", "kill.json says SIGKILL was not sent"),
    ({"signalled": "yes"}, "delivery", "kill.json signalled is a string, not a boolean"),
    ({"signal": "SIGTERM"}, "delivery", "kill.json signal is not SIGKILL"),
    ({"captureError": "inspect failed\x1b"}, "problems", "capture failed while the controller was frozen: inspect failed?"),
    ({"prefix": "inforsi-t-"}, "problems", "kill.json prefix is not the study's inforsi-s-"),
    ({"targets": {}}, "problems", "kill.json targets is an object, not a list"),
    ({"targets": [1]}, "problems", "kill.json target 1 is an integer, not an object"),
    ({"targets": [{"run": "D1"}]}, "problems", "kill.json target 1 has no valid run id"),
    ({"targets": [{"run": "d1", **WRITTEN}, {"run": "d1", **WRITTEN}]}, "problems", "kill.json lists run d1 twice"),
    ({"targets": [{"run": "d1", "cell": "c", "round": 1}]}, "problems",
     "kill.json target d1 does not write its planSeq, startSeq, container"),
])
def test_parse_kill_fields(change: dict[str, Any], where: str, reason: str) -> None:
    obj = one_kill()["kills/1/kill.json"]
    obj.update(change)
    k = parse_kill(obj, STUDY.stem)
    assert getattr(k, where) == [reason]
    other = "delivery" if where == "problems" else "problems"
    assert getattr(k, other) == []


def test_parse_kill_tolerates_what_v2_leaves_optional_but_needs_since() -> None:
    """signal, captureError, prefix and a manual kill's triggerSeq may be left out; since and sinceEpoch may not
    (§6.5)."""
    obj = one_kill()["kills/1/kill.json"]
    for key in ("signal", "captureError", "prefix"):
        del obj[key]
    obj["trigger"], obj["triggerSeq"] = "manual", None
    k = parse_kill(obj, STUDY.stem)
    assert not k.problems and not k.delivery and k.trigger_seq is None
    assert k.since_ns == round(obj["sinceEpoch"] * 1e9)
    no_since = "kill.json has no since and sinceEpoch, two times, to open the window at"
    for missing in (("sinceEpoch",), ("since",), ("since", "sinceEpoch")):
        k = parse_kill({key: v for key, v in obj.items() if key not in missing}, STUDY.stem)
        assert k.problems == [no_since] and not k.delivery, missing
    # Without sinceEpoch nothing opens the window; since alone is not taken for it.
    assert parse_kill({key: v for key, v in obj.items() if key != "sinceEpoch"}, STUDY.stem).since_ns is None
    for bad in ("1", True, 0, -1.0, float("nan"), 1e300):
        assert parse_kill(dict(obj, sinceEpoch=bad), STUDY.stem).problems == [no_since], bad
    assert parse_kill(dict(obj, since="yesterday"), STUDY.stem).problems == [no_since]


def test_parse_kill_since_and_since_epoch_agree() -> None:
    """One fact twice: the text (to the nanosecond) and the number must be the same time, to the microsecond."""
    obj = one_kill()["kills/1/kill.json"]
    since = obj["sinceEpoch"]
    disagree = "kill.json: since and sinceEpoch are not the same time"
    assert parse_kill(dict(obj, sinceEpoch=since + 0.000001), STUDY.stem).problems == []
    k = parse_kill(dict(obj, sinceEpoch=since + 0.0009), STUDY.stem)
    # Two copies that disagree give no moment: the window opens at the window file's copy (held to these).
    assert k.problems == [disagree] and k.since_ns is None
    assert parse_kill(dict(obj, sinceEpoch=since - 3600), STUDY.stem).problems == [disagree]


def test_parse_window() -> None:
    w = one_kill()["kills/1/container-events-window.json"]
    window, problem = parse_window(w)
    assert problem is None and window is not None and window.results["d1"]["resultSeq"] == 8
    for change, reason in [
        ({"sinceEpoch": "1"}, "sinceEpoch is a string, not a time"),
        ({"untilEpoch": None}, "untilEpoch is null, not a time"),
        ({"untilEpoch": w["sinceEpoch"] - 1}, "untilEpoch comes before sinceEpoch"),
        ({"targets": []}, "targets is a list, not an object"),
        ({"targets": {"d1": 8}}, "a target's entry is an integer, not an object"),
        ({"targets": {"d1": {"resultSeq": "8"}}}, "a resultSeq is a string, not an integer"),
        ({"targets": {"d1": {"resultSeq": 8, "resultSeenEpoch": "x"}}}, "a resultSeenEpoch is a string, not a time"),
    ]:
        window, problem = parse_window(dict(w, **change))
        assert window is None and problem == f"{WINDOW}: {reason}", change
    same, problem = parse_window(dict(w, untilEpoch=w["sinceEpoch"]))
    assert problem is None and same is not None
    nulls, _ = parse_window(dict(w, targets={"d1": {"resultSeq": None, "resultSeenEpoch": None}}))
    assert nulls is not None and nulls.results["d1"] == {"resultSeq": None, "resultSeenEpoch": None}
    assert nulls.seen_ns("d1") is None and nulls.seen_ns("d9") is None
    sound_window = parse_window(w)[0]
    assert sound_window is not None and sound_window.notes == []
    assert sound_window.seen_ns("d1") == round(w["targets"]["d1"]["resultSeenEpoch"] * 1e9)
    # The times as text and as numbers are one fact twice: where they differ, the window is used and
    # killEvidence says so; a text that is no time at all is no window the console writes.
    for change, note in [
        ({"since": "2026-01-01T00:00:00.000Z"}, f"{WINDOW}: since and sinceEpoch are not the same time"),
        ({"until": "2026-01-01T00:00:00.000Z"}, f"{WINDOW}: until and untilEpoch are not the same time"),
    ]:
        noted, problem = parse_window(dict(w, **change))
        assert problem is None and noted is not None and noted.notes == [note], change
    for change, said in [({"since": None}, "since"), ({"until": 5}, "until"), ({"until": "x" * 99}, "until")]:
        assert parse_window(dict(w, **change)) == (None, f"{WINDOW}: {said} is not a time"), change
    within, _ = parse_window(dict(w, sinceEpoch=w["sinceEpoch"] + 0.000001, untilEpoch=w["untilEpoch"] - 0.000001))
    assert within is not None and within.notes == []
    apart, _ = parse_window(dict(w, untilEpoch=w["untilEpoch"] - 0.0009))
    assert apart is not None and apart.notes == [f"{WINDOW}: until and untilEpoch are not the same time"]


# --- the lifecycle events ---------------------------------------------------------------------------


def tally(until: int | None = 2000, allowed: frozenset[str] = frozenset(), window_until: int | None = 3000,
          unstarted: frozenset[str] = frozenset()) -> EventTally:
    """A window from 1000 to ``window_until`` ns (None: still open), d1's result seen at ``until``."""
    return EventTally(1000, window_until, "inforsi-s-", allowed, [TargetTally("d1", NAME, frozenset({"ID1"}), until)],
                      "s", unstarted)


def ev_at(action: str, ns: int, name: str = NAME, cid: str = "ID1", **attrs: str) -> dict[str, Any]:
    return {"Type": "container", "Action": action, "timeNano": ns, "id": cid,
            "Actor": {"ID": cid, "Attributes": {"name": name, **attrs}}}


def test_window_bounds_are_inclusive() -> None:
    t = tally()
    for ns in (999, 1000, 3000, 3001):
        t.add(ev_at("start", ns), "x")
    assert t.targets[0].forbidden == [("start", 1000), ("start", 3000)]
    assert t.targets[0].forbidden_count == 2


def test_the_whole_window_is_the_targets_story() -> None:
    """v3 (§6.4): a target's events are judged from the window's start to its end, after its own result too."""
    t = tally(until=2000)
    t.add(ev_at("start", 2001), "x")  # after d1's result was seen, inside the window
    t.add(ev_at("die", 2500, exitCode="0"), "x")
    assert t.targets[0].forbidden == [("start", 2001)] and len(t.targets[0].dies) == 1


def test_an_open_window_has_no_end() -> None:
    t = tally(until=None, window_until=None)
    t.add(ev_at("stop", 10 ** 18), "x")
    assert t.targets[0].forbidden_count == 1
    t = tally(until=None, window_until=3000)
    t.add(ev_at("stop", 10 ** 18), "x")  # closed at 3000: after the window
    assert t.targets[0].forbidden_count == 0


# Allow, don't deny (§6.4): besides its one die, a destroy and an oom, a target may only be read.
@pytest.mark.parametrize("action, verb", [
    ("create", "create"), ("start", "start"), ("rename", "rename"), ("kill", "kill"), ("stop", "stop"),
    ("exec_create: sh -c x", "exec_create"), ("exec_start: sh", "exec_start"), ("exec_die", "exec_die"),
    ("restart", "restart"), ("pause", "pause"), ("unpause", "unpause"), ("update", "update"), ("commit", "commit"),
    ("extract-to-dir", "extract-to-dir"), ("copy", "copy"), ("frobnicate", "frobnicate"), ("Die", "Die"),
    ("die:", None), ("attach", None), ("detach", None), ("resize", None), ("top", None), ("archive-path", None),
    ("export", None), ("health_status: healthy", None), ("health_status", None), ("destroy", None), ("oom", None),
    ("die", None),
])
def test_forbidden_actions(action: str, verb: str | None) -> None:
    t = tally()
    t.add(ev_at(action, 1500, exitCode="0"), "x")
    assert t.targets[0].forbidden == ([] if verb is None else [(verb, 1500)])
    assert t.targets[0].forbidden_count == (0 if verb is None else 1)


def test_events_match_by_name_by_id_and_by_old_name() -> None:
    t = tally()
    t.add(ev_at("kill", 1100, name="other", cid="ID1"), "x")  # its Id
    t.add(ev_at("rename", 1200, name="new", cid="ID9", oldName="/" + NAME), "x")  # renamed away
    t.add(ev_at("stop", 1300, name="/" + NAME, cid="ID9"), "x")  # its name, Docker's slash
    t.add(ev_at("stop", 1400, name="other", cid="ID9", oldName="/" + NAME), "x")  # oldName counts for rename only
    t.add(ev_at("start", 1500, name="inforsi-s-d2", cid="ID2"), "x")  # another container
    assert [a for a, _ in t.targets[0].forbidden] == ["kill", "rename", "stop"]


def test_the_same_event_in_both_files_counts_once() -> None:
    t = tally()
    for live in (True, False):
        t.add(ev_at("die", 1500, exitCode="0"), "x", live)
        t.add(ev_at("start", 1400), "x", live)
    assert len(t.targets[0].dies) == 1 and t.targets[0].forbidden_count == 1
    t.add(ev_at("die", 1501, exitCode="0"), "x")
    t.add(ev_at("die", 1502, exitCode="0"), "x")
    t.add(ev_at("die", 1503, exitCode="0"), "x")
    assert len(t.targets[0].dies) == 3  # capped: two already fail


def test_die_exit_codes() -> None:
    t = tally()
    t.add(ev_at("die", 1500, exitCode="137"), "a")
    t.add(ev_at("die", 1600), "b")
    t.add(ev_at("die", 1700, exitCode="x"), "c")
    assert sorted(v[1] for v in t.targets[0].dies.values() if v[1] is not None) == [137]
    assert [v[1] for v in t.targets[0].dies.values()].count(None) == 2


GAP_IN = {"gap": {"from": "1970-01-01T00:00:00.000001500Z", "to": "1970-01-01T00:00:00.000002500Z"}}  # 1500..2500 ns


def test_lines_that_are_not_events() -> None:
    t = tally()
    t.add("x", "l1")
    t.add({"Type": "container", "Action": 3, "timeNano": 1}, "l2")
    t.add({"Type": "container", "Action": "die"}, "l3")
    t.add({"Type": "container", "Action": "die", "timeNano": 1500, "Actor": ["x"]}, "l4")
    t.add({"gap": "x"}, "l5")
    t.add({"gap": {"from": "a", "to": "b"}}, "l6")  # a gap line without two times is not a gap (§6.4)
    assert t.malformed == ["l1: a string, not an event", "l2: an event without an Action",
                           "l3: an event without a time that can be a date"]
    assert t.malformed_count == 6 and t.gaps == 0
    t.add(GAP_IN, "l7", live=False)  # a gap in the read-back is not a gap, and not the runtime's
    assert t.malformed_count == 7 and t.gaps == 0
    t.add(GAP_IN, "l8")
    assert t.gaps == 1 and t.malformed_count == 7
    t.add({"Type": "network", "Action": 5}, "l9")  # not a container's: the console never records one
    assert t.malformed_count == 8
    t = tally()
    t.add({"Type": "image", "Action": "pull", "time": 1}, "l10")
    assert t.malformed == ["l10: an event that is not a container's (its Type is not container)"]
    t = tally()
    t.add(GAP_IN, "r", live=False)
    assert t.malformed == ["r: a gap line in the runtime's own events"]


@pytest.mark.parametrize("gap, counts", [
    (GAP_IN, True),
    # ends at since, begins at until
    ({"gap": {"from": "1970-01-01T00:00:00.000000500Z", "to": "1970-01-01T00:00:00.000001000Z"}}, True),
    ({"gap": {"from": "1970-01-01T00:00:00.000003000Z", "to": "1970-01-01T00:00:00.000004000Z"}}, True),
    ({"gap": {"from": "1970-01-01T00:00:00.000000100Z", "to": "1970-01-01T00:00:00.000000999Z"}}, False),  # before
    ({"gap": {"from": "1970-01-01T00:00:00.000003001Z", "to": "1970-01-01T00:00:00.000004000Z"}}, False),  # after
    ({"gap": {"from": "1970-01-01T00:00:00.000000500Z", "to": "1970-01-01T00:00:00.000009000Z"}}, True),  # over it
])
def test_only_a_gap_that_overlaps_the_window_counts(gap: dict[str, Any], counts: bool) -> None:
    t = tally()
    t.add(gap, "g")
    assert (t.gaps, t.malformed_count) == (1 if counts else 0, 0)


@pytest.mark.parametrize("gap", [
    {"gap": {}}, {"gap": {"from": "1970-01-01T00:00:00.000001500Z"}}, {"gap": {"to": "1970-01-01T00:00:00.000001500Z"}},
    {"gap": {"from": "1970-01-01T00:00:00.000002500Z", "to": "1970-01-01T00:00:00.000001500Z"}},  # out of order
    {"gap": {"from": 1, "to": 2}}, {"gap": [1, 2]}, {"gap": None},
    {"gap": {"from": "1970-01-01T00:00:00.000001500Z", "to": "10000-01-01T00:00:00.000Z"}},
])
def test_a_gap_line_needs_two_times_in_order(gap: dict[str, Any]) -> None:
    t = tally(window_until=None)
    t.add(gap, "g")
    assert t.gaps == 0 and t.malformed == ["g: a gap line that is not a gap (from and to, two times in order)"]


def test_other_study_containers_in_the_window() -> None:
    t = EventTally(1000, 3000, "inforsi-s-", frozenset({"inforsi-s-d2"}), [TargetTally("d1", NAME, frozenset(), 2000)],
                   "s", frozenset({"inforsi-s-d5"}))
    t.add(ev_at("create", 1500, name="inforsi-s-d2", cid="A"), "x")  # planned after the kill, started on the books
    t.add(ev_at("create", 1500, name="inforsi-t-d9", cid="B"), "x")  # another study
    t.add(ev_at("die", 1500, name="inforsi-s-zz", cid="C"), "x")  # not a create or start
    t.add(ev_at("create", 3001, name="inforsi-s-zz", cid="D"), "x")  # after the window
    t.add(ev_at("create", 999, name="inforsi-s-zz", cid="E"), "x")  # before it
    # Under the stem but labelled as another study's, whose stem holds the name too: not this study's (§6.1).
    t.add(ev_at("create", 1500, name="inforsi-s-2-zz", cid="H", **{"studymon.study": "s-2"}), "x")
    assert t.foreign_count == 0 and t.unbooked_count == 0
    t.add(ev_at("start", 3000, name="inforsi-s-zz", cid="F"), "x")
    t.add(ev_at("start", 3000, name="inforsi-s-zz", cid="F"), "x", live=False)
    assert t.foreign == [("inforsi-s-zz", "start", 3000)] and t.foreign_count == 1
    # The target's own: an action outside its story, and for every other target work done again.
    t.add(ev_at("create", 1500, name=NAME, cid="G"), "x")
    assert t.foreign_count == 2 and t.foreign[1] == (NAME, "create", 1500) and t.targets[0].forbidden_count == 1
    # Labelled as this study's, whatever its name: its container (§6.1).
    t.add(ev_at("start", 1600, name="elsewhere", cid="I", **{"studymon.study": "s", "studymon.run": "x1"}), "x")
    assert t.foreign_count == 3 and t.foreign[2] == ("elsewhere", "start", 1600)
    # Planned, without a runStarted (yet): off the books until it has one.
    t.add(ev_at("create", 1700, name="inforsi-s-d5", cid="J"), "x")
    assert t.unbooked == [("inforsi-s-d5", "create", 1700)] and t.unbooked_count == 1 and t.foreign_count == 3


def test_a_container_labelled_as_a_targets_run_is_its_story() -> None:
    """§6.1/§6.4: the events of a container labelled as the target's run are the target's, whatever its name."""
    t = tally()
    t.add(ev_at("start", 1500, name="renamed", cid="ID7", **{"studymon.study": "s", "studymon.run": "d1"}), "x")
    assert t.targets[0].forbidden == [("start", 1500)]
    t = tally()
    t.add(ev_at("start", 1500, name="renamed", cid="ID7", **{"studymon.study": "s-2", "studymon.run": "d1"}), "x")
    assert t.targets[0].forbidden == [] and t.foreign_count == 0  # another study's d1
    # The target's own name, whatever label it wears, is the target's.
    t = tally()
    t.add(ev_at("start", 1500, cid="ID7", **{"studymon.study": "s-2"}), "x")
    assert t.targets[0].forbidden == [("start", 1500)]


def test_the_two_recordings_must_agree() -> None:
    """§6.4: one event (Id, action, time) in both files with other attributes: the recordings disagree."""
    t = tally()
    t.add(ev_at("die", 1500, exitCode="0"), "x", True)
    t.add(ev_at("die", 1500, exitCode="0"), "x", False)
    assert t.targets[0].disagree == 0 and len(t.targets[0].dies) == 1
    t.add(ev_at("die", 1500, exitCode="137"), "x", False)
    assert t.targets[0].disagree == 1 and len(t.targets[0].dies) == 1
    t = tally()
    t.add(ev_at("die", 1500, exitCode="0"), "x", True)
    t.add(ev_at("die", 1500, name="other", exitCode="0"), "x", False)
    t.add(ev_at("die", 1500, exitCode="0", signal="9"), "x", False)
    assert t.targets[0].disagree == 2
    t = tally()
    t.add(ev_at("die", 1500, exitCode="0", image="a"), "x", True)
    t.add(ev_at("die", 1500, exitCode="0", image="b"), "x", False)  # an attribute not compared
    assert t.targets[0].disagree == 0


# --- killDelivered ------------------------------------------------------------------------------------


def test_kill_delivered() -> None:
    ev, _ = evidence(one_kill())
    assert kill_delivered(ev) == Check("killDelivered", True, "SIGKILL sent to pid 4242; its keeper recorded the end by SIGKILL", "kill 1")
    at = ev.keeper_end.at  # type: ignore[union-attr]
    for end, detail in [
        (None, "launches.jsonl has no end line for pid 4242 at or after the kill"),
        (LaunchEnd(4242, at, 0, None), "the keeper's end line for pid 4242 says exit 0, not SIGKILL"),
        (LaunchEnd(4242, at, None, "SIGTERM"), "the keeper's end line for pid 4242 says SIGTERM, not SIGKILL"),
        (LaunchEnd(4242, at, None, None), "the keeper's end line for pid 4242 has lost its status, not SIGKILL"),
    ]:
        ev.keeper_end = end
        assert kill_delivered(ev).detail == detail
    ev.launches_problem = "launches.jsonl: a FIFO"
    assert kill_delivered(ev).detail == "launches.jsonl: a FIFO"
    ev.kill = None
    ev.problems[KILL_JSON] = "kill.json: a list where a JSON object belongs"
    assert kill_delivered(ev).detail == "kill.json: a list where a JSON object belongs"


def _launch_at(files: dict[str, Any], i: int, at: float) -> None:
    from studymon.engine.io.clock import rfc3339_ms
    files["launches.jsonl"][i]["at"] = rfc3339_ms(at)


def test_kill_delivered_reads_the_killed_pids_first_end_after_the_kill() -> None:
    """§6.3: an end of the killed pid before the kill is not the kill's; the first at or after it is."""
    files = one_kill()
    kill_at = rfc3339_epoch(files["kills/1/kill.json"]["at"])
    assert kill_at is not None
    assert [line["event"] for line in files["launches.jsonl"]] == ["start", "end", "start", "end"]
    _launch_at(files, 1, kill_at - 0.002)  # the killed controller's end, stamped before the kill
    ev, _ = evidence(files)
    assert kill_delivered(ev).detail == "pid 4242 had ended (launches.jsonl line 2) before the kill"
    _launch_at(files, 1, kill_at - 0.001)  # the two stamps round to the millisecond
    assert kill_delivered(evidence(files)[0]).ok is True
    # An earlier end of that pid (exit 0) and then the kill's: the kill's is read.
    files = one_kill()
    early = dict(files["launches.jsonl"][1], code=0, signal=None)
    early["at"] = files["launches.jsonl"][0]["at"]
    files["launches.jsonl"].insert(1, early)
    files["launches.jsonl"].insert(2, dict(files["launches.jsonl"][0]))  # it started again, as pid 4242
    ev, _ = evidence(files)
    assert kill_delivered(ev).ok is True and ev.keeper_end.signal == "SIGKILL"  # type: ignore[union-attr]
    # Only the end of the kill's pid counts, not another controller's.
    files = one_kill()
    files["launches.jsonl"][1]["pid"] = 4000
    assert kill_delivered(evidence(files)[0]).detail == (
        "launches.jsonl has no end line for pid 4242 at or after the kill; "
        "a controller was started after the kill while pid 4242 had not ended")


def test_kill_delivered_no_resume_over_the_killed_controller() -> None:
    """§6.3: a resume after a kill starts after the killed controller's end, by their times."""
    files = one_kill()
    lines = files["launches.jsonl"]
    lines[1]["at"], lines[2]["at"] = lines[2]["at"], lines[1]["at"]  # the resumed controller started, then the killed one ended
    lines[1], lines[2] = lines[2], lines[1]
    ev, _ = evidence(files)
    assert kill_delivered(ev) == Check(
        "killDelivered", False, "a controller was started after the kill while pid 4242 had not ended", "kill 1")
    assert exited_cleanly(launch_facts(files)).detail == (
        "two controllers at once: pid 4243 started while pid 4242 had not ended")


def test_controllers_are_judged_by_their_times_not_by_the_order_of_the_file() -> None:
    """§6.8.1: order in a file is a fact to check, never a stand-in for time.  Lines swapped in the file, each
    with its own time, tell the same story by time (the kill was delivered), and the file is out of order."""
    files = one_kill()
    lines = files["launches.jsonl"]
    lines[1], lines[2] = lines[2], lines[1]  # the resume's start written before the killed controller's end
    ev, _ = evidence(files)
    assert kill_delivered(ev).ok is True
    assert exited_cleanly(launch_facts(files)) == Check(
        "exitedCleanly", False, "launches.jsonl line 3 is earlier than line 2: launches.jsonl is appended in time order")
    # Two starts in time order, one line before the other in the file with the later time: two at once, by time.
    files = one_kill()
    lines = files["launches.jsonl"]
    lines[2]["at"] = lines[1]["at"]
    lines[1]["at"] = files["launches.jsonl"][3]["at"]
    assert "two controllers at once: pid 4243 started while pid 4242 had not ended" in exited_cleanly(
        launch_facts(files)).detail


# --- killEvidence -------------------------------------------------------------------------------------


def test_kill_evidence_sound_and_its_boundaries() -> None:
    files = one_kill()
    ev, acc = evidence(files)
    c = kill_evidence(ev, acc, LedgerFacts())
    assert c.ok is True and c.detail.startswith("complete; targets (d1) are the runs in flight at seq 7")
    # beforeKillSeq at the ledger's end is fine; past it is not.
    ev.kill.before_kill_seq = acc.last_seq  # type: ignore[union-attr]
    assert "past the ledger's end" not in kill_evidence(ev, acc, LedgerFacts()).detail
    ev.kill.before_kill_seq = acc.last_seq + 1  # type: ignore[union-attr]
    assert f"beforeKillSeq {acc.last_seq + 1} is past the ledger's end (seq {acc.last_seq})" in kill_evidence(ev, acc, LedgerFacts()).detail


def retarget(ev: KillEvidence, acc: Accounts) -> None:
    """The judged targets worked out again, as report.py does, after the test changed the kill or the ledger."""
    ev.targets = judged_targets(ev, acc, LedgerFacts())


NOT_THE_KILLS = f"{WINDOW}'s targets are not the kill's"


def test_kill_evidence_result_at_the_kill_is_not_in_flight() -> None:
    files = one_kill()
    ev, acc = evidence(files)
    result = acc.runs["d1"].results[0].seq
    ev.kill.before_kill_seq = result - 1  # type: ignore[union-attr]
    retarget(ev, acc)
    assert [t.run for t in ev.targets] == ["d1"] and kill_evidence(ev, acc, LedgerFacts()).ok is True
    # With its result but its round not settled: an unsettled target (§7), which kill.json says is in flight.
    ev.kill.before_kill_seq = result  # type: ignore[union-attr]
    retarget(ev, acc)
    assert [(t.run, t.kind) for t in ev.targets] == [("d1", "unsettled")]  # the ledger's, not kill.json's
    c = kill_evidence(ev, acc, LedgerFacts())
    # Its story now ends with its round's settlement, which the window (written for an inFlight d1) does not name.
    assert c.detail == (f"container-events-window.json: d1's resultSeq {result} is not the record that ended its "
                        f"story (seq {acc.settlements[1].seq}); kill.json's target d1 disagrees with the ledger on class")
    ev.window.results["d1"]["resultSeq"] = acc.settlements[1].seq  # type: ignore[union-attr]
    c = kill_evidence(ev, acc, LedgerFacts())
    assert c.detail == "kill.json's target d1 disagrees with the ledger on class"
    # Settled too: nothing of d1 was left unfinished.
    settled = acc.settlements[1].seq
    ev.kill.before_kill_seq = settled  # type: ignore[union-attr]
    retarget(ev, acc)
    assert ev.targets == []
    c = kill_evidence(ev, acc, LedgerFacts())
    assert c.detail == (f"{NOT_THE_KILLS}: 1 entry of no target, 0 targets without one; "
                        f"kill.json lists 1 run the kill did not leave unfinished at seq {settled} (d1); "
                        f"d1 had its result at seq {result}, before the kill")


def test_kill_evidence_trigger_seq_boundary() -> None:
    ev, acc = evidence(one_kill())
    ev.kill.trigger_seq = ev.kill.before_kill_seq  # type: ignore[union-attr]
    assert kill_evidence(ev, acc, LedgerFacts()).ok is True
    ev.kill.trigger_seq += 1  # type: ignore[union-attr,operator]
    assert kill_evidence(ev, acc, LedgerFacts()).detail == "triggerSeq 8 comes after beforeKillSeq 7"


def test_kill_evidence_targets_must_be_the_runs_in_flight() -> None:
    ev, acc = evidence(one_kill())
    targets = ev.kill.targets  # type: ignore[union-attr]
    ev.kill.targets = []  # type: ignore[union-attr]
    retarget(ev, acc)
    assert [t.run for t in ev.targets] == ["d1"]  # still judged: the ledger had it in flight
    assert kill_evidence(ev, acc, LedgerFacts()).detail == "kill.json omits run d1, in flight at seq 7"
    ev.kill.targets = targets + [replace(targets[0], run="d9")]  # type: ignore[union-attr]
    retarget(ev, acc)
    assert [t.run for t in ev.targets] == ["d1"]  # a listed run not in flight gets no checks of its own
    assert kill_evidence(ev, acc, LedgerFacts()).detail == "kill.json lists 1 run the kill did not leave unfinished at seq 7 (d9)"
    for field_, value in [("cell", "c9"), ("round", 1.0), ("plan_seq", 4), ("start_seq", 6), ("container", "x")]:
        ev.kill.targets = [replace(targets[0], **{field_: value})]  # type: ignore[union-attr]
        c = kill_evidence(ev, acc, LedgerFacts())
        name = {"plan_seq": "planSeq", "start_seq": "startSeq"}.get(field_, field_)
        assert c.detail == f"kill.json's target d1 disagrees with the ledger on {name}", field_


def test_kill_evidence_listed_runs_not_in_flight_are_one_reason() -> None:
    """§6.5: the report's size follows the ledger, not kill.json: any number of extra targets is one reason."""
    ev, acc = evidence(one_kill())
    d1 = ev.kill.targets[0]  # type: ignore[union-attr]
    ev.kill.targets = [d1] + [replace(d1, run=f"x{i}") for i in range(1000)]  # type: ignore[union-attr]
    retarget(ev, acc)
    c = kill_evidence(ev, acc, LedgerFacts())
    assert c == Check(
        "killEvidence", False, "kill.json lists 1000 runs the kill did not leave unfinished at seq 7 (x0, x1, x10 and 997 more)", "kill 1")
    checks = kill_checks(ev, acc, STUDY, LedgerFacts())
    assert [(ch.scope, ch.name) for ch in checks] == [
        ("kill 1", "killDelivered"), ("kill 1", "killEvidence"),
        (SCOPE, "sameContainerNoRerun"), (SCOPE, "chargedOnce"), (SCOPE, "resultSettledAndFinished")]


def test_kill_evidence_window_targets_are_the_judged_targets() -> None:
    """§6.5: the window file holds one fact twice with kill.json: its targets are the runs judged."""
    ev, acc = evidence(one_kill())
    entry = ev.window.results["d1"]  # type: ignore[union-attr]
    ev.window.results["d9"] = dict(entry)  # type: ignore[union-attr]
    assert kill_evidence(ev, acc, LedgerFacts()).detail == (
        f"{NOT_THE_KILLS}: 1 entry of no target, 0 targets without one")
    del ev.window.results["d9"], ev.window.results["d1"]  # type: ignore[union-attr]
    assert kill_evidence(ev, acc, LedgerFacts()).detail == (
        f"{NOT_THE_KILLS}: 0 entries of no target, 1 target without one")
    ev.window.notes.append(f"{WINDOW}: until and untilEpoch are not the same time")  # type: ignore[union-attr]
    ev.window.results["d1"] = entry  # type: ignore[union-attr]
    assert kill_evidence(ev, acc, LedgerFacts()).detail == f"{WINDOW}: until and untilEpoch are not the same time"


def test_kill_evidence_window_start() -> None:
    ev, acc = evidence(one_kill())
    # Near 1970, where a double holds nanoseconds: the window opens where kill.json's since does, to the microsecond.
    ev.kill.since_epoch = 1.0  # type: ignore[union-attr]
    for delta, ok in ((1000, True), (-1000, True), (1001, False), (-1001, False)):
        ev.window.since_epoch = (1_000_000_000 + delta) / 1e9  # type: ignore[union-attr]
        c = kill_evidence(ev, acc, LedgerFacts())
        assert c.ok is ok, delta
    assert c.detail == f"{WINDOW} starts at another time than kill.json's since"
    # Without a since, the window cannot be opened (§6.5): the folder is incomplete.
    ev.kill.since_epoch = None  # type: ignore[union-attr]
    assert kill_evidence(ev, acc, LedgerFacts()) == Check(
        "killEvidence", False, "kill.json has no since and sinceEpoch, two times, to open the window at", "kill 1")


def test_kill_evidence_files_and_stage() -> None:
    files = one_kill()
    ev, acc = evidence(files)
    ev.missing.add(AFTER)
    ev.problems[BEFORE] = f"{BEFORE}: not a regular file (a FIFO)"
    assert kill_evidence(ev, acc, LedgerFacts()).detail == f"missing: {AFTER}; {BEFORE}: not a regular file (a FIFO)"
    # An open window needs only what the capture and the resume wrote, while the study can still be resumed.
    files = resumable(one_kill())
    for file in (WINDOW, READBACK):
        files.pop(f"kills/1/{file}")
    ev, acc = evidence(files)
    assert not ev.finished
    c = kill_evidence(ev, acc, LedgerFacts())
    assert c.ok is True and c.detail.endswith(WINDOW_OPEN)
    ev.missing.add(BEFORE_RESUME)  # a controller started after the kill: the resume wrote it first
    assert kill_evidence(ev, acc, LedgerFacts()).detail == f"missing: {BEFORE_RESUME}"
    ev.missing.discard(BEFORE_RESUME)
    ev.missing_kills = [1]
    ev.at_kill = "ledger-at-kill.json differs"
    ev.kill.problems.append("kill.json at is not an RFC 3339 time")  # type: ignore[union-attr]
    c = kill_evidence(ev, acc, LedgerFacts(problem="p"))
    assert c.detail == ("kills/1/ is missing: kills are numbered from 1; kill.json at is not an RFC 3339 time; "
                        "ledger-at-kill.json differs; and 1 more")
    # Finished with every target's result: the window should have closed, and its files be there.
    files = one_kill()
    for file in (WINDOW, READBACK, BEFORE_RESUME):
        files.pop(f"kills/1/{file}")
    ev, acc = evidence(files)
    assert ev.finished and ev.all_results
    assert kill_evidence(ev, acc, LedgerFacts()) == Check(
        "killEvidence", False, f"missing: {BEFORE_RESUME}, {READBACK}, {WINDOW}", "kill 1")
    # Finished with a target's result lost: the window stays open for good; the folder is complete for its stage,
    # the resume's snapshot before it included.
    acc.runs["d1"].results.clear()
    ev.all_results = False
    assert kill_evidence(ev, acc, LedgerFacts()).detail == f"missing: {BEFORE_RESUME}"
    ev.missing.discard(BEFORE_RESUME)
    assert kill_evidence(ev, acc, LedgerFacts()).ok is True


def test_a_record_first_seen_between_two_resumed_controllers_is_not_judged_by_when(tmp_path: Path) -> None:
    """§6.3 bounds what is seen by the first controller started after the kill: a record first seen later,
    between two controllers, may be the earlier one's, seen at the next console's catch-up. Here the
    resumed controller (4243) ended before d1's result was seen and the next (4244) started only after it:
    that is no evidence of anything outliving the kill, and the study is sound."""
    from studymon.engine.io.clock import rfc3339_ms
    from studymon.engine.judge import judge
    from tests.corpus import t as at_seq
    files = one_kill()
    lines = files["launches.jsonl"]
    final = lines.pop()
    # 4243 exits 0 (an exit 1 with d1 in flight would be an end the console judges as a crash, with a kill folder of
    # its own: §6.8).
    lines += [{"event": "end", "pid": 4243, "at": rfc3339_ms(at_seq(7.6)), "code": 0, "signal": None},
              {"event": "start", "pid": 4244, "at": rfc3339_ms(at_seq(8.5)), "resume": True}, dict(final, pid=4244)]
    seen = {line["seq"]: line["seenAt"] for line in files["timeline.jsonl"]}
    assert seen[8] == rfc3339_ms(at_seq(8.1))  # d1's runResult: between the two controllers
    checks = {(c.scope, c.name): c for c in judge(write(files, tmp_path / "o")).checks}
    assert checks[("study", "exitedCleanly")].ok is True
    assert all(c.ok is True for c in checks.values()), [c for c in checks.values() if c.ok is not True]
    # Seen before 4243, the first controller after the kill, started: that one fails.
    files["timeline.jsonl"] = [dict(line, seenAt=rfc3339_ms(at_seq(7.15))) if line["seq"] == 8 else line
                               for line in files["timeline.jsonl"]]
    checks = {(c.scope, c.name): c for c in judge(write(files, tmp_path / "p")).checks}
    c = checks[(SCOPE, "resultSettledAndFinished")]
    assert c.ok is False and "seq 8 (runResult) was seen while no controller started after the kill ran" in c.detail


def test_kill_evidence_a_finished_study_is_not_told_to_resume() -> None:
    """§6.4 lost is lost: once the study has finished, nothing tells the operator to resume it."""
    files = one_kill()
    for file in (WINDOW, READBACK):
        files.pop(f"kills/1/{file}")
    ev, acc = evidence(files)
    acc.runs["d1"].results.clear()
    ev.all_results = False
    c = kill_evidence(ev, acc, LedgerFacts())
    assert c.ok is True and "--resume" not in c.detail, c.detail


# --- sameContainerNoRerun -----------------------------------------------------------------------------


def test_same_container_sound() -> None:
    ev, acc = evidence(one_kill())
    c = scnr(ev, acc)
    assert c.ok is True and c.detail.startswith(f"{NAME}: one Id ({container_id(NAME)[:12]}) and StartedAt in 3 snapshots")


@pytest.mark.parametrize("file, change, reason", [
    (BEFORE, lambda e: e.update(Id=""), f"{BEFORE}: {NAME} has no Id"),
    (AFTER, lambda e: e["State"].update(StartedAt=None),
     f"{AFTER}: the entry for {NAME} is an inspect whose State.StartedAt is not a text"),
    (AFTER, lambda e: e["State"].pop("StartedAt"), f"{AFTER}: {NAME} has no StartedAt"),
    (BEFORE, lambda e: e["State"].update(Running=False, Status="created"), f"{BEFORE}: {NAME} is not running"),
    (BEFORE, lambda e: e["State"].update(Running=True, Status="paused"), f"{BEFORE}: {NAME} is not running"),
    (BEFORE, lambda e: e["State"].update(Running="true"),
     f"{BEFORE}: the entry for {NAME} is an inspect whose State.Running is not true or false"),
    (AFTER, lambda e: e.update(State=[]), f"{AFTER}: {NAME} has no StartedAt"),
    (BEFORE_RESUME, lambda e: e.update(Id="other"), f"the Id of {NAME} changes across {BEFORE}, {AFTER}, {BEFORE_RESUME}"),
])
def test_same_container_snapshot_clauses(file: str, change: Any, reason: str) -> None:
    ev, acc = evidence(one_kill())
    change(ev.snapshots[file][NAME])
    c = scnr(ev, acc)
    assert c.ok is False and reason in c.detail.split("; "), c.detail


def exit_snapshots(
    ev: KillEvidence, at_ns: int, code: int = 0, files: tuple[str, ...] = (AFTER, BEFORE_RESUME)
) -> None:
    """The target's snapshots in ``files`` show it exited with ``code`` at ``at_ns``."""
    from studymon.engine.io.clock import rfc3339_ns
    for file in files:
        state = ev.snapshots[file][NAME]["State"]
        state.update(Running=False, Status="exited", ExitCode=code, FinishedAt=rfc3339_ns(at_ns))


def die_ns(ev: KillEvidence) -> int:
    """When the target's one die in its window happened."""
    (die,) = ev.tally.targets[0].dies.values()  # type: ignore[union-attr]
    return die[2]  # type: ignore[no-any-return]


def test_same_container_after_kill_may_have_exited_on_its_own() -> None:
    """The run ended between SIGKILL and the snapshot after it: the same container, its die in the window,
    the exit the snapshots show being that die's (§6.4)."""
    ev, acc = evidence(one_kill())
    exit_snapshots(ev, die_ns(ev) - 20_000_000)  # Docker stamps the die 10-25 ms after FinishedAt
    assert scnr(ev, acc).ok is True, scnr(ev, acc).detail
    exit_snapshots(ev, die_ns(ev) + 999_000_000)
    assert scnr(ev, acc).ok is True
    exit_snapshots(ev, die_ns(ev) - 1_001_000_000)
    assert scnr(ev, acc).detail == "the die is not the exit the snapshots show (exit code and time within a second)"
    exit_snapshots(ev, die_ns(ev), code=1)
    assert scnr(ev, acc).detail == ("the die is not the exit the snapshots show (exit code and time within a second)")
    exit_snapshots(ev, die_ns(ev))
    for file in (AFTER, BEFORE_RESUME):
        del ev.snapshots[file][NAME]["State"]["FinishedAt"]  # exited, but when cannot be read
    assert scnr(ev, acc).detail == "the die is not the exit the snapshots show (exit code and time within a second)"
    ev, acc = evidence(one_kill())
    exit_snapshots(ev, die_ns(ev))
    ev.snapshots[AFTER][NAME]["Id"] = "another"
    assert scnr(ev, acc).ok is False
    ev, acc = evidence(one_kill())
    exit_snapshots(ev, die_ns(ev), files=(AFTER,))
    ev.tally.targets[0].dies.clear()  # type: ignore[union-attr]
    assert scnr(ev, acc).detail == (f"{BEFORE_RESUME}: {NAME} exited, and here it is not that same exited container; "
                                    f"no die of {NAME} in its window")


def test_a_target_seen_running_at_the_kill_that_had_finished_just_before_it() -> None:
    """The snapshot before the kill read the run as it ended; the one after shows it finished before the window.

    Its die then lies before the window (found by the soak: the process
    runtime records the exit a moment after the command ends), or just
    inside it (Docker stamps the die 10-25 ms after FinishedAt): that one
    die must agree with the snapshots, and runResult must give the exit that was seen.
    """
    ev, acc = evidence(one_kill())
    since = ev.window.since_ns  # type: ignore[union-attr]
    ev.tally.targets[0].dies.clear()  # type: ignore[union-attr]
    exit_snapshots(ev, since - 1_000_000)
    assert scnr(ev, acc).ok is True, scnr(ev, acc).detail
    exit_snapshots(ev, since + 1_000_000)  # finished in the window: its die must be there
    assert scnr(ev, acc).detail == f"no die of {NAME} in its window"
    # Finished before the window, its die inside it and agreeing with it: that exit's die.
    ev, acc = evidence(one_kill())
    exit_snapshots(ev, die_ns(ev) - 20_000_000)
    ev.window.since_epoch = (die_ns(ev) - 10_000_000) / 1e9  # type: ignore[union-attr]
    assert scnr(ev, acc).ok is True, scnr(ev, acc).detail
    # A die in the window that is not that exit's (more than a second from it) is another story.
    exit_snapshots(ev, die_ns(ev) - 1_500_000_000)
    assert scnr(ev, acc).detail == "the die is not the exit the snapshots show (exit code and time within a second)"
    ev, acc = evidence(one_kill())
    ev.tally.targets[0].dies.clear()  # type: ignore[union-attr]
    exit_snapshots(ev, since - 1_000_000, code=137)
    assert scnr(ev, acc).detail == "the snapshots show exit 137, runResult says 0"
    exit_snapshots(ev, since - 1_000_000)
    ev.snapshots[BEFORE_RESUME][NAME]["State"]["ExitCode"] = 1
    assert scnr(ev, acc).detail == f"{BEFORE_RESUME}: {NAME} shows another exit than the snapshot before"
    ev, acc = evidence(one_kill())
    ev.tally.targets[0].dies.clear()  # type: ignore[union-attr]
    exit_snapshots(ev, since - 1_000_000)
    ev.snapshots[AFTER][NAME]["State"]["FinishedAt"] = "garbage"
    assert scnr(ev, acc).detail == (f"{BEFORE_RESUME}: {NAME} shows another exit than the snapshot before; "
                                    f"no die of {NAME} in its window")


def test_same_container_before_resume_may_have_exited() -> None:
    ev, acc = evidence(one_kill())
    exit_snapshots(ev, die_ns(ev) - 20_000_000, files=(BEFORE_RESUME,))
    assert scnr(ev, acc).ok is True
    del ev.snapshots[BEFORE_RESUME][NAME]["State"]["FinishedAt"]
    assert scnr(ev, acc).detail == "the die is not the exit the snapshots show (exit code and time within a second)"


@pytest.mark.parametrize("file", [BEFORE, AFTER, BEFORE_RESUME])
def test_a_snapshot_is_of_the_name_it_is_filed_under(file: str) -> None:
    """§6.4: each snapshot's Name is the name it is filed under, with or without Docker's leading /."""
    ev, acc = evidence(one_kill())
    ev.snapshots[file][NAME]["Name"] = NAME
    assert scnr(ev, acc).ok is True
    for other in ("/inforsi-s-d2", "inforsi-s-d1x", None, 5, "//" + NAME + "/"):
        ev.snapshots[file][NAME]["Name"] = other
        assert scnr(ev, acc).detail == (
            f"{file}: the entry filed under {NAME} is another container's (its Name differs)"), other


def test_same_container_missing_entries() -> None:
    ev, acc = evidence(one_kill())
    ev.snapshots[AFTER] = {}
    assert scnr(ev, acc).detail == f"{AFTER} has no {NAME}"
    ev.snapshots[AFTER] = {NAME: [1]}
    assert scnr(ev, acc).detail == f"{AFTER}: the entry for {NAME} is a list, not an object"
    ev.missing.add(AFTER)
    assert scnr(ev, acc).detail == f"{AFTER}: missing"


def test_same_container_name_must_be_the_contracts() -> None:
    ev, acc = evidence(one_kill())
    ev.kill.targets = [replace(target(ev), container="x")]  # type: ignore[union-attr]
    retarget(ev, acc)
    assert scnr(ev, acc).detail == f"the target's container in kill.json is not {NAME}"
    c = same_container_no_rerun(ev, target(ev), acc.runs["d1"], StudyFacts(None, None, "research.json: missing"),
                                LedgerFacts(), SCOPE)
    assert c.detail == "the container names cannot be checked: research.json: missing"


def test_same_container_die_clauses() -> None:
    ev, acc = evidence(one_kill())
    watch = ev.tally.targets[0]  # type: ignore[union-attr]
    (k, (cid, _, ns)), = watch.dies.items()
    watch.dies[k] = (cid, 1, ns)
    assert scnr(ev, acc).detail == "the die says exit 1, runResult says 0"
    watch.dies[k] = (cid, None, ns)
    assert scnr(ev, acc).detail == "the die has no exitCode"
    watch.dies[k] = ("other", 0, ns)
    assert scnr(ev, acc).detail == f"the die is of container other, not of {container_id(NAME)[:12]}"
    watch.dies.clear()
    assert scnr(ev, acc).detail == f"no die of {NAME} in its window"
    watch.dies.update({1: (cid, 0, ns), 2: (cid, 0, ns + 1)})
    assert scnr(ev, acc).detail == f"2 dies of {NAME} in its window"
    watch.dies[3] = (cid, 0, ns + 2)
    assert scnr(ev, acc).detail == f"more than 2 dies of {NAME} in its window"


def test_what_may_come_with_the_die() -> None:
    """A destroy after the die; an oom before it, or up to a second after it (§6.4)."""
    ev, acc = evidence(one_kill())
    watch = ev.tally.targets[0]  # type: ignore[union-attr]
    ns = die_ns(ev)
    watch.first_destroy = ns + 1  # removed after its die (the sound run's is after the window)
    assert scnr(ev, acc).ok is True
    watch.first_destroy = ns - 1
    assert scnr(ev, acc).detail == f"a destroy of {NAME} comes before its die"
    watch.first_destroy = ns + 1
    assert scnr(ev, acc).ok is True
    watch.last_oom = ns + 1_000_000_000
    assert scnr(ev, acc).ok is True
    watch.last_oom = ns + 1_000_000_001
    assert scnr(ev, acc).detail == f"an oom of {NAME} comes after its die"
    watch.dies.clear()
    watch.last_oom = ns
    assert scnr(ev, acc).detail == (f"no die of {NAME} in its window; a destroy of {NAME} with no die before it; "
                                    f"an oom of {NAME} with no die after it")
    watch.first_destroy = None
    assert scnr(ev, acc).detail == f"no die of {NAME} in its window; an oom of {NAME} with no die after it"


def test_the_order_of_destroys_and_ooms_is_judged_whatever_their_number() -> None:
    """Many destroys after the die do not hide one before it, nor many ooms before it one long after it."""
    from studymon.engine.evidence.records import parse_event

    def e(action: str, ns: int) -> dict[str, Any]:
        return {"Type": "container", "Action": action, "timeNano": ns, "Actor": {"ID": "i", "Attributes": {"name": "n"}}}

    for late, early, name in ((["destroy"] * 5, "destroy", "first_destroy"), (["oom"] * 5, "oom", "last_oom")):
        base = 10**18
        times = [base + 10 + i for i in range(5)] if name == "first_destroy" else [base - 10 - i for i in range(5)]
        odd = base - 1 if name == "first_destroy" else base + 2_000_000_000
        for odd_first in (False, True):  # the one out of order last in the files, or first
            w = TargetTally("d1", "n", frozenset({"i"}), None)
            if odd_first:
                w.note(parse_event(e(early, odd)))  # type: ignore[arg-type]
            for action, ns in zip(late, times, strict=True):
                w.note(parse_event(e(action, ns)))  # type: ignore[arg-type]
            if not odd_first:
                w.note(parse_event(e(early, odd)))  # type: ignore[arg-type]
            assert getattr(w, name) == odd, (name, odd_first)


def test_a_twin_planned_before_the_kill_and_started_after_it_is_a_repeat() -> None:
    """Letting a run planned before the kill start in the window (§1) must not let a twin of a target through."""
    ev, acc = evidence(one_kill())
    plan = acc.runs["d1"].plan
    seq = ev.kill.before_kill_seq  # type: ignore[union-attr]
    acc.add(Record(seq, "t", "runPlanned", dict(plan.content, run="t9"), 99, 0))  # type: ignore[union-attr]
    assert co(ev, acc).ok is True, "planned before the kill and never started: no work done twice"
    twin = copy.deepcopy(acc)
    twin.add(Record(seq + 1, "t", "runStarted", {"run": "t9", "container": "inforsi-s-t9"}, 100, 0))
    assert co(ev, twin).detail == (f"run t9 (planned at seq {seq}, before the kill, started after it) repeats it: "
                                   "same purpose, cell and round, and an experiment in common")
    before = copy.deepcopy(acc)
    before.add(Record(seq, "t", "runStarted", {"run": "t9", "container": "inforsi-s-t9"}, 100, 0))
    assert co(ev, before).ok is True, "started before the kill: not this kill's repeat"


def test_a_target_that_exited_just_before_the_kill() -> None:
    """Its result was still to be written: no die in the window, the snapshots keep one exited container."""
    ev, acc = evidence(one_kill())
    watch = ev.tally.targets[0]  # type: ignore[union-attr]
    ns = die_ns(ev)
    watch.dies.clear()
    for file in (BEFORE, AFTER, BEFORE_RESUME):
        state = ev.snapshots[file][NAME]["State"]
        state.update(Running=False, Status="exited", ExitCode=0, FinishedAt="2026-11-30T00:00:01Z")
    assert scnr(ev, acc).ok is True
    ev.snapshots[AFTER][NAME]["State"]["ExitCode"] = 1
    assert scnr(ev, acc).detail == f"{AFTER}: {NAME} shows another exit than the snapshot before"
    ev.snapshots[AFTER][NAME]["State"]["ExitCode"] = 0
    ev.snapshots[BEFORE_RESUME][NAME]["State"]["FinishedAt"] = "2026-11-30T00:00:09Z"
    assert scnr(ev, acc).detail == f"{BEFORE_RESUME}: {NAME} shows another exit than the snapshot before"
    ev.snapshots[BEFORE_RESUME][NAME]["State"]["FinishedAt"] = "2026-11-30T00:00:01Z"
    acc.runs["d1"].results[0].content["exitCode"] = 3
    assert scnr(ev, acc).detail == "the snapshots show exit 0, runResult says 3"
    acc.runs["d1"].results[0].content["exitCode"] = 0
    # A die in its window that is not the exit the snapshots show (53 minutes later): another story.
    watch.dies[1] = (container_id(NAME), 0, ns)
    assert scnr(ev, acc).detail == "the die is not the exit the snapshots show (exit code and time within a second)"
    # A die that is that exit's (Docker stamps it just after FinishedAt, which may put it in the window): sound.
    exit_snapshots(ev, ns - 25_000_000, files=(BEFORE, AFTER, BEFORE_RESUME))
    assert scnr(ev, acc).ok is True
    watch.dies[1] = (container_id(NAME), 1, ns)
    assert scnr(ev, acc).detail == ("the die is not the exit the snapshots show (exit code and time within a second); "
                                    "the die says exit 1, runResult says 0")
    watch.dies.clear()
    ev.snapshots[AFTER][NAME]["State"].update(Running=True, Status="running")
    assert scnr(ev, acc).detail == f"{AFTER}: {NAME} exited, and here it is not that same exited container"


def test_same_container_window_clauses() -> None:
    ev, acc = evidence(one_kill())
    w = ev.window
    del w.results["d1"]  # type: ignore[union-attr]
    assert scnr(ev, acc).detail == f"{WINDOW} has no entry for d1"
    ev.window = None
    ev.problems[WINDOW] = f"{WINDOW}: a list where a JSON object belongs"
    assert scnr(ev, acc).detail == f"{WINDOW}: a list where a JSON object belongs"


def test_a_result_seen_outside_the_window_is_the_window_file_s_own_fault() -> None:
    """The window file says when each result was seen and when the window closed, once it saw them all: each stamped
    to the millisecond (WRITTEN_MS), so a result seen more than that outside [since, until] is the file disagreeing
    with itself (killEvidence); a result named with no time, or a time with no result, is no window the console
    writes (every check that reads it)."""
    body = {"since": "2026-12-01T00:00:00.000Z", "until": "2026-12-01T00:00:01.000Z",
            "sinceEpoch": 1796083200.0, "untilEpoch": 1796083201.0,
            "targets": {"d1": {"resultSeq": 8, "resultSeenEpoch": 1796083201.0}}}

    def notes(seen: float | None, seq: int | None = 8) -> tuple[list[str], str | None]:
        window, why = parse_window(dict(body, targets={"d1": {"resultSeq": seq, "resultSeenEpoch": seen}}))
        return (window.notes if window is not None else []), why

    outside = [f"{WINDOW}: d1's result was seen outside the window"]
    assert notes(1796083201.0) == ([], None)
    assert notes(1796083201.0009) == ([], None)  # within the millisecond the stamps are taken to
    assert notes(1796083201.002) == (outside, None)
    assert notes(1796083199.998) == (outside, None)
    assert notes(None, None) == ([], None)  # the study finished without it
    assert notes(None)[1] == f"{WINDOW}: a target's resultSeq and resultSeenEpoch are not both null or both set"
    assert notes(1796083201.0, None)[1] == notes(None)[1]
    ev, acc = evidence(one_kill())
    ev.window.notes.extend(outside)  # type: ignore[union-attr]
    c = kill_evidence(ev, acc, LedgerFacts())
    assert c.ok is False and outside[0] in c.detail and c.proofs


def test_same_container_gaps_are_unknown_and_false_beats_them() -> None:
    ev, acc = evidence(one_kill())
    ev.tally.gaps = 2  # type: ignore[union-attr]
    assert scnr(ev, acc) == Check("sameContainerNoRerun", None, "the live recording has 2 gaps in the window", SCOPE)
    ev.tally.gaps = 1  # type: ignore[union-attr]
    assert scnr(ev, acc).detail == "the live recording has 1 gap in the window"
    ev.tally.targets[0].forbidden = [("start", 0)]  # type: ignore[union-attr]
    assert scnr(ev, acc).ok is False


def open_window(files: dict[str, Any], before_resume: bool = False) -> dict[str, Any]:
    """Kill 1's window not closed yet: no window file, no read-back, and no snapshot before a resume unless
    ``before_resume``."""
    for file in (WINDOW, READBACK) if before_resume else (WINDOW, READBACK, BEFORE_RESUME):
        files.pop(f"kills/1/{file}")
    return files


def test_same_container_open_window() -> None:
    ev, acc = evidence(open_window(resumable(one_kill())))
    assert scnr(ev, acc).detail == f"{BEFORE_RESUME}: missing", "resumed: the snapshot before it is there"
    ev, acc = evidence(open_window(resumable(one_kill()), before_resume=True))
    assert scnr(ev, acc) == Check("sameContainerNoRerun", None, WINDOW_OPEN, SCOPE)
    ev.tally.targets[0].dies.clear()  # type: ignore[union-attr]
    assert scnr(ev, acc).detail == f"{WINDOW_OPEN}; no die of {NAME} yet"
    ev.missing.add(LIVE)
    assert scnr(ev, acc).ok is False


def test_same_container_open_window_of_a_finished_study() -> None:
    """§6.4 lost is lost: once the study has finished, an open window is ✗, its missing die and files too."""
    ev, acc = evidence(open_window(one_kill()))
    assert ev.finished and not ev.may_continue
    assert scnr(ev, acc) == Check(
        "sameContainerNoRerun", False,
        f"{BEFORE_RESUME}: missing; the study finished with the window still open; {READBACK}: missing", SCOPE)
    ev.tally.targets[0].dies.clear()  # type: ignore[union-attr]
    assert scnr(ev, acc) == Check(  # the fourth reason: no die of it in its window, never "yet"
        "sameContainerNoRerun", False,
        f"{BEFORE_RESUME}: missing; the study finished with the window still open; {READBACK}: missing; and 1 more",
        SCOPE)
    ev.missing.discard(BEFORE_RESUME)
    ev.snapshots[BEFORE_RESUME] = copy.deepcopy(ev.snapshots[AFTER])
    ev.missing.discard(READBACK)
    assert scnr(ev, acc).detail == f"the study finished with the window still open; no die of {NAME} in its window"


def test_same_container_event_file_problems() -> None:
    ev, acc = evidence(one_kill())
    ev.missing.add(READBACK)
    assert scnr(ev, acc).detail == f"{READBACK}: missing"
    ev.tally.malformed, ev.tally.malformed_count = ["l1: x"], 5  # type: ignore[union-attr]
    assert scnr(ev, acc).detail == f"{READBACK}: missing; l1: x (and 4 more lines that are not events)"
    ev.tally = None
    ev.missing.clear()
    assert scnr(ev, acc) == Check("sameContainerNoRerun", None, "the lifecycle events were not judged", SCOPE)
    ev.missing.add(LIVE)
    assert scnr(ev, acc) == Check("sameContainerNoRerun", False, f"{LIVE}: missing", SCOPE)


def test_same_container_foreign_containers() -> None:
    ev, acc = evidence(one_kill())
    ev.tally.foreign = [("inforsi-s-zz", "create", 0)]  # type: ignore[union-attr]
    ev.tally.foreign_count = 4  # type: ignore[union-attr]
    assert scnr(ev, acc).detail == ("create of inforsi-s-zz at 1970-01-01T00:00:00.000Z in the window, and its run was not "
                                    "waiting to start at the kill (and 3 more containers of the study made in the window)")


# --- chargedOnce ------------------------------------------------------------------------------------------


def test_charged_once() -> None:
    ev, acc = evidence(one_kill())
    assert co(ev, acc) == Check("chargedOnce", True, "1 charge, 1 runStarted; no run planned after the kill repeats d1", SCOPE)
    d1 = acc.runs["d1"]
    d1.charges.append(d1.charges[0])
    assert co(ev, acc).detail == "2 charges, 1 runStarted"
    d1.charges.clear()
    assert co(ev, acc).detail == "0 charges, 1 runStarted"


def test_charged_once_repeat_after_the_kill() -> None:
    ev, acc = evidence(one_kill())
    plan = acc.runs["d1"].plan
    seq = ev.kill.before_kill_seq  # type: ignore[union-attr]
    for at_seq, repeats in ((seq, False), (seq + 1, True)):
        acc2 = copy.deepcopy(acc)
        acc2.add(Record(at_seq, "t", "runPlanned", dict(plan.content, run="d1b"), 99, 0))  # type: ignore[union-attr]
        assert (co(ev, acc2).ok is False) is repeats
    for change in ({"object": "c9"}, {"round": 2}, {"experiments": ["e9"]}, {"experiments": []}):
        acc2 = copy.deepcopy(acc)
        acc2.add(Record(seq + 1, "t", "runPlanned", dict(plan.content, run="d1b", **change), 99, 0))  # type: ignore[union-attr]
        assert co(ev, acc2).ok is True, change
    # A run of another purpose repeats it before its round is settled (§6.9), and is the round's next stage after.
    settled = acc.settlements[1].seq
    for at_seq, repeats in ((settled - 1, True), (settled + 1, False)):
        acc2 = copy.deepcopy(acc)
        acc2.add(Record(at_seq, "t", "runPlanned", dict(plan.content, run="d1b", purpose="ablation"), 99, 0))  # type: ignore[union-attr]
        c = co(ev, acc2)
        assert (c.ok is False) is repeats, at_seq
        if repeats:
            assert c.detail == (f"run d1b (planned at seq {at_seq}, after the kill) repeats it: same cell and round, "
                                "before round 1 was settled, and an experiment in common"), c.detail
    # Twins (§6.4): the same purpose, cell and round and ANY experiment id in common.
    for experiments in (list(reversed(plan.get("experiments"))), ["e1a"], ["e1b", "e9"]):  # type: ignore[union-attr]
        acc2 = copy.deepcopy(acc)
        acc2.add(Record(seq + 1, "t", "runPlanned", dict(plan.content, run="d1b", experiments=experiments), 99, 0))  # type: ignore[union-attr]
        assert co(ev, acc2).detail == (f"run d1b (planned at seq {seq + 1}, after the kill) repeats it: "
                                       "same purpose, cell and round, and an experiment in common"), experiments
    # Each repeat is named, the first few.
    acc2 = copy.deepcopy(acc)
    for i in range(4):
        content = dict(plan.content, run=f"r{i}", experiments=["e1a"])  # type: ignore[union-attr]
        acc2.add(Record(seq + 1 + i, "t", "runPlanned", content, 99 + i, 0))
    c = co(ev, acc2)
    assert c.ok is False and c.detail.count("repeats it") == 3
    assert c.detail.startswith(f"run r0 (planned at seq {seq + 1}")
    assert c.detail.endswith("and an experiment in common (and 1 more such run)"), c.detail
    content = dict(plan.content, run="r4", experiments=["e1a"])  # type: ignore[union-attr]
    acc2.add(Record(seq + 5, "t", "runPlanned", content, 103, 0))
    assert co(ev, acc2).detail.endswith("and an experiment in common (and 2 more such runs)")


def test_charged_once_needs_a_plan() -> None:
    ev, acc = evidence(one_kill())
    acc.runs["d1"].plans.clear()
    assert co(ev, acc).detail == "run d1 has no runPlanned"


# --- resultSettledAndFinished --------------------------------------------------------------------------------


def test_result_settled_sound() -> None:
    ev, acc = evidence(one_kill())
    assert rsf(ev, acc) == Check(
        "resultSettledAndFinished", True,
        "one result at seq 8, after the kill and inside the window; settled, then proposal 1 opened; halted at export", SCOPE)


def test_result_must_come_after_the_kill() -> None:
    ev, acc = evidence(one_kill())
    result = acc.runs["d1"].results[0].seq
    ev.kill.before_kill_seq = result - 1  # type: ignore[union-attr]
    assert rsf(ev, acc).ok is True
    ev.kill.before_kill_seq = result  # type: ignore[union-attr]
    assert rsf(ev, acc).detail == f"the result (seq {result}) is not after the kill (seq {result})"


def test_result_must_be_inside_the_window() -> None:
    ev, acc = evidence(one_kill())
    entry = ev.window.results["d1"]  # type: ignore[union-attr]
    entry["resultSeq"] += 1
    assert rsf(ev, acc).ok is True
    entry["resultSeq"] -= 2
    assert rsf(ev, acc).detail == "the result (seq 8) comes after the window closed (at seq 7)"
    entry["resultSeq"] = None
    assert rsf(ev, acc).detail == "the window closed without d1's result"


def test_result_count() -> None:
    ev, acc = evidence(one_kill())
    d1 = acc.runs["d1"]
    d1.results.append(d1.results[0])
    assert rsf(ev, acc).detail == "2 runResult for d1"
    d1.results.clear()
    assert rsf(ev, acc).detail.startswith("the study finished without d1's result; the settlement of round 1 (seq 9) comes with no runResult for d1")


def test_settlement_clauses() -> None:
    ev, acc = evidence(one_kill())
    s = acc.settlements[1]
    s.count = 2
    assert rsf(ev, acc).detail == "2 diagnosisSettlement for round 1"
    s.count, s.run = 1, "d7"
    assert rsf(ev, acc).detail == "the settlement of round 1 names d7, not d1"
    s.run = ["x"]
    assert rsf(ev, acc).detail == "the settlement of round 1 names another run, not d1"
    result = acc.runs["d1"].results[0]
    # One seq for both (ledgerWellFormed's fault): their lines say which came first.
    s.run, s.seq, s.line = "d1", result.seq, result.line - 1
    assert rsf(ev, acc).detail == "the settlement (seq 8) comes before the result (seq 8)"
    s.line = result.line + 1
    assert "comes before the result" not in rsf(ev, acc).detail
    s.line = result.line - 1
    s.seq = 9
    s.accounted, s.problem = None, "judged is not an object with a list of experiments"
    assert rsf(ev, acc).detail == "the settlement of round 1: judged is not an object with a list of experiments"
    s.accounted = frozenset()
    assert rsf(ev, acc).detail == "the settlement leaves out 2 experiments of d1; the settlement leaves out 2 chosen experiments"
    del acc.settlements[1]
    assert rsf(ev, acc).detail == "no diagnosisSettlement for round 1"


def test_settlement_needs_the_proposal_after_it() -> None:
    ev, acc = evidence(one_kill())
    s = acc.settlements[1]
    acc.proposal_opened[1] = s.seq + 1
    assert rsf(ev, acc).ok is True
    acc.proposal_opened[1] = s.seq
    assert rsf(ev, acc).detail == f"no stageOpen proposal 1 after the settlement (seq {s.seq})"
    del acc.proposal_opened[1]
    assert rsf(ev, acc).ok is False


def test_selection_and_plan_shapes() -> None:
    ev, acc = evidence(one_kill())
    acc.selections[1].chosen, acc.selections[1].problem = None, "output.chosen is not a list"
    assert rsf(ev, acc).detail == "selectDiagnosis of round 1: output.chosen is not a list"
    ev, acc = evidence(one_kill())
    acc.runs["d1"].plans[0] = Record(5, "t", "runPlanned", dict(acc.runs["d1"].plans[0].content, experiments="x"), 5, 0)
    assert rsf(ev, acc).detail == "runPlanned.experiments of d1 is not a list"
    acc.runs["d1"].plans[0] = Record(5, "t", "runPlanned", dict(acc.runs["d1"].plans[0].content, round="1"), 5, 0)
    assert rsf(ev, acc).detail == "the round of d1 is a string, not an integer"


def test_not_halted_at_export() -> None:
    ev, acc = evidence(one_kill())
    acc.add(Record(99, "t", "export", {"path": "x"}, 99, 0))
    ev.end_ok = halted_at_export(acc, LedgerFacts(), "halt", ev.finished).ok  # as report.py hands it on
    assert ev.end_ok is False
    assert rsf(ev, acc) == Check(
        "resultSettledAndFinished", False, "the study did not end as its template expects (haltedAtExport)", SCOPE)
    # Not ended so yet, and it may still be resumed: unknown.
    ev.end_ok = None
    assert rsf(ev, acc) == Check(
        "resultSettledAndFinished", None, "the study has not ended yet as its template expects", SCOPE)
    # Ended as expected, but its controller has not exited 0: it may go on.
    ev, acc = evidence(resumable(one_kill()))
    assert ev.end_ok is True and not ev.finished
    assert rsf(ev, acc) == Check("resultSettledAndFinished", None, "the study has not finished yet", SCOPE)


def test_an_open_window_leaves_what_has_not_happened_unknown() -> None:
    files = resumable(one_kill())
    files.pop("kills/1/container-events-window.json")
    ev, acc = evidence(files)
    assert rsf(ev, acc) == Check(
        "resultSettledAndFinished", None, f"{WINDOW_OPEN}; the study has not finished yet", SCOPE)
    acc.runs["d1"].results.clear()
    del acc.settlements[1]
    acc.last_halt = None
    ev.end_ok = halted_at_export(acc, LedgerFacts(), "halt", ev.finished).ok
    c = rsf(ev, acc)
    assert c.ok is None
    assert c.detail == f"no runResult for d1 yet; {WINDOW_OPEN}; no diagnosisSettlement for round 1; and 1 more"
    acc.runs["d1"].results.extend([Record(8, "t", "runResult", {"run": "d1", "exitCode": 0}, 8, 0)] * 2)
    assert rsf(ev, acc).ok is False  # what happened wrong fails even while the window is open


def test_lost_is_lost_once_the_study_has_finished() -> None:
    """§6.4: the study finished (exit 0) with the window open: a target without its result is ✗, never ?."""
    files = one_kill()
    files.pop("kills/1/container-events-window.json")
    ev, acc = evidence(files)
    acc.runs["d1"].results.clear()
    del acc.settlements[1]
    c = rsf(ev, acc)
    assert c == Check("resultSettledAndFinished", False,
                      "the study finished without d1's result; the study finished with the window still open; "
                      "no diagnosisSettlement for round 1", SCOPE)
    assert "--resume" not in c.detail


def test_a_settlement_still_to_come_is_unknown_while_the_study_may_be_resumed() -> None:
    """§6.6: the window closed (d1 has its result), then the controller crashed before the settlement:
    a resume may still settle round 1, so the missing settlement is ?, as resultsAccounted says, not ✗."""
    ev, acc = evidence(resumable(one_kill()))
    assert not ev.finished and not ev.window_open
    del acc.settlements[1]
    del acc.proposal_opened[1]
    assert results_accounted(acc, LedgerFacts(), ev.finished).ok is None
    c = rsf(ev, acc)
    assert c.ok is None, c.detail


def test_a_non_diagnosis_target_needs_no_settlement() -> None:
    files = derive(build(rounds=1, ablation=(True,), overlap=(False,), kills=(("a1", "manual"),)))
    ev, acc = evidence(files)
    c = result_settled_and_finished(ev, target(ev), acc.runs["a1"], acc, LedgerFacts(), "kill 1 · a1")
    assert c.ok is True and "settled" not in c.detail


def test_unusable_ledger_fails_the_target_checks() -> None:
    ev, acc = evidence(one_kill())
    bad = LedgerFacts(problem="study/ledger.jsonl: missing")
    for check in (scnr(ev, acc, bad), rsf(ev, acc, bad),
                  charged_once(ev, target(ev), acc.runs["d1"], acc, bad, SCOPE), kill_evidence(ev, acc, bad)):
        assert check.ok is False and "the ledger cannot be judged: study/ledger.jsonl: missing" in check.detail


def test_kill_checks_table_order() -> None:
    ev, acc = evidence(derive(build()), 2)
    checks = kill_checks(ev, acc, STUDY, LedgerFacts())
    assert [(c.scope, c.name) for c in checks] == [
        ("kill 2", "killDelivered"), ("kill 2", "killEvidence"),
        ("kill 2 · a2", "sameContainerNoRerun"), ("kill 2 · a2", "chargedOnce"), ("kill 2 · a2", "resultSettledAndFinished"),
        ("kill 2 · d3", "sameContainerNoRerun"), ("kill 2 · d3", "chargedOnce"), ("kill 2 · d3", "resultSettledAndFinished"),
    ]
    assert all(c.ok for c in checks)
    ev.kill = None
    assert [c.name for c in kill_checks(ev, acc, STUDY, LedgerFacts())] == ["killDelivered", "killEvidence"]


# --- killTriggered ------------------------------------------------------------------------------------------------


def armed(files: dict[str, Any]) -> Arming:
    """arms.jsonl as the judge reads it, the fired points' moments counted over the ledger as read_ledger does."""
    a = Arming()
    lines = [dict(line) for line in files.get("arms.jsonl", [])]
    # The console arms the point it then fires at: where a test gives the fired line a point, its arm line names it.
    fired = [line for line in lines if line.get("event") == "fired"]
    arms = [line for line in lines if line.get("event") == "arm"]
    for arm_line, fired_line_ in zip(arms, fired):
        if "point" not in arm_line and isinstance(fired_line_.get("point"), str):
            arm_line["point"] = fired_line_["point"]
    for line in lines:
        arm = parse_arm(line)
        if isinstance(arm, str):
            a.bad_lines += 1  # as read_arms counts it
        else:
            take_arm(a, arm)
    acc = Accounts()
    for r in records(files):
        acc.add(r)
        run = r.content.get("run")
        a.count(r.kind, acc.runs[run].purpose if isinstance(run, str) and run in acc.runs else None, r.seq, run)
    return a


def fired_line(files: dict[str, Any]) -> dict[str, Any]:
    return next(line for line in files["arms.jsonl"] if line["event"] == "fired")


SEED_TEXT = "after:runStarted/diagnosis"


def test_kill_triggered_sound() -> None:
    files = one_kill()
    ev, acc = evidence(files)
    c = kill_triggered(armed(files), [ev], acc, LedgerFacts(), True)
    assert c == Check("killTriggered", True, f"kill 1 fired at {SEED_TEXT} (seq 7, d1's runStarted); its folder is complete")
    # The same, written with its point (as the console writes it now), and so with the kill's kill.json.
    fired_line(files).update(point=SEED_TEXT, fromSeq=0)
    ev.kill.point = SEED_TEXT  # type: ignore[union-attr]
    assert kill_triggered(armed(files), [ev], acc, LedgerFacts(), True) == c


def test_kill_triggered_absent_when_nothing_was_armed() -> None:
    files = derive(build(rounds=1, ablation=(False,), kills=(("d1", "manual"),)))
    ev, acc = evidence(files)
    assert kill_triggered(None, [ev], acc, LedgerFacts(), True) is None
    assert kill_triggered(Arming(), [ev], acc, LedgerFacts(), True) is None
    assert kill_triggered(Arming(bad_lines=1), [ev], acc, LedgerFacts(), True).detail == \
        "arms.jsonl: 1 line is not an arming event"  # type: ignore[union-attr]
    assert kill_triggered(Arming(problem="arms.jsonl: a FIFO"), [ev], acc, LedgerFacts(), True).ok is False  # type: ignore[union-attr]


def _kill(ev: KillEvidence) -> KillRecord:
    assert ev.kill is not None
    return ev.kill


@pytest.mark.parametrize("change, detail", [
    (lambda line, ev, acc: line.update(kill=2), "arms.jsonl says kill 2 fired, but kills/2/ is missing"),
    (lambda line, ev, acc: line.update(kill="1"), "arms.jsonl has a fired line whose kill is a string, not a number"),
    (lambda line, ev, acc: line.update(run="d2"), "arms.jsonl says kill 1 fired at d2, not at d1"),
    (lambda line, ev, acc: line.update(run="D2"), "arms.jsonl's fired line for kill 1 names no run"),
    (lambda line, ev, acc: line.update(run=None), "arms.jsonl says kill 1 fired at a run with an invalid id, not at d1"),
    (lambda line, ev, acc: setattr(_kill(ev), "trigger_seq", 6),
     f"kill 1 fired at seq 6, not at {SEED_TEXT}'s moment (seq 7, d1's runStarted)"),
    # The judged targets are the runs in flight at beforeKillSeq: d1 is not, once it had its result by then.
    (lambda line, ev, acc: (setattr(_kill(ev), "before_kill_seq", acc.runs["d1"].results[0].seq), retarget(ev, acc)),
     "the run d1 whose start kill 1 fired at is not among its targets"),
    (lambda line, ev, acc: setattr(_kill(ev), "before_kill_seq", 8),
     f"kill 1 came after seq 8: the study had gone on past {SEED_TEXT} (seq 7, d1's runStarted), a missed point"),
    (lambda line, ev, acc: ev.missing.add(LIVE), f"kills/1/ is incomplete: missing: {LIVE}"),
    # Written with a point: the point, its fromSeq and kill.json's point are each compared.
    (lambda line, ev, acc: line.update(point="after:nope", fromSeq=0),
     "arms.jsonl's fired line for kill 1 names no kill point (after:nope)"),
    # A line whose fields are not of their types is not an arming line at all.
    (lambda line, ev, acc: line.update(point=7, fromSeq=0), "arms.jsonl: 1 line is not an arming event"),
    (lambda line, ev, acc: line.update(point=SEED_TEXT, fromSeq=0),
     f"kill 1's kill.json names no point, arms.jsonl {SEED_TEXT}"),
    (lambda line, ev, acc: (line.update(point=SEED_TEXT, fromSeq="0"), setattr(_kill(ev), "point", SEED_TEXT)),
     "arms.jsonl: 1 line is not an arming event"),
    (lambda line, ev, acc: (line.update(point=SEED_TEXT, fromSeq=7), setattr(_kill(ev), "point", SEED_TEXT)),
     f"kill 1 fired at {SEED_TEXT}, but the ledger has no such record after seq 7"),
    (lambda line, ev, acc: (line.update(point="after:charge", fromSeq=0), setattr(_kill(ev), "point", "after:charge")),
     "kill 1 fired at seq 7, not at after:charge's moment (seq 6, d1's charge)"),
    (lambda line, ev, acc: setattr(_kill(ev), "trigger", "manual"), "kill 1 was not triggered automatically"),
])
def test_kill_triggered_clauses(change: Any, detail: str) -> None:
    files = one_kill()
    ev, acc = evidence(files)
    change(fired_line(files), ev, acc)
    c = kill_triggered(armed(files), [ev], acc, LedgerFacts(), True)
    assert c is not None and c.ok is False and detail in c.detail.split("; "), c.detail


@pytest.mark.parametrize("change, detail", [
    (lambda a: setattr(a, "problem", "arms.jsonl: a FIFO"), "arms.jsonl: a FIFO"),
    (lambda a: setattr(a, "bad_lines", 2), "arms.jsonl: 2 lines are not arming events"),
    (lambda a: a.missed.append(("d1", "late", None)), "missed d1, not tested: late"),
    (lambda a: a.missed.append(("d1", "late", "after:charge#2")), "missed after:charge#2 d1, not tested: late"),
    (lambda a: a.missed.append((None, "late\x1b[2J", 5)), "missed an integer, not tested: late?[2J"),
])
def test_kill_triggered_arming_faults(change: Any, detail: str) -> None:
    files = one_kill()
    ev, acc = evidence(files)
    a = armed(files)
    change(a)
    c = kill_triggered(a, [ev], acc, LedgerFacts(), True)
    # A missed point is not tested (? in v4); every other fault here fails it.
    want = None if detail.startswith("missed") else False
    assert c is not None and c.ok is want and detail in c.detail.split("; "), c.detail


def test_kill_triggered_auto_kill_without_arms() -> None:
    files = one_kill()
    ev, acc = evidence(files)
    c = kill_triggered(None, [ev], acc, LedgerFacts(), True)
    assert c is not None and c.detail == ("arms.jsonl: missing, but a kill was triggered automatically; "
                                          "kill 1 was triggered automatically, but arms.jsonl has no fired line for it")


def test_kill_triggered_armed_but_never_fired() -> None:
    files = one_kill()
    ev, acc = evidence(files)
    a = Arming(pending=[None, "after:halt"])
    ev.kill.trigger = "manual"  # type: ignore[union-attr]
    c = kill_triggered(a, [ev], acc, LedgerFacts(), True)
    assert c is not None and c.detail == (f"armed at {SEED_TEXT}, after:halt, but the study finished without a kill "
                                          "there (none fired, none was missed)")
    c = kill_triggered(a, [], Accounts(), LedgerFacts(), False)
    assert c == Check("killTriggered", None, f"armed at {SEED_TEXT}, after:halt; its moment has not come yet")


def test_arms_lines_queue_points_in_order() -> None:
    a = Arming()
    at = "2026-12-01T00:00:00.000Z"
    for line in [{"event": "arm", "point": "after:charge"}, {"event": "arm", "point": "container:die"},
                 {"event": "fired", "kill": 1, "run": "d1", "point": "after:charge", "fromSeq": 0}]:
        take_arm(a, parse_arm(dict(line, at=at)))  # type: ignore[arg-type]
    assert a.pending == ["container:die"] and [f.written for f in a.fired] == ["after:charge"]
    take_arm(a, parse_arm({"event": "missed", "at": at, "run": None, "detail": "x", "point": "container:die"}))  # type: ignore[arg-type]
    assert a.pending == [] and a.missed == [(None, "x", "container:die")]
    for event in ("arm", "arm", "disarm"):
        take_arm(a, parse_arm({"event": event, "at": at}))  # type: ignore[arg-type]
    assert a.pending == [] and a.is_quiet() is False and a.faults == []  # it fired and missed, each in its turn


def test_arms_lines_tell_one_story_in_order() -> None:
    """§7 and §6.9: points fire in the order armed, each kill once, the file in time order; a line whose fields
    are not of their types is not an arming line."""
    def lines(*arms: dict[str, Any]) -> Arming:
        a = Arming()
        for n, line in enumerate(arms, 1):
            take_arm(a, parse_arm(line), f"arms.jsonl line {n}")  # type: ignore[arg-type]
        return a

    t0, t1 = "2026-12-01T00:00:01.000Z", "2026-12-01T00:00:02.000Z"
    arm_a, arm_b = {"event": "arm", "at": t0, "point": "after:charge"}, {"event": "arm", "at": t0, "point": "after:halt"}
    fire_b = {"event": "fired", "at": t1, "point": "after:halt", "run": None, "kill": 1, "fromSeq": 0}
    assert lines(arm_a, arm_b, fire_b).faults == [
        "arms.jsonl line 3: fired at after:halt, but the point armed first is after:charge"]
    fire_a = dict(fire_b, point="after:charge")
    assert lines(arm_a, arm_b, fire_a, dict(fire_a, point="after:halt")).faults == [
        "arms.jsonl line 4: kill 1 fired twice"]
    assert lines(arm_a, dict(fire_a, at="2026-12-01T00:00:00.500Z")).faults == [
        "arms.jsonl line 2 is earlier than the line before it: arms.jsonl is appended in time order"]
    assert lines(arm_a, fire_a).faults == []
    for broken in (dict(fire_a, at="yesterday"), dict(fire_a, point=7), dict(fire_a, run=1), dict(fire_a, fromSeq=-1),
                   dict(fire_a, fromSeq="0"), {k: v for k, v in fire_a.items() if k != "at"}):
        assert isinstance(parse_arm(broken), str), broken


def _die_of(run: str, name: str | None = None, action: str = "die") -> dict[str, Any]:
    return {"Type": "container", "Action": action, "Actor": {"ID": "c0ffee", "Attributes": {"name": name or container(run)}},
            "time": 1_796_000_000, "timeNano": 1_796_000_000_000_000_000}


def _at_container(ev: KillEvidence, line: dict[str, Any], point: str, event: dict[str, Any] | None, run: str = "d1") -> None:
    line.update(point=point, fromSeq=0, run=run)
    k = _kill(ev)
    k.point, k.trigger_event, k.trigger_seq = point, event, None


def test_kill_triggered_at_a_container_point() -> None:
    files = one_kill()
    ev, acc = evidence(files)
    _at_container(ev, fired_line(files), "container:die/diagnosis", _die_of("d1"))
    c = kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY)
    assert c == Check("killTriggered", True, "kill 1 fired at container:die/diagnosis (d1's die); its folder is complete")


def test_a_container_point_s_kill_without_its_seq_places_nothing() -> None:
    """kill.json without beforeKillSeq (killEvidence says so): a container point's moment is not held to a seq it
    does not give, and nothing raises; the same kill with its seq is judged as usual."""
    files = one_kill()
    ev, acc = evidence(files)
    _at_container(ev, fired_line(files), "container:die/diagnosis", _die_of("d1"))
    _kill(ev).before_kill_seq = None
    c = kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY)
    assert c is not None and c.ok is True, c


@pytest.mark.parametrize("point, event, run, detail", [
    ("container:die/diagnosis", None, "d1", "kill 1 fired at container:die/diagnosis, but its kill.json has no triggerEvent"),
    ("container:die", _die_of("d1", action="start"), "d1", "kill 1 fired at container:die, but its triggerEvent is a start"),
    ("container:die", _die_of("d1", name="other-d1"), "d1", "kill 1's triggerEvent is not of one of the study's run containers"),
    ("container:die", _die_of("d1"), "d2", "arms.jsonl says kill 1 fired at d2, not at d1"),
    ("container:die/ablation", _die_of("d1"), "d1", "kill 1 fired at container:die/ablation, but d1 is not a ablation run"),
    # d1's runStarted (seq 7) was in the ledger at the kill: a kill at its start came too late.
    ("container:start", _die_of("d1", action="start"), "d1",
     "kill 1 came after d1's runStarted (seq 7): container:start had passed, a missed point"),
])
def test_kill_triggered_container_point_clauses(point: str, event: dict[str, Any] | None, run: str, detail: str) -> None:
    files = one_kill()
    ev, acc = evidence(files)
    _at_container(ev, fired_line(files), point, event, run)
    c = kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY)
    assert c is not None and c.ok is False and detail in c.detail.split("; "), c.detail


def test_kill_triggered_container_point_as_runtimes_write_the_event() -> None:
    """A container point's triggerEvent as runtimes write it: the action in Action or in an older API's status, the
    name with or without Docker's leading slash; a study's container prefix may begin with any letter a name may."""
    files = one_kill()
    ev, acc = evidence(files)
    line = fired_line(files)
    sound = Check("killTriggered", True, "kill 1 fired at container:die/diagnosis (d1's die); its folder is complete")
    older = dict(_die_of("d1"), status="die", id="c0ffee")  # an older API's status and id beside Action, agreeing
    for event in (_die_of("d1", name="/" + NAME), older):
        _at_container(ev, line, "container:die/diagnosis", event)
        assert kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY) == sound, event
    # Without Type and Action it is no container event a runtime streams: held to the recordings' shape (§6.4).
    _at_container(ev, line, "container:die/diagnosis", {"status": "die", "id": "c0ffee", "Actor": {"ID": "c0ffee"}})
    c = kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY)
    assert c is not None and c.ok is False and c.detail.startswith("kill 1's triggerEvent is not a container event")
    _at_container(ev, line, "container:die/diagnosis", _die_of("d1", name="Xinforsi-s-d1"))
    assert kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, StudyFacts("s", "Xinforsi")) == sound


def test_kill_triggered_container_point_not_of_a_run_container_of_the_study() -> None:
    """A triggerEvent without a name where runtimes put it, another study's container, the bare prefix, or a study
    whose prefix is not known: not one of the study's run containers, said as such and never a crash."""
    files = one_kill()
    ev, acc = evidence(files)
    line = fired_line(files)
    said = Check("killTriggered", False, "kill 1's triggerEvent is not of one of the study's run containers")
    for event in (
        {"Type": "container", "Action": "die"},  # no Actor
        {"Type": "container", "Action": "die", "Actor": "c0ffee"},
        {"Type": "container", "Action": "die", "Actor": {"ID": "c0ffee"}},  # no Attributes
        {"Type": "container", "Action": "die", "Actor": {"ID": "c0ffee", "Attributes": {"image": "x"}}},  # no name
        {"Type": "container", "Action": "die", "Actor": {"ID": "c0ffee", "Attributes": {"name": 5}}},
    ):
        # No container event of the shape every recorded event has: said before whose container it is.
        _at_container(ev, line, "container:die/diagnosis", event)
        c = kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY)
        assert c is not None and c.ok is False and c.detail.startswith("kill 1's triggerEvent is not a container event"), event
    for event in (
        _die_of("d1", name=container("d1", study="t")),  # another study's d1
        _die_of("d1", name=STUDY.stem),  # the prefix, and no run after it
    ):
        _at_container(ev, line, "container:die/diagnosis", event)
        assert kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY) == said, event
    _at_container(ev, line, "container:die/diagnosis", _die_of("d1"))
    assert kill_triggered(armed(files), [ev], acc, LedgerFacts(), True) == said  # no study: no container is its


def test_kill_triggered_container_point_of_a_run_unknown_or_past_its_die() -> None:
    """A container point's run the ledger never planned is no run container of the study (never a crash); a die
    point whose run's runResult the ledger had at the kill was missed, and its runResult is named."""
    files = one_kill()
    ev, acc = evidence(files)
    line = fired_line(files)
    _at_container(ev, line, "container:die/diagnosis", _die_of("d9"), run="d9")
    assert kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY) == Check(
        "killTriggered", False, "kill 1's triggerEvent is of d9's container, a run the ledger holds no record of")
    # A point of no purpose asks no plan, only a run the ledger knows: d1 without its runPlanned (rule 2 broken,
    # contractKept's) is still d1.
    _at_container(ev, line, "container:die", _die_of("d1"))
    _kill(ev).before_kill_seq = acc.runs["d1"].starts[0].seq
    acc.runs["d1"].plans.clear()
    said = kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY)
    assert said is not None and said.ok is True, said
    _at_container(ev, line, "container:die/diagnosis", _die_of("d1"))
    assert kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY) == Check(
        "killTriggered", False, "kill 1's triggerEvent is of d1's container, a run the ledger never planned")
    ev, acc = evidence(files)
    _at_container(ev, line, "container:die/diagnosis", _die_of("d1"))
    _kill(ev).before_kill_seq = acc.runs["d1"].results[0].seq  # seq 8, d1's runResult
    assert kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY) == Check(
        "killTriggered", False,
        "kill 1 came after d1's runResult (seq 8): container:die/diagnosis had passed, a missed point")


def test_kill_triggered_at_a_record_that_names_no_run() -> None:
    """An after: point at a record of no run (the second decision, seq 4): its moment said without a run; a fired
    line naming a run there is told, and a record's run that is no id is no run."""
    files = one_kill()
    ev, acc = evidence(files)
    line = fired_line(files)
    line.update(point="after:decision#2", fromSeq=0, run=None)
    k = _kill(ev)
    k.point, k.trigger_seq, k.before_kill_seq = "after:decision#2", 4, 4
    sound = Check("killTriggered", True, "kill 1 fired at after:decision#2 (seq 4, decision); its folder is complete")
    assert kill_triggered(armed(files), [ev], acc, LedgerFacts(), True) == sound
    line.update(run="d1")
    assert kill_triggered(armed(files), [ev], acc, LedgerFacts(), True) == Check(
        "killTriggered", False, "arms.jsonl says kill 1 fired at d1, not at a run with an invalid id")
    line.update(run=None)
    decision = files["study/ledger.jsonl"][3]
    assert (decision["seq"], decision["kind"]) == (4, "decision")
    decision["content"]["run"] = 5
    assert kill_triggered(armed(files), [ev], acc, LedgerFacts(), True) == sound


# --- the accounts ---------------------------------------------------------------------------------

from studymon.engine.contract.accounts import KEPT, RunAccount, round_key  # noqa: E402


def test_trimmed_accounts_keep_what_the_checks_read() -> None:
    recs = records(derive(build()))
    full, trim = Accounts().extend(recs), Accounts(trim=True).extend(recs)
    assert full.runs.keys() == trim.runs.keys()
    for run, a in full.runs.items():
        b = trim.runs[run]
        for kind in ("plans", "charges", "starts", "results"):
            xs, ys = getattr(a, kind), getattr(b, kind)
            assert [(x.seq, x.kind, x.line) for x in xs] == [(y.seq, y.kind, y.line) for y in ys]
            for x, y in zip(xs, ys):
                assert {k: v for k, v in x.content.items() if k != "outputs"} == y.content
                assert y.offset == 0 and y.at == (x.at if kind in ("plans", "starts") else "")
        assert a.as_json() == b.as_json()
        assert (b.purpose, b.cell, b.round, b.container) == (a.purpose, a.cell, a.round, a.container)
    assert full.as_json() == trim.as_json()
    assert trim.runs["d1"].plans[0].content["experiments"] == ["e1a", "e1b"]
    assert all(r.content["run"] is trim.runs[r.content["run"]].run for a in trim.runs.values() for r in a.starts)


def test_trim_keeps_odd_values_as_they_are() -> None:
    recs = [rec(1, "runPlanned", run="x", purpose=3, object=["c"], round="1", experiments="e"),
            rec(2, "charge", run="x", amount="1"), rec(3, "runStarted", run="x"), rec(4, "runResult", run="x", outputs=[])]
    a = Accounts(trim=True).extend(recs).runs["x"]
    assert a.plans[0].content == {"run": "x", "purpose": 3, "object": ["c"], "round": "1", "experiments": "e"}
    assert a.charges[0].content == {"run": "x", "amount": "1", "balance": None}
    assert a.starts[0].content == {"run": "x", "container": None}
    assert a.results[0].content == {"run": "x", "exitCode": None}


def test_accounts_as_they_go() -> None:
    acc = Accounts()
    assert (acc.round, acc.stage, acc.first_diagnosis, acc.last_seq, acc.count) == (None, None, None, 0, 0)
    acc.add(rec(1, "studyOpen", budget=30, config={}))
    assert (acc.budget, acc.balance) == (30, 30)
    acc.add(rec(2, "stageOpen", stage="diagnosis", round=1))
    acc.add(rec(3, "runPlanned", run="a1", purpose="ablation"))
    acc.add(rec(4, "runPlanned", run="d1", purpose="diagnosis"))
    acc.add(rec(5, "runPlanned", run="d2", purpose="diagnosis"))
    assert (acc.round, acc.stage, acc.first_diagnosis) == (1, "diagnosis", "d1")
    acc.add(rec(6, "charge", run="d1", amount=10, balance=20))
    acc.add(rec(7, "runStarted", run="d1", container="c"))
    assert [a.run for a in acc.in_flight()] == ["d1"] and acc.runs["d1"].in_flight
    acc.add(rec(8, "runResult", run="d1", exitCode=0, outputs={}))
    assert acc.in_flight() == [] and [a.run for a in acc.in_flight_at(7)] == ["d1"] and acc.in_flight_at(8) == []
    assert acc.in_flight_at(6) == []
    acc.add(rec(9, "stageOpen", stage="proposal", round=1))
    acc.add(rec(10, "stageOpen", stage="proposal", round=1))
    assert acc.proposal_opened == {1: 10}
    acc.add(rec(11, "charge", run=7, amount=5, balance=15))
    assert (acc.charged, acc.balance, acc.bad_charges) == (15, 15, 0)
    acc.add(rec(12, "charge", run="d2", amount=True, balance=15))
    assert (acc.charged, acc.bad_charges, acc.bad_charge.seq) == (15, 1, 12)  # type: ignore[union-attr]
    acc.add(rec(13, "charge", run="d2", amount=1, balance="x"))
    assert (acc.charged, acc.balance, acc.bad_charges, acc.bad_charge.seq) == (16, 15, 2, 12)  # type: ignore[union-attr]
    assert (acc.last_seq, acc.count) == (13, 13)
    assert 7 not in acc.runs and "7" not in acc.runs


def test_rounds_selections_and_settlements() -> None:
    acc = Accounts().extend([
        rec(1, "decision", name="selectDiagnosis", round=1, output={"chosen": ["a"]}),
        rec(2, "decision", name="selectDiagnosis", round=1, output={"chosen": ["b"]}),
        rec(3, "decision", name="proposeExperiments", round=2, output={"chosen": ["c"]}),
        rec(4, "diagnosisSettlement", round=1, run="d1", dropped=[], judged={"experiments": [{"id": "a"}]}),
        rec(5, "diagnosisSettlement", round=1, run="d9", dropped=[], judged={"experiments": []}),
        rec(6, "diagnosisSettlement", round=True, run="d1", dropped=3, judged={}),
        rec(7, "decision", name="selectDiagnosis", round=2, output=[]),
    ])
    sel = acc.selections[1]
    # A round that chose twice chose both: its settlement accounts for every id either decision chose.
    assert (sel.seq, sel.count, sel.problem) == (1, 2, None) and sel.chosen == frozenset({"a", "b"})
    assert 2 in acc.selections and acc.selections[2].chosen is None and acc.selections[2].problem
    s = acc.settlements[1]
    assert (s.seq, s.line, s.run, s.count, s.accounted, s.problem) == (4, 4, "d1", 2, frozenset({"a"}), None)
    odd = acc.settlements[round_key(True)]
    assert odd.accounted is None and odd.problem == "dropped is an integer, not a list"


def test_round_keys_keep_types_apart() -> None:
    assert round_key(1) == 1 and round_key("1") == "1" and round_key(None) is None
    assert round_key(True) != round_key(1) and round_key(1.0) != round_key(1)
    assert round_key([1]) == "[1]" and round_key({"a": 1}) == "{'a': 1}"


def test_halts_and_exports() -> None:
    acc = Accounts().extend([rec(1, "export", path="x"), rec(2, "halt", reason="balance exhausted")])
    assert acc.halted_at_export() and acc.halts == 1 and acc.export_count == 1
    acc.add(rec(3, "export", path="y"))
    assert not acc.halted_at_export() and [e.seq for e in acc.exports] == [1, 3]
    acc.add(rec(4, "halt", reason="balance exhausted"))
    assert acc.halted_at_export() and acc.last_halt.seq == 4  # type: ignore[union-attr]
    acc.add(rec(5, "halt", reason="other"))
    assert not acc.halted_at_export()
    assert not Accounts().halted_at_export()


def test_bounded_lists() -> None:
    acc = Accounts()
    for i in range(1, KEPT + 10):
        acc.add(rec(i, "export", path="x"))
        acc.add(rec(i, "serviceError", stage="p", round=1, message="m"))
    assert len(acc.exports) == KEPT and acc.export_count == KEPT + 9
    assert len(acc.service_errors) == KEPT and acc.service_error_count == KEPT + 9
    doc = acc.as_json()
    assert doc["exportCount"] == KEPT + 9 and len(doc["exports"]) == KEPT and doc["serviceErrorCount"] == KEPT + 9


def test_run_account_properties() -> None:
    a = RunAccount("r")
    assert (a.plan, a.purpose, a.cell, a.round, a.container, a.in_flight) == (None, None, None, None, None, False)
    a.starts.append(rec(3, "runStarted", run="r", container="c1"))
    a.starts.append(rec(5, "runStarted", run="r", container="c2"))
    assert a.container == "c2" and a.in_flight and a.in_flight_at(3) and not a.in_flight_at(2)
    a.results.append(rec(6, "runResult", run="r", exitCode=1))
    assert not a.in_flight and a.in_flight_at(5) and not a.in_flight_at(6)
    assert a.as_json()["results"] == [{"seq": 6, "exitCode": 1}] and a.as_json()["starts"] == [3, 5]


# --- boundaries the mutation run found untested ---------------------------------------------------------

import sys  # noqa: E402


def test_planned_after_is_strictly_after() -> None:
    acc = Accounts().extend([rec(4, "runPlanned", run="a"), rec(5, "runPlanned", run="b"),
                             rec(6, "runStarted", run="a", container="inforsi-s-a")])
    # (on the books: its runStarted came; off them so far: no runStarted yet)
    none = frozenset()  # type: frozenset[str]
    assert planned_after(acc, STUDY.stem, 6) == (none, frozenset({"inforsi-s-b"})), \
        "started before the kill: never again"
    assert planned_after(acc, STUDY.stem, 5) == (frozenset({"inforsi-s-a"}), frozenset({"inforsi-s-b"})), \
        "not started yet: §1 starts it"
    assert planned_after(acc, STUDY.stem, 3) == (frozenset({"inforsi-s-a"}), frozenset({"inforsi-s-b"}))
    assert planned_after(acc, STUDY.stem, None) == (none, none)
    assert planned_after(acc, StudyFacts(None, "inforsi", "x").stem, 0) == (none, none)
    acc.add(rec(7, "runPlanned", run="c"))
    acc.add(rec(8, "runStarted", run="c", container="inforsi-s-c"))
    assert planned_after(acc, STUDY.stem, 6) == (frozenset({"inforsi-s-c"}), frozenset({"inforsi-s-b"}))


def test_ns_text() -> None:
    from studymon.engine.judge.text import ns_text
    assert ns_text(1_500_000_000) == "1970-01-01T00:00:01.500Z"


def test_repeats_are_judged_on_exact_json() -> None:
    ev, acc = evidence(one_kill())
    plan = acc.runs["d1"].plan
    seq = ev.kill.before_kill_seq + 1  # type: ignore[union-attr,operator]
    for change, repeats in [
        ({"experiments": ["e9", "e8"]}, False),  # as many, none in common
        ({"experiments": ["e1a", "e9"]}, True),  # one in common is work done again (§6.4)
        ({"experiments": ["E1A"]}, False),
        ({"experiments": [["e1a"]]}, False),
        ({"round": 1.0}, False),
        ({"object": True}, False),
        ({"purpose": "diagnosis "}, True),  # another purpose, before round 1 was settled: a twin whatever it is
        ({"experiments": ["e1b", "e1a"]}, True),
    ]:
        acc2 = copy.deepcopy(acc)
        acc2.add(Record(seq, "t", "runPlanned", dict(plan.content, run="d1b", **change), 99, 0))  # type: ignore[union-attr]
        assert (co(ev, acc2).ok is False) is repeats, change
    # Once the round is settled only the same purpose repeats it, compared exactly.
    after = acc.settlements[1].seq + 1
    for purpose, repeats in (("diagnosis", True), ("diagnosis ", False), ("Diagnosis", False)):
        acc2 = copy.deepcopy(acc)
        acc2.add(Record(after, "t", "runPlanned", dict(plan.content, run="d1b", purpose=purpose), 99, 0))  # type: ignore[union-attr]
        assert (co(ev, acc2).ok is False) is repeats, purpose
    # Objects and experiments that are JSON objects compare by content, whatever the key order.
    for field_, a, b in [("object", {"x": 1, "y": 2}, {"y": 2, "x": 1}), ("experiments", [{"p": 1, "q": 2}], [{"q": 2, "p": 1}]),
                         ("experiments", "e", "e")]:
        acc2 = copy.deepcopy(acc)
        acc2.runs["d1"].plans[0] = Record(5, "t", "runPlanned", dict(plan.content, **{field_: a}), 5, 0)  # type: ignore[union-attr]
        acc2.add(Record(seq, "t", "runPlanned", dict(plan.content, run="d1b", **{field_: b}), 99, 0))  # type: ignore[union-attr]
        assert co(ev, acc2).ok is False, field_
    acc2 = copy.deepcopy(acc)
    acc2.runs["d1"].plans[0] = Record(5, "t", "runPlanned", dict(plan.content, experiments="e"), 5, 0)  # type: ignore[union-attr]
    acc2.add(Record(seq, "t", "runPlanned", dict(plan.content, run="d1b", experiments="f"), 99, 0))  # type: ignore[union-attr]
    assert co(ev, acc2).ok is True


def test_a_target_without_a_plan_or_start() -> None:
    ev, acc = evidence(one_kill())
    acc.runs["d1"].plans.clear()
    assert kill_evidence(ev, acc, LedgerFacts()).detail == \
        "kill.json's target d1 disagrees with the ledger on cell, round, planSeq"
    assert rsf(ev, acc).ok is True  # no plan: not a diagnosis run as far as the ledger says
    never_started = copy.deepcopy(acc)
    never_started.runs["d1"].starts.clear()
    del acc.runs["d1"]
    assert kill_evidence(ev, acc, LedgerFacts()).detail == "kill.json lists 1 run the kill did not leave unfinished at seq 7 (d1)"
    assert co(ev, acc).detail == "0 charges, 0 runStarted; run d1 has no runPlanned"
    # Never started, its result (seq 8) after the kill (seq 7): not in flight, and the detail says no more than is true.
    assert kill_evidence(ev, never_started, LedgerFacts()).detail == "kill.json lists 1 run the kill did not leave unfinished at seq 7 (d1)"


def test_a_settlement_at_seq_0_still_needs_a_proposal_after_it() -> None:
    ev, acc = evidence(one_kill())
    del acc.proposal_opened[1]
    acc.settlements[1].seq = 0
    acc.runs["d1"].results[0] = Record(0, "", "runResult", {"run": "d1", "exitCode": 0}, 0, 0)
    assert "no stageOpen proposal 1 after the settlement (seq 0)" in rsf(ev, acc).detail


def test_study_checks_with_an_unusable_ledger() -> None:
    checks = study_checks([], [], Accounts(), 0, None, True, ledger=LedgerFacts(problem="gone"))
    assert [c.ok for c in checks] == [False, False, False, False, True, False]
    gone = "the ledger cannot be judged: gone"
    assert checks[2].detail == checks[3].detail.split("; ")[0] == checks[5].detail == gone


def test_study_checks_pass_the_signal_on() -> None:
    checks = study_checks([], [], Accounts(), None, "SIGKILL", True)
    assert checks[4] == Check(
        "exitedCleanly", None, "the controller was killed by SIGKILL; `studymon run --resume` continues it")
    # Not finished: the end not reached yet is unknown (§6.6); finished (exit 0), it is missing.
    assert checks[2] == Check("haltedAtExport", None, "no halt in the ledger")
    assert study_checks([], [], Accounts(), 0, None, True)[2] == Check("haltedAtExport", False, "no halt in the ledger")
    assert study_checks([], [], Accounts(), 3, None, False)[4].ok is None
    assert study_checks([], [], Accounts(), 3, None, True)[4].detail == (
        "the controller ended with exit 3; `studymon run --resume` continues it")
    assert study_checks([], [], Accounts(), 0, None, True)[4] == Check("exitedCleanly", True, "exit 0 (pid 1)")
    # What is not a code or a signal's name is not passed on (nor shown): the status is lost.
    for code, signal in ((False, None), (None, "x\x1b")):
        assert study_checks([], [], Accounts(), code, signal, True)[4] == Check(
            "exitedCleanly", None, "the controller ended, its exit status lost; `studymon run --resume` continues it")


def test_untrimmed_accounts_keep_the_records_themselves() -> None:
    recs = records(derive(build()))
    acc = Accounts().extend(recs)
    by_seq = {r.seq: r for r in recs}
    for a in acc.runs.values():
        for r in a.plans + a.charges + a.starts + a.results:
            assert r is by_seq[r.seq]
    assert "outputs" in acc.runs["d1"].results[0].content
    trim = Accounts(trim=True).extend(recs)
    assert trim.runs["d1"].plans[0].content["purpose"] is sys.intern("diagnosis")
    assert trim.runs["d1"].plans[0].content["object"] is sys.intern("c1")
    assert trim.runs["d1"].plans[0].content["experiments"][0] is sys.intern("e1a")


def test_counts_and_keys_exactly() -> None:
    acc = Accounts().extend([rec(1, "halt", reason="x"), rec(2, "halt", reason="y"), rec(3, "halt", reason="z"),
                             rec(4, "serviceError", stage="p", round=1, message="m")])
    assert acc.halts == 3
    doc = acc.as_json()
    assert doc["halts"] == 3 and doc["serviceErrors"] == [rec(4, "serviceError", stage="p", round=1, message="m").as_json()]
    assert set(doc) == {"budget", "balance", "charged", "records", "lastSeq", "halt", "halts", "exports", "exportCount",
                        "serviceErrors", "serviceErrorCount", "runs"}
    assert round_key(True) == ("bool", True) and round_key(1.5) == ("float", 1.5)


def test_many_forbidden_events_are_counted() -> None:
    ev, acc = evidence(one_kill())
    watch = ev.tally.targets[0]  # type: ignore[union-attr]
    watch.forbidden = [("start", 1_000_000_000), ("stop", 2_000_000_000), ("kill", 3_000_000_000)]
    watch.forbidden_count = 5
    assert scnr(ev, acc).detail == (
        f"start of {NAME} at 1970-01-01T00:00:01.000Z in its window; stop of {NAME} at 1970-01-01T00:00:02.000Z in its "
        f"window; kill of {NAME} at 1970-01-01T00:00:03.000Z in its window (and 2 more such events)")
    watch.forbidden_count = 4
    assert scnr(ev, acc).detail.endswith("(and 1 more such event)")
    watch.forbidden_count = 3
    assert scnr(ev, acc).detail.endswith("in its window")


# --- more boundaries from the mutation run -----------------------------------------------------------


def test_tally_details() -> None:
    t = tally()
    t.add({"gap": {}}, "a")
    t.add({"gap": {"from": "x"}}, "b")
    assert t.gaps == 0  # a gap line without both bounds is not a gap, nor an event (§6.4)
    assert t.malformed == ["a: a gap line that is not a gap (from and to, two times in order)",
                           "b: a gap line that is not a gap (from and to, two times in order)"]
    # An event the runtime did not write whole is a line that is not an event (§6.9): an old-style one ("status",
    # no Action), one without its Actor's Id or name, one whose older fields say another Action or Id.
    t.add({"status": "stop", "timeNano": 1100, "id": "ID1"}, "c")
    t.add({"Type": "container", "Action": "kill:9:x", "timeNano": 1200, "Actor": {"Attributes": {"name": NAME}}}, "d")
    t.add({"Type": "container", "Action": "start", "timeNano": 1300, "Actor": {"ID": 5}, "id": "ID1"}, "e")
    t.add({"Type": "container", "Action": "die", "timeNano": 1400, "Actor": {"ID": "ID1", "Attributes": {"name": 5, "exitCode": 3}}}, "f")
    t.add({"Type": "container", "Action": "die", "status": "start", "timeNano": 1400, "Actor": {"ID": "ID1", "Attributes": {"name": NAME}}}, "f2")
    t.add({"Type": "container", "Action": "die", "id": "ID2", "timeNano": 1400, "Actor": {"ID": "ID1", "Attributes": {"name": NAME}}}, "f3")
    assert t.malformed[2:] == ["c: an event that is not a container's (its Type is not container)"]
    assert t.malformed_count == 8  # the first three are kept, every one counted
    assert t.targets[0].forbidden_count == 0 and not t.targets[0].dies
    # A suffixed verb is its verb; the same event whole is taken.
    t.add({"Type": "container", "Action": "kill:9:x", "timeNano": 1200, "Actor": {"ID": "ID1", "Attributes": {"name": NAME}}}, "d'")
    t.add({"Type": "container", "Action": "die", "status": "die", "id": "ID1", "timeNano": 1400, "Actor": {"ID": "ID1", "Attributes": {"name": NAME, "exitCode": 3}}}, "f'")
    assert [a for a, _ in t.targets[0].forbidden] == ["kill"]
    assert t.targets[0].forbidden_count == 1 and list(t.targets[0].dies.values()) == [("ID1", 3, 1400)]
    t.add({"Type": "container", "Action": "die", "timeNano": 1500, "Actor": 7}, "g")
    t.add({"Type": "container", "Action": "die", "timeNano": 1500, "Actor": {"Attributes": []}}, "h")
    assert t.malformed_count == 10
    t.add(ev_at("stop", 1600), "i")
    t.add(ev_at("stop", 1700), "j")
    t.add(ev_at("kill", 1800), "k")
    assert t.targets[0].forbidden_count == 4 and len(t.targets[0].forbidden) == 3
    t.add(ev_at("stop", 1600), "i")
    assert t.targets[0].forbidden_count == 4 and len(t.targets[0].forbidden) == 3


def test_an_event_reaches_every_target_it_concerns() -> None:
    a = TargetTally("a", "inforsi-s-a", frozenset({"SAME"}), 2000)
    b = TargetTally("b", "inforsi-s-b", frozenset({"SAME"}), 5000)
    t = EventTally(1000, 6000, "inforsi-s-", frozenset(), [a, b], "s")
    t.add(ev_at("stop", 1500, name="x", cid="SAME"), "1")
    assert a.forbidden_count == 1 and b.forbidden_count == 1
    t.add(ev_at("stop", 3000, name="x", cid="SAME"), "2")  # after a's result, before b's: the window is both stories
    assert a.forbidden_count == 2 and b.forbidden_count == 2
    t.add(ev_at("rename", 3100, name="x", cid="OTHER", oldName="/inforsi-s-b"), "3")
    assert a.forbidden_count == 2 and b.forbidden_count == 3 and t.target("b") is b and t.target("c") is None
    t.add(ev_at("stop", 6001, name="x", cid="SAME"), "4")  # after the window
    assert a.forbidden_count == 2 and b.forbidden_count == 3


def test_distinct_events_are_remembered_up_to_a_bound() -> None:
    from studymon.engine.judge.verdict import SEEN_KEPT
    t = tally(until=None)
    for i in range(SEEN_KEPT + 10):
        t.add(ev_at("stop", 2000 + i), "x")
    assert t.targets[0].forbidden_count == SEEN_KEPT + 10
    t.add(ev_at("stop", 2000), "x")  # remembered: counted once
    assert t.targets[0].forbidden_count == SEEN_KEPT + 10
    t.add(ev_at("stop", 2000 + SEEN_KEPT), "x")  # past the bound: counted again (still a failure)
    assert t.targets[0].forbidden_count == SEEN_KEPT + 11
    f = EventTally(1000, None, "inforsi-s-", frozenset(), [])
    for i in range(4):
        f.add(ev_at("create", 1000 + i, name="inforsi-s-zz", cid="Z"), "x")
    assert f.foreign_count == 4 and len(f.foreign) == 3


def test_same_container_more_clauses() -> None:
    ev, acc = evidence(one_kill())
    c = scnr(ev, acc)
    assert c.detail == (f"{NAME}: one Id ({container_id(NAME)[:12]}) and StartedAt in 3 snapshots; "
                        "in its window only 1 die and what may come with it, exit as runResult; "
                        "no other container of the study made in the window")
    ev.snapshots[BEFORE] = {}
    ev.snapshots[AFTER][NAME]["State"].update(Running=True, Status="paused")
    assert scnr(ev, acc).detail == f"{BEFORE} has no {NAME}; {AFTER}: {NAME} is neither running nor exited"
    ev, acc = evidence(one_kill())
    ev.snapshots[AFTER][NAME]["State"]["StartedAt"] = ""
    assert scnr(ev, acc).detail.startswith(f"{AFTER}: {NAME} has no StartedAt")
    ev, acc = evidence(one_kill())
    ev.snapshots[BEFORE_RESUME][NAME]["State"]["StartedAt"] = "x"
    assert scnr(ev, acc).detail == f"the StartedAt of {NAME} changes across {BEFORE}, {AFTER}, {BEFORE_RESUME}"
    ev, acc = evidence(one_kill())
    ev.window.results["d1"]["resultSeenEpoch"] = ev.window.since_epoch  # type: ignore[union-attr]
    assert f"{WINDOW}: d1's result was seen outside the window" not in scnr(ev, acc).detail
    ev, acc = evidence(one_kill())
    ev.tally.foreign = [("inforsi-s-zz", "create", 0)]  # type: ignore[union-attr]
    ev.tally.foreign_count = 2  # type: ignore[union-attr]
    assert scnr(ev, acc).detail.endswith("(and 1 more container of the study made in the window)")
    ev, acc = evidence(one_kill())
    acc.runs["d1"].results.append(acc.runs["d1"].results[0])
    assert scnr(ev, acc).detail == "2 runResults to compare the exit code with"
    ev, acc = evidence(one_kill())
    acc.runs["d1"].results[0] = Record(8, "t", "runResult", {"run": "d1", "exitCode": [0]}, 8, 0)
    assert scnr(ev, acc).detail == "runResult's exitCode is a list, not an integer"


@pytest.mark.parametrize("code, read", [(137, 137), ("137", 137), ("-1", -1), (True, None), ("1.0", None),
                                        ("9" * 11, None), (None, None)])
def test_exit_code_attribute(code: Any, read: int | None) -> None:
    e = parse_event(
        {"Type": "container", "Action": "die", "timeNano": 10**18, "Actor": {"ID": "i", "Attributes": {"name": "n", "exitCode": code}}}
    )
    assert isinstance(e, ContainerEvent) and e.exit_code == read


def test_parse_kill_boundaries() -> None:
    obj = one_kill()["kills/1/kill.json"]
    assert parse_kill(dict(obj, pid=1), STUDY.stem).pid == 1
    assert parse_kill(dict(obj, beforeKillSeq=0), STUDY.stem).before_kill_seq == 0
    assert parse_kill(dict(obj, triggerSeq="7"), STUDY.stem).problems == [
        "kill.json triggerSeq is a string, not a seq"]
    # The window opens at sinceEpoch; since, its text, must say the same time.
    k = parse_kill(dict(obj, sinceEpoch=1.5, since="1970-01-01T00:00:01.500Z"), STUDY.stem)
    assert k.since_ns == 1_500_000_000 and k.problems == []
    k = parse_kill(dict(obj, sinceEpoch=1.5, since="1970-01-01T00:00:09.000Z"), STUDY.stem)
    assert k.since_ns is None and k.problems == ["kill.json: since and sinceEpoch are not the same time"]
    without = {key: v for key, v in obj.items() if key != "sinceEpoch"} | {"since": "1970-01-01T00:00:02.250Z"}
    k = parse_kill(without, STUDY.stem)
    assert k.since_ns is None
    assert k.problems == ["kill.json has no since and sinceEpoch, two times, to open the window at"]
    targets = [1, {"run": "D1"}, {"run": "d1", **WRITTEN}, {"run": "d1", **WRITTEN}, {"run": "d2", **WRITTEN}]
    k = parse_kill(dict(obj, targets=targets), STUDY.stem)
    assert [t.run for t in k.targets] == ["d1", "d2"]
    assert k.problems == ["kill.json target 1 is an integer, not an object", "kill.json target 2 has no valid run id",
                          "kill.json lists run d1 twice"]


def test_parse_window_until_type() -> None:
    w = one_kill()["kills/1/container-events-window.json"]
    assert parse_window(dict(w, untilEpoch="x"))[1] == f"{WINDOW}: untilEpoch is a string, not a time"


def test_incomplete_lists_every_missing_file() -> None:
    ev = KillEvidence(1, missing={LIVE, AT_KILL}, finished=True)
    assert ev.incomplete() == [f"missing: {AT_KILL}, {LIVE}"] and ev.to_come() == []
    # While the study can be resumed, the resume still writes ledger-at-kill.json (and the snapshot after the kill).
    ev = KillEvidence(1, missing={LIVE, AT_KILL, AFTER})
    assert ev.incomplete() == [f"missing: {LIVE}"] and ev.to_come() == [AT_KILL, AFTER]


def test_kill_evidence_pass_details() -> None:
    ev, acc = evidence(derive(build()), 2)
    assert kill_evidence(ev, acc, LedgerFacts()).detail == (
        "complete; targets (a2, d3) are the runs in flight at seq 34; ledger-at-kill.json is the ledger to that seq")
    files = derive(build(rounds=1, ablation=(False,), kills=(("d1", "manual"),)))
    ev, acc = evidence(files)
    ev.kill.targets = []  # type: ignore[union-attr]
    ev.kill.before_kill_seq = acc.settlements[1].seq  # type: ignore[union-attr]
    ev.window.results.clear()  # type: ignore[union-attr]
    retarget(ev, acc)
    assert kill_evidence(ev, acc, LedgerFacts()).detail.startswith("complete; targets (no run) are the runs in flight")
    # At its result, before its round's settlement: d1 is what the kill left unfinished, with its class.
    ev.kill.before_kill_seq = acc.runs["d1"].results[0].seq  # type: ignore[union-attr]
    d1 = acc.runs["d1"]
    ev.kill.targets = [KillTarget("d1", d1.cell, 1, 5, 7, container("d1"), "unsettled")]  # type: ignore[union-attr]
    # Its story ends with its round's settlement: the window's resultSeq names it.
    ev.window.results["d1"] = {"resultSeq": acc.settlements[1].seq, "resultSeenEpoch": None}  # type: ignore[union-attr]
    retarget(ev, acc)
    assert kill_evidence(ev, acc, LedgerFacts()).detail == (
        "complete; targets (d1 with its result but not settled) are what the kill left unfinished at seq 8; "
        "ledger-at-kill.json is the ledger to that seq")


def test_result_settled_pass_detail_of_a_non_diagnosis_target() -> None:
    files = derive(build(rounds=1, ablation=(True,), overlap=(False,), kills=(("a1", "manual"),)))
    ev, acc = evidence(files)
    c = result_settled_and_finished(ev, target(ev), acc.runs["a1"], acc, LedgerFacts(), "kill 1 · a1")
    assert c.detail == "one result at seq 16, after the kill and inside the window; halted at export"


def test_charged_equals_starts_more() -> None:
    base = [rec(1, "studyOpen", budget=1, config={}), rec(2, "runPlanned", run="D1"), rec(3, "charge", run="D1",
                                                                                           amount=1, balance=0)]
    assert charged_equals_starts(Accounts().extend(base)).detail == "run ?: 1 charge, 0 starts"
    near = [rec(1, "studyOpen", budget=1, config={}), rec(3, "charge", amount=1, balance=1.5e-9)]
    assert charged_equals_starts(Accounts().extend(near)).ok is False  # 1.5e-9 off on a budget of 1
    near = [rec(1, "studyOpen", budget=1, config={}), rec(3, "charge", amount=1, balance=0.5e-9)]
    assert charged_equals_starts(Accounts().extend(near)).ok is True
    big = [rec(1, "studyOpen", budget=1e9, config={}), rec(3, "charge", amount=1e9 - 0.5, balance=0)]
    assert charged_equals_starts(Accounts().extend(big)).ok is True
    big = [rec(1, "studyOpen", budget=1e9, config={}), rec(3, "charge", amount=1e9 - 2, balance=0)]
    assert charged_equals_starts(Accounts().extend(big)).ok is False


def test_charged_equals_starts_waits_for_a_charged_run_while_the_study_can_go_on() -> None:
    """Crashed between a run's charge and its start: the resume starts it, so that is unknown until the study
    has finished; charged twice, or still not started at the end, fails."""
    base = [rec(1, "studyOpen", budget=20, config={}), rec(2, "runPlanned", run="d1"),
            rec(3, "charge", run="d1", amount=10, balance=10)]
    assert charged_equals_starts(Accounts().extend(base), finished=False) == Check(
        "chargedEqualsStarts", None, "charged, not started yet: d1")
    assert charged_equals_starts(Accounts().extend(base)).detail == "run d1: 1 charge, 0 starts"
    twice = [*base, rec(4, "charge", run="d1", amount=10, balance=0)]
    assert charged_equals_starts(Accounts().extend(twice), finished=False).detail == "run d1: 2 charges, 0 starts"
    many = [rec(1, "studyOpen", budget=100, config={})]
    for n in range(5):
        many += [rec(2 + 2 * n, "runPlanned", run=f"r{n}"), rec(3 + 2 * n, "charge", run=f"r{n}", amount=1,
                                                                balance=99 - n)]
    assert charged_equals_starts(Accounts().extend(many), finished=False).detail == \
        "charged, not started yet: r0, r1, r2 and 2 more"


def test_halted_at_export_defaults_to_a_finished_study_that_halts() -> None:
    """Called without the template's expectEnd or the launches, the study is taken as finished, expected to halt."""
    assert halted_at_export(Accounts()) == Check("haltedAtExport", False, "no halt in the ledger")
    exported = Accounts().extend([rec(1, "export", path="x")])
    assert halted_at_export(exported) == Check("haltedAtExport", False, "no halt in the ledger")


def test_kill_triggered_more() -> None:
    files = one_kill()
    ev, acc = evidence(files)
    a = armed(files)
    a.missed.append(("D1", "late", None))
    assert kill_triggered(a, [ev], acc, LedgerFacts(), True).detail == "missed, not tested: late"  # type: ignore[union-attr]
    a = armed(files)
    a.fired.insert(0, Fired("x", None))
    assert kill_triggered(a, [ev], acc, LedgerFacts(), True).detail == \
        "arms.jsonl has a fired line whose kill is a string, not a number"  # type: ignore[union-attr]
    a = armed(files)
    a.fired.insert(0, Fired(5, None))
    assert kill_triggered(a, [ev], acc, LedgerFacts(), True).detail == \
        "arms.jsonl says kill 5 fired, but kills/5/ is missing"  # type: ignore[union-attr]
    a = armed(files)
    ev2 = KillEvidence(2, missing={KILL_JSON})
    a.fired.insert(0, Fired(2, None))
    assert kill_triggered(a, [ev2, ev], acc, LedgerFacts(), True).detail == \
        "kills/2/ is incomplete: missing: kill.json"  # type: ignore[union-attr]
    # Planned, never started: the kill cannot have fired at its start.
    without = copy.deepcopy(files)
    without["study/ledger.jsonl"] = [r for r in without["study/ledger.jsonl"] if r["kind"] != "runStarted"]
    a = armed(without)
    assert kill_triggered(a, [ev], acc, LedgerFacts(), True).detail == \
        f"kill 1 fired at {SEED_TEXT}, but the ledger has no such record"  # type: ignore[union-attr]
    # Two automatic kills at the first diagnosis start: the second fired line counts its own moment, as written.
    ev, acc = evidence(files)
    ev2 = copy.deepcopy(ev)
    ev2.number = 2
    files["arms.jsonl"] += [{"event": "arm", "at": fired_line(files)["at"]}, dict(fired_line(files), kill=2)]
    assert kill_triggered(armed(files), [ev, ev2], acc, LedgerFacts(), True).detail == (
        f"kill 1 fired at {SEED_TEXT} (seq 7, d1's runStarted); kill 2 fired at {SEED_TEXT} (seq 7, d1's runStarted); "
        "their folders are complete")  # type: ignore[union-attr]


def test_last_boundaries() -> None:
    c = ledger_well_formed(LedgerFacts(3, 3, faults=["a", "b", "c"], fault_count=4))
    assert c.detail == "a; b; c (and 1 more change seen while watched)"
    exact = [rec(1, "studyOpen", budget=1e9, config={}), rec(3, "charge", amount=1e9 - 1, balance=0)]
    assert charged_equals_starts(Accounts().extend(exact)).ok is True  # off by exactly the tolerance
    ev, acc = evidence(one_kill())
    plan = acc.runs["d1"].plan
    acc.runs["d1"].plans[0] = Record(5, "t", "runPlanned", dict(plan.content, experiments={"a": 1, "b": 2}), 5, 0)  # type: ignore[union-attr]
    acc.add(Record(ev.kill.before_kill_seq + 1, "t", "runPlanned",  # type: ignore[union-attr,operator]
                   dict(plan.content, run="d1b", experiments={"b": 2, "a": 1}), 99, 0))  # type: ignore[union-attr]
    assert co(ev, acc).ok is False


# --- the check table, its summary line, its SVG, and the exit status: what every front end shows ---

import io  # noqa: E402

from rich.console import Console  # noqa: E402

from studymon.engine.contract.exits import EXIT_FAIL, EXIT_OK, EXIT_UNKNOWN, exit_status
from studymon.engine.judge.table import MARKS, check_table, summary_line, table_svg  # noqa: E402


def _rows() -> list[tuple[str, list[Check]]]:
    return [
        ("alpha", [Check("ledgerWellFormed", True, "9 records, seq 1..9"),
                   Check("chargedOnce", False, "run d1 charged twice", "kill 1 · d1")]),
        ("beta", [Check("exitedCleanly", None, "no end yet")]),
    ]


def _text(renderable: object, width: int = 200) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, force_terminal=False)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_the_table_has_a_row_per_check_the_study_named_once_and_the_marks() -> None:
    table = check_table(_rows(), title="the title")
    assert table.title == "the title" and table.title_justify == "left" and table.expand is False
    assert [c.header for c in table.columns] == ["study", "scope", "check", "", "detail"]
    assert table.row_count == 3
    study = [c.plain for c in table.columns[0].cells]
    assert study == ["alpha", "", "beta"]
    assert [c.plain for c in table.columns[1].cells] == ["study", "kill 1 · d1", "study"]
    assert [c.plain for c in table.columns[2].cells] == ["ledgerWellFormed", "chargedOnce", "exitedCleanly"]
    marks = list(table.columns[3].cells)
    assert [m.plain for m in marks] == ["✓", "✗", "?"]
    assert [str(m.style) for m in marks] == ["bold green", "bold red", "bold yellow"]
    details = list(table.columns[4].cells)
    assert [d.plain for d in details] == ["9 records, seq 1..9", "run d1 charged twice", "no end yet"]
    assert [str(d.style) for d in details] == ["dim", "red", "yellow"]
    assert [str(c.style) for c in table.columns[0].cells] == ["bold cyan"] * 3
    assert table.columns[4].overflow == "fold" and all(c.no_wrap for c in table.columns[:4])
    assert table.columns[3].justify == "center"
    # One section a study: the rows of a study end with a line.
    assert [r.end_section for r in table.rows] == [False, True, True]
    out = _text(table)
    assert out.splitlines()[0].startswith("the title")
    assert check_table([]).title == "studymon checks"


def test_cells_are_text_never_markup_and_control_characters_are_shown() -> None:
    hostile = "[link=https://x]d1[/link]\x1b[2J"
    table = check_table([(hostile, [Check("chargedOnce", False, f"run {hostile}", f"kill 1 · {hostile}")])])
    out = _text(table, width=300)
    assert "[link=https://x]d1[/link]?[2J" in out and "\x1b" not in out
    assert free_text("plain text · ✓") == "plain text · ✓"
    assert free_text("a\x1bb\nc\td\x00") == "a?b?c?d?"
    assert free_text("· ✓\x1b") == "· ✓?"  # only what cannot be shown is replaced, not what is not ASCII


def test_many_studies_are_a_line_each_failures_first_then_the_table_of_those_that_did_not_pass() -> None:
    from studymon.engine.judge.table import MANY_STUDIES, checks_report, study_lines

    ok = [Check("ledgerWellFormed", True, "fine"), Check("exitedCleanly", True, "exit 0")]
    rows = [
        ("gamma", ok),
        ("alpha", [*ok, Check("chargedOnce", None, "window open", "kill 1 · d1"),
                   Check("chargedOnce", False, "run d1 charged twice", "kill 1 · d2")]),
        ("beta", [Check("exitedCleanly", None, "no end yet"), Check("x", None, "later")]),
        ("delta", ok),
    ]
    table = study_lines(rows)
    assert table.title == "studymon studies" and table.title_justify == "left" and table.box is None
    assert table.expand is False and table.pad_edge is False
    assert [c.header for c in table.columns] == ["", "study", "checks", "first to look at"]
    assert [str(c.style) for c in table.columns[1:2]] == ["bold cyan"]
    assert table.columns[0].justify == "center" and table.columns[3].overflow == "ellipsis"
    assert all(c.no_wrap for c in table.columns)
    # Failures first, then unknown, then the ones that pass (in the command's order within each).
    assert [c.plain for c in table.columns[1].cells] == ["alpha", "beta", "gamma", "delta"]
    unknown_first = study_lines([rows[2], rows[0], rows[1]])
    assert [c.plain for c in unknown_first.columns[1].cells] == ["alpha", "beta", "gamma"], "a failure before an unknown"
    marks = list(table.columns[0].cells)
    assert [m.plain for m in marks] == ["✗", "?", "✓", "✓"]
    assert [str(m.style) for m in marks] == ["bold red", "bold yellow", "bold green", "bold green"]
    assert list(table.columns[2].cells) == ["2 ✓  1 ✗  1 ?", "0 ✓  0 ✗  2 ?", "2 ✓  0 ✗  0 ?", "2 ✓  0 ✗  0 ?"]
    # The first failing check, else the first unknown one; nothing for a study that passes.
    said = [c.plain for c in table.columns[3].cells]
    assert said == ["kill 1 · d2 · chargedOnce: run d1 charged twice", "study · exitedCleanly: no end yet", "", ""]
    # The whole report: below MANY_STUDIES, the table of every check and the summary line.
    assert MANY_STUDIES == 4
    few = checks_report(rows[:3])
    assert len(few) == 2 and few[0].row_count == 8 and few[1].plain == "✗ 1 of 8 checks failed"  # type: ignore[union-attr]
    # From MANY_STUDIES on: a line per study, the count of those that did not pass, their checks only, the summary.
    many = checks_report(rows)
    assert len(many) == 4
    assert many[0].row_count == 4  # type: ignore[union-attr]
    assert many[1].plain == "2 of 4 studies did not pass; their checks:" and str(many[1].style) == "bold"  # type: ignore[union-attr]
    assert [c.plain for c in many[2].columns[0].cells] == ["alpha", "", "", "", "beta", ""]  # type: ignore[union-attr]
    assert many[3].plain == "✗ 1 of 10 checks failed"  # type: ignore[union-attr]
    passing = checks_report([(f"s{n}", ok) for n in range(MANY_STUDIES)])
    assert len(passing) == 2 and passing[1].plain == "✓ all 8 checks hold"  # type: ignore[union-attr]
    out = _text(study_lines([("[b]x[/b]\x1b", [Check("c", False, "\x1b[2J")])]))
    assert "[b]x[/b]?" in out and "\x1b[2J" not in out, "text, never markup; control characters shown"


def test_the_summary_line_counts_the_worst() -> None:
    rows = _rows()
    line = summary_line(rows)
    assert line.plain == "✗ 1 of 3 checks failed" and str(line.style) == "bold red"
    line = summary_line([("beta", rows[1][1]), ("alpha", rows[0][1][:1])])
    assert line.plain == "? 1 of 2 checks unknown" and str(line.style) == "bold yellow"
    line = summary_line([("alpha", rows[0][1][:1]), ("gamma", [Check("x", True, "y")])])
    assert line.plain == "✓ all 2 checks hold" and str(line.style) == "bold green"
    assert summary_line([("a", [Check("x", False, ""), Check("y", False, ""), Check("z", None, "")])]).plain == (
        "✗ 2 of 3 checks failed")
    assert summary_line([]).plain == "✓ all 0 checks hold"


def test_the_svg_holds_the_table_and_its_summary() -> None:
    svg = table_svg("alpha", _rows()[0][1])
    # rich writes every space as &#160; in its SVG
    text = svg.replace("&#160;", " ")
    assert svg.startswith("<svg") and ">studymon — alpha</text>" in text
    assert 'viewBox="0 0 17' in svg  # 140 columns wide
    for part in ("studymon checks — alpha", "ledgerWellFormed", "chargedOnce", "run d1 charged twice",
                 "✗ 1 of 2 checks failed"):
        assert part in text, part
    assert "#" in svg and "fill" in svg  # coloured: a truecolor console


def test_the_marks() -> None:
    assert MARKS == {True: ("✓", "bold green"), False: ("✗", "bold red"), None: ("?", "bold yellow")}


def test_the_exit_status_says_the_worst_verdict() -> None:
    assert (EXIT_OK, EXIT_FAIL, EXIT_UNKNOWN) == (0, 1, 3)
    assert exit_status([]) == 0
    assert exit_status([True, True]) == 0
    assert exit_status([True, None]) == 3
    assert exit_status([None, False, True]) == 1
    assert exit_status(iter([False])) == 1
    assert exit_status([None]) == 3


# --- what mutation testing showed untold ----------------------------------------------------------


def test_an_action_is_quoted_only_when_it_reads_as_one() -> None:
    from studymon.engine.judge.text import action_text

    for action in ("exec_start", "archive-path", "die", "health_status", "a" * 32):
        assert action_text(action) == action
    for bad in ("Exec", "exec start", "a" * 33, "", "1die", "die\x1b[2J", 5, None, ["die"]):
        assert action_text(bad) == "an unknown action", bad


def test_trimmed_accounts_say_what_came_after_the_end() -> None:
    """The judge's accounts keep the last work record trimmed: its kind, seq and line still say what came after."""
    recs = [rec(1, "studyOpen", budget=10, config={}), rec(2, "halt", reason="balance exhausted"),
            rec(3, "runPlanned", run="late", purpose="diagnosis", object="c", round=9, experiments=["e"])]
    for trim in (False, True):
        acc = Accounts(trim=trim)
        for r in recs:
            acc.add(r)
        assert acc.last_work is not None and (acc.last_work.seq, acc.last_work.kind, acc.last_work.line) == (3, "runPlanned", 3)
        got = halted_at_export(acc, LedgerFacts())
        assert got == Check("haltedAtExport", False, "runPlanned (seq 3) comes after the halt the study ends at (seq 2)")


def test_a_twin_sharing_several_ids_is_counted_once() -> None:
    """FOUND twins each sharing both of a target's ids: exactly FOUND repeats, none more (each run counted once)."""
    from studymon.engine.judge.target import PlanIndex, PlansAfter

    target = [rec(1, "runPlanned", run="t", purpose="p", object="c", round=1, experiments=["a", "b"]),
              rec(2, "charge", run="t", amount=1, balance=9), rec(3, "runStarted", run="t", container="x-s-t")]
    twins = [rec(4 + i, "runPlanned", run=f"w{i}", purpose="p", object="c", round=1, experiments=["b", "a"])
             for i in range(PlansAfter.FOUND)]
    acc = Accounts().extend(target + twins)
    plans = PlanIndex(acc).after(3)
    found, more = plans.repeats(acc.runs["t"].plan, acc.runs["t"])  # type: ignore[arg-type]
    assert [a.run for a in found] == [f"w{i}" for i in range(PlansAfter.FOUND)] and more is False
    # One more twin, of one of the ids: the search stops, saying there are more.
    acc = Accounts().extend(target + twins + [rec(99, "runPlanned", run="z", purpose="p", object="c", round=1,
                                                      experiments=["a"])])
    found, more = PlanIndex(acc).after(3).repeats(acc.runs["t"].plan, acc.runs["t"])  # type: ignore[arg-type]
    assert len(found) == PlansAfter.FOUND and more is True
    # An id no twin has, beside one a twin has; and another work altogether.
    acc = Accounts().extend(target + [rec(4, "runPlanned", run="w", purpose="p", object="c", round=1, experiments=["b"]),
                                      rec(5, "runPlanned", run="o", purpose="p", object="other", round=1,
                                          experiments=["a"])])
    found, more = PlanIndex(acc).after(3).repeats(acc.runs["t"].plan, acc.runs["t"])  # type: ignore[arg-type]
    assert [a.run for a in found] == ["w"] and more is False
    lone = rec(6, "runPlanned", run="q", purpose="none", object="c", round=1, experiments=["a"])
    assert PlanIndex(acc).after(3).repeats(lone, None) == ([], False)


def test_the_table_as_drawn() -> None:
    """The whole drawing, character by character: no padding at its edges, a line between studies only."""
    table = check_table([("alpha", [Check("ledgerWellFormed", True, "9 records"), Check("chargedOnce", False, "run d1",
                                                                                       "kill 1 · d1")]),
                         ("beta", [Check("x", None, "y")])], title="t")
    assert _text(table, width=100).splitlines() == [
        "t                                                       ",
        "┏━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━┳━━━┳━━━━━━━━━━┓",
        "┃study ┃ scope       ┃ check            ┃   ┃ detail   ┃",
        "┡━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━╇━━━╇━━━━━━━━━━┩",
        "│alpha │ study       │ ledgerWellFormed │ ✓ │ 9 records│",
        "│      │ kill 1 · d1 │ chargedOnce      │ ✗ │ run d1   │",
        "├──────┼─────────────┼──────────────────┼───┼──────────┤",
        "│beta  │ study       │ x                │ ? │ y        │",
        "└──────┴─────────────┴──────────────────┴───┴──────────┘",
    ]


def test_the_svg_is_coloured_140_columns_and_printed_nowhere(capsys: pytest.CaptureFixture[str]) -> None:
    svg = table_svg("alpha", [Check("ledgerWellFormed", True, "9 records, seq 1..9"),
                              Check("chargedOnce", False, "run d1 charged twice", "kill 1 · d1")])
    assert 'viewBox="0 0 1726 245.2"' in svg  # 140 columns, a title, the table and the summary
    assert "fill: #cc555a" in svg  # the ✗ in red: a truecolor terminal was recorded
    assert capsys.readouterr() == ("", "")


def test_gaps_and_unbooked_containers_are_counted_each() -> None:
    """Every gap that overlaps the window counts, and every unbooked container, past the few kept to be named."""
    from studymon.engine.judge.verdict import SHOWN

    t = tally(unstarted=frozenset({f"inforsi-s-u{i}" for i in range(5)}))
    t.add(GAP_IN, "g1")
    t.add({"gap": {"from": "1970-01-01T00:00:00.000001600Z", "to": "1970-01-01T00:00:00.000001700Z"}}, "g2")
    assert t.gaps == 2
    for i in range(5):
        t.add(ev_at("create", 1700 + i, name=f"inforsi-s-u{i}", cid=f"U{i}"), "x")
    assert t.unbooked_count == 5 and t.unbooked == [(f"inforsi-s-u{i}", "create", 1700 + i) for i in range(SHOWN)]


def test_the_story_s_boundaries_and_its_texts() -> None:
    """Each bound of the target's story at its edge, and each reason's words: a die exactly a second from the
    exit the snapshots show, or a second after the result was seen, still agrees; a destroy in the die's very
    nanosecond is after it; the two recordings' disagreement is counted; a container of the study made off the
    books is named (? while the study can go on, when its runStarted may still come)."""
    ev, acc = evidence(one_kill())
    ns = die_ns(ev)
    exit_snapshots(ev, ns - 1_000_000_000)
    assert scnr(ev, acc).ok is True
    exit_snapshots(ev, ns + 1_000_000_000)
    assert scnr(ev, acc).ok is True
    ev, acc = evidence(one_kill())
    watch = ev.tally.targets[0]  # type: ignore[union-attr]
    ns = die_ns(ev)
    watch.first_destroy = ns
    assert scnr(ev, acc).ok is True
    watch.first_destroy = None
    watch.until_ns = ns - 1_000_000_000
    assert scnr(ev, acc).ok is True
    watch.until_ns = ns - 1_000_000_001
    assert scnr(ev, acc).detail == f"the die of {NAME} comes after its result was seen: the study did not wait for its run"
    watch.until_ns = None
    watch.disagree = 1
    assert scnr(ev, acc).detail == f"the recordings disagree: 1 event of {NAME} differ between the two files"
    watch.disagree = 2
    assert scnr(ev, acc).detail == f"the recordings disagree: 2 events of {NAME} differ between the two files"
    watch.disagree = 0
    tally = ev.tally
    assert tally is not None
    tally.stray_disagree = 3  # events of no target: the recordings disagree all the same
    assert scnr(ev, acc).detail == "the recordings disagree: 3 events of other containers differ between the two files"
    # Where the two copies were read: the proof names both lines.
    live, readback = Where("kills/1/container-events-live.jsonl", 4), Where("kills/1/container-events.jsonl", 9)
    tally.stray_disagree_at = (live, readback)
    check = scnr(ev, acc)
    assert check.ok is False and any(
        {(w.file, w.line) for w, _ in p.let} >= {(live.file, 4), (readback.file, 9)} for p in check.proofs
    ), check.proofs
    tally.stray_disagree, tally.stray_disagree_at = 0, None
    tally.unbooked = [("inforsi-s-d5", "create", 1500), ("inforsi-s-d6", "start", 1600)]
    tally.unbooked_count = 5
    made = ("create of inforsi-s-d5 at 1970-01-01T00:00:00.000Z in the window, and no runStarted names it; "
            "start of inforsi-s-d6 at 1970-01-01T00:00:00.000Z in the window, and no runStarted names it "
            "(and 3 more containers made off the books)")
    assert scnr(ev, acc).detail == made
    tally.unbooked_count = 3
    assert scnr(ev, acc).detail.endswith("(and 1 more container made off the books)")
    ev.finished = False
    c = scnr(ev, acc)
    assert c.ok is None and c.detail == (
        "create of inforsi-s-d5 at 1970-01-01T00:00:00.000Z in the window, and no runStarted names it yet")


def test_a_die_and_no_result_while_the_study_can_go_on_is_not_yet_a_missing_result() -> None:
    ev, acc = evidence(one_kill())
    acc.runs["d1"].results.clear()
    ev.finished = False
    ev.window = None
    ev.missing.add(WINDOW)
    c = scnr(ev, acc)
    assert c.ok is None and "runResult" not in c.detail, c.detail
    ev.finished = True
    assert "0 runResults to compare the exit code with" in scnr(ev, acc).detail.split("; ")


# --- what run 3 of mutation testing found unpinned (docs/mutation.md) ---------------------------------------------


def test_a_run_label_of_the_wrong_type_is_no_run() -> None:
    """An event labelled with this study and a run that is not a string (a list, unhashable) is ignored, as any
    label of the wrong type, and never breaks the tally."""
    t = tally()
    t.add(ev_at("start", 1500, name="elsewhere", cid="Z", **{"studymon.study": "s", "studymon.run": ["d1"]}), "x")  # type: ignore[arg-type]
    assert t.targets[0].forbidden == [] and t.malformed == []
    t.add(ev_at("create", 1600, name="inforsi-s-zz", cid="Y", **{"studymon.study": 5}), "x")  # type: ignore[arg-type]
    # Both are the study's containers made in the window: one by its label, one by its name (a study label that
    # is no string is no label: not another study's).
    assert t.foreign == [("elsewhere", "start", 1500), ("inforsi-s-zz", "create", 1600)]


def test_an_unfinished_study_s_kill_folder_missing_what_its_resume_writes_is_unknown() -> None:
    ev, acc = evidence(one_kill())
    ev.finished = False
    ev.window = None
    for file in (WINDOW, READBACK, BEFORE_RESUME, AFTER, AT_KILL):
        ev.missing.add(file)
    assert kill_evidence(ev, acc, LedgerFacts()).ok is False, "a controller started since: the resume has passed"
    _not_resumed_yet(ev)
    c = kill_evidence(ev, acc, LedgerFacts())
    assert c.ok is None, c
    assert c.detail.startswith(f"missing: {AT_KILL}, {AFTER}; `studymon run --resume` writes it before it resumes"), c


def _not_resumed_yet(ev: KillEvidence) -> None:
    """The kill's story as it stands before a controller started after it."""
    assert ev.story is not None
    ev.story.states = [(at, state) for at, state in ev.story.states if state != "resumed"]
    ev.story._times = [at for at, _ in ev.story.states]


def test_counts_past_the_shown_reasons_are_said_in_their_words() -> None:
    """Four unsettled results, four lost runs, four runs with two results each: three named, the fourth counted."""
    recs = [rec(1, "studyOpen", budget=100, config={})]
    seq = 2
    for i in range(4):
        run = f"d{i}"
        recs += [rec(seq, "runPlanned", run=run, purpose="diagnosis", object="c", round=i + 1, experiments=["e"]),
                 rec(seq + 1, "charge", run=run, amount=1, balance=99 - i), rec(seq + 2, "runStarted", run=run),
                 rec(seq + 3, "runResult", run=run, exitCode=0, outputs={"e": 0.5})]
        seq += 4
    acc = Accounts().extend(recs)
    for finished, ok in ((True, False), (False, None)):
        c = results_accounted(acc, LedgerFacts(), finished)
        assert c.ok is ok and c.detail.endswith("(and 1 more run)"), c
    lost = Accounts().extend([r for r in recs if r.kind != "runResult"])
    assert results_accounted(lost, LedgerFacts(), False).detail.endswith("(and 1 more run)")
    twice = [r for r in recs if r.get("purpose") != "diagnosis"]
    twice = [rec(r.seq, r.kind, **dict(r.content, purpose="ablation")) if r.kind == "runPlanned" else r for r in recs]
    twice += [rec(100 + i, "runResult", run=f"d{i}", exitCode=0, outputs={}) for i in range(4)]
    c = results_accounted(Accounts().extend(twice), LedgerFacts(), True)
    assert c.ok is False and c.detail.endswith("(and 1 more run)"), c


def test_launches_past_the_shown_are_counted_in_their_words(tmp_path: Path) -> None:
    lines = [{"event": "start", "pid": 7 + i, "at": f"2026-11-30T00:00:0{i}.000Z", "resume": i > 0} for i in range(6)]
    with tempfile.TemporaryDirectory() as out:
        write({"launches.jsonl": lines}, Path(out))
        c = exited_cleanly(replay_controllers(Path(out), []))
    assert c.detail.split("; ")[2].endswith("(and 2 more such starts)"), c.detail
    bad = ["x", "y", "z", "w", "v"]
    with tempfile.TemporaryDirectory() as out:
        write({"launches.jsonl": [*bad, lines[0]]}, Path(out))
        c = exited_cleanly(replay_controllers(Path(out), []))
    assert c.detail.split("; ")[2].endswith("(and 2 more lines that are not launches)"), c.detail


def test_amounts_past_a_double_fail_the_books() -> None:
    acc = Accounts().extend([rec(1, "studyOpen", budget=float("inf"), config={})])
    assert charged_equals_starts(acc) == Check(
        "chargedEqualsStarts", False, "the amounts do not add up to what the budget lost, beyond a double's range")


# --- what run 3's reading found unpinned in the kill's checks ------------------------------------------

from studymon.engine.judge.kill import left_at  # noqa: E402


def test_a_run_planned_at_the_kill_after_its_start_is_not_waiting() -> None:
    """planned_after's bound on the plan is strict: a run started before the kill and (against the rules) planned
    at its seq is not waiting to start, so its container in the window is not allowed."""
    acc = Accounts().extend([rec(5, "runStarted", run="e", container="inforsi-s-e"), rec(7, "runPlanned", run="e")])
    none = frozenset()  # type: frozenset[str]
    assert planned_after(acc, STUDY.stem, 7) == (none, none)
    assert planned_after(acc, STUDY.stem, 6) == (frozenset({"inforsi-s-e"}), none)


def test_a_run_started_without_a_plan_is_in_flight_with_no_plan_seq() -> None:
    """A run whose runStarted has no runPlanned before it is still what the kill left in flight (planSeq None),
    and the judged targets take it without a crash when kill.json does not list it."""
    acc = Accounts().extend([rec(5, "runStarted", run="d9", container=container("d9"))])
    left = left_at(acc, 6, {}, STUDY.stem)
    assert list(left) == ["d9"]
    assert (left["d9"].plan_seq, left["d9"].start_seq, left["d9"].kind) == (None, 5, "inFlight")
    ev, _ = evidence(one_kill())
    ev.kill.before_kill_seq = 6  # type: ignore[union-attr]
    assert [(t.run, t.plan_seq) for t in judged_targets(ev, acc, LedgerFacts())] == [("d9", None)]


def test_records_written_while_no_controller_ran_are_counted_past_the_kept() -> None:
    """killEvidence names the first such record and counts the others, those kept and those only counted."""
    ev, acc = evidence(one_kill())
    why = "seq 20 (a record) was seen while no controller started after the kill ran"
    ev.unmanned = [(None, "note", why, False, None), (None, "note", "seq 21 ...", False, None)]
    ev.unmanned_count = 2
    assert kill_evidence(ev, acc, LedgerFacts()).detail == f"{why} (and 1 more such records)"
    ev.unmanned = [(None, "note", why, False, None)] + [
        (None, "note", f"seq {21 + i} ...", False, None) for i in range(63)
    ]
    ev.unmanned_count = 70
    assert kill_evidence(ev, acc, LedgerFacts()).detail == f"{why} (and 69 more such records)"
    ev.unmanned, ev.unmanned_count = [(None, "note", why, False, None)], 1
    assert kill_evidence(ev, acc, LedgerFacts()).detail == why


def test_listed_runs_that_had_their_results_before_the_kill_are_each_named_once() -> None:
    """Three listed runs the kill did not leave unfinished: all three named (no "and 0 more"), each with its first
    result before the kill, once, however many results it had."""
    ev, acc = evidence(one_kill())
    for r in [rec(13, "runResult", run="d1", exitCode=0, outputs={}),
              rec(14, "runPlanned", run="x", purpose="ablation", object="c1", round=1, experiments=[]),
              rec(15, "runStarted", run="x", container=container("x")),
              rec(16, "runResult", run="x", exitCode=0, outputs={}),
              rec(17, "runPlanned", run="y", purpose="ablation", object="c1", round=1, experiments=[]),
              rec(18, "runStarted", run="y", container=container("y")),
              rec(19, "runResult", run="y", exitCode=0, outputs={})]:
        acc.add(r)
    d1 = ev.kill.targets[0]  # type: ignore[union-attr]
    ev.kill.targets = [d1, replace(d1, run="x"), replace(d1, run="y")]  # type: ignore[union-attr]
    ev.kill.before_kill_seq = 19  # type: ignore[union-attr]
    ev.window.results.clear()  # type: ignore[union-attr]
    retarget(ev, acc)
    assert ev.targets == []
    assert kill_evidence(ev, acc, LedgerFacts()).detail == (
        "kill.json lists 3 runs the kill did not leave unfinished at seq 19 (d1, x, y); "
        "d1 had its result at seq 8, before the kill; x had its result at seq 16, before the kill; "
        "y had its result at seq 19, before the kill")


def test_a_fired_kill_whose_resume_has_not_written_its_files_yet_is_unknown() -> None:
    """An unfinished study's fired kill folder without what its resume writes: killTriggered says ? and names them."""
    files = resumable(one_kill())
    ev, acc = evidence(files)
    ev.missing |= {AT_KILL, AFTER}
    assert not ev.finished
    _not_resumed_yet(ev)
    c = kill_triggered(armed(files), [ev], acc, LedgerFacts(), False)
    assert c is not None and c.ok is None, c
    assert f"kills/1/ is not complete yet: the resume writes {AT_KILL}, {AFTER}" in c.detail.split("; "), c.detail


def test_a_report_s_checks_read_back_as_written_and_entries_that_are_not_checks_left_out() -> None:
    from studymon.engine.judge.report import report_checks

    checks = [Check("chargedOnce", False, "run d1 charged twice", "kill 1 · d1"), Check("x", None, "open"),
              Check("y", True, "fine", "study")]
    body = {"checks": [c.as_json() for c in checks]}
    assert report_checks(body) == checks
    hostile = {"checks": [*body["checks"], {"name": "z", "ok": "yes"}, "a check", {"ok": True}]}
    assert report_checks(hostile) == [*checks, Check("", True, "", "")], "an ok that is no verdict, or no object"
    assert report_checks({"checks": "all"}) == [] and report_checks([]) == [] and report_checks({}) == []


def test_two_copies_of_an_event_of_no_target_that_differ_are_the_recordings_disagreeing() -> None:
    """§6.9: the live recording and the read-back agree on every event of the window both hold, whoever's it is.
    One of another container whose name differs between its two copies is counted for every target; one alike
    is not; one of a target is its own."""
    from studymon.engine.judge.events import EventTally

    t = tally()
    assert isinstance(t, EventTally)
    t.add(ev_at("die", 1500, name="inforsi-s-a9", cid="O1", exitCode="0"), "live")
    t.add(ev_at("die", 1500, name="inforsi-s-a9", cid="O1", exitCode="0"), "back", live=False)
    assert t.stray_disagree == 0
    t.add(ev_at("start", 1600, name="someone-else", cid="O2"), "live")
    t.add(ev_at("start", 1600, name="", cid="O2"), "back", live=False)  # no name: not an event at all
    t.add(ev_at("start", 1600, name="someone-other", cid="O2"), "back", live=False)
    assert t.stray_disagree == 1 and t.targets[0].disagree == 0
    t.add(ev_at("die", 1700, exitCode="0"), "live")
    t.add(ev_at("die", 1700, exitCode="1"), "back", live=False)
    assert t.targets[0].disagree == 1 and t.stray_disagree == 1


def test_books_near_the_largest_double_are_held_in_halves() -> None:
    """Each number is finite (rule 9) but their sum is not a double: the books are held all the same, in halves,
    and books that do not balance there fail (not a vacuous inf = inf)."""
    def books(last_balance: float) -> Check:
        return charged_equals_starts(Accounts().extend([
            rec(1, "studyOpen", budget=1e308, config={}),
            rec(2, "runPlanned", run="a"), rec(3, "charge", run="a", amount=1e308, balance=0.0), rec(4, "runStarted", run="a"),
            rec(5, "runPlanned", run="b"), rec(6, "charge", run="b", amount=1e308, balance=last_balance),
            rec(7, "runStarted", run="b"),
        ]))
    assert books(-1e308).ok is True
    c = books(-0.5e308)
    assert c.ok is False and c.detail == "the amounts do not add up to what the budget lost, beyond a double's range"


def test_a_target_of_a_study_whose_ledger_is_not_written_yet_is_unknown_and_says_why() -> None:
    """No ledger yet, and the study can still be resumed: nothing of a target's story can be told, each of its
    checks is ? and says so (with the ledger's problem when it has one)."""
    from studymon.engine.judge.target import TARGET_CHECKS, target_checks

    ev, acc = evidence(one_kill())
    assert ev.kill is not None
    t = ev.kill.targets[0]
    got = target_checks(ev, t, acc, STUDY, LedgerFacts(pending=True))
    assert [(c.name, c.ok, c.detail) for c in got] == [
        (name, None, "the ledger cannot be judged: not written yet") for name in TARGET_CHECKS]
    got = target_checks(ev, t, acc, STUDY, LedgerFacts(pending=True, problem="study/ledger.jsonl: missing"))
    assert {c.detail for c in got} == {"the ledger cannot be judged: study/ledger.jsonl: missing"}
