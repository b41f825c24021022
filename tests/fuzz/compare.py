"""What a mutant's two verdicts make: findings.

* a *disagreement*: the exit statuses (0/1/3) differ, or a check both judges
  name has a different verdict (✓, ✗ or ?); a check only one of them names
  is not compared;
* the product alone: an exception, no answer within the timeout, a
  judgement of more than 10 s or 1 GiB (docs/contract.md's bound);
* the oracle alone: an exception or no answer;
* the fuzzer's own: a mutator that raised (a bug here, not in a judge).

Each finding has a *signature*: what kind, which mutators, which seed kind,
both statuses and the checks that differ, so that one hole found a thousand
ways is one case (the first mutant that found it).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.fuzz.judges import MEMORY_MIB, SLOW_SECONDS, Key, Verdict
from tests.fuzz.recipe import Recipe

DISAGREEMENT = "disagreement"
SEED_DISAGREEMENT = "seed-disagreement"  # the judges differ on a seed itself, before any change


# What varies from one mutant of a hole to the next in a reason: times, Ids, numbers (seqs, lines, pids).
VARYING = (
    (re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z?"), "T"),
    (re.compile(r"\b[0-9a-f]{12,64}\b"), "H"),
    (re.compile(r"\d+(\.\d+)?"), "N"),
)


def gist(product: Verdict, oracle: Verdict, key: Key) -> str:
    """The first reason of the judge that does not pass the check (of both when neither does), with what varies
    between mutants (times, Ids, numbers) left out: what tells one hole from another under one check."""
    said = []
    for v in (product, oracle):
        if v.checks.get(key) is not True:
            text = str(v.reason(key) or "").split("; ", 1)[0]
            for pattern, mark in VARYING:
                text = pattern.sub(mark, text)
            said.append(text[:70])
    return " / ".join(said)


def scope_kind(scope: str) -> str:
    """``study``, ``kill`` or ``target`` (``kill N · RUN``); a campaign's scopes as they are."""
    if scope.startswith("kill "):
        return "target" if " · " in scope else "kill"
    return scope


@dataclass
class Finding:
    kind: str
    recipe: Recipe
    seed_kind: str
    product: Verdict | None
    oracle: Verdict | None = None
    differing: list[Key] = field(default_factory=list)
    note: str = ""

    def signature(self) -> str:
        """What makes two findings one case: for a disagreement, both statuses and each differing check by name
        and kind of scope (``kill 2 · d3`` is a target's, as ``kill 1 · d1`` is) with both verdicts and the gist
        of the failing judge's reason; else the kind, the mutators and the finding's first line.  One hole found
        a thousand ways is one case."""
        if self.kind in (DISAGREEMENT, SEED_DISAGREEMENT) and self.product and self.oracle:
            p, o = self.product, self.oracle
            checks = sorted(
                {f"{scope_kind(k[0])} · {k[1]}: {p.checks[k]} / {o.checks[k]}: {gist(p, o, k)}" for k in self.differing}
            )
            parts: list[Any] = [self.kind, p.status, o.status, checks]
            if self.kind == SEED_DISAGREEMENT:
                parts.append(self.recipe.seed)
        else:
            parts = [
                self.kind,
                sorted(set(self.recipe.mutators)),
                re.sub(r"\d+", "N", self.note.split("\n", 1)[0][:120]),
            ]
        return json.dumps(parts)

    @property
    def name(self) -> str:
        return f"{self.kind}-{hashlib.sha256(self.signature().encode()).hexdigest()[:10]}"

    def as_case(self, fingerprint: str) -> dict[str, Any]:
        keys = self.differing or None
        return {
            "name": self.name,
            "kind": self.kind,
            "note": self.note,
            "signature": json.loads(self.signature()),
            "recipe": self.recipe.as_json(),
            "seedKind": self.seed_kind,
            "seedFingerprint": fingerprint,
            "differing": [f"{s} · {n}" for s, n in self.differing],
            "product": self.product.as_json(keys) if self.product else None,
            "oracle": self.oracle.as_json(keys) if self.oracle else None,
        }


def differing(product: Verdict, oracle: Verdict) -> list[Key]:
    """The checks both judges name with different verdicts."""
    return sorted(k for k in product.checks.keys() & oracle.checks.keys() if product.checks[k] != oracle.checks[k])


@dataclass(frozen=True)
class Baseline:
    """How the two judges differ on an unchanged seed: a mutant of it disagrees only where it differs otherwise."""

    statuses: tuple[int | None, int | None] = (None, None)
    pairs: dict[Key, tuple[bool | None, bool | None]] = field(default_factory=dict)

    @classmethod
    def of(cls, product: Verdict, oracle: Verdict) -> Baseline:
        keys = differing(product, oracle)
        return cls((product.status, oracle.status), {k: (product.checks[k], oracle.checks[k]) for k in keys})

    def known(self, product: Verdict, oracle: Verdict, key: Key) -> bool:
        return self.pairs.get(key) == (product.checks[key], oracle.checks[key])


AGREED = Baseline()


def findings(
    recipe: Recipe, seed_kind: str, product: Verdict, oracle: Verdict | None, baseline: Baseline = AGREED
) -> list[Finding]:
    """What one mutant's verdicts make; a difference the seed itself already shows (``baseline``) is not
    found again: its mutants would each repeat the seed's case."""
    found: list[Finding] = []

    def add(kind: str, note: str) -> None:
        found.append(Finding(kind, recipe, seed_kind, product, oracle, note=note))

    if product.timeout:
        add("product-timeout", product.error or "")
    elif product.error:
        add("product-exception", product.error)
    else:
        if product.seconds > SLOW_SECONDS:
            add("product-slow", f"{product.seconds:.1f} s")
        if product.peak_mib > MEMORY_MIB:
            add("product-memory", f"{product.peak_mib:.0f} MiB")
    if oracle is not None:
        if oracle.timeout:
            add("oracle-timeout", oracle.error or "")
        elif oracle.error:
            add("oracle-exception", oracle.error)
    if product.answered and oracle is not None and oracle.answered:
        keys = [k for k in differing(product, oracle) if not baseline.known(product, oracle, k)]
        statuses = (product.status, oracle.status)
        if keys or (product.status != oracle.status and statuses != baseline.statuses):
            kind = SEED_DISAGREEMENT if not recipe.steps else DISAGREEMENT
            note = f"product exit {product.status}, oracle exit {oracle.status}"
            found.append(Finding(kind, recipe, seed_kind, product, oracle, keys, note))
    return found
