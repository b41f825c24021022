"""How a study's session ends: the finish that judges it and publishes its reports, or the words for why it did not.

:func:`finish` runs once the controller has ended for good (or the
operator closed a study that will not go on): it writes ``outcome.json``,
judges the evidence folder (:func:`studymon.engine.judge.judge`), publishes
the reports of a finished study and says what the operator can do next.
Each report is written only if it is not there yet, so a finish cut short
(a full disk) is completed by ``--resume``.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from studymon.engine.contract.exits import STOPPED, TEMPORARY_FAILURE, exit_status
from studymon.engine.contract.folder import EvidenceFolder
from studymon.engine.contract.spec import StudySpec
from studymon.engine.events import Problem, State, StudyEvent, Verdicts
from studymon.engine.evidence.writer import EvidenceWriteError, write_json, write_text
from studymon.engine.launch.launcher import Controller, ControllerEnd, last_log_line

if TYPE_CHECKING:
    from studymon.engine.judge import Judgement


@dataclass
class SessionResult:
    """How a session ended: finished (with a judgement) or not, and how to go on."""

    study: str
    out: Path
    finished: bool
    judgement: Judgement | None
    ending: ControllerEnd | None
    message: str = ""
    detached: bool = False

    @property
    def exit_status(self) -> int:
        """§6.6: 1 when a check failed, 3 when none did and one may still change (or none could be judged)."""
        return exit_status([self.judgement.ok if self.judgement is not None else None])


def resume_command(specs: list[StudySpec]) -> str:
    """The exact command that resumes ``specs``, quoted for a shell (an OUT may hold a space)."""
    pairs = " ".join(shlex.quote(f"{s.id}={s.out}") for s in specs)
    return f"studymon run --resume {pairs}"


class FinishHost(Protocol):
    """What the finish needs of the session it ends (a :class:`StudySession` is one)."""

    def emit(self, event: StudyEvent) -> None: ...

    def set_state(self, state: State, detail: str = "") -> None: ...

    async def heavy_snapshot(self, label: str) -> None: ...


async def finish(
    host: FinishHost, spec: StudySpec, ending: ControllerEnd | None, kill_error: str | None
) -> SessionResult:
    """Judge the study; publish its reports if it finished (exit 0); emit the verdicts."""
    from studymon.engine.judge import judge  # read at the end, not before a console's first frame
    from studymon.engine.judge.table import table_svg

    finished = ending is not None and ending.code == 0
    out = spec.out
    # Each file is written only if it is not there yet: a finish that failed half way
    # (a full disk) is completed by ``--resume`` without touching what it wrote.
    if finished and not EvidenceFolder(out).outcome.exists():
        assert ending is not None
        write_json(EvidenceFolder(out).outcome, ending.as_json())
        await host.heavy_snapshot("end")
    judgement = await asyncio.to_thread(judge, out)
    if finished:
        documents: list[tuple[str, Callable[[Path], Any]]] = [
            (EvidenceFolder.ACCOUNTS, lambda p: write_json(p, judgement.accounts)),
            (
                EvidenceFolder.KILL_REPORT,
                lambda p: write_json(p, {"study": spec.id, "kills": judgement.kills}) if judgement.kills else None,
            ),
            (EvidenceFolder.REPORT_SVG, lambda p: write_text(p, table_svg(spec.id, judgement.checks))),
            # Last: report.json says the study is done, so it comes when everything else is.
            (EvidenceFolder.REPORT, lambda p: write_json(p, judgement.report_json())),
        ]
        for name, write in documents:
            if not (out / name).exists():
                write(out / name)
        host.set_state(State.FINISHED_OK if judgement.ok else State.FINISHED_FAIL)
    hint = None if finished else resume_command([spec])
    host.emit(Verdicts(spec.id, tuple(judgement.checks), judgement.ok, finished, hint))
    message = "" if finished else (kill_error or unfinished_message(ending, out))
    return SessionResult(spec.id, out, finished, judgement, ending, message)


async def stop_for_write(
    host: FinishHost,
    spec: StudySpec,
    error: EvidenceWriteError,
    controller: Controller | None,
    ending: ControllerEnd | None,
) -> SessionResult:
    """An evidence file could not be written: stop the study (SIGINT, then SIGKILL), keep the scene, say how to go on.

    A study that went on while its console cannot record would leave
    evidence with holes; stopped, it is resumed once there is room, and
    its ledger tells the resumed console everything it missed.
    """
    if controller is not None and controller.ending is None:
        host.set_state(State.STOPPING, "the console cannot write its evidence: stopping the study (SIGINT)")
        with contextlib.suppress(Exception):
            ending = await controller.stop()
    message = (
        f"{error}: the study was stopped so that nothing goes unrecorded; "
        "free space (or fix the folder), then resume it"
    )
    host.set_state(State.ERROR, message)
    host.emit(Problem(spec.id, message, resume_command([spec])))
    return SessionResult(spec.id, spec.out, False, None, ending, message)


def recorded_ending(out: Path) -> ControllerEnd | None:
    """How the study's last controller ended, as its keeper recorded it; None if it has not ended."""
    from studymon.engine.judge.read import last_ending

    ending, ended = last_ending(out)
    if not ended or ending is None:
        return None
    return ControllerEnd(ending.get("code"), ending.get("signal"))


def ended_cleanly(out: Path) -> bool:
    """Whether the study's last controller ended with exit 0 (its reports may still be unwritten)."""
    ending = recorded_ending(out)
    return ending is not None and ending.code == 0


def unfinished_message(ending: ControllerEnd | None, out: Path) -> str:
    """Why a study whose controller ended with ``ending`` is not finished, in the operator's words."""
    if ending is None:
        return "the controller did not end"
    if ending.code == TEMPORARY_FAILURE:
        return "exit 75: a temporary failure (serviceError)"
    if ending.code == STOPPED:
        return "exit 130: stopped on SIGINT"
    if ending.signal:
        return f"killed by {ending.signal}"
    return f"crashed with exit {ending.code} ({last_log_line(EvidenceFolder(out).log)})"


def unfinished_state(ending: ControllerEnd | None, out: Path) -> tuple[State, str]:
    """The state, and its detail, of a study whose controller ended with ``ending`` before it finished."""
    if ending is None:
        return State.STOPPED, "not running"
    if ending.code == TEMPORARY_FAILURE:
        return State.SERVICE_ERROR, "exit 75"
    if ending.code == STOPPED:
        return State.STOPPED, "exit 130"
    return State.CRASHED, unfinished_message(ending, out)
