"""Every name the project takes from Textual's (and the Docker SDK's) insides is still there, by name.

The console leans on a few of Textual's private or undocumented names: its
terminal driver replaces the input thread, the ledger's scrollbar is one of
its own, and some tests look inside widgets.  The dependency is pinned to the
releases these were read from (``pyproject.toml``); a release that moves one
fails here, in a test named after the name, before it breaks the console.

The table :data:`PRIVATE` says where each one is used.  Two scans keep it
whole: every private name of Textual's that the code reads is in it, and no
class of ours that derives from Textual's defines a private name that
Textual's own bases use (a new release that added ``_rows`` to ``Widget``
would otherwise be silently overridden by the containers table's).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import textual

ROOT = Path(__file__).resolve().parent.parent
OURS = ("engine", "tui", "widgets", "refstudy", "studymon", "tests", "bench")
TEXTUAL = Path(textual.__file__).resolve().parent


@dataclass(frozen=True)
class Name:
    """One name taken from a dependency's insides: where it lives, what we need of it, who uses it."""

    module: str
    owner: str | None  # a class in the module, or None for the module itself
    name: str
    kind: str  # "attribute" (of the module or class), "method", "instance" (set on self in __init__)
    params: tuple[str, ...] = ()  # for a method: the parameters we pass, in order
    used_in: str = ""

    @property
    def id(self) -> str:
        return ".".join(part for part in (self.module, self.owner, self.name) if part)


PRIVATE = (
    Name("textual._parser", None, "ParseError", "attribute", used_in="tui/driver.py: a sequence cut off at the end"),
    Name("textual._xterm_parser", None, "XTermParser", "attribute", used_in="tui/driver.py: the input thread's parser"),
    Name("textual._xterm_parser", "XTermParser", "__init__", "method", ("debug",), "tui/driver.py"),
    Name("textual._xterm_parser", "XTermParser", "feed", "method", ("data",), "tui/driver.py"),
    Name("textual._xterm_parser", "XTermParser", "tick", "method", (), "tui/driver.py: a lone Escape's timeout"),
    Name("textual.drivers.linux_driver", "LinuxDriver", "run_input_thread", "method", (),
         "tui/driver.py overrides it (undocumented)"),
    Name("textual.drivers.linux_driver", "LinuxDriver", "_run_input_thread", "method", (),
         "Textual's thread target, which must call run_input_thread (checked below)"),
    Name("textual.drivers.linux_driver", "LinuxDriver", "fileno", "instance", used_in="tui/driver.py"),
    Name("textual.drivers.linux_driver", "LinuxDriver", "exit_event", "instance",
         used_in="tui/driver.py replaces it with one that wakes the input thread"),
    Name("textual.drivers.linux_driver", "LinuxDriver", "_key_thread", "instance",
         used_in="tests/doubles/keys_app.py: which thread reads keys"),
    Name("textual.driver", "Driver", "_debug", "instance", used_in="tui/driver.py: handed to the parser"),
    Name("textual.driver", "Driver", "process_message", "method", ("message",), "tui/driver.py"),
    Name("textual.app", "App", "get_driver_class", "method", (), "tui/app.py: the quiet driver on Linux"),
    Name("textual.app", "App", "_start_widget", "method", ("parent", "widget"),
         "widgets/ledger_lines.py: starts the stream's own scrollbar"),
    Name("textual.app", "App", "_driver", "instance", used_in="tests/doubles/keys_app.py"),
    Name("textual.widget", "Widget", "_vertical_scrollbar", "instance",
         used_in="widgets/ledger_lines.py: the stream's own scrollbar, made where Textual makes its own"),
    Name("textual.widget", "Widget", "vertical_scrollbar", "attribute", used_in="widgets/ledger_lines.py's own"),
    Name("textual.widget", "Widget", "_scroll_update", "method", ("virtual_size",),
         "widgets/ledger_lines.py: the scrollbar follows a new size without a layout"),
    Name("textual.widget", "Widget", "_styles_cache", "instance",
         used_in="tests/test_widgets.py, bench/graph_render.py: a drawing from nothing kept"),
    Name("docker.transport.unixconn", "UnixHTTPAdapter", "socket_path", "instance",
         used_in="engine/runtimes/docker.py: the engine's socket, to find its daemon"),
)


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _class_node(cls: type) -> ast.ClassDef:
    path = Path(inspect.getfile(cls))
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            return node
    raise AssertionError(f"no class {cls.__name__} in {path}")


def _self_stores(cls: type, method: str | None = None) -> set[str]:
    """The names a class's methods (or one of them) set on ``self``."""
    found = set()
    for item in _class_node(cls).body:
        if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) or (method and item.name != method):
            continue
        for node in ast.walk(item):
            if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                    and isinstance(node.value, ast.Name) and node.value.id == "self"):
                found.add(node.attr)
    return found


def _class_body_names(cls: type) -> set[str]:
    """The methods and class attributes a class's own body defines."""
    names = set()
    for item in _class_node(cls).body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(item.name)
        elif isinstance(item, ast.Assign | ast.AnnAssign):
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _instance_attributes(cls: type) -> set[str]:
    """What ``__init__`` sets on ``self``, over the class and its bases."""
    names: set[str] = set()
    for base in cls.__mro__:
        if base is object or "__init__" not in vars(base):
            continue
        names |= _self_stores(base, "__init__")
    return names


@pytest.mark.parametrize("entry", PRIVATE, ids=[entry.id for entry in PRIVATE])
def test_a_private_name_the_project_uses_is_there(entry: Name) -> None:
    module = importlib.import_module(entry.module)
    if entry.owner is None:
        assert hasattr(module, entry.name), f"{entry.module} has no {entry.name} (used in {entry.used_in})"
        return
    owner = getattr(module, entry.owner, None)
    assert inspect.isclass(owner), f"{entry.module} has no class {entry.owner} (used in {entry.used_in})"
    if entry.kind == "instance":
        assert entry.name in _instance_attributes(owner), (
            f"{entry.owner}.__init__ no longer sets self.{entry.name} (used in {entry.used_in})")
        return
    assert hasattr(owner, entry.name), f"{entry.owner} has no {entry.name} (used in {entry.used_in})"
    if entry.kind == "method":
        method = getattr(owner, entry.name)
        assert callable(method), f"{entry.id} is not a method any more"
        params = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
        assert tuple(p.name for p in params[: len(entry.params)]) == entry.params, (
            f"{entry.id}{inspect.signature(method)}: we pass {entry.params} (in {entry.used_in})")
        assert all(p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                   for p in params[len(entry.params):]), f"{entry.id} wants more than we pass"


def test_textuals_input_thread_runs_the_method_the_quiet_driver_overrides() -> None:
    """Our ``run_input_thread`` is used only while Textual's thread target calls it by that name."""
    from textual.drivers.linux_driver import LinuxDriver

    target = next(item for item in _class_node(LinuxDriver).body
                  if isinstance(item, ast.FunctionDef) and item.name == "_run_input_thread")
    calls = {node.func.attr for node in ast.walk(target)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"}
    assert "run_input_thread" in calls, "LinuxDriver._run_input_thread no longer calls self.run_input_thread()"
    threads = ast.unparse(_class_node(LinuxDriver))
    assert "Thread(target=self._run_input_thread" in threads, "the input thread no longer starts _run_input_thread"


# --- the table is whole ---------------------------------------------------------------------------


def _sources() -> list[Path]:
    return sorted(p for part in OURS for p in (ROOT / part).rglob("*.py") if "__snapshots__" not in p.parts)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@cache
def _names_in(paths: tuple[Path, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """The private names read in these files, and those they define (assign, def, class)."""
    read, defined = set(), set()
    for path in paths:
        tree = _tree(path)
        # Names bound to other modules (``os._exit``, ``sys._getframe``) are not Textual's.
        modules = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                   for alias in node.names if alias.name.split(".")[0] != "textual"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                if isinstance(node.value, ast.Name) and node.value.id in modules:
                    continue
                (defined if isinstance(node.ctx, ast.Store) else read).add(node.attr)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and _private(node.name):
                defined.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and _private(node.id):
                defined.add(node.id)
    return frozenset(read), frozenset(defined)


def _textual_names() -> frozenset[str]:
    read, defined = _names_in(tuple(sorted(TEXTUAL.rglob("*.py"))))
    return read | defined


def test_every_private_name_of_textuals_the_code_reads_is_in_the_table() -> None:
    read, defined = _names_in(tuple(_sources()))
    theirs = (read - defined) & _textual_names()
    listed = {entry.name for entry in PRIVATE}
    assert theirs <= listed, f"private names of Textual's read but not in PRIVATE: {sorted(theirs - listed)}"


def test_every_private_textual_module_the_code_imports_is_in_the_table() -> None:
    modules = set()
    for path in _sources():
        for node in ast.walk(_tree(path)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            modules |= {n for n in names if n.split(".")[0] == "textual" and any(map(_private, n.split(".")))}
    listed = {entry.module for entry in PRIVATE}
    assert modules and modules <= listed, f"private Textual modules imported but not in PRIVATE: {modules - listed}"


def test_no_class_of_ours_takes_a_private_name_its_textual_bases_use() -> None:
    """A name of ours that Textual's bases also use would override theirs: only the table's may."""
    import studymon.tui
    import studymon.widgets

    listed = {entry.name for entry in PRIVATE}
    clashes = []
    checked = 0
    for package in (studymon.tui, studymon.widgets):
        for path in sorted(Path(package.__path__[0]).glob("*.py")):
            module = importlib.import_module(f"{package.__name__}.{path.stem}")
            for cls in vars(module).values():
                if not inspect.isclass(cls) or cls.__module__ != module.__name__:
                    continue
                bases = [b for b in cls.__mro__[1:] if b.__module__.split(".")[0] == "textual"]
                if not bases:
                    continue
                checked += 1
                ours = _self_stores(cls) | _class_body_names(cls)
                theirs = set().union(*(set(vars(b)) | _self_stores(b) for b in bases))
                clashes += [f"{cls.__module__}.{cls.__name__}.{n}" for n in sorted(ours & theirs - listed)
                            if _private(n)]
    assert checked >= 10, checked
    assert not clashes, f"these override a private name of Textual's: {clashes}"


def _reads_not_self_owned(paths: tuple[Path, ...], names: frozenset[str]) -> list[str]:
    """Reads of ``names`` that are not ``self.<name>`` inside a class of ours that sets or defines that name."""
    found = []
    for path in paths:
        tree = _tree(path)
        owned: dict[int, set[str]] = {}  # id of a function node -> the names its class sets or defines
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            mine = set()
            for item in cls.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    mine.add(item.name)
                    for node in ast.walk(item):
                        if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                                and isinstance(node.value, ast.Name) and node.value.id == "self"):
                            mine.add(node.attr)
                elif isinstance(item, ast.Assign | ast.AnnAssign):
                    targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                    mine |= {t.id for t in targets if isinstance(t, ast.Name)}
            for item in cls.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    owned[id(item)] = mine

        def visit(node: ast.AST, mine: set[str]) -> None:
            for child in ast.iter_child_nodes(node):
                inner = owned.get(id(child), mine) if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else mine
                if (isinstance(child, ast.Attribute) and child.attr in names and isinstance(child.ctx, ast.Load)
                        and not (isinstance(child.value, ast.Name) and child.value.id == "self" and child.attr in inner)):
                    found.append(f"{path.relative_to(ROOT)}:{child.lineno}: .{child.attr}")
                visit(child, inner)

        visit(tree, set())
    return found


# Private names Textual also uses, read by tests and benchmarks on an object of ours (not ``self``): each is
# said here with the class of ours that defines it, which a test checks.
OURS_READ_OUTSIDE = {
    "_strips": ("studymon.widgets.timeline", "Timeline", "its drawn rows, compared by the timeline's tests"),
    "_signal": ("studymon.engine.io.notify", "_WatchfilesThread", "wrapped by a test to count the wake-ups"),
    "_base": ("studymon.widgets.overview", "OverviewRows", "a row's style, drawn by a test at a narrow width"),
}


def test_a_private_name_both_textual_and_ours_is_read_only_as_our_own() -> None:
    """A name Textual's insides use and the project also defines (``_size``, ``_layout``...) is no excuse: read on
    anything but ``self`` in a class of ours that sets it, it may be Textual's, and must be in the table (or,
    read on an object of ours by a test, in :data:`OURS_READ_OUTSIDE`)."""
    read, defined = _names_in(tuple(_sources()))
    both = frozenset((read & defined & _textual_names()) - {entry.name for entry in PRIVATE})
    assert len(both) > 20, f"the scan finds the names both use (else it sees nothing): {sorted(both)}"
    stray = _reads_not_self_owned(tuple(_sources()), both - set(OURS_READ_OUTSIDE))
    assert not stray, f"private names of Textual's (or ours?) read on another object: {stray}"


@pytest.mark.parametrize("name", sorted(OURS_READ_OUTSIDE))
def test_a_name_said_to_be_ours_is_defined_by_the_class_named(name: str) -> None:
    module, owner, _why = OURS_READ_OUTSIDE[name]
    cls = getattr(importlib.import_module(module), owner)
    assert name in _self_stores(cls) | _class_body_names(cls), f"{owner} does not define {name}"
