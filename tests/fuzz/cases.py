"""The cases: findings kept as JSON, ``pending/`` until someone settles them, then ``corpus/``.

A case is a recipe (seed, mutators, parameters), both verdicts and both
judges' reasons for the checks they differ on.  ``pending/<name>.json`` is
written once per signature (:meth:`~.compare.Finding.signature`): the first
mutant that found a hole stands for it (or the first of one step, if the
first had two).  A human settles a case by deciding
which judge is right by the contract, getting that judge fixed, and moving
the file to ``corpus/`` with a ``settled`` entry::

    "settled": {"status": 1, "checks": {"kill 1 · d1 · sameContainerNoRerun": false},
                "why": "docs/contract.md: ... (the rule, quoted)"}

CI replays every corpus case (both judges give the settled status and
agree); it never replays ``pending/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fuzz.compare import Finding
from tests.fuzz.recipe import Recipe

FUZZ = Path(__file__).resolve().parent
PENDING = FUZZ / "pending"
CORPUS = FUZZ / "corpus"


@dataclass(frozen=True)
class Case:
    path: Path
    body: dict[str, Any]

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def recipe(self) -> Recipe:
        return Recipe.from_json(self.body["recipe"])

    @property
    def settled(self) -> dict[str, Any] | None:
        settled = self.body.get("settled")
        return settled if isinstance(settled, dict) else None


def save(finding: Finding, fingerprint: str, folder: Path = PENDING) -> Path | None:
    """Write the finding as a case, unless one of its signature is pending already; a recipe of one step takes
    the place of one of two (the smaller example of the same hole).  The path written, or None."""
    path = folder / f"{finding.name}.json"
    if path.exists():
        try:
            steps = len(json.loads(path.read_text(encoding="utf-8"))["recipe"]["steps"])
        except (OSError, ValueError, KeyError, TypeError):
            steps = 0
        if len(finding.recipe.steps) >= steps:
            return None
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(finding.as_case(fingerprint), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load(folder: Path) -> list[Case]:
    return [Case(path, json.loads(path.read_text(encoding="utf-8"))) for path in sorted(folder.glob("*.json"))]
