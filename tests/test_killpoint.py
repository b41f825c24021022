"""Kill points as an operator writes them (contract §7): parsed once, refused with the grammar, written back the same."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from studymon.engine.contract.killpoint import ACTIONS, GRAMMAR, SEED, BadPoint, KillPoint, parse_kill_option
from studymon.engine.contract.rules import KINDS, RUN_KINDS


@pytest.mark.parametrize(
    "text, point",
    [
        ("after:runStarted/diagnosis", KillPoint("after", "runStarted", "diagnosis", 1)),
        ("after:charge/ablation#2", KillPoint("after", "charge", "ablation", 2)),
        ("after:diagnosisSettlement", KillPoint("after", "diagnosisSettlement", None, 1)),
        ("after:halt", KillPoint("after", "halt")),
        ("after:runResult#3", KillPoint("after", "runResult", None, 3)),
        ("container:die/diagnosis", KillPoint("container", "die", "diagnosis", 1)),
        ("container:create#12", KillPoint("container", "create", None, 12)),
        ("container:start/my-purpose.v2", KillPoint("container", "start", "my-purpose.v2", 1)),
        ("power:after:charge", KillPoint("after", "charge", None, 1, "synced")),
        ("power:after:runStarted/diagnosis#2@synced+3", KillPoint("after", "runStarted", "diagnosis", 2, "synced+3")),
        ("power:after:runResult@torn", KillPoint("after", "runResult", None, 1, "torn")),
        ("power:container:die/diagnosis@zeros", KillPoint("container", "die", "diagnosis", 1, "zeros")),
    ],
)
def test_points_parse_and_read_back(text: str, point: KillPoint) -> None:
    assert KillPoint.parse(text) == point
    assert str(point) == text
    assert KillPoint.parse(str(point)) == point


def test_the_seed_s_point_is_the_first_diagnosis_start() -> None:
    assert SEED == KillPoint.parse("after:runStarted/diagnosis") and str(SEED) == "after:runStarted/diagnosis"
    assert SEED.on_record and not KillPoint.parse("container:die").on_record


@pytest.mark.parametrize(
    "text, why",
    [
        ("", "is not a kill point"),
        ("runStarted", "is not a kill point"),
        ("after:", "is not a kill point"),
        ("before:runStarted", "a point begins with after: or container:"),
        ("after:runstarted", "'runstarted' is not a kind of record"),
        ("after:myKind", "'myKind' is not a kind of record"),
        ("after:halt/diagnosis", "a halt record has no purpose"),
        ("after:stageOpen/diagnosis", "a stageOpen record has no purpose"),
        ("container:stop", "'stop' is not a container action"),
        ("container:exec_start", "is not a kill point"),
        ("after:charge/", "'' is not a purpose"),
        ("after:charge/diag nosis", "is not a purpose"),
        ("after:charge/-x", "is not a purpose"),
        ("after:charge#0", "#0 is not a count from 1"),
        ("after:charge#-1", "#-1 is not a count from 1"),
        ("after:charge#", "# is not a count from 1"),
        ("after:charge#1000001", "is not a count from 1 to 1000000"),
        ("after:charge#٣", "is not a count from 1"),
        ("power:after:charge@", "'' is not a crash state"),
        ("power:after:charge@synced+0", "'synced+0' is not a crash state"),
        ("power:after:charge@lost", "'lost' is not a crash state"),
        ("power:power:after:charge", "one power: is enough"),
        ("power:before:charge", "after power:, "),
        ("after:charge@torn", "is not a kill point"),
        ("after:charge#1#2", "is not a kill point"),
        ("after:charge/diagnosis/x", "is not a purpose"),
        ("after:runStarted\n", "is not a kill point"),
    ],
)
def test_a_text_that_is_no_point_is_refused_with_the_grammar(text: str, why: str) -> None:
    with pytest.raises(BadPoint) as err:
        KillPoint.parse(text)
    assert why in str(err.value), str(err.value)
    assert str(err.value).endswith(GRAMMAR)


def test_the_grammar_names_every_kind_and_action() -> None:
    for kind in KINDS:
        assert kind in GRAMMAR
    for action in ACTIONS:
        assert action in GRAMMAR


@given(
    st.sampled_from([("after", k) for k in KINDS] + [("container", a) for a in ACTIONS]),
    st.one_of(st.none(), st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,20}", fullmatch=True)),
    st.integers(1, 1_000_000),
)
def test_every_point_reads_back_as_itself(where: tuple[str, str], purpose: str | None, nth: int) -> None:
    source, what = where
    if source == "after" and what not in RUN_KINDS:
        purpose = None
    point = KillPoint(source, what, purpose, nth)
    assert KillPoint.parse(str(point)) == point


def test_a_point_matches_its_kind_and_purpose() -> None:
    any_purpose = KillPoint.parse("after:charge")
    assert any_purpose.matches("charge", "ablation") and any_purpose.matches("charge", None)
    assert not any_purpose.matches("runStarted", "ablation")
    diagnosis = KillPoint.parse("container:die/diagnosis")
    assert diagnosis.matches("die", "diagnosis")
    assert not diagnosis.matches("die", "ablation") and not diagnosis.matches("die", None)
    assert not diagnosis.matches("start", "diagnosis")


def test_the_kill_option_splits_the_study_from_its_point() -> None:
    assert parse_kill_option("alpha:after:runStarted/diagnosis") == ("alpha", SEED)
    assert parse_kill_option("b-2:container:die#2") == ("b-2", KillPoint("container", "die", None, 2))
    for bad, why in (("alpha", "write ID:POINT"), (":after:halt", "write ID:POINT"),
                     ("alpha:after:nothing", "'nothing' is not a kind of record")):
        with pytest.raises(BadPoint) as err:
            parse_kill_option(bad)
        assert why in str(err.value) and str(err.value).startswith(f"--kill {bad!r}"), str(err.value)


def test_an_armed_point_counts_its_moments_from_when_it_became_current_to_its_nth() -> None:
    """``#3``: the third matching moment after the point became the current one, whatever came before it."""
    from studymon.engine.contract.killpoint import ArmedPoint

    armed = ArmedPoint(KillPoint.parse("after:charge/diagnosis#3"))
    assert not armed.current and not armed.count("charge", "diagnosis", seq=50), "waiting behind another: no count"
    armed.begin(from_seq=10, from_time=1000.0)
    assert armed.current
    assert not armed.count("charge", "diagnosis", seq=10), "the record it began at is not its moment"
    assert not armed.count("charge", "diagnosis", seq=9)
    assert not armed.count("charge", "ablation", seq=11) and not armed.count("runStarted", "diagnosis", seq=12)
    assert [armed.count("charge", "diagnosis", seq=s) for s in (13, 14, 15, 16)] == [False, False, True, False]
    armed.begin(from_seq=20, from_time=1000.0)  # current again (another console's restore): counts afresh
    assert [armed.count("charge", "diagnosis", seq=s) for s in (21, 22, 23)] == [False, False, True]


def test_an_armed_container_point_counts_events_from_the_runtime_time_it_became_current() -> None:
    from studymon.engine.contract.killpoint import ArmedPoint

    armed = ArmedPoint(KillPoint.parse("container:die#2"))
    armed.begin(from_seq=0, from_time=1000.0)
    assert not armed.count("die", "diagnosis", at=999.9), "an event before the point became current"
    assert not armed.count("start", "diagnosis", at=1001.0)
    assert [armed.count("die", p, at=t) for p, t in (("ablation", 1001.0), ("diagnosis", 1002.0))] == [False, True]


def test_the_first_occurrence_may_be_written_out_and_a_moment_at_the_very_start_counts() -> None:
    from studymon.engine.contract.killpoint import ArmedPoint

    assert KillPoint.parse("after:charge#1") == KillPoint.parse("after:charge")
    armed = ArmedPoint(KillPoint.parse("container:start"))
    armed.begin(from_seq=0, from_time=1000.0)
    assert armed.count("start", None, at=1000.0), "an event at the very time the point became current is its"


def test_a_power_point_is_a_power_loss_and_its_default_state_reads_back_without_it() -> None:
    point = KillPoint.parse("power:after:charge@synced")
    assert point.power and point.on_record and point.state == "synced"
    assert str(point) == "power:after:charge" and KillPoint.parse(str(point)) == point
    assert not KillPoint.parse("after:charge").power
    assert KillPoint.parse("power:after:charge") != KillPoint.parse("after:charge"), "a power loss is not a kill"
