"""What a study is before it runs: its id, its output folder, its template.

Everything here validates input and refuses it with a :class:`BadInput` that
names the thing and the fix, before anything is written.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")
DEFAULT_PREFIX = "inforsi"
BACKENDS = ("docker", "process", "auto")


class BadInput(ValueError):
    """Input the console refuses (exit status 2); the message says what and how to fix it."""


def default_template() -> Path:
    return Path(__file__).resolve().parent.parent / "refstudy" / "research.json"


def check_id(study_id: str) -> str:
    if not ID_PATTERN.match(study_id):
        raise BadInput(
            f"bad study id {study_id!r}: use 1-63 characters of a-z, 0-9, '_', '.', '-', starting with a letter or digit"
        )
    return study_id


def parse_pair(text: str) -> tuple[str, Path]:
    """``ID=OUT`` into a checked id and an absolute path."""
    if "=" not in text:
        raise BadInput(f"expected ID=OUT, got {text!r}: e.g. alpha=runs/alpha")
    study_id, out = text.split("=", 1)
    check_id(study_id)
    if not out:
        raise BadInput(f"{text!r}: OUT is empty; give a folder path after '='")
    return study_id, Path(os.path.abspath(out))


def load_template(path: Path) -> dict[str, Any]:
    """Read and validate a template (a study's ``research.json``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"template {path} does not exist: give --template an existing research.json") from None
    except OSError as exc:
        raise BadInput(f"template {path} cannot be read: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"template {path} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None
    if not isinstance(data, dict):
        raise BadInput(f"template {path} must be a JSON object")
    command = data.get("command")
    if command is None:
        raise BadInput(f'template {path} has no "command": add the controller argv prefix, e.g. ["python3", "-m", "refstudy"]')
    if not isinstance(command, list) or not command or not all(isinstance(c, str) and c for c in command):
        raise BadInput(f'template {path}: "command" must be a non-empty list of strings')
    prefix = data.get("containerPrefix", DEFAULT_PREFIX)
    if not isinstance(prefix, str) or not re.match(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$", prefix):
        raise BadInput(f'template {path}: "containerPrefix" must be a container-name-safe string')
    backend = data.get("backend", "auto")
    if backend not in BACKENDS:
        raise BadInput(f'template {path}: "backend" must be one of docker, process, auto (got {backend!r})')
    return data


def materialise(template: dict[str, Any], study_id: str, backend: str) -> dict[str, Any]:
    """The copy written to ``OUT/research.json``: the template with ``study`` and the resolved backend.

    A command starting with ``python3`` or ``python`` runs with this
    interpreter, so a study that is a Python module finds the packages the
    console was installed with.
    """
    copy = dict(template)
    copy["study"] = study_id
    copy["backend"] = backend
    copy.setdefault("containerPrefix", DEFAULT_PREFIX)
    return copy


def controller_argv(research: dict[str, Any], out: Path, resume: bool) -> list[str]:
    command = list(research["command"])
    if command and command[0] in ("python3", "python"):
        command[0] = sys.executable
    argv = command + ["--config", str(out / "research.json"), "--dir", str(out / "study")]
    if resume:
        argv.append("--resume")
    return argv


@dataclass(frozen=True)
class StudySpec:
    """One study to run or resume: id and evidence folder."""

    id: str
    out: Path

    @property
    def study_dir(self) -> Path:
        return self.out / "study"

    @property
    def ledger(self) -> Path:
        return self.out / "study" / "ledger.jsonl"
