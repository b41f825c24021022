"""How a front end shows a study's state: its words and its CSS class.

The engine names states with :class:`~studymon.engine.events.State`; this is
the one place that turns them into text.  No Textual here, so the headless
printer uses it too.
"""

from __future__ import annotations

from studymon.engine import State

LABELS = {
    State.STARTING: "starting",
    State.RUNNING: "running",
    State.KILLED: "killed",
    State.RESUMING: "resuming",
    State.STOPPING: "stopping",
    State.STOPPED: "stopped",
    State.FINISHED_OK: "finished ✓",
    State.FINISHED_FAIL: "finished ✗",
    State.SERVICE_ERROR: "service error",
    State.CRASHED: "crashed",
    State.DETACHED: "detached",
    State.ERROR: "error",
}
# States after which the study is not running on its own: its running time stops.
CLOCK_STOPPED = frozenset(
    {State.FINISHED_OK, State.FINISHED_FAIL, State.STOPPED, State.CRASHED, State.SERVICE_ERROR, State.ERROR}
)


def state_label(state: State) -> str:
    """The words for ``state`` (``FINISHED_OK`` → ``finished ✓``)."""
    return LABELS[state]


def state_class(state: State) -> str:
    """The CSS class of a badge showing ``state`` (``state-finished-ok``)."""
    return f"state-{state.value}"
