"""The README's quick start, as a new user runs it: a fresh virtual environment, the two commands.

The commands are read from the README itself, so the test fails when the
README promises something that does not work.  The first runs the demo (no
terminal here, so headless); the second is checked up to collecting the
suite, since running the suite inside itself would recurse.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [line.strip() for line in section.splitlines() if line.startswith("    ") and line.strip()]
    return commands[:2]


def test_readme_quick_start_in_a_fresh_venv(tmp_path: Path) -> None:
    first, second = quick_start_commands()
    assert first.startswith("pip install ") and "studymon demo" in first
    assert "pip install" in second and "pytest" in second

    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", ".pytest_cache",
                                                                  ".hypothesis", "build"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}:{env['PATH']}"
    env["VIRTUAL_ENV"] = str(env_dir)
    run_dir = tmp_path / "user"
    run_dir.mkdir()

    # The first command, from the checkout (pip install .), then the demo from the user's own folder.
    install, demo = (part.strip() for part in first.split("&&"))
    subprocess.run(f"{install} -q", shell=True, cwd=checkout, env=env, check=True, timeout=600)
    proc = subprocess.run(f"{demo} --backend process", shell=True, cwd=run_dir, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "checks hold" in proc.stdout
    assert len(list(run_dir.glob("studymon-demo-*/*/report.json"))) == 3

    install_tests, run_tests = (part.strip() for part in second.split("&&"))
    subprocess.run(f"{install_tests} -q", shell=True, cwd=checkout, env=env, check=True, timeout=600)
    assert re.search(r"pytest", run_tests)
    collected = subprocess.run(f"{run_tests} --collect-only", shell=True, cwd=checkout, env=env,
                               capture_output=True, text=True, timeout=300)
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert "tests collected" in collected.stdout or " collected" in collected.stdout
