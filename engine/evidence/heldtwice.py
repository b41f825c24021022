"""The facts an evidence folder holds more than once, and every other field the console writes (contract §6.9).

Wherever two files (or two fields) of a folder hold the same fact, the
copies must agree, and a disagreement is ✗ whichever copy looks sound alone.
This module is the list of those facts, as data: :data:`HELD_TWICE` has one
:class:`Twice` per fact, naming each place it is held (a file of
:mod:`studymon.engine.contract.folder`, or of a campaign, and a field path in it) and
how the copies agree.  :data:`HELD_ONCE` names every other field of every
file the console writes, so that the two lists together cover the folder:
``tests/test_held_twice.py`` walks real folders and fails on a field in
neither, and checks every row against the copies real studies leave.  The
judge compares each row; ``docs/evidence.md`` shows the table
(:func:`markdown`), checked against this module by the same test.

Field paths are dotted: ``targets[].run`` is ``run`` in each element of the
list ``targets``; a line of a ``.jsonl`` file is the root, as is the list of
``ledger-at-kill.json`` (``[].seq``).  ``<run>``, ``<name>`` and the like stand
for any one key of an object keyed by run, container name, and so on; a
trailing ``*`` for anything below (a runtime's inspect, verbatim); a key that
holds a dot is quoted (``Config.Labels.'studymon.run'``).  A field whose
value is an empty object or list, or null, is covered by any path below it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from studymon.engine.contract.folder import CAMPAIGN, JOURNAL, TRACE, TRIALS, EvidenceFolder, KillFolder
from studymon.engine.evidence.records import WRITTEN_MS

# --- how copies agree -------------------------------------------------------------------------------

EQUAL = "equal"  # the same value (JSON types included, unless the row says how one is derived from another)
WITHIN = "within"  # the same time, within the row's tolerance
ORDER = "order"  # the places, in the order listed, never go backwards in time (within the row's tolerance)

# A time the console writes as RFC 3339 to the millisecond (``clock.rfc3339_ms``, which truncates) against the
# same time as epoch seconds: the text is at most this much earlier.
# A time written to the nanosecond (``clock.rfc3339_ns``) against the same time as epoch seconds: a float of
# today's epoch holds about a quarter of a microsecond.
WRITTEN_NS = 1e-6
# Two epoch times of one clock, written as numbers: no slack.  The console's clock and a local runtime's are one
# (the Docker runtime takes an offset smaller than its measuring's uncertainty as zero).
SAME_CLOCK = 0.0
# The contract's "within a second": an event's ``time`` and ``timeNano``, a snapshot's ``StartedAt`` or
# ``FinishedAt`` and its ``start`` or ``die`` (Docker stamps a ``die`` 10-25 ms after ``FinishedAt``).
EVENT_SECOND = 1.0

# The contract's facts (the rows of §6.9's table), and one it does not list: the judge's own reports repeat
# the evidence they were judged from.
RECORDS = "each record's kind, time and seq"
SEEN = "when a record was seen"
MOMENT = "the kill's moment"
CONTAINER = "a container's identity, start and exit"
CONTROLLERS = "controllers"
TARGETS = "the targets"
TRIAL = "a trial"
VERDICT = "the verdict"
FACTS = (RECORDS, SEEN, MOMENT, CONTAINER, CONTROLLERS, TARGETS, TRIAL)  # §6.9's table, in its order


# --- where a fact is held ---------------------------------------------------------------------------

N = "<n>"  # the number of a kill folder, or of a campaign's trial
CAMPAIGN_ROOT = "<campaign>/"  # a campaign's folder: its own files, beside its trace and its trials


def kill_file(name: str) -> str:
    """A file of every kill folder, as the lists name it: ``kills/<n>/kill.json``."""
    return f"{EvidenceFolder.KILLS}/{N}/{name}"


def campaign_file(name: str) -> str:
    """A file of a campaign's own (``campaign.json``, the journal), as the lists name it."""
    return CAMPAIGN_ROOT + name


def trial_file(name: str) -> str:
    """A file of a campaign's trial folder ``trials/<n>/`` (an evidence folder), as the rows name it."""
    return f"{CAMPAIGN_ROOT}{TRIALS}/{N}/{name}"


def file_pattern(rel: str) -> str:
    """The name the lists give a file of a folder, from its path inside ``OUT`` (``kills/3/kill.json`` is
    ``kills/<n>/kill.json``); a campaign's own files are named from its folder with :func:`campaign_file`."""
    parts = rel.split("/")
    if len(parts) == 3 and parts[0] == EvidenceFolder.KILLS and parts[1].isdigit():
        return kill_file(parts[2])
    return rel


@dataclass(frozen=True)
class Place:
    """Where one copy of a fact is held: a file as the lists name it, a field path, and which lines or
    entries of it (in words; empty: every one)."""

    file: str
    path: str
    where: str = ""

    def __str__(self) -> str:
        return f"{self.file} {self.path}" + (f" ({self.where})" if self.where else "")


@dataclass(frozen=True)
class Twice:
    """A fact the folder holds more than once: each place it is held, and how the copies agree.

    ``rare`` says when the fact is written at all, for a fact that sound runs of the reference study do not
    leave (a runtime's restart): a row without it is compared on real folders by the tests, and a row that
    no folder exercised fails them.
    """

    name: str
    fact: str
    places: tuple[Place, ...]
    agree: str  # EQUAL, WITHIN or ORDER
    says: str  # how the copies agree, in words
    tolerance: float = 0.0
    tolerance_name: str = ""
    rare: str = ""


@dataclass(frozen=True)
class Once:
    """A field held once: the file, its path, and what it is."""

    file: str
    path: str
    says: str
    rare: str = ""  # when it is written, for a field that sound runs of the reference study do not leave


# Short names for the files, from folder.py (and campaign.py); never spelled again here.
_F = EvidenceFolder
_K = KillFolder
LEDGER = _F.LEDGER
TIMELINE = _F.TIMELINE
LAUNCHES = _F.LAUNCHES
ARMS = _F.ARMS
MACHINE = _F.MACHINE
RESEARCH = _F.RESEARCH
OUTCOME = _F.OUTCOME
ACCOUNTS = _F.ACCOUNTS
KILL_REPORT = _F.KILL_REPORT
REPORT = _F.REPORT
TRACE_FILE = _F.TRACE
KILL = kill_file(_K.KILL)
AT_KILL = kill_file(_K.AT_KILL)
BEFORE = kill_file(_K.BEFORE)
AFTER = kill_file(_K.AFTER)
BEFORE_RESUME = kill_file(_K.BEFORE_RESUME)
READBACK = kill_file(_K.READBACK)
LIVE = kill_file(_K.LIVE)
WINDOW = kill_file(_K.WINDOW)
RESTARTS = kill_file(_K.RESTARTS)
SNAPSHOTS = (BEFORE, AFTER, BEFORE_RESUME)
RECORDINGS = (LIVE, READBACK, TRACE_FILE)  # the runtime's event objects, each line one event (or a gap)
JOURNAL_FILE = campaign_file(JOURNAL)
SUMMARY = campaign_file(CAMPAIGN)
# The template the explorer hands its trace's ``studymon run``: explorer.py spells the name where it writes it;
# campaign.py, which names a campaign's other files, does not.
TEMPLATE_COPY = campaign_file(".template.json")


def _each(files: Iterable[str], path: str, where: str = "") -> tuple[Place, ...]:
    return tuple(Place(f, path, where) for f in files)


# The runtime's event object, as Docker's ``events`` API gives it (the process runtime gives the same keys).
EVENT_KEYS = ("status", "id", "from", "Type", "Action", "Actor.ID", "Actor.Attributes.*", "scope", "time", "timeNano")
# A ledger record as the judge's accounts copy it (``ledger.Record.as_json``), and a run's account.
RECORD_KEYS = ("seq", "at", "kind", "content.*")
RUN_KEYS = (
    "run",
    "purpose",
    "cell",
    "round",
    "container",
    "plans[]",
    "charges[].seq",
    "charges[].amount",
    "charges[].balance",
    "starts[]",
    "results[].seq",
    "results[].exitCode",
)
# A check of report.json (``judge.verdict.Check.as_json``).
CHECK_KEYS = ("name", "scope", "ok", "detail")
# A trial of a campaign, as the journal and campaign.json hold it (``campaign.Trial.as_json``).
TRIAL_KEYS = (
    "n",
    "id",
    "points[]",
    "cls",
    "class",
    "state",
    "ok",
    "failed[]",
    "unknown[]",
    "checks.<check>",
    "worker",
    "host",
    "seconds",
    "exit",
    "detail",
    "out",
)


# --- the facts held twice ------------------------------------------------------------------------------

HELD_TWICE: tuple[Twice, ...] = (
    # each record's kind, time and seq
    Twice(
        "timeline-is-the-ledger",
        RECORDS,
        (
            Place(LEDGER, "seq"),
            Place(LEDGER, "kind"),
            Place(LEDGER, "at"),
            Place(TIMELINE, "seq"),
            Place(TIMELINE, "kind"),
            Place(TIMELINE, "at"),
        ),
        EQUAL,
        "one timeline line per ledger record, seqs only growing; its kind and at are the record's of that seq",
    ),
    Twice(
        "ledger-at-kill",
        RECORDS,
        (
            Place(LEDGER, "*"),
            Place(AT_KILL, "[].seq"),
            Place(AT_KILL, "[].at"),
            Place(AT_KILL, "[].kind"),
            Place(AT_KILL, "[].content.*"),
        ),
        EQUAL,
        "the ledger's records 1 to beforeKillSeq, exactly, types included (true, 1 and 1.0 differ)",
    ),
    Twice(
        "before-kill-seq",
        RECORDS,
        (
            Place(KILL, "beforeKillSeq"),
            Place(AT_KILL, "[].seq", "the last record"),
            Place(KILL_REPORT, "kills[].beforeKillSeq", "the kill's entry"),
        ),
        EQUAL,
        "the last record at the kill",
    ),
    Twice(
        "trigger-record",
        RECORDS,
        (
            Place(KILL, "triggerSeq"),
            Place(KILL, "triggerAt"),
            Place(LEDGER, "seq"),
            Place(LEDGER, "at"),
            Place(KILL, "point"),
        ),
        EQUAL,
        "an after: point's record: triggerAt is the at of the ledger's record triggerSeq, which is of the point's "
        "kind (and purpose); triggerSeq and triggerAt are null for a container point, a manual kill and an end "
        "the console did not make",
    ),
    Twice(
        "accounts-are-the-ledger",
        RECORDS,
        (
            Place(LEDGER, "*"),
            Place(ACCOUNTS, "budget"),
            Place(ACCOUNTS, "balance"),
            Place(ACCOUNTS, "charged"),
            Place(ACCOUNTS, "records"),
            Place(ACCOUNTS, "lastSeq"),
            Place(ACCOUNTS, "halts"),
            *(Place(ACCOUNTS, f"halt.{k}") for k in RECORD_KEYS),
            *(Place(ACCOUNTS, f"exports[].{k}") for k in RECORD_KEYS),
            Place(ACCOUNTS, "exportCount"),
            *(Place(ACCOUNTS, f"serviceErrors[].{k}") for k in RECORD_KEYS),
            Place(ACCOUNTS, "serviceErrorCount"),
            *(Place(ACCOUNTS, f"runs[].{k}") for k in RUN_KEYS),
        ),
        EQUAL,
        "the judge's accounts of the ledger: each run's plans, charges, starts and results by seq, its purpose, "
        "cell, round and container; the budget, the last balance, the sum charged, the count and last seq, "
        "the halts, exports and service errors",
    ),
    # when a record was seen
    Twice(
        "result-seen",
        SEEN,
        (Place(WINDOW, "targets.<run>.resultSeenEpoch"), Place(TIMELINE, "seenAt", "the line of resultSeq")),
        WITHIN,
        "when the record that ended the target's story was seen: the timeline's seenAt of its resultSeq (the "
        "window is on the runtime's clock, the timeline on the console's: one clock for a local runtime)",
        WRITTEN_MS,
        "WRITTEN_MS",
    ),
    Twice(
        "trigger-seen",
        SEEN,
        (
            Place(KILL, "triggerSeenEpoch"),
            Place(KILL, "triggerSeenAt"),
            Place(TIMELINE, "seenAt", "the line of triggerSeq, for an after: point"),
            Place(TRACE_FILE, "seenAt", "the line of triggerEvent, for a container point"),
        ),
        WITHIN,
        "when the point's moment was seen: its record's timeline line, or its event's line in the trace (a study "
        "run with --trace; the live recording opens at the freeze, after the event)",
        WRITTEN_MS,
        "WRITTEN_MS",
    ),
    Twice(
        "window-closed",
        SEEN,
        (
            Place(WINDOW, "targets.<run>.resultSeenEpoch"),
            Place(WINDOW, "until"),
            Place(WINDOW, "untilEpoch"),
        ),
        ORDER,
        "the window closed once every target's story had ended (at until: text to the nanosecond, and epoch "
        "seconds, one time)",
        WRITTEN_NS,
        "WRITTEN_NS",
    ),
    Twice(
        "seen-around-the-kill",
        SEEN,
        (
            Place(TIMELINE, "seenAt", "every record to beforeKillSeq"),
            Place(KILL, "killSentEpoch"),
            Place(LAUNCHES, "at", "the first start after the kill"),
            Place(TIMELINE, "seenAt", "every record after beforeKillSeq"),
        ),
        ORDER,
        "the records to beforeKillSeq were seen by the kill, those after it once a resumed controller had started "
        "(§6.3)",
        WRITTEN_MS,
        "WRITTEN_MS",
    ),
    # the kill's moment
    Twice(
        "kill-sent",
        MOMENT,
        (Place(KILL, "at"), Place(KILL, "killSentAt"), Place(KILL, "killSentEpoch")),
        WITHIN,
        "when SIGKILL was sent (or, for an end the console did not make, when the end was seen): at and "
        "killSentAt are one text",
        WRITTEN_MS,
        "WRITTEN_MS",
    ),
    Twice(
        "frozen",
        MOMENT,
        (Place(KILL, "frozenAt"), Place(KILL, "frozenEpoch"), Place(KILL, "frozenMs")),
        WITHIN,
        "when the controller was frozen; frozenMs is killSentEpoch minus frozenEpoch, in milliseconds to three places",
        WRITTEN_MS,
        "WRITTEN_MS",
    ),
    Twice(
        "since",
        MOMENT,
        (
            Place(KILL, "since"),
            Place(KILL, "sinceEpoch"),
            Place(WINDOW, "since"),
            Place(WINDOW, "sinceEpoch"),
        ),
        WITHIN,
        "where the window opens (the runtime's clock at the freeze): one time in both files, as text to the "
        "nanosecond and as epoch seconds",
        WRITTEN_NS,
        "WRITTEN_NS",
    ),
    Twice(
        "kill-order",
        MOMENT,
        (
            Place(KILL, "triggerSeenEpoch"),
            Place(KILL, "sinceEpoch"),
            Place(KILL, "frozenEpoch"),
            Place(KILL, "killSentEpoch"),
            Place(KILL, "killReturnedEpoch"),
        ),
        ORDER,
        "the moment was seen, then since <= the freeze <= killSentEpoch (for an end the console did not make, "
        "the end was seen, the window opened, and the freeze, the kill and its return are one moment after)",
        SAME_CLOCK,
        "SAME_CLOCK",
    ),
    Twice(
        "kill-then-end",
        MOMENT,
        (
            Place(KILL, "killSentEpoch"),
            Place(LAUNCHES, "at", "the killed pid's end line"),
            Place(MACHINE, "at", "the after-kill snapshot"),
            Place(LAUNCHES, "at", "the next start"),
        ),
        ORDER,
        "the keeper's end of the killed controller comes after SIGKILL; the after-kill snapshot and the resume "
        "after that end; for an end the console did not make, the end comes first and kill.json's at after it",
        WRITTEN_MS,
        "WRITTEN_MS",
    ),
    Twice(
        "point-fired",
        MOMENT,
        (
            Place(ARMS, "point", "the fired line"),
            Place(ARMS, "kill", "the fired line"),
            Place(ARMS, "run", "the fired line"),
            Place(ARMS, "at", "the fired line"),
            Place(KILL, "point"),
            Place(KILL, "trigger"),
            Place(KILL, "killSentEpoch"),
        ),
        EQUAL,
        "a fired line names kill n, whose kill.json says trigger auto at that point, and the run of its moment; "
        "every auto kill has its fired line, written once SIGKILL was sent",
        WRITTEN_MS,
        "WRITTEN_MS",
    ),
    Twice(
        "point-counted-from",
        MOMENT,
        (Place(ARMS, "fromSeq", "a fired or missed line"), Place(KILL, "beforeKillSeq", "the kill before it")),
        EQUAL,
        "a point armed behind one that fired counts from that kill's beforeKillSeq (in the same console; the "
        "first point of a console that read from the start counts from 0)",
    ),
    Twice(
        "trigger-event",
        MOMENT,
        (
            Place(KILL, "triggerEvent.*"),
            *(Place(TRACE_FILE, k, "the same event") for k in EVENT_KEYS),
            Place(KILL, "point"),
        ),
        EQUAL,
        "a container point's event is of the point's action, and in a traced study a line of the trace (the same "
        "object, without seenAt)",
    ),
    # a container's identity, start and exit
    Twice(
        "container-name",
        CONTAINER,
        (
            *_each(SNAPSHOTS, "<name>", "the key"),
            *_each(SNAPSHOTS, "<name>.Name"),
            Place(MACHINE, "containers[].Name"),
            *_each(RECORDINGS, "Actor.Attributes.name"),
            Place(LEDGER, "content.container", "runStarted"),
            Place(KILL, "targets[].container"),
            Place(KILL, "prefix"),
            Place(RESEARCH, "containerPrefix"),
            Place(ACCOUNTS, "runs[].container"),
        ),
        EQUAL,
        "a run's container is <containerPrefix>-<ID>-<run> (kill.json's prefix is <containerPrefix>-<ID>-); a "
        "snapshot is filed under its Name (with or without Docker's leading /)",
    ),
    Twice(
        "container-labels",
        CONTAINER,
        (
            *_each(SNAPSHOTS, "<name>.Config.Labels.'studymon.run'"),
            *_each(SNAPSHOTS, "<name>.Config.Labels.'studymon.study'"),
            Place(MACHINE, "containers[].Config.Labels.'studymon.run'"),
            Place(MACHINE, "containers[].Config.Labels.'studymon.study'"),
            *_each(RECORDINGS, "Actor.Attributes.'studymon.run'"),
            *_each(RECORDINGS, "Actor.Attributes.'studymon.study'"),
            Place(RESEARCH, "study"),
        ),
        EQUAL,
        "where a study labels its containers (§6.1), the labels name its run and the study of research.json",
    ),
    Twice(
        "container-id",
        CONTAINER,
        (
            *_each(SNAPSHOTS, "<name>.Id"),
            Place(MACHINE, "containers[].Id"),
            *_each(RECORDINGS, "Actor.ID"),
            Place(KILL_REPORT, "kills[].targets[].events.dies[].Id"),
        ),
        EQUAL,
        "one Id per container name: in every snapshot, the machine's and the kill's, and every event of that name",
    ),
    Twice(
        "container-started",
        CONTAINER,
        (
            *_each(SNAPSHOTS, "<name>.State.StartedAt"),
            *_each(SNAPSHOTS, "<name>.State.Running"),
            *_each(SNAPSHOTS, "<name>.State.Status"),
            Place(MACHINE, "containers[].State.StartedAt"),
            *_each(RECORDINGS, "timeNano", "its start"),
        ),
        WITHIN,
        "a container is started once: one StartedAt in every snapshot of its Id, within a second of its start "
        "event; a snapshot taken before its die shows it running",
        EVENT_SECOND,
        "EVENT_SECOND",
    ),
    Twice(
        "container-exit",
        CONTAINER,
        (
            *_each(RECORDINGS, "Actor.Attributes.exitCode", "its die"),
            *_each(RECORDINGS, "timeNano", "its die"),
            *_each(SNAPSHOTS, "<name>.State.ExitCode"),
            *_each(SNAPSHOTS, "<name>.State.FinishedAt"),
            Place(MACHINE, "containers[].State.ExitCode"),
            Place(MACHINE, "containers[].State.FinishedAt"),
            Place(LEDGER, "content.exitCode", "the run's runResult"),
            Place(ACCOUNTS, "runs[].results[].exitCode"),
            Place(KILL_REPORT, "kills[].targets[].events.dies[].exitCode"),
            Place(KILL_REPORT, "kills[].targets[].events.dies[].timeNano"),
        ),
        WITHIN,
        "a container exits once: its die's exitCode is the one its run's runResult reports and every snapshot "
        "taken after it shows, at a FinishedAt within a second of the die",
        EVENT_SECOND,
        "EVENT_SECOND",
    ),
    Twice(
        "recordings-agree",
        CONTAINER,
        (
            *(Place(f, k) for f in RECORDINGS for k in EVENT_KEYS),
            Place(LIVE, "seenAt"),
            Place(TRACE_FILE, "seenAt"),
            Place(LIVE, "gap.from"),
            Place(LIVE, "gap.to"),
            Place(TRACE_FILE, "gap.from"),
            Place(TRACE_FILE, "gap.to"),
        ),
        EQUAL,
        "an event (by Id, action and timeNano) is one object wherever it is recorded: the live recording adds "
        "seenAt (and readBack), the trace the same seenAt as the live line received with it; a gap is in both the "
        "live recording and the trace",
    ),
    Twice(
        "event-own-copies",
        CONTAINER,
        (
            *_each(RECORDINGS, "status"),
            *_each(RECORDINGS, "Action"),
            *_each(RECORDINGS, "id"),
            *_each(RECORDINGS, "Actor.ID"),
            *_each(RECORDINGS, "from"),
            *_each(RECORDINGS, "Actor.Attributes.image"),
            *_each(RECORDINGS, "time"),
            *_each(RECORDINGS, "timeNano"),
        ),
        WITHIN,
        "an event holds Docker's older fields beside the newer: status is Action, id is Actor.ID, from is the "
        "image attribute, time is timeNano's second",
        EVENT_SECOND,
        "EVENT_SECOND",
    ),
    Twice(
        "read-back-in-window",
        CONTAINER,
        (Place(WINDOW, "sinceEpoch"), Place(READBACK, "timeNano"), Place(WINDOW, "untilEpoch")),
        ORDER,
        "the runtime's events read back are those of the window",
        WRITTEN_NS,
        "WRITTEN_NS",
    ),
    Twice(
        "restart-gap",
        CONTAINER,
        (Place(RESTARTS, "from"), Place(RESTARTS, "to"), Place(LIVE, "gap.from"), Place(LIVE, "gap.to")),
        EQUAL,
        "a restart's stretch is a gap line's of the live recording",
        rare="only when the runtime restarted while a window was open (tests/test_engine_faults.py restarts one)",
    ),
    # controllers
    Twice(
        "final-ending",
        CONTROLLERS,
        (
            Place(OUTCOME, "code"),
            Place(OUTCOME, "signal"),
            Place(LAUNCHES, "code", "the last start's pid's end"),
            Place(LAUNCHES, "signal", "the last start's pid's end"),
            Place(REPORT, "ending.code"),
            Place(REPORT, "ending.signal"),
            Place(REPORT, "finished"),
        ),
        EQUAL,
        "how the final controller ended, as its keeper wrote it; a study with an outcome.json has finished",
    ),
    Twice(
        "killed-controller",
        CONTROLLERS,
        (
            Place(KILL, "pid"),
            Place(KILL, "signal"),
            Place(KILL, "signalled"),
            Place(KILL, "trigger"),
            Place(LAUNCHES, "pid", "the start running at the kill"),
            Place(LAUNCHES, "signal", "its end"),
            Place(LAUNCHES, "code", "its end"),
        ),
        EQUAL,
        "the killed pid is the controller then running; a kill of the console's sent SIGKILL and the keeper saw "
        "its end by SIGKILL; an end the console did not make has no signal of the console's, and is a stop "
        "only when it ended with 130 (or was asked to stop)",
    ),
    Twice(
        "controller-in-snapshots",
        CONTROLLERS,
        (
            Place(LAUNCHES, "pid", "a start"),
            Place(LAUNCHES, "startTime", "a start"),
            Place(MACHINE, "processes[].pid"),
            Place(MACHINE, "processes[].started"),
            Place(MACHINE, "at"),
        ),
        ORDER,
        "a process of a controller's pid and start time is in a heavy snapshot only while launches.jsonl says it "
        "runs (between its start and its end)",
        WRITTEN_MS,
        "WRITTEN_MS",
    ),
    Twice(
        "snapshot-per-launch",
        CONTROLLERS,
        (
            Place(MACHINE, "label", "start, resume, after-kill, end"),
            Place(MACHINE, "at"),
            Place(LAUNCHES, "resume", "a start"),
            Place(LAUNCHES, "at", "a start"),
            Place(KILL, "trigger"),
        ),
        ORDER,
        "a start or resume snapshot just before each start (resume false, true); an after-kill snapshot per "
        "kill of the console's; an end snapshot once the study finished",
        WRITTEN_MS,
        "WRITTEN_MS",
    ),
    Twice(
        "launch-argv",
        CONTROLLERS,
        (Place(LAUNCHES, "argv[]", "a start"), Place(LAUNCHES, "resume"), Place(RESEARCH, "command[]")),
        EQUAL,
        "the controller's argv is research.json's command, --config OUT/research.json --dir OUT/study, and "
        "--resume exactly when the start says resume",
    ),
    # the targets
    Twice(
        "targets-from-ledger",
        TARGETS,
        (
            Place(KILL, "targets[].run"),
            Place(KILL, "targets[].class"),
            Place(KILL, "targets[].cell"),
            Place(KILL, "targets[].round"),
            Place(KILL, "targets[].planSeq"),
            Place(KILL, "targets[].startSeq"),
            Place(AT_KILL, "[].content.*", "the target's run records"),
            *_each(SNAPSHOTS, "<name>.State.*", "an unrecorded target's"),
        ),
        EQUAL,
        "what the ledger at the kill says of each target: its runPlanned (cell, round, planSeq), runStarted "
        "(startSeq) and class (inFlight: started, no result; unsettled: a diagnosis result, its round not "
        "settled; unrecorded: not started by the ledger, its container started; charged: charged, not started)",
    ),
    Twice(
        "targets-in-window",
        TARGETS,
        (
            Place(KILL, "targets[].run"),
            Place(WINDOW, "targets.<run>"),
            Place(WINDOW, "targets.<run>.resultSeq"),
            Place(LEDGER, "seq", "the target's runResult, or its round's settlement"),
            Place(KILL_REPORT, "kills[].targets[].run"),
            Place(KILL_REPORT, "kills[].targets[].container"),
            Place(KILL_REPORT, "kills[].targets[].resultSeq"),
        ),
        EQUAL,
        "the window has an entry for each target and no other, whose resultSeq is the record that ended the "
        "target's story (its runResult; an unsettled target's: its round's diagnosisSettlement)",
    ),
    Twice(
        "targets-snapshotted",
        TARGETS,
        (*_each(SNAPSHOTS, "<name>", "the keys"), Place(KILL, "targets[].container")),
        EQUAL,
        "each snapshot has the containers of the targets that have one, and no other",
    ),
    # a trial
    Twice(
        "trial-identity",
        TRIAL,
        (
            Place(JOURNAL_FILE, "id"),
            Place(JOURNAL_FILE, "n"),
            Place(JOURNAL_FILE, "out"),
            Place(SUMMARY, "trials[].id"),
            Place(SUMMARY, "trials[].out"),
            Place(SUMMARY, "study"),
            Place(trial_file(RESEARCH), "study"),
        ),
        EQUAL,
        "trial n is study <ID>-<n> in trials/<n>",
    ),
    Twice(
        "trial-points",
        TRIAL,
        (
            Place(JOURNAL_FILE, "points[]"),
            Place(SUMMARY, "trials[].points[]"),
            Place(trial_file(ARMS), "point", "the arm lines"),
        ),
        EQUAL,
        "the trial's folder was armed at exactly its points, in order",
    ),
    Twice(
        "trial-class",
        TRIAL,
        (
            Place(JOURNAL_FILE, "cls"),
            Place(JOURNAL_FILE, "class"),
            Place(SUMMARY, "trials[].cls"),
            Place(SUMMARY, "trials[].class"),
            Place(SUMMARY, "points[].class", "its first point's"),
            Place(SUMMARY, "classes[].name"),
            Place(SUMMARY, "classes[].candidates[]"),
        ),
        EQUAL,
        "a trial's class is its first point's; a class's candidates are its points, in order",
    ),
    Twice(
        "trial-verdict",
        TRIAL,
        (
            Place(JOURNAL_FILE, "ok"),
            Place(JOURNAL_FILE, "failed[]"),
            Place(JOURNAL_FILE, "unknown[]"),
            Place(JOURNAL_FILE, "checks.<check>"),
            Place(JOURNAL_FILE, "exit"),
            Place(JOURNAL_FILE, "state"),
            *(Place(trial_file(REPORT), f"checks[].{k}") for k in CHECK_KEYS),
        ),
        EQUAL,
        "a done trial's verdict is its folder's report.json (✗ beats ? beats ✓ over a check's scopes); its exit "
        "status the verdict's (0, 1, 3)",
    ),
    Twice(
        "campaign-is-the-journal",
        TRIAL,
        (
            *(Place(SUMMARY, f"trials[].{k}") for k in TRIAL_KEYS),
            *(Place(JOURNAL_FILE, k, "each trial's last line") for k in TRIAL_KEYS),
            Place(SUMMARY, "matrix.checks[]"),
            Place(SUMMARY, "matrix.rows.<class>.<check>"),
            Place(SUMMARY, "matrix.firstFailing.<check>"),
        ),
        EQUAL,
        "campaign.json's trials are the journal's last line for each trial, and its matrix is built from them",
    ),
    Twice(
        "campaign-template",
        TRIAL,
        (
            Place(SUMMARY, "template.*"),
            Place(TEMPLATE_COPY, "*"),
            Place(campaign_file(f"{TRACE}/{RESEARCH}"), "*"),
            Place(trial_file(RESEARCH), "*"),
        ),
        EQUAL,
        "the template copy the trace was started from is campaign.json's template, and the trace's and each "
        "trial's research.json are that template with their study id (and the backend resolved)",
    ),
    # the verdict
    Twice(
        "checks-in-reports",
        VERDICT,
        (
            *(Place(REPORT, f"checks[].{k}") for k in CHECK_KEYS),
            Place(REPORT, "ok"),
            Place(ACCOUNTS, "checks.<check>"),
            Place(KILL_REPORT, "kills[].checks.<check>"),
            Place(KILL_REPORT, "kills[].details.<check>"),
            Place(KILL_REPORT, "kills[].targets[].checks.<check>"),
            Place(KILL_REPORT, "kills[].targets[].details.<check>"),
        ),
        EQUAL,
        "each check is report.json's, by scope (study, kill n, kill n · run); ok is ✗ beats ? beats ✓ over them",
    ),
    Twice(
        "kill-report-is-the-folder",
        VERDICT,
        (
            Place(KILL_REPORT, "study"),
            Place(REPORT, "study"),
            Place(RESEARCH, "study"),
            Place(KILL_REPORT, "kills[].kill"),
            Place(KILL_REPORT, "kills[].trigger"),
            Place(KILL_REPORT, "kills[].windowOpen"),
            Place(KILL_REPORT, "kills[].targets[].events.dies[].Id"),
            Place(KILL_REPORT, "kills[].targets[].events.dies[].exitCode"),
            Place(KILL_REPORT, "kills[].targets[].events.dies[].timeNano"),
            Place(KILL_REPORT, "kills[].targets[].events.forbidden[].action"),
            Place(KILL_REPORT, "kills[].targets[].events.forbidden[].timeNano"),
            Place(KILL, "trigger"),
        ),
        EQUAL,
        "the reports name research.json's study; kill-report.json has an entry per kill folder, its trigger, "
        "whether its window file is missing, and each target's die events as the recordings hold them",
    ),
)


# --- every other field, held once -----------------------------------------------------------------------------

_INSPECT = "the runtime's inspect, verbatim"
_EVENT = "the runtime's event, verbatim"
_JUDGED = "the judge's reading"
_WATCHED = "when the ledger was truncated or replaced while watched"
_RESTARTED = "when the runtime restarted while a window was open"


HELD_ONCE: tuple[Once, ...] = (
    # OUT
    Once(_F.LOG, "", "the controller's standard output and error, as text"),
    Once(RESEARCH, "backend", "the runtime the study uses, resolved (docker or process)"),
    Once(RESEARCH, "expectEnd", "how the study is meant to end", "when the template says"),
    Once(RESEARCH, "*", "the template's own keys, passed to the study untouched (§1)"),
    Once(LAUNCHES, "event", "start or end"),
    Once(LAUNCHES, "keeper", "the pid of the controller's keeper"),
    Once(LAUNCHES, "error", "why the keeper could not start the controller", "when it could not"),
    Once(LAUNCHES, "note", "why an end has no status", "when a controller's keeper died with it"),
    Once(ARMS, "event", "arm, disarm, fired or missed"),
    Once(ARMS, "detail", "why a point was missed", "when one was"),
    Once(_F.LEDGER_WATCH, "event", "truncated or replaced", _WATCHED),
    Once(_F.LEDGER_WATCH, "at", "when it was seen", _WATCHED),
    Once(_F.LEDGER_WATCH, "offset", "the bytes read before", _WATCHED),
    Once(_F.LEDGER_WATCH, "size", "the ledger's size then", _WATCHED),
    Once(_F.LEDGER_WATCH, "line", "the line reached", _WATCHED),
    Once(MACHINE, "load[]", "the machine's load averages"),
    Once(MACHINE, "memory.total", "the machine's memory: in all"),
    Once(MACHINE, "memory.available", "available"),
    Once(MACHINE, "memory.used", "used"),
    Once(MACHINE, "memory.percent", "used, percent"),
    Once(MACHINE, "cpu", "the machine's CPU use, percent"),
    Once(MACHINE, "processes[].ppid", "a process's parent"),
    Once(MACHINE, "processes[].status", "a process's state"),
    Once(MACHINE, "processes[].name", "a process's name"),
    Once(MACHINE, "processes[].cpuSeconds", "a process's CPU time"),
    Once(MACHINE, "processes[].rss", "a process's resident memory"),
    Once(
        MACHINE,
        "processes[].args",
        "the command line of the study's own processes",
        "in a snapshot taken while its controller runs: none of today's (they are taken between controllers)",
    ),
    Once(MACHINE, "containers[].*", f"{_INSPECT}: the rest of it"),
    Once(MACHINE, "takenIn", "how long the snapshot took"),
    Once(MACHINE, "error", "why a heavy snapshot failed", "when one failed"),
    Once(_F.LOAD, "at", "when the sample was taken"),
    Once(_F.LOAD, "cpu", "the study's CPU use, percent of one core"),
    Once(_F.LOAD, "memory", "the study's memory, bytes"),
    Once(_F.LOAD, "runs.<name>.cpu", "a running run's CPU use"),
    Once(_F.LOAD, "runs.<name>.memory", "a running run's memory"),
    Once(ACCOUNTS, "ledgerIssues[].kind", f"{_JUDGED}: what was wrong with a line of the ledger"),
    Once(ACCOUNTS, "ledgerIssues[].line", "its line"),
    Once(ACCOUNTS, "ledgerIssues[].detail", "in words"),
    Once(ACCOUNTS, "ledgerIssueCount", f"{_JUDGED}: how many issues"),
    Once(ACCOUNTS, "contract", f"{_JUDGED}: the first rule of §2a broken"),
    Once(KILL_REPORT, "kills[].files.<file>", f"{_JUDGED}: each kill file ok, or what is wrong with it"),
    Once(KILL_REPORT, "kills[].gaps", f"{_JUDGED}: the gaps in the recording"),
    Once(REPORT, "out", "the folder judged"),
    Once(_F.REPORT_SVG, "", "the check table as a picture"),
    # kills/<n>/
    Once(KILL, "groupStopped", "every process of the group was seen stopped before the last read"),
    Once(KILL, "captureError", "what failed while the controller was frozen"),
    Once(KILL, "exact", "the study's file system held the point's write: it could not go past the point (§9.1)"),
    *(Once(s, "<name>.*", f"{_INSPECT}: the rest of it") for s in SNAPSHOTS),
    Once(LIVE, "readBack", "read back from the runtime, not received live"),
    Once(RESTARTS, "runtime", "the runtime that restarted", _RESTARTED),
    Once(RESTARTS, "before.pid", "the process behind its socket before: its pid", _RESTARTED),
    Once(RESTARTS, "before.started", "its start, in clock ticks since boot", _RESTARTED),
    Once(RESTARTS, "after.pid", "the process after", _RESTARTED),
    Once(RESTARTS, "after.started", "its start", _RESTARTED),
    Once(RESTARTS, "seenAt", "when the console saw it", _RESTARTED),
    # a campaign's own files
    Once(SUMMARY, "version", "the file's version"),
    Once(SUMMARY, "token", "the campaign's token (its trials' claims)"),
    Once(SUMMARY, "trace", "the trace folder"),
    Once(SUMMARY, "points[].point", "a candidate point of the trace"),
    Once(SUMMARY, "points[].left.*", "what a crash there leaves unfinished"),
    Once(SUMMARY, "options.all", "a trial per candidate, not per class"),
    Once(SUMMARY, "options.depth", "1, or 2: each resumed controller killed again"),
    Once(SUMMARY, "options.maxTrials", "at most so many trials"),
    Once(SUMMARY, "timing.trace", "seconds the trace took"),
    Once(SUMMARY, "timing.cluster", "the cluster's start"),
    Once(SUMMARY, "timing.trials", "the trials"),
)


# --- field paths ------------------------------------------------------------------------------------------------

_SEGMENT = re.compile(r"'([^']*)'|(\[\])|([^.\[']+)")


def segments(path: str) -> tuple[str, ...]:
    """A dotted field path as its keys: ``targets[].run`` is ``("targets", "[]", "run")``."""
    out: list[str] = []
    for quoted, listed, plain in _SEGMENT.findall(path):
        out.append(quoted or listed or plain)
    return tuple(out)


def spelled(keys: Sequence[str]) -> str:
    """A concrete field path as text (keys with a dot quoted)."""
    text = ""
    for key in keys:
        if key == "[]":
            text += "[]"
        else:
            part = f"'{key}'" if "." in key or "[" in key else key
            text += f".{part}" if text else part
    return text


def _is_placeholder(segment: str) -> bool:
    return segment.startswith("<") and segment.endswith(">")


def matches(pattern: Sequence[str], keys: Sequence[str], empty: bool = False) -> bool:
    """Whether concrete ``keys`` are ``pattern``'s field: ``<x>`` is any one key, a trailing ``*`` anything
    below (or nothing); ``empty``: the field's value is an empty object or list, or null, so that any path
    below it covers it."""
    for i, seg in enumerate(pattern):
        if seg == "*" and i == len(pattern) - 1:
            return True
        if i >= len(keys):
            return empty
        key = keys[i]
        if seg == "[]" or key == "[]":
            if seg != key:
                return False
        elif not (_is_placeholder(seg) or seg == key):
            return False
    return len(keys) == len(pattern)


@dataclass(frozen=True)
class Found:
    """Where a concrete field of a real folder is in the lists: the rows holding it twice, the entry holding it
    once (or neither)."""

    twice: tuple[Twice, ...]
    once: Once | None

    @property
    def known(self) -> bool:
        return bool(self.twice) or self.once is not None


def classify(file: str, keys: Sequence[str], empty: bool = False) -> Found:
    """Where the field ``keys`` of ``file`` (named as the lists name it) is listed."""
    twice = tuple(
        row for row in HELD_TWICE if any(p.file == file and matches(segments(p.path), keys, empty) for p in row.places)
    )
    once = next((o for o in HELD_ONCE if o.file == file and matches(segments(o.path), keys, empty)), None)
    return Found(twice, once)


def files() -> set[str]:
    """Every file the lists name."""
    return {p.file for row in HELD_TWICE for p in row.places} | {o.file for o in HELD_ONCE}


# --- agreement --------------------------------------------------------------------------------------------------


def agree(row: Twice, values: Sequence[object]) -> bool:
    """Whether copies of ``row``'s fact agree as the row says: ``values`` are the copies (for ORDER, times in the
    order of the row's places, each allowed ``tolerance`` before the one it follows)."""
    if row.agree == EQUAL:
        return all(_same(values[0], v) for v in values[1:])
    numbers = [float(v) for v in values]  # type: ignore[arg-type]
    if row.agree == WITHIN:
        return max(numbers) - min(numbers) <= row.tolerance
    return all(b >= a - row.tolerance for a, b in itertools.pairwise(numbers))


def _same(a: object, b: object) -> bool:
    """JSON equality with types: ``True``, ``1`` and ``1.0`` differ (as ledger-at-kill.json must keep them)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


# --- the table in docs/evidence.md ----------------------------------------------------------------------------

DOC_BEGIN = "<!-- held-twice: generated from engine/evidence/heldtwice.py; tests/test_held_twice.py checks it -->"
DOC_END = "<!-- held-twice: end -->"


def _code(text: str) -> str:
    return f"`{text}`"


def markdown() -> str:
    """The "Facts held twice" table of ``docs/evidence.md``, as the module holds it."""
    lines = [
        DOC_BEGIN,
        "",
        "| fact | row | held in | they agree when |",
        "| --- | --- | --- | --- |",
    ]
    for row in HELD_TWICE:
        by_file: dict[str, list[str]] = {}
        for p in row.places:
            by_file.setdefault(p.file, []).append(_code(p.path) + (f" ({p.where})" if p.where else ""))
        places = "<br>".join(f"{_code(file)}: {', '.join(paths)}" for file, paths in by_file.items())
        how = row.says
        if row.tolerance_name:
            tolerance = f"{_code(row.tolerance_name)} = {row.tolerance:g} s"
            how += f" (in this order, each within {tolerance})" if row.agree == ORDER else f" (within {tolerance})"
        if row.rare:
            how += f"; written {row.rare}"
        lines.append(f"| {row.fact} | {_code(row.name)} | {places} | {how} |")
    lines += ["", DOC_END]
    return "\n".join(lines)
