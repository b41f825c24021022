"""The gate: with ``STUDYMON_REQUIRE_ALL=1`` a test that skips, in any way, fails the run with its reason.

A pytest of its own runs a folder of tests that skip in every way pytest
offers (a call to ``skip``, a ``skipif`` mark, a fixture that skips, a
module-level skip, ``importorskip``, an ``xfail``), beside one that passes,
under the project's own hooks (``tests/gate.py``), once with the gate and
once without.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gate import GATE

ROOT = Path(__file__).resolve().parent.parent

SKIPPING = {
    "test_calls.py": """
import pytest

def test_passes():
    assert True

def test_skips_by_call():
    pytest.skip("no engine: call")

@pytest.mark.skipif(True, reason="no engine: mark")
def test_skips_by_mark():
    pass

@pytest.fixture
def engine():
    pytest.skip("no engine: fixture")

def test_skips_in_its_fixture(engine):
    pass

@pytest.mark.xfail(reason="no engine: xfail")
def test_expected_to_fail():
    assert False
""",
    "test_module_skip.py": """
import pytest
pytest.skip("no engine: module", allow_module_level=True)

def test_never_collected():
    pass
""",
    "test_import_skip.py": """
import pytest
pytest.importorskip("a_module_that_is_not_there_7f3a")

def test_never_collected():
    pass
""",
}
REASONS = ("no engine: call", "no engine: mark", "no engine: fixture", "no engine: xfail", "no engine: module",
           "a_module_that_is_not_there_7f3a")


def run_pytest(tmp_path: Path, gate: bool) -> subprocess.CompletedProcess[str]:
    folder = tmp_path / "suite"
    folder.mkdir(exist_ok=True)
    for name, text in SKIPPING.items():
        (folder / name).write_text(text)
    # Nothing of the pytest this runs in: not its options, nor the worker of a parallel run it may be.
    env = {k: v for k, v in os.environ.items()
           if k not in (GATE, "PYTEST_ADDOPTS", "TEXTUAL_SNAPSHOT_TEMPDIR") and not k.startswith("PYTEST_XDIST_")}
    if gate:
        env[GATE] = "1"
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        # Going on past collection errors, so that one run shows every kind (CI stops there, failed).
        [sys.executable, "-m", "pytest", "-p", "tests.gate", "-p", "no:cacheprovider", "-rA", "--rootdir", str(folder),
         "-c", os.devnull, "--continue-on-collection-errors", str(folder)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False,
    )


def summary(proc: subprocess.CompletedProcess[str]) -> tuple[int, int, int]:
    m = re.search(r"^studymon tests: (\d+) run, (\d+) skipped, (\d+) failed \(", proc.stdout, re.MULTILINE)
    assert m, proc.stdout + proc.stderr
    return int(m[1]), int(m[2]), int(m[3])


def test_with_the_gate_every_kind_of_skip_fails_with_its_reason(tmp_path: Path) -> None:
    proc = run_pytest(tmp_path, gate=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # Run: the one that passes and the two whose body skipped; failed: all six, in their body, setup or module.
    assert summary(proc) == (3, 0, 6), proc.stdout
    assert f"{GATE}=1)" in proc.stdout
    for reason in REASONS:
        assert re.search(rf"{GATE}=1 and this skipped: .*{re.escape(reason)}", proc.stdout), (reason, proc.stdout)
    assert re.search(r"^PASSED .*test_passes", proc.stdout, re.MULTILINE), proc.stdout
    assert not re.search(r"^(SKIPPED|XFAIL|XPASS)", proc.stdout, re.MULTILINE), proc.stdout


def test_without_the_gate_the_same_tests_skip_and_are_counted(tmp_path: Path) -> None:
    proc = run_pytest(tmp_path, gate=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert summary(proc) == (1, 6, 0), proc.stdout
    assert f"{GATE} not set)" in proc.stdout


def test_this_run_has_the_gate_when_ci_asks_for_it(request: pytest.FixtureRequest) -> None:
    """The hooks are the ones this very run uses (conftest takes them in), not only the inner run's."""
    manager = request.config.pluginmanager
    names = {impl.plugin_name for impl in manager.hook.pytest_runtest_makereport.get_hookimpls()}
    assert any(name.endswith("conftest.py") for name in names), names
