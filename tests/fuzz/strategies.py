"""Hypothesis strategies for recipes: a seed, then one or two mutators with parameters from the seed's own
files, lines and fields (:mod:`.index`).

Each mutator has a parameter strategy here, beside the function in
:mod:`.mutators` that applies it; a mutator a seed cannot take (two kill
folders to swap, say) is not offered for it.  Fields are drawn with a lean
towards the ones the contract is about (ids, amounts, times, exit codes,
pids, seqs, container names and Ids, labels), and any field at all the rest
of the time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from tests.fuzz import jsontext as js
from tests.fuzz.index import SeedIndex
from tests.fuzz.mutators import ENCODINGS, HOWS, MUTATORS, type_name
from tests.fuzz.recipe import Recipe, Step

Draw = Callable[..., Any]
ParamsFor = Callable[[Draw, SeedIndex], dict[str, Any]]

# Keys the contract judges by: the ones a liar would change.
KEYS = frozenset(
    {
        "run",
        "purpose",
        "amount",
        "balance",
        "budget",
        "exitCode",
        "ExitCode",
        "pid",
        "seq",
        "container",
        "Id",
        "id",
        "ID",
        "name",
        "Name",
        "study",
        "studymon.study",
        "studymon.run",
        "kind",
        "event",
        "code",
        "signal",
        "round",
        "object",
        "experiments",
        "chosen",
        "beforeKillSeq",
        "resultSeq",
        "kill",
        "fromSeq",
        "point",
        "trigger",
        "class",
        "cell",
        "startSeq",
        "planSeq",
        "prefix",
        "state",
        "Status",
        "Running",
        "Action",
        "status",
        "reason",
        "stage",
        "resume",
        "signalled",
        "targets",
        "gap",
        "readBack",
        "expectEnd",
        "containerPrefix",
        "backend",
        "n",
        "ok",
        "dropped",
        "judged",
        "outputs",
        "verdict",
        "points",
        "out",
        "exact",
        "captureError",
        "keeper",
        "Type",
    }
)
# Moves of a time, in seconds: across the judge's tolerances (a millisecond, a second) and far.
SECONDS = (
    -86400.0,
    -3600.0,
    -60.0,
    -2.0,
    -1.001,
    -1.0,
    -0.999,
    -0.5,
    -0.05,
    -0.001,
    0.001,
    0.05,
    0.5,
    0.999,
    1.0,
    1.001,
    2.0,
    60.0,
    3600.0,
    86400.0,
    1e12,
)
OVER = (-1, 0, 1, 4096, 3 << 20)  # bytes past a file's cap: at or under it is allowed, past it is not


def _path(
    draw: Draw, seed: SeedIndex, rel: str, line: int | None, want: Callable[[js.Path_, Any], bool], strict: bool
) -> Any:
    """A path into the unit: one ``want`` accepts, most of the time (always if ``strict``), else any."""
    every = seed.paths(rel, line)
    value = seed.files[rel].unit(line)
    liked = [p for p in every if want(p, js.get(value, p))]
    if strict and not liked:
        return None
    pool = liked if liked and (strict or draw(st.integers(0, 3)) > 0) else every
    return list(draw(st.sampled_from(pool))) if pool else None  # a copy: the index's paths are shared


def _field(
    draw: Draw, seed: SeedIndex, want: Callable[[js.Path_, Any], bool], strict: bool = False
) -> tuple[str, int | None, Any]:
    units = seed.units
    for _ in range(12):  # a unit with no such path (no time in it, an empty object) is drawn again
        rel, line = draw(st.sampled_from(units))
        path = _path(draw, seed, rel, line, want, strict)
        if path is not None:
            return rel, line, path
    # Rare: twelve units without one; take the first unit that has one.
    for rel, line in units:
        path = _path(draw, seed, rel, line, want, strict)
        if path is not None:
            return rel, line, path
    raise LookupError("no such field in the seed")


def _is_time(path: js.Path_, value: Any) -> bool:
    return js.is_time_key(js.key_of(path)) and js.is_time_value(value)


def _is_key(path: js.Path_, _value: Any) -> bool:
    return js.key_of(path) in KEYS


def shift_time(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    rel, line, path = _field(draw, seed, _is_time, strict=True)
    return {"file": rel, "line": line, "path": path, "seconds": draw(st.sampled_from(SECONDS))}


def set_value(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    rel, line, path = _field(draw, seed, _is_key)
    kind = type_name(js.get(seed.files[rel].unit(line), path))
    how = draw(st.sampled_from(HOWS.get(kind, ("drop",))))
    return {"file": rel, "line": line, "path": path, "how": how, "pick": draw(st.integers(0, 50))}


def repeat_key(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    rel, line, path = _field(draw, seed, lambda p, _v: bool(p) and isinstance(p[-1], str) and js.key_of(p) in KEYS)
    return {"file": rel, "line": line, "path": path, "variant": draw(st.sampled_from(("same", "first", "last")))}


def _line_file(draw: Draw, seed: SeedIndex) -> tuple[str, int]:
    rel = draw(st.sampled_from(seed.line_files))
    return rel, draw(st.integers(0, seed.files[rel].lines - 1))


def drop_line(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    rel, line = _line_file(draw, seed)
    return {"file": rel, "line": line}


def duplicate_line(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    rel, line = _line_file(draw, seed)
    return {"file": rel, "line": line, "to": draw(st.integers(0, seed.files[rel].lines))}


def swap_lines(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    rel, i = _line_file(draw, seed)
    return {"file": rel, "i": i, "j": draw(st.integers(0, seed.files[rel].lines - 1))}


def move_line(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    rel, line = _line_file(draw, seed)
    # Half the time within the file (a line out of order), else into another file, one of its kind if any.
    if draw(st.booleans()):
        to_file = rel
    else:
        same = [f for f in seed.line_files if f != rel and f.rsplit("/", 1)[-1] == rel.rsplit("/", 1)[-1]]
        to_file = (
            draw(st.sampled_from(same)) if same and draw(st.booleans()) else draw(st.sampled_from(seed.line_files))
        )
    return {"file": rel, "line": line, "to_file": to_file, "to": draw(st.integers(0, seed.files[to_file].lines))}


def reencode(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    rel = draw(st.sampled_from([r for r, f in seed.files.items() if f.kind != "text"]))
    lines = seed.files[rel].lines if seed.files[rel].kind == "jsonl" else 0
    line = draw(st.integers(0, lines - 1)) if lines else None
    return {"file": rel, "line": line, "how": draw(st.sampled_from(ENCODINGS))}


def _siblings(seed: SeedIndex) -> list[tuple[str, str]]:
    folders = seed.swappable
    return [(a, b) for a in folders for b in folders if a < b and a.rsplit("/", 1)[0] == b.rsplit("/", 1)[0]]


def swap_folders(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    a, b = draw(st.sampled_from(_siblings(seed)))
    return {"a": a, "b": b}


def link_folder(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    folder = draw(st.sampled_from(seed.swappable))
    others = [b for a, b in _siblings(seed) if a == folder] + [a for a, b in _siblings(seed) if b == folder]
    return {"folder": folder, "to": draw(st.sampled_from(["outside", "dangling", *others]))}


def special(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    return {"file": draw(st.sampled_from(list(seed.files))), "kind": draw(st.sampled_from(("fifo", "fifo", "dir")))}


def symlink(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    rel = draw(st.sampled_from(list(seed.files)))
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    near = [f for f in seed.files if f != rel and (f.rsplit("/", 1)[0] if "/" in f else "") == folder]
    to = draw(st.sampled_from(["outside", "outside", "inside", "dangling", "loop"] + (["near"] if near else [])))
    if to == "near":
        to = draw(st.sampled_from(near))
    return {"file": rel, "to": to}


def grow(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    rel = draw(st.sampled_from([r for r, f in seed.files.items() if f.kind != "text"]))
    return {
        "file": rel,
        "over": draw(st.sampled_from(OVER)),
        "fill": draw(st.sampled_from(("spaces", "newlines", "zeros"))),
    }


def truncate(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    rel = draw(st.sampled_from(list(seed.files)))
    keep = draw(st.sampled_from(("empty", "half", "no-newline", "mid-last-line", "first-line")))
    return {"file": rel, "keep": keep}


def delete(draw: Draw, seed: SeedIndex) -> dict[str, Any]:
    return {"path": draw(st.sampled_from([*seed.files, *seed.swappable, *[d for d in seed.dirs if "/" not in d]]))}


PARAMS: dict[str, ParamsFor] = {
    "shift_time": shift_time,
    "set_value": set_value,
    "repeat_key": repeat_key,
    "drop_line": drop_line,
    "duplicate_line": duplicate_line,
    "swap_lines": swap_lines,
    "move_line": move_line,
    "reencode": reencode,
    "swap_folders": swap_folders,
    "link_folder": link_folder,
    "special": special,
    "symlink": symlink,
    "grow": grow,
    "truncate": truncate,
    "delete": delete,
}
assert set(PARAMS) == set(MUTATORS), set(PARAMS) ^ set(MUTATORS)


def offered(seed: SeedIndex) -> list[str]:
    """The mutators this seed can take."""
    names = list(PARAMS)
    if not _siblings(seed):
        names.remove("swap_folders")
    if not seed.swappable:
        names.remove("link_folder")
    if not seed.line_files:
        names = [n for n in names if n not in ("drop_line", "duplicate_line", "swap_lines", "move_line")]
    return names


@st.composite
def steps(draw: Draw, seed: SeedIndex, mutators: tuple[str, ...] | None = None) -> Step:
    names = [n for n in offered(seed) if mutators is None or n in mutators]
    name = draw(st.sampled_from(names))
    return Step(name, PARAMS[name](draw, seed))


@st.composite
def recipes(draw: Draw, seeds: dict[str, SeedIndex], mutators: tuple[str, ...] | None = None) -> Recipe:
    """A seed, and one step (two a third of the time)."""
    seed = seeds[draw(st.sampled_from(sorted(seeds)))]
    count = 2 if draw(st.integers(0, 2)) == 0 else 1
    return Recipe(seed.name, tuple(draw(steps(seed, mutators)) for _ in range(count)))
