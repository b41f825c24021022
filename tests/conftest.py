"""Shared fixtures (a private process-runtime root and lock folder per test, the Docker engine), the gate,
and where each test runs when the suite is spread over several workers (``PLACES``).

CI (``.ci/run``) runs the suite in two passes: every test not marked ``serial`` on a few pytest-xdist
workers (``--dist loadgroup``), then the ``serial`` ones alone (``-m serial``).  The marks come from
``PLACES`` here, one line a test file or test, so that the whole policy reads in one place.  A plain
``python3 -m pytest -q`` runs every test, in its usual order, as before; the marks change nothing there.

A test is ``serial`` when it times something on a real clock or reads a CPU share, and so can miss its
bound beside other workers' studies on a small machine:

* the benches' quick runs that bound rates, wake-ups, phase lengths or reaction times
  (``test_bench_many_studies``, ``test_bench_screen_latency``, six of ``test_bench_smoke``'s);
  ``test_bench_load_sampling`` also counts the engine's events of its containers, read back from
  the engine's history, which other workers' containers would push out of it;
* a stream that stops within 0.2 s or 2 s, a thousand clock readings within 0.1 s, a key seen
  within 1 s by an input thread that stays asleep when idle, a frozen kill within 100 ms of its
  limit, a record seen within 1.5 s of being written, a killer that polls ledgers every 10 ms;
* ``test_study_load``'s live studies: a computing study's CPU share, the sampler's cadence;
* ``test_notify``: each notifier opens an inotify instance, of which a user has 128; beside other workers'
  consoles of many studies they ran out once (the notifier fell back to its timer, "Too many open files");
* sixteen studies killed at their points on Docker at once: each kill inspects its containers while
  the controller is frozen, and an engine slowed by other workers' studies misses the freeze limit
  (the kill then stops the study, as ``test_kill_faults`` shows, and the mistake goes unjudged).

Also ``serial``: the flood of volume events that overflows the shared Docker engine's 256-event
memory on purpose (anything reading that history beside it would lose events), and the snapshot
tests, since syrupy checks for unused snapshots only outside of a parallel run.

A group's tests run on one worker, one after the other:

* ``explore-acceptance``: each test runs several campaigns, each on a local Dask cluster; two
  tests' campaigns side by side would starve the studies their kills aim at;
* ``demo-tmux``: the quick start's ``studymon demo`` and the tmux demo on Docker both run
  ``inforsi-alpha``, ``-beta`` and ``-gamma`` on the same engine (a second would be refused, or
  remove the first's containers as leftovers); with them the other tests that send a kill by key
  through tmux, one key-to-kill window at a time;
* ``second-engine``: the tests that start a Docker engine of their own, one at a time;
* ``study-a-on-docker``: the console's tests and the three studies' test run studies named ``a`` on
  Docker; the engine knows a study's containers by its id (the ``studymon.study`` label), not by
  their prefix, so a judge would count the other test's ``a`` as work done again in its window;
* ``corpus-real``, ``follow``, ``oracle``: the module's fixture runs a real study, once, not once per worker.

The workers take the groups in the order of ``PLACES``, the longest first, then the other tests.
A worker runs with ``COLUMNS=80`` and ``LINES=24`` in its environment, which a plain run does not
have: Textual would take them for the size of any terminal the tests start (a tmux pane of 160 x 48),
so the workers drop them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture(autouse=True)
def every_sound_folder_passes_the_oracle(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that used ``tmp_path``: each study folder it left there that the product judges sound, the
    oracle judges sound too (``tests/sound_folders.py``)."""
    root = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if root is None:
        return
    from tests.sound_folders import oracle_disagrees

    said = oracle_disagrees(root)
    assert not said, "a sound folder the oracle fails:\n" + "\n".join(said)


SERIAL = "serial"
PLACES = {
    # Groups, the longest first.
    # The explorer's two acceptance tests in two groups: one after the other they were half of the parallel
    # pass on one worker; apart, each holds a worker for about five minutes while the others share the rest.
    "tests/test_explore_acceptance.py::test_each_broken_double_is_found_at_its_own_class_and_the_seed_s_point_finds_none": "explore-broken",
    "tests/test_explore_acceptance.py::test_the_honest_double_and_the_reference_study_hold_at_every_class": "explore-honest",
    "tests/test_quickstart.py": "demo-tmux",
    "tests/test_e2e_tmux.py": "demo-tmux",
    "tests/test_overview_tmux.py": "demo-tmux",
    "tests/test_explore_tmux.py": "demo-tmux",
    "tests/test_console.py": "study-a-on-docker",
    "tests/test_studies.py::test_three_studies_on_docker_one_armed": "study-a-on-docker",
    "tests/test_corpus_real.py": "corpus-real",
    "tests/test_engine_faults.py::test_the_stream_tells_a_restarted_engine_once_however_long_it_was_away": "second-engine",
    "tests/test_engine_faults.py::test_an_engine_restart_inside_the_kill_window_is_never_a_pass": "second-engine",
    "tests/test_engine_faults.py::test_the_reference_study_rides_out_an_engine_outage_and_past_its_patience_stops_to_be_resumed": "second-engine",
    "tests/test_follow.py": "follow",
    "tests/fuzz/test_fuzz.py": "fuzz",  # its seeds (real studies, ~30 s) are made once, on one worker
    "tests/test_held_twice.py": "held-twice",  # the module's fixture runs its studies and a campaign once
    "tests/test_marker.py": "marker",  # its fixtures run the reference study and a campaign once, not once per worker
    "tests/test_campaign_report.py": "campaign-report",  # the module's fixture runs a campaign once
    "tests/oracle/test_oracle.py": "oracle",
    # Alone.
    "tests/test_bench_many_studies.py": SERIAL,
    "tests/test_bench_screen_latency.py": SERIAL,
    "tests/test_bench_load_sampling.py": SERIAL,
    "tests/test_bench_smoke.py::test_kill_reaction_quick_measures_the_kills_its_studies_show": SERIAL,
    "tests/test_bench_smoke.py::test_kill_under_load_quick_measures_the_kills_its_studies_show": SERIAL,
    "tests/test_bench_smoke.py::test_console_load_quick_measures_what_it_was_asked_to": SERIAL,
    "tests/test_bench_smoke.py::test_first_frame_quick_times_the_trials_it_was_asked_for": SERIAL,
    "tests/test_bench_smoke.py::test_notify_latency_quick_times_every_append_it_wrote": SERIAL,
    "tests/test_bench_smoke.py::test_point_reaction_quick_shows_what_its_kills_measured": SERIAL,
    "tests/test_process_state.py::test_the_stream_returns_at_once_when_stopped": SERIAL,
    "tests/test_runtimes.py::test_docker_answers_and_clock": SERIAL,
    "tests/test_docker_hygiene.py::test_closing_a_runtime_ends_its_stream": SERIAL,
    "tests/test_driver.py::test_idle_input_thread_sleeps_and_keys_escape_and_closing_stay_prompt": SERIAL,
    "tests/test_kill_faults.py::test_an_inspect_fault_while_frozen_still_kills_stops_with_3_and_the_resume_finishes": SERIAL,
    "tests/test_notify.py": SERIAL,
    "tests/test_kill_points.py::test_ends_studymon_did_not_make_are_judged_as_kills": SERIAL,
    "tests/test_kill_points.py::test_each_mistake_passes_at_the_seed_s_point_and_fails_at_its_own[docker]": SERIAL,
    "tests/test_study_load.py::test_a_computing_study_and_a_sleeping_one_differ_in_their_load_on_the_process_runtime": SERIAL,
    "tests/test_study_load.py::test_a_computing_study_and_a_sleeping_one_differ_in_their_load_on_docker": SERIAL,
    "tests/test_study_load.py::test_docker_runs_are_read_from_their_cgroup_else_through_the_engine": SERIAL,
    "tests/test_study_load.py::test_samples_come_every_four_and_a_half_seconds_unless_a_graph_is_shown": SERIAL,
    "tests/test_kill_live.py::test_rerun_is_caught_under_an_event_flood_on_docker": SERIAL,
    "tests/test_snapshots.py": SERIAL,
    "tests/test_snapshots_timeline.py": SERIAL,
    "tests/test_overview.py::test_snapshot_the_overview_while_studies_run": SERIAL,
    "tests/test_overview.py::test_snapshot_the_overview_sorted_by_state_and_filtered": SERIAL,
}


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: the environment of a plain run
        for name in ("COLUMNS", "LINES"):
            os.environ.pop(name, None)


def _place(item: pytest.Item) -> str | None:
    """The one entry of ``PLACES`` the test is under (a file, a test, or all of a test's parameters), if any."""
    nodeid = item.nodeid
    places = [key for key in PLACES if nodeid == key or nodeid.startswith((f"{key}::", f"{key}["))]
    if len(places) > 1:
        raise pytest.UsageError(f"{nodeid} is under {places} in tests/conftest.py: one place a test")
    return PLACES[places[0]] if places else None


def stale_places(places: Iterable[str], modules: dict[str, Any], collected: set[str], args: list[str]) -> list[str]:
    """What is wrong with each place that names no test: a file, a test or a parameter that is not there.

    ``modules``: the collected test modules by path; ``collected``: the node ids collected; ``args``: the command
    line's.  A parameter is looked for only in a module collected whole (none of its tests named in ``args``).
    """
    whole = {path for path in modules if not any(a.startswith(f"{path}::") for a in args)}
    said = []
    for key in places:
        path, _, name = key.partition("::")
        name = name.split("::")[0].split("[")[0]  # the test function, or its class
        if not (ROOT / path).is_file() or (name and path in modules and not hasattr(modules[path], name)):
            said.append(f"tests/conftest.py places {key}, and there is no such test")
        elif "[" in key and path in whole and key not in collected:  # a parameter renamed or dropped
            said.append(f"tests/conftest.py places {key}, and there is no such parameter")
    return said


@pytest.hookimpl(tryfirst=True)  # before -m reads the marks, and before xdist makes a group part of the node id
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    modules = {item.nodeid.split("::")[0]: item.module for item in items if isinstance(item, pytest.Function)}
    stale = stale_places(PLACES, modules, {item.nodeid for item in items}, [str(a) for a in config.args])
    if stale:  # a test renamed or removed would otherwise leave its place unseen
        raise pytest.UsageError(stale[0])
    order = list(dict.fromkeys(PLACES.values()))
    rank: dict[str, int] = {}
    for item in items:
        place = _place(item)
        if place == SERIAL:
            item.add_marker(pytest.mark.serial)
        if place is not None:
            item.add_marker(pytest.mark.xdist_group(place))  # serial ones too: one at a time under a bare -n
        rank[item.nodeid] = order.index(place) if place is not None else len(order)
    if hasattr(config, "workerinput"):  # an xdist worker: the order it reports is the order work is handed out in
        items.sort(key=lambda item: rank[item.nodeid])
