"""The judge's machines, as data: the controllers' and the kills' (replayed by :mod:`.controllers`), a target
container's (:mod:`.events`), an armed point's (:mod:`.read`, ``arms.jsonl``), and a target's starts, results, books
and round (:mod:`.target`).

Each row is a step of the story sound evidence tells, or a contradiction
named with the check it fails (:class:`~.automata.Row`); the rows of the
timeline's end (``finished``, ``paused``) say what never came.
``docs/contract.md`` ("Controllers", "Per kill", "Per target: the story")
says the same in words; a test takes every row.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from studymon.engine.contract.automata import Machine, Row
from studymon.engine.contract.ends import FINISHED, PAUSED
from studymon.engine.contract.targets import CHARGED, IN_FLIGHT, UNRECORDED, UNSETTLED
from studymon.engine.judge.timeline import END, KILL, SEEN, START

GONE = "gone"  # the kill's controller did not run at the kill
RESUME = "resume"  # a start that says resume: true (START: one that does not)
OVERLAP_SAYS = "two controllers at once: pid {pid} started while pid {running} had not ended"

RESUMED_OVER_SAYS = "a controller was started after the kill while pid {pid} had not ended"
UNSTARTED_SAYS = "pid {pid} is no controller launches.jsonl started before the kill"
UNMANNED_SAYS = "seq {seq} ({kind}) was seen while no controller started after the kill ran"

# A controller started less than this before a kill, while the killed one still ran, was started over it:
# a console resumes only once the killed controller has ended (its start would be stamped after the kill,
# but a keeper stamps its start before it spawns, and the clocks of two processes differ by that much at most).
RESUMED_OVER = 1.0
# A record's ``at`` may have one fraction digit: one dated up to this before a start or after an end was that
# controller's; one dated further from every controller's life was written while none ran (§6.9).
RECORD_LAG = 1.0

CONTROLLER = Machine(
    "controller",
    ("unseen", "running", "killed", "ended"),
    (
        Row("unseen", START, "running"),
        Row("ended", START, "running"),  # its pid given out again, to a later controller
        Row("running", END, "ended"),
        Row("running", KILL, "killed"),
        Row("killed", END, "ended"),
        Row(
            "killed",
            KILL,
            "killed",
            "killDelivered",
            "pid {pid}'s end is kill {first}'s: a controller is killed once, by one kill",
        ),
        Row("ended", KILL, "ended", "killDelivered", "pid {pid} had ended ({where}) before the kill"),
        # kill.json's pid is a controller's, started before the kill (§6.9: the pid is held twice).
        Row("unseen", KILL, "unseen", "killDelivered", UNSTARTED_SAYS),
        # An end of a controller that had ended says nothing new: the keeper of a controller whose status the
        # console had already written as lost (the keeper was slow, not gone) writes its own after it.
        Row("ended", END, "ended"),
        # An end of a pid no start launched: a start line is missing, or the end is another's.
        Row("unseen", END, "unseen", "exitedCleanly", "pid {pid} ends, but no start launched it"),
    ),
)

# The study's controllers: one at a time, every one after the first a resume (§6.8: a start after a kill or a crash
# says resume: true; a fresh start into a folder that had a controller is refused by the console).
CONTROLLERS = Machine(
    "study's controllers",
    ("none", "busy", "idle"),
    (
        Row("none", START, "busy"),
        # A folder made and never started (a command that stopped after writing it) is started by --resume.
        Row("none", RESUME, "busy"),
        Row("idle", RESUME, "busy"),
        Row("idle", START, "busy", "exitedCleanly", "pid {pid} starts afresh after a controller had run: not a resume"),
        Row("busy", START, "busy", "exitedCleanly", OVERLAP_SAYS),
        Row("busy", RESUME, "busy", "exitedCleanly", OVERLAP_SAYS),
    ),
)

RESUMED = "resumed"  # a kill's state once a controller started after it
KILL_MACHINE = Machine(
    "kill",
    ("unmade", "made", "ended", RESUMED),
    (
        Row("unmade", START, "unmade"),  # a controller before the kill is not the kill's business
        Row("unmade", KILL, "made"),
        Row("made", END, "ended"),  # the killed controller's end: the first of its pid at or after the kill
        # No controller of the killed pid ran at the kill (an end the console did not make was already over, or
        # kill.json names a pid that had ended): there is no end to wait for, the next start resumes the study.
        Row("made", GONE, "ended"),
        Row("ended", START, RESUMED),  # the first controller started after it
        # Started over the killed controller: the start is wrong, but what that controller writes is a resume's.
        Row("made", START, RESUMED, "killDelivered", RESUMED_OVER_SAYS),
        Row(RESUMED, START, RESUMED),
        Row(RESUMED, END, RESUMED),  # the killed controller's end after a start over it (that start failed)
        Row(RESUMED, SEEN, RESUMED),
        # A record after the kill's beforeKillSeq seen before a controller started after the kill: written by
        # something that outlived the kill (or the kill came after it, and beforeKillSeq is wrong).
        Row("unmade", SEEN, "unmade", "killEvidence", UNMANNED_SAYS),
        Row("made", SEEN, "made", "killEvidence", UNMANNED_SAYS),
        Row("ended", SEEN, "ended", "killEvidence", UNMANNED_SAYS),
    ),
)

# A target's container in its kill's window (§6.4): what the two recordings say it did, replayed in time order
# (engine/judge/events.py, ContainerStory).  A target in flight starts running; one unrecorded, made as the
# controller was frozen, starts waiting (its start may have been reported before the window opened); one charged,
# nothing of it started at the kill, starts unmade (its container starts in the window, before anything else of it
# happens); one that exited just before the window starts exited, its die perhaps before the window.  Actions that
# only read a container (PASSIVE) are no events of its story.  The replay is given one start (a waiting or unmade
# target's own), the dies, the earliest destroy and the latest oom: no row is written for a second destroy or oom, or
# for a start of a target that was not waiting, which it is never given.
C_START, C_OOM, C_DIE, C_DESTROY, C_OTHER = "start", "oom", "die", "destroy", "other"
TWO_DIES = "a second die of {name}"
DESTROY_FIRST = "a destroy of {name} comes before its die"
OOM_LATE = "an oom of {name} comes after its die"
FORBIDDEN = "{action} of {name} in its window"
UNSTARTED = "{action} of {name} before any start of it in its window"
_STORY = ("unmade", "waiting", "running", "oomed", "exited", "dead", "removed", "vanished")
CONTAINER = Machine(
    "container",
    _STORY,
    (
        Row("unmade", C_START, "running"),
        # A charged run's container did no work before its start: a die or an oom first is of a container started
        # before the kill, which the snapshot then did not show (the target was not charged but unrecorded).
        Row("unmade", C_OOM, "oomed", "sameContainerNoRerun", UNSTARTED),
        Row("unmade", C_DIE, "dead", "sameContainerNoRerun", UNSTARTED),
        Row("unmade", C_DESTROY, "vanished"),
        Row("waiting", C_START, "running"),
        Row("waiting", C_OOM, "oomed"),
        Row("waiting", C_DIE, "dead"),
        Row("waiting", C_DESTROY, "vanished"),
        Row("running", C_OOM, "oomed"),  # an oom comes before the die it causes (within a second: see the replay)
        Row("running", C_DIE, "dead"),
        Row("running", C_DESTROY, "vanished"),  # no die before it: said once the story is over
        Row("oomed", C_DIE, "dead"),
        Row("oomed", C_DESTROY, "vanished"),
        Row("exited", C_OOM, "exited"),
        Row("exited", C_DIE, "dead"),  # the exit the snapshot at the kill showed, reported in the window
        Row("exited", C_DESTROY, "removed"),
        Row("dead", C_DESTROY, "removed"),
        Row("vanished", C_OOM, "vanished"),
        Row("dead", C_DIE, "dead", "sameContainerNoRerun", TWO_DIES),
        Row("removed", C_DIE, "removed", "sameContainerNoRerun", TWO_DIES),
        Row("vanished", C_DIE, "dead", "sameContainerNoRerun", DESTROY_FIRST),
        Row("dead", C_OOM, "dead", "sameContainerNoRerun", OOM_LATE),
        Row("removed", C_OOM, "removed", "sameContainerNoRerun", OOM_LATE),
        # Anything else a container does (a start but a waiting target's first, a restart, an exec, a kill, a
        # rename...) is work its story leaves no room for, whatever its state: in its window a target's container
        # only dies once (§6.4).
        *(Row(state, C_OTHER, state, "sameContainerNoRerun", FORBIDDEN) for state in _STORY),
        # A waiting target's start after its container died or oomed: started again.
        *(
            Row(state, C_START, state, "sameContainerNoRerun", FORBIDDEN)
            for state in ("oomed", "exited", "dead", "removed")
        ),
        # After a destroy with no die before it, a start says no more than the destroy did.
        Row("vanished", C_START, "vanished", "sameContainerNoRerun", DESTROY_FIRST),
    ),
)

# A point armed (§7), from arms.jsonl's lines in order: armed, then fired, missed or disarmed, the first armed
# first.  A fired or missed line when no point is armed meets the queue's empty head, "unarmed".  At the timeline's
# end a point still armed was never tested: ✗ once the study finished, ? while its moment may still come.
ARM, FIRE, MISS, DISARM = "arm", "fired", "missed", "disarm"
NOT_ARMED = "a point fires or is missed once armed, once (§7), and none was armed then"
NOT_TESTED = "missed{at}{run}, not tested: {detail}"
NEVER_TAKEN = "armed at {points}, but the study finished without a kill there (none fired, none was missed)"
NOT_YET = "armed at {points}; its moment has not come yet"
_POINT_ENDS = tuple(
    Row(state, end, state) for state in ("unarmed", "fired", "missed", "disarmed") for end in (FINISHED, PAUSED)
)
POINT = Machine(
    "point",
    ("unarmed", "armed", "fired", "missed", "disarmed"),
    (
        Row("unarmed", ARM, "armed"),
        Row("unarmed", FIRE, "unarmed", "killTriggered", NOT_ARMED),
        Row("unarmed", MISS, "unarmed", "killTriggered", NOT_ARMED),
        Row("armed", FIRE, "fired"),
        # A point not hit is never ✗ (§6.6, v4): nothing was tested there.
        Row("armed", MISS, "missed", "killTriggered", NOT_TESTED, unknown=True),
        Row("armed", DISARM, "disarmed"),
        Row("armed", FINISHED, "armed", "killTriggered", NEVER_TAKEN),
        Row("armed", PAUSED, "armed", "killTriggered", NOT_YET, unknown=True),
        *_POINT_ENDS,
    ),
)

# A target's runStarted records after its kill (§7), replayed in the ledger's order from the state its class at the
# kill starts it in (kill.json's, held to the ledger by killEvidence): a run in flight is not started again by the
# books here (chargedOnce counts its starts); an unrecorded one is adopted, a charged one started, each once; one
# with its result is never started again.  At the timeline's end a target still to adopt or to start is ✗
# finished, ? paused.
T_START = "runStarted"
STARTED_AGAIN = "{count} runStarted of {run} after the kill"
NOT_ADOPTED = "no runStarted of {run} after the kill{yet}: its started container is not adopted"
NOT_STARTED = "the study finished without starting {run} after the kill"
NOT_STARTED_YET = "no runStarted of {run} after the kill yet"
RUN_AGAIN = "{run} had its result before the kill, and a runStarted after it (seq {seq})"
ADOPT_ONCE = "a resume records the run whose container started before the kill once (§7)"
START_ONCE = "a resume starts the run charged but not started at the kill once (§7)"
ADOPT = "a resume records the run whose container started before the kill, once, by its container (§7)"
START = "a resume starts the run charged but not started at the kill, before the study finishes (§7)"
NEVER_AGAIN = "a run with its result is never run again (§7)"
_CHECK = "sameContainerNoRerun"
STARTS = Machine(
    "target's starts",
    (IN_FLIGHT, UNRECORDED, "adopted", "adopted again", CHARGED, "started", "started again", UNSETTLED, "rerun"),
    (
        Row(IN_FLIGHT, T_START, IN_FLIGHT),
        Row(UNRECORDED, T_START, "adopted"),
        Row("adopted", T_START, "adopted again", _CHECK, STARTED_AGAIN, then=ADOPT_ONCE),
        Row("adopted again", T_START, "adopted again", _CHECK, STARTED_AGAIN, then=ADOPT_ONCE),
        Row(CHARGED, T_START, "started"),
        Row("started", T_START, "started again", _CHECK, STARTED_AGAIN, then=START_ONCE),
        Row("started again", T_START, "started again", _CHECK, STARTED_AGAIN, then=START_ONCE),
        Row(UNSETTLED, T_START, "rerun", _CHECK, RUN_AGAIN, then=NEVER_AGAIN),
        Row("rerun", T_START, "rerun", _CHECK, RUN_AGAIN, then=NEVER_AGAIN),
        Row(UNRECORDED, FINISHED, UNRECORDED, _CHECK, NOT_ADOPTED, then=ADOPT),
        Row(UNRECORDED, PAUSED, UNRECORDED, _CHECK, NOT_ADOPTED, unknown=True, then=ADOPT),
        Row(CHARGED, FINISHED, CHARGED, _CHECK, NOT_STARTED, then=START),
        Row(CHARGED, PAUSED, CHARGED, _CHECK, NOT_STARTED_YET, unknown=True, then=START),
        *(
            Row(state, end, state)
            for state in (IN_FLIGHT, "adopted", "adopted again", "started", "started again", UNSETTLED, "rerun")
            for end in (FINISHED, PAUSED)
        ),
    ),
)

# A target's runResult records (rule 14, §7), each placed by kill.json's beforeKillSeq, replayed from its class: a run
# the kill left unfinished (in flight, unrecorded, charged: "open") has its one result after the kill, one with its
# result ("unsettled") had it by then.  Where it stands is judged at the timeline's end, once its one result is known:
# a run with two has no one result to place.
R_BEFORE, R_AFTER = "runResult before the kill", "runResult after the kill"
RESULTS_TWICE = "{count} runResult for {run}"
LOST = "the study finished without {run}'s result"
NO_RESULT_YET = "no runResult for {run} yet"
NOT_AFTER = "the result (seq {seq}) is not after the kill (seq {kill})"
NOT_BEFORE = "the result (seq {seq}) is not before the kill (seq {kill}), as kill.json says"
ONE_RESULT = "a run has one result (rule 14)"
HAS_RESULT = "each target has its one result by the study's end (rule 14)"
AFTER_THE_KILL = "a target the kill left unfinished has its result after the kill"
BY_THE_KILL = "a target with its result but not settled had its result by beforeKillSeq"
_RESULTED = ("resulted", "early", "late", "twice")
_R = "resultSettledAndFinished"
RESULTS = Machine(
    "target's result",
    ("open", "done", *_RESULTED),
    (
        Row("open", R_AFTER, "resulted"),
        Row("open", R_BEFORE, "early"),
        Row("done", R_BEFORE, "resulted"),
        Row("done", R_AFTER, "late"),
        *(Row(s, e, "twice", _R, RESULTS_TWICE, then=ONE_RESULT) for s in _RESULTED for e in (R_BEFORE, R_AFTER)),
        *(Row(s, FINISHED, s, _R, LOST, then=HAS_RESULT) for s in ("open", "done")),
        *(Row(s, PAUSED, s, _R, NO_RESULT_YET, unknown=True, then=HAS_RESULT) for s in ("open", "done")),
        # Its one result, where it stands: what happened is ✗ whether or not a resume may still come.
        *(Row("early", e, "early", _R, NOT_AFTER, then=AFTER_THE_KILL) for e in (FINISHED, PAUSED)),
        *(Row("late", e, "late", _R, NOT_BEFORE, then=BY_THE_KILL) for e in (FINISHED, PAUSED)),
        *(Row(s, e, s) for s in ("resulted", "twice") for e in (FINISHED, PAUSED)),
    ),
)

# A target's books (§7): its charges and its starts, over the whole ledger, counted to two ("2+": two or more).  At the
# timeline's end a target is charged once and started once; one charged and not started yet may still be started by
# a resume (?); any other count happened, and is ✗ whether or not a resume may come.
C_CHARGE, C_STARTED = "charge", "runStarted"
COUNTS = ("0", "1", "2+")
BOOKS_SAY = "{charges}, {starts} runStarted"
TO_START = "1 charge, no runStarted yet: the resume starts {run}"
ONCE = "a run is charged once and started once (§7)"


def books_state(charges: int, starts: int) -> str:
    """The books' state after ``charges`` charges and ``starts`` starts."""
    return f"charged {COUNTS[min(charges, 2)]}, started {COUNTS[min(starts, 2)]}"


def _books_rows() -> tuple[Row, ...]:
    rows = []
    for c in range(3):
        for n in range(3):
            state = books_state(c, n)
            rows += [Row(state, C_CHARGE, books_state(c + 1, n)), Row(state, C_STARTED, books_state(c, n + 1))]
            if (c, n) == (1, 1):
                rows += [Row(state, end, state) for end in (FINISHED, PAUSED)]
                continue
            rows.append(Row(state, FINISHED, state, "chargedOnce", BOOKS_SAY, then=ONCE))
            if (c, n) == (1, 0):
                rows.append(Row(state, PAUSED, state, "chargedOnce", TO_START, unknown=True, then=ONCE))
            else:
                rows.append(Row(state, PAUSED, state, "chargedOnce", BOOKS_SAY, then=ONCE))
    return tuple(rows)


BOOKS = Machine("target's books", tuple(books_state(c, n) for c in range(3) for n in range(3)), _books_rows())

# A diagnosis target's round (rule 14, §7): its settlement (the round's first), then the proposal stage it opens
# next, in the ledger's order.  At the timeline's end a round not settled, or settled and not opened on, is ✗
# finished, ? paused.  What the settlement says (its run, its experiments, where it stands) is compared as facts.
SETTLED, OPENED = "diagnosisSettlement", "stageOpen proposal"
NO_SETTLEMENT = "no diagnosisSettlement for round {round}"
NO_PROPOSAL = "no stageOpen proposal {round} after the settlement (seq {seq})"
SETTLED_BY_THE_END = "a diagnosis run's round is settled by the study's end (rule 14)"
OPENS_NEXT = "a settled round opens its proposal stage next"
ROUND = Machine(
    "target's round",
    ("unsettled", "settled", "opened"),
    (
        Row("unsettled", SETTLED, "settled"),
        Row("unsettled", OPENED, "unsettled"),  # a proposal before the settlement opens nothing after it
        Row("settled", OPENED, "opened"),
        Row("settled", SETTLED, "settled"),  # a second settlement: counted, and compared, as a fact
        Row("opened", SETTLED, "opened"),
        Row("opened", OPENED, "opened"),
        Row("unsettled", FINISHED, "unsettled", "resultSettledAndFinished", NO_SETTLEMENT, then=SETTLED_BY_THE_END),
        Row("unsettled", PAUSED, "unsettled", "resultSettledAndFinished", NO_SETTLEMENT, unknown=True),
        Row("settled", FINISHED, "settled", "resultSettledAndFinished", NO_PROPOSAL, then=OPENS_NEXT),
        Row("settled", PAUSED, "settled", "resultSettledAndFinished", NO_PROPOSAL, unknown=True),
        Row("opened", FINISHED, "opened"),
        Row("opened", PAUSED, "opened"),
    ),
)

MACHINES = (CONTROLLER, CONTROLLERS, KILL_MACHINE, CONTAINER, POINT, STARTS, RESULTS, BOOKS, ROUND)
RUNNING = ("running", "killed")


@dataclass
class KillStory:
    """One kill's states over time, as the replay moved it: its state at any instant."""

    number: int
    pid: int | None
    states: list[tuple[float, str]] = field(default_factory=list)  # (from when, state), in order
    _times: list[float] = field(default_factory=list)  # the states' times, for a bisect per record seen

    @property
    def state(self) -> str:
        return self.states[-1][1] if self.states else KILL_MACHINE.start

    def move(self, time: float, state: str) -> None:
        if state != self.state:
            self.states.append((time, state))
            self._times.append(time)

    def state_at(self, time: float) -> str:
        """The kill's state at ``time`` (an instant exactly at a move is after it)."""
        i = bisect.bisect_right(self._times, time)
        return self.states[i - 1][1] if i else KILL_MACHINE.start

    def seen(self, time: float) -> Row | None:
        """The row a record seen at ``time`` takes (its time as the timeline orders it, see :mod:`.timeline`)."""
        return KILL_MACHINE.step(self.state_at(time), SEEN)
