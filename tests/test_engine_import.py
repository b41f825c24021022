"""The package's shape: one top-level name, an engine without Textual, its rooms in one order, one face, no cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The installed package's parts and the folders that hold them (pyproject's package-dir).
PARTS = {"studymon": "studymon", "studymon.engine": "engine", "studymon.tui": "tui",
         "studymon.widgets": "widgets", "studymon.refstudy": "refstudy"}

ENGINE_MODULES = [
    "studymon.engine", "studymon.engine.live.session", "studymon.engine.live.supervisor", "studymon.engine.kill.protocol",
    "studymon.engine.judge", "studymon.engine.judge.report", "studymon.engine.contract.folder", "studymon.engine.launch.prepare", "studymon.engine.runtimes.docker",
    "studymon.engine.runtimes.process", "studymon.engine.judge.table", "studymon.engine.load.sampler",
]


def test_engine_imports_no_textual() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in ENGINE_MODULES)
        + "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith(('textual.', 'studymon.tui', 'studymon.widgets')))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_kill_protocol_does_not_know_the_session() -> None:
    """The kill is given what it needs; it never reaches into the session that drives it."""
    code = "import sys\nimport studymon.engine.kill.protocol\nprint('studymon.engine.live.session' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    source = (ROOT / "engine" / "kill" / "protocol.py").read_text()
    assert "engine.session" not in source and "StudySession" not in source


def test_the_console_starts_without_reading_the_judge() -> None:
    """The judge proper (a tenth of a second to import) is read when a study ends or ``report`` runs, not
    before a console's first frame; ``studymon.engine.judge``'s names still reach it."""
    code = (
        "import sys\nimport studymon.tui.cli, studymon.tui.app\n"
        "print(sorted(m for m in sys.modules if m.startswith('studymon.engine.judge.') and m != 'studymon.engine.judge.verdict'))\n"
        "from studymon.engine.judge import Judgement, NotEvidence, judge\n"
        "from studymon.engine.judge.report import judge as judge_itself\n"
        "print(judge is judge_itself and Judgement.__name__ == 'Judgement' and NotEvidence.__name__)\n"
        "import studymon.engine.judge as j\n"
        "print(hasattr(j, 'nothing_of_the_kind'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "NotEvidence", "False"]


def _modules() -> dict[str, Path]:
    """Every module of the package, by its dotted name."""
    found: dict[str, Path] = {}
    for package, folder in PARTS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            found[".".join([package, *parts])] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Which of the package's modules each one imports (at any depth of its code), read with ``ast``."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".") if is_package else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                # "import a.b.c" loads a, a.b and a.b.c: the deepest known module is the edge.
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of ``graph``, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


def test_no_import_cycle_among_the_modules() -> None:
    graph = import_graph()
    assert len(graph) > 40 and "studymon.engine" in graph["studymon.tui.cli"]
    assert "studymon.engine.live.session" in graph["studymon.engine"]  # the face's names, as mypy reads them
    cycles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert cycles == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [c for c in strongly_connected(graph) if len(c) > 1] == [["a", "b", "c"]]


def test_the_engine_does_not_import_the_front_ends_or_the_reference_study() -> None:
    graph = import_graph()
    for name, targets in graph.items():
        if name.startswith("studymon.engine"):
            assert not {t for t in targets if t.startswith(("studymon.tui", "studymon.widgets", "studymon.refstudy"))}, name


def test_the_wheel_holds_one_top_level_name(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path),
                    str(ROOT)], check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("studymon-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"studymon"}
    for needed in ("studymon/__main__.py", "studymon/engine/kill/protocol.py", "studymon/engine/runtimes/process.py",
                   "studymon/tui/app.tcss", "studymon/widgets/study_pane.py", "studymon/refstudy/research.json",
                   "studymon/refstudy/payload.sh"):
        assert needed in names
    (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["studymon"]


def test_python_dash_m_studymon_runs_outside_the_repository(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "studymon", "--version"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and out.stdout.strip().startswith("studymon ")
    bare = subprocess.run([sys.executable, "-c", "import engine"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert bare.returncode != 0 and "No module named 'engine'" in bare.stderr


# The engine's rooms, bottom to top (docs/architecture.md): a module imports its own room and the rooms below
# it, never one above.  ``events`` is a room of one module: the words a session and its front end share.
ROOMS = ("io", "contract", "evidence", "fs", "runtimes", "judge", "events", "launch", "load", "kill", "live", "explore")
ENGINE = "studymon.engine"


def room_of(module: str) -> str | None:
    """The room of an engine module (None for the engine's face, ``studymon.engine`` itself)."""
    if module == ENGINE:
        return None
    return module.removeprefix(ENGINE + ".").split(".")[0]


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Each import of ``graph`` from an engine room to a room above it (or into the face), as ``a -> b``."""
    found = []
    for name, targets in sorted(graph.items()):
        if not name.startswith(ENGINE + "."):
            continue
        below = ROOMS.index(room_of(name) or "")
        for target in sorted(targets):
            if target.startswith(ENGINE) and (room_of(target) is None or ROOMS.index(room_of(target) or "") > below):
                found.append(f"{name} -> {target}")
    return found


def test_every_engine_module_stands_in_a_room_of_the_order() -> None:
    rooms = {room_of(name) for name in import_graph() if name.startswith(ENGINE + ".")}
    assert rooms == set(ROOMS), "a new room is placed in ROOMS (and docs/architecture.md) before it is used"


def test_the_engine_s_rooms_import_one_way_down() -> None:
    assert upward(import_graph()) == []


def test_an_import_up_or_into_the_face_is_found() -> None:
    graph = {
        "studymon.engine.io.clock": {"studymon.engine.io.safefile"},
        "studymon.engine.contract.ledger": {"studymon.engine.io.safefile", "studymon.engine.live.pump"},
        "studymon.engine.judge.read": {"studymon.engine.contract.ledger", "studymon.engine"},
        "studymon.engine.explore.trial": {"studymon.engine.judge.report", "studymon.engine.events"},
    }
    assert upward(graph) == ["studymon.engine.contract.ledger -> studymon.engine.live.pump",
                             "studymon.engine.judge.read -> studymon.engine"]


def code_strings(source: str) -> list[tuple[int, str]]:
    """The string constants of a module's source that are not docstrings, with their lines."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_engine_module_names_a_front_end_or_a_room_above_it_in_a_string() -> None:
    """An import by name (``importlib``, ``python -m``) is an arrow no import statement shows: the engine starts
    the command line as ``-m studymon``, and names no module of a front end or of a room above its own."""
    import re

    dotted = re.compile(r"studymon\.(tui|widgets)\b|studymon\.engine\.(\w+)")
    found = []
    for name, path in _modules().items():
        if not name.startswith(ENGINE + "."):
            continue
        below = ROOMS.index(room_of(name) or "")
        for line, text in code_strings(path.read_text()):
            for m in dotted.finditer(text):
                room = m.group(2)
                if m.group(1) or (room in ROOMS and ROOMS.index(room) > below):
                    found.append(f"{path.relative_to(ROOT)}:{line}: {text!r}")
    assert found == []


def _face() -> tuple[list[str], dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
    """The face's ``__all__``, its table of names, and the names its ``TYPE_CHECKING`` block imports, as read."""
    tree = ast.parse((ROOT / "engine" / "__init__.py").read_text())
    exported: list[str] = []
    table: dict[str, tuple[str, str]] = {}
    typed: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["__all__"]:
            exported = ast.literal_eval(node.value)
        elif isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                for a in imp.names:
                    typed[a.asname or a.name] = (imp.module.removeprefix(ENGINE + "."), a.name)
    import studymon.engine as face

    table = dict(face._FACE)
    return exported, table, typed


def test_the_engine_s_face_exports_what_it_names_and_reads_nothing_until_asked() -> None:
    exported, table, typed = _face()
    assert len(set(exported)) == len(exported) and set(exported) == {*table, "judge"}
    assert typed == table, "the TYPE_CHECKING imports are the face's table, name for name"
    code = (
        "import sys, studymon.engine as e\n"
        "print(sorted(m for m in sys.modules if m.startswith('studymon.engine.')))\n"
        "missing = [n for n in e.__all__ if getattr(e, n, None) is None]\n"
        "print(missing)\n"
        "from studymon.engine import judge, Check\n"
        "print(judge.judge.__module__, Check.__module__, hasattr(e, 'no_such_name'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "[]", "studymon.engine.judge.report studymon.engine.judge.verdict False"]


def front_end_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each import of a front end (or of ``studymon`` itself) that goes past the engine's face (the judge is a room
    the face hands on whole: ``judge.judge(out)``)."""
    return [f"{name} -> {target}" for name, targets in sorted(graph.items())
            if not name.startswith((ENGINE, "studymon.refstudy"))
            for target in sorted(targets) if target.startswith(ENGINE + ".") and target != ENGINE + ".judge"]


def test_the_front_ends_import_the_engine_s_face_alone() -> None:
    graph = import_graph()
    assert front_end_imports(graph) == []
    exported, _, _ = _face()
    for name, path in _modules().items():
        if name.startswith(("studymon.tui", "studymon.widgets")) or name in ("studymon", "studymon.__main__"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module == ENGINE:
                    assert {a.name for a in node.names} <= set(exported), (name, [a.name for a in node.names])


def test_an_import_past_the_face_is_found() -> None:
    graph = {"studymon.tui.cli": {"studymon.engine", "studymon.engine.live.session"}, "studymon.widgets.x": {"studymon.engine"},
             "studymon.engine.live.session": {"studymon.engine.kill.driver"}}
    assert front_end_imports(graph) == ["studymon.tui.cli -> studymon.engine.live.session"]


# --- parts handed over at construction --------------------------------------------------------------

ENGINE_DIR = ROOT / "engine"


def wirings(source: str, parts: set[str]) -> list[str]:
    """Assignments that hand one object a collaborator after it was made: ``other.attr = self`` (or a method of the
    class it is written in, or an attribute the class sets to a new object of one of ``parts``, the engine's classes:
    ``self.kills = KillDriver(...)``), where ``other`` is not ``self``.  A part takes its collaborators in its constructor instead, so that the order in which
    they are made, and which one calls which, is read from the constructor alone."""
    found = []
    for cls in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)):
        methods = {f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        made = {
            t.attr
            for node in ast.walk(cls)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id in parts
            for t in node.targets
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
        }
        for node in ast.walk(cls):
            if not isinstance(node, ast.Assign):
                continue
            value = node.value
            handed = (isinstance(value, ast.Name) and value.id == "self") or (
                isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self"
                and (value.attr in methods or value.attr in made)
            )
            onto_other = any(
                isinstance(t, ast.Attribute) and not (isinstance(t.value, ast.Name) and t.value.id == "self")
                for t in node.targets
            )
            if handed and onto_other:
                found.append(f"{cls.name} line {node.lineno}: {ast.unparse(node)}")
    return found


def test_no_engine_part_is_wired_after_construction() -> None:
    """The pump is given the kill driver and the ledger reads it shares with it; the driver makes its own event
    recorder, told of each event: nothing sets a collaborator on another part afterwards (``pump.kill = ...``)."""
    sources = {path: path.read_text() for path in sorted(ENGINE_DIR.rglob("*.py"))}
    parts = {n.name for text in sources.values() for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ClassDef)}
    assert {"KillDriver", "LedgerPump", "LedgerReads", "EventRecorder"} <= parts
    found = [f"{path.relative_to(ENGINE_DIR)}: {w}" for path, text in sources.items() for w in wirings(text, parts)]
    assert found == []


def test_a_wiring_after_construction_is_found() -> None:
    """The wirings the session and the driver once made are found, and handing over data is not a wiring."""
    source = '''
class Session:
    def __init__(self, spec):
        self.pump = LedgerPump(spec)
        self.kills = KillDriver(self.pump)
        self.pump.kill = self.kills
        self.out = spec.out
        self.pump.out = self.out

class Driver:
    def __init__(self, recorder):
        recorder.listener = self.event_seen

    def event_seen(self, event):
        pass
'''
    assert wirings(source, {"LedgerPump", "KillDriver"}) == [
        "Session line 6: self.pump.kill = self.kills",
        "Driver line 12: recorder.listener = self.event_seen",
    ]


def test_the_kill_driver_never_names_the_pump() -> None:
    """Data goes one way: the pump asks the driver of each batch it read; the kill room names no pump in its code."""
    named = [
        f"{path.name} line {node.lineno}: {name}"
        for path in sorted((ENGINE_DIR / "kill").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        for name in ([node.id] if isinstance(node, ast.Name) else [node.attr] if isinstance(node, ast.Attribute) else [])
        if "pump" in name.lower()
    ]
    assert named == []


def test_every_package_of_the_tree_is_installed() -> None:
    """``pip install .`` installs the packages pyproject.toml lists, no others: a room left out installs a studymon
    that cannot start (the quick start would fail in a fresh virtual environment)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for name, folder in config["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *rel)))
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
