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
OPEN: dict[str, str] = {
    "v3-rule9-an-integer-beyond-a-double": "a1's charge amount 10**400 written as digits: the case fails "
    'haltedAtExport ("no dearest run to hold the full stop to", rule 13) and so every target\'s '
    "resultSettledAndFinished; the oracle holds the full stop (balance 0 < the largest amount, 10**400): "
    'docs/contract.md reads "integers are read exactly whatever their size (past 64 bits too), compared by '
    'value" (Hostile evidence), rule 9 fails only a number that is not finite ("1e400 and -1e400 (too large: '
    'read as infinity)"), and rule 13 fails only "a charge whose amount or balance is not a number". '
    "contractKept (rule 15) and chargedEqualsStarts agree. The product or the case to follow, or the contract "
    "to say an integer past a double is no number (tests/oracle/README.md, open question 88)",
}


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
