"""The README's quick start, as a new user runs it: a fresh virtual environment, the two commands as written.

The commands are read from the README itself and run in a shell as they
stand there, so the test fails when the README promises something that does
not work.  The first installs studymon and runs ``studymon demo`` (no
terminal here, so headless; on Docker when an engine answers, else on the
process runtime); then ``studymon explore`` runs a small campaign on the
local Dask cluster from that install alone.  The second installs the tests' extras and runs the suite;
running the whole suite inside itself would recurse, so its environment
(``PYTEST_ADDOPTS``) narrows that run to a few fast files, the command left
as written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

from studymon.engine.runtimes import docker_answers
from tests.gate import GATE

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [line.strip() for line in section.splitlines() if line.startswith("    ") and line.strip()]
    return commands[:2]


def test_readme_quick_start_in_a_fresh_venv(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if os.environ.get(GATE) == "1":
        # Under the gate the demo must show Docker: without an engine it would pass on the process runtime, and
        # the gate would never see that the path most users take went untested.
        request.getfixturevalue("docker_engine")
    first, second = quick_start_commands()
    assert first.startswith("pip install ") and "studymon demo" in first
    assert "pip install" in second and "pytest" in second

    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", ".pytest_cache",
                                                                  ".hypothesis", "build", ".mutation", "mutants"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    # A new user's shell: nothing of this checkout's path, nor of the pytest this runs in (a parallel run's worker).
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "TEXTUAL_SNAPSHOT_TEMPDIR") and not k.startswith("PYTEST_XDIST_")}
    env["PATH"] = f"{env_dir / 'bin'}:{env['PATH']}"
    env["VIRTUAL_ENV"] = str(env_dir)

    # The first command as written, in the checkout (pip install .): the demo's folder lands there.
    proc = subprocess.run(first, shell=True, cwd=checkout, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    backend = "docker" if docker_answers() else "process"
    assert f"three reference studies on the {backend} runtime" in proc.stdout, proc.stdout[-3000:]
    assert re.search(r"^✓ all \d+ checks hold$", proc.stdout, re.MULTILINE), proc.stdout[-3000:]
    assert len(list(checkout.glob("studymon-demo-*/*/report.json"))) == 3

    # The explorer works from that install alone (Dask comes with it): a campaign on the local cluster, two
    # trials of the JavaScript double on the process runtime.
    double = {"command": ["node", str(checkout / "tests" / "doubles" / "points_study.js")], "backend": "process",
              "pause": 0.15, "runSeconds": 0.5, "containerPrefix": "qsx"}
    (tmp_path / "double.json").write_text(json.dumps(double))
    proc = subprocess.run(["studymon", "explore", "--headless", "--workers", "2", "--max-trials", "2", "--template",
                           str(tmp_path / "double.json"), "qs=campaign"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    body = json.loads((tmp_path / "campaign" / "campaign.json").read_text())
    assert [t["ok"] for t in body["trials"]] == [True, True], body["trials"]
    assert "campaign: exit 0" in proc.stdout and "studymon explore — qs" in proc.stdout

    # The second as written; the suite it runs is narrowed by the environment only.
    env["PYTEST_ADDOPTS"] = "-p no:cacheprovider tests/test_gate.py tests/test_private_names.py tests/test_contract.py"
    proc = subprocess.run(second, shell=True, cwd=checkout, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    m = re.search(r"^studymon tests: (\d+) run, 0 skipped, 0 failed", proc.stdout, re.MULTILINE)
    assert m and int(m.group(1)) > 20, proc.stdout[-3000:]
    assert re.search(r"^\d+ passed", proc.stdout, re.MULTILINE), proc.stdout[-3000:]
