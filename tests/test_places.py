"""The places tests/conftest.py gives tests (a group of one worker, or alone) name tests that are there."""

from __future__ import annotations

import pytest

import tests.test_kill_points as points
from tests.conftest import PLACES, stale_places

KILL_POINTS = "tests/test_kill_points.py"
EACH = f"{KILL_POINTS}::test_each_mistake_passes_at_the_seed_s_point_and_fails_at_its_own"
MODULES = {KILL_POINTS: points}
COLLECTED = {f"{EACH}[process]", f"{EACH}[docker]"}


@pytest.mark.parametrize(("key", "said"), [
    (f"{EACH}[docker]", None),
    (EACH, None),
    (KILL_POINTS, None),
    (f"{EACH}[podman]", "no such parameter"),  # renamed, or never there
    (f"{KILL_POINTS}::test_that_was_renamed", "no such test"),
    ("tests/test_moved_away.py", "no such test"),
])
def test_a_place_must_name_a_file_a_test_and_a_parameter_that_are_there(key: str, said: str | None) -> None:
    found = stale_places([key], MODULES, COLLECTED, [KILL_POINTS])
    assert found == ([] if said is None else [f"tests/conftest.py places {key}, and there is {said}"])


def test_a_parameter_is_looked_for_only_when_its_module_was_collected_whole() -> None:
    """``pytest tests/test_kill_points.py::test_x[process]`` collects one parameter: the other's place is not stale."""
    one = {f"{EACH}[process]"}
    assert stale_places([f"{EACH}[docker]"], MODULES, one, [f"{EACH}[process]"]) == []
    assert stale_places([f"{EACH}[docker]"], MODULES, one, [KILL_POINTS]) != []


def test_every_place_of_today_names_what_is_there() -> None:
    """What the hook checks at every collection, over this one's modules: at least the places are well formed."""
    assert all(isinstance(v, str) and v for v in PLACES.values())
    assert stale_places([k for k in PLACES if k.startswith(KILL_POINTS)], MODULES,
                        COLLECTED | {f"{KILL_POINTS}::{n}" for n in dir(points) if n.startswith("test_")},
                        [KILL_POINTS]) == []
