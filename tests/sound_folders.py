"""Every sound folder the suite writes passes both judges: the product's and the oracle written apart.

``tests/conftest.py`` calls :func:`oracle_disagrees` after each test that used
``tmp_path``: each study folder a console run left there (a ``report.json``
and a ``study.log`` beside a ``launches.jsonl``: what ``studymon run``,
``demo`` and a campaign's trials write; the corpus's hand-built folders, and
the benches' made from them, have no ``study.log``) that the product judges
sound now (exit 0) is judged by the oracle
(``tests/oracle/``), which must find it sound too.  A folder a test broke on
purpose after its run is not sound to the product, and is left alone; one the
product passes and the oracle fails is a disagreement, and fails the test.
"""

from __future__ import annotations

import os
from pathlib import Path

from studymon.engine.contract.exits import exit_status
from studymon.engine.judge import judge
from tests.oracle.study import judge_study

DEPTH = 5  # tmp_path/<campaign>/trials/<n> is three levels down; a demo's studies two
MOST = 40  # folders looked at after one test
LARGEST = 16 << 20  # a folder larger than this is a bench's or a hostile test's, judged by its own test
MOST_FILES = 10_000  # so is one of more files than this


def study_folders(root: Path) -> list[Path]:
    """The study folders a console run wrote under ``root`` (a ``report.json`` and a ``study.log`` beside a
    ``launches.jsonl``), links not followed."""
    found: list[Path] = []
    base = len(root.parts)
    for here, dirs, files in os.walk(root):
        path = Path(here)
        if len(path.parts) - base >= DEPTH:
            dirs.clear()
        if "report.json" in files and "launches.jsonl" in files and "study.log" in files:
            found.append(path)
            if len(found) >= MOST:
                break
    return found


def too_large(out: Path) -> bool:
    """Whether the folder holds more than :data:`LARGEST` bytes in all (a bench's or a hostile test's, judged by its
    own test): judged here, in the test's own process, it would grow that process for every test after it."""
    total = seen = 0
    for here, dirs, files in os.walk(out):
        seen += len(files)
        if seen > MOST_FILES:
            return True
        for name in files:
            try:
                total += os.lstat(os.path.join(here, name)).st_size
            except OSError:
                continue
            if total > LARGEST:
                return True
    return False


def oracle_disagrees(root: Path) -> list[str]:
    """What the oracle says of each folder under ``root`` that the product judges sound now."""
    said = []
    for out in study_folders(root):
        if too_large(out):
            continue
        if exit_status(c.ok for c in judge(out).checks) != 0:
            continue
        oracle = judge_study(out)
        if oracle.status != 0:
            failing = {f"{scope} · {name}": oracle.reasons.get((scope, name)) for scope, name in oracle.failing()}
            said.append(f"{out}: the product passes it, the oracle exits {oracle.status}: {failing}")
    return said
