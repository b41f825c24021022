"""Reading an evidence folder into the facts the checks are given.

Every file is read through :mod:`studymon.engine.io.safefile` (inside ``OUT``
only, regular files only, capped in size, never echoed), and a file that
cannot be used becomes the reason of the checks that need it; nothing here
raises on bad evidence.

The ledger is streamed once, a chunk at a time, into the accounts, the
contract watch and the comparison with each kill's ``ledger-at-kill.json``
(itself streamed), so memory holds what the checks need, not the ledger.
The order of reading follows what each step needs: the kill folders' small
files first (the ledger comparison needs them), the ledger, then the
launches and the lifecycle events (which need the accounts).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.automata import Proof, Where, proof
from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from studymon.engine.contract.killpoint import SEED, point_text
from studymon.engine.contract.ledger import LedgerIssue, LedgerParser, Record
from studymon.engine.contract.rules import KNOWN_KINDS, RuleTally, is_int, plural, valid_id
from studymon.engine.contract.spec import DEFAULT_PREFIX, EXPECT_ENDS
from studymon.engine.contract.targets import CHARGED, UNRECORDED
from studymon.engine.evidence.records import (
    WRITTEN_MS,
    ArmLine,
    parse_arm,
    parse_kill,
    parse_research,
    parse_window,
    same_json,
    time_epoch,
)
from studymon.engine.io import safefile
from studymon.engine.io.safefile import JsonArray, JsonlFile, Unreadable, type_name
from studymon.engine.judge.controllers import replay_controllers
from studymon.engine.judge.events import EventTally, TargetTally, planned_after
from studymon.engine.judge.facts import (
    Arming,
    Fired,
    KillEvidence,
    Launches,
    LedgerFacts,
    StudyFacts,
)
from studymon.engine.judge.machines import ARM, DISARM, FIRE, MISS, RECORD_LAG
from studymon.engine.judge.study import UNKNOWN_END, fault_text, point_said
from studymon.engine.judge.text import run_text, time_text
from studymon.engine.judge.timeline import (
    BAD_LINES,
    KEEPER_SLACK,
    ORDER_ROUNDING,
    SEEN_SLACK,
    Stream,
    TimelineLine,
    seen_events,
)
from studymon.engine.judge.twice import kill_moment
from studymon.engine.judge.verdict import PROOFS_KEPT, SHOWN

# A ledger with this many issues is garbage: reading stops, so a file of a
# billion empty lines costs seconds, not an hour.
ISSUE_LIMIT = 10_000
# arms.jsonl: the fired lines judged one by one, and the points kept as armed at its end.
FIRED_KEPT = 16
ARMED_KEPT = 64
ISSUES_KEPT = 1000  # in accounts.json
# The most records after a kill whose seen times are held (8 bytes each): as many as the ledger's
# cap can hold (a record is at least ~40 bytes), so that one timeline line with a huge seq cannot
# make the judge hold hundreds of MiB for records that no ledger within its cap has.
MAX_SEEN = EvidenceFolder.CAPS[EvidenceFolder.LEDGER] // 40
# A seq whose first timeline line saw another record than the ledger holds: when that record was seen is not known.
VOID = -1.0


def _lines(out: Path, rel: str, cap: int) -> Iterator[safefile.Line]:
    with JsonlFile(out, rel, cap) as f:
        yield from f.lines()


class ReadingStopped(Unreadable):
    """A file read in part: more than :data:`BAD_LINES` of its lines were not its records.  Those lines are the
    fault (the checks a line that is not a record fails), not the file's being unreadable."""


def _stop_past(rel: str, bad: int, what: str = "lines that are not its records") -> None:
    """Stop reading ``rel`` once more than :data:`BAD_LINES` of its lines were not its records (or ``what``)."""
    if bad > BAD_LINES:
        raise ReadingStopped(rel, f"more than {BAD_LINES} {what}: reading stopped")


def last_ending(out: Path) -> tuple[dict[str, Any] | None, bool]:
    """The final controller's end (code and signal), and whether it has ended."""
    launches = replay_controllers(Path(out), [])
    return launches.ending_json(), launches.ended


def _final_proof(launches: Launches, where: Where, says: str, then: str) -> Proof:
    """A proof that holds a file against launches.jsonl's final end."""
    end = launches.final_end_where or Where(EvidenceFolder.LAUNCHES, 0)
    return proof(where, says, then, (end, "the final controller's end"))


def _unreadable(rel: str, exc: Unreadable) -> Proof:
    return proof(Where(rel, 0), exc.reason, "it is not read as the console writes it, so what it holds is not known")


def _said(line: TimelineLine) -> str:
    return f"{line.kind if line.kind in KNOWN_KINDS else 'a record'} at {time_text(line.at)}"


def read_outcome(out: Path, launches: Launches) -> None:
    """outcome.json, written once the final controller exited 0: the same end as launches.jsonl's (§6.9)."""
    if not safefile.exists(out, EvidenceFolder.OUTCOME):
        if launches.finished:
            # The console writes it as the final controller exits 0: without it that end is said once, not twice.
            launches.bad(
                f"{EvidenceFolder.OUTCOME}: missing, and launches.jsonl says the study finished",
                _final_proof(launches, Where(EvidenceFolder.OUTCOME, 0), "missing", "the end is held in both files"),
            )
        return
    launches.outcome_written = True
    try:
        outcome = safefile.read_object(out, EvidenceFolder.OUTCOME, EvidenceFolder.CAPS[EvidenceFolder.OUTCOME])
    except Unreadable as exc:
        launches.bad(str(exc), _unreadable(EvidenceFolder.OUTCOME, exc))
        return
    said = (outcome.get("code"), outcome.get("signal"))
    end = launches.final_end
    if said != (0, None) or not is_int(said[0]):
        launches.bad(
            f"{EvidenceFolder.OUTCOME} says the final controller did not exit 0: it is written only when it did",
            proof(
                Where(EvidenceFolder.OUTCOME, 0),
                "the final controller did not exit 0",
                f"{EvidenceFolder.OUTCOME} is written only once the final controller exited 0",
            ),
        )
    elif end is None or (end.code, end.signal) != (0, None):
        how = "has not ended" if end is None else "did not exit 0"
        launches.bad(
            f"{EvidenceFolder.OUTCOME} says the study finished, but launches.jsonl's final controller {how}",
            _final_proof(
                launches,
                Where(EvidenceFolder.OUTCOME, 0),
                "the final controller exited 0",
                f"launches.jsonl's final controller {how}",
            ),
        )


# machine.jsonl's lines: light samples and the heavy snapshots taken at a controller's events.
MACHINE_LABELS = frozenset({"sample", "start", "resume", "after-kill", "end"})


def read_machine(out: Path, launches: Launches) -> None:
    """machine.jsonl, where it is, read as the console writes it: each line a sample or a snapshot (§6.8 puts its
    snapshots on the timeline of the controllers); a line that is neither fails exitedCleanly."""
    if not safefile.exists(out, EvidenceFolder.MACHINE):
        if launches.first is not None:
            # The console snapshots the machine as it starts a controller: a folder with a start and without
            # machine.jsonl lost it.
            launches.bad(
                f"{EvidenceFolder.MACHINE}: missing, though a controller started (launches.jsonl)",
                proof(
                    Where(EvidenceFolder.MACHINE, 0),
                    "missing",
                    "the console snapshots the machine as it starts a controller, and one started",
                    (launches.first_where or Where(EvidenceFolder.LAUNCHES, 0), "a controller starts"),
                ),
            )
        return
    bad = 0
    # In time order within the samples and within the snapshots, not across them: a heavy snapshot is dated when
    # its event came and written once taken, after samples dated later (tens of milliseconds, more when busy).
    last: dict[bool, tuple[float, int]] = {}
    try:
        for line in _lines(out, EvidenceFolder.MACHINE, EvidenceFolder.CAPS[EvidenceFolder.MACHINE]):
            if line.problem == safefile.TORN:
                continue  # a console that died writing its last line
            why = line.problem if line.problem is not None else _machine_line(line.value)
            if why is None:
                sample = line.value["label"] == "sample"
                at = time_epoch(line.value["at"])
                before = last.get(sample)
                if at is not None and before is not None and at < before[0] - KEEPER_SLACK - ORDER_ROUNDING:
                    kind = "sample" if sample else "snapshot"
                    why = f"a {kind} earlier than the {kind} of line {before[1]}: each is written in time order"
                elif at is not None:
                    last[sample] = (at, line.number)
            if why is not None:
                bad += 1
                launches.bad(
                    f"{EvidenceFolder.MACHINE} line {line.number}: {why}",
                    proof(
                        Where(EvidenceFolder.MACHINE, line.number), "a line", f"it is not one the console writes: {why}"
                    ),
                )
                _stop_past(EvidenceFolder.MACHINE, bad)
    except Unreadable as exc:
        launches.bad(str(exc), _unreadable(EvidenceFolder.MACHINE, exc))


def _machine_line(value: Any) -> str | None:
    if not isinstance(value, dict):
        return f"{type_name(value)}, not a sample"
    if value.get("label") not in MACHINE_LABELS:
        return "a line of no label the console writes"
    if time_epoch(value.get("at")) is None:
        return "a line whose at is not a time"
    if value["label"] != "sample" and not all(
        isinstance(items, list) and all(isinstance(item, dict) for item in items)
        for items in (value.get("processes"), value.get("containers"))
    ):
        return "a snapshot of the wrong shape (its processes and containers are lists of objects)"
    return None


def read_study(out: Path) -> StudyFacts:
    try:
        research = safefile.read_object(out, EvidenceFolder.RESEARCH, EvidenceFolder.CAPS[EvidenceFolder.RESEARCH])
    except Unreadable as exc:
        return StudyFacts(None, None, str(exc), UNKNOWN_END)
    r = parse_research(research, DEFAULT_PREFIX, EXPECT_ENDS)
    return StudyFacts(r.study, r.container_prefix, "; ".join(r.problems) or None, r.expect_end)


def read_kills(folder: EvidenceFolder, study: StudyFacts) -> list[KillEvidence]:
    """The first :data:`KillFolder.LIMIT` kill folders, in order, as long as all of them together keep
    within :data:`KillFolder.BUDGET` and their recordings within :data:`KillFolder.RECORDINGS_BUDGET`.

    The folders past the budget are not read: each stands for its kill, with
    every file unusable, so the kill's checks fail saying why.  Past the
    limit, one stands for them all, so that the report follows the study's
    kills, not the number of folders an adversary made.
    """
    kills: list[KillEvidence] = []
    spent = recorded = 0
    for kill in folder.kills(KillFolder.LIMIT + 1):
        size, recordings = kill.size()
        spent += size
        recorded += recordings
        over = None
        if len(kills) == KillFolder.LIMIT:
            over = (
                f"kills/ holds more than {KillFolder.LIMIT} kill folders, more than a study's kills and crashes: "
                f"kills/{kill.number}/ and those after it not read"
            )
        elif spent > KillFolder.BUDGET:
            over = (
                f"kills/ holds more than {KillFolder.BUDGET >> 20} MiB up to kills/{kill.number}/, "
                "more than a study's kills could: not read"
            )
        elif recorded > KillFolder.RECORDINGS_BUDGET:
            over = (
                f"kills/ holds more than {KillFolder.RECORDINGS_BUDGET >> 20} MiB of event recordings up to "
                f"kills/{kill.number}/, more than a study's kills could: not read"
            )
        if over is None:
            kills.append(read_kill(kill, study))
            continue
        ev = KillEvidence(kill.number)
        ev.problems = dict.fromkeys(KillFolder.FILES, over)
        kills.append(ev)
    return kills


def read_kill(folder: KillFolder, study: StudyFacts) -> KillEvidence:
    """The kill folder's small files (kill.json, snapshots, window); the streams come later."""
    ev = KillEvidence(folder.number)
    out = folder.out
    for file in KillFolder.FILES:
        if not safefile.exists(out, folder.rel(file)):
            ev.missing.add(file)
    if KillFolder.KILL not in ev.missing:
        try:
            obj = safefile.read_object(out, folder.rel(KillFolder.KILL), KillFolder.CAPS[KillFolder.KILL])
            ev.kill = parse_kill(obj, study.stem)
            ev.kill.problems.extend(kill_moment(obj))
        except Unreadable as exc:
            ev.problems[KillFolder.KILL] = f"{KillFolder.KILL}: {exc.reason}"
    for file in KillFolder.SNAPSHOTS:
        if file in ev.missing:
            continue
        try:
            ev.snapshots[file] = safefile.read_object(out, folder.rel(file), KillFolder.CAPS[file])
        except Unreadable as exc:
            ev.problems[file] = f"{file}: {exc.reason}"
    if KillFolder.WINDOW not in ev.missing:
        try:
            window = safefile.read_object(out, folder.rel(KillFolder.WINDOW), KillFolder.CAPS[KillFolder.WINDOW])
            ev.window, problem = parse_window(window)
        except Unreadable as exc:
            problem = f"{KillFolder.WINDOW}: {exc.reason}"
        if problem is not None:
            ev.problems[KillFolder.WINDOW] = problem
    return ev


class _AtKill:
    """Compares a kill's ledger-at-kill.json with the ledger as it streams by."""

    def __init__(self, ev: KillEvidence, array: JsonArray) -> None:
        self.ev = ev
        self.array = array
        self.elements = array.elements()
        self.index = 0
        self.last_seq = 0
        self.done = False

    def _fail(self, why: str, line: int = 0) -> None:
        self.ev.at_kill, self.ev.at_kill_line = why, line
        self.done = True

    def _unreadable(self, exc: Unreadable) -> None:
        """Not read as the console writes it: the folder is not complete (killTriggered asks that), not only unequal."""
        why = f"{KillFolder.AT_KILL}: {exc.reason}"
        self.ev.problems.setdefault(KillFolder.AT_KILL, why)
        if self.ev.at_kill is None:
            self._fail(why)
        self.done = True

    def _read_to_the_end(self) -> None:
        """The elements after the first difference, read for their shape alone: whether the file is readable as the
        console writes it must not depend on where it first differs from the ledger."""
        try:
            for _ in self.elements:
                pass
        except Unreadable as exc:
            self._unreadable(exc)

    def add(self, record: Record) -> None:
        if self.done:
            return
        try:
            element = next(self.elements)
        except StopIteration:
            self.done = True
            return
        except Unreadable as exc:
            self._unreadable(exc)
            return
        self.index += 1
        if not same_json(element, record.as_json()):
            self._fail(
                f"{KillFolder.AT_KILL} differs from the ledger at record {self.index} (seq {record.seq})", record.line
            )
        else:
            self.last_seq = record.seq

    def finish(self, ledger_ok: bool) -> None:
        """Judge what is left; with no usable ledger there is nothing to compare with (the checks say so)."""
        try:
            if not ledger_ok:
                self._read_to_the_end()
                return
            if not self.done:
                try:
                    next(self.elements)
                    self._fail(f"{KillFolder.AT_KILL} holds more records than the ledger")
                except StopIteration:
                    pass
                except Unreadable as exc:
                    self._unreadable(exc)
            self._read_to_the_end()
            k = self.ev.kill
            if (
                self.ev.at_kill is None
                and k is not None
                and k.before_kill_seq is not None
                and self.last_seq != k.before_kill_seq
            ):
                self.ev.at_kill = (
                    f"{KillFolder.AT_KILL} ends at seq {self.last_seq}, not at beforeKillSeq {k.before_kill_seq}"
                )
        finally:
            self.array.close()


class _Seen:
    """timeline.jsonl beside the ledger: every record as a console saw it, and when it first saw those after a kill.

    Two facts are held twice (§6.9): each record's kind and time, in the
    ledger and in the line a console wrote when it saw that record; a ledger
    whose record differs from what was seen was changed after it was seen
    (``ledgerWellFormed``), and so is one that no longer holds a record seen.
    The seen lines' ``(kind, at)`` are kept as a hash per seq (8 bytes a
    record, up to what a ledger within its cap can hold).

    Every record after a kill's ``beforeKillSeq`` was written by a controller
    started after the kill, so it was seen after that start (§6.3): the kill's
    replayed story (:mod:`.controllers`) says whether a record seen at a time
    was (:data:`~.machines.KILL_MACHINE`'s ``seen`` rows); one never seen
    was written by something that outlived the kill too.  The seen times are
    held in an array from the lowest such seq, not as objects.
    """

    UNSEEN = 0  # no line for this seq (a hash of 0 is taken as 1)

    def __init__(
        self, out: Path, kills: list[KillEvidence], facts: LedgerFacts, launches: Launches | None = None
    ) -> None:
        # (kill, its beforeKillSeq, its story).  A launches.jsonl that cannot be read whole tells no controller's
        # start for sure: the records after a kill are not held to one (every killDelivered says why already).
        # A kill whose time kill.json does not say has no place on the timeline: what came after it cannot be told
        # from what came before (killEvidence says why).
        told = launches is None or (launches.problem is None and launches.fault is None)
        self.kills = [
            (ev, ev.kill.before_kill_seq, ev.story)
            for ev in kills
            if told
            and ev.kill is not None
            and ev.kill.before_kill_seq is not None
            and ev.kill.at_epoch is not None
            and ev.story is not None
        ]
        self.base = min((seq for _, seq, _ in self.kills), default=None)
        self.seen = array("d")
        self.said = array("q")  # seq - 1 -> hash of (kind, at) as first seen
        self.first_seen = array("d")  # seq - 1 -> when a console first saw it (NaN: never)
        self.line_of = array("l")  # seq - 1 -> the timeline.jsonl line that first saw it (0: none)
        self.facts = facts
        self.launches = launches
        self.problem: str | None = None
        self.whole = False  # every line of the timeline was read, each a record seen (out of order or not)
        self.last_seq = 0
        self.far = 0  # the highest seq seen past those held
        self.far_line = 0  # the timeline.jsonl line that saw it
        self.missing = not safefile.exists(out, EvidenceFolder.TIMELINE)
        # A missing timeline is every kill's fault (killEvidence), whether or not the records after it are held to
        # a resumed controller (a launches.jsonl not read whole holds them to none).
        if not self.missing or kills:
            self._read(out)

    @staticmethod
    def _hash(kind: str, at: str) -> int:
        return hash((kind, at)) or 1

    def _read(self, out: Path) -> None:
        nan = float("nan")
        base = self.base
        stream = Stream(EvidenceFolder.TIMELINE)
        launches = self.launches
        first = launches.first.at if launches is not None and launches.first is not None else None
        # A launches.jsonl read whole tells when the first controller started (None: it cannot).  One with no start
        # tells none: that is its own fault (exitedCleanly), not the timeline's.
        told = launches if launches is not None and launches.problem is None and launches.fault is None else None
        for e in seen_events(out, stream, 0):
            line: TimelineLine = e.fact
            if told is not None and first is not None and e.time < first:
                # A record seen before any controller started: the timeline's copy of when it was seen disagrees with
                # launches.jsonl (timeline.jsonl's fault, ledgerWellFormed's; who wrote the record is read by its own
                # at, docs/contract.md "Records are written while a controller runs").
                self._differs(
                    f"{e.where}: seq {line.seq} was seen before any controller started",
                    proof(
                        e.where,
                        f"seq {line.seq} is seen",
                        "no controller had started then, so none wrote it",
                        (told.first_where or Where(EvidenceFolder.LAUNCHES, 0), "the first controller starts"),
                    ),
                )
            i = line.seq - 1
            if i >= MAX_SEEN:
                # Past the seqs whose kind and time are held (a ledger within its cap holds fewer records, but
                # may skip seqs): only whether the ledger reaches it is judged.
                if line.seq > self.far:
                    self.far, self.far_line = line.seq, e.where.line
            elif i >= len(self.said):
                self.said.extend([self.UNSEEN] * (i + 1 - len(self.said)))
                self.first_seen.extend([nan] * (i + 1 - len(self.first_seen)))
                self.line_of.extend([0] * (i + 1 - len(self.line_of)))
            said = self._hash(line.kind, line.at)
            if i >= MAX_SEEN:
                pass
            elif self.said[i] == self.UNSEEN:
                self.said[i] = said
                self.first_seen[i] = line.seen_at
                self.line_of[i] = e.where.line
            elif self.said[i] != said:
                self._differs(
                    f"{e.where} saw seq {line.seq} as another record than the line before it did",
                    proof(
                        e.where,
                        f"seq {line.seq} seen as {_said(line)}",
                        "a record is written once, as one record",
                        (Where(EvidenceFolder.TIMELINE, self.line_of[i]), f"seq {line.seq} seen as another record"),
                    ),
                )
            else:
                # A console writes a line for each record once, as it first sees it.
                self._differs(
                    f"{e.where}: seq {line.seq} seen twice",
                    proof(
                        e.where,
                        f"seq {line.seq} seen",
                        "a console writes a line for a record once, as it first sees it",
                        (Where(EvidenceFolder.TIMELINE, self.line_of[i]), f"seq {line.seq} seen before"),
                    ),
                )
            if base is None or line.seq <= base or line.seq - base > MAX_SEEN:
                continue
            j = line.seq - base - 1
            if j >= len(self.seen):
                self.seen.extend([nan] * (j + 1 - len(self.seen)))
            if math.isnan(self.seen[j]):
                self.seen[j] = e.time  # the first time a console saw it, as the timeline orders it
        # The kills read the timeline for when records were seen: a file out of order, or with a line that is
        # not a record seen, cannot tell it (docs/contract.md, "Which check a file fails").
        self.problem = stream.problem or stream.disorder or (stream.bad[0] if stream.bad else None)
        self.whole = stream.problem is None and not stream.bad_count
        if stream.disorder is not None:
            self._differs(stream.disorder, stream.disorder_proof)
        # A line that is not a record seen is a copy of the ledger that cannot be compared (§6.9).
        for reason, where in zip(stream.bad, stream.bad_at, strict=True):
            self._differs(
                f"{reason}: not a record seen, so the ledger cannot be compared with it",
                proof(where, "a line", "it is not a record seen, so the ledger cannot be held to it"),
            )
        self.facts.seen_count += stream.bad_count - len(stream.bad)
        if stream.problem is not None and not self.missing:  # missing: said once the ledger is read (finish)
            self._differs(
                f"the ledger cannot be compared with what was seen: {stream.problem}",
                proof(Where(EvidenceFolder.TIMELINE, 0), stream.problem, "the ledger cannot be held to what was seen"),
            )

    def _differs(self, why: str, because: Proof | None = None) -> None:
        self.facts.seen_count += 1
        if len(self.facts.seen_differ) < SHOWN:
            self.facts.seen_differ.append(why)
        if because is not None and len(self.facts.seen_proofs) < PROOFS_KEPT:
            self.facts.seen_proofs.append(because)

    def add(self, r: Record) -> None:
        """Compare one record with the line it was seen as; judge it after the kills it follows."""
        self.last_seq = max(self.last_seq, r.seq)
        launches = self.launches
        if launches is not None and launches.problem is None and not launches.lives_cut:
            at = time_epoch(r.at)
            if at is not None and not launches.lived(at, RECORD_LAG):
                # §6.9: written while no controller ran (dated by its own at: a console may see it late).
                launches.unlived_count += 1
                if len(launches.unlived) < SHOWN:
                    launches.unlived.append(
                        f"{EvidenceFolder.LEDGER} line {r.line}: seq {r.seq} ({_kind(r)}) is dated {time_text(r.at)}, "
                        "in no controller's life (launches.jsonl): written while no controller ran"
                    )
                if len(launches.proofs) < PROOFS_KEPT:
                    launches.proofs.append(
                        proof(
                            Where(EvidenceFolder.LEDGER, r.line),
                            f"seq {r.seq} ({_kind(r)}) written at {time_text(r.at)}",
                            f"no controller of launches.jsonl ran then (within {RECORD_LAG:g} s), so none wrote it",
                        )
                    )
        i = r.seq - 1  # a seq below 1 is the ledger's fault (ledgerWellFormed), and was seen as no line
        if 0 <= i < len(self.said) and self.said[i] != self.UNSEEN and self.said[i] != self._hash(r.kind, r.at):
            self._differs(
                f"the ledger's seq {r.seq} ({_kind(r)}, line {r.line}) is not the record timeline.jsonl saw as "
                f"seq {r.seq}: the ledger was changed after it was seen",
                proof(
                    Where(EvidenceFolder.LEDGER, r.line),
                    f"seq {r.seq} is {_kind(r)} at {time_text(r.at)}",
                    "the ledger was changed after a console saw it",
                    (Where(EvidenceFolder.TIMELINE, self.line_of[i]), f"seq {r.seq} was seen as another record"),
                ),
            )
            # That line saw another record: it tells nothing of when (or whether) this one was seen.
            self.first_seen[i] = VOID
            return
        if self.base is None or r.seq <= self.base or not self.whole:
            # A timeline not read whole (missing, unreadable, a line that is not a record seen) cannot tell when a
            # record was seen, nor that it never was: ledgerWellFormed and every killEvidence say why.  One out of
            # order still tells it, line by line, by each line's own time.
            return
        i = r.seq - self.base - 1
        seen = self.seen[i] if i < len(self.seen) else float("nan")
        for ev, before, story in self.kills:
            if r.seq <= before:
                continue
            if math.isnan(seen):
                why = f"seq {r.seq} ({_kind(r)}) was never seen by a console"
            else:
                row = story.seen(seen)
                if row is None or row.breaks is None:
                    continue
                why = row.says.format(seq=r.seq, kind=_kind(r))
            if len(ev.unmanned) < 64:
                j = r.seq - 1
                seen_at = Where(EvidenceFolder.TIMELINE, self.line_of[j] if j < len(self.line_of) else 0)
                because = proof(
                    Where(EvidenceFolder.LEDGER, r.line),
                    f"seq {r.seq} ({_kind(r)}), after kill {ev.number}'s beforeKillSeq {before}",
                    "a record after a kill is written by a controller started after it, which a console watches",
                    (seen_at, why),
                )
                ev.unmanned.append((_run_of(r), r.kind, why, math.isnan(seen), because))
            ev.unmanned_count += 1

    def result_seen(self, ev: KillEvidence, acc: Accounts) -> None:
        """The window file's ``resultSeenEpoch`` of each target is when timeline.jsonl saw its ``resultSeq``, and an
        automatic kill's ``triggerSeenEpoch`` when it saw its ``triggerSeq`` (§6.9); and when the timeline saw each
        target's runResult, the record its die is held to (the ledger's, whatever the window file says)."""
        self._trigger_seen(ev)
        self._before_kill_seen(ev)
        window = ev.window
        if window is None or self.base is None:
            return
        for run, entry in window.results.items():
            seq, said = entry.get("resultSeq"), entry.get("resultSeenEpoch")
            acct = acc.runs.get(run)
            result = acct.results[0].seq if acct is not None and acct.results else None
            first = self._first(result - 1) if result is not None and result > 0 else math.nan
            # A timeline not read whole tells nothing of when a record was seen (as for the kill's own seqs).
            if self.whole and not math.isnan(first):
                ev.timeline_seen[run] = first  # the timeline's copy of when the target's result was seen
            if not is_int(seq) or said is None or seq <= self.base or self._void(seq - 1):
                continue
            i = seq - self.base - 1
            seen = self.seen[i] - SEEN_SLACK if i < len(self.seen) else float("nan")
            if math.isnan(seen):
                continue  # never seen: the target's own checks say so
            if abs(said - seen) > WRITTEN_MS + 1e-6:
                window.notes.append(
                    f"{KillFolder.WINDOW}: {run_text(run)}'s resultSeenEpoch is not when timeline.jsonl saw seq {seq}"
                )

    def _trigger_seen(self, ev: KillEvidence) -> None:
        k = ev.kill
        if k is None or k.trigger != "auto" or not k.trigger_seen or k.trigger_seq is None or not self.whole:
            return
        i = k.trigger_seq - 1
        first = self._first(i)
        # The console stamps both from one moment: the timeline's text to the millisecond, kill.json's epoch exact.
        if not math.isnan(first) and not first - 1e-6 <= k.trigger_seen < first + WRITTEN_MS + 1e-6:
            k.problems.append(
                f"{KillFolder.KILL}: triggerSeenEpoch is not when timeline.jsonl saw triggerSeq {k.trigger_seq}"
            )

    def _before_kill_seen(self, ev: KillEvidence) -> None:
        """``beforeKillSeq`` is the last record the console had seen as it froze the controller: timeline.jsonl saw
        it by the kill's ``at`` (§6.9: when a record was seen is held twice)."""
        k = ev.kill
        if k is None or k.before_kill_seq is None or k.at_epoch is None or not self.whole:
            return
        i = k.before_kill_seq - 1
        first = self._first(i)
        # Both stamped by the console to the millisecond: seen after the kill by more than that is seen after it.
        if not math.isnan(first) and first > k.at_epoch + SEEN_SLACK:
            k.problems.append(
                f"{KillFolder.KILL}: beforeKillSeq {k.before_kill_seq} was first seen after the kill "
                f"({EvidenceFolder.TIMELINE} line {self.line_of[i]})"
            )

    def fired_seen(self, arming: Arming) -> None:
        """A kill at an ``after:`` point fires once its record was seen (§7): never before timeline.jsonl saw it."""
        for f in arming.fired:
            i = f.moment - 1 if f.moment is not None else -1
            if f.at is None or math.isnan(self._first(i)):
                continue
            if f.at < self._first(i) - SEEN_SLACK:
                f.seen_late = (
                    f"{EvidenceFolder.ARMS}: kill {f.kill} fired before seq {f.moment} was seen (timeline.jsonl)"
                )
                f.seen_late_proof = proof(
                    f.where,
                    f"kill {f.kill} fires at seq {f.moment}'s record",
                    "a point fires once its record was seen (§7)",
                    (Where(EvidenceFolder.TIMELINE, self.line_of[i]), f"seq {f.moment} is first seen after that"),
                )

    def _first(self, i: int) -> float:
        """When a console first saw the record of seq ``i + 1``; NaN when never, or when the line that saw that seq
        saw another record (it tells nothing of this one)."""
        first = self.first_seen[i] if 0 <= i < len(self.first_seen) else math.nan
        return math.nan if first == VOID else first

    def _void(self, i: int) -> bool:
        """Whether the line that first saw seq ``i + 1`` saw another record than the ledger's."""
        return 0 <= i < len(self.first_seen) and self.first_seen[i] == VOID

    def seen_by(self, seq: int, when: float) -> bool:
        """Whether a console saw record ``seq`` by ``when`` (so it was written by then)."""
        first = self._first(seq - 1)
        return not math.isnan(first) and first <= when

    def maybe_seen_by(self, seq: int, when: float) -> bool:
        """:meth:`seen_by`, or not known: the line that saw that seq saw another record."""
        i = seq - 1
        return self.seen_by(seq, when) or self._void(i)

    def unclaimed_ends(self, launches: Launches, kills: list[KillEvidence], acc: Accounts) -> None:
        """§6.8: every controller end while runs were in flight is claimed by a kill folder (a kill of the console's,
        or the crash or stop it judged as one).  In flight at an end: started by a record a console saw by then,
        without a result seen by then; a console that was not watching saw neither, and nothing is asked of it."""
        claimed = {ev.kill.pid for ev in kills if ev.kill is not None}
        for pid, at, where in launches.unclean:
            if pid in claimed:
                continue
            flying = [
                a.run
                for a in acc.runs.values()
                if any(self.seen_by(r.seq, at) for r in a.starts)
                and not any(self.maybe_seen_by(r.seq, at) for r in a.results)
            ]
            if flying:
                names = ", ".join(run_text(run) for run in flying[:SHOWN]) + (
                    " and more" if len(flying) > SHOWN else ""
                )
                launches.bad(
                    f"{where}: pid {pid} ended with {names} in flight, and no kill folder claims that end",
                    Proof(
                        ((where, f"pid {pid} ends, not with exit 0, while {names} ran"),),
                        "every such end is claimed by a kill folder (§6.8), and none names this pid",
                    ),
                )

    def finish(self, ledger_ok: bool) -> None:
        """Records seen that the ledger, read to its end, no longer holds."""
        if not ledger_ok:
            return
        if self.missing and self.last_seq > 0:
            self._differs(
                f"{EvidenceFolder.TIMELINE}: missing, so no record of the ledger can be held to what was seen",
                proof(
                    Where(EvidenceFolder.TIMELINE, 0),
                    "missing",
                    "a console writes a line for every record it sees, and the ledger has records",
                    (Where(EvidenceFolder.LEDGER, 1), "a record"),
                ),
            )
        past = [i for i in range(self.last_seq, len(self.said)) if self.said[i] != self.UNSEEN]
        gone = len(past) + (self.far > self.last_seq)
        if gone:
            where = Where(EvidenceFolder.TIMELINE, self.line_of[past[0]] if past else self.far_line)
            self._differs(
                f"timeline.jsonl saw {plural(gone, 'record')} past the ledger's last (seq {self.last_seq}): "
                "the ledger lost records after they were seen",
                proof(
                    where,
                    "a record seen past the ledger's last",
                    "the ledger lost records after they were seen",
                    (Where(EvidenceFolder.LEDGER, 0), f"its last record is seq {self.last_seq}"),
                ),
            )


def _kind(r: Record) -> str:
    return r.kind if r.kind in KNOWN_KINDS else "a record"


def _run_of(r: Record) -> str | None:
    run = r.content.get("run")
    return run if valid_id(run) else None


def read_ledger(
    out: Path,
    study: StudyFacts,
    kills: list[KillEvidence],
    arming: Arming | None = None,
    launches: Launches | None = None,
) -> tuple[Accounts, RuleTally, LedgerFacts, list[LedgerIssue]]:
    """The ledger read once, in order: the accounts, the contract's rules, the timeline's seen times, each kill's
    ledger-at-kill compared, and the moments of the fired ``after:`` points (``arming``)."""
    acc = Accounts(trim=True)
    contract = RuleTally(study.container_prefix, study.id)
    facts = LedgerFacts()
    kept: list[LedgerIssue] = []
    comparers: list[_AtKill] = []
    for ev in kills:
        # Missing, or a folder past the kills' budget (not read: its reason stands for every file).
        if KillFolder.AT_KILL in ev.missing or KillFolder.AT_KILL in ev.problems:
            continue
        try:
            at_kill = KillFolder(out, ev.number).rel(KillFolder.AT_KILL)
            comparers.append(_AtKill(ev, JsonArray(out, at_kill, KillFolder.CAPS[KillFolder.AT_KILL])))
        except Unreadable as exc:
            ev.problems[KillFolder.AT_KILL] = f"{KillFolder.AT_KILL}: {exc.reason}"
    parser = LedgerParser(strict=True)
    counting = arming is not None and bool(arming.fired)
    seen = _Seen(out, kills, facts, launches)
    cuts: dict[int, list[KillEvidence]] = {}  # beforeKillSeq -> the kills whose line of it is not found yet
    for ev in kills:
        ev.timeline_problem = seen.problem
        if ev.kill is not None and ev.kill.before_kill_seq is not None:
            cuts.setdefault(ev.kill.before_kill_seq, []).append(ev)

    def note(issues: list[LedgerIssue]) -> None:
        facts.issue_count += len(issues)
        room = ISSUES_KEPT - len(kept)
        if room > 0:
            kept.extend(issues[:room])

    facts.absent = not safefile.exists(out, EvidenceFolder.LEDGER)
    chunks = safefile.ledger_chunks(out, EvidenceFolder.LEDGER, EvidenceFolder.CAPS[EvidenceFolder.LEDGER])
    try:
        for chunk in chunks:
            records, issues = parser.feed(chunk)
            for line, seq in parser.nonfinite:  # before the records: a line's breaks count once
                contract.nonfinite(line, seq)
            parser.nonfinite.clear()
            for r in records:
                acc.add(r)
                contract.add(r)
                seen.add(r)
                for c in comparers:
                    c.add(r)
                if r.seq in cuts:
                    for ev in cuts.pop(r.seq):
                        ev.cut_line = r.line
                if counting:
                    run = r.content.get("run")
                    acct = acc.runs.get(run) if isinstance(run, str) else None
                    arming.count(r.kind, acct.purpose if acct is not None else None, r.seq, run, r.line)  # type: ignore[union-attr]
            note(issues)
            if facts.issue_count > ISSUE_LIMIT:
                facts.problem = f"reading stopped after {facts.issue_count} issues"
                break
        else:
            note(parser.finish())
    except Unreadable as exc:
        facts.problem = str(exc)
    finally:
        chunks.close()
        for c in comparers:
            c.finish(facts.problem is None)
        seen.finish(facts.problem is None)
        for ev in kills:
            seen.result_seen(ev, acc)
        if arming is not None and facts.problem is None:
            seen.fired_seen(arming)
        if launches is not None and facts.problem is None and launches.problem is None:
            seen.unclaimed_ends(launches, kills, acc)
    facts.records = acc.count
    facts.last_seq = acc.last_seq
    facts.issues = kept
    return acc, contract, facts, kept


def read_ledger_watch(out: Path, facts: LedgerFacts) -> None:
    """ledger-watch.jsonl: every line is a change of the ledger seen live."""
    if not safefile.exists(out, EvidenceFolder.LEDGER_WATCH):
        return
    try:
        for line in _lines(out, EvidenceFolder.LEDGER_WATCH, EvidenceFolder.CAPS[EvidenceFolder.LEDGER_WATCH]):
            facts.fault_count += 1
            _stop_past(EvidenceFolder.LEDGER_WATCH, facts.fault_count, "changes of the ledger seen while watched")
            if len(facts.faults) < SHOWN:
                facts.faults.append(
                    fault_text(line.value)
                    if line.problem is None
                    else f"{EvidenceFolder.LEDGER_WATCH} line {line.number}: {line.problem}"
                )
    except Unreadable as exc:
        facts.watch_problem = str(exc)


def _same_point(a: Any, b: Any) -> bool:
    """Whether two lines name one point (a line without one names the seed's, §7)."""
    pa = SEED if a is None else point_text(a)
    pb = SEED if b is None else point_text(b)
    return a == b if pa is None or pb is None else pa == pb


def take_arm(arming: Arming, arm: ArmLine, where: str | Where = EvidenceFolder.ARMS) -> None:
    """One arms.jsonl line, in order: a point armed (queued), all disarmed, or the first point fired or missed."""
    at = where if isinstance(where, Where) else Where(EvidenceFolder.ARMS, 0)
    said = f"{arm.event}" + (f" at {point_said(arm.point)}" if arm.event in ("arm", "fired", "missed") else "")
    if arming.last_at is not None and arm.at < arming.last_at - KEEPER_SLACK - ORDER_ROUNDING:
        arming.fault(
            f"{where} is earlier than the line before it: {EvidenceFolder.ARMS} is appended in time order",
            proof(
                at,
                f"{said}, dated earlier than a line before it",
                f"{EvidenceFolder.ARMS} is appended in time order",
                (arming.last_where or Where(EvidenceFolder.ARMS, 0), "the latest line before it"),
            ),
        )
    if arming.last_at is None or arm.at >= arming.last_at:
        arming.last_at, arming.last_where = arm.at, at
    if arm.event in ("fired", "missed") and arming.pending and not _same_point(arm.point, arming.pending[0]):
        # §7: the points are taken in the order they were armed.
        arming.fault(
            f"{where}: {arm.event} at {point_said(arm.point)}, but the point armed first is "
            f"{point_said(arming.pending[0])}",
            proof(
                at,
                said,
                f"the points are taken in the order they were armed (§7), and the first is "
                f"{point_said(arming.pending[0])}",
            ),
        )
    if arm.event == "fired" and is_int(arm.kill):
        if arm.kill in arming.kills_fired:
            first = next((f.where for f in arming.fired if f.kill == arm.kill), Where(EvidenceFolder.ARMS, 0))
            arming.fault(
                f"{where}: kill {arm.kill} fired twice",
                proof(at, f"kill {arm.kill} fired", "a kill fires once", (first, f"kill {arm.kill} fired")),
            )
        elif len(arming.kills_fired) < ARMED_KEPT:
            arming.kills_fired.add(arm.kill)
    # The line through the point machine (machines.POINT): a point armed joins the queue; a disarm takes every point
    # queued; a fired or missed line takes the point armed first (§7: taken in order), or meets an empty queue.
    if arm.event == "arm":
        arming.take(ARM)
        arming.queued += 1
        if len(arming.pending) < ARMED_KEPT:
            arming.pending.append(arm.point)
        return
    if arm.event == "disarm":
        arming.take(DISARM)
        arming.pending.clear()
        arming.queued = 0
        return
    row = arming.step(arm.event)
    if row.breaks is not None and not row.unknown:
        arming.unarmed += 1
        if arming.unarmed_at is None:
            arming.unarmed_at = at
    if arming.queued:
        arming.queued -= 1
    if arming.pending:
        arming.pending.pop(0)
    # The line is kept all the same: a kill fired with no point armed is still judged (its folder, its moment).
    if arm.event == FIRE and len(arming.fired) < FIRED_KEPT:
        arming.fired.append(Fired(arm.kill, arm.run, arm.point, arm.from_seq, at=arm.at, where=at))
    elif arm.event == MISS and len(arming.missed) < SHOWN:
        arming.missed.append((arm.run, arm.detail, arm.point))


def read_arms(out: Path) -> Arming | None:
    if not safefile.exists(out, EvidenceFolder.ARMS):
        return None
    arming = Arming()
    try:
        for line in _lines(out, EvidenceFolder.ARMS, EvidenceFolder.CAPS[EvidenceFolder.ARMS]):
            if line.problem == safefile.TORN:
                continue  # a console that died writing its last line
            arm = parse_arm(line.value) if line.problem is None else line.problem
            where = Where(EvidenceFolder.ARMS, line.number)
            if isinstance(arm, str):
                arming.bad_lines += 1
                if arming.bad_at is None:
                    arming.bad_at, arming.bad_why = where, arm
                _stop_past(EvidenceFolder.ARMS, arming.bad_lines)
                continue
            take_arm(arming, arm, where)
    except Unreadable as exc:
        arming.problem = str(exc)
    return arming


def _unstamped(value: Any) -> str | None:
    """Why a line of the live recording is not one the console wrote: every event it records live has its
    ``seenAt`` (and ``readBack``, where written, is a boolean); a gap line has neither."""
    if not isinstance(value, dict) or "gap" in value:
        return None  # the tally says what is wrong with it, if anything
    if time_epoch(value.get("seenAt")) is None or not isinstance(value.get("readBack", False), bool):
        return "a live event without its seenAt (a time), or with a readBack that is not a boolean"
    return None


def read_events(out: Path, ev: KillEvidence, acc: Accounts, study: StudyFacts) -> None:
    """Tally the kill's lifecycle events: the live recording and the read-back, as one."""
    k = ev.kill
    if k is None:
        return
    window = ev.window
    since = ev.opens_ns  # it ends where the window file says
    if since is None or (window is None and KillFolder.WINDOW not in ev.missing):
        return  # no window start known (or the window file is unusable): the checks say so
    allowed, unstarted = planned_after(acc, study.stem, k.before_kill_seq)
    targets = []
    for t in ev.targets:
        name = study.container(t.run)
        if name is None:
            continue
        ids = set()
        for file in KillFolder.SNAPSHOTS:
            entry = ev.snapshots.get(file, {}).get(name)
            if isinstance(entry, dict) and isinstance(entry.get("Id"), str):
                ids.add(entry["Id"])
        seen = window.seen_ns(t.run) if window is not None else None
        copy = ev.timeline_seen.get(t.run)
        if seen is not None and copy is not None:
            # When the result was seen is held twice (the window, the timeline): the die is held to the earlier.
            seen = min(seen, round(copy * 1e9))
        # Charged but not started: its container is made in the window.  Unrecorded: its container (the Id of the
        # snapshot at the kill) was being made as the controller was frozen, and may start just after.
        before = ev.snapshots.get(KillFolder.BEFORE, {}).get(name)
        made = before.get("Id") if t.kind == UNRECORDED and isinstance(before, dict) else None
        fresh = t.kind == CHARGED or (t.kind == UNRECORDED and isinstance(made, str))
        targets.append(TargetTally(t.run, name, frozenset(ids), seen, fresh=fresh, made=made))
    until = window.until_ns if window is not None else None
    tally = EventTally(since, until, study.stem, allowed, targets, study.id, unstarted, study.container_prefix)
    for file, live in ((KillFolder.LIVE, True), (KillFolder.READBACK, False)):
        if file in ev.missing:
            continue
        try:
            bad = tally.malformed_count
            rel = KillFolder(out, ev.number).rel(file)
            for line in _lines(out, rel, KillFolder.CAPS[file]):
                where = Where(rel, line.number)  # said as "<file> line <n>", the file within its kill folder
                if line.problem == safefile.TORN:
                    continue  # a console that died writing its last line: not an event, nothing more
                if line.problem is not None:
                    tally.bad_line(where, line.problem)
                elif live and (why := _unstamped(line.value)) is not None:
                    tally.bad_line(where, why)
                else:
                    tally.add(line.value, where, live)
                _stop_past(file, tally.malformed_count - bad)
        except ReadingStopped as exc:
            # Lines that are not events fail each target's sameContainerNoRerun (docs/contract.md, "Which check
            # a file fails"), however many: the file is not unreadable for killEvidence.
            tally.reading_stopped(file, exc.reason)
        except Unreadable as exc:
            ev.problems[file] = f"{file}: {exc.reason}"
    restarts = KillFolder(out, ev.number).rel(KillFolder.RESTARTS)
    if safefile.exists(out, restarts):  # written only when the runtime restarted
        try:
            bad = tally.malformed_count
            for line in _lines(out, restarts, KillFolder.CAPS[KillFolder.RESTARTS]):
                where = Where(restarts, line.number)
                if line.problem is not None:
                    tally.bad_line(where, line.problem)
                else:
                    tally.restart(line.value, where)
                _stop_past(KillFolder.RESTARTS, tally.malformed_count - bad)
        except Unreadable as exc:
            tally.bad_line(Where(restarts, 0), exc.reason)
    ev.tally = tally
