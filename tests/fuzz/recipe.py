"""A recipe: which seed, and which one or two mutators with which parameters; JSON, so a case replays exactly."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fuzz.mutators import MUTATORS, NoChange, copy_folder, outside_of


@dataclass(frozen=True)
class Step:
    mutator: str
    params: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {"mutator": self.mutator, "params": self.params}


@dataclass(frozen=True)
class Recipe:
    seed: str
    steps: tuple[Step, ...]

    @property
    def mutators(self) -> tuple[str, ...]:
        return tuple(s.mutator for s in self.steps)

    def as_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "steps": [s.as_json() for s in self.steps]}

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Recipe:
        steps = tuple(Step(str(s["mutator"]), dict(s["params"])) for s in body["steps"])
        unknown = [s.mutator for s in steps if s.mutator not in MUTATORS]
        if unknown:
            raise ValueError(f"no such mutator: {unknown}")
        return cls(str(body["seed"]), steps)


@dataclass
class Mutant:
    """A recipe applied: the folder to judge, and which steps changed something (``applied``)."""

    recipe: Recipe
    path: Path
    applied: list[bool] = field(default_factory=list)
    why_not: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(self.applied)

    def remove(self) -> None:
        """The mutant and whatever it put outside itself."""
        for path in (self.path, outside_of(self.path)):
            if path.is_symlink() or path.is_file():
                path.unlink()
            elif path.is_dir():
                shutil.rmtree(path)


def apply(recipe: Recipe, seed: Path, dest: Path) -> Mutant:
    """``seed`` copied to ``dest`` and each step applied in order (the seed is never touched)."""
    copy_folder(seed, dest)
    mutant = Mutant(recipe, dest)
    for step in recipe.steps:
        try:
            MUTATORS[step.mutator](dest, step.params)
        except NoChange as exc:
            mutant.applied.append(False)
            mutant.why_not.append(str(exc))
        else:
            mutant.applied.append(True)
            mutant.why_not.append("")
    return mutant
