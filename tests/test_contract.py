"""The rules of §2a, one at a time: each broken at its boundary, named with its number and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.contract.ledger import DOUBLE_MAX, Record
from studymon.engine.contract.rules import (
    RuleTally,
    chosen_ids,
    experiment_keys,
    is_int,
    is_number,
    key,
    round_text,
    settlement_accounted,
    valid_container_name,
    valid_id,
)
from studymon.engine.judge.facts import LedgerFacts, StudyFacts
from studymon.engine.judge.read import read_ledger
from studymon.engine.judge.study import contract_kept


def rec(seq: int, kind: str, **content: Any) -> Record:
    return Record(seq, f"2026-11-30T00:00:{seq % 60:02d}.000Z", kind, content, seq, 0)


def run_records(start: int, run: str, rnd: int, exps: list[str], purpose: str = "diagnosis") -> list[tuple[str, dict[str, Any]]]:
    return [
        ("runPlanned", {"run": run, "purpose": purpose, "object": "c", "round": rnd, "experiments": exps}),
        ("charge", {"run": run, "amount": 10, "balance": 90}),
        ("runStarted", {"run": run, "container": f"inforsi-s-{run}"}),
        ("runResult", {"run": run, "exitCode": 0, "outputs": dict.fromkeys(exps, 0.5)}),
    ]


def sound() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = [("studyOpen", {"study": "s", "budget": 100, "config": {}})]
    out += [("stageOpen", {"stage": "diagnosis", "round": 1}),
            ("decision", {"name": "selectDiagnosis", "round": 1, "output": {"chosen": ["e1", "e2"]}})]
    out += run_records(4, "d1", 1, ["e1", "e2"])
    out += [("diagnosisSettlement", {"round": 1, "run": "d1", "dropped": [{"experiment": "e1", "reason": "r"}],
                                     "judged": {"experiments": [{"id": "e2", "verdict": "kept", "score": 1}]}}),
            ("stageOpen", {"stage": "proposal", "round": 1}),
            ("serviceError", {"stage": "proposal", "round": 1, "message": "down"}),
            ("halt", {"reason": "balance exhausted"})]
    return out


def watch(entries: list[tuple[str, dict[str, Any]]], prefix: str | None = "inforsi", study: str | None = "s") -> RuleTally:
    w = RuleTally(prefix, study)
    for i, (kind, content) in enumerate(entries, 1):
        w.add(rec(i, kind, **content))
    return w


def at(entries: list[tuple[str, dict[str, Any]]], kind: str, **match: Any) -> int:
    for i, (k, c) in enumerate(entries):
        if k == kind and all(c.get(a) == b for a, b in match.items()):
            return i
    raise KeyError(kind)


def broken(entries: list[tuple[str, dict[str, Any]]], **kw: Any) -> tuple[int, int, str]:
    w = watch(entries, **kw)
    assert w.first is not None, "no rule broken"
    return w.first.rule, w.first.line, w.first.detail


def test_the_sound_ledger_keeps_every_rule() -> None:
    w = watch(sound())
    assert w.first is None and w.broken_lines == 0 and w.lines == len(sound())
    check = contract_kept(w, StudyFacts("s", "inforsi"), LedgerFacts())
    assert check.ok is True and check.detail == f"rules 1-9, 11 and 15 hold over {len(sound())} records"


# --- rule 1 ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["runPlanned", "charge", "runStarted", "runResult", "diagnosisSettlement"])
def test_rule_1_run_must_be_a_valid_id(kind: str) -> None:
    e = sound()
    i = at(e, kind)
    e[i][1]["run"] = 7
    assert broken(e) == (1, i + 1, f"{kind}.run is an integer, not a string")
    del e[i][1]["run"]
    assert broken(e) == (1, i + 1, f"{kind} has no run")
    e[i][1]["run"] = "D1"
    rule, line, detail = broken(e)
    assert (rule, line) == (1, i + 1) and "does not match the id pattern" in detail and "D1" not in detail


@pytest.mark.parametrize("value, ok", [
    ("a", True), ("0", True), ("a" * 63, True), ("a" * 64, False), ("", False), ("-a", False), ("_a", False),
    ("a-b_c.d", True), ("aB", False), ("a b", False), ("a\n", False), (1, False), (None, False), (["a"], False),
])
def test_id_pattern(value: Any, ok: bool) -> None:
    assert valid_id(value) is ok


@pytest.mark.parametrize("value, ok", [("inforsi", True), ("A.b-c_1", True), ("-x", False), ("a/b", False),
                                        ("a" * 128, True), ("a" * 129, False), (3, False)])
def test_container_name_pattern(value: Any, ok: bool) -> None:
    assert valid_container_name(value) is ok


# --- rule 2 ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["charge", "runStarted", "runResult"])
def test_rule_2_a_run_record_needs_a_plan_before_it(kind: str) -> None:
    e = sound()
    e.insert(at(e, "halt"), (kind, {"run": "zz", "amount": 1, "balance": 1, "container": "inforsi-s-zz",
                                    "exitCode": 0, "outputs": {}}))
    rule, line, detail = broken(e)
    assert (rule, line) == (2, len(e) - 1)
    assert detail == f"{kind} for run zz, which has no runPlanned before it"


def test_rule_2_a_plan_after_its_charge_is_out_of_order() -> None:
    e = sound()
    i = at(e, "runPlanned")
    e[i], e[i + 1] = e[i + 1], e[i]
    assert broken(e) == (2, i + 1, "charge for run d1, which has no runPlanned before it")
    w = watch(e)
    assert w.broken_lines >= 2  # the late plan breaks rule 3 too


def test_rule_2_a_run_is_planned_once() -> None:
    e = sound()
    i = at(e, "runPlanned")
    e.insert(i + 1, e[i])
    assert broken(e) == (2, i + 2, f"second runPlanned for run d1 (the first is line {i + 1})")


# --- rule 3 ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind, detail", [
    ("charge", "second charge for run d1"),
    ("runStarted", "second runStarted for run d1"),
    ("runResult", "second runResult for run d1"),
])
def test_rule_3_at_most_one_of_each(kind: str, detail: str) -> None:
    e = sound()
    i = at(e, kind)
    e.insert(at(e, "halt"), e[i])
    assert broken(e) == (3, len(e) - 1, detail)


@pytest.mark.parametrize("first, second, detail", [
    ("charge", "runStarted", "runStarted for run d1 before its charge"),
    ("runStarted", "runResult", "runResult for run d1 before its runStarted"),
])
def test_rule_3_order(first: str, second: str, detail: str) -> None:
    e = sound()
    i, j = at(e, first), at(e, second)
    e[i], e[j] = e[j], e[i]
    assert broken(e) == (3, i + 1, detail)


def breaks_by_line(entries: list[tuple[str, dict[str, Any]]]) -> list[tuple[int, int, str]]:
    """(line, rule, detail) of every line that breaks a rule (a fresh watch per prefix)."""
    out = []
    for n in range(1, len(entries) + 1):
        w = watch(entries[:n])
        if w.broken_lines > len(out):
            out.append((n, *_last_break(entries[:n])))
    return out


def _last_break(entries: list[tuple[str, dict[str, Any]]]) -> tuple[int, str]:
    """The rule and detail of the last line's break: the watch keeps its state but forgets earlier breaks."""
    before = watch(entries[:-1])
    w = RuleTally("inforsi", "s")
    for i, (kind, content) in enumerate(entries, 1):
        w.add(rec(i, kind, **content))
        if i == len(entries) - 1:
            w.first = None  # keep the state, forget earlier breaks
    assert w.first is not None and before.broken_lines + 1 == watch(entries).broken_lines
    return w.first.rule, w.first.detail


OPEN = ("studyOpen", {"study": "s", "budget": 100, "config": {}})  # line 1 (rule 7): every ledger opens so
P = ("runPlanned", {"run": "d1", "purpose": "x", "object": "c", "round": 1, "experiments": []})
C = ("charge", {"run": "d1", "amount": 1, "balance": 99})
S = ("runStarted", {"run": "d1", "container": "inforsi-s-d1"})
R = ("runResult", {"run": "d1", "exitCode": 0, "outputs": {}})


@pytest.mark.parametrize("entries, expected", [
    ([OPEN, P, C, S, R], []),
    ([OPEN, P, C, S, R, C], [(6, 3, "second charge for run d1")]),
    ([OPEN, P, S, C], [(3, 3, "runStarted for run d1 before its charge"),
                       (4, 3, "charge for run d1 after its runStarted")]),
    ([OPEN, P, C, R, S], [(4, 3, "runResult for run d1 before its runStarted"),
                          (5, 3, "runStarted for run d1 after its runResult")]),
    ([OPEN, P, R, C], [(3, 3, "runResult for run d1 before its runStarted"),
                       (4, 3, "charge for run d1 after its runResult")]),
    ([OPEN, P, C, S, R, R], [(6, 3, "second runResult for run d1")]),
    ([OPEN, P, C, S, S, R], [(5, 3, "second runStarted for run d1")]),
    ([OPEN, C, P, S, R], [(2, 2, "charge for run d1, which has no runPlanned before it"),
                          (3, 3, "runPlanned for run d1 after its other records")]),
    ([OPEN, S, P], [(2, 2, "runStarted for run d1, which has no runPlanned before it"),
                    (3, 3, "runPlanned for run d1 after its other records")]),
    ([OPEN, R, P], [(2, 2, "runResult for run d1, which has no runPlanned before it"),
                    (3, 3, "runPlanned for run d1 after its other records")]),
    ([OPEN, P, P, C], [(3, 2, "second runPlanned for run d1 (the first is line 2)")]),
    # Without its studyOpen, line 1 breaks rule 7 (and the lowest rule a line breaks is the one named).
    ([P, C, S, R], [(1, 7, "the first line is runPlanned, not studyOpen")]),
    ([C, P, S, R], [(1, 2, "charge for run d1, which has no runPlanned before it"),
                    (2, 3, "runPlanned for run d1 after its other records")]),
    ([OPEN, P, OPEN, C], [(3, 7, "studyOpen is not the first line, or not the only one")]),
])
def test_rule_3_order_line_by_line(entries: list[tuple[str, dict[str, Any]]], expected: list[tuple[int, int, str]]) -> None:
    assert breaks_by_line(entries) == expected


# --- rule 4 ------------------------------------------------------------------------------


def test_rule_4_container_name_is_exact() -> None:
    e = sound()
    i = at(e, "runStarted")
    for wrong in ("inforsi-s-d1x", "inforsi-s-d2", "x-s-d1", "/inforsi-s-d1", None, 5):
        e[i] = ("runStarted", {"run": "d1", "container": wrong})
        assert broken(e) == (4, i + 1, "runStarted.container for run d1 is not inforsi-s-d1")
    e[i] = ("runStarted", {"run": "d1", "container": "other-s-d1"})
    assert watch(e, prefix="other").first is None
    assert watch(e, prefix=None).first is None  # unknown names: the check says so instead


def test_rule_4_unknown_names_fail_contract_kept() -> None:
    check = contract_kept(watch(sound(), prefix=None), StudyFacts(None, None, "research.json: missing"), LedgerFacts())
    assert check.ok is False and check.detail == "rule 4 cannot be checked: research.json: missing"


# --- rule 5 ------------------------------------------------------------------------------


def test_rule_5_one_selection_and_one_settlement_per_round() -> None:
    e = sound()
    e.insert(at(e, "decision") + 1, e[at(e, "decision")])
    assert broken(e)[0::2] == (5, "second selectDiagnosis decision for round 1")
    e = sound()
    s = at(e, "diagnosisSettlement")
    e.insert(s + 1, e[s])
    assert broken(e) == (5, s + 2, "second diagnosisSettlement for round 1")


def test_rule_5_other_decisions_are_not_counted() -> None:
    e = sound()
    e.insert(1, ("decision", {"name": "proposeExperiments", "round": 1, "output": {}}))
    e.insert(1, ("decision", {"name": "proposeExperiments", "round": 1, "output": {}}))
    assert watch(e).first is None


def test_rule_5_settlement_after_the_result_of_its_run() -> None:
    e = sound()
    r, s = at(e, "runResult"), at(e, "diagnosisSettlement")
    e[r], e[s] = e[s], e[r]
    assert broken(e) == (5, r + 1, "diagnosisSettlement of round 1 names run d1, which has no runResult before it")
    e = sound()
    e[at(e, "diagnosisSettlement")][1]["run"] = "d9"
    assert broken(e)[2] == "diagnosisSettlement of round 1 names run d9, which has no runResult before it"


def test_rule_5_settlement_accounts_for_every_planned_and_chosen_experiment() -> None:
    e = sound()
    s = at(e, "diagnosisSettlement")
    e[s][1]["dropped"] = []
    assert broken(e) == (5, s + 1, "diagnosisSettlement of round 1 leaves out 1 experiment of run d1")
    e = sound()
    e[at(e, "decision")][1]["output"]["chosen"] = ["e1", "e2", "e3"]
    assert broken(e) == (5, s + 1, "diagnosisSettlement of round 1 leaves out 1 chosen experiment")
    e = sound()
    e[at(e, "runPlanned")][1]["experiments"] = ["e1", "e2", "e3", "e4"]
    assert broken(e)[2] == "diagnosisSettlement of round 1 leaves out 2 experiments of run d1"
    # Accounting extra experiments is fine.
    e = sound()
    e[at(e, "diagnosisSettlement")][1]["dropped"].append({"experiment": "e9", "reason": "x"})
    assert watch(e).first is None


def test_rule_5_a_late_plan_still_gives_the_experiments() -> None:
    e = [x for x in sound() if x[0] != "runPlanned"]
    plan = ("runPlanned", {"run": "d1", "purpose": "diagnosis", "object": "c", "round": 1, "experiments": ["e1", "e2", "e3"]})
    e.insert(at(e, "charge") + 1, plan)
    lines = breaks_by_line(e)
    assert lines[-1] == (at(e, "diagnosisSettlement") + 1, 5, "diagnosisSettlement of round 1 leaves out 1 experiment of run d1")


def test_rule_5_a_selection_after_its_settlement_is_checked_too() -> None:
    e = sound()
    d = at(e, "decision")
    sel = e.pop(d)
    sel[1]["output"]["chosen"] = ["e1", "e7"]
    e.insert(at(e, "diagnosisSettlement") + 1, sel)
    assert broken(e)[0::2] == (5, "selectDiagnosis of round 1, after its settlement, chooses 1 experiment the settlement leaves out")
    sel[1]["output"]["chosen"] = ["e1"]
    assert watch(e).first is None


@pytest.mark.parametrize("change, detail", [
    (lambda c: c.update(dropped={"experiment": "e1"}), "dropped is an object, not a list"),
    (lambda c: c.update(judged=[]), "judged is not an object with a list of experiments"),
    (lambda c: c.update(judged={"experiments": "e2"}), "judged is not an object with a list of experiments"),
    (lambda c: c.update(dropped=["e1"]), "an entry of dropped names no experiment"),
    (lambda c: c.update(dropped=[{"reason": "x"}]), "an entry of dropped names no experiment"),
    (lambda c: c.update(judged={"experiments": ["e2"]}), "an entry of judged.experiments has no id"),
    (lambda c: c.update(judged={"experiments": [{"verdict": "kept"}]}), "an entry of judged.experiments has no id"),
])
def test_rule_5_settlement_shapes(change: Any, detail: str) -> None:
    e = sound()
    s = at(e, "diagnosisSettlement")
    change(e[s][1])
    assert broken(e) == (5, s + 1, f"diagnosisSettlement of round 1: {detail}")


def test_rule_5_chosen_and_experiments_shapes() -> None:
    e = sound()
    d = at(e, "decision")
    e[d][1]["output"] = {"chosen": "e1"}
    assert broken(e) == (5, d + 1, "selectDiagnosis of round 1: output.chosen is not a list of ids")
    # An id is a string or an integer: a list holding anything else is no list of ids, at the record itself
    # (whether or not a settlement comes to need it).
    for bad in (None, True, 1.5, ["e1"], {"id": "e1"}):
        e = sound()
        e[d][1]["output"] = {"chosen": ["e1", bad]}
        assert broken(e) == (5, d + 1, "selectDiagnosis of round 1: output.chosen is not a list of ids"), bad
    e = sound()
    p = at(e, "runPlanned")
    e[p][1]["experiments"] = "e1"
    assert broken(e) == (5, p + 1, "runPlanned.experiments of run d1 is not a list of ids")
    e = sound()
    e[p][1]["experiments"] = ["e1", None]
    assert broken(e) == (5, p + 1, "runPlanned.experiments of run d1 is not a list of ids")
    e = sound()
    e[p][1]["experiments"] = ["e1", 2**70]  # an integer past 64 bits is an id: the plan holds; its settlement
    assert broken(e)[1:] == (8, "diagnosisSettlement of round 1 leaves out 1 experiment of run d1")  # omits it


# --- rule 6 ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind, field_, bad, detail", [
    ("stageOpen", "round", "1", "a string, not an integer"),
    ("stageOpen", "round", 1.0, "a number, not an integer"),
    ("stageOpen", "round", True, "a boolean, not an integer"),
    ("decision", "round", None, "null, not an integer"),
    ("runPlanned", "round", [1], "a list, not an integer"),
    ("diagnosisSettlement", "round", "1", "a string, not an integer"),
    ("serviceError", "round", {}, "an object, not an integer"),
    ("charge", "amount", "10", "a string, not a number"),
    ("charge", "amount", True, "a boolean, not a number"),
    ("charge", "balance", None, "null, not a number"),
    ("runResult", "exitCode", "0", "a string, not an integer"),
    ("runResult", "exitCode", 0.0, "a number, not an integer"),
    ("runResult", "exitCode", False, "a boolean, not an integer"),
    ("runResult", "outputs", [], "a list, not an object"),
    ("studyOpen", "budget", "100", "a string, not a number"),
    ("studyOpen", "config", [], "a list, not an object"),
])
def test_rule_6_types(kind: str, field_: str, bad: Any, detail: str) -> None:
    e = sound()
    i = at(e, kind)
    e[i][1][field_] = bad
    assert broken(e) == (6, i + 1, f"{kind}.{field_} is {detail}")


def test_rule_6_a_missing_round_is_not_an_integer() -> None:
    e = sound()
    del e[at(e, "stageOpen")][1]["round"]
    assert broken(e)[2] == "stageOpen.round is missing, not an integer"


def test_rule_6_floats_are_numbers_for_money() -> None:
    e = sound()
    e[at(e, "charge")][1].update(amount=2.5, balance=97.5)
    e[0][1]["budget"] = 100.0
    assert watch(e).first is None


# --- which break is reported ----------------------------------------------------------------


def test_the_first_line_wins_then_the_lowest_rule() -> None:
    e = sound()
    late = at(e, "halt")
    e.insert(late, ("charge", {"run": "q1", "amount": "x", "balance": 1}))  # rules 2 and 6 on one line
    e[at(e, "stageOpen")][1]["round"] = "1"  # rule 6, earlier
    w = watch(e)
    assert (w.first.rule, w.first.line) == (6, 2)
    assert w.broken_lines == 2
    check = contract_kept(w, StudyFacts("s", "inforsi"), LedgerFacts())
    assert check.ok is False
    assert check.detail == "rule 6, line 2: stageOpen.round is a string, not an integer (1 more line breaks a rule)"
    del e[1]
    w = watch(e)
    assert (w.first.rule, w.first.detail) == (2, "charge for run q1, which has no runPlanned before it")
    assert contract_kept(w, StudyFacts("s", "inforsi"), LedgerFacts()).detail.endswith(w.first.detail)


def test_where_the_first_break_is() -> None:
    e = sound()
    e[at(e, "stageOpen")][1]["round"] = "1"
    w = watch(e)
    assert w.first is not None and (w.first.rule, w.first.line, w.first.seq) == (6, 2, 2)
    assert w.first.text == "rule 6, line 2: stageOpen.round is a string, not an integer"


def test_a_settlement_with_a_bad_run_id_still_counts_for_its_round() -> None:
    e = sound()
    s = at(e, "diagnosisSettlement")
    bad = ("diagnosisSettlement", dict(e[s][1], run=7))
    e.insert(s, bad)
    w = watch(e)
    assert (w.first.rule, w.first.line) == (1, s + 1)  # type: ignore[union-attr]
    assert w.broken_lines == 2  # the good settlement is the round's second


def test_contract_kept_fails_on_an_unusable_ledger() -> None:
    check = contract_kept(RuleTally("inforsi", "s"), StudyFacts("s", "inforsi"), LedgerFacts(problem="gone"))
    assert check.ok is False and check.detail == "the ledger cannot be judged: gone"


def test_more_lines_plural() -> None:
    e = sound()
    for _ in range(2):
        e.insert(at(e, "halt"), ("charge", {"run": "q1", "amount": 1, "balance": 1}))
    e.insert(at(e, "halt"), ("charge", {"run": "q1", "amount": 1, "balance": 1}))
    check = contract_kept(watch(e), StudyFacts("s", "inforsi"), LedgerFacts())
    assert check.detail.endswith("(2 more lines break a rule)")


# --- helpers ------------------------------------------------------------------------------------


def test_type_helpers() -> None:
    assert is_int(3) and not is_int(True) and not is_int(3.0) and not is_int("3")
    assert is_number(3) and is_number(2.5) and not is_number(False) and not is_number("1")
    assert round_text(4) == "4" and round_text("4") == "?" and round_text(True) == "?"


def test_experiment_keys_exactly() -> None:
    assert key("e1") == "e1" and key(3) == 3
    assert key(None) == ("NoneType", None) and key(True) == ("bool", True) and key(1.5) == ("float", 1.5)
    assert key([1, "a"]) == ("json", '[1,"a"]') and key({"b": 1, "a": 2}) == ("json", '{"a":2,"b":1}')


def test_experiment_keys_tell_types_apart() -> None:
    assert key(1) != key("1") and key(1) != key(True) and key(1) != key(1.5)
    assert key({"a": 1, "b": 2}) == key({"b": 2, "a": 1})
    assert experiment_keys(["a", 1, ["x"]], ids_only=False) == frozenset({key("a"), key(1), key(["x"])})
    assert experiment_keys(["a", 1, ["x"]]) is None, "a list is no id"
    assert experiment_keys(["a", 1, 2**70]) == frozenset({key("a"), key(1), key(2**70)})
    assert experiment_keys("a") is None and experiment_keys(None) is None


def test_settlement_and_choice_readers() -> None:
    assert settlement_accounted({"dropped": [{"experiment": "a"}], "judged": {"experiments": [{"id": "b"}]}}) == (
        frozenset({key("a"), key("b")}), None)
    assert settlement_accounted({"dropped": [], "judged": {"experiments": []}}) == (frozenset(), None)
    assert settlement_accounted({})[0] is None
    assert chosen_ids({"output": {"chosen": ["a"]}}) == (frozenset({key("a")}), None)
    assert chosen_ids({"output": ["a"]}) == (None, "output.chosen is not a list of ids")
    assert chosen_ids({}) == (None, "output.chosen is not a list of ids")


# --- rules 7-11 (contract v3, §6.2) --------------------------------------------------------


def test_rule_7_study_open_is_line_1_and_names_the_study() -> None:
    e = sound()
    e[0][1]["study"] = "t"
    assert broken(e) == (7, 1, "studyOpen.study is not s, the study research.json names")
    assert watch(e, study=None).first is None  # research.json unknown: rule 4's reason says so
    e = sound()
    e.insert(at(e, "halt"), e[0])
    assert broken(e) == (7, len(e) - 1, "studyOpen is not the first line, or not the only one")
    e = sound()[1:]
    assert broken(e) == (7, 1, "the first line is stageOpen, not studyOpen")
    e = [("somethingNew", {}), *sound()]
    rule, line, detail = broken(e)
    assert (rule, line, detail) == (7, 1, "the first line is another kind, not studyOpen")
    assert "somethingNew" not in detail


def _at_watch(value: Any) -> RuleTally:
    w = RuleTally("inforsi", "s")
    for i, (kind, content) in enumerate(sound(), 1):
        w.add(Record(i, value if i == 2 else f"2026-11-30T00:00:{i:02d}.000Z", kind, content, i, 0))
    return w


@pytest.mark.parametrize("value, ok", [
    ("2026-11-30T05:32:38.123Z", True), ("2026-11-30T05:32:38Z", True), ("2026-11-30T05:32:38.1Z", True),
    ("2026-11-30T05:32:38.123456789Z", True), ("2026-11-30T05:32:38.123+00:00", True), ("2028-02-29T00:00:00Z", True),
    ("2026-11-30T05:32:38.1234567890Z", False), ("2026-11-30T05:32:38.123+01:00", False),
    ("2026-11-30T05:32:38.123", False), ("2026-11-30 05:32:38.123Z", False), ("2026-02-29T00:00:00Z", False),
    ("2026-13-01T00:00:00Z", False), ("2026-11-31T00:00:00Z", False), ("2026-11-30T24:00:00Z", False),
    ("2026-11-30T05:60:00Z", False), ("yesterday", False), ("", False), (1796000000, False), (None, False),
])
def test_rule_8_at_is_an_rfc3339_utc_time(value: Any, ok: bool) -> None:
    w = _at_watch(value)
    if ok:
        assert w.first is None, value
    else:
        assert w.first is not None and (w.first.rule, w.first.line, w.first.detail) == (
            8, 2, "at is not an RFC 3339 UTC time"), value


def test_rule_9_numbers_are_finite() -> None:
    e = sound()
    c = at(e, "charge")
    e[c][1]["amount"] = float("inf")
    assert broken(e) == (9, c + 1, "charge.amount is not finite")
    e = sound()
    e[c][1]["balance"] = float("nan")
    assert broken(e) == (9, c + 1, "charge.balance is not finite")
    e = sound()
    e[0][1]["budget"] = float("-inf")
    assert broken(e) == (9, 1, "studyOpen.budget is not finite")
    e = sound()
    r = at(e, "runResult")
    e[r][1]["outputs"]["e1"] = float("nan")
    assert broken(e) == (9, r + 1, "runResult.outputs of run d1 holds a number that is not finite")
    # A literal beyond a double (1e400), reported by the reader: its line, if the first.
    w = watch(sound())
    w.nonfinite(5, 5)
    assert (w.first.rule, w.first.line, w.first.detail) == (9, 5, "a number that is not finite")  # type: ignore[union-attr]
    w = watch(e)
    w.nonfinite(r + 5, r + 5)  # later than the first break: the first stays
    assert (w.first.rule, w.first.line) == (9, r + 1) and w.broken_lines == 2  # type: ignore[union-attr]


def _kept_as_read(out: Path, lines: list[str]) -> tuple[bool | None, str]:
    """contractKept's verdict and detail over ledger lines read as the judge reads them (``read_ledger``)."""
    ledger = out / "study" / "ledger.jsonl"
    ledger.parent.mkdir(parents=True)
    ledger.write_text("".join(line + "\n" for line in lines))
    study = StudyFacts("s", "inforsi")
    _, watch_, facts, issues = read_ledger(out, study, [])
    assert issues == [] and facts.problem is None
    check = contract_kept(watch_, study, facts)
    return check.ok, check.detail


def _rebalance(entries: list[tuple[str, dict[str, Any]]]) -> None:
    budget = entries[0][1]["budget"]
    huge = next((c["amount"] for k, c in entries if k == "charge" and abs(c["amount"]) == DOUBLE_MAX), None)
    if huge is not None:
        budget = entries[0][1]["budget"] = huge  # the balance after it is 0, a number
    balance = budget
    for kind, content in entries:
        if kind == "charge":
            if abs(content["amount"]) != DOUBLE_MAX and not is_number(balance - content["amount"]):
                content["amount"] = 0  # a budget of -DOUBLE_MAX: no charge keeps the balance a number
            balance -= content["amount"]
            content["balance"] = balance


def _lines(entries: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [
        json.dumps({"seq": i, "at": f"2026-11-30T00:00:{i:02d}.000Z", "kind": kind, "content": content})
        for i, (kind, content) in enumerate(entries, 1)
    ]


@pytest.mark.parametrize("value", [DOUBLE_MAX, -DOUBLE_MAX], ids=["DOUBLE_MAX", "-DOUBLE_MAX"])
@pytest.mark.parametrize("kind, field_", [("studyOpen", "budget"), ("charge", "amount")])
def test_an_integer_of_exactly_a_double_s_largest_size_is_a_number(
    tmp_path: Path, value: int, kind: str, field_: str
) -> None:
    """An integer literal of exactly +-DOUBLE_MAX (kept as an int by the exact parse a lone surrogate calls for)
    is a number: the ledger keeps every rule."""
    assert is_number(DOUBLE_MAX) and is_number(-DOUBLE_MAX)
    assert not is_number(DOUBLE_MAX + 1) and not is_number(-DOUBLE_MAX - 1)
    e = sound()
    i = at(e, kind)
    e[i][1].update({field_: value, "note": "\ud800"})
    _rebalance(e)  # rule 15: each balance follows from the budget and the amounts, whatever their size
    lines = _lines(e)
    assert str(value) in lines[i] and "\\ud800" in lines[i]
    assert _kept_as_read(tmp_path, lines) == (True, f"rules 1-9, 11 and 15 hold over {len(e)} records")


def test_a_line_1_number_beyond_a_double_is_one_broken_line(tmp_path: Path) -> None:
    """A studyOpen budget of 1e400 on line 1: the reader's report and the record's own break are one line."""
    lines = _lines(sound())
    lines[0] = lines[0].replace('"budget": 100', '"budget": 1e400')
    assert '"budget": 1e400' in lines[0]
    assert _kept_as_read(tmp_path, lines) == (False, "rule 9, line 1: studyOpen.budget is not finite")


def test_rule_11_a_settlement_settles_its_run_of_its_round_once() -> None:
    e = sound()
    s = at(e, "diagnosisSettlement")
    e[s][1]["judged"]["experiments"].append({"id": "e1", "verdict": "kept", "score": 1})
    assert broken(e) == (11, s + 1, "diagnosisSettlement of round 1 both judges and drops an experiment")
    e = sound()
    e[s][1]["judged"]["experiments"].append({"id": "e9", "verdict": "kept", "score": 1})
    assert broken(e) == (11, s + 1, "diagnosisSettlement of round 1 judges 1 id run d1 never had")
    # A chosen id of the round may be judged, but only with a value in the run's outputs.
    e = sound()
    e[at(e, "decision")][1]["output"]["chosen"] = ["e1", "e2", "e3"]
    e[s][1]["judged"]["experiments"].append({"id": "e3", "verdict": "kept", "score": 1})
    assert broken(e) == (11, s + 1, "diagnosisSettlement of round 1 judges 1 id with no output of run d1")
    e[at(e, "runResult")][1]["outputs"]["e3"] = 0.5
    assert watch(e).first is None
    # Of its run's round.
    e = sound()
    e[at(e, "runPlanned")][1]["round"] = 2
    assert broken(e)[0::2] == (11, "diagnosisSettlement of round 1 settles run d1, which is of another round")
    # Settled once: d1 settled (wrongly) in round 2, then again in its own round 1.
    e = sound()
    e.insert(s, ("diagnosisSettlement", dict(e[s][1], round=2)))
    assert broken(e) == (11, s + 1, "diagnosisSettlement of round 2 settles run d1, which is of another round")
    assert _last_break(e[: s + 2]) == (11, "run d1 is settled a second time")


def test_canonical_json_is_json_dumps_sorted_at_any_depth() -> None:
    import json

    from studymon.engine.contract.rules import canonical_json, key

    for v in ({}, [], {"b": [1, {"x": None, "a": "é"}], "a": 2.5}, [1, [2, [3]]], "x", {"k": "\ud83d"}, 10**30, True):
        assert canonical_json(v) == json.dumps(v, sort_keys=True, separators=(",", ":"))
    deep: dict[str, object] = {}
    level = deep
    for _ in range(5000):
        level["x"] = {}
        level = level["x"]  # type: ignore[assignment]
    assert canonical_json(deep) == '{"x":' * 5000 + "{}" + "}" * 5000
    # What orjson will not write still has a key, the same for the same value, apart for another.
    assert key({"l": "\ud83d"}) == key({"l": "\ud83d"}) != key({"l": "\ud83e"})
    assert key([10**30]) == key([10**30]) != key([10**30 + 1])


def test_a_plan_that_comes_after_its_run_s_records_is_the_one_its_settlement_is_held_to() -> None:
    """A runPlanned after its charge breaks rule 3; its experiments, not none, are what the settlement accounts for."""
    e = sound()
    p = at(e, "runPlanned", run="d1")
    plan = e.pop(p)
    e.insert(p + 1, plan)  # after the charge
    w = watch(e)
    assert (w.first.rule, w.first.line) == (2, p + 1)  # type: ignore[union-attr]  # the charge, with no plan yet
    assert w.broken_lines == 2  # the charge (rule 2) and the late plan (rule 3): the settlement keeps the rules
    e[at(e, "runPlanned", run="d1")][1]["experiments"] = ["e1", "e2", "e3"]
    w = watch(e)
    assert w.broken_lines == 3  # and now it leaves out e3 of the plan that came late


def test_a_line_the_reader_found_not_finite_is_broken_once_when_told_before_its_record() -> None:
    """The judge tells the watch of a non-finite number before the record is added: rule 9 at that line, counted once."""
    e = sound()
    w = RuleTally("inforsi", "s")
    w.nonfinite(3, 3)  # line 3, not added yet
    w.nonfinite(5, 5)
    for i, (kind, content) in enumerate(e, 1):
        w.add(rec(i, kind, **content))
    assert w.first is not None and (w.first.rule, w.first.line, w.first.seq, w.first.detail) == (
        9, 3, 3, "a number that is not finite")
    assert w.broken_lines == 2
    # A line that breaks another rule as well counts once, and the lowest rule is said.
    e = sound()
    c = at(e, "charge")
    e[c][1]["run"] = "nobody"  # rule 2 on the same line
    w = RuleTally("inforsi", "s")
    w.nonfinite(c + 1, c + 1)
    for i, (kind, content) in enumerate(e, 1):
        w.add(rec(i, kind, **content))
    assert (w.first.rule, w.first.line) == (2, c + 1)  # type: ignore[union-attr]
    # Told after its record (the old order): the first break stays the first, rule 9 does not take its place.
    w = watch(e)
    before = (w.first.rule, w.first.line, w.broken_lines)  # type: ignore[union-attr]
    w.nonfinite(c + 1, c + 1)
    assert (w.first.rule, w.first.line) == before[:2]  # type: ignore[union-attr]


def test_studyopen_anywhere_but_line_1_breaks_rule_7_on_its_own_line() -> None:
    e = sound()
    e.insert(3, ("studyOpen", {"study": "s", "budget": 100, "config": {}}))
    w = watch(e)
    assert (w.first.rule, w.first.line) == (7, 4) and w.broken_lines >= 1  # type: ignore[union-attr]
    e = sound()
    opened = e.pop(0)
    e.insert(2, opened)  # line 1 is another kind, and the studyOpen on line 3 breaks the rule too
    w = watch(e)
    assert (w.first.rule, w.first.line) == (7, 1)  # type: ignore[union-attr]
    assert w.broken_lines == 2


def test_rule_15_each_balance_is_the_one_before_less_the_amount(tmp_path: Path) -> None:
    """§6.9 rule 15: a charge's balance is the previous balance (the budget, first) minus its amount, within 1e-9 of
    the budget; a middle charge off by one breaks it where chargedEqualsStarts (the sum) would not see it."""
    e = sound()
    e += run_records(0, "d2", 2, ["e3"])
    _rebalance(e)
    assert watch(e).first is None
    charges = [c for k, c in e if k == "charge"]
    charges[0]["balance"] += 1  # 91 where 90 is due; the next one, 80, is then 11 below 91
    first = watch(e).first
    assert first is not None and (first.rule, first.detail) == (
        15, "balance after run d1's charge is not the balance before minus its amount")
    assert watch(e).broken_lines == 2
    charges[0]["balance"] -= 1 - 1e-12  # within 1e-9 of the budget: the same balance
    assert watch(e).first is None


def test_rule_11_an_experiment_is_judged_at_most_once_and_dropped_at_most_once() -> None:
    e = sound()
    i = at(e, "diagnosisSettlement")
    judged = e[i][1]["judged"]["experiments"]
    e[i][1]["judged"]["experiments"] = judged + judged
    first = watch(e).first
    assert first is not None and (first.rule, first.detail) == (
        11, "diagnosisSettlement of round 1 judges an experiment twice")
    e = sound()
    dropped = e[i][1]["dropped"]
    e[i][1]["dropped"] = dropped + dropped
    first = watch(e).first
    assert first is not None and (first.rule, first.detail) == (
        11, "diagnosisSettlement of round 1 drops an experiment twice")


def test_whose_a_container_is_by_its_name_and_its_label() -> None:
    """§6.1: the study's label claims a container whatever its name; the stem claims one unless its label is a valid
    id of another study whose stem holds the name too; an empty or invalid label disowns nothing."""
    from studymon.engine.contract.rules import studys_container

    cases = [
        ("elsewhere-1", "s", True),  # labelled ours, named anywhere
        ("inforsi-s-d1", None, True),  # in the stem, unlabelled
        ("inforsi-s-d1", "", True),  # an empty label disowns nothing
        ("inforsi-s-d1", "no/id", True),  # nor an invalid one
        ("inforsi-s-d1", 7, True),
        ("inforsi-s-zz", "other", True),  # another study's label, but not a name of its stem
        ("inforsi-s-x-r1", "s-x", False),  # study s-x's stem (inforsi-s-x-) holds the name: its
        ("inforsi-other-d1", None, False),  # outside the stem, unlabelled
        ("inforsi-other-d1", "other", False),
        (None, None, False),
    ]
    for name, label, ours in cases:
        assert studys_container(name, label, "inforsi", "s") is ours, (name, label)


# --- survivors of mutation run 9 (docs/mutation.md), each a path no test took ------------------------------------


def test_an_id_that_is_a_list_or_an_object_is_its_json_with_sorted_keys() -> None:
    """key(): a list or an object stands for its JSON text, keys sorted, so that the same value is one id however its
    keys were written, and no other value's."""
    assert key({"b": 1, "a": [2]}) == key({"a": [2], "b": 1}) == ("json", '{"a":[2],"b":1}')
    assert key([1]) != key(["1"]) and key([1]) != key(1) and key({}) != key([])


def test_rule_15_holds_a_balance_to_a_billionth_of_the_budget() -> None:
    """A balance off by less than a billionth of the budget is the same balance (the sums of doubles); more is not."""
    for off, holds in ((4e-4, True), (2e-3, False)):
        e = sound()
        e[0][1]["budget"] = 1e6
        i = at(e, "charge")
        e[i][1]["balance"] = 1e6 - e[i][1]["amount"] + off
        w = watch(e)
        assert (w.first is None) is holds, (off, w.first)
        if not holds:
            assert w.first is not None and w.first.rule == 15
