"""studymon report on the largest hostile evidence folders the size caps let in: today's judge beside the current code.

The contract (docs, §6.5) says that any folder within the size caps of
``engine/safefile.py`` is judged in under 10 s and 1 GiB on a 2-core
machine, and that the report's size follows the ledger, not the attacker.
This bench builds such folders, each from the corpus's sound folder
(``tests/corpus.py``: ``write(derive(sound()), out)``) with one file (or one
kind of file) made as large as its cap allows, and runs the command-line
judge on each, as an operator would: ``python -m studymon.tui.cli report
OUT``, a fresh process per run.  Two judges, in the same run, taking turns
(which goes first alternates from folder to folder and round to round):

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
bench's temporary folder, one at a time, judged, then removed:

* ``sound``: the corpus's sound folder (what starting the judge costs);
* ``kill-targets``: kill 1's ``kill.json`` listing targets up to JSON_CAP
  (valid, distinct run ids, none in flight);
* ``live-events``: kill 1's ``container-events-live.jsonl`` up to JSONL_CAP
  of lifecycle events inside its window: of the target (forbidden actions,
  passive ones, dies of other Ids) and of other containers of the study
  created and started;
* ``live-lines``: the same file up to JSONL_CAP of the shortest lines that
  are JSON (``{}``): what a line costs, whatever it holds;
* ``ledger-<N>``: a sound study of N ledger records (diagnosis rounds of the
  corpus's shape, the same two kills), its timeline as long; judged sound
  (exit 0) by a judge that reads it all.  Records a second and MB a second
  of the ledger, and the ledger that fits in 10 s and in 1 GiB, fitted to
  these sizes;
* ``at-kill``: the first of those ledgers, with both kills'
  ``ledger-at-kill.json`` holding the whole ledger (as the engine writes it,
  indented): every record compared, in two streams beside the ledger's;
* ``at-kill-element``: one element of ``ledger-at-kill.json`` near
  ELEMENT_CAP;
* ``snapshots``: the three container snapshots of both kills, each up to
  JSON_CAP of containers;
* ``window``: kill 1's ``container-events-window.json`` up to JSON_CAP of
  targets;
* ``launches``, ``arms``, ``timeline``: each of those files up to JSONL_CAP
  (controllers started and ended, arms and disarms, records seen).

The caps are read from the current judge's ``safefile`` (today's are printed
too when they differ).  Every file stays at least 4 KiB under its cap.

    python bench/report_hostile.py                    # every folder, 1 round (~15 min on 2 cores today)
    python bench/report_hostile.py --only kill-targets,ledger --ledger-records 500000,2000000
    python bench/report_hostile.py --quick --json rh.json   # smoke run: 256 KiB files, short ledgers (~40 s)

Options: ``--quick``; ``--only NAMES`` (folders by name, ``ledger`` for every
ledger size); ``--ledger-records`` (sizes, default ``100000,250000,1000000``;
``20000,60000`` with ``--quick``); ``--rounds`` (runs per judge and folder,
default 1; the sound folder gets 5); ``--timeout`` (s, default 120);
``--memory-limit`` (GiB, default 4); ``--baseline REV``; ``--current REV``;
``--json FILE`` (every run, the folders and the fitted ledger size);
``--keep`` (keep the temporary folder: folders, outputs, the judges' copies;
its path is printed); ``--silent``.  Exit status 0 when every run was
measured (a killed run is a measurement), 2 when the bench could not measure
(a judge that cannot be set up, a run that crashed), 130 when interrupted.
Every child is killed and the temporary folder removed on the way out, also
on SIGTERM.  Most of a full run's time today is the judges' own: runs killed
at 120 s, ledgers of a million records.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
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

from studymon.engine.clock import parse_rfc3339, rfc3339_ms  # noqa: E402
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
LEDGER_RECORDS = (100_000, 250_000, 1_000_000)
QUICK_LEDGER_RECORDS = (20_000, 60_000)
QUICK_BYTES = 256 * 1024  # a capped file's size with --quick
CAP_NAMES = ("JSON_CAP", "JSONL_CAP", "LEDGER_CAP", "ARRAY_CAP", "LINE_CAP", "ELEMENT_CAP")
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
    caps: dict[str, int] = field(default_factory=dict)
    imported_from: str = ""

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
    probe = (
        "import json, studymon, studymon.tui.cli; from studymon.engine import safefile as s; "
        f"print(json.dumps({{'file': studymon.__file__, 'caps': {{n: getattr(s, n) for n in {CAP_NAMES!r}}}}}))"
    )
    proc = subprocess.run(
        [sys.executable, "-P", "-c", probe], cwd=work, env=judge.env(), capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise BenchError(f"{name} ({judge.source}): the judge does not import:\n{proc.stderr[-2000:]}")
    found = json.loads(proc.stdout)
    if not Path(found["file"]).resolve().is_relative_to(root.resolve()):
        raise BenchError(f"{name}: studymon was imported from {found['file']}, not from {root}")
    judge.caps, judge.imported_from = found["caps"], found["file"]
    return judge


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


def sound_files() -> corpus.Files:
    return corpus.derive(corpus.sound())


def write_except(out: Path, *rels: str) -> tuple[corpus.Files, list[Any]]:
    """The sound folder written without ``rels``; the sound files and the values of ``rels``."""
    files = sound_files()
    corpus.write({k: v for k, v in files.items() if k not in rels}, out)
    return files, [files.get(rel) for rel in rels]


def build_sound(out: Path, sizes: Sizes) -> dict[str, Any]:
    del sizes
    corpus.write(sound_files(), out)
    return {}


def build_kill_targets(out: Path, sizes: Sizes) -> dict[str, Any]:
    rel = "kills/1/kill.json"
    _, (kill,) = write_except(out, rel)
    model = dict(
        kill["targets"][0], run=Template.MARK, container=Template.MARK, planSeq=Template.MARK, startSeq=Template.MARK
    )
    # Each listed target a run of its own, valid and distinct, never in flight: x1, x2, ...
    parts = compact(model).split(json.dumps(Template.MARK).encode())

    def targets() -> Iterator[bytes]:
        n = 0
        while True:
            n += 1
            run = f"x{n}"
            name = json.dumps(corpus.container(run)).encode()
            yield b"".join(
                (
                    parts[0],
                    json.dumps(run).encode(),
                    parts[1],
                    str(n).encode(),
                    parts[2],
                    str(n).encode(),
                    parts[3],
                    name,
                    parts[4],
                )
            )

    added = fill_member(out / rel, sizes.cap("JSON_CAP"), kill, "targets", targets())
    return {"listedTargets": len(kill["targets"]) + added}


def window_of(files: corpus.Files, n: int) -> tuple[int, int, str]:
    """Kill ``n``'s window in ns, from its start to its target's result seen, and the target's container."""
    window = files[f"kills/{n}/container-events-window.json"]
    target = files[f"kills/{n}/kill.json"]["targets"][0]
    seen = window["targets"][target["run"]]["resultSeenEpoch"]
    return int(window["sinceEpoch"] * 1e9), int(seen * 1e9), target["container"]


def live_events(files: corpus.Files) -> Iterator[bytes]:
    """Events inside kill 1's window, one time each: of its target and of other containers of the study."""
    since, seen, name = window_of(files, 1)
    span = seen - since - 2000
    n = 0
    while True:
        n += 1
        when = (since + 1000 + (n * 997) % span) / 1e9  # ~1 ns apart; distinct for a million events
        kind = n % 5
        if kind == 0:  # a forbidden action on the target
            e = corpus.event("start", name, when)
        elif kind == 1:  # a passive one
            e = corpus.event("attach", name, when)
        elif kind == 2:  # a die under the target's name, of another container
            e = corpus.event("die", name, when, exitCode="0")
            e["id"] = e["Actor"]["ID"] = corpus.container_id(f"{name}/{n}")
        else:  # another container of the study created, then started; its run was never planned
            e = corpus.event("create" if kind == 3 else "start", corpus.container(f"z{n // 5}"), when)
        yield jline(dict(e, seenAt=rfc3339_ms(when + 0.002)))


def build_live(out: Path, sizes: Sizes, tiny: bool) -> dict[str, Any]:
    rel = "kills/1/container-events-live.jsonl"
    files, (own,) = write_except(out, rel)
    head = b"".join(jline(x) for x in own)
    limit = sizes.cap("JSONL_CAP")
    if not tiny:
        return {"addedLines": fill(out / rel, limit, head, [], live_events(files), b"", b"")}
    # The shortest line that is JSON, as many as fit: written in blocks, not a line at a time.
    line = b"{}\n"
    count = (limit - len(head)) // len(line)
    out_file = Sized(out / rel)
    out_file.write(head)
    block = 1 << 16
    for start in range(0, count, block):
        out_file.write(line * min(block, count - start))
    out_file.close()
    return {"addedLines": count}


def build_live_events(out: Path, sizes: Sizes) -> dict[str, Any]:
    return build_live(out, sizes, tiny=False)


def build_live_lines(out: Path, sizes: Sizes) -> dict[str, Any]:
    return build_live(out, sizes, tiny=True)


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
        return parse_rfc3339(self.small[rel][-1][key]) - corpus.t(len(self.small["study/ledger.jsonl"]))

    def timeline_line(self, r: dict[str, Any]) -> dict[str, Any]:
        small = self.small["timeline.jsonl"]
        if r["seq"] < len(self.first.entries):  # before the halt, in the first three rounds: as in the small folder
            return small[r["seq"] - 1]  # type: ignore[no-any-return]
        seen = rfc3339_ms(corpus.t(r["seq"]) + self._later("timeline.jsonl", "seenAt"))
        return dict(small[-1], seq=r["seq"], kind=r["kind"], at=r["at"], seenAt=seen)

    def launches(self) -> list[dict[str, Any]]:
        lines = [dict(x) for x in self.small["launches.jsonl"]]
        lines[-1]["at"] = rfc3339_ms(corpus.t(self.count) + self._later("launches.jsonl", "at"))
        return lines

    def at_kill_lengths(self) -> dict[str, int]:
        return {rel: len(v) for rel, v in self.small.items() if rel.endswith("/ledger-at-kill.json")}

    def files(self) -> corpus.Files:
        """The whole folder in memory (to check it against the corpus at a few rounds)."""
        records = list(self.records())
        files = dict(self.small)
        files["study/ledger.jsonl"] = records
        if "timeline.jsonl" in files:
            files["timeline.jsonl"] = [self.timeline_line(r) for r in records]
        files["launches.jsonl"] = self.launches()
        for rel, n in self.at_kill_lengths().items():
            files[rel] = records[:n]
        return files

    def write(self, out: Path, whole_at_kill: bool = False) -> dict[str, Any]:
        """The folder; the ledger, its timeline and each ledger-at-kill.json streamed.

        ``whole_at_kill``: every ledger-at-kill.json holds the whole ledger, not the ledger to its kill.
        """
        lengths = self.at_kill_lengths()
        streamed = {"study/ledger.jsonl", "timeline.jsonl", *lengths}
        corpus.write({k: v for k, v in self.small.items() if k not in streamed}, out)
        corpus.write({"launches.jsonl": self.launches()}, out)
        ledger = Sized(out / "study/ledger.jsonl")
        timeline = Sized(out / "timeline.jsonl") if "timeline.jsonl" in self.small else None
        at_kill = {rel: Sized(out / rel) for rel in lengths}
        for piece in at_kill.values():
            piece.write(b"[")
        count = 0
        for r in self.records():
            count += 1
            ledger.write(jline(r))
            if timeline is not None:
                timeline.write(jline(self.timeline_line(r)))
            text = at_kill_text(r, count == 1) if whole_at_kill or count <= max(lengths.values()) else b""
            for rel, piece in at_kill.items():
                if whole_at_kill or count <= lengths[rel]:
                    piece.write(text)
        for piece in at_kill.values():
            piece.write(b"\n]")
            piece.close()
        if timeline is not None:
            timeline.close()
        return {"records": count, "ledgerBytes": ledger.close()}


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
        LongStudy.of(CHECK_ROUNDS).write(streamed)
        corpus.write(corpus.derive(corpus.build(rounds=CHECK_ROUNDS)), written)
        a, b = folder_files(streamed), folder_files(written)
        if sorted(a) != sorted(b):
            raise BenchError(f"the long sound study writes other files than the corpus: {sorted(a)} / {sorted(b)}")
        for rel in b:
            x, y = (streamed / rel).read_bytes(), (written / rel).read_bytes()
            if x != y and not (rel.endswith(".json") and json.loads(x) == json.loads(y)):
                raise BenchError(f"the long sound study's {rel} is not the corpus's")


def rounds_for(records: int) -> int:
    """The rounds of a long study of about ``records`` records."""
    study = LongStudy.of(4)
    return max(4, 4 + round((records - study.count) / study.per_round))


def build_ledger(records: int) -> Callable[[Path, Sizes], dict[str, Any]]:
    def build(out: Path, sizes: Sizes) -> dict[str, Any]:
        del sizes
        return LongStudy.of(rounds_for(records)).write(out)

    return build


def build_at_kill(records: int) -> Callable[[Path, Sizes], dict[str, Any]]:
    def build(out: Path, sizes: Sizes) -> dict[str, Any]:
        del sizes
        return LongStudy.of(rounds_for(records)).write(out, whole_at_kill=True)

    return build


def build_at_kill_element(out: Path, sizes: Sizes) -> dict[str, Any]:
    """kill 1's ledger-at-kill.json: its first record with a field that makes it an element near ELEMENT_CAP."""
    rel = "kills/1/ledger-at-kill.json"
    _, (records,) = write_except(out, rel)
    first = dict(records[0], content=dict(records[0]["content"], note=""))
    room = sizes.cap("ELEMENT_CAP") - len(json.dumps(first, indent=2))
    first["content"]["note"] = "x" * room
    body = b"".join(at_kill_text(r, i == 0) for i, r in enumerate([first, *records[1:]]))
    (out / rel).write_bytes(b"[" + body + b"\n]")
    return {"elementBytes": len(json.dumps(first, indent=2))}


SNAPSHOTS = ("container-before.json", "container-after-kill.json", "container-before-resume.json")


def build_snapshots(out: Path, sizes: Sizes) -> dict[str, Any]:
    """Every container snapshot of both kills up to JSON_CAP: containers of the study and others."""
    rels = [f"kills/{n}/{f}" for n in (1, 2) for f in SNAPSHOTS]
    _, snaps = write_except(out, *rels)
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

    added = 0
    for rel, snap in zip(rels, snaps, strict=True):
        items = [member(k, v) for k, v in snap.items()]
        added += fill(out / rel, sizes.cap("JSON_CAP"), b"{", items, containers(), b",", b"}")
    return {"addedContainers": added, "snapshotFiles": len(rels)}


def build_window(out: Path, sizes: Sizes) -> dict[str, Any]:
    """kill 1's container-events-window.json with targets (runs w1, w2, ...) up to JSON_CAP."""
    rel = "kills/1/container-events-window.json"
    _, (window,) = write_except(out, rel)
    model = next(iter(window["targets"].values()))
    entry = Template(dict(model, resultSeq=Template.MARK), compacted=True)

    def targets() -> Iterator[bytes]:
        n = 0
        while True:
            n += 1
            yield json.dumps(f"w{n}").encode() + b":" + entry(n)

    return {"addedTargets": fill_member(out / rel, sizes.cap("JSON_CAP"), window, "targets", targets())}


def build_jsonl(
    rel: str, more: Callable[[corpus.Files], Iterator[bytes]], after: bool
) -> Callable[[Path, Sizes], dict[str, Any]]:
    """The sound folder with ``rel`` grown to JSONL_CAP by ``more``'s lines, before its own lines or ``after``."""

    def build(out: Path, sizes: Sizes) -> dict[str, Any]:
        files, (own,) = write_except(out, rel)
        lines = b"".join(jline(x) for x in own or [])
        head, tail = (lines, b"") if after else (b"", lines)
        return {"addedLines": fill(out / rel, sizes.cap("JSONL_CAP"), head, [], more(files), b"", tail)}

    return build


def more_launches(files: corpus.Files) -> Iterator[bytes]:
    """Controllers (other pids) started and ended long before the study's own."""
    del files
    at = rfc3339_ms(corpus.T0 - 1e6)
    start = Template({"event": "start", "pid": Template.MARK, "at": at, "resume": True})
    end = Template({"event": "end", "pid": Template.MARK, "at": at, "code": 0, "signal": None})
    pid = 100_000
    while True:
        pid += 1
        yield start(pid) + b"\n"
        yield end(pid) + b"\n"


def more_arms(files: corpus.Files) -> Iterator[bytes]:
    """Arms, missed kills and disarms before the study's own lines."""
    del files
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


def more_timeline(files: corpus.Files) -> Iterator[bytes]:
    """The study's records seen again and again after its own lines."""
    seen = rfc3339_ms(corpus.T0 + 1e5)
    lines = [
        jline({"seq": r["seq"], "kind": r["kind"], "at": r["at"], "seenAt": seen}) for r in files["study/ledger.jsonl"]
    ]
    while True:
        yield from lines


@dataclass
class Sizes:
    """The caps the folders are built to (the current judge's), and the sizes of --quick."""

    caps: dict[str, int]
    quick: bool

    def cap(self, name: str) -> int:
        """How large a file under ``name`` is made: just under the cap, or small with --quick."""
        if self.quick:
            return min(self.caps[name], QUICK_BYTES) - SLACK
        return self.caps[name] - SLACK


@dataclass
class Case:
    name: str
    what: str
    build: Callable[[Path, Sizes], dict[str, Any]]
    cap: str | None = None  # the cap its grown file is built to
    group: str = ""  # "ledger": a sound study's ledger, for the throughput and the fit


def cases(ledger_sizes: list[int]) -> list[Case]:
    first = ledger_sizes[0]
    jsonl = "JSONL_CAP"
    return [
        Case("sound", "the corpus's sound folder", build_sound),
        Case("kill-targets", "kill 1's kill.json listing targets up to JSON_CAP", build_kill_targets, "JSON_CAP"),
        Case("live-events", "kill 1's live recording: events in its window up to JSONL_CAP", build_live_events, jsonl),
        Case("live-lines", "kill 1's live recording: '{}' lines up to JSONL_CAP", build_live_lines, jsonl),
        *(
            Case(f"ledger-{n}", f"a sound study of about {n} ledger records", build_ledger(n), "LEDGER_CAP", "ledger")
            for n in ledger_sizes
        ),
        Case(
            "at-kill",
            f"ledger-{first} with both kills' ledger-at-kill.json the whole ledger",
            build_at_kill(first),
            "ARRAY_CAP",
        ),
        Case(
            "at-kill-element",
            "kill 1's ledger-at-kill.json: one element near ELEMENT_CAP",
            build_at_kill_element,
            "ELEMENT_CAP",
        ),
        Case("snapshots", "both kills' 3 container snapshots, each up to JSON_CAP", build_snapshots, "JSON_CAP"),
        Case("window", "kill 1's container-events-window.json: targets up to JSON_CAP", build_window, "JSON_CAP"),
        Case("launches", "launches.jsonl up to JSONL_CAP", build_jsonl("launches.jsonl", more_launches, False), jsonl),
        Case("arms", "arms.jsonl up to JSONL_CAP", build_jsonl("arms.jsonl", more_arms, False), jsonl),
        Case("timeline", "timeline.jsonl up to JSONL_CAP", build_jsonl("timeline.jsonl", more_timeline, True), jsonl),
    ]


def folder_files(folder: Path) -> dict[str, int]:
    """Every regular file of the folder and its size."""
    return {str(p.relative_to(folder)): p.lstat().st_size for p in sorted(folder.rglob("*")) if p.is_file()}


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
    """The target, for the current judge's figures."""
    if current["killed"] is not None:
        return f"MISSED (killed at the {current['killed']} limit)"
    missed = [
        what
        for what, over in (("time", current["seconds"] > TARGET_SECONDS), ("memory", current["peakRss"] > TARGET_RSS))
        if over
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


def ledger_capacity(results: list[dict[str, Any]], judge: str) -> dict[str, Any] | None:
    """The ledger (records, bytes) this judge handles in TARGET_SECONDS and in TARGET_RSS.

    A line through the ledger folders it judged to the end (records -> median seconds, records ->
    median peak RSS), solved for the targets; None with fewer than two such folders.
    """
    rows = [r for r in results if r["group"] == "ledger" and r["judges"][judge]["killed"] is None]
    if len(rows) < 2:
        return None
    time_line = fit([(r["info"]["records"], r["judges"][judge]["seconds"]) for r in rows])
    rss_line = fit([(r["info"]["records"], r["judges"][judge]["peakRss"]) for r in rows])
    assert time_line is not None and rss_line is not None
    per_record = sum(r["info"]["ledgerBytes"] for r in rows) / sum(r["info"]["records"] for r in rows)
    out: dict[str, Any] = {
        "bytesPerRecord": per_record,
        "time": list(time_line),
        "rss": list(rss_line),
        "folders": [r["name"] for r in rows],
    }
    for key, (a, b), target in (("in10s", time_line, TARGET_SECONDS), ("in1GiB", rss_line, TARGET_RSS)):
        out[key] = (target - b) / a if a > 0 else None  # None: it does not grow with the ledger
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


def folder_lines(results: list[dict[str, Any]]) -> list[str]:
    lines = []
    for r in results:
        grown = r["largest"]
        cap = f" (its cap {r['cap']}: {mib(r['capBytes'])} MiB)" if r["cap"] else ""
        facts = ", ".join(f"{k} {v}" for k, v in r["info"].items())
        lines.append(
            f"{r['name']}: {r['what']}; largest file {grown} {mib(r['files'][grown])} MiB{cap}"
            + (f"; {facts}" if facts else "")
        )
    return lines


def throughput_lines(results: list[dict[str, Any]]) -> list[str]:
    sound = next((r for r in results if r["name"] == "sound"), None)
    lines = []
    for r in results:
        if r["group"] != "ledger":
            continue
        records, size = r["info"]["records"], r["info"]["ledgerBytes"]
        for name in JUDGES:
            s = r["judges"][name]
            head = f"{r['name']} {name}: {records} records, {size / 1e6:.1f} MB of ledger"
            if s["killed"]:
                lines.append(f"{head}: killed at the {s['killed']} limit after {s['seconds']:.2f} s")
                continue
            net = ""
            if sound is not None:
                start = sound["judges"][name]["seconds"]
                net = f" ({records / (s['seconds'] - start):.0f} records/s past the sound folder's {start:.2f} s)"
            lines.append(
                f"{head} in {s['seconds']:.2f} s: {records / s['seconds']:.0f} records/s, "
                f"{size / 1e6 / s['seconds']:.2f} MB/s{net}; {records / s['cpu']:.0f} records a CPU second"
            )
    return lines


def capacity_lines(results: list[dict[str, Any]]) -> list[str]:
    lines = []
    for name in JUDGES:
        cap = ledger_capacity(results, name)
        head = f"ledger within {TARGET_SECONDS:g} s and 1 GiB, {name}"
        if cap is None:
            lines.append(f"{head}: not fitted (fewer than two ledger folders judged to the end)")
            continue

        def size(n: float | None, cap: dict[str, Any] = cap) -> str:
            return "- (does not grow)" if n is None else f"{n:.0f} records ({n * cap['bytesPerRecord'] / 1e6:.0f} MB)"

        lines.append(
            f"{head} (a line through {', '.join(cap['folders'])}; {cap['bytesPerRecord']:.1f} bytes a record): "
            f"in {TARGET_SECONDS:g} s {size(cap['in10s'])}; in 1 GiB {size(cap['in1GiB'])}; both {size(cap['both'])}"
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
        help="ledger sizes in records, comma-separated (default " + ",".join(map(str, LEDGER_RECORDS)) + ")",
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
    if args.ledger_records:
        ledger_sizes = [int(x) for x in args.ledger_records.split(",")]
    else:
        ledger_sizes = list(QUICK_LEDGER_RECORDS if args.quick else LEDGER_RECORDS)
    signal.signal(signal.SIGTERM, interrupted)
    work = Path(tempfile.mkdtemp(prefix="studymon-report-hostile-"))

    def progress(text: str) -> None:
        if not args.silent:
            say(text, sys.stderr)

    try:
        return run(args, ledger_sizes, work, progress)
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
    if not only:
        return all_cases
    wanted = set(only.split(","))
    unknown = wanted - {c.name for c in all_cases} - {c.group for c in all_cases}
    if unknown:
        raise BenchError(f"no such folder: {', '.join(sorted(unknown))}")
    return [c for c in all_cases if c.name in wanted or c.group in wanted]


def run(args: argparse.Namespace, ledger_sizes: list[int], work: Path, progress: Callable[[str], None]) -> int:
    began = time.monotonic()
    load_start = os.getloadavg()[0]
    check_long_study()
    judges = {"today": make_judge("today", args.baseline, work), "current": make_judge("current", args.current, work)}
    sizes = Sizes(judges["current"].caps, args.quick)
    limits = Limits(args.timeout, int(args.memory_limit * GiB))
    chosen = choose(cases(ledger_sizes), args.only)
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
            "capBytes": sizes.caps[case.cap] if case.cap else None,
            "info": info,
            "judges": {name: summarize([s for s in mine if s.judge == name]) for name in JUDGES},
        }
        result["verdict"] = verdict(result["judges"]["current"])
        results.append(result)
        if not args.keep:
            shutil.rmtree(folder)
            for path in logs.iterdir():
                path.unlink()
    today, current = judges["today"], judges["current"]
    caps = ", ".join(f"{k} {v / MiB:g} MiB" for k, v in current.caps.items())
    if today.caps != current.caps:
        caps += "; today's: " + ", ".join(f"{k} {v / MiB:g} MiB" for k, v in today.caps.items())
    met = sum(1 for r in results if r["verdict"] == "met")
    crashed = sorted({f"{s.case} ({s.judge})" for s in samples if s.crashed})
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
        f"caps (current): {caps}",
        limit,
        "",
        *table(results),
        "",
        *folder_lines(results),
        "",
        *throughput_lines(results),
        *capacity_lines(results),
        target,
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
            "caps": current.caps,
            "samples": [asdict(s) for s in samples],
            "folders": results,
            "capacity": {name: ledger_capacity(results, name) for name in JUDGES},
            "loadAverage": [load_start, os.getloadavg()[0]],
        }
        args.json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return 2 if crashed else 0


def describe(judge: Judge) -> str:
    if judge.source != "working tree":
        return f"{judge.source} ({judge.commit[:7]})"
    extra = f", {len(judge.changed)} package files changed" if judge.changed else ""
    return f"the working tree (HEAD {judge.commit[:7]}{extra})"


if __name__ == "__main__":
    sys.exit(main())
