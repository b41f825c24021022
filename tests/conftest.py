"""Shared fixtures (a private process-runtime root and lock folder per test, the Docker engine) and the gate."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.docker_engine import second_engine  # noqa: E402, F401 - a fixture every test file may ask for
from tests.gate import (  # noqa: E402, F401 - the gate's hooks: with STUDYMON_REQUIRE_ALL=1 a skip fails
    pytest_make_collect_report,
    pytest_runtest_makereport,
    pytest_terminal_summary,
)


def _docker_state() -> str | None:
    """None when Docker tests can run, else the reason they cannot."""
    from studymon.engine.runtimes import docker_answers

    if not docker_answers():
        return "no Docker engine answers"
    from studymon.refstudy.image import IMAGE, build_image

    try:
        build_image(IMAGE)
    except Exception as exc:  # noqa: BLE001 - reported as the reason
        return f"cannot build {IMAGE}: {exc}"
    return None


_docker_reason: list[str | None] = []


@pytest.fixture(scope="session")
def docker_engine() -> None:
    """Use in every Docker test: skips without an engine (a failure under the gate)."""
    if not _docker_reason:
        _docker_reason.append(_docker_state())
    reason = _docker_reason[0]
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture(autouse=True)
def process_runtime_root(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own process-runtime state folder."""
    root = tmp_path_factory.mktemp("procrt")
    monkeypatch.setenv("STUDYMON_PROCESS_RUNTIME", str(root))
    return root


@pytest.fixture(autouse=True)
def study_lock_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own folder of study locks (one study per id is a rule within a test)."""
    folder = tmp_path_factory.mktemp("locks")
    folder.chmod(0o700)
    monkeypatch.setenv("STUDYMON_LOCK_DIR", str(folder))
    return folder
