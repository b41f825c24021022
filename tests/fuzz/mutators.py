"""The mutators: each changes one thing in an evidence folder, named by JSON parameters.

A mutator is a small function ``edit(folder, params)`` that changes the
folder in place; :func:`mutated` is the pure form the recipes use: it copies a
folder and changes the copy, leaving the source as it was.  Parameters name
the thing by its place in the seed (a file, a line index, a path of keys, a
relative change: one second earlier, the next id), never by a value only one
run of a study wrote, so that a recipe replays exactly on its seed and means
the same on a fresh seed of the same name.  A step that finds nothing to
change (the line is gone, the value is of another type) raises
:class:`NoChange`; the recipe says so and the mutant is not judged for it.

Anything a mutator puts *outside* the folder (the target of a link that
leads out) goes to :func:`outside_of`, a sibling the caller removes with it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fuzz import jsontext as js

Params = dict[str, Any]
Edit = Callable[[Path, Params], None]
MiB = 1 << 20

MUTATORS: dict[str, Edit] = {}


class NoChange(Exception):
    """The step names something this folder does not have (or has in another shape): nothing was changed."""


def mutator(fn: Edit) -> Edit:
    MUTATORS[fn.__name__] = fn
    return fn


def outside_of(folder: Path) -> Path:
    """Where a mutant's links out of the folder lead: beside it, never inside."""
    return folder.parent / f"{folder.name}.outside"


def _outside_slot(folder: Path) -> Path:
    """A new folder outside ``folder``, for one step's copies (two steps never share one)."""
    outside = outside_of(folder)
    outside.mkdir(exist_ok=True)
    slot = outside / str(len(list(outside.iterdir())))
    slot.mkdir()
    return slot


def copy_folder(src: Path, dest: Path) -> None:
    """A copy of a folder as it stands: links as links, FIFOs as FIFOs (never opened), files with their bytes."""
    dest.mkdir(parents=True)
    for entry in sorted(os.scandir(src), key=lambda e: e.name):
        target = dest / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        elif entry.is_dir():
            copy_folder(Path(entry.path), target)
        elif entry.is_file():
            shutil.copyfile(entry.path, target)
        else:
            os.mkfifo(target)


def mutated(folder: Path, name: str, params: Params, dest: Path) -> Path:
    """A copy of ``folder`` at ``dest`` with mutator ``name`` applied (``folder`` is not touched)."""
    copy_folder(folder, dest)
    MUTATORS[name](dest, params)
    return dest


# --- files as lines and values ---------------------------------------------------------------------


def _regular(folder: Path, rel: str) -> Path:
    path = folder / rel
    if path.is_symlink() or not path.is_file():
        raise NoChange(f"{rel} is not a regular file")
    return path


def _split(data: bytes) -> tuple[list[bytes], bool]:
    if not data:
        return [], False
    ended = data.endswith(b"\n")
    lines = data.split(b"\n")
    if ended:
        lines.pop()
    return lines, ended


def _join(lines: list[bytes], ended: bool) -> bytes:
    return b"\n".join(lines) + (b"\n" if ended and lines else b"")


class Lines:
    """A line file's lines: a ``.jsonl`` file's raw lines, or the items of a JSON file that is a list."""

    def __init__(self, folder: Path, rel: str) -> None:
        self.path = _regular(folder, rel)
        data = self.path.read_bytes()
        self.is_json = not rel.endswith(".jsonl")
        if self.is_json:
            try:
                text = data.decode("utf-8")
                layout = js.layout_of(text)
                value = json.loads(text)
            except ValueError:
                raise NoChange(f"{rel} is not JSON as written") from None
            if layout is None or not isinstance(value, list):
                raise NoChange(f"{rel} is not a list as written")
            self.layout, self.items = layout, value
        else:
            self.items, self.ended = _split(data)  # type: ignore[assignment]
            self.ended = self.ended or not self.items

    def __len__(self) -> int:
        return len(self.items)

    def line(self, i: int) -> bytes:
        """Item ``i`` as one line of text."""
        item = self.items[i]
        return js.dumps(item).encode() if self.is_json else item

    def item(self, line: bytes) -> Any:
        """A line of text as an item of this file."""
        if not self.is_json:
            return line
        try:
            return json.loads(line)
        except ValueError:
            raise NoChange("the line is not JSON, and the file is a JSON list") from None

    def save(self) -> None:
        if self.is_json:
            self.path.write_text(js.file_text(self.items, self.layout), encoding="utf-8")
        else:
            self.path.write_bytes(_join(self.items, self.ended))


def _index(i: int, n: int) -> int:
    if n == 0:
        raise NoChange("no lines")
    return i % n


def edit_unit(folder: Path, rel: str, line: int | None, fn: Callable[[Any], Any]) -> None:
    """Change one unit's value (a line of a ``.jsonl`` file, or a whole JSON file) and write it in its layout."""
    path = _regular(folder, rel)
    data = path.read_bytes()
    try:
        if line is None:
            text = data.decode("utf-8")
            layout = js.layout_of(text)
            if layout is None:
                raise NoChange(f"{rel} is not JSON as written")
            path.write_text(js.file_text(fn(json.loads(text)), layout), encoding="utf-8")
            return
        lines, ended = _split(data)
        if line >= len(lines):
            raise NoChange(f"{rel} has no line {line}")
        raw = lines[line].decode("utf-8")
        lay = js.line_layout(raw)
        if lay is None:
            raise NoChange(f"{rel} line {line} is not JSON as written")
        lines[line] = js.dumps(fn(json.loads(raw)), lay).encode()
        path.write_bytes(_join(lines, ended))
    except UnicodeDecodeError:
        raise NoChange(f"{rel} is not UTF-8") from None


DROP = object()  # what a change returns to remove the key or item


def _change_at(path: js.Path_, change: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def fn(root: Any) -> Any:
        if not path or not js.has(root, path):
            raise NoChange(f"no {path}")
        parent, key = js.get(root, path[:-1]), path[-1]
        old = parent[key]
        new = change(old)
        if new is DROP:
            del parent[key]
        elif type(new) is type(old) and new == old and not isinstance(new, js.Repeated):
            raise NoChange("the change leaves the value as it was")
        else:
            parent[key] = new
        return root

    return fn


# --- values ------------------------------------------------------------------------------------------

SCALARS = (str, int, float, bool)


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    for t, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), (dict, "dict"), (list, "list")):
        if isinstance(value, t):
            return name
    return "other"


# How a value of each type can be changed (``set_value``'s ``how``).
HOWS: dict[str, tuple[str, ...]] = {
    "int": ("inc", "dec", "zero", "negate", "huge", "float", "string", "bool", "null", "other", "drop"),
    "float": ("inc", "dec", "tiny", "zero", "negate", "nonfinite", "int", "string", "null", "other", "drop"),
    "str": ("tweak", "suffix", "empty", "upper", "trim", "pad", "control", "long", "other", "number", "null", "drop"),
    "bool": ("flip", "int", "string", "null", "drop"),
    "null": ("zero", "string", "false", "empty", "drop"),
    "dict": ("drop", "null", "empty", "string", "list"),
    "list": ("drop", "null", "empty", "shrink", "grow"),
}


def tweak(text: str) -> str:
    """The string with its last letter or digit moved on by one (``d1`` -> ``d2``, ``…ef`` -> ``…eg``): the same
    shape, another value."""
    chars = list(text)
    for i in range(len(chars) - 1, -1, -1):
        c = chars[i]
        if c.isdigit():
            chars[i] = str((int(c) + 1) % 10)
            return "".join(chars)
        if "a" <= c <= "z" or "A" <= c <= "Z":
            base = ord("a") if c.islower() else ord("A")
            chars[i] = chr(base + (ord(c) - base + 1) % 26)
            return "".join(chars)
    return text + "0"


def differ(value: Any) -> Any:
    """Another value of the same type (for a repeated key whose two copies disagree)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return tweak(value)
    if value is None:
        return 0
    return type(value)() if value else None


def transform(value: Any, how: str, others: list[Any], pick: int) -> Any:
    """``value`` changed as ``how`` says (``others``: the values of the same key elsewhere, for ``other``)."""
    if how not in HOWS.get(type_name(value), ()):
        raise NoChange(f"{how} does not apply to {type_name(value)}")  # an earlier step changed its type
    if how == "drop":
        return DROP
    if how == "null":
        return None
    if how == "other":
        choices = [o for o in others if not (type(o) is type(value) and o == value)]
        if not choices:
            raise NoChange("no other value of this key")
        return choices[pick % len(choices)]
    if how == "string":
        return value if isinstance(value, str) else json.dumps(value)
    if isinstance(value, bool):
        return {"flip": not value, "int": int(value)}[how]
    if isinstance(value, int | float):
        nums: dict[str, Callable[[], Any]] = {
            "inc": lambda: value + 1,
            "dec": lambda: value - 1,
            "zero": lambda: type(value)(0),
            "negate": lambda: -value if value else type(value)(-1),
            "huge": lambda: 2**64 if isinstance(value, int) else 1e308,
            "float": lambda: float(value),
            "bool": lambda: True,
            "tiny": lambda: value + 1e-9 * max(1.0, abs(value)),
            "nonfinite": lambda: (float("inf"), float("-inf"), float("nan"))[pick % 3],
            "int": lambda: round(value),
        }
        return nums[how]()
    if isinstance(value, str):
        texts: dict[str, Callable[[], Any]] = {
            "tweak": lambda: tweak(value),
            "suffix": lambda: value + "x",
            "empty": lambda: "",
            "upper": lambda: value.upper() if value.upper() != value else value + "X",
            "trim": lambda: value[:-1],
            "pad": lambda: " " + value,
            "control": lambda: value + ("\u0007", "\n", "\x1b[2J", "\u202e")[pick % 4],
            "long": lambda: value + "y" * 100_000,
            "number": lambda: int(value) if value.isdigit() else len(value),
        }
        return texts[how]()
    if value is None:
        return {"zero": 0, "false": False, "empty": ""}[how]
    if isinstance(value, dict):
        return {"empty": {}, "list": [value]}[how]
    if isinstance(value, list):
        return {"empty": [], "shrink": value[:-1], "grow": [*value, value[-1] if value else 0]}[how]
    raise NoChange(f"{how} does not apply to {type_name(value)}")


def values_of(folder: Path, key: str, limit: int = 8 * MiB) -> list[Any]:
    """Every scalar value of ``key`` in the folder's JSON files and lines, distinct, in a stable order."""
    seen: dict[str, Any] = {}
    for dirpath, _, filenames in os.walk(folder):
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not name.endswith((".json", ".jsonl")) or path.is_symlink() or not path.is_file():
                continue
            if path.stat().st_size > limit:
                continue
            text = path.read_bytes().decode("utf-8", "replace")
            chunks = text.splitlines() if name.endswith(".jsonl") else [text]
            for chunk in chunks:
                try:
                    value = json.loads(chunk)
                except ValueError:
                    continue
                for p in js.paths(value, 100_000):
                    if p and p[-1] == key:
                        v = js.get(value, p)
                        if isinstance(v, SCALARS):
                            seen.setdefault(json.dumps(v, sort_keys=True), v)
    return [seen[k] for k in sorted(seen)]


# --- field mutators ----------------------------------------------------------------------------------


@mutator
def shift_time(folder: Path, p: Params) -> None:
    """A time (``at``, ``seenAt``, ``time``, ``timeNano``, an epoch...) moved ``seconds`` later (earlier if < 0)."""
    path = p["path"]
    edit_unit(folder, p["file"], p["line"], _change_at(path, lambda v: js.shift_time(v, js.key_of(path), p["seconds"])))


@mutator
def set_value(folder: Path, p: Params) -> None:
    """A field's value changed as ``how`` says: an id moved on, a number off by one, a type changed, a key gone."""
    path = p["path"]
    others = values_of(folder, js.key_of(path)) if p["how"] == "other" else []
    edit_unit(folder, p["file"], p["line"], _change_at(path, lambda v: transform(v, p["how"], others, p["pick"])))


@mutator
def repeat_key(folder: Path, p: Params) -> None:
    """A key written twice in its object: the same value twice, or two values (``first`` or ``last`` differs)."""
    path, variant = p["path"], p["variant"]
    if not path or not isinstance(path[-1], str):
        raise NoChange("not a key")
    key = path[-1]

    def fn(root: Any) -> Any:
        if not js.has(root, path):
            raise NoChange(f"no {path}")
        holder = js.get(root, path[:-1])
        if not isinstance(holder, dict):
            raise NoChange("not in an object")
        value = holder[key]
        first = differ(value) if variant == "first" else value
        items = dict(holder)
        if variant == "last":
            items[key] = differ(value)
        repeated = js.Repeated(items, key, first)
        if len(path) == 1:
            return repeated
        js.get(root, path[:-2])[path[-2]] = repeated
        return root

    edit_unit(folder, p["file"], p["line"], fn)


# --- line mutators -----------------------------------------------------------------------------------


@mutator
def drop_line(folder: Path, p: Params) -> None:
    """One line (or list item) removed."""
    lines = Lines(folder, p["file"])
    del lines.items[_index(p["line"], len(lines))]
    lines.save()


@mutator
def duplicate_line(folder: Path, p: Params) -> None:
    """One line written again at another place of the same file (``to``: its index there)."""
    lines = Lines(folder, p["file"])
    i = _index(p["line"], len(lines))
    lines.items.insert(p["to"] % (len(lines) + 1), lines.items[i])
    lines.save()


@mutator
def swap_lines(folder: Path, p: Params) -> None:
    """Two lines of a file in each other's places."""
    lines = Lines(folder, p["file"])
    i, j = _index(p["i"], len(lines)), _index(p["j"], len(lines))
    if i == j or lines.items[i] == lines.items[j]:
        raise NoChange("the same line")
    lines.items[i], lines.items[j] = lines.items[j], lines.items[i]
    lines.save()


@mutator
def move_line(folder: Path, p: Params) -> None:
    """One line taken out of its file and put at ``to`` in ``to_file`` (the same file or another)."""
    src = Lines(folder, p["file"])
    i = _index(p["line"], len(src))
    if p["to_file"] == p["file"]:
        item = src.items.pop(i)
        to = p["to"] % (len(src) + 1)
        if to == i:
            raise NoChange("moved to where it was")
        src.items.insert(to, item)
        src.save()
        return
    dst = Lines(folder, p["to_file"])
    item = dst.item(src.line(i))
    del src.items[i]
    dst.items.insert(p["to"] % (len(dst) + 1), item)
    src.save()
    dst.save()


# --- encodings ---------------------------------------------------------------------------------------

# Bytes put inside a line's first string (its first key): none of them is UTF-8 text.
RAW = {
    "invalid": b"\xff",
    "surrogate": b"\xed\xa0\xbd",  # a lone surrogate, encoded raw (what JSON's \ud83d escape is not)
    "overlong": b"\xc0\xaf",  # '/' in two bytes
    "latin1": b"\xe9",  # 'é' as Latin-1
    "nul": b"\x00",
}
ENCODINGS = ("utf16", "utf16le", "bom", "bom-line", "crlf", *RAW)


@mutator
def reencode(folder: Path, p: Params) -> None:
    """The file (or one line: ``line``) in another encoding: UTF-16, a BOM, CRLF ends, or a raw byte that is
    not UTF-8 inside a string."""
    path = _regular(folder, p["file"])
    data, how = path.read_bytes(), p["how"]
    if how in ("utf16", "utf16le"):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise NoChange("not UTF-8 to begin with") from None
        path.write_bytes(text.encode("utf-16" if how == "utf16" else "utf-16-le"))
        return
    if how == "bom":
        path.write_bytes(b"\xef\xbb\xbf" + data)
        return
    if how == "crlf":
        if b"\n" not in data:
            raise NoChange("no line ends")
        path.write_bytes(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
        return
    lines, ended = _split(data)
    if p["line"] is not None:
        target = [_index(p["line"], len(lines))]
    else:  # a JSON file's text is one unit: its first string is on some line
        target = [next((i for i, line in enumerate(lines) if b'"' in line), 0)] if lines else []
    if not target:
        raise NoChange("empty")
    i = target[0]
    if how == "bom-line":
        lines[i] = b"\xef\xbb\xbf" + lines[i]
    else:
        at = lines[i].find(b'"') + 1
        lines[i] = lines[i][:at] + RAW[how] + lines[i][at:]
    path.write_bytes(_join(lines, ended))


# --- files and folders -------------------------------------------------------------------------------


def _clear(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)


def _exists(path: Path) -> bool:
    return path.is_symlink() or path.exists()


@mutator
def swap_folders(folder: Path, p: Params) -> None:
    """Two kill folders (or two trial folders) in each other's places."""
    a, b = folder / p["a"], folder / p["b"]
    if a == b or not a.is_dir() or not b.is_dir():
        raise NoChange("not two folders")
    tmp = a.with_name(f".swap-{a.name}")
    a.rename(tmp)
    b.rename(a)
    tmp.rename(b)


@mutator
def link_folder(folder: Path, p: Params) -> None:
    """A kill or trial folder replaced by a link: to another such folder, to a copy of itself outside the
    evidence folder (``outside``), or to nothing (``dangling``)."""
    path, to = folder / p["folder"], p["to"]
    if not path.is_dir() or path.is_symlink():
        raise NoChange("not a folder")
    if to == "outside":
        copy = _outside_slot(folder) / p["folder"]
        copy_folder(path, copy)
        target = str(copy)
    elif to == "dangling":
        target = f"{path.name}-gone"
    else:
        if not (folder / to).is_dir() or to == p["folder"]:
            raise NoChange("no such other folder")
        target = os.path.relpath(folder / to, path.parent)
    shutil.rmtree(path)
    os.symlink(target, path)


@mutator
def special(folder: Path, p: Params) -> None:
    """A file replaced by a FIFO (nothing ever writes to it) or by a folder."""
    path = folder / p["file"]
    if not _exists(path):
        raise NoChange("no such file")
    _clear(path)
    if p["kind"] == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()


@mutator
def symlink(folder: Path, p: Params) -> None:
    """A file replaced by a link: to another file of the folder, to a copy of itself inside (``inside``) or
    outside (``outside``) the folder, to nothing (``dangling``), or to itself (``loop``)."""
    path, to = folder / p["file"], p["to"]
    if path.is_symlink() or not path.is_file():
        raise NoChange("not a regular file")
    if to == "outside":
        copy = _outside_slot(folder) / p["file"]
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        target = str(copy)
    elif to == "inside":
        copy = path.with_name(f"{path.name}.copy")
        shutil.copyfile(path, copy)
        target = copy.name
    elif to == "dangling":
        target = f"{path.name}.gone"
    elif to == "loop":
        target = path.name
    else:
        if not (folder / to).is_file() or to == p["file"]:
            raise NoChange("no such other file")
        target = os.path.relpath(folder / to, path.parent)
    path.unlink()
    os.symlink(target, path)


# The judge's caps, as docs/contract.md's "Hostile evidence" and "Campaigns" tables state them (by file name;
# the ledger and a trial's report.json by their paths).  A file the tables leave out is grown past 32 MiB.
CAPS = {
    "research.json": 1 * MiB,
    "study/ledger.jsonl": 32 * MiB,
    "timeline.jsonl": 32 * MiB,
    "launches.jsonl": 4 * MiB,
    "arms.jsonl": 1 * MiB,
    "ledger-watch.jsonl": 1 * MiB,
    "kill.json": 8 * MiB,
    "container-before.json": 8 * MiB,
    "container-after-kill.json": 8 * MiB,
    "container-before-resume.json": 8 * MiB,
    "container-events-window.json": 8 * MiB,
    "container-events-live.jsonl": 32 * MiB,
    "container-events.jsonl": 32 * MiB,
    "ledger-at-kill.json": 64 * MiB,
    "runtime-restarts.jsonl": 1 * MiB,
    # A campaign's (docs/contract.md, "Campaigns"): its journal, its summary, a trial's report.json.
    "trials.jsonl": 64 * MiB,
    "campaign.json": 16 * MiB,
}
UNCAPPED = 32 * MiB


def cap_of(rel: str) -> int:
    if rel == "study/ledger.jsonl" or rel.endswith("/study/ledger.jsonl"):
        return CAPS["study/ledger.jsonl"]
    if rel.startswith("trials/") and rel.endswith("/report.json"):
        return 8 * MiB
    return CAPS.get(rel.rsplit("/", 1)[-1], UNCAPPED)


@mutator
def grow(folder: Path, p: Params) -> None:
    """A file grown to its cap plus ``over`` bytes (``over`` <= 0: at or just under the cap, still allowed), with
    spaces where JSON allows them (the text still parses), blank lines, or zeros (a sparse tail)."""
    path = _regular(folder, p["file"])
    size = path.stat().st_size
    target = cap_of(p["file"]) + p["over"]
    if target <= size:
        raise NoChange("already that large")
    fill = p["fill"]
    if fill == "zeros":
        os.truncate(path, target)
        return
    data = path.read_bytes()
    pad = target - size
    if fill == "spaces":
        ended = data.endswith(b"\n")
        body = data[:-1] if ended else data
        data = body + b" " * pad + (b"\n" if ended else b"")
    else:
        data += b"\n" * pad
    path.write_bytes(data)


@mutator
def truncate(folder: Path, p: Params) -> None:
    """A file cut short: emptied, halved, its final newline gone, cut inside its last line, or to its first line."""
    path = _regular(folder, p["file"])
    data = path.read_bytes()
    keep = p["keep"]
    lines, _ = _split(data)
    cut = {
        "empty": 0,
        "half": len(data) // 2,
        "no-newline": len(data) - 1 if data.endswith(b"\n") else len(data),
        "mid-last-line": len(data) - (len(lines[-1]) // 2 + 1) if lines else 0,
        "first-line": len(lines[0]) + 1 if lines else 0,
    }[keep]
    if cut >= len(data):
        raise NoChange("nothing to cut")
    os.truncate(path, cut)


@mutator
def delete(folder: Path, p: Params) -> None:
    """A file or a folder gone."""
    path = folder / p["path"]
    if not _exists(path):
        raise NoChange("no such file")
    _clear(path)
