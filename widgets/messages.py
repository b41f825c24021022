"""Engine events as Textual messages: how an engine event reaches the pane of its study.

The engine's events (:mod:`studymon.engine.events`) are small immutable
values; each kind has a message class here, of the same name, that carries
one, addressed to one :class:`~studymon.widgets.study_pane.StudyPane` (they
do not bubble): ``messages.KillStep`` carries an ``engine.KillStep``.
The pane has a handler per class, so Textual's dispatch does the routing.

Where only the latest value matters, a message may replace the one queued
before it (``can_replace``): a pane that is behind shows the newest progress
once instead of every step, and the machine line takes the newest sample
once although every study reports the same one (machine samples go to that
line only).  Records and a study's own load samples never merge: every record
is a line, every sample a point of a graph.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from textual.message import Message

from studymon import engine
from studymon.engine import StudyEvent

E = TypeVar("E", bound=StudyEvent)


class StudyMessage(Message, Generic[E], bubble=False):
    """One engine event for the pane of its study; ``event`` is the engine's own value."""

    def __init__(self, event: E) -> None:
        super().__init__()
        self.event = event


class RecordsSeen(StudyMessage[engine.RecordsSeen], bubble=False):
    """New ledger records, with the issues found reading them."""


class Progress(StudyMessage[engine.Progress], bubble=False):
    """The study's round, stage and balance after a batch of records; only the newest counts."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, Progress) and message.event.study == self.event.study


class StateChanged(StudyMessage[engine.StateChanged], bubble=False):
    """The study's state changed (or its detail did)."""


class ControllerStarted(StudyMessage[engine.ControllerStarted], bubble=False):
    """The study's controller started (or was found running)."""


class ControllerEnded(StudyMessage[engine.ControllerEnded], bubble=False):
    """A controller of the study ended."""


class ContainerChanged(StudyMessage[engine.ContainerChanged], bubble=False):
    """A lifecycle event of one of the study's containers."""


class ArmChanged(StudyMessage[engine.ArmChanged], bubble=False):
    """The study was armed or disarmed."""


class KillStep(StudyMessage[engine.KillStep], bubble=False):
    """A step of a kill of the study."""


class StudyLoad(StudyMessage[engine.StudyLoad], bubble=False):
    """The study's own load (its controller's tree and its runs): a point of its graph."""


class Verdicts(StudyMessage[engine.Verdicts], bubble=False):
    """The study's verdicts, so far or final."""


class Problem(StudyMessage[engine.Problem], bubble=False):
    """Something went wrong in the engine or the study."""


# One message class per engine event class: a lookup, not a chain of isinstance.
MESSAGES: dict[type[StudyEvent], type[StudyMessage[Any]]] = {
    engine.RecordsSeen: RecordsSeen,
    engine.Progress: Progress,
    engine.StateChanged: StateChanged,
    engine.ControllerStarted: ControllerStarted,
    engine.ControllerEnded: ControllerEnded,
    engine.ContainerChanged: ContainerChanged,
    engine.ArmChanged: ArmChanged,
    engine.KillStep: KillStep,
    engine.StudyLoad: StudyLoad,
    engine.Verdicts: Verdicts,
    engine.Problem: Problem,
}


def message_for(event: StudyEvent) -> StudyMessage[Any] | None:
    """The message that carries ``event`` to its pane (None for a kind no pane shows)."""
    cls = MESSAGES.get(type(event))
    return cls(event) if cls is not None else None


class MachineSampled(Message, bubble=False):
    """The machine's light sample, for the machine line; only the newest counts."""

    def __init__(self, sample: dict[str, Any]) -> None:
        super().__init__()
        self.sample = sample

    def can_replace(self, message: Message) -> bool:
        # Every study reports the same sample in a row: the line shows it once.
        return isinstance(message, MachineSampled)
