"""How the judge reads a runtime restart recorded beside a kill's live recording (``runtime-restarts.jsonl``).

Folders built from the corpus's sound study; the recorder that writes the
file, and whole studies whose engine restarts inside a kill's window, are
``tests/test_engine_faults.py``'s.  Fast and pure, so that mutation testing
of the judge (docs/mutation.md) runs them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.io.clock import rfc3339_ms
from studymon.engine.judge import judge
from tests.corpus import D1, add_event, container, derive, event, in_window, sound, window, write

RESTARTS_FILE = "runtime-restarts.jsonl"
RESTARTED = "the Docker engine restarted"


def restart_line(start: float, end: float, **extra: Any) -> dict[str, Any]:
    return {"runtime": "docker", "before": {"pid": 10, "started": 1}, "after": {"pid": 20, "started": 2},
            "from": rfc3339_ms(start), "to": rfc3339_ms(end), "seenAt": rfc3339_ms(end + 1), **extra}


def judged(tmp_path: Path, files: dict[str, Any]) -> Any:
    return {(c.scope, c.name): c for c in judge(write(files, tmp_path / "o")).checks}


def with_restart(at: float = 0.2) -> dict[str, Any]:
    """The sound study's folder, its kill 1 recording a restart (and its gap) ``at`` of the way into the window."""
    files = derive(sound())
    start, end = in_window(files, 1, at), in_window(files, 1, at + 0.05)
    files["kills/1/container-events-live.jsonl"].insert(
        1, {"gap": {"from": rfc3339_ms(start), "to": rfc3339_ms(end)}})
    files[f"kills/1/{RESTARTS_FILE}"] = [restart_line(start, end)]
    return files


def test_a_recorded_restart_is_said_first_and_is_never_a_pass(tmp_path: Path) -> None:
    check = judged(tmp_path, with_restart())[(D1, "sameContainerNoRerun")]
    assert check.ok is None
    assert check.detail.startswith(f"{RESTARTED} between "), check.detail
    assert check.detail.endswith("; the live recording has 1 gap in the window"), check.detail


def test_a_restart_alone_makes_the_check_unknown(tmp_path: Path) -> None:
    files = with_restart()
    files["kills/1/container-events-live.jsonl"].pop(1)  # the gap line, removed by hand
    check = judged(tmp_path, files)[(D1, "sameContainerNoRerun")]
    assert check.ok is None and check.detail.startswith(RESTARTED), check


def test_a_restart_is_said_before_the_failures_it_explains(tmp_path: Path) -> None:
    files = with_restart()
    add_event(files, 1, event("kill", container("d1"), in_window(files, 1, 0.4), signal="15"))
    check = judged(tmp_path, files)[(D1, "sameContainerNoRerun")]
    assert check.ok is False
    assert check.detail.startswith(RESTARTED) and "kill of inforsi-s-d1" in check.detail, check.detail


def test_a_restart_after_the_targets_result_but_in_the_window_is_said_and_one_after_it_is_not(tmp_path: Path) -> None:
    """v3 §6.4: the target's story is the whole window, not only up to its result."""
    files = derive(sound())
    seen = window(files, 1)["targets"]["d1"]["resultSeenEpoch"]
    files[f"kills/1/{RESTARTS_FILE}"] = [restart_line(seen + 0.01, seen + 0.02)]
    check = judged(tmp_path / "a", files)[(D1, "sameContainerNoRerun")]
    assert check.ok is None and check.detail.startswith(RESTARTED), check
    until = window(files, 1)["untilEpoch"]
    files[f"kills/1/{RESTARTS_FILE}"] = [restart_line(until + 0.01, until + 0.02)]
    assert judged(tmp_path / "b", files)[(D1, "sameContainerNoRerun")].ok is True


@pytest.mark.parametrize("line", [
    "not json",
    [1, 2],
    {"runtime": "podman", "from": "2026-11-30T00:00:00.000Z", "to": "2026-11-30T00:00:01.000Z"},
    {"runtime": "docker", "from": "yesterday", "to": "2026-11-30T00:00:01.000Z"},
    {"runtime": "docker", "from": "2026-11-30T00:00:02.000Z", "to": "2026-11-30T00:00:01.000Z"},
])
def test_a_line_that_is_not_a_restart_fails_the_check_without_quoting_it(tmp_path: Path, line: Any) -> None:
    files = derive(sound())
    files[f"kills/1/{RESTARTS_FILE}"] = [line]
    check = judged(tmp_path, files)[(D1, "sameContainerNoRerun")]
    assert check.ok is False and f"{RESTARTS_FILE} line 1" in check.detail, check
    assert "podman" not in check.detail and "yesterday" not in check.detail


def test_an_unreadable_restarts_file_fails_the_check(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "o")
    os.mkfifo(out / "kills" / "1" / RESTARTS_FILE)
    check = {(c.scope, c.name): c for c in judge(out).checks}[(D1, "sameContainerNoRerun")]
    assert check.ok is False and check.detail == f"{RESTARTS_FILE}: not a regular file (a FIFO)", check


def test_a_restarts_line_that_is_not_json_says_so(tmp_path: Path) -> None:
    files = derive(sound())
    files[f"kills/1/{RESTARTS_FILE}"] = ["not json"]
    check = judged(tmp_path, files)[(D1, "sameContainerNoRerun")]
    assert check.ok is False and check.detail == f"{RESTARTS_FILE} line 1: not JSON", check


def test_a_restart_is_said_in_full_with_its_times(tmp_path: Path) -> None:
    files = with_restart()
    [line] = files[f"kills/1/{RESTARTS_FILE}"]
    check = judged(tmp_path, files)[(D1, "sameContainerNoRerun")]
    assert check.detail.startswith(
        f"{RESTARTED} between {line['from']} and {line['to']}: what it did to the containers then is not in "
        "the live recording; "), check.detail


def test_a_restart_of_no_time_at_all_is_a_restart(tmp_path: Path) -> None:
    """``from`` equal to ``to`` (the engine was away for less than the clock tells): still a restart."""
    files = derive(sound())
    at = in_window(files, 1, 0.2)
    files[f"kills/1/{RESTARTS_FILE}"] = [restart_line(at, at)]
    check = judged(tmp_path, files)[(D1, "sameContainerNoRerun")]
    assert check.ok is None and check.detail.startswith(RESTARTED), check


@pytest.mark.parametrize(("line", "why"), [
    ([1, 2], "a list, not a runtime restart"),
    ({"runtime": "docker", "from": "2026-11-30T00:00:00.000Z", "to": 5}, "not a runtime restart (runtime, from, to)"),
    ({"runtime": "docker", "from": 5, "to": "2026-11-30T00:00:00.000Z"}, "not a runtime restart (runtime, from, to)"),
])
def test_a_line_that_is_not_a_restart_is_named_with_why(tmp_path: Path, line: Any, why: str) -> None:
    files = derive(sound())
    files[f"kills/1/{RESTARTS_FILE}"] = [line]
    check = judged(tmp_path, files)[(D1, "sameContainerNoRerun")]
    assert check.ok is False and f"{RESTARTS_FILE} line 1: {why}" in check.detail, check


@pytest.mark.parametrize(("count", "more"), [(3, ""), (4, " (and 1 more restart)"), (5, " (and 2 more restarts)")])
def test_many_restarts_are_counted_past_the_ones_shown(tmp_path: Path, count: int, more: str) -> None:
    """Three restarts are said, the last of them with the count of any others."""
    files = derive(sound())
    times = [(in_window(files, 1, 0.1 + 0.05 * i), in_window(files, 1, 0.12 + 0.05 * i)) for i in range(count)]
    files[f"kills/1/{RESTARTS_FILE}"] = [restart_line(start, end) for start, end in times]
    check = judged(tmp_path, files)[(D1, "sameContainerNoRerun")]
    assert check.ok is None, check
    said = [part for part in check.detail.split("; ") if part.startswith(RESTARTED)]
    assert [part.split(" between ")[1].split(" and ")[0] for part in said] == [rfc3339_ms(s) for s, _ in times[:3]]
    assert said[-1].endswith(f"the live recording{more}"), said
    assert not said[0].endswith(")") and not said[1].endswith(")"), said


def test_a_restart_that_began_as_the_result_was_seen_is_said(tmp_path: Path) -> None:
    """The result seen in the very millisecond the restart began: the restart may have touched the run."""
    files = derive(sound())
    seen = round(window(files, 1)["targets"]["d1"]["resultSeenEpoch"], 3)
    files["kills/1/container-events-window.json"]["targets"]["d1"]["resultSeenEpoch"] = seen
    files[f"kills/1/{RESTARTS_FILE}"] = [restart_line(seen, seen + 0.01)]
    check = judged(tmp_path, files)[(D1, "sameContainerNoRerun")]
    assert check.ok is None and check.detail.startswith(RESTARTED), check
