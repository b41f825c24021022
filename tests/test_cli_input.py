"""Bad input: a one-line message naming the problem, exit status 2, and the disk untouched."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def studymon(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=60
    )


def tree_digest(path: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        h.update(str(p.relative_to(path)).encode())
        if p.is_file():
            h.update(p.read_bytes())
        h.update(str(p.stat().st_mode).encode())
    return h.hexdigest()


def assert_refused(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]
    assert "Traceback" not in proc.stderr


def test_existing_out_is_refused_and_left_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "alpha"
    (out / "study").mkdir(parents=True)
    (out / "study" / "ledger.jsonl").write_text('{"seq": 1}\n')
    (out / "notes.txt").write_text("keep me")
    before = tree_digest(tmp_path)
    proc = studymon("run", "--headless", f"alpha={out}", "beta=beta", cwd=tmp_path)
    assert_refused(proc, str(out), "exists")
    assert tree_digest(tmp_path) == before
    assert not (tmp_path / "beta").exists()


@pytest.mark.parametrize("bad", ["../x", "a;b", "Upper", "x" * 70, "", "_lead", "a b"])
def test_bad_ids_are_refused(tmp_path: Path, bad: str) -> None:
    proc = studymon("run", "--headless", f"{bad}=out", "ok=ok", cwd=tmp_path)
    assert_refused(proc, "study id")
    assert list(tmp_path.iterdir()) == []


def test_missing_template(tmp_path: Path) -> None:
    proc = studymon("run", "--headless", "--template", "nope.json", "a=a", cwd=tmp_path)
    assert_refused(proc, "nope.json", "does not exist")
    assert list(tmp_path.iterdir()) == []


def test_invalid_template(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text("{ not json")
    before = tree_digest(tmp_path)
    proc = studymon("run", "--headless", "--template", "t.json", "a=a", cwd=tmp_path)
    assert_refused(proc, "t.json", "not valid JSON")
    assert tree_digest(tmp_path) == before


def test_template_without_command(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text('{"budget": 10}')
    before = tree_digest(tmp_path)
    proc = studymon("run", "--headless", "--template", "t.json", "a=a", cwd=tmp_path)
    assert_refused(proc, '"command"')
    assert tree_digest(tmp_path) == before


def test_docker_backend_without_engine(tmp_path: Path) -> None:
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-such.sock"}
    proc = studymon("demo", "--headless", "--backend", "docker", "--out", "d", cwd=tmp_path, env=env)
    assert_refused(proc, "no Docker engine answers")
    assert list(tmp_path.iterdir()) == []


def test_arming_an_unknown_study(tmp_path: Path) -> None:
    proc = studymon("run", "--headless", "--kill-after-first-diagnosis-start", "zeta", "a=a", cwd=tmp_path)
    assert_refused(proc, "zeta")
    assert list(tmp_path.iterdir()) == []


def test_resume_of_a_folder_without_study(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    before = tree_digest(tmp_path)
    proc = studymon("run", "--resume", "--headless", "a=a", cwd=tmp_path)
    assert_refused(proc, "no research.json")
    assert tree_digest(tmp_path) == before


def test_report_of_a_folder_that_is_not_evidence(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    proc = studymon("report", "a", cwd=tmp_path)
    assert_refused(proc, "not a studymon evidence folder")


def test_usage_errors_and_version(tmp_path: Path) -> None:
    assert_refused(studymon("run", cwd=tmp_path), "ID=OUT")
    assert_refused(studymon("frobnicate", cwd=tmp_path), "invalid choice")
    version = studymon("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("studymon ")
    for cmd in ("run", "report", "demo", "image"):
        helped = studymon(cmd, "--help", cwd=tmp_path)
        assert helped.returncode == 0 and "usage: studymon " + cmd in helped.stdout
