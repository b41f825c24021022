"""Every way the judge can fail or doubt a check is a way some corpus case takes.

A ✗ (or ``?``) that no case takes has a proof no test reads and words no test
pins: mutation testing found such paths surviving by the dozen (docs/mutation.md,
runs 7 and 8).  So the corpus (tests/corpus.py, and the container points of
tests/test_proofs.py) is judged here under coverage, and every call of the
judge that fails or doubts a check (a check's ``v.fail`` and ``v.unknown``, a
reader's ``_fail``, ``_differs`` and ``bad``) is named by its file, its function
and its place among that function's calls.  :data:`NOT_YET` lists those no case takes
yet; the list may only shrink: a new ✗ path comes with its corpus case, and a
case that takes a listed path takes it off the list.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import coverage

import studymon.engine.judge

# The judge as imported: the files whose lines coverage sees run (an editable install may point elsewhere).
JUDGE = Path(studymon.engine.judge.__file__).resolve().parent

# The paths to a ✗ or ? no corpus case takes yet, as file:function#n (the n-th fail or unknown call written in that
# function, from 1).  Each wants a case; none may be added.
NOT_YET: set[str] = {
    "target.py:_forbidden#1",
    "target.py:_settled#4",
}


def sites() -> dict[str, tuple[Path, int]]:
    """Every call of the judge that fails or doubts a check (:data:`SAYS`; also ``(v.unknown if ... else v.fail)(...)``),
    by name, with its file and line."""
    found: dict[str, tuple[Path, int]] = {}
    for path in sorted(JUDGE.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            calls = sorted(
                (node for node in ast.walk(fn) if isinstance(node, ast.Call) and _says(node.func)),
                key=lambda node: (node.lineno, node.col_offset),
            )
            for n, node in enumerate(calls, 1):
                found.setdefault(f"{path.name}:{fn.name}#{n}", (path, node.lineno))
    return found


# What a check's verdict is made of: a check's own ✗ and ? (``v.fail``, ``v.unknown``), and what a file's reader
# records against it (``_fail``, ``_differs``, a bad line: ``bad``), whoever the receiver.
SAYS = ("fail", "unknown", "_fail", "_differs", "bad")


def _says(func: ast.expr) -> bool:
    """Whether a call's function fails or doubts a check (or is a choice between two that do)."""
    if isinstance(func, ast.Attribute):
        return func.attr in SAYS
    if isinstance(func, ast.IfExp):
        return _says(func.body) or _says(func.orelse)
    return False


def ran(work: Callable[[], object]) -> set[tuple[str, int]]:
    """The (file, line) pairs of the judge that ``work`` runs."""
    cov = coverage.Coverage(data_file=None, include=[str(JUDGE / "*.py")])
    cov.start()
    try:
        work()
    finally:
        cov.stop()
    data = cov.get_data()
    return {(Path(f).name, line) for f in data.measured_files() for line in data.lines(f) or []}


def untaken(lines: set[tuple[str, int]]) -> set[str]:
    """The sites that ``lines`` does not reach."""
    return {name for name, (path, line) in sites().items() if (path.name, line) not in lines}


def reached(tmp: Path) -> set[tuple[str, int]]:
    """The (file, line) pairs of the judge the corpus runs: every case, every hostile folder, and the container points."""
    from studymon.engine.judge import judge
    from tests.corpus import CORPUS, HOSTILE, derive, sound, write
    from tests.test_proofs import proofs

    def corpus() -> None:
        for n, case in enumerate(CORPUS):
            judge(write(case.build(), tmp / f"c{n}"))
        for n, hostile in enumerate(HOSTILE):
            out = write(derive(sound()), tmp / f"h{n}")
            hostile.prepare(out)
            judge(out)
        proofs(tmp / "proofs")

    return ran(corpus)


def test_every_way_to_fail_a_check_is_taken_by_a_corpus_case(tmp_path: Path) -> None:
    left = untaken(reached(tmp_path))
    assert left - NOT_YET == set(), "a ✗ or ? path no corpus case takes: give it a case (tests/corpus.py)"
    assert NOT_YET - left == set(), "a case takes these now: take them off NOT_YET"


def test_the_sites_are_found_and_a_site_a_case_does_not_take_is_seen(tmp_path: Path) -> None:
    found = sites()
    assert len(found) > 100 and all(line > 0 for _, line in found.values())
    assert "study.py:kill_triggered#1" in found and "target.py:charged_once#1" in found
    # The corpus's sound case alone takes none of the ways to fail that the whole corpus takes.
    from studymon.engine.judge import judge
    from tests.corpus import derive, sound, write

    left = untaken(ran(lambda: judge(write(derive(sound()), tmp_path / "sound"))))
    assert len(left) > len(NOT_YET) + 50, "a sound folder fails nothing: most ways to fail are untaken by it"
