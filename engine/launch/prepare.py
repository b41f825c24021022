"""Checking a whole command's input before anything is written, then creating the folders.

``studymon run`` validates every ``ID=OUT`` pair, the template, the
controller program and the backend first; only when all of it holds does it
create any folder.  A refused command leaves the disk exactly as it was.
``--resume`` and ``attach`` check that each OUT is there and writable before
a session appends to it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from studymon.engine.contract.folder import EvidenceFolder
from studymon.engine.contract.rules import valid_id
from studymon.engine.contract.spec import (
    BadInput,
    StudySpec,
    check_out_path,
    check_program,
    load_template,
    materialise,
    parse_pair,
)
from studymon.engine.evidence.writer import read_json, write_json
from studymon.engine.runtimes import docker_answers

# Studies of one command share one event loop, one sampler and two cores on
# the usual machine.  bench/many_studies.py measures 48 streaming at once (the
# console's CPU and memory, a record to its row, an armed study's kill
# reaction beside the machine's floor); 64 is the bound a command accepts.
# More studies are run as several commands.
MAX_STUDIES = 64

# What the console writes in an OUT (PROTOCOL §5) beside research.json; one of
# them with a research.json marks a folder as some study's evidence.
EVIDENCE_MARKS = EvidenceFolder.MARKS
# The files a resumed or attached session appends to: each must be writable if it is there.
APPENDED = EvidenceFolder.APPENDED


def _too_many(count: int, what: str) -> BadInput:
    return BadInput(
        f"{count} studies in one command; at most {MAX_STUDIES} are {what} at once: "
        f"split them over several commands of at most {MAX_STUDIES} each"
    )


def _specs(pairs: list[str], what: str = "run") -> list[StudySpec]:
    if not pairs:
        raise BadInput("no study given: name at least one ID=OUT, e.g. alpha=runs/alpha")
    if len(pairs) > MAX_STUDIES:
        raise _too_many(len(pairs), what)
    specs = [StudySpec(*parse_pair(p)) for p in pairs]
    ids = [s.id for s in specs]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise BadInput(f"study id {min(dup)!r} is given twice: every study needs its own id")
    outs = [s.out for s in specs]
    for i, a in enumerate(outs):
        for b in outs[i + 1 :]:
            if a == b or a in b.parents or b in a.parents:
                raise BadInput(f"output folders {a} and {b} overlap: give every study its own folder")
    return specs


def _check_armed(armed_ids: list[str], specs: list[StudySpec]) -> None:
    ids = {s.id for s in specs}
    for a in armed_ids:
        if a not in ids:
            raise BadInput(f"--kill {a}:POINT: no study with that id in this command")


def resolve(backend: str) -> str:
    if backend == "docker":
        if not docker_answers():
            raise BadInput(
                "backend docker, but no Docker engine answers (DOCKER_HOST or the default socket): "
                "start dockerd, or use --backend process"
            )
        return "docker"
    if backend == "process":
        return "process"
    return "docker" if docker_answers() else "process"


# --- evidence folders ------------------------------------------------------------


def _names_a_study(research: Path) -> bool:
    """Whether ``research`` is a console-written template copy (it has ``study`` and a resolved ``backend``).

    A template alone has neither, so a study's source folder holding its
    ``research.json`` is not mistaken for evidence.  Read only when small.
    """
    try:
        if research.stat().st_size > 1024 * 1024:
            return False
        data = json.loads(research.read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    return (
        isinstance(data, dict) and isinstance(data.get("study"), str) and data.get("backend") in ("docker", "process")
    )


def is_evidence_folder(folder: Path) -> bool:
    """Whether ``folder`` is some study's OUT: a research.json with what the console writes beside it.

    Right after it is made, an OUT holds only research.json: then the copy
    itself, naming its study, tells.
    """
    research = EvidenceFolder(folder).research
    if not research.is_file():
        return False
    return any(os.path.lexists(folder / mark) for mark in EVIDENCE_MARKS) or _names_a_study(research)


def enclosing_evidence(out: Path) -> Path | None:
    """The nearest existing folder above ``out`` that is a study's evidence folder, if any.

    Both the path as given and its real path are walked: a symlinked parent
    must not hide that the folder lands inside another OUT.
    """
    seen: set[Path] = set()
    starts = [out.parent, Path(os.path.realpath(out.parent))]
    for start in starts:
        for folder in (start, *start.parents):
            if folder in seen:
                continue
            seen.add(folder)
            if folder.is_dir() and is_evidence_folder(folder):
                return folder
    return None


def _writable_out(out: Path, command: str) -> None:
    """Refuse an OUT that vanished or cannot be appended to (read-only mount, permissions).

    ``os.access`` asks the kernel, so a read-only mount is refused for root
    too; nothing is created to find out.
    """
    if not os.path.lexists(out):
        raise BadInput(f"{out} does not exist (moved or deleted?): give the folder the study was started in")
    if not out.is_dir():
        raise BadInput(f"{out} is not a folder: give the OUT of a study")
    fix = f"make it writable (or remount it read-write), then run {command} again"
    if not os.access(out, os.W_OK | os.X_OK):
        raise BadInput(f"{out} is read-only, and the study's evidence is appended there: {fix}")
    study = EvidenceFolder(out).study
    if study.is_dir() and not os.access(study, os.W_OK | os.X_OK):
        raise BadInput(f"{study} is read-only, and the study appends its ledger there: {fix}")
    for name in APPENDED:
        path = out / name
        if path.exists() and not os.access(path, os.W_OK):
            raise BadInput(f"{path} is read-only, and it is appended to: {fix}")


# --- the three ways in -------------------------------------------------------------


def plan_fresh(
    pairs: list[str],
    template_path: Path,
    armed_ids: list[str],
    backend: str | None = None,
    new_parent: Path | None = None,
) -> tuple[list[StudySpec], dict[str, Any], str]:
    """Validate a fresh start; returns the specs, the template and the resolved backend.

    ``new_parent`` is a folder the caller will create for the OUTs (the demo's).
    """
    specs = _specs(pairs)
    _check_armed(armed_ids, specs)
    template = load_template(template_path)
    for s in specs:
        if os.path.lexists(s.out):
            raise BadInput(
                f"{s.out} exists; a new study never reuses a folder: pick a new OUT, or add --resume to continue it"
            )
        inside = enclosing_evidence(s.out)
        if inside is not None:
            raise BadInput(
                f"{s.out} would lie inside {inside}, the evidence folder of another study: pick an OUT outside it"
            )
        parent = s.out.parent
        if parent == new_parent:
            continue
        if not os.path.lexists(parent):
            raise BadInput(f"{parent} does not exist: create it first or pick another OUT")
        if not parent.is_dir():
            raise BadInput(f"{parent} is not a folder: pick another OUT")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise BadInput(f"{parent} is not writable: pick another OUT")
    check_program(list(template["command"]), specs[0].out, f"template {template_path}")
    resolved = resolve(backend or template.get("backend", "auto"))
    return specs, template, resolved


def create_fresh(
    specs: list[StudySpec],
    template: dict[str, Any],
    backend: str,
    overrides: dict[str, dict[str, Any]] | None = None,
) -> None:
    """Make each ``OUT`` (refusing one that appeared meanwhile) and write its research.json.

    ``overrides`` gives, per study id, keys that replace the template's for that study
    (the demo's studies differ in seed, budget and ablation).

    All or nothing: when one cannot be made, the folders this call made
    (holding only their research.json) are removed again and the command is
    refused, so a failed start leaves no half-made study behind.
    """
    made: list[Path] = []
    try:
        for s in specs:
            os.mkdir(s.out)  # FileExistsError if it appeared since the check: nothing is overwritten
            made.append(s.out)
            own = {**template, **(overrides or {}).get(s.id, {})}
            write_json(s.folder.research, materialise(own, s.id, backend))
    except OSError as exc:
        for out in made:
            shutil.rmtree(out, ignore_errors=True)
        what = exc.strerror or str(exc)
        name = exc.filename or (specs[len(made)].out if len(made) < len(specs) else made[-1])
        raise BadInput(f"cannot create {name}: {what}; nothing was started: fix it and run the command again") from None


def plan_resume(pairs: list[str], armed_ids: list[str]) -> list[StudySpec]:
    """Validate a resume: each OUT is an unfinished, writable study of that id whose controller can start."""
    specs = _specs(pairs, "resumed")
    _check_armed(armed_ids, specs)
    for s in specs:
        if not os.path.lexists(s.out):
            raise BadInput(f"{s.out} does not exist (moved or deleted?): give the folder the study was started in")
        research_path = s.folder.research
        if not research_path.is_file():
            raise BadInput(f"{s.out} holds no study (no research.json): check the path, or start it without --resume")
        try:
            research = read_json(research_path)
        except ValueError:
            raise BadInput(f"{research_path} is not valid JSON; the folder is not resumable as it is") from None
        except OSError as exc:
            raise BadInput(
                f"{research_path} cannot be read ({exc.strerror}): fix its permissions, then resume"
            ) from None
        if not isinstance(research, dict):
            raise BadInput(f"{research_path} is not a JSON object; the folder is not resumable as it is")
        if research.get("study") != s.id:
            raise BadInput(
                f"{s.out} holds study {research.get('study')!r}, not {s.id!r}: give the id it was started with"
            )
        if s.folder.report.exists():
            raise BadInput(
                f"{s.id} has finished (report.json exists); there is nothing to resume. See: studymon report {s.out}"
            )
        _writable_out(s.out, "studymon run --resume")
        command = research.get("command")
        if not isinstance(command, list) or not command or not all(isinstance(c, str) and c for c in command):
            raise BadInput(
                f'{research_path}: "command" is not a non-empty list of strings; the study cannot be resumed'
            )
        check_program(command, s.out, str(research_path))
        if research.get("backend") == "docker" and not docker_answers():
            raise BadInput(f"{s.id} runs on Docker, but no Docker engine answers: start dockerd, then resume")
    return specs


def plan_attach(outs: list[Path]) -> list[StudySpec]:
    """Validate an attach: each OUT is an unfinished, writable study's evidence folder."""
    if not outs:
        raise BadInput("no study given: name at least one OUT folder")
    if len(outs) > MAX_STUDIES:
        raise _too_many(len(outs), "attached")
    specs = []
    for given in outs:
        out = check_out_path(given)
        if not os.path.lexists(out):
            raise BadInput(f"{out} does not exist (moved or deleted?): give the folder the study was started in")
        research_path = EvidenceFolder(out).research
        if not research_path.is_file() or not EvidenceFolder(out).launches.is_file():
            raise BadInput(f"{out} is not a studymon evidence folder (no research.json or launches.jsonl)")
        try:
            research = read_json(research_path)
        except ValueError:
            raise BadInput(f"{research_path} is not valid JSON") from None
        except OSError as exc:
            raise BadInput(
                f"{research_path} cannot be read ({exc.strerror}): fix its permissions, then attach"
            ) from None
        if not isinstance(research, dict):
            raise BadInput(f"{research_path} is not a JSON object")
        if EvidenceFolder(out).outcome.exists():
            raise BadInput(f"{out} has finished (outcome.json exists); see: studymon report {out}")
        study = research.get("study")
        if not valid_id(study):
            raise BadInput(
                f'{research_path} names no valid study id ("study": {study!r}): the folder is not a study\'s OUT'
            )
        _writable_out(out, "studymon attach")
        specs.append(StudySpec(study, out))
    ids = [s.id for s in specs]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise BadInput(f"study {min(dup)!r} is named twice")
    return specs
