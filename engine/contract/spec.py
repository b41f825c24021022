"""What a study is before it runs: its id, its output folder, its template.

Everything here validates input and refuses it with a :class:`BadInput` that
names the thing and the fix, before anything is written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studymon.engine.contract.folder import EvidenceFolder
from studymon.engine.contract.rules import valid_id

DEFAULT_PREFIX = "inforsi"
# What a template may expect its study to end at (contract §6.7): the seed's halt, an export, either.
EXPECT_ENDS = ("halt", "export", "any")
BACKENDS = ("docker", "process", "auto")
# The template is copied into research.json and read by every session and
# ``report``; a study's bulk data belongs in files the template names.
MAX_TEMPLATE_BYTES = 1024 * 1024
PYTHONS = ("python3", "python")  # a command starting with one of these runs with the console's interpreter


class BadInput(ValueError):
    """Input the console refuses (exit status 2); the message says what and how to fix it."""


def check_id(study_id: str) -> str:
    if not valid_id(study_id):  # matched in full: no trailing newline slips through
        raise BadInput(
            f"bad study id {study_id!r}: use 1-63 characters of a-z, 0-9, '_', '.', '-', "
            "starting with a letter or digit"
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
    return study_id, check_out_path(out)


def check_out_path(out: str | Path) -> Path:
    """An OUT path made absolute, refused when it could not be named in a one-line command or created.

    A control character (a newline above all) would break the printed
    ``--resume`` and ``attach`` commands over lines; a name longer than the
    file system allows would fail only at ``mkdir``, after other folders of
    the command were made.
    """
    text = str(out)
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise BadInput(f"OUT {text!r} has a control character (newline, tab, ...): pick a plain folder name")
    path = Path(os.path.abspath(text))
    try:
        encoded = os.fsencode(path)
    except UnicodeError:
        raise BadInput(f"OUT {text!r} cannot be encoded as a file name: pick a plain folder name") from None
    if len(encoded) >= 4096 or any(len(os.fsencode(part)) > 255 for part in path.parts):
        raise BadInput(
            f"OUT {text[:60]!r}... is longer than a file name may be (255 bytes a name, 4095 a path): "
            "pick a shorter one"
        )
    return path


def _read_template_bytes(path: Path) -> bytes:
    """The template's bytes: a regular file of at most :data:`MAX_TEMPLATE_BYTES`, read without blocking.

    ``O_NONBLOCK`` keeps a FIFO from hanging the open; the size is checked on
    the open file, and the read is capped in case it grows meanwhile.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise BadInput(f"template {path} does not exist: give --template an existing research.json") from None
    except OSError as exc:
        raise BadInput(f"template {path} cannot be read ({exc.strerror}): give --template a readable file") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise BadInput(f"template {path} is {kind}: give --template a JSON file")
        if info.st_size > MAX_TEMPLATE_BYTES:
            raise BadInput(_too_big(path, info.st_size))
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(MAX_TEMPLATE_BYTES + 1)
    except OSError as exc:
        raise BadInput(f"template {path} cannot be read ({exc.strerror}): give --template a readable file") from None
    finally:
        os.close(fd)
    if len(data) > MAX_TEMPLATE_BYTES:
        raise BadInput(_too_big(path, len(data)))
    return data


def _too_big(path: Path, size: int) -> str:
    return (
        f"template {path} has {size:,} bytes; at most {MAX_TEMPLATE_BYTES:,} (1 MiB) are accepted: "
        "keep a study's bulk data in a file of its own and name that file in the template"
    )


def load_template(path: Path) -> dict[str, Any]:
    """Read and validate a template (a study's ``research.json``)."""
    raw = _read_template_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"template {path} is not UTF-8 (byte {exc.start}): save it as UTF-8 JSON") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(
            f"template {path} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}"
        ) from None
    except RecursionError:
        raise BadInput(f"template {path} is nested too deeply to read: flatten it") from None
    if not isinstance(data, dict):
        raise BadInput(f"template {path} must be a JSON object")
    command = data.get("command")
    if command is None:
        raise BadInput(
            f'template {path} has no "command": add the controller argv prefix, '
            'e.g. ["python3", "-m", "studymon.refstudy"]'
        )
    if not isinstance(command, list) or not command or not all(isinstance(c, str) and c for c in command):
        raise BadInput(f'template {path}: "command" must be a non-empty list of strings')
    if any("\0" in c for c in command):
        raise BadInput(f'template {path}: "command" has a NUL character, which no argument can hold: remove it')
    prefix = data.get("containerPrefix", DEFAULT_PREFIX)
    if not isinstance(prefix, str) or not re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}", prefix):
        raise BadInput(
            f'template {path}: "containerPrefix" must be 1-64 characters of letters, digits, "_", ".", "-", '
            "starting with a letter or digit"
        )
    backend = data.get("backend", "auto")
    if backend not in BACKENDS:
        raise BadInput(f'template {path}: "backend" must be one of docker, process, auto (got {backend!r})')
    expect = data.get("expectEnd", "halt")
    if expect not in EXPECT_ENDS:
        raise BadInput(
            f'template {path}: "expectEnd" must be one of halt, export, any (got a {type(expect).__name__}'
            + (f" {expect!r}" if isinstance(expect, str) and len(expect) <= 20 and expect.isprintable() else "")
            + '): say what the study ends at, "halt" being the seed\'s "balance exhausted"'
        )
    return data


def container_prefix(research: Mapping[str, Any]) -> str:
    """The study's ``containerPrefix`` as its template or ``research.json`` gives it, else the default."""
    return str(research.get("containerPrefix", DEFAULT_PREFIX))


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


def check_program(command: list[str], out: Path, where: str) -> str:
    """The controller program of ``command`` as it will be executed, refused unless it exists and is executable.

    The controller runs with the working directory ``OUT``, so a relative
    path is taken from there (as ``exec`` will), and a bare name is looked up
    on ``PATH``.  A Python interpreter (``python3``/``python``, replaced by
    this one) followed by a script path needs that script to exist too.
    ``where`` names the template or research.json in the message.
    """
    program = command[0]
    if program in PYTHONS:
        resolved = sys.executable
    elif "/" in program:
        resolved = str(out / program) if not os.path.isabs(program) else program
        if not os.path.isabs(program) and not out.is_dir():
            raise BadInput(
                f"{where}: the controller program {program!r} is a relative path, taken from OUT (the "
                "controller's working folder), which is new: give an absolute path or a program on PATH"
            )
        if not os.path.exists(resolved):
            raise BadInput(f'{where}: the controller program {program!r} does not exist: fix "command"')
    else:
        found = shutil.which(program)
        if found is None:
            raise BadInput(
                f'{where}: the controller program {program!r} is not on PATH: give its absolute path in "command"'
            )
        resolved = found
    if os.path.isdir(resolved):
        raise BadInput(f'{where}: the controller program {program!r} is a folder, not a program: fix "command"')
    if not os.access(resolved, os.X_OK):
        raise BadInput(f'{where}: the controller program {resolved!r} is not executable: chmod +x it, or fix "command"')
    if _is_python(program, resolved) and len(command) > 1:
        script = command[1]
        if script.endswith(".py") and not script.startswith("-"):
            path = Path(script) if os.path.isabs(script) else out / script
            if not path.is_file():
                raise BadInput(
                    f"{where}: the controller script {script!r} does not exist"
                    + ("" if os.path.isabs(script) else " (a relative path is taken from OUT)")
                    + ': give its absolute path in "command"'
                )
    return resolved


def _is_python(program: str, resolved: str) -> bool:
    return program in PYTHONS or os.path.basename(resolved).startswith("python")


def controller_argv(research: dict[str, Any], out: Path, resume: bool) -> list[str]:
    command = list(research["command"])
    if command and command[0] in PYTHONS:
        command[0] = sys.executable
    argv = [*command, "--config", str(EvidenceFolder(out).research), "--dir", str(EvidenceFolder(out).study)]
    if resume:
        argv.append("--resume")
    return argv


@dataclass(frozen=True)
class StudySpec:
    """One study to run or resume: id and evidence folder."""

    id: str
    out: Path

    @property
    def folder(self) -> EvidenceFolder:
        """The study's evidence folder, ``OUT``: every file of it by name."""
        return EvidenceFolder(self.out)
