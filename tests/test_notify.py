"""File-change notice: inotify and the watchfiles path (forced here, on Linux) wake their callers alike."""

from __future__ import annotations

import asyncio
import json
import os
import select
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.io import notify
from studymon.engine.io.clock import parse_rfc3339
from studymon.engine.io.notify import (
    BACKEND_ENV,
    IN_CREATE,
    IN_MOVED_TO,
    Notifier,
    chosen_backend,
    inotify_available,
)
from studymon.engine.launch.prepare import create_fresh, plan_fresh
from studymon.engine.live.supervisor import Supervisor
from tests.studies import template
from tests.waits import until

# Every test here is Linux's (inotify, /proc/self); a developer's macOS or BSD machine lacks it.  watchfiles
# is a dependency of the project, so a machine without it has a broken install: that fails, it does not skip.
pytestmark = pytest.mark.skipif(
    not inotify_available(), reason="needs Linux inotify (the engine's notice source there)"
)

# Callers wait this long at most (the session's safety wake-up); a notice must come well before.
FALLBACK_TIMEOUT = 5.0
PROMPT = 1.0  # generous: inotify takes well under a millisecond, watchfiles ~20 ms
QUIET = 0.3  # long enough for watchfiles to have handed a batch on (1-2 steps of 10 ms)


@pytest.fixture(params=["inotify", "watchfiles"])
def notifier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Notifier]:
    monkeypatch.setenv(BACKEND_ENV, request.param)  # the way an operator forces it
    with Notifier() as n:
        assert n.backend == request.param and n.active
        yield n


def _later(action: Callable[[], None], delay: float = 0.05) -> threading.Thread:
    """``action`` in another thread, ``delay`` seconds from now."""

    def writer() -> None:
        # A study writes when it writes, here a moment after the caller began to wait.  Nothing
        # waits on this sleep: the caller waits for the notice, with its deadline.
        time.sleep(delay)  # stands in for a study's own pace
        action()

    thread = threading.Thread(target=writer)
    thread.start()
    return thread


def _noticed(n: Notifier, action: Callable[[], None]) -> float:
    """Seconds from ``action`` (run in another thread) to the wake-up; fails on a timeout."""
    n.drain()
    done: list[float] = []
    thread = _later(lambda: (action(), done.append(time.monotonic())))
    try:
        assert n.wait(FALLBACK_TIMEOUT), "no notice before the fallback timeout"
        woke = time.monotonic()
    finally:
        thread.join()
    return woke - done[0]


def _append(path: Path, text: str = "a line\n") -> None:
    with open(path, "a") as fh:
        fh.write(text)


def test_an_appended_line_is_noticed(notifier: Notifier, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text("first\n")
    assert notifier.watch(tmp_path)
    for _ in range(3):
        assert _noticed(notifier, lambda: _append(ledger)) < PROMPT


def test_a_file_created_in_the_folder_is_noticed(notifier: Notifier, tmp_path: Path) -> None:
    assert notifier.watch(tmp_path)
    assert _noticed(notifier, lambda: (tmp_path / "new.jsonl").write_bytes(b"")) < PROMPT


def test_a_rename_into_the_folder_is_noticed(notifier: Notifier, tmp_path: Path) -> None:
    watched, elsewhere = tmp_path / "watched", tmp_path / "elsewhere"
    watched.mkdir()
    elsewhere.mkdir()
    (elsewhere / "ledger.jsonl").write_text("whole\n")
    # Only arrivals, as the session watches OUT for OUT/study to appear.
    assert notifier.watch(watched, IN_CREATE | IN_MOVED_TO)
    assert _noticed(notifier, lambda: os.rename(elsewhere / "ledger.jsonl", watched / "ledger.jsonl")) < PROMPT


def test_the_mask_is_honoured(notifier: Notifier, tmp_path: Path) -> None:
    """A folder watched for arrivals only is not woken by writes to its files (the engine's own, in OUT)."""
    timeline = tmp_path / "timeline.jsonl"
    timeline.write_text("")
    assert notifier.watch(tmp_path, IN_CREATE | IN_MOVED_TO)
    # The watch is live once an arrival is noticed (watchfiles' thread starts in its own time): only
    # then can a write that is not noticed show the mask, not a watch that was not there yet.
    assert _noticed(notifier, (tmp_path / "probe").mkdir) < PROMPT
    notifier.drain()
    _append(timeline)
    # The span over which the write must NOT wake it: longer than watchfiles takes to hand a batch on.
    assert not notifier.wait(QUIET)
    assert _noticed(notifier, (tmp_path / "study").mkdir) < PROMPT


def test_a_missing_folder_is_watched_once_it_exists(notifier: Notifier, tmp_path: Path) -> None:
    study = tmp_path / "study"
    assert not notifier.watch(study)
    assert notifier.watch(tmp_path)  # a second folder, then a third: all are watched
    study.mkdir()
    assert notifier.watch(study)
    assert notifier.watch(study)  # again: nothing changes
    assert _noticed(notifier, lambda: _append(study / "ledger.jsonl")) < PROMPT
    assert _noticed(notifier, lambda: _append(tmp_path / "other")) < PROMPT


def test_the_descriptor_serves_a_select_beside_others(notifier: Notifier, tmp_path: Path) -> None:
    """The process runtime's stream selects on ``fileno()`` and a stop pipe, then drains."""
    assert notifier.watch(tmp_path)
    stop_r, stop_w = os.pipe()
    try:
        thread = _later(lambda: _append(tmp_path / "segment"))
        ready, _, _ = select.select([notifier.fileno(), stop_r], [], [], FALLBACK_TIMEOUT)
        thread.join()
        assert ready == [notifier.fileno()]
        assert notifier.drain() >= 1
    finally:
        os.close(stop_r)
        os.close(stop_w)


def test_wait_async_wakes_the_loop(notifier: Notifier, tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    assert notifier.watch(tmp_path)

    async def scenario() -> float:
        notifier.drain()
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, _append, ledger)  # the writer's own pace, as in _later: nothing waits on it
        start = time.monotonic()
        assert await notifier.wait_async(FALLBACK_TIMEOUT)
        return time.monotonic() - start

    assert asyncio.run(scenario()) < PROMPT


def _tasks() -> int:
    return len(os.listdir("/proc/self/task"))


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _crate_threads() -> list[str]:
    """The notify crate's threads in this process (``notify-rs ...``): each ends shortly after its watcher is
    closed, not during, and closes its descriptors as it ends."""
    names = []
    for task in os.listdir("/proc/self/task"):
        try:
            name = (Path("/proc/self/task") / task / "comm").read_text().strip()
        except OSError:
            continue  # ended meanwhile
        if name.startswith("notify-rs"):
            names.append(name)
    return names


def _counts() -> tuple[int, int, int]:
    return threading.active_count(), _tasks(), _fds()


def _settled() -> tuple[int, int, int]:
    """Threads, tasks and descriptors, once the notify crate's threads of watchers closed before are gone."""
    until(lambda: not _crate_threads(), 5, "the notify crate's threads of closed watchers to end", seen=_crate_threads)
    return _counts()


def test_the_watchfiles_path_leaks_nothing(tmp_path: Path) -> None:
    """Its threads (ours and the notify crate's) end and its descriptors close on close."""
    before = _settled()
    for round_ in range(5):
        with Notifier("watchfiles") as n:
            assert n.watch(tmp_path)
            folder = tmp_path / f"f{round_}"
            folder.mkdir()
            assert n.watch(folder)  # a second watcher replaces the first
            assert _noticed(n, lambda f=folder: _append(f / "x")) < PROMPT
            assert any(t.name == "studymon-notify" for t in threading.enumerate())
    # A notifier never given a folder, and one closed twice.
    Notifier("watchfiles").close()
    n = Notifier("watchfiles")
    n.close()
    n.close()
    assert not any(t.name == "studymon-notify" for t in threading.enumerate())  # joined by close
    until(
        lambda: all(a <= b for a, b in zip(_counts(), before, strict=True)),
        5,
        f"(threads, tasks, fds) back to {before} or fewer",
        seen=lambda: (_counts(), _crate_threads()),
    )


def test_the_choice_of_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    assert chosen_backend() == "inotify"
    assert chosen_backend("watchfiles") == "watchfiles"
    monkeypatch.setenv(BACKEND_ENV, "watchfiles")
    assert chosen_backend() == "watchfiles"
    assert chosen_backend("inotify") == "inotify"  # the argument wins
    monkeypatch.setenv(BACKEND_ENV, "timer")
    with Notifier() as n:
        assert n.backend == "timer" and not n.active and n.fileno() == -1
        assert not n.watch(".")
        start = time.monotonic()
        assert not n.wait(0.05)
        assert time.monotonic() - start >= 0.04
    monkeypatch.setenv(BACKEND_ENV, "fsevents")
    with pytest.raises(ValueError, match="STUDYMON_NOTIFY='fsevents'"):
        Notifier()


@pytest.mark.slow
def test_a_study_is_followed_through_watchfiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference study, its ledger followed with watchfiles as the source: every record is seen
    promptly (the session's safety wake-up is 5 s apart), and the notices came from watchfiles."""
    monkeypatch.setenv(BACKEND_ENV, "watchfiles")
    notices = 0
    signal = notify._WatchfilesThread._signal

    def counted(self: notify._WatchfilesThread) -> None:
        nonlocal notices
        notices += 1
        signal(self)

    monkeypatch.setattr(notify._WatchfilesThread, "_signal", counted)
    t = template(tmp_path, backend="process", budget=20, diagnosisSeconds=2)
    specs, tpl, backend = plan_fresh([f"a={tmp_path / 'a'}"], t, [], "process")
    create_fresh(specs, tpl, backend)

    async def scenario() -> list[Any]:
        supervisor = Supervisor(lambda _event: None)
        supervisor.add(specs[0], resume=False, armed=False)
        return await asyncio.wait_for(supervisor.run(), 120)

    results = asyncio.run(scenario())
    assert results[0].finished and results[0].judgement is not None and results[0].judgement.ok is True
    out = tmp_path / "a"
    ledger = [json.loads(line) for line in (out / "study" / "ledger.jsonl").read_text().splitlines()]
    seen = [json.loads(line) for line in (out / "timeline.jsonl").read_text().splitlines()]
    assert [r["seq"] for r in seen] == [r["seq"] for r in ledger]
    lags = [parse_rfc3339(r["seenAt"]) - parse_rfc3339(r["at"]) for r in seen]
    assert max(lags) < 1.5, f"records seen up to {max(lags):.2f} s after they were written"
    assert notices > 0
