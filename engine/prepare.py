"""Checking a whole command's input before anything is written, then creating the folders.

``studymon run`` validates every ``ID=OUT`` pair, the template and the
backend first; only when all of it holds does it create any folder.  A
refused command leaves the disk exactly as it was.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engine.evidence import read_json, write_json
from engine.runtimes import docker_answers
from engine.spec import BadInput, StudySpec, load_template, materialise, parse_pair


def _specs(pairs: list[str]) -> list[StudySpec]:
    if not pairs:
        raise BadInput("no study given: name at least one ID=OUT, e.g. alpha=runs/alpha")
    specs = [StudySpec(*parse_pair(p)) for p in pairs]
    ids = [s.id for s in specs]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise BadInput(f"study id {sorted(dup)[0]!r} is given twice: every study needs its own id")
    outs = [s.out for s in specs]
    for i, a in enumerate(outs):
        for b in outs[i + 1 :]:
            if a == b or a in b.parents or b in a.parents:
                raise BadInput(f"output folders {a} and {b} overlap: give every study its own folder")
    return specs


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
    ids = {s.id for s in specs}
    for a in armed_ids:
        if a not in ids:
            raise BadInput(f"--kill-after-first-diagnosis-start {a!r}: no study with that id in this command")
    template = load_template(template_path)
    for s in specs:
        if os.path.lexists(s.out):
            raise BadInput(f"{s.out} exists; a new study never reuses a folder: pick a new OUT, or add --resume to continue it")
        parent = s.out.parent
        if parent == new_parent:
            continue
        if not parent.is_dir():
            raise BadInput(f"{parent} does not exist: create it first or pick another OUT")
        if not os.access(parent, os.W_OK):
            raise BadInput(f"{parent} is not writable: pick another OUT")
    resolved = resolve(backend or template.get("backend", "auto"))
    return specs, template, resolved


def create_fresh(specs: list[StudySpec], template: dict[str, Any], backend: str) -> None:
    """Make each ``OUT`` (refusing one that appeared meanwhile) and write its research.json."""
    for s in specs:
        os.mkdir(s.out)  # FileExistsError if it appeared since the check: nothing is overwritten
        write_json(s.out / "research.json", materialise(template, s.id, backend))


def plan_resume(pairs: list[str], armed_ids: list[str]) -> list[StudySpec]:
    """Validate a resume: each OUT is an unfinished study of that id."""
    specs = _specs(pairs)
    ids = {s.id for s in specs}
    for a in armed_ids:
        if a not in ids:
            raise BadInput(f"--kill-after-first-diagnosis-start {a!r}: no study with that id in this command")
    for s in specs:
        research_path = s.out / "research.json"
        if not research_path.is_file():
            raise BadInput(f"{s.out} holds no study (no research.json): check the path, or start it without --resume")
        try:
            research = read_json(research_path)
        except ValueError:
            raise BadInput(f"{research_path} is not valid JSON; the folder is not resumable as it is") from None
        if research.get("study") != s.id:
            raise BadInput(f"{s.out} holds study {research.get('study')!r}, not {s.id!r}: give the id it was started with")
        if (s.out / "report.json").exists():
            raise BadInput(f"{s.id} has finished (report.json exists); there is nothing to resume. See: studymon report {s.out}")
        if research.get("backend") == "docker" and not docker_answers():
            raise BadInput(f"{s.id} runs on Docker, but no Docker engine answers: start dockerd, then resume")
    return specs


def plan_attach(outs: list[Path]) -> list[StudySpec]:
    """Validate an attach: each OUT is an unfinished study's evidence folder."""
    if not outs:
        raise BadInput("no study given: name at least one OUT folder")
    specs = []
    for out in outs:
        out = Path(os.path.abspath(out))
        research_path = out / "research.json"
        if not research_path.is_file() or not (out / "launches.jsonl").is_file():
            raise BadInput(f"{out} is not a studymon evidence folder (no research.json or launches.jsonl)")
        try:
            research = read_json(research_path)
        except ValueError:
            raise BadInput(f"{research_path} is not valid JSON") from None
        if (out / "outcome.json").exists():
            raise BadInput(f"{out} has finished (outcome.json exists); see: studymon report {out}")
        specs.append(StudySpec(str(research.get("study")), out))
    ids = [s.id for s in specs]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise BadInput(f"study {sorted(dup)[0]!r} is named twice")
    return specs
