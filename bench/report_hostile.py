"""studymon report on the largest hostile evidence folders the size caps let in: today's judge beside the current code.

The contract (docs, §6.5) says that any folder within the size caps is
judged in under 10 s and 1 GiB on a 2-core machine, and that the report's
size follows the ledger, not the attacker.  The caps are each file's own
(``engine/contract/folder.py``: ``EvidenceFolder.CAPS``, ``KillFolder.CAPS``);
``KillFolder.BUDGET`` bounds what all kill folders together may hold (each
counted as its known files' sizes, a file past its cap counting for
nothing), and ``KillFolder.RECORDINGS_BUDGET`` what their event recordings
(live and read back) hold of it; the kill folders past either are not read.
Only the first ``KillFolder.LIMIT`` kill folders are read (one kill stands
for all the others), and a file with more than ``BAD_LINES``
(``engine/judge/read.py``) lines that are not its records is refused there.
This bench builds such folders, each from a sound
folder (the corpus's, ``tests/corpus.py``: ``write(derive(sound()), out)``,
or a long sound study) with one file, or one kind of file, or everything at
once, made as large as its caps allow, and runs the command-line judge on
each, as an operator would: ``python -m studymon.tui.cli report OUT``, a
fresh process per run.  Two judges, in the same run, taking turns (which
goes first alternates from folder to folder and round to round), on the
same folders:

* **today**: the judge at a fixed commit (``--baseline``, default
  ``ae54883``), its package folders taken with ``git archive``;
* **current**: the code in the working tree (``--current REV`` for a
  commit instead), copied when the bench starts, so that edits made while it
  runs do not change what it measures.

Both are laid out as the installed package is (``[tool.setuptools.package-dir]``
of that version's ``pyproject.toml``: ``studymon/engine`` from ``engine/``
and so on) in a folder of their own, compiled once, and put first on
``PYTHONPATH``; the child runs with ``-P`` from a neutral folder, so nothing
else (the repository, its editable install) can be imported in their place.

**The caps** are read in each judge's copy, in a process of its own
(``PROBE``): safefile's generic caps, ``engine/contract/folder.py``'s per-file caps,
budget, recordings' budget and kill-folder limit when the copy has that
file, and ``engine/judge/read.py``'s ``BAD_LINES`` when it has that one
(only the copy's own: for a module the copy lacks, the repository's
editable install would find the working tree's); a bound the copy lacks is
None.  The folders are built to the **current** judge's caps and bounds (it
must have them all), once per case, and both judges judge the same folder.
ae54883 has no folder.py and no judge/: it reads every file with its kind's
generic cap (``JSON_CAP`` 64 MiB, ``JSONL_CAP`` 256 MiB, ...) and reads
every kill folder; so it reads every file of these folders too.  Each
folder's line says how many kills each judge's report has and what either
judge leaves unread by size or number; the bench stops if the current judge
would leave a file past its cap or a kill folder past a budget, or would
not read some kill folders for the limit in a folder not built to be past
it: a folder past its bounds is the bench's mistake.

Per run: the wall time, the CPU time and the **peak RSS** of the judge,
from its own ``rusage`` as ``os.wait4`` gives it when it is reaped: the
kernel's high-water mark of its resident set, exact and for that process
alone.  (psutil sampling would miss a peak between samples and take CPU from
a 2-core machine while it measures; ``getrusage(RUSAGE_CHILDREN)`` is the
largest of every child reaped so far, so it needs a fresh process per run
anyway.)  One catch, on Linux: exec keeps the high-water mark of the memory
it replaces, so a child's ``ru_maxrss`` is at least its parent's peak at the
time it was started, vfork or not (a judge started from the bench, which
holds hundreds of MiB while it writes a folder, would show that much).  So
each judge is started, watched and reaped by a small process of its own
(``MEASURE``, ``python -I -S``, ~11 MiB, its own peak kept as ``floor``),
which also times it (``perf_counter`` from just before the start to the
reaping), and kills it (SIGKILL) past ``--timeout`` (120 s) or once its
resident set, read every 50 ms, passes ``--memory-limit`` (4 GiB: the machine
is shared); a killed run's time and peak are lower bounds (shown with ``>``).
The report's standard output is counted in bytes (written to a file); its
exit status is kept (0 sound, 1 a check fails, 3 unknown; anything else, or
a traceback on standard error, is a crash).

The folders, each written whole (real bytes, no sparse files) into the
bench's temporary folder, one at a time, judged, then removed.  "Its cap" is
the current judge's cap for that file, less 4 KiB (``SLACK``); "the budget"
``KillFolder.BUDGET`` less 4 KiB, "the recordings' budget"
``KillFolder.RECORDINGS_BUDGET`` less 4 KiB; the kill folders stay within
both (an event recording, for one, grows only as far as what the others
leave of the recordings' budget):

* ``sound``: the corpus's sound folder (what starting the judge costs);
* ``kill-targets``: kill 1's ``kill.json`` listing targets up to its cap
  (valid, distinct run ids, none in flight);
* ``live-events``: kill 1's ``container-events-live.jsonl`` up to its cap
  of lifecycle events inside its window: of the target (forbidden actions,
  passive ones, dies of other Ids) and of other containers of the study
  created and started;
* ``live-lines``: the same file up to its cap of the shortest lines that
  are JSON (``0``, ``TINY``): past ``BAD_LINES`` of them the recording is
  refused, so this shows the bound at work;
* ``live-others``: the same file up to what the recordings' budget leaves,
  of the cheapest valid container events (``{"Type": "container", "Action": "start",
  "timeNano": ..., "Actor": {"ID": ..., "Attributes": {"name": ...}}, "seenAt": ...}``,
  ~150 bytes, inside kill 1's window) of containers that are not the
  study's: lines the judge must read and parse, that concern nothing;
* ``recordings-budget``: the recordings' budget spent across kills 1 and
  2's live recordings and read-backs, a share each, on such events, every
  second one of a container of the study (``<prefix>-<study>-z<k>``,
  started in the window for a run never planned); a kill's read-back holds
  the same events as its live recording;
* ``ledger-<N>``, ``ledger-cap``: a sound study of N ledger records
  (diagnosis rounds of the corpus's shape, the same two kills), or of as
  many as fit under the ledger's cap, its timeline as long; judged sound
  (exit 0) by a judge that reads it all.  Records a second and MB a second
  of the ledger, and the ledger that fits in 10 s and in 1 GiB, fitted to
  these sizes;
* ``ledger-lines``: the sound ledger, then ``0`` lines up to its cap (the
  ledger's own ``ISSUE_LIMIT`` stops its reading);
* ``at-kill``: ``ledger-cap``'s study, both kills' ``ledger-at-kill.json``
  holding the whole ledger (indented as the engine writes it: 1.45 times
  the ledger's bytes), as far as their caps and the budget allow, kill 1's
  then white space up to its cap as far as the budget allows: every record
  compared twice, in two streams beside the ledger's (only the records the
  ledger has are compared, so the budget goes to kill 2's copy first);
* ``at-kill-element``: one element of ``ledger-at-kill.json`` up to its cap
  (and ``ELEMENT_CAP``);
* ``snapshots``: the three container snapshots of both kills, each up to its
  cap of containers;
* ``window``: kill 1's ``container-events-window.json`` up to its cap of
  targets;
* ``launches``, ``arms``, ``timeline``: each of those files up to its cap
  (controllers started and ended, arms and disarms, records seen again);
  ``launches-lines``, ``timeline-lines``: ``0`` lines up to its cap (before
  the file's own lines in launches.jsonl, after them in the timeline),
  refused past ``BAD_LINES``, as ``live-lines``;
* ``kills-budget``: as many kill folders as the budget lets in, within the
  limit, each with its ``kill.json`` (targets) as large as its cap and the
  budget allow, and its live recording (events, as ``live-events``) as its
  cap and the recordings' budget allow: kills 1 and 2 the sound study's,
  the others copies of kill 2 (their recordings empty once the recordings'
  budget is spent): the recordings' budget goes to kill 1's live recording,
  the rest of the budget to the kill.json files of kill folders in number;
* ``kills-limit``: exactly ``KillFolder.LIMIT`` kill folders, kills 1 and 2
  the sound folder's, the others copies of its kill 2's files: the most
  kill folders judged whole;
* ``kills-<N>``, ``kills-many``: N kill folders (or as many as the budget
  would let in were each of them counted), each past the sound folder's two
  a copy of kill 2's ``kill.json`` alone.  Within the limit: what a kill
  folder costs, in time and in report, and how many would fit in 10 s (a
  line through the sizes within the limit judged to the end).  Past it:
  that only the first ``LIMIT`` are read and one kill stands for the rest
  (``LIMIT`` + 1 kills in the report), whatever their number.  A kill
  folder holding no file the judge reads counts for nothing against the
  budget, and a kill folder's name may be up to 999 999, but past the
  limit the judge looks at the names only, and a million folders would
  take this disk many minutes to write and remove;
* ``whole-folder``: everything at once: ``ledger-cap``'s study (every
  record read); its timeline up to its cap with its records seen again,
  ``launches.jsonl`` and ``arms.jsonl`` with lines of their own kinds
  (``launches``, ``arms``), ``ledger-watch.jsonl`` with ``0`` lines (each
  of its lines is a fault of the ledger: past ``BAD_LINES`` it is refused
  whatever they hold), ``research.json``, each up to its cap; the
  recordings' budget spent on the dearest valid lines, minimal events as in
  ``live-others``, in the event recordings (kill 1's live recording and
  read-back, then kill 2's), each up to its cap; the rest of the budget on
  both kills' ``ledger-at-kill.json``, the whole ledger each as far as
  their caps allow (as in ``at-kill``: every record compared, the next
  dearest byte, as a sound study near its end has them), and what is still
  left (with --quick, where the copies reach their caps first) on kill 1's
  and kill 2's ``kill.json`` targets.  Not the kill folders in number:
  past the limit they are not read (``kills-limit``, ``kills-many``).

**Campaign folders** (``studymon report CAMPAIGN``, contract §8a): only the
current judge reads them (``ae54883`` has no campaigns), so each is measured
with it alone, by the same MEASURE process, and shown in a table of its own
(folder, MiB, trials in the journal, trial folders, journal lines, seconds,
peak, output, exit, target), against the report's bounds of
``engine/explore/campaign.py`` (the journal's and campaign.json's caps, the trial
limit, the bad lines, the trial folders' budget and weights), to which they
are built.  A trial folder is the corpus's sound folder as study ``s-<n>``
(its containers renamed, its auto kill at ``after:runStarted/diagnosis``
and armed there, the report.json the current judge gives it), the journal
and campaign.json as the explorer writes them:

* ``campaign-sound``: two sound trials (what a campaign report costs);
* ``campaign-lines``: the journal grown to 100 000 lines of trials of its
  own (planned, then done, without folders): reading stops past the trial
  limit;
* ``campaign-budget``: sound trial folders up to the trial folders' budget,
  and one past it (each examined and judged, a row each; the last not);
* ``campaign-ledger``: one trial folder a long study (the corpus's rounds;
  its records keep study ``s``'s container names, so it fails) whose folder
  counts just within the budget (with --quick, a ledger of 256 KiB): the
  dearest bytes to judge;
* ``campaign-objects``: campaign.json up to its cap of empty objects in its
  points, the most memory a byte of it takes to parse (refused at the
  first);
* ``campaign-whole``: everything at once: the trial limit's trials (with
  --quick, 200), trial 1 the long study, trial 2 a sound folder past the
  budget, the others lost; the journal up to its cap (the lost trials'
  details long), campaign.json up to its cap with every trial and as many
  candidate points as fit (each validated and grouped).

``--only campaign`` measures the campaign folders alone; ``--json`` has
them under ``campaigns``, their runs under ``campaignSamples`` and the
bounds under ``campaignBounds``.

    python bench/report_hostile.py                    # every folder, 1 round
    python bench/report_hostile.py --only kill-targets,ledger --ledger-records 50000,cap
    python bench/report_hostile.py --quick --json rh.json   # smoke run: 256 KiB files, short ledgers (~70 s)

Options: ``--quick`` (every file at most 256 KiB less the slack, the budget
1.25 MiB, the recordings' budget 256 KiB, ledgers of ``20000,60000``
records, ``20,60,100`` kill folders: two within the limit, one past it; the
limit and ``BAD_LINES`` are the judge's own); ``--only NAMES`` (folders by
name, ``ledger`` for every ledger size, ``kills`` for every kill count);
``--ledger-records`` (sizes, ``cap`` for as many as fit; default
``100000,cap``); ``--kill-counts`` (``budget`` for as many as it would let
in; default ``16,64,500,2000,budget``); ``--rounds`` (runs per judge
and folder, default 1; the sound folder gets 5); ``--timeout`` (s, default
120); ``--memory-limit`` (GiB, default 4); ``--baseline REV``; ``--current
REV``; ``--json FILE`` (every run, the folders, the caps and bounds, what
each judge leaves unread and how many kills it judges, the fitted sizes);
``--keep`` (keep the temporary folder: folders, outputs, the judges' copies;
its path is printed); ``--silent``.  Exit status 0 when every run was
measured (a killed run is a measurement), 2 when the bench could not
measure (a judge that cannot be set up or lacks a bound, a run that
crashed, a folder it built past the current bounds), 130 when interrupted.
Every child is killed and the temporary folder removed on the way out, also
on SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from studymon.engine.io.clock import parse_rfc3339, rfc3339_ms  # noqa: E402
from tests import corpus  # noqa: E402

MiB = 1 << 20
GiB = 1 << 30
BASELINE = "ae54883"
TARGET_SECONDS = 10.0
TARGET_RSS = GiB
TIMEOUT = 120.0
MEMORY_LIMIT = 4 * GiB  # a judge past this is killed: the machine is shared
WATCH = 0.05  # seconds between looks at a running judge's resident set
SOUND_RUNS = 5  # runs per judge of the sound folder: its medians are the start-up cost
SLACK = 4096  # every file stays this far under its cap
LEDGER_RECORDS = "100000,cap"  # ledger sizes in records; cap: as many as fit under the ledger's cap
QUICK_LEDGER_RECORDS = "20000,60000"
# Kill folders; budget: as many as the kills' budget would let in were every one counted.  Two within the limit
# (the cost of a kill folder), the others past it.
KILL_COUNTS = "16,64,500,2000,budget"
QUICK_KILL_COUNTS = "20,60,100"
QUICK_BYTES = 256 * 1024  # a capped file's size with --quick
QUICK_BUDGET = (
    5 * QUICK_BYTES
)  # the kills' budget with --quick (1.25 MiB): two kill folders of two 252 KiB files, and a third
QUICK_RECORDINGS = QUICK_BYTES  # the recordings' budget with --quick: a recording's size, as 32 MiB is at full size
CAP_NAMES = ("JSON_CAP", "JSONL_CAP", "LEDGER_CAP", "ARRAY_CAP", "LINE_CAP", "ELEMENT_CAP")
KILL_NAME = re.compile(r"[1-9][0-9]{0,5}")  # a kill folder's name, as engine/contract/folder.py takes it
# What the judge reads with a cap, besides the ledger and ledger-at-kill.json (for a judge whose caps are
# safefile's generic ones, by kind).
GENERIC_READS = ("research.json", "launches.jsonl", "arms.jsonl", "ledger-watch.jsonl", "timeline.jsonl")
KILL_READS = (
    "kill.json",
    "container-before.json",
    "container-after-kill.json",
    "container-before-resume.json",
    "container-events.jsonl",
    "container-events-live.jsonl",
    "container-events-window.json",
    "runtime-restarts.jsonl",
)
LEDGER = "study/ledger.jsonl"
TIMELINE = "timeline.jsonl"
KILL_JSON, AT_KILL, READBACK, LIVE, WINDOW = KILL_READS[0], "ledger-at-kill.json", *KILL_READS[4:7]
RECORDINGS = (LIVE, READBACK)  # the event recordings, as KillFolder.RECORDINGS names them
JUDGES = ("today", "current")
CHECK_ROUNDS = 7  # the long sound folder, built at this many rounds, must be the corpus's own


def say(text: str = "", stream: IO[str] = sys.stdout) -> None:
    stream.write(text + "\n")
    stream.flush()


# --- the judges ---------------------------------------------------------------------------


class BenchError(RuntimeError):
    """The bench cannot measure (a judge that cannot be set up, a folder the corpus does not give)."""


GIT = shutil.which("git") or "git"


def git(*args: str) -> str:
    return subprocess.run([GIT, *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


@dataclass
class Judge:
    """One judge's code, laid out as the installed package, and how to run it."""

    name: str
    source: str  # a commit given, or "working tree"
    commit: str  # the commit (for the working tree: HEAD)
    changed: list[str]  # working tree only: package files that differ from HEAD (git status --porcelain)
    root: str  # the folder put first on PYTHONPATH (holds studymon/)
    caps: dict[str, int] = field(default_factory=dict)  # safefile's generic caps (CAP_NAMES)
    # engine/contract/folder.py's caps, each file's own: {"evidence": EvidenceFolder.CAPS, "kill": KillFolder.CAPS};
    # None for a judge without them (ae54883: every file has its kind's generic cap).
    file_caps: dict[str, dict[str, int]] | None = None
    budget: int | None = None  # KillFolder.BUDGET: what all kill folders together may hold; None: no bound
    # KillFolder.RECORDINGS_BUDGET: what their event recordings (live and read back) may hold together, within
    # the budget; None: no bound of their own.
    recordings_budget: int | None = None
    limit: int | None = None  # KillFolder.LIMIT: how many kill folders are read (one stands for the rest); None: all
    bad_lines: int | None = None  # engine/judge/read.py's BAD_LINES: a file with more lines not its records is refused
    imported_from: str = ""
    folder_module: str | None = None  # where engine/contract/folder.py was imported from, when it has the caps
    read_module: str | None = None  # where engine/judge/read.py was imported from, when the copy has it

    def cap_of(self, rel: str) -> int | None:
        """The cap this judge reads ``OUT/rel`` with, by its own rules; None for a file it does not read."""
        parts = rel.split("/")
        in_kill = len(parts) == 3 and parts[0] == "kills" and KILL_NAME.fullmatch(parts[1]) is not None
        if self.file_caps is not None:
            return self.file_caps["kill"].get(parts[2]) if in_kill else self.file_caps["evidence"].get(rel)
        # The generic caps by kind, as safefile's readers default them (ae54883's report.py passes none).
        if rel == "study/ledger.jsonl":
            return self.caps["LEDGER_CAP"]
        if in_kill and parts[2] == "ledger-at-kill.json":
            return self.caps["ARRAY_CAP"]
        if rel in GENERIC_READS or (in_kill and parts[2] in KILL_READS):
            return self.caps["JSONL_CAP" if rel.endswith(".jsonl") else "JSON_CAP"]
        return None

    def unread(self, folder: Path) -> dict[str, Any]:
        """What this judge would not read of ``folder`` by size or number: files past their cap, kill folders past the
        budget or the recordings' budget (each a list), and how many kill folders are past the limit.

        As ``read_kills`` does: the first ``limit`` kill folders, in order, each counted as ``KillFolder.size``
        counts it (the bytes of the files it reads there, a file past its cap counting for nothing; and of
        them, the event recordings' bytes), are read while their sums stay within the budget and the
        recordings' budget; past the limit, one kill stands for all the others, which are not read.
        """
        over = [
            rel for rel, size in folder_files(folder).items() if (cap := self.cap_of(rel)) is not None and size > cap
        ]
        past_budget: list[str] = []
        past_recordings: list[str] = []
        past_limit = 0
        if self.budget is not None or self.limit is not None:
            spent = recorded = 0
            for i, (n, size, recordings) in enumerate(kill_sizes(folder, self)):
                spent += size
                recorded += recordings
                if self.limit is not None and i == self.limit:
                    past_limit = len(kill_folders(folder)) - self.limit
                elif self.budget is not None and spent > self.budget:
                    past_budget.append(f"kills/{n}")
                elif self.recordings_budget is not None and recorded > self.recordings_budget:
                    past_recordings.append(f"kills/{n}")
        return {
            "overCap": over,
            "pastBudget": past_budget,
            "pastRecordings": past_recordings,
            "pastLimit": past_limit,
        }

    def judged_kills(self, folder: Path) -> int:
        """How many kills this judge's report has for ``folder``: every kill folder, or past the limit the first
        ``limit`` and one for all the others."""
        count = len(kill_folders(folder))
        return count if self.limit is None else min(count, self.limit + 1)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env["PYTHONPATH"] = self.root
        env["COLUMNS"] = "140"  # the CLI's width when not on a terminal; fixed so that output sizes compare
        return env


def _package_dirs(pyproject: str) -> dict[str, str]:
    """``[tool.setuptools.package-dir]``: package name -> folder of the repository."""
    dirs = tomllib.loads(pyproject)["tool"]["setuptools"]["package-dir"]
    return {str(k): str(v) for k, v in dirs.items()}


def make_judge(name: str, rev: str | None, work: Path) -> Judge:
    """The package of ``rev`` (None: the working tree), as pip would install it, in ``work/<name>``."""
    root = work / f"judge-{name}"
    root.mkdir()
    if rev is None:
        commit = git("rev-parse", "HEAD").strip()
        dirs = _package_dirs((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
        folders = sorted(set(dirs.values()))
        changed = [line for line in git("status", "--porcelain", "--", *folders).splitlines() if line.strip()]
        source = str(ROOT)
    else:
        commit = git("rev-parse", "--verify", f"{rev}^{{commit}}").strip()
        dirs = _package_dirs(git("show", f"{commit}:pyproject.toml"))
        folders = sorted(set(dirs.values()))
        changed = []
        tree = work / f"tree-{name}"
        tree.mkdir()
        archive = subprocess.run(
            [GIT, "archive", "--format=tar", commit, "--", *folders], cwd=ROOT, check=True, capture_output=True
        ).stdout
        tar_path = work / f"tree-{name}.tar"
        tar_path.write_bytes(archive)
        with tarfile.open(tar_path) as tar:
            tar.extractall(tree, filter="data")
        tar_path.unlink()
        source = str(tree)
    # Shallow names first: studymon/ (its __init__), then studymon/engine/ from engine/, and so on.
    for package, folder in sorted(dirs.items(), key=lambda kv: kv[0].count(".")):
        dest = root / package.replace(".", "/")
        src = Path(source) / folder
        if not src.is_dir():
            raise BenchError(f"{name}: {folder}/ (for {package}) is not in {source}")
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    if rev is not None:
        shutil.rmtree(work / f"tree-{name}")
    judge = Judge(name, rev or "working tree", commit, changed, str(root))
    # Compiled once, so that no run pays for it; a file that does not compile shows in the probe below.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root)], check=False, capture_output=True)
    proc = subprocess.run(
        [sys.executable, "-P", "-c", PROBE, json.dumps(CAP_NAMES)],
        cwd=work,
        env=judge.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise BenchError(f"{name} ({judge.source}): the judge does not import:\n{proc.stderr[-2000:]}")
    found = json.loads(proc.stdout)
    for what in ("file", "folder", "read"):
        where = found[what]
        if where is not None and not Path(where).resolve().is_relative_to(root.resolve()):
            raise BenchError(f"{name}: studymon was imported from {where}, not from {root}")
    judge.caps, judge.imported_from = found["caps"], found["file"]
    if found["fileCaps"] is not None:
        judge.file_caps, judge.budget = found["fileCaps"], found["budget"]
        judge.folder_module = found["folder"]
    judge.recordings_budget, judge.limit = found["recordingsBudget"], found["limit"]
    judge.bad_lines, judge.read_module = found["badLines"], found["read"]
    return judge


# Run in each judge's copy: safefile's generic caps, engine/contract/folder.py's per-file caps, kill budget, recordings'
# budget and kill-folder limit when it has them (ae54883 has no folder.py: every file has its kind's generic cap
# there, and every kill folder is read), and engine/judge/read.py's BAD_LINES when it has it.
PROBE = r"""
import json, sys
import studymon, studymon.tui.cli
import os
from studymon import engine
# Only the copy's own modules: the repository's editable install would find the working tree's for a judge
# that has none (its finder comes after the copy's, for a module the copy lacks).  A judge before the engine's
# rooms keeps them flat (engine/safefile.py, engine/folder.py).
def own(*parts):
    return any(os.path.isfile(os.path.join(p, *parts)) for p in engine.__path__)
if own("io", "safefile.py"):
    from studymon.engine.io import safefile
else:
    from studymon.engine import safefile
caps = {n: getattr(safefile, n) for n in json.loads(sys.argv[1])}
folder = read = None
if own("contract", "folder.py"):
    from studymon.engine.contract import folder
elif own("folder.py"):
    from studymon.engine import folder
if own("judge", "__init__.py") and own("judge", "read.py"):
    from studymon.engine.judge import read
evidence = getattr(folder, "EvidenceFolder", None)
kill = getattr(folder, "KillFolder", None)
file_caps = budget = None
if hasattr(evidence, "CAPS") and hasattr(kill, "CAPS") and hasattr(kill, "BUDGET"):
    file_caps = {"evidence": dict(evidence.CAPS), "kill": dict(kill.CAPS)}
    budget = kill.BUDGET
print(json.dumps({"file": studymon.__file__, "caps": caps, "fileCaps": file_caps, "budget": budget,
                  "recordingsBudget": getattr(kill, "RECORDINGS_BUDGET", None), "limit": getattr(kill, "LIMIT", None),
                  "badLines": getattr(read, "BAD_LINES", None),
                  "folder": folder.__file__ if file_caps is not None else None,
                  "read": read.__file__ if read is not None else None}))
"""


# --- running one judgement ------------------------------------------------------------------


@dataclass
class Sample:
    """One run of ``studymon report OUT``."""

    case: str
    judge: str
    round: int
    seconds: float  # wall time (to the kill, when it was killed)
    cpu: float  # user + system
    peak_rss: int  # bytes
    floor: int  # the measuring process's own peak when it started the judge: no peak can be below it
    exit: int | None  # exit status; None when killed
    stdout_bytes: int
    stderr_bytes: int
    killed: str | None  # "time" (past the timeout) or "memory" (past the memory limit); None: it ended
    crashed: bool
    summary: str  # the report's last line (studymon's own words)


class Running:
    """The measuring process now running (its group holds the judge), so that an interruption kills both."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None

    def kill(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:  # not reaped yet: its group cannot be another's
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        self.proc = None


RUNNING = Running()

# The process that starts, watches and reaps one judge (run with -I -S: a few MiB of its own).  On
# Linux a child's ru_maxrss includes the peak of the process it was started from: exec keeps the
# high-water mark of the memory it replaces, even that of a vfork'd parent.  Started from the bench
# (which holds hundreds of MiB while it writes a folder), every judge's peak would be at least the
# bench's; started from this small process, at least this one's (its VmHWM, reported as "floor").
MEASURE = r"""
import json, os, select, signal, subprocess, sys, time
seconds, memory, watch = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
out_path, err_path, argv = sys.argv[4], sys.argv[5], sys.argv[6:]
page = os.sysconf("SC_PAGE_SIZE")

def rss(pid):
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * page
    except (OSError, ValueError, IndexError):
        return 0

def ended(pid, poller, wait):
    if poller is not None:
        return bool(poller.poll(wait * 1e3))
    if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
        return True
    time.sleep(wait)
    return False

def hwm():
    # This process's own high-water mark (its ru_maxrss would be its parent's, the bench's, as said above).
    with open("/proc/self/status", "rb") as fh:
        for line in fh:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0

floor = hwm()
with open(out_path, "wb") as out, open(err_path, "wb") as err:
    began = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
try:
    fd = os.pidfd_open(proc.pid)
    poller = select.poll()
    poller.register(fd, select.POLLIN)
except (AttributeError, OSError):
    poller = None
deadline = time.monotonic() + seconds
killed = None
while True:
    left = deadline - time.monotonic()
    if left <= 0:
        killed = "time"
        break
    if ended(proc.pid, poller, min(left, watch)):
        break
    if rss(proc.pid) > memory:
        killed = "memory"
        break
if killed is not None:
    os.kill(proc.pid, signal.SIGKILL)  # not yet reaped: the pid is still the judge's
_, status, usage = os.wait4(proc.pid, 0)
took = time.perf_counter() - began
proc.returncode = os.waitstatus_to_exitcode(status)
print(json.dumps({"seconds": took, "cpu": usage.ru_utime + usage.ru_stime, "peakRss": usage.ru_maxrss * 1024,
                  "exit": proc.returncode, "killed": killed, "floor": floor}))
"""


def _last_line(path: Path) -> str:
    with open(path, "rb") as fh:
        fh.seek(max(0, path.stat().st_size - 4096))
        lines = [x for x in fh.read().decode("utf-8", "replace").splitlines() if x.strip()]
    return lines[-1].strip()[:200] if lines else ""


def judge_once(judge: Judge, case: str, rnd: int, folder: Path, logs: Path, limits: Limits) -> Sample:
    """One ``studymon report OUT``, started, watched and reaped by MEASURE in a process of its own."""
    out_path, err_path = logs / f"{case}-{judge.name}-{rnd}.stdout", logs / f"{case}-{judge.name}-{rnd}.stderr"
    argv = [sys.executable, "-P", "-m", "studymon.tui.cli", "report", str(folder)]
    measure = [sys.executable, "-I", "-S", "-c", MEASURE, repr(limits.seconds), str(limits.memory), repr(WATCH)]
    proc = subprocess.Popen(
        [*measure, str(out_path), str(err_path), *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        cwd=logs,
        env=judge.env(),
        start_new_session=True,
    )
    RUNNING.proc = proc
    try:
        report, _ = proc.communicate(timeout=limits.seconds + 60)
    except subprocess.TimeoutExpired:
        raise BenchError(f"{case}: the process measuring {judge.name} did not end") from None
    RUNNING.proc = None
    if proc.returncode != 0:
        raise BenchError(f"{case}: the process measuring {judge.name} failed (exit {proc.returncode})")
    got = json.loads(report)
    killed = got["killed"]
    code = got["exit"] if killed is None else None
    stderr = err_path.read_bytes()
    return Sample(
        case=case,
        judge=judge.name,
        round=rnd,
        seconds=got["seconds"],
        cpu=got["cpu"],
        peak_rss=got["peakRss"],
        floor=got["floor"],
        exit=code,
        stdout_bytes=out_path.stat().st_size,
        stderr_bytes=len(stderr),
        killed=killed,
        crashed=killed is None and (code not in (0, 1, 3) or b"Traceback" in stderr),
        summary=_last_line(out_path),
    )


# --- writing big files ------------------------------------------------------------------------


class Sized:
    """A file written a piece at a time, buffered, its size counted."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(path, "wb")  # noqa: SIM115 - closed by close()
        self.size = 0
        self._buf: list[bytes] = []
        self._pending = 0

    def write(self, data: bytes) -> None:
        self.size += len(data)
        self._buf.append(data)
        self._pending += len(data)
        if self._pending >= MiB:
            self.fh.write(b"".join(self._buf))
            self._buf.clear()
            self._pending = 0

    def close(self) -> int:
        self.fh.write(b"".join(self._buf))
        self.fh.close()
        return self.size


def fill(
    path: Path, limit: int, head: bytes, items: Iterable[bytes], more: Iterator[bytes], sep: bytes, tail: bytes
) -> int:
    """``head``, then ``items`` and as many of ``more`` as fit in ``limit`` bytes, joined by ``sep``, then ``tail``.

    Returns how many of ``more`` were written.  A .jsonl file is ``sep`` = b"" with each item a line.
    """
    out = Sized(path)
    out.write(head)
    room = limit - len(head) - len(tail)
    first = True
    for item in items:
        piece = item if first else sep + item
        out.write(piece)
        room -= len(piece)
        first = False
    added = 0
    for item in more:
        piece = item if first else sep + item
        if len(piece) > room:
            break
        out.write(piece)
        room -= len(piece)
        first = False
        added += 1
    out.write(tail)
    out.close()
    return added


def jline(value: Any) -> bytes:
    """A .jsonl line as corpus.write writes it."""
    return (json.dumps(value) + "\n").encode()


def compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def member(key: str, value: Any) -> bytes:
    return json.dumps(key).encode() + b":" + compact(value)


def fill_member(path: Path, limit: int, obj: dict[str, Any], key: str, more: Iterator[bytes]) -> int:
    """``obj`` written compactly, its ``key`` (a list, or an object) last and grown by ``more`` up to ``limit``."""
    rest = {k: v for k, v in obj.items() if k != key}
    value = obj[key]
    opening, closing = (b"[", b"]") if isinstance(value, list) else (b"{", b"}")
    head = compact(rest)[:-1] + (b"," if rest else b"") + json.dumps(key).encode() + b":" + opening
    items = [compact(x) for x in value] if isinstance(value, list) else [member(k, v) for k, v in value.items()]
    return fill(path, limit, head, items, more, b",", closing + b"}")


class Template:
    """A JSON line with a number (or a string) put in at one place: fast to make by the million."""

    MARK = "@@@"

    def __init__(self, value: Any, compacted: bool = False) -> None:
        text = json.dumps(value, separators=(",", ":")) if compacted else json.dumps(value)
        before, after = text.split(json.dumps(self.MARK))
        self.before, self.after = before.encode(), after.encode()

    def __call__(self, n: int | str, quoted: bool = False) -> bytes:
        middle = json.dumps(n).encode() if quoted else str(n).encode()
        return self.before + middle + self.after


# --- the folders -------------------------------------------------------------------------------
#
# Each folder is a sound one (the corpus's, or the long sound study's) written whole, then one file
# or several grown in place to their sizes: each grower reads the file as written and writes it again
# with more of what it holds, up to a size in bytes.


def sound_files() -> corpus.Files:
    return corpus.as_written(corpus.derive(corpus.sound()))


def kill_rel(n: int, name: str) -> str:
    return f"kills/{n}/{name}"


def read_value(out: Path, rel: str) -> Any:
    return json.loads((out / rel).read_bytes())


def read_lines(out: Path, rel: str) -> list[bytes]:
    """The file's lines, each with its newline (none when there is no such file)."""
    path = out / rel
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def grow_targets(out: Path, rel: str, limit: int) -> int:
    """``rel`` (a kill.json) listing more targets up to ``limit`` bytes: valid, distinct runs x1, x2, ..., none in
    flight.  Returns how many targets it lists."""
    kill = read_value(out, rel)
    model = dict(
        kill["targets"][0], run=Template.MARK, container=Template.MARK, planSeq=Template.MARK, startSeq=Template.MARK
    )
    parts = compact(model).split(json.dumps(Template.MARK).encode())

    def targets() -> Iterator[bytes]:
        n = 0
        while True:
            n += 1
            run = f"x{n}"
            name = json.dumps(corpus.container(run)).encode()
            number = str(n).encode()
            yield b"".join(
                (parts[0], json.dumps(run).encode(), parts[1], number, parts[2], number, parts[3], name, parts[4])
            )

    return len(kill["targets"]) + fill_member(out / rel, limit, kill, "targets", targets())


def window_of(out: Path, n: int) -> tuple[int, int, str]:
    """Kill ``n``'s window in ns, from its start to its target's result seen, and the target's container."""
    window = read_value(out, kill_rel(n, WINDOW))
    target = read_value(out, kill_rel(n, KILL_JSON))["targets"][0]
    seen = window["targets"][target["run"]]["resultSeenEpoch"]
    return int(window["sinceEpoch"] * 1e9), int(seen * 1e9), target["container"]


def live_events(out: Path, n: int) -> Iterator[bytes]:
    """Events inside kill ``n``'s window, one time each: of its target and of other containers of the study."""
    since, seen, name = window_of(out, n)
    span = seen - since - 2000
    k = 0
    while True:
        k += 1
        when = (since + 1000 + (k * 997) % span) / 1e9  # ~1 ns apart; distinct for a million events
        kind = k % 5
        if kind == 0:  # a forbidden action on the target
            e = corpus.event("start", name, when)
        elif kind == 1:  # a passive one
            e = corpus.event("attach", name, when)
        elif kind == 2:  # a die under the target's name, of another container
            e = corpus.event("die", name, when, exitCode="0")
            e["id"] = e["Actor"]["ID"] = corpus.container_id(f"{name}/{k}")
        else:  # another container of the study created, then started; its run was never planned
            e = corpus.event("create" if kind == 3 else "start", corpus.container(f"z{k // 5}"), when)
        yield jline(dict(e, seenAt=rfc3339_ms(when + 0.002)))


def grow_live(out: Path, n: int, limit: int, tiny: bool = False) -> int:
    """Kill ``n``'s live recording: its own lines, then events in its window (or TINY lines) up to ``limit``."""
    rel = kill_rel(n, LIVE)
    if tiny:
        return grow_tiny(out, rel, limit)
    head = b"".join(read_lines(out, rel))
    return fill(out / rel, limit, head, [], live_events(out, n), b"", b"")


def minimal_events(out: Path, n: int, ours: int = 0) -> Iterator[bytes]:
    """The cheapest valid container events, inside kill ``n``'s window, one time each: a start with an Id and a
    name and nothing else (no ``Type``, ``id``, ``time`` or ``seenAt``; the judge needs none of them).

    Of containers that are not the study's (``o1``, ``o2``, ...: another name, no study label), and with
    ``ours``, every ``ours``-th of the study's own (``<prefix>-<study>-z<k>``, runs never planned: the judge
    keeps the first SEEN_KEPT of those and counts the rest).  A line is read, parsed and looked up whatever
    it holds: what an event costs, at the fewest bytes an event can have (~100).
    """
    since, seen, _ = window_of(out, n)
    span = seen - since - 2000
    # The time a console stamps a live event with (the live recording asks it; the read-back leaves it be).
    seen_at = rfc3339_ms(since / 1e9).encode()
    k = 0
    while True:
        k += 1
        when = since + 1000 + (k * 997) % span  # ~1 ns apart; distinct for a million events
        name = corpus.container(f"z{k}") if ours and k % ours == 0 else f"o{k}"
        yield (
            b'{"Type":"container","Action":"start","timeNano":%d,"Actor":{"ID":"%x","Attributes":{"name":"%s"}},'
            b'"seenAt":"%s"}\n' % (when, k, name.encode(), seen_at)
        )


def grow_events(out: Path, n: int, name: str, limit: int, ours: int = 0) -> int:
    """Kill ``n``'s recording ``name`` (live or read back): its own lines, then minimal events up to ``limit``."""
    rel = kill_rel(n, name)
    return grow_lines(out, rel, limit, minimal_events(out, n, ours), after=True)


TINY = b"0\n"  # the shortest line that is JSON: a number of one digit


def grow_tiny(out: Path, rel: str, limit: int, after: bool = True) -> int:
    """A .jsonl file with TINY lines up to ``limit``, after its own lines or before them; how many.

    What a line costs whatever it holds: the shortest JSON there is, as many as fit, written in blocks.
    """
    own = b"".join(read_lines(out, rel))
    count = (limit - len(own)) // len(TINY)
    f = Sized(out / rel)
    if after:
        f.write(own)
    block = 1 << 16
    for start in range(0, count, block):
        f.write(TINY * min(block, count - start))
    if not after:
        f.write(own)
    f.close()
    return count


def grow_snapshot(out: Path, rel: str, limit: int) -> int:
    """A container snapshot with more containers up to ``limit``: of the study (y1, y3, ...) and others."""
    snap = read_value(out, rel)
    model = corpus.inspect("inforsi-s-y1", corpus.T0)
    model["Id"], model["Name"] = Template.MARK, Template.MARK
    parts = compact(model).split(json.dumps(Template.MARK).encode())

    def containers() -> Iterator[bytes]:
        n = 0
        while True:
            n += 1
            name = corpus.container(f"y{n}") if n % 2 else f"other-{n}"
            yield b"".join(
                (
                    json.dumps(name).encode(),
                    b":",
                    parts[0],
                    json.dumps(corpus.container_id(name)).encode(),
                    parts[1],
                    json.dumps("/" + name).encode(),
                    parts[2],
                )
            )

    items = [member(k, v) for k, v in snap.items()]
    return fill(out / rel, limit, b"{", items, containers(), b",", b"}")


def grow_window(out: Path, rel: str, limit: int) -> int:
    """A container-events-window.json with more targets (runs w1, w2, ...) up to ``limit``."""
    window = read_value(out, rel)
    model = next(iter(window["targets"].values()))
    entry = Template(dict(model, resultSeq=Template.MARK), compacted=True)

    def targets() -> Iterator[bytes]:
        n = 0
        while True:
            n += 1
            yield json.dumps(f"w{n}").encode() + b":" + entry(n)

    return fill_member(out / rel, limit, window, "targets", targets())


def grow_lines(out: Path, rel: str, limit: int, more: Iterator[bytes], after: bool) -> int:
    """A .jsonl file with ``more``'s lines up to ``limit``: after its own lines, or before them."""
    lines = b"".join(read_lines(out, rel))
    head, tail = (lines, b"") if after else (b"", lines)
    return fill(out / rel, limit, head, [], more, b"", tail)


def more_launches() -> Iterator[bytes]:
    """Controllers (other pids) started and ended long before the study's own."""
    at = rfc3339_ms(corpus.T0 - 1e6)
    start = Template({"event": "start", "pid": Template.MARK, "at": at, "resume": True})
    end = Template({"event": "end", "pid": Template.MARK, "at": at, "code": 0, "signal": None})
    pid = 100_000
    while True:
        pid += 1
        yield start(pid) + b"\n"
        yield end(pid) + b"\n"


def more_arms() -> Iterator[bytes]:
    """Arms, missed kills and disarms before the study's own lines."""
    at = rfc3339_ms(corpus.T0 - 1e6)
    arm = jline({"event": "arm", "at": at})
    missed = Template({"event": "missed", "at": at, "run": Template.MARK, "detail": "the run ended before the kill"})
    disarm = jline({"event": "disarm", "at": at})
    n = 0
    while True:
        n += 1
        yield arm
        yield missed(f"d{n}", quoted=True) + b"\n"
        yield disarm


def more_timeline(out: Path) -> Iterator[bytes]:
    """The study's records seen again and again, after its own lines (the judge keeps the first time)."""
    seen = rfc3339_ms(corpus.T0 + 1e7)
    lines = [jline(dict(json.loads(x), seenAt=seen)) for x in read_lines(out, TIMELINE)]  # now: the file is rewritten
    if not lines:
        raise BenchError(f"{TIMELINE} has no line to see again")
    return itertools.cycle(lines)


def grow_research(out: Path, limit: int) -> int:
    """research.json with a list the judge does not read (``notes``) up to ``limit``: its own keys first."""
    research = dict(read_value(out, "research.json"), notes=[])
    note = json.dumps("x" * 100).encode()
    return fill_member(out / "research.json", limit, research, "notes", iter(lambda: note, None))


_SOUND_KILLS: dict[int, dict[str, bytes]] = {}


def sound_kill(src: int) -> dict[str, bytes]:
    """The sound folder's kill ``src``: each file's name and bytes, as corpus.write writes them."""
    if src not in _SOUND_KILLS:
        with tempfile.TemporaryDirectory() as tmp:
            files = sound_files()
            corpus.write({rel: v for rel, v in files.items() if rel.startswith(f"kills/{src}/")}, Path(tmp))
            folder = Path(tmp) / "kills" / str(src)
            _SOUND_KILLS[src] = {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    return _SOUND_KILLS[src]


def copy_kill(out: Path, src: int, n: int, recordings: bool = True) -> None:
    """``kills/<n>/`` holding the sound folder's kill ``src``'s files; without ``recordings``, its event recordings
    empty (no line)."""
    folder = out / "kills" / str(n)
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in sound_kill(src).items():
        (folder / name).write_bytes(data if recordings or name not in RECORDINGS else b"")


def kills_spent(out: Path, sizes: Sizes) -> tuple[int, int]:
    """What the kill folders the current judge reads hold against its budget and, of it, against its recordings'
    budget (as it counts them)."""
    counted = kill_sizes(out, sizes.judge)[: sizes.judge.limit]
    return sum(size for _, size, _ in counted), sum(recorded for _, _, recorded in counted)


def build_sound(out: Path, sizes: Sizes) -> dict[str, Any]:
    del sizes
    corpus.write(sound_files(), out)
    return {}


def build_kill_targets(out: Path, sizes: Sizes) -> dict[str, Any]:
    rel = kill_rel(1, KILL_JSON)
    corpus.write(sound_files(), out)
    return {"listedTargets": grow_targets(out, rel, sizes.cap(rel))}


def build_live(tiny: bool) -> Callable[[Path, Sizes], dict[str, Any]]:
    def build(out: Path, sizes: Sizes) -> dict[str, Any]:
        corpus.write(sound_files(), out)
        return {"addedLines": grow_live(out, 1, sizes.room(out, kill_rel(1, LIVE)), tiny)}

    return build


def build_live_others(out: Path, sizes: Sizes) -> dict[str, Any]:
    """kill 1's live recording up to its cap, as far as the recordings' budget allows, of minimal events of other
    containers inside its window: valid lines, each read and parsed, that concern nothing of the study."""
    corpus.write(sound_files(), out)
    added = grow_events(out, 1, LIVE, sizes.room(out, kill_rel(1, LIVE)))
    return {"addedEvents": added, "recordedBytes": kills_spent(out, sizes)[1]}


def build_recordings_budget(out: Path, sizes: Sizes) -> dict[str, Any]:
    """The recordings' budget spent across kills 1 and 2's live recordings and read-backs, a share each: minimal
    events inside each kill's window, one in OURS_EVERY of the study's own containers (started in the window,
    for runs never planned), the others of other containers.  A kill's read-back holds the same events as its
    live recording, as the runtime's copy of one stream does."""
    corpus.write(sound_files(), out)
    files = [(n, name) for n in (1, 2) for name in (LIVE, READBACK)]
    info: dict[str, Any] = {}
    for i, (n, name) in enumerate(files):
        rel = kill_rel(n, name)
        size = (out / rel).stat().st_size
        share = (sizes.recordings - kills_spent(out, sizes)[1]) // (len(files) - i)
        info[f"events:{rel}"] = grow_events(out, n, name, min(sizes.room(out, rel), size + share), OURS_EVERY)
    info["recordedBytes"] = kills_spent(out, sizes)[1]
    return info


OURS_EVERY = 2  # recordings-budget: one event in this many is of one of the study's containers


# The long sound study: the corpus's sound study (3 rounds, kills at d1 and d3) with more
# diagnosis rounds of its shape, as corpus.build(rounds=R) makes them, written record by record.


def _round_entries(r: int, exps: int) -> list[corpus.Entry]:
    """Round ``r`` (past the ablation rounds) as :func:`corpus.build` writes it."""
    chosen = corpus.experiments(r, exps)
    d = corpus.run_entries(f"d{r}", "diagnosis", f"c{r % 3}", r, chosen)
    settlement = {
        "round": r,
        "run": f"d{r}",
        "dropped": [],
        "judged": {"experiments": [{"id": e, "verdict": "kept", "score": 0.5} for e in chosen]},
    }
    proposal = {"name": "proposeExperiments", "round": r, "output": {"experiments": corpus.experiments(r + 1, exps)}}
    return [
        corpus.Entry("stageOpen", {"stage": "diagnosis", "round": r}),
        corpus.Entry("decision", {"name": "selectDiagnosis", "round": r, "output": {"chosen": chosen}}),
        d["plan"],
        d["charge"],
        d["start"],
        d["result"],
        corpus.Entry("diagnosisSettlement", settlement),
        corpus.Entry("stageOpen", {"stage": "proposal", "round": r}),
        corpus.Entry("decision", proposal),
    ]


def at_kill_text(record: dict[str, Any], first: bool) -> bytes:
    """One element of ledger-at-kill.json laid out as json.dumps(records, indent=2) does (the engine's way)."""
    text = json.dumps(record, indent=2).replace("\n", "\n  ")
    return (b"\n  " if first else b",\n  ") + text.encode()


@dataclass
class LongStudy:
    """The sound study of ``rounds`` rounds: its records, streamed, and the rest of its folder."""

    rounds: int
    first: corpus.Scenario  # corpus.build(rounds=3): the rounds with ablations and both kills
    small: corpus.Files  # derive(build(rounds=4)): the files that do not grow with the rounds
    exps: int = 2

    @classmethod
    def of(cls, rounds: int) -> LongStudy:
        assert rounds >= 4
        return cls(rounds, corpus.build(rounds=3), corpus.derive(corpus.build(rounds=4)))

    @property
    def per_round(self) -> int:
        return len(_round_entries(4, self.exps))

    @property
    def count(self) -> int:
        return len(self.first.entries) + (self.rounds - 3) * self.per_round

    def entries(self) -> Iterator[corpus.Entry]:
        head = self.first.entries
        assert head[0].kind == "studyOpen" and head[-1].kind == "halt"
        runs = sum(1 for e in head if e.kind == "runPlanned") + (self.rounds - 3)
        yield corpus.Entry(
            "studyOpen", dict(head[0].content, budget=runs * corpus.COST, config={"rounds": self.rounds})
        )
        yield from head[1:-1]
        for r in range(4, self.rounds + 1):
            yield from _round_entries(r, self.exps)
        yield head[-1]

    def records(self) -> Iterator[dict[str, Any]]:
        """The ledger's records, as corpus.derive makes them."""
        balance: float = 0
        for i, e in enumerate(self.entries(), 1):
            content = e.content
            if e.kind == "studyOpen":
                balance = content["budget"]
            elif e.kind == "charge" and "balance" not in content:
                balance -= content["amount"]
                content = dict(content, balance=balance)
            yield {"seq": i, "at": rfc3339_ms(corpus.t(i)), "kind": e.kind, "content": content}

    def _later(self, rel: str, key: str) -> float:
        """How long after its record the small folder's last line of ``rel`` is stamped (the halt's, the end's)."""
        return parse_rfc3339(self.small[rel][-1][key]) - corpus.t(len(self.small[LEDGER]))

    def timeline_line(self, r: dict[str, Any]) -> dict[str, Any]:
        small = self.small[TIMELINE]
        if r["seq"] < len(self.first.entries):  # before the halt, in the first three rounds: as in the small folder
            return small[r["seq"] - 1]  # type: ignore[no-any-return]
        seen = rfc3339_ms(corpus.t(r["seq"]) + self._later(TIMELINE, "seenAt"))
        return dict(small[-1], seq=r["seq"], kind=r["kind"], at=r["at"], seenAt=seen)

    def launches(self) -> list[dict[str, Any]]:
        lines = [dict(x) for x in self.small["launches.jsonl"]]
        lines[-1]["at"] = rfc3339_ms(corpus.t(self.count) + self._later("launches.jsonl", "at"))
        return lines

    def at_kill_lengths(self) -> dict[str, int]:
        return {rel: len(v) for rel, v in self.small.items() if rel.endswith("/" + AT_KILL)}

    def files(self) -> corpus.Files:
        """The whole folder in memory (to check it against the corpus at a few rounds)."""
        records = list(self.records())
        files = dict(self.small)
        files[LEDGER] = records
        if TIMELINE in files:
            files[TIMELINE] = [self.timeline_line(r) for r in records]
        files["launches.jsonl"] = self.launches()
        for rel, n in self.at_kill_lengths().items():
            files[rel] = records[:n]
        return files

    def at_kill_bytes(self) -> int:
        """The size of a ledger-at-kill.json holding the whole ledger, as :meth:`write_streams` writes it."""
        return 3 + sum(len(at_kill_text(r, i == 1)) for i, r in enumerate(self.records(), 1))

    def ledger_bytes(self) -> int:
        """The ledger's size, as :meth:`write` writes it."""
        return sum(len(jline(r)) for r in self.records())

    def write_small(self, out: Path) -> None:
        """Every file but the ledger, its timeline and the ledger-at-kill.json files."""
        streamed = {LEDGER, TIMELINE, *self.at_kill_lengths()}
        corpus.write({k: v for k, v in self.small.items() if k not in streamed}, out)
        corpus.write({"launches.jsonl": self.launches()}, out)

    def write_streams(self, out: Path, at_kill: dict[str, int] | None = None) -> dict[str, Any]:
        """The ledger, its timeline and each ledger-at-kill.json, streamed.

        ``at_kill``: for each ledger-at-kill.json named, a size in bytes: it holds the ledger from its first
        record, as many records as fit (all of them if they do), then white space up to that size, instead of
        the ledger to its kill.
        """
        lengths = self.at_kill_lengths()
        limits = at_kill or {}
        ledger = Sized(out / LEDGER)
        timeline = Sized(out / TIMELINE) if TIMELINE in self.small else None
        files = {rel: Sized(out / rel) for rel in lengths}
        held = dict.fromkeys(lengths, 0)
        full = dict.fromkeys(lengths, False)  # a record did not fit: the file holds no more
        for piece in files.values():
            piece.write(b"[")
        count = 0
        for r in self.records():
            count += 1
            ledger.write(jline(r))
            if timeline is not None:
                timeline.write(jline(self.timeline_line(r)))
            text = b""
            for rel, piece in files.items():
                if full[rel] or (rel not in limits and count > lengths[rel]):
                    continue
                text = text or at_kill_text(r, count == 1)
                if rel in limits and piece.size + len(text) + 2 > limits[rel]:
                    full[rel] = True
                    continue
                piece.write(text)
                held[rel] += 1
        for rel, piece in files.items():
            if rel in limits:
                pad(piece, limits[rel] - piece.size - 2)
            piece.write(b"\n]")
            piece.close()
        if timeline is not None:
            timeline.close()
        info: dict[str, Any] = {"records": count, "ledgerBytes": ledger.close()}
        if at_kill:
            info["atKillRecords"] = {rel: held[rel] for rel in limits}
        return info

    def write(self, out: Path) -> dict[str, Any]:
        self.write_small(out)
        return self.write_streams(out)


def pad(out: Sized, n: int) -> None:
    """``n`` spaces (JSON's white space), written a MiB at a time."""
    while n > 0:
        piece = min(n, MiB)
        out.write(b" " * piece)
        n -= piece


def check_long_study() -> None:
    """The long study's folder, built at a few rounds, is corpus.derive(corpus.build(rounds=...)) exactly."""
    for rounds in (4, CHECK_ROUNDS):
        mine, theirs = LongStudy.of(rounds).files(), corpus.derive(corpus.build(rounds=rounds))
        wrong = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        if wrong:
            raise BenchError(
                f"the long sound study at {rounds} rounds is not the corpus's (did tests/corpus.py "
                f"change?): {', '.join(wrong)}"
            )
    with tempfile.TemporaryDirectory() as tmp:
        streamed, written = Path(tmp, "streamed"), Path(tmp, "corpus")
        study = LongStudy.of(CHECK_ROUNDS)
        study.write(streamed)
        corpus.write(corpus.derive(corpus.build(rounds=CHECK_ROUNDS)), written)
        a, b = folder_files(streamed), folder_files(written)
        if sorted(a) != sorted(b):
            raise BenchError(f"the long sound study writes other files than the corpus: {sorted(a)} / {sorted(b)}")
        for rel in b:
            x, y = (streamed / rel).read_bytes(), (written / rel).read_bytes()
            if x != y and not (rel.endswith(".json") and json.loads(x) == json.loads(y)):
                raise BenchError(f"the long sound study's {rel} is not the corpus's")
        if study.ledger_bytes() != a[LEDGER]:
            raise BenchError("the long sound study's ledger_bytes is not the size of the ledger it writes")


def rounds_for(records: int) -> int:
    """The rounds of a long study of about ``records`` records."""
    study = LongStudy.of(4)
    return max(4, 4 + round((records - study.count) / study.per_round))


_WITHIN: dict[int, int] = {}


def rounds_within(limit: int) -> int:
    """The most rounds of a long study whose ledger is at most ``limit`` bytes (found by interpolation)."""
    if limit in _WITHIN:
        return _WITHIN[limit]
    sizes: dict[int, int] = {}

    def size(rounds: int) -> int:
        if rounds not in sizes:
            sizes[rounds] = LongStudy.of(rounds).ledger_bytes()
        return sizes[rounds]

    lo = 4
    if size(lo) > limit:
        raise BenchError(f"even the shortest long study's ledger ({size(lo)} bytes) is past {limit} bytes")
    per = (size(lo + 100) - size(lo)) / 100  # bytes a round
    hi: int | None = None
    while hi is None or hi - lo > 1:
        if hi is None:
            r = lo + max(1, int((limit - size(lo)) / per))
        else:  # between the two, where the line through them reaches the limit
            r = lo + int((limit - size(lo)) * (hi - lo) / (size(hi) - size(lo)))
            r = min(max(r, lo + 1), hi - 1)
        if size(r) <= limit:
            lo = r
            if hi is None and size(lo + 1) > limit:
                hi = lo + 1
        else:
            hi = r
    _WITHIN[limit] = lo
    return lo


def build_ledger(records: int | None) -> Callable[[Path, Sizes], dict[str, Any]]:
    """A long sound study of about ``records`` records; None: as many as fit under the ledger's cap."""

    def build(out: Path, sizes: Sizes) -> dict[str, Any]:
        rounds = rounds_within(sizes.cap(LEDGER)) if records is None else rounds_for(records)
        info = LongStudy.of(rounds).write(out)
        if info["ledgerBytes"] > sizes.full(LEDGER):
            raise BenchError(f"{records} records make a ledger past the current judge's cap ({sizes.full(LEDGER)})")
        return info

    return build


def at_kill_limits(out: Path, sizes: Sizes, whole: int) -> dict[str, int]:
    """Both kills' ledger-at-kill.json sizes, before they are written: the whole ledger (``whole`` bytes), as far as
    its cap and what the kill folders leave of the budget allow (kill 1's first); then kill 1's padded with white
    space up to its cap, as far as the budget allows."""
    first, second = kill_rel(1, AT_KILL), kill_rel(2, AT_KILL)
    left = sizes.budget - kills_spent(out, sizes)[0]  # the kills' other files (no ledger-at-kill.json written yet)
    one = min(whole, sizes.cap(first), left)
    two = min(whole, sizes.cap(second), left - one)
    one += max(0, min(sizes.cap(first) - one, left - one - two))
    if two < 1024:
        raise BenchError(f"the kills' budget leaves {two} bytes for kill 2's {AT_KILL}")
    return {first: one, second: two}


def build_at_kill(out: Path, sizes: Sizes) -> dict[str, Any]:
    """The ledger at its cap; both kills' ledger-at-kill.json the whole ledger, as the engine writes it, as far as
    its cap and the kills' budget allow (kill 1's first); then kill 1's padded with white space up to its cap, as
    far as the budget allows.

    Every record of the ledger compared twice: of what a ledger-at-kill.json may hold, only the records that
    the ledger has are compared (the comparison stops at the first past its end), so the budget goes to
    kill 2's copy before kill 1's white space.
    """
    study = LongStudy.of(rounds_within(sizes.cap(LEDGER)))
    study.write_small(out)
    whole = study.at_kill_bytes()
    info = study.write_streams(out, at_kill_limits(out, sizes, whole))
    info["wholeAtKillBytes"] = whole
    return info


def build_at_kill_element(out: Path, sizes: Sizes) -> dict[str, Any]:
    """kill 1's ledger-at-kill.json: its first record with a field that makes it an element up to the file's cap
    (and ELEMENT_CAP)."""
    rel = kill_rel(1, AT_KILL)
    corpus.write(sound_files(), out)
    records = read_value(out, rel)
    first = dict(records[0], content=dict(records[0]["content"], note=""))
    rest = b"".join(at_kill_text(r, False) for r in records[1:])
    # The file ("[", the element, the rest, "\n]") within its size, the element within ELEMENT_CAP.
    room = min(
        sizes.cap(rel) - 3 - len(at_kill_text(first, True)) - len(rest),
        sizes.judge.caps["ELEMENT_CAP"] - SLACK - len(json.dumps(first, indent=2)),
    )
    first["content"]["note"] = "x" * room
    (out / rel).write_bytes(b"[" + at_kill_text(first, True) + rest + b"\n]")
    return {"elementBytes": len(json.dumps(first, indent=2))}


SNAPSHOTS = ("container-before.json", "container-after-kill.json", "container-before-resume.json")


def build_snapshots(out: Path, sizes: Sizes) -> dict[str, Any]:
    """Every container snapshot of both kills, each up to its cap: containers of the study and others."""
    corpus.write(sound_files(), out)
    rels = [kill_rel(n, f) for n in (1, 2) for f in SNAPSHOTS]
    added = sum(grow_snapshot(out, rel, sizes.cap(rel)) for rel in rels)
    return {"addedContainers": added, "snapshotFiles": len(rels)}


def build_window(out: Path, sizes: Sizes) -> dict[str, Any]:
    """kill 1's container-events-window.json with targets (runs w1, w2, ...) up to its cap."""
    rel = kill_rel(1, WINDOW)
    corpus.write(sound_files(), out)
    return {"addedTargets": grow_window(out, rel, sizes.cap(rel))}


def build_jsonl(
    rel: str, more: Callable[[Path], Iterator[bytes]], after: bool
) -> Callable[[Path, Sizes], dict[str, Any]]:
    """The sound folder with ``rel`` grown to its cap by ``more``'s lines, before its own lines or ``after``."""

    def build(out: Path, sizes: Sizes) -> dict[str, Any]:
        corpus.write(sound_files(), out)
        return {"addedLines": grow_lines(out, rel, sizes.cap(rel), more(out), after)}

    return build


def build_tiny(rel: str, after: bool) -> Callable[[Path, Sizes], dict[str, Any]]:
    """The sound folder with ``rel`` grown to its cap by TINY lines, after its own lines or before them."""

    def build(out: Path, sizes: Sizes) -> dict[str, Any]:
        corpus.write(sound_files(), out)
        return {"addedLines": grow_tiny(out, rel, sizes.cap(rel), after)}

    return build


def fill_kills(out: Path, sizes: Sizes, first: int, grow: Callable[[int, int], None], copy_from: int = 2) -> int:
    """Kill folders from ``first`` on, each grown by ``grow(n, bytes left)``, while the budget lets one in, up to
    the kill-folder limit.

    A kill folder past the sound folder's two is a copy of kill ``copy_from``'s files, its event recordings
    empty when theirs would pass the recordings' budget.  Returns how many kill folders there are.
    """
    n = first
    while n <= sizes.limit:
        if n > 2:
            copy_kill(out, copy_from, n)
            if kills_spent(out, sizes)[1] > sizes.recordings:
                copy_kill(out, copy_from, n, recordings=False)
        left = sizes.budget - kills_spent(out, sizes)[0]
        if left < 0:  # its own files do not fit: it is not let in
            shutil.rmtree(out / "kills" / str(n))
            return n - 1
        grow(n, left)
        if sizes.budget - kills_spent(out, sizes)[0] < 4096:
            return n
        n += 1
    return sizes.limit


def build_kills_budget(out: Path, sizes: Sizes) -> dict[str, Any]:
    """Kill folders up to the budget: each kill.json as large as its cap and the budget allow, each live recording
    as its cap and what the recordings' budget leaves allow.

    Kills 1 and 2 are the sound study's, the others copies of kill 2 (their recordings empty once the
    recordings' budget is spent); each kill.json lists more targets, each live recording holds more events
    in its window (as ``kill-targets`` and ``live-events``): the recordings' budget goes to the first live
    recordings, the rest of the budget to the kill.json files of kill folders in number.
    """
    corpus.write(sound_files(), out)
    targets = events = 0

    def grow(n: int, left: int) -> None:
        nonlocal targets, events
        kill, live = kill_rel(n, KILL_JSON), kill_rel(n, LIVE)
        size = (out / kill).stat().st_size
        limit = min(sizes.cap(kill), size + left)  # kill.json first, then the live recording: what is left
        if limit > size:
            targets += grow_targets(out, kill, limit)
        size = (out / live).stat().st_size
        limit = sizes.room(out, live)
        if limit > size + 1024:
            events += grow_live(out, n, limit)

    count = fill_kills(out, sizes, 1, grow)
    spent, recorded = kills_spent(out, sizes)
    return {
        "killFolders": count,
        "killBytes": spent,
        "recordedBytes": recorded,
        "listedTargets": targets,
        "addedEvents": events,
    }


def build_kills(count: int | None) -> Callable[[Path, Sizes], dict[str, Any]]:
    """The sound folder with kill folders 3, 4, ... beside its two, each holding a copy of kill 2's kill.json only.

    ``count``: the kill folders in all; None: as many as the kills' budget would let in were every one counted
    (the current judge counts and reads the first ``KillFolder.LIMIT``, and one kill stands for the rest).
    A kill folder that holds no file the judge reads counts for nothing against the budget, and a kill
    folder's name may be up to 999 999; but the judge looks at no more than the names of those past the
    limit, and a million folders cost this disk many minutes to write and remove.
    """

    def build(out: Path, sizes: Sizes) -> dict[str, Any]:
        corpus.write(sound_files(), out)
        kill = (out / kill_rel(2, KILL_JSON)).read_bytes()
        n = count
        if n is None:
            n = 2 + (sizes.budget - kills_spent(out, sizes)[0]) // len(kill)
        if n > 999_999:
            raise BenchError(f"{n} kill folders: a kill folder's name has at most 6 digits")
        for k in range(3, n + 1):
            folder = out / "kills" / str(k)
            folder.mkdir()
            (folder / KILL_JSON).write_bytes(kill)
        return {"killFolders": n, "killBytes": kills_spent(out, sizes)[0]}

    return build


def build_kills_limit(out: Path, sizes: Sizes) -> dict[str, Any]:
    """Exactly ``KillFolder.LIMIT`` kill folders, each holding a sound kill's files (kills 1 and 2 the sound
    folder's, the others copies of kill 2): the most kill folders the judge reads whole."""
    corpus.write(sound_files(), out)
    for n in range(3, sizes.limit + 1):
        copy_kill(out, 2, n)
    spent, recorded = kills_spent(out, sizes)
    return {"killFolders": sizes.limit, "killBytes": spent, "recordedBytes": recorded}


def build_whole(out: Path, sizes: Sizes) -> dict[str, Any]:
    """The worst of everything at once, within the caps and the kills' budgets.

    ``ledger-cap``'s study (its ledger at its cap, every record read); its timeline grown to its cap with
    its records seen again, launches.jsonl and arms.jsonl with lines of their own kinds before the study's
    (``timeline``, ``launches``, ``arms``: lines that are not a file's records stop its reading past
    BAD_LINES, so those are no longer the dearest), ledger-watch.jsonl with TINY lines (each of its lines a
    fault of the ledger: past BAD_LINES it is refused, whatever they hold), research.json to its cap.  The
    recordings' budget spent on minimal valid events (``live-others``) in the event recordings (kill 1's live
    recording and read-back, then kill 2's), each up to its cap: an event is the dearest byte of a kill
    folder.  The rest of the kills' budget on both kills' ledger-at-kill.json, the whole ledger each, as far
    as their caps allow (``at-kill``: every record compared, the next dearest); what is still left (with
    --quick, where the copies reach their caps first) on kill.json targets, kill 1's then kill 2's.  Not
    the kill folders in number: past the limit they are not read (``kills-limit``, ``kills-many``).
    """
    study = LongStudy.of(rounds_within(sizes.cap(LEDGER)))
    study.write_small(out)
    info: dict[str, Any] = {}
    for n, name in ((1, LIVE), (1, READBACK), (2, LIVE), (2, READBACK)):
        rel = kill_rel(n, name)
        limit = sizes.room(out, rel)
        if limit > (out / rel).stat().st_size + 1024:
            info[f"events:{rel}"] = grow_events(out, n, name, limit)
    whole = study.at_kill_bytes()
    info.update(study.write_streams(out, at_kill_limits(out, sizes, whole)))
    info["wholeAtKillBytes"] = whole
    for n in (1, 2):
        rel = kill_rel(n, KILL_JSON)
        limit = sizes.room(out, rel)
        if limit > (out / rel).stat().st_size + 1024:
            info[f"targets:{rel}"] = grow_targets(out, rel, limit)
    info["timelineLinesAdded"] = grow_lines(out, TIMELINE, sizes.cap(TIMELINE), more_timeline(out), after=True)
    info["lines:launches.jsonl"] = grow_lines(
        out, "launches.jsonl", sizes.cap("launches.jsonl"), more_launches(), after=False
    )
    info["lines:arms.jsonl"] = grow_lines(out, "arms.jsonl", sizes.cap("arms.jsonl"), more_arms(), after=False)
    info["lines:ledger-watch.jsonl"] = grow_tiny(out, "ledger-watch.jsonl", sizes.cap("ledger-watch.jsonl"), False)
    info["researchNotes"] = grow_research(out, sizes.cap("research.json"))
    info["killFolders"] = len(kill_folders(out))
    info["killBytes"], info["recordedBytes"] = kills_spent(out, sizes)
    return info


@dataclass
class Sizes:
    """The caps the folders are built to (the current judge's), and the sizes of --quick."""

    judge: Judge
    quick: bool

    def full(self, rel: str) -> int:
        """The current judge's cap for ``rel``."""
        cap = self.judge.cap_of(rel)
        if cap is None:
            raise BenchError(f"the current judge has no cap for {rel}")
        return cap

    def cap(self, rel: str) -> int:
        """How large ``rel`` is made: just under its cap, or small with --quick."""
        cap = self.full(rel)
        return (min(cap, QUICK_BYTES) if self.quick else cap) - SLACK

    @property
    def budget(self) -> int:
        """What the kill folders are made to hold at most, together: just under the budget (small with --quick)."""
        budget = self.judge.budget
        assert budget is not None
        return (min(budget, QUICK_BUDGET) if self.quick else budget) - SLACK

    @property
    def recordings(self) -> int:
        """What the kill folders' event recordings are made to hold at most, together: just under their budget
        (small with --quick)."""
        budget = self.judge.recordings_budget
        assert budget is not None
        return (min(budget, QUICK_RECORDINGS) if self.quick else budget) - SLACK

    @property
    def limit(self) -> int:
        """How many kill folders the current judge reads."""
        limit = self.judge.limit
        assert limit is not None
        return limit

    def room(self, out: Path, rel: str) -> int:
        """How large kill file ``rel`` can be made: its size (:meth:`cap`), as far as what the kill folders hold
        leaves of the budget and, for an event recording, of the recordings' budget."""
        path = out / rel
        size = path.stat().st_size if path.exists() else 0
        spent, recorded = kills_spent(out, self)
        limit = min(self.cap(rel), size + self.budget - spent)
        if rel.rsplit("/", 1)[-1] in RECORDINGS:
            limit = min(limit, size + self.recordings - recorded)
        return limit


@dataclass
class Case:
    name: str
    what: str
    build: Callable[[Path, Sizes], dict[str, Any]]
    # The file whose cap its grown file is built to ("budget": the kills' budget; "recordings": their event
    # recordings' budget; "limit": the kill-folder limit, a number of kill folders, not bytes)
    cap: str | None = None
    group: str = ""  # "ledger": a sound study's ledger, "kills": kill folders; for the throughput and the fit
    past_limit: bool = False  # built with more kill folders than the current judge reads (one stands for the rest)


def parse_sizes(text: str, word: str) -> list[int | None]:
    """``100000,cap``: numbers, and ``word`` (None) for as many as the caps let in."""
    return [None if x == word else int(x) for x in text.split(",")]


def cases(ledger_sizes: list[int | None], kill_counts: list[int | None]) -> list[Case]:
    k1 = "kills/1/"
    return [
        Case("sound", "the corpus's sound folder", build_sound),
        Case("kill-targets", "kill 1's kill.json listing targets up to its cap", build_kill_targets, k1 + KILL_JSON),
        Case(
            "live-events", "kill 1's live recording: events in its window up to its cap", build_live(False), k1 + LIVE
        ),
        Case("live-lines", "kill 1's live recording: lines '0' up to its cap", build_live(True), k1 + LIVE),
        Case(
            "live-others",
            "kill 1's live recording: minimal events of other containers up to the recordings' budget",
            build_live_others,
            "recordings",
        ),
        Case(
            "recordings-budget",
            "kills 1 and 2's recordings, live and read back: minimal events (half the study's) up to their budget",
            build_recordings_budget,
            "recordings",
        ),
        *(
            Case(
                "ledger-cap" if n is None else f"ledger-{n}",
                "a sound study, as many ledger records as fit under the ledger's cap"
                if n is None
                else f"a sound study of about {n} ledger records",
                build_ledger(n),
                LEDGER,
                "ledger",
            )
            for n in ledger_sizes
        ),
        Case(
            "ledger-lines",
            "the sound ledger, then lines '0' up to its cap",
            build_tiny(LEDGER, after=True),
            LEDGER,
        ),
        Case(
            "at-kill",
            "ledger-cap with both kills' ledger-at-kill.json the whole ledger, as far as the caps and budget allow",
            build_at_kill,
            k1 + AT_KILL,
        ),
        Case(
            "at-kill-element",
            "kill 1's ledger-at-kill.json: one element up to its cap",
            build_at_kill_element,
            k1 + AT_KILL,
        ),
        Case("snapshots", "both kills' 3 container snapshots, each up to its cap", build_snapshots, k1 + SNAPSHOTS[0]),
        Case("window", "kill 1's container-events-window.json: targets up to its cap", build_window, k1 + WINDOW),
        Case(
            "launches",
            "launches.jsonl up to its cap",
            build_jsonl("launches.jsonl", lambda _out: more_launches(), False),
            "launches.jsonl",
        ),
        Case(
            "launches-lines",
            "launches.jsonl: lines '0' up to its cap, then its own",
            build_tiny("launches.jsonl", after=False),
            "launches.jsonl",
        ),
        Case(
            "arms", "arms.jsonl up to its cap", build_jsonl("arms.jsonl", lambda _out: more_arms(), False), "arms.jsonl"
        ),
        Case("timeline", "timeline.jsonl up to its cap", build_jsonl(TIMELINE, more_timeline, True), TIMELINE),
        Case(
            "timeline-lines",
            "timeline.jsonl: its own lines, then lines '0' up to its cap",
            build_tiny(TIMELINE, after=True),
            TIMELINE,
        ),
        Case(
            "kills-budget",
            "kill folders up to the budget, each kill.json up to its cap, live recordings up to the recordings' budget",
            build_kills_budget,
            "budget",
        ),
        Case(
            "kills-limit",
            "as many kill folders as are read, each a sound kill's files",
            build_kills_limit,
            "limit",
        ),
        *(
            Case(
                "kills-many" if n is None else f"kills-{n}",
                "as many kill folders as the budget would let in were each counted, each a kill.json only"
                if n is None
                else f"{n} kill folders, each past the two a kill.json only",
                build_kills(n),
                "budget",
                "kills",
                past_limit=True,
            )
            for n in kill_counts
        ),
        Case(
            "whole-folder",
            "every file at once, each up to its cap, the kills up to their budgets",
            build_whole,
            "budget",
        ),
    ]


def folder_files(folder: Path) -> dict[str, int]:
    """Every regular file of the folder and its size."""
    return {str(p.relative_to(folder)): p.lstat().st_size for p in sorted(folder.rglob("*")) if p.is_file()}


def kill_folders(folder: Path) -> list[int]:
    """The kill folders' numbers, in order: the directories of ``kills/`` named as a kill folder is."""
    kills = folder / "kills"
    if not kills.is_dir():
        return []
    with os.scandir(kills) as entries:
        return sorted(int(e.name) for e in entries if KILL_NAME.fullmatch(e.name) and e.is_dir(follow_symlinks=False))


def kill_sizes(folder: Path, judge: Judge) -> list[tuple[int, int, int]]:
    """The kill folders ``judge`` counts, in order (the first ``limit`` + 1, or all), and what each counts for
    against its budgets: the bytes of the files it reads there, and of them, those of its event recordings.

    As ``KillFolder.size`` counts them: a file past its cap is refused unread and counts for nothing (for a
    judge without a recordings' budget, that of ``9a64777``, it counted up to its cap).
    """
    out = []
    numbers = kill_folders(folder)
    if judge.limit is not None:
        numbers = numbers[: judge.limit + 1]
    recordings = set(RECORDINGS) if judge.recordings_budget is not None else set()
    for n in numbers:
        total = recorded = 0
        with os.scandir(folder / "kills" / str(n)) as entries:
            for entry in entries:
                cap = judge.cap_of(f"kills/{n}/{entry.name}")
                if cap is None or not entry.is_file(follow_symlinks=False):
                    continue
                size = entry.stat(follow_symlinks=False).st_size
                if judge.recordings_budget is None:
                    total += min(size, cap)
                elif size <= cap:
                    total += size
                    recorded += size if entry.name in recordings else 0
        out.append((n, total, recorded))
    return out


# --- campaigns: studymon report CAMPAIGN ------------------------------------------------------------------------
#
# A campaign folder as studymon explore writes it (engine/explore/campaign.py), built from the corpus's sound folder:
# trial n is that folder as study s-<n> (its containers renamed to match, its auto kill at CAMPAIGN_POINT and
# armed there), with the report.json the current judge gives it; the journal and campaign.json as the explorer
# writes them.  Only the current judge reads campaigns (ae54883 has none: it takes CAMPAIGN for an OUT), so each
# campaign folder is measured with it alone, by the same MEASURE process, and shown in a table of its own.

CAMPAIGN_STUDY = corpus.STUDY
CAMPAIGN_POINT = "after:runStarted/diagnosis"  # the sound folder's auto kill: d1's runStarted
CAMPAIGN_CLASS = "after:runStarted · inFlight diagnosis"
LEFT = {"inFlight": ["diagnosis"], "charged": [], "unrecorded": [], "unsettled": []}  # what a kill there leaves
JOURNAL_LINES = 100_000
QUICK_TRIALS = 200  # campaign-whole with --quick: trials in the journal (the full run: the trial limit)
N_MARK = "@@N@@"
KILL_JSON_1 = "kills/1/kill.json"


def _trial_template() -> str:
    """The sound folder as trial N_MARK's, as JSON text: study s-N_MARK, its containers in that study's stem."""
    files = corpus.as_written(corpus.derive(corpus.sound()))
    arms = files["arms.jsonl"]
    arms[0]["point"] = CAMPAIGN_POINT
    arms[1].update(point=CAMPAIGN_POINT, fromSeq=0)
    files[KILL_JSON_1]["point"] = CAMPAIGN_POINT
    text = json.dumps(files)
    text = text.replace(f"{corpus.PREFIX}-{CAMPAIGN_STUDY}-", f"{corpus.PREFIX}-{CAMPAIGN_STUDY}-{N_MARK}-")
    return text.replace(f'"study": "{CAMPAIGN_STUDY}"', f'"study": "{CAMPAIGN_STUDY}-{N_MARK}"')


@dataclass
class CampaignMaker:
    """Trial folders, journal lines and campaign.json for a campaign of the sound folder's trials."""

    template: str = field(default_factory=_trial_template)
    report: dict[str, Any] | None = None  # report.json of a sound trial (the same checks for each)
    reports: dict[int, dict[str, Any]] = field(default_factory=dict)  # of the trials that are not sound ones

    def trial_files(self, n: int) -> corpus.Files:
        files: corpus.Files = json.loads(self.template.replace(N_MARK, str(n)))
        return files

    def write_trial(self, camp: Path, n: int) -> Path:
        out = camp / "trials" / str(n)
        corpus.write(self.trial_files(n), out)
        if self.report is None:
            from studymon.engine.judge import judge

            self.report = judge(out).report_json()
        (out / "report.json").write_text(json.dumps(self.report, indent=2), encoding="utf-8")
        return out

    def verdict(self, n: int) -> dict[str, Any]:
        """Trial n's verdict as its report.json has it (the journal's and campaign.json's copy)."""
        from studymon.engine.explore.campaign import trial_verdict
        from studymon.engine.judge.report import report_checks

        report = self.reports.get(n, self.report)
        assert report is not None
        return trial_verdict(report_checks(report))

    def line(self, n: int, state: str, detail: str = "") -> dict[str, Any]:
        """Trial n's journal line as the explorer writes it (Trial.as_json)."""
        from studymon.engine.explore.campaign import Trial

        t = Trial(n, f"{CAMPAIGN_STUDY}-{n}", [CAMPAIGN_POINT], CAMPAIGN_CLASS, state=state, detail=detail)
        if state == "done":
            v = self.verdict(n)
            t.ok, t.failed, t.unknown, t.checks = v["ok"], v["failed"], v["unknown"], v["checks"]
            t.exit, t.worker, t.host, t.seconds = (0 if v["ok"] else 1), "tcp://127.0.0.1:40000", "bench", 9.5
        return t.as_json()

    def summary(self, trials: list[dict[str, Any]]) -> dict[str, Any]:
        """campaign.json for these trials (each as its last journal line), as the explorer writes it."""
        from studymon.engine.explore.campaign import Trial, matrix, summary_body

        research = json.loads(self.template)["research.json"]
        plan = {
            "version": 1,
            "study": CAMPAIGN_STUDY,
            "token": "0" * 32,
            "template": {k: v for k, v in research.items() if k != "study"},
            "trace": "trace",
            "points": [{"point": CAMPAIGN_POINT, "class": CAMPAIGN_CLASS, "left": LEFT}],
            "classes": [{"name": CAMPAIGN_CLASS, "candidates": [CAMPAIGN_POINT]}],
            "options": {"all": False, "depth": 1, "maxTrials": None},
        }
        return summary_body(plan, trials, matrix({t["n"]: Trial.from_json(t) for t in trials}))


def write_summary_json(path: Path, body: dict[str, Any]) -> None:
    path.write_text(json.dumps(body, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def write_journal(path: Path, lines: Iterable[dict[str, Any]]) -> int:
    out = Sized(path)
    count = 0
    for line in lines:
        out.write(jline(line))
        count += 1
    out.close()
    return count


def campaign_of(camp: Path, maker: CampaignMaker, done: int) -> list[dict[str, Any]]:
    """``done`` trials, each with its folder, its two journal lines and its campaign.json entry; the trace's
    folder (the sound folder as study s); their last lines."""
    corpus.write(corpus.derive(corpus.sound()), camp / "trace")
    for n in range(1, done + 1):
        maker.write_trial(camp, n)
    planned = [maker.line(n, "planned") for n in range(1, done + 1)]
    ended = [maker.line(n, "done") for n in range(1, done + 1)]
    write_journal(camp / "trials.jsonl", [*planned, *ended])
    write_summary_json(camp / "campaign.json", maker.summary(ended))
    return ended


def _examined(camp: Path, folders: int) -> int:
    """How many of trials 1 to ``folders`` a report examines: those whose folders' weights fit the budget."""
    from studymon.engine.explore.campaign import TRIALS_BUDGET

    spent = 0
    for n in range(1, folders + 1):
        spent += _judged_weight(camp / "trials" / str(n))
        if spent > TRIALS_BUDGET:
            return n - 1
    return folders


def _judged_weight(out: Path) -> int:
    from studymon.engine.explore.campaign import TRIALS_BUDGET, trial_weight

    weight = trial_weight(str(out), True, TRIALS_BUDGET)
    if weight is None:
        raise BenchError(f"{out} alone is past the trial folders' budget")
    return weight


def build_campaign_sound(camp: Path, sizes: Sizes) -> dict[str, Any]:
    del sizes
    campaign_of(camp, CampaignMaker(), 2)
    return {"trials": 2, "trialFolders": 2, "journalLines": 4}


def build_campaign_lines(camp: Path, sizes: Sizes) -> dict[str, Any]:
    """The sound campaign's journal grown to JOURNAL_LINES lines of trials of its own (planned, then done, no
    folder): reading stops at the trial limit."""
    del sizes
    maker = CampaignMaker()
    campaign_of(camp, maker, 2)
    planned, done = maker.line(3, "planned"), maker.line(3, "done")
    more = (
        {**line, "n": n, "id": f"{CAMPAIGN_STUDY}-{n}", "out": f"trials/{n}"}
        for n in range(3, 3 + (JOURNAL_LINES - 4) // 2)
        for line in (planned, done)
    )
    with (camp / "trials.jsonl").open("ab") as fh:
        for line in more:
            fh.write(jline(line))
    lines = sum(1 for _ in (camp / "trials.jsonl").open("rb"))
    return {"trials": 2 + (JOURNAL_LINES - 4) // 2, "trialFolders": 2, "journalLines": lines}


def build_campaign_budget(camp: Path, sizes: Sizes) -> dict[str, Any]:
    """As many sound trial folders as the trial folders' budget lets a report examine, and one more past it."""
    from studymon.engine.explore.campaign import TRIALS_BUDGET

    del sizes
    maker = CampaignMaker()
    corpus.write(corpus.derive(corpus.sound()), camp / "trace")
    spent, n = 0, 0
    while True:
        n += 1
        spent += _judged_weight(maker.write_trial(camp, n))
        if spent > TRIALS_BUDGET:
            break
    planned = [maker.line(k, "planned") for k in range(1, n + 1)]
    ended = [maker.line(k, "done") for k in range(1, n + 1)]
    lines = write_journal(camp / "trials.jsonl", [*planned, *ended])
    write_summary_json(camp / "campaign.json", maker.summary(ended))
    return {"trials": n, "trialFolders": n, "examined": n - 1, "journalLines": lines}


def long_trial(camp: Path, maker: CampaignMaker, n: int, quick: bool) -> dict[str, Any]:
    """Trial n's folder a long sound study whose folder the report counts as just within the trial folders'
    budget (with --quick, a ledger of QUICK_BYTES): its ledger the dearest bytes to judge.  Its research.json and
    arms.jsonl are the trial's, its kill 1 at the trial's point (its ledger keeps the study s's container names:
    its verdict is not the point here, what the judge reads is)."""
    from studymon.engine.explore.campaign import TRIALS_BUDGET

    out = camp / "trials" / str(n)
    limit = QUICK_BYTES if quick else TRIALS_BUDGET // 2
    while True:
        shutil.rmtree(out, ignore_errors=True)
        info = LongStudy.of(rounds_within(limit)).write(out)
        own = maker.trial_files(n)
        kill = json.loads((out / KILL_JSON_1).read_text(encoding="utf-8"))
        corpus.write(
            {
                "research.json": own["research.json"],
                "arms.jsonl": own["arms.jsonl"],
                KILL_JSON_1: {**kill, "point": CAMPAIGN_POINT},
            },
            out,
        )
        weight = _judged_weight(out) + 64 * 1024  # with room for its report.json, written below
        room = TRIALS_BUDGET - SLACK
        if quick or room - 4 * MiB <= weight <= room:
            # Its report.json what the current judge says of it (the journal repeats it): judged the same again,
            # the report finds campaign.json the folders' and writes nothing.
            from studymon.engine.judge import judge

            maker.reports[n] = judge(out).report_json()
            (out / "report.json").write_text(json.dumps(maker.reports[n], indent=2), encoding="utf-8")
            return {**info, "weight": _judged_weight(out)}
        # The ledger and its timeline grow together, the rest stays: scaled, the weight lands just under the room.
        limit = int(limit * room / weight) if weight < room else limit - (weight - room) - 64 * 1024


def build_campaign_ledger(camp: Path, sizes: Sizes) -> dict[str, Any]:
    """One trial, its folder a long sound study as large as the trial folders' budget lets in."""
    maker = CampaignMaker()
    corpus.write(corpus.derive(corpus.sound()), camp / "trace")
    info = long_trial(camp, maker, 1, sizes.quick)
    ended = [maker.line(1, "done")]
    lines = write_journal(camp / "trials.jsonl", [maker.line(1, "planned"), *ended])
    write_summary_json(camp / "campaign.json", maker.summary(ended))
    return {"trials": 1, "trialFolders": 1, "examined": 1, "journalLines": lines, **info}


def build_campaign_whole(camp: Path, sizes: Sizes) -> dict[str, Any]:
    """Everything at once: the trial limit's trials (quick: a few hundred), trial 1 the long study within the
    budget, trial 2 a sound folder past it, the others lost (no folder); the journal up to its cap (the lost
    trials' details long), campaign.json up to its cap with every trial (their details shorter: it is not the
    journal's, which the report finds after reading both whole)."""
    from studymon.engine.explore.campaign import JOURNAL_CAP, SUMMARY_CAP, TRIALS_LIMIT

    maker = CampaignMaker()
    corpus.write(corpus.derive(corpus.sound()), camp / "trace")
    trials = QUICK_TRIALS if sizes.quick else TRIALS_LIMIT
    journal_cap = (min(JOURNAL_CAP, QUICK_BYTES) if sizes.quick else JOURNAL_CAP) - SLACK
    summary_cap = (min(SUMMARY_CAP, QUICK_BYTES) if sizes.quick else SUMMARY_CAP) - SLACK
    info = long_trial(camp, maker, 1, sizes.quick)
    maker.write_trial(camp, 2)  # past the budget (with --quick, within it)
    planned = [maker.line(n, "planned") for n in range(1, trials + 1)]
    fixed = sum(len(jline(x)) for x in planned) + sum(len(jline(maker.line(n, "done"))) for n in (1, 2))
    lost = [maker.line(n, "lost") for n in range(3, trials + 1)]
    room = journal_cap - fixed - sum(len(jline(x)) for x in lost)
    per = max(0, room // max(1, len(lost)))
    ended = [maker.line(1, "done"), maker.line(2, "done")]
    journal = [*planned, *ended, *({**x, "detail": "w" * per} for x in lost)]
    lines = write_journal(camp / "trials.jsonl", journal)
    # campaign.json: every trial (as the journal's last line, but for the lost trials' details), and the plan
    # with as many more candidate points of the trial's class as its cap allows: each validated, and grouped.
    body = maker.summary([*ended, *lost])

    def size(extra: int) -> int:
        points = [f"{CAMPAIGN_POINT}#{k}" for k in range(2, extra + 2)]
        more = [{"point": p, "class": CAMPAIGN_CLASS, "left": LEFT} for p in points]
        body["points"] = body["points"][:1] + more
        body["classes"] = [{"name": CAMPAIGN_CLASS, "candidates": [CAMPAIGN_POINT, *points]}]
        return len((json.dumps(body, ensure_ascii=False, indent=2) + "\n").encode())

    base, per = size(0), size(100) - size(0)
    extra = max(0, (summary_cap - base) * 100 // per)
    while size(extra) > summary_cap:
        extra -= max(1, (size(extra) - summary_cap) * 100 // per)
    write_summary_json(camp / "campaign.json", body)
    return {
        "trials": trials,
        "trialFolders": 2,
        "examined": _examined(camp, 2),
        "journalLines": lines,
        "journalBytes": (camp / "trials.jsonl").stat().st_size,
        "summaryBytes": (camp / "campaign.json").stat().st_size,
        "points": extra + 1,
        **info,
    }


def build_campaign_objects(camp: Path, sizes: Sizes) -> dict[str, Any]:
    """The sound campaign, its campaign.json's points up to its cap of empty objects: the most objects a byte
    of JSON makes (its parse is the report's largest memory), refused at the first."""
    from studymon.engine.explore.campaign import SUMMARY_CAP

    campaign_of(camp, CampaignMaker(), 2)
    cap = (min(SUMMARY_CAP, QUICK_BYTES) if sizes.quick else SUMMARY_CAP) - SLACK
    body = json.loads((camp / "campaign.json").read_text(encoding="utf-8"))
    body["points"] = []
    head = json.dumps(body, separators=(",", ":")).encode()
    opening = head.index(b'"points":[]') + len(b'"points":[')
    fill(camp / "campaign.json", cap, head[:opening], [], itertools.repeat(b"{}"), b",", head[opening:])
    return {"trials": 2, "trialFolders": 2, "journalLines": 4, "summaryBytes": (camp / "campaign.json").stat().st_size}


def campaign_cases() -> list[Case]:
    return [
        Case("campaign-sound", "a campaign of two sound trials", build_campaign_sound, group="campaign"),
        Case(
            "campaign-lines",
            f"the journal: {JOURNAL_LINES} lines of trials (planned, then done), read up to the trial limit",
            build_campaign_lines,
            "trials.jsonl",
            "campaign",
        ),
        Case(
            "campaign-budget",
            "sound trial folders up to the trial folders' budget, and one past it",
            build_campaign_budget,
            "trials",
            "campaign",
        ),
        Case(
            "campaign-ledger",
            "one trial folder, a long study (its verdict ✗), up to the trial folders' budget",
            build_campaign_ledger,
            "trials",
            "campaign",
        ),
        Case(
            "campaign-objects",
            "campaign.json's points up to its cap of empty objects (the most memory a byte of it takes)",
            build_campaign_objects,
            "campaign.json",
            "campaign",
        ),
        Case(
            "campaign-whole",
            "everything at once: the trial limit's trials, the journal and campaign.json up to their caps, "
            "a long study up to the budget",
            build_campaign_whole,
            "trials.jsonl",
            "campaign",
        ),
    ]


def campaign_table(results: list[dict[str, Any]]) -> list[str]:
    rows = [
        (
            f"{'campaign folder':<18}{'MiB':>9}{'trials':>8}{'folders':>9}{'lines':>9}  "
            f"{'current s':>9}{'MiB':>9}{'out KB':>10}  {'exit':>5}  target"
        )
    ]
    for r in results:
        c = r["judge"]
        mark = ">" if c["killed"] else ""
        exits = ",".join("k" if e < 0 else str(e) for e in c["exits"])
        rows.append(
            f"{r['name']:<18}{mib(r['bytes']):>9}{r['info']['trials']:>8}{r['info']['trialFolders']:>9}"
            f"{r['info']['journalLines']:>9}  {mark + format(c['seconds'], '.2f'):>9}{mark + mib(c['peakRss']):>9}"
            f"{c['stdoutBytes'] / 1e3:>10.1f}  {exits:>5}  {r['verdict']}"
        )
    return rows


def campaign_bounds() -> dict[str, int]:
    """What one campaign report reads at most (engine/explore/campaign.py): the folders are built to these."""
    from studymon.engine.explore import campaign as c

    names = (
        "JOURNAL_CAP",
        "SUMMARY_CAP",
        "REPORT_CAP",
        "TRIALS_LIMIT",
        "BAD_LINES",
        "TRIALS_BUDGET",
        "TRIAL_WEIGHT",
        "KILL_WEIGHT",
        "ENTRIES_LIMIT",
    )
    return {name: int(getattr(c, name)) for name in names}


def campaign_lines(results: list[dict[str, Any]], rounds: int) -> list[str]:
    """The campaign folders' table, what each holds, and the target line."""
    bounds = campaign_bounds()
    met = sum(1 for r in results if r["verdict"] == "met")
    said = ", ".join(f"{k} {v / MiB:g} MiB" if k.endswith(("CAP", "BUDGET")) else f"{k} {v}" for k, v in bounds.items())
    facts = [
        f"{r['name']}: {r['what']}; {r['files']} files; " + ", ".join(f"{k} {v}" for k, v in r["info"].items())
        for r in results
    ]
    return [
        "",
        (
            f"studymon report CAMPAIGN on campaign folders within the report's bounds (the current judge only: "
            f"{BASELINE} has no campaigns); {rounds} round(s), medians"
        ),
        f"bounds (engine/explore/campaign.py): {said}",
        "",
        *campaign_table(results),
        "",
        *facts,
        (
            f"target (current judge, each campaign folder under {TARGET_SECONDS:g} s and 1 GiB): met on "
            f"{met}/{len(results)}"
        ),
    ]


def run_campaigns(
    chosen: list[Case],
    judge: Judge,
    sizes: Sizes,
    work: Path,
    limits: Limits,
    args: argparse.Namespace,
    progress: Callable[[str], None],
) -> tuple[list[dict[str, Any]], list[Sample]]:
    """Each campaign folder built, reported on by the current judge (``studymon report CAMPAIGN``), removed."""
    logs = work / "runs"
    results, samples = [], []
    for case in chosen:
        camp = work / "campaigns" / case.name
        camp.mkdir(parents=True)
        built = time.monotonic()
        info = case.build(camp, sizes)
        files = folder_files(camp)
        progress(f"{case.name}: {sum(files.values()) / MiB:.1f} MiB written in {time.monotonic() - built:.1f} s")
        mine = []
        for rnd in range(args.rounds):
            s = judge_once(judge, case.name, rnd, camp, logs, limits)
            took = f"killed at the {s.killed} limit after {s.seconds:.2f} s" if s.killed else f"{s.seconds:.2f} s"
            progress(f"  current: {took}, peak RSS {mib(s.peak_rss)} MiB, exit {s.exit}, {s.stdout_bytes} bytes out")
            mine.append(s)
        samples += mine
        result = {
            "name": case.name,
            "what": case.what,
            "bytes": sum(files.values()),
            "files": len(files),
            "cap": case.cap,
            "info": info,
            "judge": summarize(mine),
        }
        result["verdict"] = verdict(result["judge"])
        results.append(result)
        if not args.keep:
            shutil.rmtree(camp)
            for path in logs.iterdir():
                path.unlink()
    return results, samples


# --- the figures ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    seconds: float
    memory: int


def summarize(samples: list[Sample]) -> dict[str, Any]:
    """One judge's runs on one folder: medians; a killed run counts with its time and peak at the kill."""
    killed = [s.killed for s in samples if s.killed is not None]
    return {
        "runs": len(samples),
        "seconds": statistics.median(s.seconds for s in samples),
        "cpu": statistics.median(s.cpu for s in samples),
        "peakRss": statistics.median(s.peak_rss for s in samples),
        "stdoutBytes": statistics.median(s.stdout_bytes for s in samples),
        "killed": ("time" if "time" in killed else "memory") if killed else None,
        "crashed": any(s.crashed for s in samples),
        "exits": sorted({-1 if s.exit is None else s.exit for s in samples}),
    }


def verdict(current: dict[str, Any]) -> str:
    """The target, for the current judge's figures: met, or by how much it is missed (figure / target)."""
    if current["killed"] is not None:
        return f"MISSED (killed at the {current['killed']} limit)"
    missed = [
        f"{what} x{value / target:.2f}"
        for what, value, target in (
            ("time", current["seconds"], TARGET_SECONDS),
            ("memory", current["peakRss"], TARGET_RSS),
        )
        if value > target
    ]
    return "met" if not missed else "MISSED (" + ", ".join(missed) + ")"


def ratio_text(today: dict[str, Any], current: dict[str, Any], key: str) -> str:
    """today/current; a killed run's figure is a lower bound, and so is (or bounds) the ratio."""
    if today["killed"] and current["killed"]:
        return "-"
    value = f"{today[key] / current[key]:.2f}"
    return (">" if today["killed"] else "<" if current["killed"] else "") + value


def fit(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """Least-squares line y = a·x + b through ``points``, or None without two distinct x."""
    if len({x for x, _ in points}) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    a = sum((x - mx) * (y - my) for x, y in points) / sxx
    return a, my - a * mx


# A group of folders that differ in one size: the info key that counts it, and its unit.
GROUPS = {"ledger": ("records", "records"), "kills": ("killFolders", "kill folders")}


def capacity(results: list[dict[str, Any]], judge: str, group: str) -> dict[str, Any] | None:
    """How large a ledger (records) or how many kill folders this judge handles in TARGET_SECONDS and TARGET_RSS.

    A line through the group's folders it judged to the end (size -> median seconds, -> median peak RSS,
    -> median report bytes), solved for the targets; None with fewer than two such folders.  For kill
    folders, only those within the current judge's kill-folder limit: past it, the kill folders are no
    longer what grows (the line is what a kill folder read costs, up to the limit).
    """
    key = GROUPS[group][0]
    rows = [
        r
        for r in results
        if r["group"] == group
        and r["judges"][judge]["killed"] is None
        # Kill folders: only the folders whose kill folders the current judge all reads (the same for both judges).
        and (group != "kills" or r["killsJudged"]["current"] == r["info"][key])
    ]
    lines = [
        fit([(r["info"][key], r["judges"][judge][y]) for r in rows]) for y in ("seconds", "peakRss", "stdoutBytes")
    ]
    time_line, rss_line, out_line = lines
    if time_line is None or rss_line is None or out_line is None:
        return None
    out: dict[str, Any] = {
        "time": list(time_line),
        "rss": list(rss_line),
        "output": list(out_line),
        "folders": [r["name"] for r in rows],
    }
    if group == "ledger":
        out["bytesPerRecord"] = sum(r["info"]["ledgerBytes"] for r in rows) / sum(r["info"]["records"] for r in rows)
    for name, (a, b), target in (("in10s", time_line, TARGET_SECONDS), ("in1GiB", rss_line, TARGET_RSS)):
        out[name] = (target - b) / a if a > 0 else None  # None: it does not grow with the size
    both = [v for v in (out["in10s"], out["in1GiB"]) if v is not None]
    out["both"] = min(both) if both else None
    return out


def mib(n: float) -> str:
    return f"{n / MiB:.1f}"


def table(results: list[dict[str, Any]]) -> list[str]:
    rows = [
        (
            f"{'folder':<18}{'MiB':>9}  {'today s':>9}{'MiB':>9}{'out KB':>10}  "
            f"{'current s':>9}{'MiB':>9}{'out KB':>10}  {'time x':>7}{'rss x':>7}  {'exit t/c':>9}  target"
        )
    ]
    for r in results:
        t, c = r["judges"]["today"], r["judges"]["current"]
        cells = []
        for s in (t, c):
            mark = ">" if s["killed"] else ""
            cells.append(
                f"{mark + format(s['seconds'], '.2f'):>9}{mark + mib(s['peakRss']):>9}{s['stdoutBytes'] / 1e3:>10.1f}"
            )
        exits = "/".join(",".join("k" if e < 0 else str(e) for e in s["exits"]) for s in (t, c))
        rows.append(
            f"{r['name']:<18}{mib(r['bytes']):>9}  {cells[0]}  {cells[1]}  "
            f"{ratio_text(t, c, 'seconds'):>7}{ratio_text(t, c, 'peakRss'):>7}  {exits:>9}  {r['verdict']}"
        )
    return rows


def unread_text(r: dict[str, Any]) -> str:
    """What each judge leaves unread of the folder by size or number (none: every file read by both)."""
    said = []
    for name in JUDGES:
        u = r["unread"][name]
        parts = [f"{rel} past its cap" for rel in u["overCap"]]
        for key, what in (("pastBudget", "the budget"), ("pastRecordings", "the recordings' budget")):
            if u[key]:
                parts.append(f"{len(u[key])} kill folders past {what}, from {u[key][0]}")
        if u["pastLimit"]:
            parts.append(f"{u['pastLimit']} kill folders past the limit, for which one kill stands")
        if parts:
            said.append(f"{name} does not read " + ", ".join(parts))
    return (
        "; ".join(said)
        if said
        else "both judges read every file (none past its cap, no kill folder past the budgets or the limit)"
    )


def folder_lines(results: list[dict[str, Any]]) -> list[str]:
    lines = []
    for r in results:
        grown = r["largest"]
        if r["cap"] == "budget":
            cap = f" (the kills' budget: {mib(r['capBytes'])} MiB)"
        elif r["cap"] == "recordings":
            cap = f" (the kills' recordings' budget: {mib(r['capBytes'])} MiB)"
        elif r["cap"] == "limit":
            cap = f" (the kill-folder limit: {r['kills']['folders']} read)"
        elif r["cap"]:
            cap = f" (the cap of {r['cap']}: {mib(r['capBytes'])} MiB)"
        else:
            cap = ""
        facts = ", ".join(f"{k} {v}" for k, v in r["info"].items())
        judged = "/".join(str(r["killsJudged"][name]) for name in JUDGES)
        lines.append(
            f"{r['name']}: {r['what']}{cap}; largest file {grown} {mib(r['files'][grown])} MiB"
            + (f"; {facts}" if facts else "")
            + f"; kills judged {judged} (today/current); {unread_text(r)}"
        )
    return lines


def throughput_lines(results: list[dict[str, Any]]) -> list[str]:
    sound = next((r for r in results if r["name"] == "sound"), None)
    lines = []
    for r in results:
        if r["group"] not in GROUPS:
            continue
        for name in JUDGES:
            s = r["judges"][name]
            start = sound["judges"][name]["seconds"] if sound is not None else None
            if r["group"] == "ledger":
                records, size = r["info"]["records"], r["info"]["ledgerBytes"]
                head = f"{r['name']} {name}: {records} records, {size / 1e6:.1f} MB of ledger"
                if s["killed"]:
                    lines.append(f"{head}: killed at the {s['killed']} limit after {s['seconds']:.2f} s")
                    continue
                net = (
                    ""
                    if start is None
                    else f" ({records / (s['seconds'] - start):.0f} records/s past the sound folder's {start:.2f} s)"
                )
                lines.append(
                    f"{head} in {s['seconds']:.2f} s: {records / s['seconds']:.0f} records/s, "
                    f"{size / 1e6 / s['seconds']:.2f} MB/s{net}; {records / s['cpu']:.0f} records a CPU second"
                )
            else:
                folders, kills = r["info"]["killFolders"], r["killsJudged"][name]
                head = f"{r['name']} {name}: {folders} kill folders"
                if kills < folders:  # past the limit: the first read, one kill for the others
                    rest = folders - kills + 1
                    head += f", {kills} kills judged (the first {kills - 1} read, one for the other {rest})"
                if s["killed"]:
                    lines.append(f"{head}: killed at the {s['killed']} limit after {s['seconds']:.2f} s")
                    continue
                net = ""
                if sound is not None:
                    out0 = sound["judges"][name]["stdoutBytes"]
                    net = (
                        f": {1e3 * (s['seconds'] - start) / (kills - 2):.2f} ms and "
                        f"{(s['stdoutBytes'] - out0) / (kills - 2):.0f} bytes of report a kill judged past the sound "
                        f"folder's two ({start:.2f} s, {out0 / 1e3:.1f} KB)"
                    )
                lines.append(f"{head} in {s['seconds']:.2f} s, {s['stdoutBytes'] / 1e3:.1f} KB of report{net}")
    return lines


def capacity_lines(results: list[dict[str, Any]], limit: int | None) -> list[str]:
    """What fits in the targets, by the line through each group's folders; ``limit``: the current judge's
    kill-folder limit (the kill folders' line is through the folders within it)."""
    lines = []
    for group in GROUPS:
        if not any(r["group"] == group for r in results):
            continue
        unit = GROUPS[group][1]
        for name in JUDGES:
            cap = capacity(results, name, group)
            head = f"{'ledger' if group == 'ledger' else 'kill folders'} within {TARGET_SECONDS:g} s and 1 GiB, {name}"
            if cap is None:
                within = "" if group == "ledger" else " within the kill-folder limit"
                lines.append(f"{head}: not fitted (fewer than two {group} folders{within} judged to the end)")
                continue

            def size(n: float | None, cap: dict[str, Any] = cap, group: str = group, unit: str = unit) -> str:
                if n is None:
                    return "- (does not grow)"
                if group == "ledger":
                    return f"{n:.0f} records ({n * cap['bytesPerRecord'] / 1e6:.0f} MB)"
                return f"{n:.0f} {unit}"

            through = f"a line through {', '.join(cap['folders'])}"
            if group == "ledger":
                through += f"; {cap['bytesPerRecord']:.1f} bytes a record"
            tail = "" if group == "ledger" else f"; the report grows by {cap['output'][0]:.0f} bytes a kill folder"
            if group == "kills" and limit is not None:
                tail += f"; the current judge reads the first {limit}"
            lines.append(
                f"{head} ({through}): in {TARGET_SECONDS:g} s {size(cap['in10s'])}; "
                f"in 1 GiB {size(cap['in1GiB'])}; both {size(cap['both'])}{tail}"
            )
    return lines


# --- the run ----------------------------------------------------------------------------------


def interrupted(signum: int, frame: object) -> None:
    """SIGTERM ends the bench as Ctrl-C does: the child killed, the folder removed."""
    del signum, frame
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small folders (a smoke run)")
    p.add_argument("--only", help="comma-separated folder names (ledger: every ledger size)")
    p.add_argument(
        "--ledger-records",
        help=f"ledger sizes in records, comma-separated; cap: as many as fit under its cap (default {LEDGER_RECORDS})",
    )
    p.add_argument(
        "--kill-counts",
        help=(
            "kill folders, comma-separated; budget: as many as the kills' budget would let in were each counted "
            f"(default {KILL_COUNTS})"
        ),
    )
    p.add_argument("--rounds", type=int, default=1, help="runs per judge and folder (default 1; the sound folder 5)")
    p.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds before a run is killed (default 120)")
    p.add_argument(
        "--memory-limit",
        type=float,
        default=MEMORY_LIMIT / GiB,
        help="GiB of resident memory at which a run is killed (default 4)",
    )
    p.add_argument("--baseline", default=BASELINE, help=f"today's judge: a commit (default {BASELINE})")
    p.add_argument("--current", default=None, help="the judge measured: a commit (default: the working tree)")
    p.add_argument("--json", type=Path, help="save every run, the folders and the table to this file")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    p.add_argument("--silent", action="store_true", help="no progress on stderr")
    args = p.parse_args(argv)
    ledger_sizes = parse_sizes(args.ledger_records or (QUICK_LEDGER_RECORDS if args.quick else LEDGER_RECORDS), "cap")
    kill_counts = parse_sizes(args.kill_counts or (QUICK_KILL_COUNTS if args.quick else KILL_COUNTS), "budget")
    if any(n is not None and n < 3 for n in kill_counts):
        p.error("--kill-counts: at least 3 (the sound folder has two kill folders)")
    signal.signal(signal.SIGTERM, interrupted)
    work = Path(tempfile.mkdtemp(prefix="studymon-report-hostile-"))

    def progress(text: str) -> None:
        if not args.silent:
            say(text, sys.stderr)

    try:
        return run(args, cases(ledger_sizes, kill_counts), work, progress)
    except KeyboardInterrupt:
        say("report_hostile: interrupted", sys.stderr)
        return 130
    except BenchError as exc:
        say(f"report_hostile: {exc}", sys.stderr)
        return 2
    finally:
        RUNNING.kill()
        if args.keep:
            say(f"kept {work}", sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def choose(all_cases: list[Case], only: str | None) -> list[Case]:
    """The cases asked for (``--only``: names, a group, ``campaign`` for every campaign folder)."""
    if not only:
        return all_cases
    wanted = set(only.split(","))
    unknown = wanted - {c.name for c in all_cases} - {c.group for c in all_cases}
    if unknown:
        raise BenchError(f"no such folder: {', '.join(sorted(unknown))}")
    return [c for c in all_cases if c.name in wanted or c.group in wanted]


def run(args: argparse.Namespace, all_cases: list[Case], work: Path, progress: Callable[[str], None]) -> int:
    began = time.monotonic()
    load_start = os.getloadavg()[0]
    check_long_study()
    judges = {"today": make_judge("today", args.baseline, work), "current": make_judge("current", args.current, work)}
    measured = judges["current"]
    if any(x is None for x in (measured.file_caps, measured.recordings_budget, measured.limit, measured.bad_lines)):
        raise BenchError(
            f"the current judge ({measured.source}) has not every bound the folders are built to (engine/contract/folder.py: "
            "EvidenceFolder.CAPS, KillFolder.CAPS, KillFolder.BUDGET, KillFolder.RECORDINGS_BUDGET, KillFolder.LIMIT; "
            "engine/judge/read.py: BAD_LINES)"
        )
    sizes = Sizes(judges["current"], args.quick)
    limits = Limits(args.timeout, int(args.memory_limit * GiB))
    asked = choose([*all_cases, *campaign_cases()], args.only)
    chosen = [c for c in asked if c.group != "campaign"]
    logs = work / "runs"
    logs.mkdir()
    samples: list[Sample] = []
    results: list[dict[str, Any]] = []
    for i, case in enumerate(chosen):
        folder = work / "folders" / case.name
        folder.mkdir(parents=True)
        built = time.monotonic()
        info = case.build(folder, sizes)
        files = folder_files(folder)
        progress(f"{case.name}: {sum(files.values()) / MiB:.1f} MiB written in {time.monotonic() - built:.1f} s")
        unread = {name: judges[name].unread(folder) for name in JUDGES}
        mine_unread = unread["current"]
        # The bench's own mistake: every folder is within the current caps and budgets, and only those built to
        # be have more kill folders than it reads.
        if any(mine_unread[k] for k in ("overCap", "pastBudget", "pastRecordings")) or (
            mine_unread["pastLimit"] and not case.past_limit
        ):
            raise BenchError(f"{case.name}: built past the current judge's caps: {mine_unread}")
        spent = kill_sizes(folder, judges["current"])[: judges["current"].limit]  # the kill folders it reads
        mine: list[Sample] = []
        for rnd in range(max(args.rounds, SOUND_RUNS) if case.name == "sound" else args.rounds):
            # Which judge goes first alternates, folder by folder and round by round.
            for name in JUDGES if (i + rnd) % 2 == 0 else JUDGES[::-1]:
                s = judge_once(judges[name], case.name, rnd, folder, logs, limits)
                took = f"killed at the {s.killed} limit after {s.seconds:.2f} s" if s.killed else f"{s.seconds:.2f} s"
                progress(f"  {name}: {took}, peak RSS {mib(s.peak_rss)} MiB, exit {s.exit}, {s.stdout_bytes} bytes out")
                mine.append(s)
        samples += mine
        largest = max(files, key=lambda f: files[f])
        result: dict[str, Any] = {
            "name": case.name,
            "what": case.what,
            "group": case.group,
            "bytes": sum(files.values()),
            "files": files,
            "largest": largest,
            "cap": case.cap,
            "capBytes": cap_bytes(judges["current"], sizes, case.cap),
            "info": info,
            # What the current judge reads of the kill folders: how many, their bytes and their recordings' bytes.
            "kills": {
                "folders": len(spent),
                "bytes": sum(size for _, size, _ in spent),
                "recorded": sum(recorded for _, _, recorded in spent),
            },
            "killsJudged": {name: judges[name].judged_kills(folder) for name in JUDGES},
            "unread": unread,
            "judges": {name: summarize([s for s in mine if s.judge == name]) for name in JUDGES},
        }
        result["verdict"] = verdict(result["judges"]["current"])
        results.append(result)
        if not args.keep:
            shutil.rmtree(folder)
            for path in logs.iterdir():
                path.unlink()
    campaigns, campaign_samples = run_campaigns(
        [c for c in asked if c.group == "campaign"], judges["current"], sizes, work, limits, args, progress
    )
    today, current = judges["today"], judges["current"]
    met = sum(1 for r in results if r["verdict"] == "met")
    crashed = sorted({f"{s.case} ({s.judge})" for s in [*samples, *campaign_samples] if s.crashed})
    sound_runs = max(args.rounds, SOUND_RUNS)
    title = (
        f"studymon report OUT on hostile folders within the caps; today = {describe(today)}, "
        f"current = {describe(current)}; {args.rounds} round(s) (the sound folder {sound_runs}), medians"
    )
    floor = max((s.floor for s in samples), default=0)
    limit = (
        f"limits: a run is killed past {limits.seconds:g} s or {mib(limits.memory)} MiB resident (then its figures "
        f"are lower bounds, marked >, and its exit k); x = today/current; peaks are the judge's own (its rusage; "
        f"started by a process of at most {mib(floor)} MiB)"
    )
    target = f"target (current judge, each folder under {TARGET_SECONDS:g} s and 1 GiB): met on {met}/{len(results)}"
    machine = (
        f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, load average {load_start:.2f} at the "
        f"start, {os.getloadavg()[0]:.2f} at the end; {time.monotonic() - began:.0f} s"
    )
    lines = [
        title,
        *(caps_line(j) for j in (current, today)),
        limit,
        "",
        *table(results),
        "",
        *folder_lines(results),
        "",
        *throughput_lines(results),
        *capacity_lines(results, current.limit),
        target,
        *(campaign_lines(campaigns, args.rounds) if campaigns else []),
        *(["crashed: " + ", ".join(crashed)] if crashed else []),
        machine,
    ]
    say("\n".join(lines))
    if args.json:
        doc = {
            "quick": args.quick,
            "rounds": args.rounds,
            "soundRuns": max(args.rounds, SOUND_RUNS),
            "limits": {"seconds": limits.seconds, "memory": limits.memory},
            "targets": {"seconds": TARGET_SECONDS, "peakRss": TARGET_RSS},
            "judges": {name: asdict(j) for name, j in judges.items()},
            "caps": {
                **(current.file_caps or {}),
                "budget": current.budget,
                "recordingsBudget": current.recordings_budget,
                "limit": current.limit,
                "badLines": current.bad_lines,
            },
            "samples": [asdict(s) for s in samples],
            "folders": results,
            "campaignBounds": campaign_bounds(),
            "campaignSamples": [asdict(s) for s in campaign_samples],
            "campaigns": campaigns,
            "capacity": {group: {name: capacity(results, name, group) for name in JUDGES} for group in GROUPS},
            "loadAverage": [load_start, os.getloadavg()[0]],
        }
        args.json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return 2 if crashed else 0


def cap_bytes(judge: Judge, sizes: Sizes, cap: str | None) -> int | None:
    """What a case is built to, by the current judge's bounds: a file's cap, the kills' budget or their
    recordings' budget, in bytes; None for the kill-folder limit (a number of folders) or no cap."""
    if cap == "budget":
        return judge.budget
    if cap == "recordings":
        return judge.recordings_budget
    if cap is None or cap == "limit":
        return None
    return sizes.full(cap)


def caps_line(judge: Judge) -> str:
    """The caps a judge reads the folder with: engine/contract/folder.py's per file and the kills' budget, or safefile's."""
    if judge.file_caps is None:
        generic = ", ".join(f"{k} {v / MiB:g} MiB" for k, v in judge.caps.items())
        return f"caps ({judge.name}: engine/safefile.py's, by kind of file; no bound on the kill folders): {generic}"
    evidence = ", ".join(f"{k} {v / MiB:g} MiB" for k, v in judge.file_caps["evidence"].items())
    kill = ", ".join(f"{k} {v / MiB:g} MiB" for k, v in judge.file_caps["kill"].items())
    budget = "no bound" if judge.budget is None else f"{judge.budget / MiB:g} MiB"
    recordings = (
        "" if judge.recordings_budget is None else f", their event recordings {judge.recordings_budget / MiB:g} MiB"
    )
    limit = "every kill folder read" if judge.limit is None else f"the first {judge.limit} kill folders read"
    lines = (
        "no bound on lines that are not a file's records"
        if judge.bad_lines is None
        else f"a file with more than {judge.bad_lines} lines that are not its records refused"
    )
    return (
        f"caps ({judge.name}: engine/contract/folder.py's, each file's own): {evidence}; kills/<n>/: {kill}; "
        f"all kill folders {budget}{recordings}; {limit}; {lines}"
    )


def describe(judge: Judge) -> str:
    if judge.source != "working tree":
        return f"{judge.source} ({judge.commit[:7]})"
    extra = f", {len(judge.changed)} package files changed" if judge.changed else ""
    return f"the working tree (HEAD {judge.commit[:7]}{extra})"


if __name__ == "__main__":
    sys.exit(main())
