"""The evidence folder, spelled once: the name of every file of ``OUT`` and of ``kills/<n>/``.

The engine writes through these names and the judge reads through them, so a
file is never named twice.  Each name comes in two forms: a :class:`Path`
(for the writers, who own the folder) and a path relative to ``OUT`` (for
the judge, which reads through :mod:`studymon.engine.io.safefile` and never
follows a name out of the folder).  What each file holds is in
``docs/evidence.md``; the typed form of each record is in
:mod:`studymon.engine.evidence.records`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import ClassVar

_KILL_NAME = re.compile(r"[1-9][0-9]{0,5}")
MiB = 1 << 20

# How large each file may be, for the judge: more than a study and its console could write is
# judged hostile, not read.  Chosen so that a whole folder within them is judged in under 10 s
# and 1 GiB on two cores (bench/report_hostile.py measures it): a 32 MiB ledger is ~160 000
# records, a long study's; a kill's files are a few KiB to a few MiB.


# A campaign's folder (``CAMPAIGN/``): its plan, the trace its points were found in, its trials' evidence
# folders and the journal of their states.
CAMPAIGN = "campaign.json"
TRACE = "trace"
TRIALS = "trials"
JOURNAL = "trials.jsonl"


class KillFolder:
    """``kills/<n>/``: the files of one kill."""

    KILL = "kill.json"
    AT_KILL = "ledger-at-kill.json"
    BEFORE = "container-before.json"
    AFTER = "container-after-kill.json"
    BEFORE_RESUME = "container-before-resume.json"
    READBACK = "container-events.jsonl"
    LIVE = "container-events-live.jsonl"
    WINDOW = "container-events-window.json"
    # Beside the recording when its stream lost events to a restart of the runtime; optional:
    # only a console that saw a restart writes it.
    RESTARTS = "runtime-restarts.jsonl"

    FILES = (KILL, AT_KILL, BEFORE, AFTER, BEFORE_RESUME, READBACK, LIVE, WINDOW)
    CAPS: ClassVar[dict[str, int]] = {
        KILL: 8 * MiB,
        AT_KILL: 64 * MiB,  # the ledger to the kill, written with indentation: twice the ledger's cap
        BEFORE: 8 * MiB,
        AFTER: 8 * MiB,
        BEFORE_RESUME: 8 * MiB,
        READBACK: 32 * MiB,
        LIVE: 32 * MiB,
        WINDOW: 8 * MiB,
        RESTARTS: 1 * MiB,
    }
    # What all kill folders together may hold: each is read whole, so their number is bounded too.
    BUDGET = 96 * MiB
    # And of it, what their event recordings (live and read back) may hold together: an event costs the
    # judge ~5 us, the most of any byte (~65 ns a byte against ~11 for ledger-at-kill.json), so that
    # 96 MiB of them took 6 s; 32 MiB is ~80 000 events of a few hundred bytes, far more than the
    # windows of a study's kills see.
    RECORDINGS = (LIVE, READBACK)
    RECORDINGS_BUDGET = 32 * MiB
    # How many kill folders the judge reads: a kill folder of one small kill.json counts for a few
    # hundred bytes of the budget, and each still costs the judge ~6 ms and the report ~2 KB, so the
    # budget alone let in 133 000 of them (past 180 s and 2.7 GiB; bench/report_hostile.py).  A study
    # is killed a few times, crashed a few more (several kill points, ends the console did not make):
    # 64 is far past that, and judged in under a second.
    LIMIT = 64
    # Written by the time the controller is resumed; the rest when the window closes.
    AT_KILL_FILES = (KILL, AT_KILL, BEFORE, AFTER, LIVE)
    SNAPSHOTS = (BEFORE, AFTER, BEFORE_RESUME)

    def __init__(self, out: Path, number: int) -> None:
        self.out = Path(out)
        self.number = number

    @property
    def path(self) -> Path:
        return self.out / "kills" / str(self.number)

    def file(self, name: str) -> Path:
        return self.path / name

    def rel(self, name: str) -> str:
        """``name``'s path inside ``OUT`` (for :mod:`safefile`)."""
        return f"kills/{self.number}/{name}"

    def size(self) -> tuple[int, int]:
        """What the judge reads of it: the bytes of its files, and of them, the bytes of its event recordings.

        A file past its cap is refused unread, so it counts for nothing; nor do
        links and other kinds of file (the judge refuses them), nor files it
        does not read.
        """
        total = recorded = 0
        try:
            with os.scandir(self.path) as entries:
                for entry in entries:
                    cap = self.CAPS.get(entry.name)
                    if cap is not None and entry.is_file(follow_symlinks=False):
                        size = entry.stat(follow_symlinks=False).st_size
                        if size > cap:
                            continue
                        total += size
                        if entry.name in self.RECORDINGS:
                            recorded += size
        except OSError:
            pass
        return total, recorded

    @property
    def kill_json(self) -> Path:
        return self.file(self.KILL)

    @property
    def before(self) -> Path:
        return self.file(self.BEFORE)

    @property
    def after(self) -> Path:
        return self.file(self.AFTER)

    @property
    def before_resume(self) -> Path:
        return self.file(self.BEFORE_RESUME)

    @property
    def at_kill(self) -> Path:
        return self.file(self.AT_KILL)

    @property
    def live(self) -> Path:
        return self.file(self.LIVE)

    @property
    def readback(self) -> Path:
        return self.file(self.READBACK)

    @property
    def window(self) -> Path:
        return self.file(self.WINDOW)

    @property
    def restarts(self) -> Path:
        return self.file(self.RESTARTS)

    @property
    def window_open(self) -> bool:
        """kill.json is written and the window file is not yet."""
        return self.kill_json.is_file() and not self.window.exists()


class EvidenceFolder:
    """``OUT``: the console's files beside the study's own ``OUT/study``."""

    RESEARCH = "research.json"
    STUDY = "study"
    LEDGER = "study/ledger.jsonl"
    LOG = "study.log"
    LAUNCHES = "launches.jsonl"
    ARMS = "arms.jsonl"
    LEDGER_WATCH = "ledger-watch.jsonl"
    MACHINE = "machine.jsonl"
    TIMELINE = "timeline.jsonl"
    LOAD = "load.jsonl"
    OUTCOME = "outcome.json"
    ACCOUNTS = "accounts.json"
    KILL_REPORT = "kill-report.json"
    REPORT_SVG = "report.svg"
    REPORT = "report.json"
    KILLS = "kills"
    TRACE = "container-events-trace.jsonl"  # with --trace: every container event of the study, as received
    CAPS: ClassVar[dict[str, int]] = {
        RESEARCH: 1 * MiB,
        LEDGER: 32 * MiB,
        LAUNCHES: 4 * MiB,
        ARMS: 1 * MiB,
        LEDGER_WATCH: 1 * MiB,
        TIMELINE: 32 * MiB,
        OUTCOME: 1 * MiB,
        MACHINE: 64 * MiB,  # a sample every 4.5 s, and snapshots: a week's study writes a few tens of MiB
    }

    # Files that only a studymon evidence folder has: an OUT holding any of them is not new.
    MARKS = (LAUNCHES, TIMELINE, MACHINE, OUTCOME, REPORT, STUDY)
    # Files appended to a line at a time (a resume only adds to them).
    APPENDED = (LAUNCHES, TIMELINE, MACHINE, LOAD, ARMS, LOG, TRACE)

    def __init__(self, out: Path) -> None:
        self.out = Path(out)

    def file(self, name: str) -> Path:
        return self.out / name

    @property
    def research(self) -> Path:
        return self.out / self.RESEARCH

    @property
    def study(self) -> Path:
        return self.out / self.STUDY

    @property
    def ledger(self) -> Path:
        return self.out / self.LEDGER

    @property
    def log(self) -> Path:
        return self.out / self.LOG

    @property
    def launches(self) -> Path:
        return self.out / self.LAUNCHES

    @property
    def arms(self) -> Path:
        return self.out / self.ARMS

    @property
    def ledger_watch(self) -> Path:
        return self.out / self.LEDGER_WATCH

    @property
    def machine(self) -> Path:
        return self.out / self.MACHINE

    @property
    def timeline(self) -> Path:
        return self.out / self.TIMELINE

    @property
    def load(self) -> Path:
        return self.out / self.LOAD

    @property
    def outcome(self) -> Path:
        return self.out / self.OUTCOME

    @property
    def report(self) -> Path:
        return self.out / self.REPORT

    @property
    def trace(self) -> Path:
        return self.out / self.TRACE

    def kill(self, number: int) -> KillFolder:
        return KillFolder(self.out, number)

    def kill_numbers(self, first: int | None = None) -> list[int]:
        """The kill folders (``1``, ``2``, …) that are directories inside ``OUT``, in order; only the
        ``first`` so many when given (the names past them are not looked at beyond their spelling).

        Safe for a folder an adversary wrote: a name that is not a number, or
        a link (the console makes folders, never links to them), is not a kill
        folder: its number is a hole.
        """
        root = os.path.realpath(self.out)
        real = os.path.realpath(os.path.join(root, self.KILLS))
        if not real.startswith(root + os.sep) or not os.path.isdir(real):
            return []
        try:
            names = os.listdir(real)
        except OSError:
            return []
        found: list[int] = []
        for number in sorted(int(name) for name in names if _KILL_NAME.fullmatch(name)):
            if first is not None and len(found) >= first:
                break
            entry = os.path.join(real, str(number))
            path = os.path.realpath(entry)
            if path.startswith(root + os.sep) and os.path.isdir(path) and not os.path.islink(entry):
                found.append(number)
        return found

    def kills(self, first: int | None = None) -> list[KillFolder]:
        return [self.kill(n) for n in self.kill_numbers(first)]

    def next_kill(self) -> KillFolder:
        """The folder the next kill is written to: one past the highest number there."""
        root = self.out / self.KILLS
        numbers = [int(p.name) for p in root.iterdir() if p.name.isdigit()] if root.is_dir() else []
        return self.kill(max(numbers, default=0) + 1)

    def open_windows(self) -> list[KillFolder]:
        """Kill folders whose window is still open (kill.json written, the window file not yet)."""
        root = self.out / self.KILLS
        if not root.is_dir():
            return []
        numbers = sorted(int(p.name) for p in root.iterdir() if p.name.isdigit())
        return [k for k in (self.kill(n) for n in numbers) if k.window_open]
