"""The package's shape: one top-level name, an engine without Textual, no import cycle."""

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
    "studymon.engine", "studymon.engine.session", "studymon.engine.supervisor", "studymon.engine.kill",
    "studymon.engine.judge", "studymon.engine.judge.report", "studymon.engine.folder", "studymon.engine.prepare", "studymon.engine.runtimes.docker",
    "studymon.engine.runtimes.process", "studymon.engine.judge.table", "studymon.engine.sampler",
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
    code = "import sys\nimport studymon.engine.kill\nprint('studymon.engine.session' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    source = (ROOT / "engine" / "kill.py").read_text()
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
    assert len(graph) > 40 and "studymon.engine.session" in graph["studymon.tui.cli"]
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
    for needed in ("studymon/__main__.py", "studymon/engine/kill.py", "studymon/engine/runtimes/process.py",
                   "studymon/tui/app.tcss", "studymon/widgets/studymon.tcss", "studymon/refstudy/research.json",
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
