"""``python3 -m tests.fuzz`` (what ``.ci/fuzz`` runs): fuzz the judge for some minutes, or replay cases.

    python3 -m tests.fuzz --minutes N [--seeds DIR] [--no-docker]
    python3 -m tests.fuzz --replay CASE.json [CASE.json ...] [--seeds DIR]

Fuzzing draws with fresh randomness, batch after batch, writes every new
finding to ``tests/fuzz/pending/`` and ends with one summary line (mutants
tried, disagreements, findings by mutator); exit 1 when it found anything.
``--pending DIR`` sends new cases elsewhere.  The seeds are made in a temporary folder and removed at the end, unless
``--seeds DIR`` names a folder: seeds made there before are used again (so a
case replays on the very folder it was found on), else they are made there
and kept.  ``--replay`` judges each case's mutant again with both judges
and prints the verdicts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tests.fuzz import cases, seeds
from tests.fuzz.harness import Fuzzer
from tests.fuzz.judges import Verdict


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _seeds(folder: Path | None, tmp: Path, docker: bool) -> dict[str, seeds.Seed]:
    if folder is not None and (made := seeds.load(folder)) is not None:
        _say(f"seeds: using those in {folder}")
        return made
    root = folder if folder is not None else tmp / "seeds"
    if docker:
        from studymon.engine.runtimes import docker_answers
        from studymon.refstudy.image import IMAGE, build_image

        if not docker_answers():
            raise SystemExit("no Docker engine answers: start dockerd, or give --no-docker")
        build_image(IMAGE)
    _say(f"seeds: making them in {root} (real studies, about a minute)")
    return seeds.make(root, docker=docker)


def _verdict_line(v: Verdict | None) -> str:
    if v is None:
        return "not asked"
    if not v.answered:
        return f"no verdict: {v.error}"
    bad = {f"{s} · {n}": ok for (s, n), ok in v.checks.items() if ok is not True}
    return f"exit {v.status}; not holding: {json.dumps(bad, ensure_ascii=False)}"


def replay(paths: list[Path], made: dict[str, seeds.Seed], work: Path) -> int:
    status = 0
    with Fuzzer(made, work, pending=None) as fuzzer:
        for path in paths:
            case = cases.Case(path, json.loads(path.read_text(encoding="utf-8")))
            recipe = case.recipe
            exact = fuzzer.indexes[recipe.seed].fingerprint == case.body.get("seedFingerprint")
            mutant = fuzzer.mutant(recipe)
            try:
                product, oracle = fuzzer.judge(mutant)
            finally:
                mutant.remove()
            _say(f"{case.name} ({'the seed it was found on' if exact else 'a fresh seed of the same name'}):")
            _say(f"  steps applied: {mutant.applied}")
            _say(f"  product: {_verdict_line(product)}")
            _say(f"  oracle:  {_verdict_line(oracle)}")
            if oracle is None or product.status != oracle.status:
                status = 1
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=2.0, help="how long to fuzz (default 2)")
    parser.add_argument("--seeds", type=Path, default=None, help="a folder to keep the seeds in, or to reuse them from")
    parser.add_argument("--no-docker", action="store_true", help="make no Docker seeds (a machine without Docker)")
    parser.add_argument("--replay", type=Path, nargs="+", default=None, metavar="CASE", help="replay these cases")
    parser.add_argument(
        "--pending", type=Path, default=cases.PENDING, help="where new cases go (default tests/fuzz/pending/)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="studymon-fuzz-") as tmp_name:
        tmp = Path(tmp_name)
        made = _seeds(args.seeds, tmp, not args.no_docker)
        if args.replay:
            return replay(args.replay, made, tmp / "work")
        with Fuzzer(made, tmp / "work", pending=args.pending) as fuzzer:
            _say(f"fuzzing for {args.minutes:g} min; oracle: {fuzzer.oracle_said}")
            stats = fuzzer.run_for(args.minutes * 60)
            for path in stats.saved:
                _say(f"new case: {path}")
            pending = cases.load(args.pending)
            _say(f"pending cases ({len(pending)}): " + (", ".join(c.name for c in pending) or "none"))
            _say(stats.summary(fuzzer.oracle_said))
            return 1 if stats.findings else 0


if __name__ == "__main__":
    sys.exit(main())
