"""The fuzzer on real seeds: the seeds hold, the mutators replay on them, no judge can hang the run, every
settled case replays to its verdict, and a fixed budget of mutants is judged without an exception, a hang or a
bound broken, and compared (the disagreements still open are counted, not yet failed on: see its docstring).

The seeds are made once for the module (real studies on the process runtime
and on Docker, a crash from outside, a campaign: ``tests/fuzz/seeds.py``),
which is why ``tests/conftest.py`` keeps this file's tests on one worker.
The budget test draws with a fixed Hypothesis seed (derandomized), so CI
tries the same recipes every time; ``.ci/fuzz --minutes N`` is the same loop
with fresh randomness.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fuzz import cases, seeds
from tests.fuzz.compare import DISAGREEMENT
from tests.fuzz.harness import Fuzzer
from tests.fuzz.index import fingerprint, index
from tests.fuzz.judges import ORACLE, Judge, oracle_state
from tests.fuzz.mutators import MUTATORS
from tests.fuzz.recipe import Recipe, Step, apply
from tests.fuzz.strategies import offered, steps

pytestmark = pytest.mark.slow

# The budget: about two minutes of mutants on two cores (a mutant takes 20-50 ms to make and judge twice).
BUDGET_EXAMPLES = 3000
BUDGET_SECONDS = 110.0
EXPECTED = {
    "process-plain": (0, "process"),
    "process-diagnosis": (1, "process"),
    "process-charge": (1, "process"),
    "process-result": (1, "process"),
    "process-twice": (2, "process"),
    "process-crash": (1, "process"),
    "docker-diagnosis": (1, "docker"),
    "docker-start": (1, "docker"),
}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict[str, seeds.Seed]:
    request.getfixturevalue("docker_engine")  # the Docker seeds: without an engine this fails under the gate
    start = time.monotonic()
    root = tmp_path_factory.mktemp("fuzz")
    made = seeds.make(root)
    print(f"seeds made in {time.monotonic() - start:.0f} s")  # noqa: T201 - shown with -s, the seeds' cost
    return made


def _json(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_seeds_are_sound_folders_of_every_kind(made: dict[str, seeds.Seed]) -> None:
    assert set(made) == {*EXPECTED, seeds.CAMPAIGN}
    for name, (kills, backend) in EXPECTED.items():
        out = made[name].path
        status, table = seeds.product_status(made[name])
        assert status == 0, f"{name} does not pass the product's judge:\n{table}"
        assert _json(out / "research.json")["backend"] == backend  # type: ignore[index]
        folders = sorted(p.name for p in (out / "kills").iterdir()) if (out / "kills").exists() else []
        assert folders == [str(n) for n in range(1, kills + 1)], (name, folders)
    triggers = {
        name: [
            _json(made[name].path / "kills" / str(n) / "kill.json")["trigger"]  # type: ignore[index]
            for n in range(1, EXPECTED[name][0] + 1)
        ]
        for name in EXPECTED
    }
    assert triggers["process-crash"] == ["crash"]
    assert triggers["process-twice"] == ["auto", "auto"]
    points = [_json(made["process-twice"].path / "kills" / n / "kill.json")["point"] for n in "12"]  # type: ignore[index]
    assert points == seeds.PROCESS_STUDIES["process-twice"]
    assert _json(made["docker-start"].path / "kills/1/kill.json")["point"] == "container:start"  # type: ignore[index]
    camp = made[seeds.CAMPAIGN]
    assert sorted(p.name for p in (camp.path / "trials").iterdir()) == ["1", "2"]
    status, said = seeds.product_status(camp)
    assert status == 0, said


def test_the_seeds_files_are_written_back_byte_for_byte(made: dict[str, seeds.Seed]) -> None:
    """A mutant differs from its seed in its one change only: every JSON file and line the seeds hold is one
    the mutators write back exactly as it was (the study's log and the report's picture are text)."""
    for seed in made.values():
        idx = index(seed.name, seed.path, seed.kind)
        text = sorted(rel for rel, f in idx.files.items() if f.kind == "text")
        assert all(rel.endswith((".log", ".svg")) for rel in text), (seed.name, text)
        for rel, f in idx.files.items():
            if f.kind == "jsonl":
                assert all(v is not None for v in f.values), (seed.name, rel)


@pytest.mark.parametrize("mutator", sorted(MUTATORS))
def test_each_mutator_replays_exactly_on_real_seeds(made: dict[str, seeds.Seed], tmp_path: Path, mutator: str) -> None:
    indexes = {n: index(n, s.path, s.kind) for n, s in made.items()}
    names = sorted(n for n in indexes if mutator in offered(indexes[n]))
    before = {n: fingerprint(made[n].path) for n in names}
    changed = []

    @settings(
        max_examples=12,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def check(data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(names))
        recipe = Recipe(name, (data.draw(steps(indexes[name], (mutator,))),))
        at = tmp_path / str(len(changed))
        one = apply(recipe, made[name].path, at / "one" / made[name].path.name)
        two = apply(
            Recipe.from_json(json.loads(json.dumps(recipe.as_json()))),
            made[name].path,
            at / "two" / made[name].path.name,
        )
        assert one.applied == two.applied
        assert fingerprint(one.path) == fingerprint(two.path), recipe
        assert (fingerprint(one.path) != before[name]) == one.changed, recipe
        changed.append(one.changed)
        one.remove()
        two.remove()

    check()
    assert {n: fingerprint(made[n].path) for n in names} == before, "a seed was changed"
    assert any(changed), f"{mutator} changed none of the seeds"


def test_no_judge_can_hang_the_run(made: dict[str, seeds.Seed], tmp_path: Path) -> None:
    """A FIFO in place of the ledger is judged (✗) without blocking; a judge that does not answer in time is
    ended, said to have timed out, and the next question goes to a new worker."""
    seed = made["process-diagnosis"]
    recipe = Recipe(seed.name, (Step("special", {"file": "study/ledger.jsonl", "kind": "fifo"}),))
    mutant = apply(recipe, seed.path, tmp_path / "m" / seed.path.name)
    assert stat.S_ISFIFO(os.lstat(mutant.path / "study" / "ledger.jsonl").st_mode)
    judge = Judge("product", tmp_path / "product.log")
    try:
        verdict = judge.ask("study", mutant.path)
        assert verdict.status == 1 and verdict.checks[("study", "ledgerWellFormed")] is False, verdict
        # No time at all: no worker answers that fast, it is killed (a thousandth of a second was not safe: a
        # test process descheduled between reading the clock and its wait could find the answer waiting).
        judge.timeout = 0.0
        late = judge.ask("study", seed.path)
        assert late.timeout and not late.answered and judge.proc is None, late
        judge.timeout = 15.0
        again = judge.ask("study", seed.path)
        assert again.status == 0 and again.seconds < 10, again
    finally:
        judge.stop()


def test_the_oracle_is_compared_as_soon_as_it_imports(made: dict[str, seeds.Seed], tmp_path: Path) -> None:
    state = oracle_state()
    if ORACLE.exists():
        assert state is None, f"tests/oracle/ is there and cannot be asked: {state}"
    with Fuzzer(made, tmp_path / "work", pending=None) as fuzzer:
        assert (fuzzer.oracle is not None) == (state is None)
        assert fuzzer.oracle_said == ("on" if state is None else f"off ({state})")


def test_every_settled_case_replays_to_its_settled_verdict(made: dict[str, seeds.Seed], tmp_path: Path) -> None:
    settled = cases.load(cases.CORPUS)
    assert settled, "tests/fuzz/corpus/ holds no case"
    with Fuzzer(made, tmp_path / "work", pending=None) as fuzzer:
        for case in settled:
            assert case.settled is not None, f"{case.name} has no settled verdict"
            mutant = fuzzer.mutant(case.recipe)
            try:
                assert all(mutant.applied), f"{case.name}: a step changed nothing: {mutant.why_not}"
                product, oracle = fuzzer.judge(mutant)
            finally:
                mutant.remove()
            want = case.settled
            for verdict in (product, oracle):
                if verdict is None:
                    continue
                assert verdict.status == want["status"], (case.name, verdict.as_json())
                for key, ok in want.get("checks", {}).items():
                    scope, name = key.rsplit(" · ", 1)
                    assert verdict.checks.get((scope, name), ok) == ok, (case.name, key, verdict.as_json())


def test_a_fixed_budget_of_mutants_is_judged_in_bounds_and_compared(
    made: dict[str, seeds.Seed], tmp_path: Path
) -> None:
    """Every mutant of the budget is judged by the product without an exception, a hang, more than 10 s or 1 GiB,
    by every mutator, and compared with the oracle.

    The judges agree on every mutant: a disagreement is a bug in one of them or a hole in the contract, named
    here with its recipe (``.ci/fuzz --minutes N`` writes each kind as a case in ``tests/fuzz/pending/``), to be
    settled into ``tests/fuzz/corpus/``, which CI replays; ``docs/fuzz.md`` keeps the count.
    """
    pending = tmp_path / "pending"
    with Fuzzer(made, tmp_path / "work", pending=pending) as fuzzer:
        stats = fuzzer.run(BUDGET_EXAMPLES, BUDGET_SECONDS, derandomize=True)
        summary = stats.summary(fuzzer.oracle_said)
    print(summary)  # noqa: T201 - the count docs/fuzz.md quotes
    found = [
        f"{c.name}: {json.dumps(c.body['signature'], ensure_ascii=False)}\n    {json.dumps(c.body['recipe'])}"
        for c in cases.load(pending)
    ]
    print(f"{len(found)} kinds of disagreement:", *found[:40], sep="\n")  # noqa: T201
    assert stats.judged >= 200, summary
    assert set(stats.tried_by) == set(MUTATORS), summary
    assert fuzzer.oracle_said == "on", f"the oracle is {fuzzer.oracle_said}: nothing was compared"
    # Every finding that is not a disagreement is the product's own: an exception, a hang, a bound broken.
    own = [f for f in stats.findings if DISAGREEMENT not in f.kind]
    assert not own, f"{summary}\n{own[:5]}"
    assert not found, f"{summary}\n{len(found)} kinds of disagreement:\n" + "\n".join(found[:10])
