"""The typed events a study session emits; front ends render nothing else.

Every event names its study.  Events are small immutable values, so a front
end may keep, drop or coalesce them freely.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from studymon.engine.contract.ledger import LedgerIssue, Record
from studymon.engine.judge.verdict import Check


class State(enum.Enum):
    """A study's state.  Front ends choose its words and colours; the value is a stable id."""

    STARTING = "starting"
    RUNNING = "running"
    KILLED = "killed"
    RESUMING = "resuming"
    STOPPING = "stopping"
    STOPPED = "stopped"
    FINISHED_OK = "finished-ok"
    FINISHED_FAIL = "finished-fail"
    SERVICE_ERROR = "service-error"
    CRASHED = "crashed"
    DETACHED = "detached"
    ERROR = "error"


@dataclass(frozen=True)
class StudyEvent:
    study: str


@dataclass(frozen=True)
class StateChanged(StudyEvent):
    state: State
    detail: str = ""


@dataclass(frozen=True)
class RecordsSeen(StudyEvent):
    """New ledger records (in order) and any issues found reading them.

    After catching up on a long ledger only its last records are sent:
    ``skipped`` counts the earlier ones, and ``purposes`` gives every run's
    purpose (``(run, purpose)``) so that views need not have seen its plan.
    """

    records: tuple[Record, ...]
    issues: tuple[LedgerIssue, ...] = ()
    skipped: int = 0
    purposes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Progress(StudyEvent):
    """The study's position after a batch of records."""

    round: Any
    stage: str | None
    balance: float | None
    budget: float | None
    in_flight: tuple[tuple[str, str | None], ...]  # (run, container)


@dataclass(frozen=True)
class ControllerStarted(StudyEvent):
    """A controller started (or was found running, when attaching).

    ``first_start`` is when the study's first controller started (epoch
    seconds, from ``launches.jsonl``), so that a running time counts from
    there after a resume or an attach; None when it is not known.
    ``exact``: it writes through the study's file system, so an ``after:``
    point is held at its record (§9.1); else ``no_mount`` says why not, and
    its points are timed by signals.
    """

    pid: int
    resume: bool
    first_start: float | None = None
    exact: bool = False
    no_mount: str | None = None


@dataclass(frozen=True)
class ControllerEnded(StudyEvent):
    pid: int
    code: int | None
    signal: str | None


@dataclass(frozen=True)
class ContainerChanged(StudyEvent):
    """A lifecycle event for one of the study's containers, with its inspect after it.

    ``status`` follows from the event itself (an inspect taken at the event
    may not show it yet): created, running, exited, removed, ...
    """

    name: str
    action: str
    inspect: dict[str, Any] | None
    status: str = ""
    exit_code: int | None = None


@dataclass(frozen=True)
class ArmChanged(StudyEvent):
    """The study's armed points changed: ``point`` is the one counting now (None: not armed), ``waiting`` the points
    queued behind it."""

    armed: bool
    point: str | None = None
    waiting: tuple[str, ...] = ()


@dataclass(frozen=True)
class KillStep(StudyEvent):
    """A step of the kill protocol (``killed``, ``resumed``, ``settled``, ``missed``...), or an end the console
    did not make (``crash``, ``stop``)."""

    kill: int
    step: str
    detail: str = ""
    at: float | None = None  # epoch seconds of the step (None: when it was received)
    point: str | None = None  # the kill point it fired at, or was missed


@dataclass(frozen=True)
class Sample(StudyEvent):
    """A light machine sample and this study's process-tree CPU."""

    sample: dict[str, Any]
    tree_cpu: float


@dataclass(frozen=True)
class StudyLoad(StudyEvent):
    """The study's own load, as one line of ``load.jsonl``: its controller's process tree plus its runs.

    ``cpu`` is in percent of one core and ``memory`` in bytes, both summed over
    the controller's process tree and every run; ``runs`` gives each run's
    share as ``(container name, cpu, memory)``.
    """

    at: float  # epoch seconds of the sample
    cpu: float
    memory: int
    runs: tuple[tuple[str, float, int], ...] = ()


@dataclass(frozen=True)
class Verdicts(StudyEvent):
    checks: tuple[Check, ...]
    ok: bool | None
    finished: bool
    resume_hint: str | None = None


@dataclass(frozen=True)
class Problem(StudyEvent):
    """Something went wrong in the engine or the study; the scene is kept."""

    message: str
    hint: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
