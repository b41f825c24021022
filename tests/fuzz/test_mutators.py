"""The fuzzer's own parts on a small folder written here: JSON written back byte for byte, times moved in their
own shape, each mutator changing a copy and only a copy, recipes that replay.

Fast and without studies; ``test_fuzz.py`` runs the same parts on real seeds.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.fuzz import jsontext as js
from tests.fuzz.index import fingerprint
from tests.fuzz.mutators import CAPS, MUTATORS, NoChange, mutated, outside_of, tweak
from tests.fuzz.recipe import Recipe, Step, apply

LEDGER = [
    {"seq": 1, "at": "2026-12-01T10:00:00.000Z", "kind": "studyOpen", "content": {"study": "s", "budget": 20}},
    {
        "seq": 2,
        "at": "2026-12-01T10:00:01.250Z",
        "kind": "charge",
        "content": {"run": "d1", "amount": 10, "balance": 10},
    },
    {"seq": 3, "at": "2026-12-01T10:00:02.500Z", "kind": "runStarted", "content": {"run": "d1", "container": "p-s-d1"}},
]
SNAPSHOT = {
    "p-s-d1": {
        "Id": "ab" * 32,
        "Name": "/p-s-d1",
        "State": {"Status": "running", "StartedAt": "2026-12-01T10:00:02.123456789Z"},
    }
}
EVENT = {
    "status": "die",
    "id": "ab" * 32,
    "Type": "container",
    "Action": "die",
    "Actor": {"ID": "ab" * 32, "Attributes": {"exitCode": "0", "name": "p-s-d1"}},
    "time": 1796119203,
    "timeNano": 1796119203500000000,
    "seenAt": "2026-12-01T10:00:03.501Z",
}


def _write(folder: Path) -> Path:
    """A folder shaped as an evidence folder: a ledger, a JSON file, a JSON list, two kill folders."""
    (folder / "study").mkdir(parents=True)
    (folder / "study" / "ledger.jsonl").write_text("".join(json.dumps(r) + "\n" for r in LEDGER))
    (folder / "research.json").write_text(json.dumps({"study": "s", "containerPrefix": "p"}, indent=2) + "\n")
    for n in (1, 2):
        kill = folder / "kills" / str(n)
        kill.mkdir(parents=True)
        (kill / "kill.json").write_text(json.dumps({"pid": 100 + n, "at": "2026-12-01T10:00:02.600Z"}, indent=2) + "\n")
        (kill / "container-before.json").write_text(json.dumps(SNAPSHOT, indent=2) + "\n")
        (kill / "ledger-at-kill.json").write_text(json.dumps(LEDGER[:2], indent=2) + "\n")
        (kill / "container-events-live.jsonl").write_text(json.dumps(EVENT) + "\n")
    return folder


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return _write(tmp_path / "seed")


def test_json_is_written_back_as_it_was_and_a_repeated_key_is_written_twice() -> None:
    value = {"a": [1, {"b": "é", "c": []}], "d": {}, "e": 1.5, "f": None}
    for layout in js.LAYOUTS:
        text = json.dumps(value, indent=layout.indent, ensure_ascii=layout.ascii) + ("\n" if layout.newline else "")
        assert js.file_text(value, layout) == text
        assert js.layout_of(text) == layout
    assert js.dumps(js.Repeated({"seq": 2, "kind": "x"}, "seq", 1)) == '{"seq": 1, "seq": 2, "kind": "x"}'
    assert json.loads(js.dumps(js.Repeated({"seq": 2}, "seq", 1))) == {"seq": 2}  # what a last-wins reader sees


@pytest.mark.parametrize(
    ("value", "key", "seconds", "moved"),
    [
        ("2026-12-01T10:00:00.000Z", "at", -0.001, "2026-12-01T09:59:59.999Z"),
        ("2026-12-01T10:00:00.000Z", "at", 86400.0, "2026-12-02T10:00:00.000Z"),
        ("2026-12-01T10:00:02.123456789Z", "StartedAt", 1.001, "2026-12-01T10:00:03.124456789Z"),
        ("2026-12-01t10:00:00+00:00", "at", 0.5, "2026-12-01t10:00:00+00:00"),  # no fraction digits to hold it
        ("2026-12-01T10:00:00Z", "at", 1e12, "2026-12-01T10:00:00Z"),  # past year 9999: left as it was
        (1796119203500000000, "timeNano", 0.001, 1796119203501000000),
        (1796119203, "time", 0.5, 1796119204),
        (1796119203, "time", -0.5, 1796119202),
        (1796119203.25, "sinceEpoch", -1.0, 1796119202.25),
    ],
)
def test_a_time_moves_in_its_own_shape(value: Any, key: str, seconds: float, moved: Any) -> None:
    assert js.shift_time(value, key, seconds) == moved
    assert type(js.shift_time(value, key, seconds)) is type(value)


def test_tweak_keeps_a_value_s_shape() -> None:
    assert tweak("d1") == "d2"
    assert tweak("d9") == "d0"
    assert tweak("ab" * 32)[-1] == "c"
    assert tweak("--") == "--0"


# One set of parameters per mutator, each of which changes the small folder.
CHANGES: list[tuple[str, dict[str, Any]]] = [
    ("shift_time", {"file": "study/ledger.jsonl", "line": 1, "path": ["at"], "seconds": -1.0}),
    ("set_value", {"file": "study/ledger.jsonl", "line": 1, "path": ["content", "amount"], "how": "inc", "pick": 0}),
    ("set_value", {"file": "kills/1/kill.json", "line": None, "path": ["pid"], "how": "other", "pick": 0}),
    ("repeat_key", {"file": "study/ledger.jsonl", "line": 2, "path": ["seq"], "variant": "first"}),
    ("drop_line", {"file": "study/ledger.jsonl", "line": 1}),
    ("duplicate_line", {"file": "kills/1/ledger-at-kill.json", "line": 1, "to": 0}),
    ("swap_lines", {"file": "study/ledger.jsonl", "i": 0, "j": 2}),
    ("move_line", {"file": "study/ledger.jsonl", "line": 2, "to_file": "kills/1/ledger-at-kill.json", "to": 2}),
    ("reencode", {"file": "study/ledger.jsonl", "line": 1, "how": "invalid"}),
    ("swap_folders", {"a": "kills/1", "b": "kills/2"}),
    ("link_folder", {"folder": "kills/2", "to": "outside"}),
    ("special", {"file": "study/ledger.jsonl", "kind": "fifo"}),
    ("symlink", {"file": "research.json", "to": "outside"}),
    ("grow", {"file": "kills/1/kill.json", "over": 1, "fill": "spaces"}),
    ("truncate", {"file": "study/ledger.jsonl", "keep": "mid-last-line"}),
    ("delete", {"path": "kills/2"}),
]


def test_every_mutator_has_a_case_here() -> None:
    assert {name for name, _ in CHANGES} == set(MUTATORS)


@pytest.mark.parametrize(("name", "params"), CHANGES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CHANGES)])
def test_a_mutator_changes_a_copy_only_and_the_same_way_twice(
    folder: Path, tmp_path: Path, name: str, params: dict[str, Any]
) -> None:
    before = fingerprint(folder)
    one = mutated(folder, name, params, tmp_path / "one" / "seed")
    two = mutated(folder, name, params, tmp_path / "two" / "seed")
    assert fingerprint(folder) == before, "the seed was changed"
    assert fingerprint(one) != before, "the copy was not changed"
    assert fingerprint(one) == fingerprint(two), "the same recipe made two different mutants"


def test_what_the_mutators_make_is_what_they_say(folder: Path, tmp_path: Path) -> None:
    def made(name: str, **params: Any) -> Path:
        return mutated(folder, name, params, tmp_path / f"m{len(list(tmp_path.iterdir()))}" / "seed")

    out = made("special", file="study/ledger.jsonl", kind="fifo")
    assert stat.S_ISFIFO(os.lstat(out / "study" / "ledger.jsonl").st_mode)
    out = made("symlink", file="research.json", to="outside")
    target = Path(os.readlink(out / "research.json"))
    assert target.is_absolute() and outside_of(out) in target.parents
    assert target.read_bytes() == (folder / "research.json").read_bytes()  # what a judge following it would read
    out = made("grow", file="kills/1/kill.json", over=0, fill="spaces")
    assert (out / "kills/1/kill.json").stat().st_size == CAPS["kill.json"]
    assert json.loads((out / "kills/1/kill.json").read_text()) == json.loads((folder / "kills/1/kill.json").read_text())
    out = made("reencode", file="research.json", line=None, how="utf16")
    assert json.loads((out / "research.json").read_bytes().decode("utf-16"))["study"] == "s"
    out = made("repeat_key", file="kills/1/kill.json", line=None, path=["pid"], variant="last")
    text = (out / "kills/1/kill.json").read_text()
    assert text.count('"pid"') == 2 and json.loads(text)["pid"] == 102
    out = made("truncate", file="study/ledger.jsonl", keep="no-newline")
    assert (out / "study/ledger.jsonl").read_bytes() == (folder / "study/ledger.jsonl").read_bytes()[:-1]
    out = made("move_line", file="study/ledger.jsonl", line=2, to_file="kills/1/ledger-at-kill.json", to=0)
    assert json.loads((out / "kills/1/ledger-at-kill.json").read_text())[0] == LEDGER[2]
    assert len((out / "study/ledger.jsonl").read_text().splitlines()) == 2
    out = made("link_folder", folder="kills/2", to="kills/1")
    assert os.readlink(out / "kills/2") == "1" and (out / "kills/2/kill.json").is_file()


def test_a_step_that_finds_nothing_to_change_says_so(folder: Path, tmp_path: Path) -> None:
    with pytest.raises(NoChange):
        mutated(folder, "drop_line", {"file": "no/such.jsonl", "line": 0}, tmp_path / "a" / "seed")
    with pytest.raises(NoChange):  # an id has no type-change to boolean
        mutated(
            folder,
            "set_value",
            {"file": "research.json", "line": None, "path": ["study"], "how": "bool", "pick": 0},
            tmp_path / "b" / "seed",
        )
    # A second step on a FIFO the first made: nothing to read, nothing changed, never a hang.
    recipe = Recipe(
        "seed",
        (
            Step("special", {"file": "study/ledger.jsonl", "kind": "fifo"}),
            Step("drop_line", {"file": "study/ledger.jsonl", "line": 0}),
        ),
    )
    mutant = apply(recipe, folder, tmp_path / "c" / "seed")
    assert mutant.applied == [True, False] and mutant.changed
    mutant.remove()
    assert not mutant.path.exists()


def test_a_recipe_is_json_and_back() -> None:
    recipe = Recipe("process-diagnosis", (Step("grow", {"file": "timeline.jsonl", "over": 1, "fill": "zeros"}),))
    assert Recipe.from_json(json.loads(json.dumps(recipe.as_json()))) == recipe
    with pytest.raises(ValueError, match="no such mutator"):
        Recipe.from_json({"seed": "x", "steps": [{"mutator": "nothing", "params": {}}]})


def test_a_worker_reports_its_own_peak_not_that_of_the_process_that_started_it() -> None:
    """A judge's peak is the worker's own: a test process grown large must not make every worker it starts look as
    large (``ru_maxrss`` carries the parent's peak across fork and exec; ``VmHWM`` does not)."""
    import subprocess
    import sys

    big = bytearray(400 << 20)
    for i in range(0, len(big), 4096):
        big[i] = 1
    code = "from tests.fuzz.worker import peak_mib; print(peak_mib())"
    root = Path(__file__).resolve().parents[2]
    said = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True).stdout
    assert float(said) < 200, said
    del big
