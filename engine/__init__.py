"""The launch-and-check engine of studymon: its face to the front ends.

The engine launches studies, tails their ledgers, samples the machine, kills
and resumes, writes the evidence folder and judges it, and tells a front end
(the headless printer, the Textual console) what happens as typed events.
It never imports Textual.  Its rooms, bottom to top, each importing only
those below it (``docs/architecture.md``):

* :mod:`.io`: time formats, files an adversary may have written, quoting;
* :mod:`.contract`: the spec, the ledger and its rules, accounts, kill
  points, the evidence folder's names, exit statuses;
* :mod:`.evidence`: the evidence writer and its typed records;
* :mod:`.fs`: the pass-through mount under a study, and what it was given;
* :mod:`.runtimes` and :mod:`.judge`: the container runtimes; the checks;
* :mod:`.events`: what a session tells its front end;
* :mod:`.launch`, :mod:`.load`, :mod:`.kill`, :mod:`.live`: a study launched,
  measured, killed and followed while it runs;
* :mod:`.explore`: crash points, trials and campaigns.

The front ends import the names below from ``studymon.engine`` alone.  Each
is read on first use, so a console's first frame waits only for what it
draws.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Each name the face gives, and the module (and the name there) it comes from.
_FACE: dict[str, tuple[str, str]] = {
    **{
        n: ("contract.exits", n) for n in ("EXIT_FAIL", "EXIT_OK", "EXIT_UNKNOWN", "EXIT_USAGE", "exit_status", "worst")
    },
    "EvidenceFolder": ("contract.folder", "EvidenceFolder"),
    "file_system_missing": ("fs.fuse", "missing"),
    **{n: ("contract.killpoint", n) for n in ("BadPoint", "GRAMMAR", "KillPoint", "SEED", "parse_kill_option")},
    "Record": ("contract.ledger", "Record"),
    **{n: ("contract.rules", n) for n in ("KINDS", "stem")},
    **{
        n: ("contract.spec", n)
        for n in (
            "BadInput",
            "StudySpec",
            "check_out_path",
            "check_program",
            "container_prefix",
            "load_template",
            "parse_pair",
        )
    },
    **{
        n: ("events", n)
        for n in (
            "ArmChanged",
            "ContainerChanged",
            "KillStep",
            "Problem",
            "ControllerEnded",
            "ControllerStarted",
            "Progress",
            "RecordsSeen",
            "Sample",
            "State",
            "StateChanged",
            "StudyEvent",
            "StudyLoad",
            "Verdicts",
        )
    },
    **{n: ("evidence.writer", n) for n in ("EvidenceExists", "read_json", "write_text")},
    **{
        n: ("explore.campaign", n)
        for n in ("CampaignFolder", "campaign_status", "is_campaign", "rejudge", "saved_matrix", "to_resume")
    },
    **{n: ("explore.explorer", n) for n in ("ExploreFailed", "ExploreOptions", "Explorer")},
    "FolderFollower": ("explore.follow", "FolderFollower"),
    **{n: ("io.clock", n) for n in ("parse_rfc3339", "utc_epoch")},
    "Pace": ("io.pace", "Pace"),
    **{n: ("io.quoting", n) for n in ("DETAIL_LIMIT", "free_text", "json_text", "shown")},
    **{n: ("judge", n) for n in ("Check", "Judgement", "NotEvidence")},
    **{n: ("judge.table", n) for n in ("MANY_STUDIES", "MARKS", "checks_report")},
    **{n: ("launch.lock", n) for n in ("StudyLock", "claim_for_command")},
    **{n: ("launch.prepare", n) for n in ("create_fresh", "plan_attach", "plan_fresh", "plan_resume", "resolve")},
    **{n: ("live.finish", n) for n in ("SessionResult", "resume_command")},
    "StudySession": ("live.session", "StudySession"),
    "Supervisor": ("live.supervisor", "Supervisor"),
    "runtime_main": ("runtimes.cli", "main"),
    "fs_main": ("fs.server", "main"),
    "check_state_folder": ("runtimes.process", "check_state_folder"),
}

# The judge is a room with a face of its own (``judge.judge(out)``, ``judge.NotEvidence``): its function cannot
# take the room's name here, which the import system gives the room once it is read.
__all__ = [
    "DETAIL_LIMIT",
    "EXIT_FAIL",
    "EXIT_OK",
    "EXIT_UNKNOWN",
    "EXIT_USAGE",
    "GRAMMAR",
    "KINDS",
    "MANY_STUDIES",
    "MARKS",
    "SEED",
    "ArmChanged",
    "BadInput",
    "BadPoint",
    "CampaignFolder",
    "Check",
    "ContainerChanged",
    "ControllerEnded",
    "ControllerStarted",
    "EvidenceExists",
    "EvidenceFolder",
    "ExploreFailed",
    "ExploreOptions",
    "Explorer",
    "FolderFollower",
    "Judgement",
    "KillPoint",
    "KillStep",
    "NotEvidence",
    "Pace",
    "Problem",
    "Progress",
    "Record",
    "RecordsSeen",
    "Sample",
    "SessionResult",
    "State",
    "StateChanged",
    "StudyEvent",
    "StudyLoad",
    "StudyLock",
    "StudySession",
    "StudySpec",
    "Supervisor",
    "Verdicts",
    "campaign_status",
    "check_out_path",
    "check_program",
    "check_state_folder",
    "checks_report",
    "claim_for_command",
    "container_prefix",
    "create_fresh",
    "exit_status",
    "file_system_missing",
    "free_text",
    "fs_main",
    "is_campaign",
    "json_text",
    "judge",
    "load_template",
    "parse_kill_option",
    "parse_pair",
    "parse_rfc3339",
    "plan_attach",
    "plan_fresh",
    "plan_resume",
    "read_json",
    "rejudge",
    "resolve",
    "resume_command",
    "runtime_main",
    "saved_matrix",
    "shown",
    "stem",
    "to_resume",
    "utc_epoch",
    "worst",
    "write_text",
]

if TYPE_CHECKING:
    from studymon.engine.contract.exits import EXIT_FAIL, EXIT_OK, EXIT_UNKNOWN, EXIT_USAGE, exit_status, worst
    from studymon.engine.contract.folder import EvidenceFolder
    from studymon.engine.contract.killpoint import GRAMMAR, SEED, BadPoint, KillPoint, parse_kill_option
    from studymon.engine.contract.ledger import Record
    from studymon.engine.contract.rules import KINDS, stem
    from studymon.engine.contract.spec import (
        BadInput,
        StudySpec,
        check_out_path,
        check_program,
        container_prefix,
        load_template,
        parse_pair,
    )
    from studymon.engine.events import (
        ArmChanged,
        ContainerChanged,
        ControllerEnded,
        ControllerStarted,
        KillStep,
        Problem,
        Progress,
        RecordsSeen,
        Sample,
        State,
        StateChanged,
        StudyEvent,
        StudyLoad,
        Verdicts,
    )
    from studymon.engine.evidence.writer import EvidenceExists, read_json, write_text
    from studymon.engine.explore.campaign import (
        CampaignFolder,
        campaign_status,
        is_campaign,
        rejudge,
        saved_matrix,
        to_resume,
    )
    from studymon.engine.explore.explorer import ExploreFailed, ExploreOptions, Explorer
    from studymon.engine.explore.follow import FolderFollower
    from studymon.engine.fs.fuse import missing as file_system_missing
    from studymon.engine.fs.server import main as fs_main
    from studymon.engine.io.clock import parse_rfc3339, utc_epoch
    from studymon.engine.io.pace import Pace
    from studymon.engine.io.quoting import DETAIL_LIMIT, free_text, json_text, shown
    from studymon.engine.judge import Check, Judgement, NotEvidence
    from studymon.engine.judge.table import MANY_STUDIES, MARKS, checks_report
    from studymon.engine.launch.lock import StudyLock, claim_for_command
    from studymon.engine.launch.prepare import create_fresh, plan_attach, plan_fresh, plan_resume, resolve
    from studymon.engine.live.finish import SessionResult, resume_command
    from studymon.engine.live.session import StudySession
    from studymon.engine.live.supervisor import Supervisor
    from studymon.engine.runtimes.cli import main as runtime_main
    from studymon.engine.runtimes.process import check_state_folder


def __getattr__(name: str) -> Any:
    # Read on first use: importing the face reads none of the engine, so that a console's first frame
    # and ``studymon --version`` wait only for the rooms they use.
    where = _FACE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = where
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    globals()[name] = value  # once read, an attribute like any other
    return value
