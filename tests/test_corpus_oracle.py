"""Every hand-made corpus case judged by the oracle written apart (``tests/oracle/``), held to the verdicts the case
expects of the product.

The corpus (``tests/corpus.py``) says, for each wrong story, which checks fail; the product is held to it by
``tests/test_corpus.py``.  The oracle never read the product, so a case where it differs is a reading of the
contract that one of the two gets wrong, or a case built wrong.  The differences not settled yet are listed in
:data:`OPEN`, each with what it asks; a case that differs and is not listed fails, and so does one listed that no
longer differs (settled: take it off the list).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus import CORPUS, Case, write
from tests.oracle.study import judge_study

Key = tuple[str, str]

# case name -> what differs, and what settling it asks.
OPEN: dict[str, str] = {}


def differences(case: Case, tmp: Path) -> dict[Key, tuple[bool | None, bool | None]]:
    """The checks where the oracle's verdict is not the case's expected one: (expected, oracle's)."""
    verdict = judge_study(write(case.build(), tmp))
    got = {k: v for k, v in verdict.checks.items() if v is not True}
    return {k: (case.expected.get(k, True), got.get(k, True)) for k in set(got) | set(case.expected)
            if case.expected.get(k, True) != got.get(k, True)}


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_the_oracle_judges_each_corpus_case_as_the_case_expects(case: Case, tmp_path: Path) -> None:
    diff = differences(case, tmp_path / "s")
    if case.name in OPEN:
        assert diff, f"{case.name} no longer differs: settled, take it off OPEN ({OPEN[case.name]})"
    else:
        assert not diff, f"{case.name}: (expected, oracle's) {diff}"


def test_every_open_difference_is_a_corpus_case() -> None:
    names = {c.name for c in CORPUS}
    assert not set(OPEN) - names, set(OPEN) - names
