"""Breaks made by hand, each of which once passed every test: each now fails a fast test of its own.

Each entry changes one place of the product the way a plausible mistake would (a filter that ignores its value,
a kill that skips its identity check, a retry never made...) in a copy of the repository, and runs the one test
that must catch it, in under a minute; the test must fail there.  Mutation testing covers the same ground by the
thousand (docs/mutation.md); these are the breaks an audit made, kept so that none can come back unseen.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("engine", "tui", "widgets", "refstudy")


@dataclass(frozen=True)
class Break:
    name: str
    path: str  # a file of the repository
    old: str  # the text that must be there once
    new: str
    test: str  # the node id that must fail


BREAKS = [
    Break("ps-label-value-ignored", "engine/runtimes/shapes.py",
          "if key not in labels or (eq and labels[key] != value):", "if key not in labels:",
          "tests/test_runtime_filters.py::test_each_ps_filter_keeps_what_it_names"),
    Break("ps-exited-code-ignored", "engine/runtimes/shapes.py",
          '"exited": lambda v: st["Status"] == "exited" and int(st["ExitCode"]) == int(v),',
          '"exited": lambda v: st["Status"] == "exited",',
          "tests/test_runtime_filters.py::test_each_ps_filter_keeps_what_it_names"),
    Break("inspect-ambiguous-prefix-picks-one", "engine/runtimes/cli.py",
          "    if len(matches) > 1:\n", "    if len(matches) > 99:\n",
          "tests/test_runtime_filters.py"),
    Break("overview-armed-field-matches-nothing", "widgets/summary.py",
          '"armed": "yes" if self.armed else "no",', '"armed": "",',
          "tests/test_overview.py::test_every_query_field_reads_what_the_events_said"),
    Break("overview-flight-field-matches-nothing", "widgets/summary.py",
          '"flight": str(self.in_flight),', '"flight": "",',
          "tests/test_overview.py::test_every_query_field_reads_what_the_events_said"),
    Break("overview-filter-not-applied-again", "widgets/overview.py",
          'if not self.paused and (self.sort not in ("order", "id") or self.filter_query.terms):',
          'if not self.paused and (self.sort not in ("order", "id")):',
          "tests/test_overview.py::test_a_filter_is_applied_again_as_rows_change_and_once_more_after_a_pause"),
    Break("explore-depth-dropped", "tui/cli.py",
          "options.max_trials, options.all_points, options.depth = args.max_trials, args.all_points, args.depth",
          "options.max_trials, options.all_points = args.max_trials, args.all_points",
          "tests/test_explore_logic.py::test_the_command_line_s_depth_all_and_max_trials_reach_the_campaign"),
    Break("trial-arms-its-first-point-only", "engine/explore/trial.py",
          'for point in task["points"]:', 'for point in task["points"][:1]:',
          "tests/test_explore_logic.py::test_a_trial_arms_every_one_of_its_points_in_order"),
    Break("worker-ignores-a-missed-point", "engine/explore/trial.py",
          'result["missed"] = missed_points(out)', 'result["missed"] = []',
          "tests/test_explore_logic.py::test_a_trial_s_outcome_is_its_report_s_verdict_and_its_missed_points"),
    Break("explorer-never-retries", "engine/explore/explorer.py",
          "            return self._next_candidate(trial)\n", "            return None\n",
          "tests/test_explore_logic.py::test_a_missed_point_is_tried_again_at_its_class_s_next_candidate_up_to_the_limit"),
    Break("report-exit-3-for-a-fail", "tui/cli.py",
          "    return exit_status([j.ok for j in judgements])",
          "    return 3 if any(not j.finished for j in judgements) else exit_status([j.ok for j in judgements])",
          "tests/test_bad_input.py::test_a_failed_check_in_a_study_that_has_not_finished_is_exit_1_not_3"),
    Break("kill-without-identity-check", "engine/launch/launcher.py",
          "        if not self.is_same_process():\n            return False\n        try:\n            os.killpg",
          "        try:\n            os.killpg",
          "tests/test_kill_driver.py::test_a_controller_that_is_not_the_one_started_is_never_signalled"),
    Break("sigkill-before-the-snapshot", "engine/kill/protocol.py",
          "        try:\n            return _inspect_many(self.runtime, names)\n        finally:\n            self._sigkill()",
          "        self._sigkill()\n        return _inspect_many(self.runtime, names)",
          "tests/test_kill_driver.py::test_a_manual_kill_freezes_reads_snapshots_then_kills_and_resumes"),
    Break("moment-passed-not-seen", "engine/kill/protocol.py",
          "        self.missed = passed() if passed is not None else None", "        self.missed = None",
          "tests/test_kill_driver.py::test_a_moment_passed_under_the_freeze_is_missed_and_the_controller_let_go"),
    Break("shim-killed-by-the-makers-group-signal", "engine/runtimes/process.py",
          "blocked = signal.pthread_sigmask(signal.SIG_BLOCK, GROUP_SIGNALS)",
          "blocked = signal.pthread_sigmask(signal.SIG_BLOCK, set())",
          "tests/test_group_signals.py"),
    Break("overview-arrows-scroll-instead-of-moving", "widgets/overview.py",
          "class OverviewRows(ScrollView, can_focus=True, inherit_bindings=False):",
          "class OverviewRows(ScrollView, can_focus=True):",
          "tests/test_overview.py::test_the_cursor_is_always_on_screen_and_an_end_the_console_saw_is_on_its_row"),
    Break("thread-callbacks-outside-the-app", "engine/io/loopcall.py",
          "self.loop.call_soon_threadsafe(callback, *args, context=self.context)",
          "self.loop.call_soon_threadsafe(callback, *args)",
          "tests/test_overview.py::test_container_events_from_the_engine_s_thread_leave_a_console_that_quits_clean"),
    Break("a-room-imports-one-above-it", "engine/io/quoting.py",
          "from studymon.engine.io.safefile import type_name",
          "from studymon.engine.io.safefile import type_name\nfrom studymon.engine.judge.table import MARKS  # noqa: F401",
          "tests/test_engine_import.py::test_the_engine_s_rooms_import_one_way_down"),
    Break("a-widget-imports-past-the-engine-s-face", "widgets/verdicts.py",
          "from studymon.engine import DETAIL_LIMIT, Check, free_text",
          "from studymon.engine import Check\nfrom studymon.engine.io.quoting import DETAIL_LIMIT, free_text",
          "tests/test_engine_import.py::test_the_front_ends_import_the_engine_s_face_alone"),
]


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository whose ``studymon`` folder is the whole package (its parts linked in), so that the
    tests, and the commands they start with the copy on ``PYTHONPATH``, import the copy."""
    repo = tmp_path_factory.mktemp("breaks") / "repo"
    ignore = shutil.ignore_patterns("__pycache__")
    for part in (*PARTS, "tests", "bench"):
        shutil.copytree(ROOT / part, repo / part, ignore=ignore)
    shutil.copytree(ROOT / "studymon", repo / "studymon", ignore=shutil.ignore_patterns("__pycache__", *PARTS))
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    for part in PARTS:
        (repo / "studymon" / part).symlink_to(repo / part)
    return repo


def _run(repo: Path, *tests: str) -> subprocess.CompletedProcess[str]:
    boot = (f"import sys; sys.path[:0] = [{str(repo)!r}]; "
            "import studymon.engine, pytest; sys.exit(pytest.main(sys.argv[1:]))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST_")}
    env["PYTHONPATH"] = str(repo)
    return subprocess.run([sys.executable, "-P", "-c", boot, *tests, "-q", "-x", "-p", "no:randomly",
                           "-p", "no:cacheprovider"], cwd=repo, env=env, capture_output=True, text=True, timeout=300)


def test_the_copy_imports_itself_and_passes_every_test_unbroken(copy: Path) -> None:
    """Else a break would be "caught" by a copy that does not work at all, or not caught by one that runs the
    repository's own code."""
    import_path = subprocess.run(
        [sys.executable, "-P", "-c", "import studymon.engine.kill.protocol as k, studymon.tui.cli as c; print(k.__file__, c.__file__)"],
        cwd=copy, env={**os.environ, "PYTHONPATH": str(copy)}, capture_output=True, text=True, check=True)
    assert import_path.stdout.split() == [str(copy / "studymon" / "engine" / "kill" / "protocol.py"),
                                          str(copy / "studymon" / "tui" / "cli.py")], import_path.stdout
    proc = _run(copy, *sorted({b.test for b in BREAKS}))
    assert proc.returncode == 0, proc.stdout[-3000:]


@pytest.mark.parametrize("brk", BREAKS, ids=[b.name for b in BREAKS])
def test_each_break_fails_its_fast_test(copy: Path, brk: Break) -> None:
    path = copy / brk.path
    text = path.read_text()
    assert text.count(brk.old) == 1, f"{brk.path} no longer holds the text {brk.name} changes: update the break"
    path.write_text(text.replace(brk.old, brk.new))
    try:
        began = time.monotonic()
        proc = _run(copy, brk.test)
        took = time.monotonic() - began
    finally:
        path.write_text(text)
    assert proc.returncode == 1 and " failed" in proc.stdout, f"{brk.name} passed {brk.test}:\n{proc.stdout[-2000:]}"
    # A fast test: seconds on an idle machine; the bound leaves room for a CI machine running three workers.
    assert took < 60, f"{brk.test} took {took:.0f} s to catch {brk.name}"
