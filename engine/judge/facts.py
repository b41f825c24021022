"""What the checks are given: the evidence folder read, parsed and interpreted.

Each fact is a value that was validated, or the reason it is not there;
the reading itself is in :mod:`studymon.engine.judge.read`.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studymon.engine.contract.automata import Proof, Row, Where, proof
from studymon.engine.contract.ends import FINISHED, PAUSED
from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from studymon.engine.contract.killpoint import SEED, ArmedPoint, KillPoint, point_text
from studymon.engine.contract.ledger import LedgerIssue, Record
from studymon.engine.contract.rules import is_int, stem
from studymon.engine.evidence.records import KillRecord, KillTarget, LaunchEnd, LaunchStart, WindowRecord, no_since
from studymon.engine.judge.machines import ARM, DISARM, POINT, RESUMED
from studymon.engine.judge.verdict import PROOFS_KEPT, SHOWN, Verdict

if TYPE_CHECKING:
    from studymon.engine.judge.events import EventTally
    from studymon.engine.judge.machines import KillStory


# --- what the checks are given ----------------------------------------------------


def ledger_line(r: Record | None) -> Where:
    """The ledger's line that holds ``r`` (None: the ledger as a whole), for a proof."""
    return Where(EvidenceFolder.LEDGER, r.line if r is not None else 0)


@dataclass(frozen=True)
class StudyFacts:
    """Who the study is: its id and container prefix (from research.json), or why unknown."""

    id: str | None
    container_prefix: str | None
    problem: str | None = None
    expect_end: str = "halt"  # research.json's expectEnd (§6.7)

    @property
    def stem(self) -> str | None:
        """``<containerPrefix>-<ID>-``: every container of the study starts so."""
        if self.id is None or self.container_prefix is None:
            return None
        return stem(self.container_prefix, self.id)

    def container(self, run: str) -> str | None:
        stem = self.stem
        return None if stem is None else stem + run


@dataclass
class LedgerFacts:
    """What reading the ledger found, beside the records (which went to the accounts)."""

    records: int = 0
    last_seq: int = 0
    issues: list[LedgerIssue] = field(default_factory=list)  # the first few
    issue_count: int = 0
    problem: str | None = None  # the ledger could not be read (to its end): every check that needs it fails
    faults: list[str] = field(default_factory=list)  # ledger-watch.jsonl lines as reasons (the first SHOWN)
    fault_count: int = 0
    watch_problem: str | None = None  # ledger-watch.jsonl could not be read
    seen_differ: list[str] = field(default_factory=list)  # records the ledger and timeline.jsonl disagree on
    seen_count: int = 0
    seen_proofs: list[Proof] = field(default_factory=list)  # of those, the ones stated with their lines
    absent: bool = False  # there is no ledger file at all
    pending: bool = False  # absent, and the study may still write it: a resume can continue it

    def say(self, v: Verdict, lead: str = "the ledger cannot be judged: ") -> None:
        """The ledger's problem, for a check that needs the ledger: ✗, or ? for a ledger still to come."""
        (v.unknown if self.pending else v.fail)(lead + (self.problem or ""), self.proof())

    def proof(self) -> Proof:
        """Why the ledger's problem fails a check: the file as a whole, and what is wrong with it."""
        return proof(
            Where(EvidenceFolder.LEDGER, 0),
            (self.problem or "not read").removeprefix(f"{EvidenceFolder.LEDGER}: "),
            "the checks are judged on the ledger read whole to its end (§6.9)",
        )


@dataclass
class Launches:
    """What the replay of launches.jsonl found: the final controller and its end, two at once, lines that are wrong."""

    first: LaunchStart | None = None  # the first start, by time
    # Each controller's end that was not exit 0: (pid, when, where it is said), for the kill folders that claim them.
    unclean: list[tuple[int | None, float, Where]] = field(default_factory=list)
    final: LaunchStart | None = None  # the last start
    final_end: LaunchEnd | None = None  # its own end, if it has one
    final_end_where: Where | None = None  # the line that says it
    first_where: Where | None = None  # the first start's line
    overlaps: list[str] = field(default_factory=list)  # a start while another controller ran (the first few)
    overlap_count: int = 0
    problems: list[str] = field(default_factory=list)  # lines that are not launches (the first few)
    problem_count: int = 0
    problem: str | None = None  # the file could not be read
    fault: str | None = None  # the first of its lines that is not a launch, if any
    outcome_written: bool = False  # outcome.json is there: the console refuses to resume the study
    # Each controller's life, (start, end or +inf), in the order of the starts; ``lived_until[i]``: the latest end
    # of the first i + 1 (a record dated t lay in some life when the last start by t has lived_until >= t).
    starts: list[float] = field(default_factory=list)
    lived_until: list[float] = field(default_factory=list)
    lives_cut: bool = False  # more lives than kept: when records were written is not judged
    unlived: list[str] = field(default_factory=list)  # records written in no controller's life (the first few)
    unlived_count: int = 0
    proofs: list[Proof] = field(default_factory=list)  # of the reasons above, those stated with their lines

    @property
    def ended(self) -> bool:
        return self.final_end is not None

    @property
    def finished(self) -> bool:
        """The final controller ended with exit 0: the study has finished (§6.3).  When launches.jsonl cannot be
        read whole (unreadable, or a line that is not a launch), whether it did cannot be told for sure, and it
        counts as finished: nothing is still to come, and nothing missing hides behind a ``?`` (exitedCleanly
        fails saying why).  So does a folder with outcome.json, whatever launches.jsonl says: no console resumes
        it (§6.6: ``?`` only while the study can still be resumed)."""
        if self.problem is not None or self.fault is not None or self.outcome_written:
            return True
        return self.final_end is not None and self.final_end.clean

    def bad(self, reason: str, why: Proof | None = None) -> None:
        self.problem_count += 1
        if len(self.problems) < SHOWN:
            self.problems.append(reason)
        if why is not None and len(self.proofs) < PROOFS_KEPT:
            self.proofs.append(why)

    def end_where(self, end: LaunchEnd | None) -> Where | None:
        """The launches.jsonl line that says ``end``, where the replay kept it (the final end, those not exit 0)."""
        if end is None:
            return None
        if end is self.final_end:
            return self.final_end_where
        return next((where for pid, at, where in self.unclean if pid == end.pid and at == end.at), None)

    def lived(self, at: float, lag: float) -> bool:
        """Whether a controller ran at ``at``, within ``lag`` of its start or its end."""
        i = bisect.bisect_right(self.starts, at + lag) - 1
        return i >= 0 and self.lived_until[i] >= at - lag

    def overlap(self, running: LaunchStart, start: LaunchStart) -> None:
        self.overlap_count += 1
        if len(self.overlaps) < SHOWN:
            self.overlaps.append(f"pid {start.pid} started while pid {running.pid} had not ended")

    def ending_json(self) -> dict[str, Any] | None:
        """The final end for the report: only an integer code and a signal name, nothing else from the file."""
        end = self.final_end
        return None if end is None else {"code": end.code, "signal": end.signal}


# --- the kill evidence, interpreted ---------------------------------------------------


# --- per kill ----------------------------------------------------------------------------


@dataclass
class KillEvidence:
    """What kills/<n>/ holds, read and interpreted, for the checks of one kill."""

    number: int
    problems: dict[str, str] = field(default_factory=dict)  # file -> why it cannot be used (it is there)
    missing: set[str] = field(default_factory=set)  # files that are not there at all
    kill: KillRecord | None = None
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict)  # file -> {name: inspect | None}
    window: WindowRecord | None = None
    at_kill: str | None = None  # why ledger-at-kill.json is not the ledger as it stood (None: it is)
    at_kill_line: int = 0  # the ledger's line it differs at (0: none)
    # The ledger's line of the first record whose seq is beforeKillSeq: the ledger as it stood at the kill is the
    # lines up to it (what ledger-at-kill.json holds), whatever seq a later line repeats.
    cut_line: int | None = None
    tally: EventTally | None = None  # None when the events could not be judged
    keeper_end: LaunchEnd | None = None  # the killed pid's first end at or after the kill
    keeper_end_where: Where | None = None  # the launches.jsonl line that says it, where known
    end_claimed_by: int | None = None  # an earlier kill whose keeper end that same line is
    unjudged: bool = False  # more runs were in flight than the judge follows one by one
    launches_problem: str | None = None
    targets: list[KillTarget] = field(default_factory=list)  # the runs judged (see kill.judged_targets)
    # Records after the kill seen while no controller started after it ran, or never seen:
    # (run, kind, why, never seen at all, the proof: the record's line and the line that saw it)
    unmanned: list[tuple[str | None, str, str, bool, Proof | None]] = field(default_factory=list)
    unmanned_count: int = 0
    timeline_problem: str | None = None
    ended_before: str | None = None  # the killed pid had ended before the kill: the kill met no controller
    unstarted: str | None = None  # kill.json's pid is no controller launches.jsonl started by the kill
    timeline_seen: dict[str, float] = field(default_factory=dict)  # run -> when timeline.jsonl saw its story's end
    resumed_over: bool = False  # a controller started after the kill before the killed one had ended
    finished: bool = False  # the study has finished (§6.3): what is missing now is lost
    all_results: bool = False  # every target has its result in the ledger: the window should have closed
    end_ok: bool | None = True  # haltedAtExport's verdict: the study ended as expected
    end_proof: Proof | None = None  # and its first proof, when it failed
    final_end_where: Where | None = None  # the final controller's end (launches.jsonl), by which the study finished
    missing_kills: list[int] = field(default_factory=list)  # lower kill numbers with no folder
    story: KillStory | None = None  # the kill's states over time, as the replay of the controllers moved it

    @property
    def scope(self) -> str:
        return f"kill {self.number}"

    @property
    def opens_ns(self) -> int | None:
        """Where the kill's window opens: at the freeze, as kill.json says; the window file's copy (held to it by
        killEvidence) only where kill.json gives none."""
        if self.kill is not None and self.kill.since_ns is not None:
            return self.kill.since_ns
        return self.window.since_ns if self.window is not None else None

    def at(self, file: str, line: int = 0) -> Where:
        """A file of this kill's folder (``line`` 0: as a whole), for a proof."""
        return Where(KillFolder(Path(), self.number).rel(file), line)

    def finished_at(self) -> tuple[Where, str]:
        """The line by which the study finished, for a proof that what did not come is lost."""
        return self.final_end_where or Where(EvidenceFolder.LAUNCHES, 0), "the final controller exits 0"

    def said(self, file: str) -> str:
        """What is wrong with ``file``, in the words of a proof that names it: missing, or why it is unusable."""
        if file in self.missing:
            return "missing"
        return self.problems.get(file, "not read").removeprefix(f"{file}: ")

    def missing_proof(self, file: str, then: str) -> Proof:
        """Why ``file`` cannot be used (missing, or there but unusable), as a proof."""
        return proof(self.at(file), self.said(file), then)

    def problem(self, file: str) -> str | None:
        """Why ``file`` cannot be used (missing, or there but unusable), or None."""
        if file in self.missing:
            return f"{file}: missing"
        return self.problems.get(file)

    @property
    def window_open(self) -> bool:
        """The window file is not there (yet): the resumed controller ended before every result."""
        return KillFolder.WINDOW in self.missing

    @property
    def may_continue(self) -> bool:
        """The window is open and the study can still be resumed: what is missing may still come."""
        return self.window_open and not self.finished

    def required(self) -> tuple[str, ...]:
        """The files the folder must hold: those of the capture, and the snapshot before the resume once a
        controller started after the kill; all of them once the window has closed, or should have.

        A window stays open while a target lacks its result; a finished study
        that lost one leaves it open for good (its checks say the result is
        lost), but one whose targets all have their results should have closed it.
        """
        if self.window_open and (not self.finished or not self.all_results):
            if self.resumed:
                return tuple(
                    f for f in KillFolder.FILES if f in KillFolder.AT_KILL_FILES or f == KillFolder.BEFORE_RESUME
                )
            return KillFolder.AT_KILL_FILES
        return KillFolder.FILES

    @property
    def resumed(self) -> bool:
        """Whether a controller started after the kill (the kill's replayed story says so)."""
        return self.story is not None and self.story.state == RESUMED

    # What a resume writes when a console went away in the middle of the capture (kill.complete_capture).
    COMPLETED_BY_RESUME = (KillFolder.AT_KILL, KillFolder.AFTER)

    def to_come(self) -> list[str]:
        """Capture files missing that the resume still writes before it starts the controller: while the study can
        be resumed and no controller has started since the kill."""
        if self.finished or self.resumed:
            return []
        return [f for f in self.COMPLETED_BY_RESUME if f in self.missing]

    def incomplete(self) -> list[str]:
        """Why the folder is not complete (for its stage): files missing or unusable, kill.json without since."""
        return [reason for reason, _ in self.incomplete_proven()]

    def incomplete_proven(self) -> list[tuple[str, Proof]]:
        """:meth:`incomplete`, each reason with its proof: the files it names, and the rule."""
        required = self.required()
        later = self.to_come()
        missing = [f for f in required if f in self.missing and f not in later]
        stage = "every file once its window has closed" if required == KillFolder.FILES else "the files of the kill"
        out = []
        if missing:
            lets = tuple((self.at(f), "missing") for f in missing)
            out.append((f"missing: {', '.join(missing)}", Proof(lets, f"a kill folder holds {stage} (§6.8)")))
        out += [
            (
                self.problems[f],
                self.missing_proof(f, "a kill folder's files are read as the console writes them (§6.9)"),
            )
            for f in KillFolder.FILES
            if f in self.problems
        ]
        if self.kill is not None and self.kill.since_epoch is None:
            out.append(
                (
                    no_since(KillFolder.KILL),
                    proof(
                        self.at(KillFolder.KILL),
                        "no since and sinceEpoch",
                        "kill.json says when the kill's recording began, where its window opens",
                    ),
                )
            )
        return out


# --- killTriggered ----------------------------------------------------------------------------


@dataclass
class Fired:
    """A ``fired`` line of arms.jsonl, and the moment its point names in the ledger.

    ``point`` is the point the line names, parsed (None: it names none, or
    none that parses: ``written`` is what it says); a line without a point
    is the seed's, counted from the ledger's start (``legacy``).  For an
    ``after:`` point, :meth:`Arming.count` finds its N-th record after
    ``fromSeq`` while the ledger is read: ``moment`` (its seq) and
    ``moment_run`` (the run it names).
    """

    kill: Any
    run: Any
    written: Any = None
    from_seq: Any = None
    point: KillPoint | None = None
    legacy: bool = False
    moment: int | None = None
    moment_run: Any = None
    at: float | None = None  # when the line says it fired
    seen_late: str | None = None  # its moment's record was seen after it fired: why that cannot be
    where: Where = field(default_factory=lambda: Where(EvidenceFolder.ARMS, 0))  # the fired line
    moment_line: int = 0  # the ledger line of its moment
    seen_late_proof: Proof | None = None  # the fired line, and the timeline line that saw its moment later
    _counter: ArmedPoint | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.written is None:
            self.legacy, self.point, self.from_seq = True, SEED, 0
        else:
            self.point = point_text(self.written)
        if self.point is not None and self.point.on_record and is_int(self.from_seq) and self.from_seq >= 0:
            self._counter = ArmedPoint(self.point)
            self._counter.begin(self.from_seq, 0.0)

    def count(self, kind: str, purpose: Any, seq: int, run: Any, line: int = 0) -> None:
        counter = self._counter
        if counter is None or self.moment is not None:
            return
        if counter.count(kind, purpose if isinstance(purpose, str) else None, seq=seq):
            self.moment, self.moment_run, self.moment_line = seq, run, line


@dataclass
class Arming:
    """What arms.jsonl says: each ``fired`` line, the ``missed`` ones, the points still armed at its end."""

    fired: list[Fired] = field(default_factory=list)  # the first few
    missed: list[tuple[Any, Any, Any]] = field(default_factory=list)  # (run, detail, point), the first few
    pending: list[Any] = field(default_factory=list)  # the points armed at the end, as written (None: the seed's)
    problem: str | None = None  # arms.jsonl could not be read
    bad_lines: int = 0
    queued: int = 0  # points armed and not yet fired or missed (the kept ones are ``pending``)
    unarmed: int = 0  # fired or missed lines with no point armed
    faults: list[str] = field(default_factory=list)  # lines that break the story of arming (the first few)
    fault_count: int = 0
    last_at: float | None = None  # the time of the last line read
    last_where: Where | None = None  # the line that says it
    kills_fired: set[Any] = field(default_factory=set)  # the kill numbers fired so far (as written)
    proofs: list[Proof] = field(default_factory=list)  # of the faults, those stated with their lines
    bad_at: Where | None = None  # the first line that is not an arming event
    bad_why: str = ""  # what it is instead
    unarmed_at: Where | None = None  # the first fired or missed line with no point armed
    taken: set[Row] = field(default_factory=set)  # the rows of machines.POINT its lines and its end took
    left: set[str] = field(default_factory=set)  # the states points left the queue in (fired, missed, disarmed)

    def take(self, event: str) -> None:
        """An arm line (a new point, armed) or a disarm (every point queued, disarmed) through
        :data:`~.machines.POINT`."""
        state = "unarmed" if event == ARM else "armed"
        if event == DISARM and not self.queued:
            return  # nothing armed to disarm
        row = POINT.take(state, event)
        self.taken.add(row)
        if event == DISARM:
            self.left.add(row.next)

    def step(self, event: str) -> Row:
        """A fired or missed line through :data:`~.machines.POINT`: it takes the point armed first, or meets no point
        armed (a disarm or an arm is :meth:`take`'s own)."""
        row = POINT.take("armed" if self.queued else "unarmed", event)
        self.taken.add(row)
        if row.state == "armed":
            self.left.add(row.next)
        return row

    def end(self, finished: bool) -> Row | None:
        """The row the timeline's end takes for the points still armed (None: none is); the end meets every other
        point in the state it left the queue in (no point at all: "unarmed"), and says nothing of them."""
        event = FINISHED if finished else PAUSED
        for state in self.left or ({"unarmed"} if not self.pending else set()):
            row = POINT.take(state, event)
            assert row.breaks is None  # only a point still armed says anything at the end
            self.taken.add(row)
        if not self.pending:
            return None
        armed = POINT.take("armed", event)
        self.taken.add(armed)
        return armed

    def fault(self, reason: str, why: Proof | None = None) -> None:
        self.fault_count += 1
        if len(self.faults) < 3:
            self.faults.append(reason)
        if why is not None and len(self.proofs) < PROOFS_KEPT:
            self.proofs.append(why)

    @property
    def armed_at_end(self) -> bool:
        return bool(self.pending)

    def is_quiet(self) -> bool:
        """Nothing happened that killTriggered judges: no kill fired or missed, not armed at the end, all read."""
        return not (
            self.fired or self.missed or self.pending or self.problem or self.bad_lines or self.unarmed or self.faults
        )

    def count(self, kind: str, purpose: Any, seq: int, run: Any, line: int = 0) -> None:
        """A ledger record, read in order (at ``line``): the moment of a fired ``after:`` point?"""
        for f in self.fired:
            f.count(kind, purpose, seq, run, line)
