"""The adversarial evidence corpus: each wrong folder fails exactly its checks; hostile files never crash ``report``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.report import judge
from tests.corpus import CORPUS, HOSTILE, MARKER, Case, Hostile, derive, sound, write

ROOT = Path(__file__).resolve().parent.parent


def verdicts(out: Path) -> dict[tuple[str, str], bool | None]:
    return {(c.scope, c.name): c.ok for c in judge(out).checks}


def test_the_sound_folder_holds_every_check(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    got = verdicts(out)
    assert all(ok is True for ok in got.values()), {k: v for k, v in got.items() if v is not True}
    # Every check of the table is there: 5 per study, killTriggered, 2 per kill, 3 per target.
    assert len(got) == 6 + 2 * 2 + 3 * 3


def test_the_corpus_is_large_and_names_are_unique() -> None:
    assert len(CORPUS) >= 25
    assert len({c.name for c in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_each_wrong_folder_fails_exactly_its_checks(tmp_path: Path, case: Case) -> None:
    sound_keys = set(verdicts(write(derive(sound()), tmp_path / "sound")))
    out = write(case.build(), tmp_path / "s")
    got = verdicts(out)
    not_holding = {k: v for k, v in got.items() if v is not True}
    assert not_holding == case.expected, f"{case.why}: {[(c.scope, c.name, c.ok, c.detail) for c in judge(out).checks if c.ok is not True]}"
    # Nothing vanished from the table but what the fault took away (a target dropped, a folder gone).
    assert set(case.expected) <= set(got)
    if not case.expected:
        assert set(got) == sound_keys


def _report(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "tui.cli", "report", *extra, str(out)],
                          capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("hostile", HOSTILE, ids=[h.name for h in HOSTILE])
def test_hostile_files_fail_their_checks_without_a_crash(tmp_path: Path, hostile: Hostile) -> None:
    out = write(derive(sound()), tmp_path / "s")
    hostile.prepare(out)
    got = verdicts(out)
    wrong = {k for k, v in got.items() if v is not True}
    assert hostile.failing <= wrong, (hostile.failing - wrong, got)
    assert any(v is False for v in got.values())


@pytest.mark.parametrize("hostile", HOSTILE, ids=[h.name for h in HOSTILE])
def test_report_never_crashes_nor_prints_the_file(tmp_path: Path, hostile: Hostile) -> None:
    out = write(derive(sound()), tmp_path / "s")
    hostile.prepare(out)
    for extra in ((), ("--json",)):
        proc = _report(out, *extra)
        assert proc.returncode in (1, 3), proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr, proc.stderr
        assert MARKER not in proc.stdout + proc.stderr
        assert "root:x:0" not in proc.stdout


def test_report_of_the_sound_folder_exits_0(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    proc = _report(out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all 19 checks hold" in proc.stdout
