"""The gate: with ``STUDYMON_REQUIRE_ALL=1`` (as CI sets it) every test runs or the build fails.

A test that skips, for whatever reason (no Docker engine, no root, no
``mount``, cgroup files out of reach, a module-level ``skip`` or
``importorskip``, an ``xfail``), is reported as a failure with the reason
it gave, so that nothing CI claims to test goes untested unseen.  Without
the gate a developer's machine may lack a part and skip, as the reason
says.  The counts of tests run, skipped and failed end every run.

The hooks are pytest's; ``tests/conftest.py`` takes them in, and
``tests/test_gate.py`` runs a pytest of its own over tests that skip in
every way to show that none slips through.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

GATE = "STUDYMON_REQUIRE_ALL"


def gate_set() -> bool:
    return os.environ.get(GATE) == "1"


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    if getattr(report, "wasxfail", None) is not None:
        return f"expected to fail (xfail): {report.wasxfail or 'no reason given'}"
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        path, line, reason = longrepr
        return f"{reason.removeprefix('Skipped: ')} ({path}:{line})"
    return str(longrepr)


def _fail_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    report.longrepr = f"{GATE}=1 and this skipped: {_reason(report)}"
    report.outcome = "failed"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport() -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if gate_set() and report.skipped:
        _fail_skip(report)
        if hasattr(report, "wasxfail"):
            del report.wasxfail  # else pytest files it as an xpass, not a failure


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report() -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.CollectReport = outcome.get_result()
    if gate_set() and report.skipped:
        _fail_skip(report)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    stats = terminalreporter.stats
    # Reports as the terminal filed them: a failure in setup or teardown (or collection) is an "error".
    count = {key: len(stats.get(key, [])) for key in ("passed", "failed", "error", "skipped", "xfailed", "xpassed")}
    ran = count["passed"] + count["failed"] + count["xpassed"]
    gate = f"{GATE}=1" if gate_set() else f"{GATE} not set"
    terminalreporter.write_line(
        f"studymon tests: {ran} run, {count['skipped'] + count['xfailed']} skipped, "
        f"{count['failed'] + count['error']} failed ({gate})"
    )
