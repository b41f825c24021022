"""The fuzzing loop: Hypothesis draws recipes, each mutant is judged twice and compared.

:class:`Fuzzer` holds the seeds, the two judges' workers and the tally.
:meth:`Fuzzer.one` makes one mutant, judges it (the oracle first: a
campaign's report may rewrite ``campaign.json``), compares, and removes it;
:meth:`Fuzzer.run` lets Hypothesis draw recipes for at most ``max_examples``
examples and ``seconds`` of wall time (generation only: no shrinking, no
example database, so a run costs what it says and leaves nothing behind).
"""

from __future__ import annotations

import json
import secrets
import shutil
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from tests.fuzz import cases
from tests.fuzz.compare import AGREED, DISAGREEMENT, SEED_DISAGREEMENT, Baseline, Finding, findings
from tests.fuzz.index import SeedIndex, index
from tests.fuzz.judges import TIMEOUT_SECONDS, Judge, Verdict, oracle_state
from tests.fuzz.recipe import Mutant, Recipe, apply
from tests.fuzz.seeds import Seed
from tests.fuzz.strategies import recipes


@dataclass
class Stats:
    tried: int = 0
    repeated: int = 0  # recipes drawn again (Hypothesis repeats itself), not tried twice
    unchanged: int = 0
    judged: int = 0
    seconds: float = 0.0
    tried_by: Counter[str] = field(default_factory=Counter)
    found_by: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)  # "product 1", "oracle 0"...: what the mutants got
    findings: list[Finding] = field(default_factory=list)
    saved: list[Path] = field(default_factory=list)

    @property
    def disagreements(self) -> int:
        return self.kinds[DISAGREEMENT] + self.kinds[SEED_DISAGREEMENT]

    def summary(self, oracle: str) -> str:
        others = ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items()) if "disagreement" not in k) or "none"
        by = ", ".join(f"{m} {self.found_by[m]}/{self.tried_by[m]}" for m in sorted(self.tried_by))
        statuses = ", ".join(f"{k} x{n}" for k, n in sorted(self.statuses.items())) or "none"
        return (
            f"fuzz: {self.tried} mutants tried ({self.unchanged} left unchanged, {self.judged} judged; "
            f"{self.repeated} recipes drawn again, not tried twice) in "
            f"{self.seconds:.0f} s; {self.disagreements} disagreements ({self.kinds[SEED_DISAGREEMENT]} on a seed "
            f"itself); other findings: {others}; "
            f"by mutator (found/tried): {by}; exit statuses: {statuses}; {len(self.saved)} cases written; "
            f"oracle: {oracle}"
        )


class Fuzzer:
    """Seeds, the two judges, and what was found; :meth:`close` ends the judges' workers."""

    def __init__(
        self,
        seeds: dict[str, Seed],
        work: Path,
        *,
        oracle: bool | None = None,
        pending: Path | None = cases.PENDING,
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self.seeds = seeds
        self.indexes: dict[str, SeedIndex] = {n: index(n, s.path, s.kind) for n, s in seeds.items()}
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        state = oracle_state()
        self.oracle_said = "on" if state is None else f"off ({state})"
        if oracle is None:
            oracle = state is None
        self.product = Judge("product", work / "product.log", timeout)
        self.oracle = Judge("oracle", work / "oracle.log", timeout) if oracle else None
        self.pending = pending
        self.stats = Stats()
        self.seen: set[str] = set()
        self.baselines: dict[str, Baseline] = {}

    def close(self) -> None:
        self.product.stop()
        if self.oracle is not None:
            self.oracle.stop()

    def __enter__(self) -> Fuzzer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def mutant(self, recipe: Recipe) -> Mutant:
        """The recipe applied to a fresh copy of its seed, in the work folder (a previous one removed)."""
        seed = self.seeds[recipe.seed]
        dest = self.work / "mutant" / seed.path.name
        if dest.parent.exists():
            shutil.rmtree(dest.parent)
        dest.parent.mkdir(parents=True)
        return apply(recipe, seed.path, dest)

    def judge(self, mutant: Mutant) -> tuple[Verdict, Verdict | None]:
        kind = self.seeds[mutant.recipe.seed].kind
        oracle = self.oracle.ask(kind, mutant.path) if self.oracle is not None else None
        return self.product.ask(kind, mutant.path), oracle

    def baseline(self) -> list[Finding]:
        """Each seed, unchanged, judged by both judges (once): where they differ is a case of its own, and is
        not counted again in each mutant of the seed."""
        found: list[Finding] = []
        if self.oracle is None or self.baselines:
            return found
        for name in sorted(self.seeds):
            recipe = Recipe(name, ())
            mutant = self.mutant(recipe)
            try:
                product, oracle = self.judge(mutant)
            finally:
                mutant.remove()
            assert oracle is not None
            here = findings(recipe, self.seeds[name].kind, product, oracle)
            self.baselines[name] = Baseline.of(product, oracle) if product.answered and oracle.answered else AGREED
            self._keep(recipe, here)
            found += here
        return found

    def _keep(self, recipe: Recipe, found: list[Finding]) -> None:
        stats = self.stats
        for f in found:
            stats.findings.append(f)
            stats.kinds[f.kind] += 1
            for name in set(recipe.mutators):
                stats.found_by[name] += 1
            if self.pending is not None:
                saved = cases.save(f, self.indexes[recipe.seed].fingerprint, self.pending)
                if saved is not None:
                    stats.saved.append(saved)

    def one(self, recipe: Recipe) -> list[Finding]:
        """Make, judge and compare one mutant; what it found (also kept in :attr:`stats`, and as pending cases)."""
        start = time.monotonic()
        stats = self.stats
        text = json.dumps(recipe.as_json(), sort_keys=True)
        if text in self.seen:
            stats.repeated += 1
            return []
        self.seen.add(text)
        stats.tried += 1
        for name in set(recipe.mutators):
            stats.tried_by[name] += 1
        seed_kind = self.seeds[recipe.seed].kind
        try:
            mutant = self.mutant(recipe)
        except Exception:  # noqa: BLE001 - a mutator's own bug is a finding of its own, with its traceback
            found = [Finding("fuzzer-error", recipe, seed_kind, None, note=traceback.format_exc()[-3000:])]
        else:
            try:
                if not mutant.changed:
                    stats.unchanged += 1
                    found = []
                else:
                    stats.judged += 1
                    product, oracle = self.judge(mutant)
                    for v in (product, oracle):
                        if v is not None:
                            stats.statuses[f"{v.judge} {v.status if v.answered else 'none'}"] += 1
                    found = findings(recipe, seed_kind, product, oracle, self.baselines.get(recipe.seed, AGREED))
            finally:
                mutant.remove()
        self._keep(recipe, found)
        stats.seconds += time.monotonic() - start
        return found

    def run(
        self,
        max_examples: int,
        seconds: float,
        *,
        derandomize: bool,
        seed: int | None = None,
        mutators: tuple[str, ...] | None = None,
    ) -> Stats:
        """Hypothesis draws up to ``max_examples`` recipes; past ``seconds`` the rest are drawn but not tried."""
        deadline = time.monotonic() + seconds
        self.baseline()

        @settings(
            max_examples=max_examples,
            derandomize=derandomize,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
            print_blob=False,
        )
        @given(recipes(self.indexes, mutators))
        def body(recipe: Recipe) -> None:
            if time.monotonic() < deadline:
                self.one(recipe)

        if seed is not None and not derandomize:
            body = hypothesis_seed(seed)(body)
        body()
        return self.stats

    def run_for(self, seconds: float, batch: int = 100) -> Stats:
        """Fresh randomness, batch after batch, until ``seconds`` have passed."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self.run(batch, left, derandomize=False, seed=secrets.randbits(64))
        return self.stats
