"""The engine runs without the UI: importing it loads no Textual module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ENGINE_MODULES = [
    "engine", "engine.session", "engine.supervisor", "engine.kill", "engine.report", "engine.prepare",
    "engine.runtimes.docker", "engine.runtimes.process", "engine.table", "engine.sampler",
]


def test_engine_imports_no_textual() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in ENGINE_MODULES)
        + "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith(('textual.', 'tui', 'widgets')))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_kill_protocol_does_not_know_the_session() -> None:
    """The kill is given what it needs; it never reaches into the session that drives it."""
    code = "import sys\nimport engine.kill\nprint('engine.session' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    source = (ROOT / "engine" / "kill.py").read_text()
    assert "engine.session" not in source and "StudySession" not in source
