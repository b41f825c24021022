"""Kill soak: many trials of three concurrent studies, killed, stopped, detached and re-attached at random.

Each trial starts three studies at once on one runtime (Docker or the
process runtime) and treats them as a careless operator on a busy machine
would, then resumes or attaches them until each has ended, and compares
every verdict with what the study really did:

* one study is armed (``--kill-after-first-diagnosis-start``), rotating
  over the three places trial by trial;
* manual kills land at chosen moments: just after a ``charge`` line (before
  the run's ``runStarted``), while a run is in flight, when the run's
  container dies (the study is about to write the result), just after a
  ``runResult`` (before its settlement), or at a random time;
* operator actions: stop then ``run --resume``; detach then ``attach``;
  the console SIGKILLed, then ``attach``; a double Ctrl-C (the console
  leaves the studies to their keepers), then ``attach``;
* the studies are the reference study and honest doubles
  (``tests/doubles/parallel_study.py``, ``patient_study.py``,
  ``early_outage_study.py``), with a broken double
  (``tests/doubles/broken_study.py``: ``rerun``, ``recharge``,
  ``noresult``) mixed in unannounced in about half of the trials.

The first console of a trial is either the engine in this process (an
``studymon.engine.live.supervisor.Supervisor``, whose sessions take ``kill_now``,
``stop`` and ``close`` as a front end's buttons do), or one real
``studymon run --headless`` command per study, which the bench interrupts
with signals.  Every later console is the real command:
``studymon attach --headless OUT...`` for studies whose controller still
runs, ``studymon run --resume --headless ID=OUT...`` for the others, round
after round until every study has its ``report.json``.

What it counts:

* **false pass**: a broken study whose fault fired on a run that a kill
  had as its target, judged ✓ at the end (a fault fired outside any kill,
  after a plain stop, is counted apart: the contract checks re-runs only
  across a kill);
* **false failure**: a study that behaved honestly (an honest one, or a
  broken one whose fault never fired), judged ✗ or ``?`` at the end, or
  not finished after the follow-up rounds;
* **record lost**: a ledger record (by seq) missing from the console's
  ``timeline.jsonl``, a timeline line whose kind is not the ledger's, or a
  kill's ``ledger-at-kill.json`` that is not the ledger's beginning;
* the bench process's fds, threads and RSS, the console commands' largest
  fds, threads and RSS, and the processes and containers left behind by
  each trial, at the start and at the end (containers of a broken double
  that crashed are counted apart: leaving them is that study's doing).

    python bench/soak.py --trials 50 --runtime both --json soak.json
    python bench/soak.py --quick --runtime process --json quick.json

Exit status: 0 targets met; 1 a false pass, a false failure, a lost record
or a leak (fds, threads, RSS not flat, processes or containers left); 2 the
bench itself failed; 130 interrupted.  Children and containers the bench
made are removed on the way out; ``--keep`` keeps the work folder (every
study's evidence folder, and each console's output).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from studymon.engine.contract.spec import StudySpec  # noqa: E402
from studymon.engine.events import ArmChanged, ContainerChanged, KillStep, StudyEvent  # noqa: E402
from studymon.engine.io.notify import Notifier  # noqa: E402
from studymon.engine.launch.launcher import find_running  # noqa: E402
from studymon.engine.launch.prepare import create_fresh  # noqa: E402
from studymon.engine.live.supervisor import Supervisor  # noqa: E402

DOUBLES = ROOT / "tests" / "doubles"
REFSTUDY_TEMPLATE = ROOT / "refstudy" / "research.json"
PREFIX = "soak"
HONEST = {  # kind -> controller program (None: the reference study itself)
    "ref": None,
    "parallel": DOUBLES / "parallel_study.py",
    "patient": DOUBLES / "patient_study.py",
    "outage": DOUBLES / "early_outage_study.py",
}
HONEST_WEIGHTS = {"ref": 4, "parallel": 2, "patient": 1, "outage": 1}
FAULTS = ("rerun", "recharge", "noresult")
BROKEN_SHARE = 0.5  # trials with one broken study among the three
# Small studies, as the tests use: a few diagnosis runs of a couple of seconds.
FAST = {"budget": 40, "runCost": 10, "diagnosisSeconds": 2, "samples": 2000, "ablationSeconds": 3}
QUICK = {"budget": 30, "runCost": 10, "diagnosisSeconds": 1.5, "samples": 2000, "ablationSeconds": 2}
KILL_MOMENTS = ("charge", "inflight", "die", "result", "random")
ENGINE_ACTIONS = ("none", "stop", "detach")
CLI_ACTIONS = ("none", "stop", "leave", "sigkill")
FOLLOW_UP_ROUNDS = 5
TRIAL_DEADLINE = 300.0  # seconds for one trial, follow-ups included
COMMAND_DEADLINE = 180.0
SAMPLE_CONSOLES = 0.5  # seconds between two looks at a console command's fds, threads and RSS
RSS_SLACK = 20 * 2**20  # bytes of RSS growth still "flat" (allocator noise, caches filled once)
EXIT_OK, EXIT_FOUND, EXIT_BENCH, EXIT_INTERRUPTED = 0, 1, 2, 130


class BenchFailed(RuntimeError):
    """The bench could not carry a trial through (not a verdict on the console)."""


# --- plans ---------------------------------------------------------------------------
@dataclass
class StudyPlan:
    """What the operator will do to one study of a trial; the console is told none of it but the arming."""

    id: str
    slot: int
    kind: str  # a key of HONEST, or a fault of the broken double
    armed: bool
    kills: list[tuple[str, int]]  # (moment, nth occurrence of that moment) for manual kills (engine console)
    action: str  # stop / detach / leave / sigkill / none
    action_after: int  # the action comes after this many runStarted lines ...
    action_delay: float  # ... and this many seconds more

    @property
    def broken(self) -> bool:
        return self.kind in FAULTS


@dataclass
class TrialPlan:
    index: int
    runtime: str
    console: str  # "engine" (this process) or "cli" (one studymon command per study)
    studies: list[StudyPlan]


def plan_trial(rng: random.Random, token: str, index: int, runtime: str) -> TrialPlan:
    """A trial's random plan: kinds, arming (rotating), kills and operator actions."""
    console = "cli" if rng.random() < 0.4 else "engine"
    kinds = rng.choices(list(HONEST_WEIGHTS), weights=list(HONEST_WEIGHTS.values()), k=3)
    broken_slot = rng.randrange(3) if rng.random() < BROKEN_SHARE else None
    if broken_slot is not None:
        kinds[broken_slot] = rng.choice(FAULTS)
    armed_slot = index % 3
    studies = []
    for slot, kind in enumerate(kinds):
        kills: list[tuple[str, int]] = []
        actions = ENGINE_ACTIONS if console == "engine" else CLI_ACTIONS
        action = rng.choice(actions)
        if console == "engine":
            for _ in range(rng.choice((0, 1, 1, 2))):
                kills.append((rng.choice(KILL_MOMENTS), rng.randint(1, 3)))
            if kind in FAULTS and slot != armed_slot and not any(m in ("inflight", "die") for m, _ in kills):
                # A broken study shows its fault only when resumed with a run in flight.
                kills.append(("inflight", rng.randint(1, 2)))
        studies.append(StudyPlan(
            id=f"{token}-{runtime[0]}{index:03d}-{'abc'[slot]}", slot=slot, kind=kind, armed=slot == armed_slot,
            kills=kills, action=action, action_after=rng.randint(1, 3), action_delay=round(rng.uniform(0.0, 1.5), 3),
        ))
    if console == "cli" and not any(s.action == "sigkill" for s in studies):
        rng.choice(studies).action = "sigkill"
    return TrialPlan(index, runtime, console, studies)


def template_for(kind: str, runtime: str, sizes: dict[str, Any]) -> dict[str, Any]:
    """The research.json template of one kind of study."""
    data = json.loads(REFSTUDY_TEMPLATE.read_text(encoding="utf-8"))
    data.update(sizes)
    data.update(backend=runtime, containerPrefix=PREFIX)
    if kind in FAULTS:
        data.update(command=[sys.executable, str(DOUBLES / "broken_study.py")], fault=kind)
    elif HONEST[kind] is not None:
        data["command"] = [sys.executable, str(HONEST[kind])]
    else:
        data["command"] = [sys.executable, "-m", "studymon.refstudy"]
    return data


# --- following a ledger --------------------------------------------------------------
class LedgerFollower:
    """Reads a study's ledger as it grows (inotify, own offset), for timing the operator's actions.

    It never writes anything; the console under test reads the same file on its own.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.ledger = out / "study" / "ledger.jsonl"
        self._notifier = Notifier()
        self._offset = 0
        self._partial = b""
        self.counts: dict[str, int] = {}

    def close(self) -> None:
        self._notifier.close()

    async def lines(self) -> Any:
        """Yield each complete ledger record as it is appended, until cancelled."""
        while True:
            self._notifier.watch(self.out)
            self._notifier.watch(self.out / "study")
            for record in self._read():
                self.counts[record.get("kind", "")] = self.counts.get(record.get("kind", ""), 0) + 1
                yield record
            await self._notifier.wait_async(0.05)

    def _read(self) -> list[dict[str, Any]]:
        try:
            with open(self.ledger, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except FileNotFoundError:
            return []
        self._offset += len(data)
        data = self._partial + data
        *whole, self._partial = data.split(b"\n")
        records = []
        for raw in whole:
            with contextlib.suppress(ValueError):
                records.append(json.loads(raw))
        return records


# --- the operator ---------------------------------------------------------------------
@dataclass
class KillTry:
    moment: str
    nth: int
    landed: bool = False
    note: str = ""


class Operator:
    """Acts on one study under the engine console: manual kills at chosen moments, then a stop or a detach."""

    def __init__(self, plan: StudyPlan, session: Any, rng: random.Random) -> None:
        self.plan = plan
        self.session = session
        self.rng = rng
        self.tries = [KillTry(m, n) for m, n in plan.kills]
        self.seen: dict[str, int] = {}
        self.action_done = False
        self.action_note = ""
        self.fired = asyncio.Event()  # the armed kill fired or was missed (or the study was never armed)
        if not plan.armed:
            self.fired.set()
        self._started = time.monotonic()
        self.tasks: list[asyncio.Task[None]] = []

    # Called by the bench's sink, in the loop.
    def on_event(self, event: StudyEvent) -> None:
        if isinstance(event, ArmChanged) and not event.armed:
            self.fired.set()
        elif isinstance(event, KillStep) and event.step == "missed":
            self.fired.set()
        elif isinstance(event, ContainerChanged) and event.action == "die" and event.name.startswith(self.session.prefix):
            self._moment("die")

    def on_record(self, record: dict[str, Any]) -> None:
        kind = record.get("kind")
        if kind == "charge":
            self._moment("charge")
        elif kind == "runStarted":
            self._moment("inflight")
        elif kind == "runResult":
            self._moment("result")

    def _moment(self, moment: str) -> None:
        self.seen[moment] = self.seen.get(moment, 0) + 1
        for t in self.tries:
            if not t.landed and not t.note and t.moment == moment and t.nth == self.seen[moment]:
                if moment == "inflight":
                    self._later(self.rng.uniform(0.05, 1.2), t)
                else:
                    self._kill(t)  # at once: the moment is narrow

    def _later(self, delay: float, t: KillTry) -> None:
        async def go() -> None:
            await asyncio.sleep(delay)
            self._kill(t)

        self.tasks.append(asyncio.ensure_future(go()))

    def _kill(self, t: KillTry) -> None:
        if self.action_done:
            t.note = "after the operator's action"
            return
        if self.session.kill_now(auto_resume=True):
            t.landed = True
        else:
            t.note = "refused (no controller running, or a kill under way)"

    async def random_kills(self) -> None:
        for t in self.tries:
            if t.moment == "random":
                self._later(self.rng.uniform(0.5, 8.0), t)

    async def act_when_due(self, starts: asyncio.Event) -> None:
        """The stop or detach, after the planned runStarted count (and the armed kill, if any)."""
        if self.plan.action == "none":
            return
        await starts.wait()
        await self.fired.wait()
        if self.plan.broken:
            # Its kills come first: the fault shows only when a kill leaves a run in flight.
            while not all(t.landed or t.note for t in self.tries):
                await asyncio.sleep(0.05)
        await asyncio.sleep(self.plan.action_delay)
        self.action_done = True
        if self.plan.action == "stop":
            self.action_note = "stop sent" if self.session.stop() else "stop: not running"
        elif self.plan.action == "detach":
            running = self.session.is_running()
            self.session.close()
            self.action_note = "detached" if running else "detach: not running (closed)"


# --- resources -------------------------------------------------------------------------
def own_resources() -> dict[str, Any]:
    """This process: open fds, threads (Python's and the kernel's), RSS."""
    proc = psutil.Process()
    # The loop's default executor keeps up to min(32, cores + 4) idle workers once
    # they were needed, and the kill protocol keeps its strike threads (two, made at
    # the first kill in this process) for every later kill: pools that fill up once,
    # not leaks, so they are counted apart.
    pool = sum(1 for t in threading.enumerate() if t.name.startswith(("asyncio_", "studymon-strike")))
    return {
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": threading.active_count() - pool,
        "osThreads": proc.num_threads() - pool,
        "executorThreads": pool,
        "rssMB": round(proc.memory_info().rss / 2**20, 1),
    }


class ConsoleWatch:
    """The largest fds, threads and RSS seen in the console commands the bench runs."""

    def __init__(self) -> None:
        self.peak = {"fds": 0, "threads": 0, "rssMB": 0.0}

    def look(self, pid: int) -> None:
        try:
            proc = psutil.Process(pid)
            with proc.oneshot():
                fds, threads, rss = proc.num_fds(), proc.num_threads(), proc.memory_info().rss / 2**20
        except psutil.Error:
            return
        self.peak["fds"] = max(self.peak["fds"], fds)
        self.peak["threads"] = max(self.peak["threads"], threads)
        self.peak["rssMB"] = max(self.peak["rssMB"], round(rss, 1))


def leftovers(work: Path) -> list[dict[str, Any]]:
    """Processes still alive with the bench's work folder in their argv or working folder."""
    marker = str(work)
    found = []
    me = os.getpid()
    for proc in psutil.process_iter(["pid", "cmdline", "cwd", "name"]):
        try:
            if proc.info["pid"] == me:
                continue
            argv = proc.info["cmdline"] or []
            if any(marker in a for a in argv) or (proc.info["cwd"] or "").startswith(marker):
                found.append({"pid": proc.info["pid"], "name": proc.info["name"], "argv": " ".join(argv)[:200]})
        except (psutil.Error, TypeError):
            continue
    return found


def containers(runtime: str, prefix: str) -> list[dict[str, Any]]:
    """The bench's containers still known to the runtime (name, status)."""
    from studymon.engine.runtimes import open_runtime

    rt = open_runtime(runtime)
    try:
        return [{"name": str(c.get("Name", "")).lstrip("/"), "status": (c.get("State") or {}).get("Status")}
                for c in rt.list(prefix)]
    finally:
        with contextlib.suppress(Exception):
            rt.close()


def remove_containers(runtime: str, prefix: str) -> int:
    from studymon.engine.runtimes import open_runtime

    rt = open_runtime(runtime)
    removed = 0
    try:
        for c in rt.list(prefix):
            with contextlib.suppress(Exception):
                rt.remove(str(c.get("Name", "")).lstrip("/"), force=True)
                removed += 1
    finally:
        with contextlib.suppress(Exception):
            rt.close()
    return removed


# --- commands ----------------------------------------------------------------------------
class Commands:
    """The studymon commands the bench started, so that none outlives it."""

    def __init__(self, watch: ConsoleWatch) -> None:
        self.procs: list[asyncio.subprocess.Process] = []
        self.watch = watch

    async def start(self, args: list[str], log: Path, cwd: Path) -> asyncio.subprocess.Process:
        env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
        with open(log, "ab") as fh:
            fh.write(f"$ studymon {' '.join(args)}\n".encode())
            fh.flush()
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "studymon.tui.cli", *args, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                stdout=fh, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        self.procs.append(proc)
        return proc

    async def wait(self, proc: asyncio.subprocess.Process, deadline: float = COMMAND_DEADLINE) -> int:
        end = time.monotonic() + deadline
        while proc.returncode is None:
            self.watch.look(proc.pid)
            if time.monotonic() > end:
                self.kill(proc)
                await proc.wait()
                raise BenchFailed(f"studymon command pid {proc.pid} did not end within {deadline:.0f} s")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), SAMPLE_CONSOLES)
        self.procs.remove(proc)
        return proc.returncode

    @staticmethod
    def kill(proc: asyncio.subprocess.Process) -> None:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)

    def kill_all(self) -> None:
        for proc in self.procs:
            self.kill(proc)


# --- one trial -----------------------------------------------------------------------------
@dataclass
class StudyResult:
    id: str
    kind: str
    armed: bool
    plan: dict[str, Any]
    verdict: str = "unfinished"  # ✓, ✗, ?, unfinished
    failing: list[str] = field(default_factory=list)
    fault_fired: bool = False
    fault_on_target: bool = False
    kills: int = 0
    manual_kills: int = 0
    ends: int = 0  # kill folders of ends the console did not make (a stop or a crash with work unfinished)
    kill_landings: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0
    lost: list[str] = field(default_factory=list)
    action: str = ""
    follow_ups: list[str] = field(default_factory=list)
    judged: str = ""  # honest / broken / broken-outside-kill / broken-unexercised


@dataclass
class TrialResult:
    index: int
    runtime: str
    console: str
    seconds: float
    studies: list[StudyResult]
    leftover_processes: list[dict[str, Any]]
    leftover_containers: list[dict[str, Any]]
    resources: dict[str, Any]
    console_peak: dict[str, Any]


class Trial:
    """Runs one :class:`TrialPlan` to the end of every study and checks what came of it."""

    def __init__(self, plan: TrialPlan, folder: Path, sizes: dict[str, Any], rng: random.Random,
                 commands: Commands) -> None:
        self.plan = plan
        self.folder = folder
        self.sizes = sizes
        self.rng = rng
        self.commands = commands
        self.specs = {s.id: StudySpec(s.id, folder / s.id) for s in plan.studies}
        self.templates: dict[str, Path] = {}
        self.notes: dict[str, list[str]] = {s.id: [] for s in plan.studies}
        self.operators: dict[str, Operator] = {}
        self.log = folder / "consoles.log"

    async def run(self) -> list[StudyResult]:
        self.folder.mkdir()
        for s in self.plan.studies:
            template = template_for(s.kind, self.plan.runtime, self.sizes)
            path = self.folder / f"template-{s.id}.json"
            path.write_text(json.dumps(template), encoding="utf-8")
            self.templates[s.id] = path
        if self.plan.console == "engine":
            for s in self.plan.studies:
                create_fresh([self.specs[s.id]], json.loads(self.templates[s.id].read_text()), self.plan.runtime)
            await self.engine_console()
        else:
            await self.cli_consoles()
        await self.follow_up()
        return [self.judge(s) for s in self.plan.studies]

    # The first console: the engine, in this process.
    async def engine_console(self) -> None:
        operators = self.operators

        def sink(event: StudyEvent) -> None:
            op = operators.get(event.study)
            if op is not None:
                op.on_event(event)

        sup = Supervisor(sink)
        followers: list[LedgerFollower] = []
        tasks: list[asyncio.Task[Any]] = []
        for s in self.plan.studies:
            session = sup.add(self.specs[s.id], resume=False, armed=s.armed)
            operators[s.id] = Operator(s, session, self.rng)
        running = asyncio.ensure_future(sup.run())
        try:
            for s in self.plan.studies:
                op = operators[s.id]
                follower = LedgerFollower(self.specs[s.id].out)
                followers.append(follower)
                starts = asyncio.Event()
                tasks.append(asyncio.ensure_future(self._feed(follower, op, starts, s.action_after)))
                tasks.append(asyncio.ensure_future(op.act_when_due(starts)))
                await op.random_kills()
            done, _ = await asyncio.wait({running}, timeout=TRIAL_DEADLINE)
            if not done:
                raise BenchFailed(f"trial {self.plan.index}: the engine console did not end within {TRIAL_DEADLINE:.0f} s")
            for result in running.result():
                self.notes[result.study].append(
                    "engine console: " + ("finished" if result.finished else
                                          ("detached" if result.detached else f"unfinished ({result.message})")))
        finally:
            for t in tasks + [t for op in operators.values() for t in op.tasks]:
                t.cancel()
            await asyncio.gather(*tasks, *[t for op in operators.values() for t in op.tasks], return_exceptions=True)
            for f in followers:
                f.close()
            if not running.done():
                running.cancel()
                await asyncio.gather(running, return_exceptions=True)
                for session in sup.sessions.values():  # the study is the bench's to clean up now
                    if session.controller is not None and session.controller.ending is None:
                        session.controller.kill()

    @staticmethod
    async def _feed(follower: LedgerFollower, op: Operator, starts: asyncio.Event, after: int) -> None:
        async for record in follower.lines():
            op.on_record(record)
            if record.get("kind") == "runStarted" and follower.counts.get("runStarted", 0) >= after:
                starts.set()

    # The first console: one real studymon command per study, interrupted by signals.
    async def cli_consoles(self) -> None:
        procs: dict[str, asyncio.subprocess.Process] = {}
        for s in self.plan.studies:
            args = ["run", "--headless", "--template", str(self.templates[s.id])]
            if s.armed:
                args += ["--kill-after-first-diagnosis-start", s.id]
            args.append(f"{s.id}={self.specs[s.id].out}")
            procs[s.id] = await self.commands.start(args, self.log, self.folder)
        acts = [asyncio.ensure_future(self._signal_when_due(s, procs[s.id])) for s in self.plan.studies]
        try:
            for s in self.plan.studies:
                code = await self.commands.wait(procs[s.id], TRIAL_DEADLINE)
                self.notes[s.id].append(f"studymon run: exit {code}")
        finally:
            for a in acts:
                a.cancel()
            await asyncio.gather(*acts, return_exceptions=True)

    async def _signal_when_due(self, s: StudyPlan, proc: asyncio.subprocess.Process) -> None:
        if s.action == "none":
            return
        follower = LedgerFollower(self.specs[s.id].out)
        try:
            async for record in follower.lines():
                if record.get("kind") == "runStarted" and follower.counts["runStarted"] >= s.action_after:
                    break
            if s.armed:
                # After the armed kill has fired: from inside its window, until a little after the resume.
                kill_json = self.specs[s.id].out / "kills" / "1" / "kill.json"
                while not kill_json.exists() and proc.returncode is None:
                    await asyncio.sleep(0.02)
            await asyncio.sleep(s.action_delay)
            if proc.returncode is not None:
                self.notes[s.id].append(f"{s.action}: the console had ended already")
                return
            if s.action == "sigkill":
                os.kill(proc.pid, signal.SIGKILL)
            else:
                os.kill(proc.pid, signal.SIGINT)
                if s.action == "leave":
                    await asyncio.sleep(self.rng.uniform(0.05, 0.8))
                    if proc.returncode is None:
                        os.kill(proc.pid, signal.SIGINT)
            self.notes[s.id].append(f"{s.action} sent")
        finally:
            follower.close()

    # Later consoles: the real studymon command, until every study has its report.
    async def follow_up(self) -> None:
        for round_ in range(1, FOLLOW_UP_ROUNDS + 1):
            attach, resume = [], []
            for s in self.plan.studies:
                out = self.specs[s.id].out
                if (out / "report.json").exists():
                    continue
                controller = find_running(out)
                if controller is not None:
                    controller.release()
                    attach.append(s)
                else:
                    resume.append(s)
            if not attach and not resume:
                return
            started = []
            if attach:
                started.append(("attach", attach, await self.commands.start(
                    ["attach", "--headless", *[str(self.specs[s.id].out) for s in attach]], self.log, self.folder)))
            if resume:
                started.append(("resume", resume, await self.commands.start(
                    ["run", "--resume", "--headless", *[f"{s.id}={self.specs[s.id].out}" for s in resume]],
                    self.log, self.folder)))
            for what, studies, proc in started:
                code = await self.commands.wait(proc)
                for s in studies:
                    self.notes[s.id].append(f"round {round_}: {what}, exit {code}")
            if any(code == 2 for code in (p.returncode for _, _, p in started)):
                await asyncio.sleep(1.0)  # a refusal (a keeper still letting go): give it a moment

    # --- the verdicts ---------------------------------------------------------------
    def judge(self, s: StudyPlan) -> StudyResult:
        out = self.specs[s.id].out
        op = self.operators.get(s.id)
        r = StudyResult(s.id, s.kind, s.armed, asdict(s), action=s.action, follow_ups=self.notes[s.id])
        if op is not None:
            r.action = f"{s.action}: {op.action_note or 'not reached'}"
            r.kill_landings = [asdict(t) for t in op.tries]
        report_path = out / "report.json"
        if report_path.exists():
            report = json.loads(report_path.read_text(encoding="utf-8"))
            r.verdict = {True: "✓", False: "✗", None: "?"}[report.get("ok")]
            r.failing = [f"{c.get('scope', '')} {c['name']}: {c.get('detail', '')}" for c in report.get("checks", [])
                         if c.get("ok") is not True]
        ledger = read_ledger(out / "study" / "ledger.jsonl")
        r.records = len(ledger)
        targets: set[str] = set()
        kills_dir = out / "kills"
        for folder in sorted(kills_dir.iterdir() if kills_dir.is_dir() else [], key=lambda p: p.name):
            kill_path = folder / "kill.json"
            if not kill_path.is_file():
                continue
            kill = json.loads(kill_path.read_text(encoding="utf-8"))
            if kill.get("trigger") in ("crash", "stop"):
                r.ends += 1  # an end the console did not make, judged as a kill (contract §7)
            else:
                r.kills += 1
                r.manual_kills += kill.get("trigger") == "manual"
            runs = [t.get("run") for t in kill.get("targets") or []]
            targets.update(runs)
            before = int(kill.get("beforeKillSeq") or 0)
            last = ledger.get(before, {}).get("kind") if before else None
            r.kill_landings.append({"kill": folder.name, "trigger": kill.get("trigger"), "targets": runs,
                                    "afterKind": last, "landing": landing(ledger, before)})
            r.lost += at_kill_losses(folder, ledger)
        r.lost += timeline_losses(out, ledger)
        if s.broken:
            fired = fault_runs(out / "study.log", s.kind)
            r.fault_fired = bool(fired)
            r.fault_on_target = bool(fired & targets)
            r.judged = ("broken" if r.fault_on_target else "broken-outside-kill" if r.fault_fired
                        else "broken-unexercised")
        else:
            r.judged = "honest"
        return r


def read_ledger(path: Path) -> dict[int, dict[str, Any]]:
    """The ledger's records by seq (the last of a repeated seq wins: a repeat is the console's to judge)."""
    records: dict[int, dict[str, Any]] = {}
    with contextlib.suppress(FileNotFoundError):
        for raw in path.read_bytes().split(b"\n"):
            with contextlib.suppress(ValueError, AttributeError, TypeError):
                rec = json.loads(raw)
                records[int(rec["seq"])] = rec
    return records


def landing(ledger: dict[int, dict[str, Any]], before: int) -> str:
    """Where in a run's life a kill landed, from the last record before it."""
    kind = ledger.get(before, {}).get("kind")
    after = ledger.get(before + 1, {}).get("kind")
    if kind == "charge":
        return "between charge and runStarted"
    if kind == "runResult":
        return "between runResult and its settlement"
    if kind == "runStarted" and after == "runResult":
        return "run in flight, just before its result"
    if kind == "runStarted":
        return "run in flight"
    return f"after {kind}" if kind else "before the first record"


def timeline_losses(out: Path, ledger: dict[int, dict[str, Any]]) -> list[str]:
    """Ledger records the console never put in ``timeline.jsonl``, and timeline lines that are not the ledger's."""
    seen: dict[int, str] = {}
    with contextlib.suppress(FileNotFoundError):
        for raw in (out / "timeline.jsonl").read_bytes().splitlines():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                line = json.loads(raw)
                seen[int(line["seq"])] = line.get("kind")
    lost = [f"seq {seq} ({rec.get('kind')}) not in timeline.jsonl" for seq, rec in sorted(ledger.items()) if seq not in seen]
    lost += [f"timeline seq {seq} says {kind}, the ledger {ledger[seq].get('kind')}"
             for seq, kind in sorted(seen.items()) if seq in ledger and ledger[seq].get("kind") != kind]
    lost += [f"timeline seq {seq} is not in the ledger" for seq in sorted(seen) if seq not in ledger]
    return lost


def at_kill_losses(folder: Path, ledger: dict[int, dict[str, Any]]) -> list[str]:
    """A kill's ``ledger-at-kill.json`` must be the ledger's beginning, to the record."""
    path = folder / "ledger-at-kill.json"
    if not path.is_file():
        return []  # a missing file is the kill checks' to judge
    try:
        at_kill = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return [f"kills/{folder.name}/ledger-at-kill.json is not JSON"]
    lost = []
    for i, rec in enumerate(at_kill if isinstance(at_kill, list) else [], start=1):
        seq = rec.get("seq") if isinstance(rec, dict) else None
        if seq != i or ledger.get(i, {}).get("kind") != rec.get("kind"):
            lost.append(f"kills/{folder.name}/ledger-at-kill.json record {i} is not the ledger's")
            break
    return lost


def fault_runs(log: Path, fault: str) -> set[str]:
    """The runs on which the broken double's fault fired, from its own log lines."""
    runs: set[str] = set()
    with contextlib.suppress(FileNotFoundError):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if f"[fault {fault}]" in line:
                words = line.split()
                if "run" in words and words.index("run") + 1 < len(words):
                    runs.add(words[words.index("run") + 1])
    return runs


# --- the run ---------------------------------------------------------------------------------
def summarise(trials: list[TrialResult], resources: dict[str, Any], judge_flat: bool) -> dict[str, Any]:
    studies = [s for t in trials for s in t.studies]
    verdicts: dict[str, dict[str, int]] = {}
    for s in studies:
        key = s.kind if s.judged == "honest" else f"{s.kind} ({s.judged.replace('broken-', '').replace('broken', 'fault on a kill target')})"
        verdicts.setdefault(key, {})
        verdicts[key][s.verdict] = verdicts[key].get(s.verdict, 0) + 1
    false_passes = [f"trial {t.index} {s.id} ({s.kind})" for t in trials for s in t.studies
                    if s.judged == "broken" and s.verdict == "✓"]
    false_failures = [f"trial {t.index} {s.id} ({s.kind}): {s.verdict} {'; '.join(s.failing) or ''}".strip()
                      for t in trials for s in t.studies
                      if s.judged in ("honest", "broken-unexercised") and s.verdict != "✓"]
    outside = [f"trial {t.index} {s.id} ({s.kind}): {s.verdict}" for t in trials for s in t.studies
               if s.judged == "broken-outside-kill"]
    lost = [f"trial {t.index} {s.id}: {x}" for t in trials for s in t.studies for x in s.lost]
    landings: dict[str, int] = {}
    for s in studies:
        for k in s.kill_landings:
            if "landing" in k:
                name = f"{k['trigger']}: {k['landing']}"
                landings[name] = landings.get(name, 0) + 1
    per_runtime = {rt: sum(1 for t in trials if t.runtime == rt) for rt in sorted({t.runtime for t in trials})}
    left_procs = sum(len(t.leftover_processes) for t in trials)
    # A broken double that crashes leaves its exited containers, as any crashed
    # study would: that is its own doing, counted apart from the target.
    left_by_kind = {"honest": 0, "broken": 0}
    for t in trials:
        for box in t.leftover_containers:
            owner = next((x for x in t.studies if box["name"].startswith(f"{PREFIX}-{x.id}-")), None)
            left_by_kind["honest" if owner is None or owner.judged == "honest" else "broken"] += 1
    left_containers = left_by_kind["honest"]
    warm, end = resources.get("afterFirstTrial"), resources.get("end")
    flat = None
    if judge_flat and warm and end:
        flat = {
            "fds": end["fds"] <= warm["fds"],
            "threads": end["threads"] <= warm["threads"] and end["osThreads"] <= warm["osThreads"],
            "rss": (end["rssMB"] - warm["rssMB"]) * 2**20 <= RSS_SLACK,
        }
    peaks = [t.console_peak for t in trials]
    return {
        "trials": len(trials),
        "trialsPerRuntime": per_runtime,
        "studies": len(studies),
        "kills": sum(s.kills for s in studies),
        "manualKills": sum(s.manual_kills for s in studies),
        "armedKills": sum(s.kills - s.manual_kills for s in studies),
        "endsJudged": sum(s.ends for s in studies),
        "killLandings": dict(sorted(landings.items())),
        "verdictsPerKind": dict(sorted(verdicts.items())),
        "brokenFaultOnTarget": sum(1 for s in studies if s.judged == "broken"),
        "brokenFaultOutsideKill": outside,
        "brokenUnexercised": sum(1 for s in studies if s.judged == "broken-unexercised"),
        "falsePasses": false_passes,
        "falseFailures": false_failures,
        "recordsLost": lost,
        "recordsChecked": sum(s.records for s in studies),
        "leftoverProcesses": left_procs,
        "leftoverContainers": left_containers,
        "leftoverContainersOfBrokenStudies": left_by_kind["broken"],
        "resources": resources,
        "consolePeakFirst": peaks[0] if peaks else None,
        "consolePeakLast": peaks[-1] if peaks else None,
        "flat": flat,
        "targets": {"trialsPerRuntime": 50, "falsePasses": 0, "falseFailures": 0, "recordsLost": 0,
                    "flatFdsThreadsRss": True, "leftovers": 0},
    }


def met(summary: dict[str, Any]) -> bool:
    """No false verdict, nothing lost, nothing left behind, and (when judged) flat resources."""
    flat = summary["flat"]
    return (not summary["falsePasses"] and not summary["falseFailures"] and not summary["recordsLost"]
            and not summary["leftoverProcesses"] and not summary["leftoverContainers"]
            and (flat is None or all(flat.values())))


def report(summary: dict[str, Any], args: argparse.Namespace, seconds: float) -> str:
    res = summary["resources"]
    rows = [
        f"kill soak: {summary['trials']} trials ({', '.join(f'{k} {v}' for k, v in summary['trialsPerRuntime'].items())}), "
        f"{summary['studies']} studies, {seconds:.0f} s; {os.cpu_count()} cores, Python {platform.python_version()}",
        f"kills: {summary['kills']} ({summary['armedKills']} armed, {summary['manualKills']} manual)",
    ]
    for name, n in summary["killLandings"].items():
        rows.append(f"  {n:>4}  {name}")
    rows.append("verdicts per kind (at the end, after every follow-up):")
    for kind, counts in summary["verdictsPerKind"].items():
        rows.append(f"  {kind:<38} " + "  ".join(f"{v} {n}" for v, n in sorted(counts.items())))
    rows.append(f"broken studies: fault on a kill target {summary['brokenFaultOnTarget']}, fault outside any kill "
                f"{len(summary['brokenFaultOutsideKill'])}, fault never fired {summary['brokenUnexercised']}")
    for line in summary["brokenFaultOutsideKill"]:
        rows.append(f"  outside a kill (not judged by the contract's kill checks): {line}")
    rows.append(f"false passes: {len(summary['falsePasses'])}")
    rows += [f"  {x}" for x in summary["falsePasses"]]
    rows.append(f"false failures: {len(summary['falseFailures'])}")
    rows += [f"  {x}" for x in summary["falseFailures"]]
    rows.append(f"records lost: {len(summary['recordsLost'])} (of {summary['recordsChecked']} ledger records checked)")
    rows += [f"  {x}" for x in summary["recordsLost"][:20]]
    rows.append(f"left behind after a trial: {summary['leftoverProcesses']} processes, "
                f"{summary['leftoverContainers']} containers (and {summary['leftoverContainersOfBrokenStudies']} "
                "of broken studies that crashed)")
    for label in ("start", "afterFirstTrial", "end"):
        if res.get(label):
            r = res[label]
            rows.append(f"bench process {label:<16} fds {r['fds']:>4}  threads {r['threads']:>3} (os {r['osThreads']:>3})  "
                        f"RSS {r['rssMB']:>6.1f} MB")
    for label in ("consolePeakFirst", "consolePeakLast"):
        p = summary[label]
        if p:
            rows.append(f"console commands, {'first' if label.endswith('First') else 'last'} trial's peak: "
                        f"fds {p['fds']}  threads {p['threads']}  RSS {p['rssMB']} MB")
    flat = summary["flat"]
    rows.append("flat fds, threads, RSS: " + ("not judged (fewer than 5 trials)" if flat is None else
                ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in flat.items())))
    rows.append(f"targets (0 false passes, 0 false failures, 0 records lost, nothing left, flat): "
                f"{'met' if met(summary) else 'NOT MET'}")
    return "\n".join(rows)


async def run_all(args: argparse.Namespace, work: Path, commands: Commands, watch: ConsoleWatch,
                  resources: dict[str, Any], trials: list[TrialResult]) -> None:
    rng = random.Random(args.seed)
    token = args.token
    sizes = QUICK if args.quick else FAST
    order = [rt for i in range(args.trials) for rt in args.runtimes]
    for n, runtime in enumerate(order):
        index = n // len(args.runtimes)
        plan = plan_trial(rng, token, index, runtime)
        folder = work / f"{runtime}-{index:03d}"
        began = time.monotonic()
        watch.peak = {"fds": 0, "threads": 0, "rssMB": 0.0}
        trial = Trial(plan, folder, sizes, random.Random(rng.random()), commands)
        try:
            studies = await asyncio.wait_for(trial.run(), TRIAL_DEADLINE * 2)
        except asyncio.TimeoutError:
            raise BenchFailed(f"trial {index} ({runtime}) did not end within {TRIAL_DEADLINE * 2:.0f} s; see {folder}") from None
        # The keepers end with their controllers; give the last ones a moment before counting.
        left: list[dict[str, Any]] = []
        for _ in range(20):
            left = leftovers(folder)
            if not left:
                break
            await asyncio.sleep(0.25)
        boxes = [c for c in await asyncio.to_thread(containers, runtime, f"{PREFIX}-{token}-")
                 if c["name"].startswith(f"{PREFIX}-{studies[0].id.rsplit('-', 1)[0]}")]
        result = TrialResult(index, runtime, plan.console, round(time.monotonic() - began, 1), studies, left, boxes,
                             own_resources(), dict(watch.peak))
        trials.append(result)
        if n == 0:
            resources["afterFirstTrial"] = result.resources
        if not args.silent:
            marks = " ".join(f"{s.kind}{'*' if s.armed else ''}:{s.verdict}{'(lost)' if s.lost else ''}" for s in studies)
            print(f"[{n + 1:>3}/{len(order)}] {runtime:<7} {plan.console:<6} {marks}  kills "
                  f"{sum(s.kills for s in studies)}  [{result.seconds:.0f} s]", file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=None, help="trials per runtime (default 50; 2 with --quick)")
    p.add_argument("--runtime", choices=("docker", "process", "both"), default="both")
    p.add_argument("--quick", action="store_true", help="smoke run: 2 short trials per runtime")
    p.add_argument("--seed", type=int, default=None, help="the plans' random seed (printed; default: from the clock)")
    p.add_argument("--json", type=Path, help="write every trial and the summary to this file")
    p.add_argument("--keep", action="store_true", help="keep the work folder (its path is printed)")
    p.add_argument("--silent", action="store_true", help="no per-trial progress on stderr")
    args = p.parse_args(argv)
    if args.trials is None:
        args.trials = 2 if args.quick else 50
    if args.trials < 1:
        p.error("--trials must be >= 1")
    if args.seed is None:
        # A smoke run plays the same plans every time; a soak takes new ones.
        args.seed = 1 if args.quick else int(time.time())
    args.runtimes = ["process", "docker"] if args.runtime == "both" else [args.runtime]
    # In every study id and container name, so that two soaks on one engine never meet.
    args.token = f"s{random.Random(f'{args.seed}-{os.getpid()}').randrange(16**4):04x}"
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if "docker" in args.runtimes:
        from studymon.engine.runtimes import docker_answers

        if not docker_answers():
            print("soak: --runtime docker needs a Docker engine, and none answers", file=sys.stderr)
            return EXIT_BENCH
    work = Path(tempfile.mkdtemp(prefix="studymon-soak-"))
    # The process runtime keeps its state here (0700, the bench's own), for the console commands too.
    os.environ["STUDYMON_PROCESS_RUNTIME"] = str(work / "runtime")
    watch = ConsoleWatch()
    commands = Commands(watch)
    resources: dict[str, Any] = {"start": own_resources()}
    trials: list[TrialResult] = []
    began = time.monotonic()
    status = EXIT_OK
    failure = ""
    print(f"soak: seed {args.seed}, work folder {work}", file=sys.stderr, flush=True)

    async def amain() -> None:
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            await run_all(args, work, commands, watch, resources, trials)
        finally:
            commands.kill_all()

    try:
        asyncio.run(amain())
    except (KeyboardInterrupt, asyncio.CancelledError):
        status, failure = EXIT_INTERRUPTED, "interrupted"
    except BenchFailed as exc:
        status, failure = EXIT_BENCH, str(exc)
    except Exception as exc:  # noqa: BLE001 - a bench bug is a bench failure, said in one line
        status, failure = EXIT_BENCH, f"{type(exc).__name__}: {exc}"
    finally:
        commands.kill_all()
        for proc in leftovers(work):
            with contextlib.suppress(psutil.Error):
                psutil.Process(proc["pid"]).kill()
        # The process runtime's state is in the work folder and its processes were
        # just killed; Docker's containers are the engine's, so they are removed.
        if "docker" in args.runtimes:
            with contextlib.suppress(Exception):
                remove_containers("docker", f"{PREFIX}-{args.token}-")
    resources["end"] = own_resources()
    summary = summarise(trials, resources, judge_flat=len(trials) >= 5)
    if failure:
        print(f"soak: {failure}", file=sys.stderr)
    if trials:
        print(report(summary, args, time.monotonic() - began))
    if status == EXIT_OK and not met(summary):
        status = EXIT_FOUND
    if args.json:
        args.json.write_text(json.dumps({
            "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "seed": args.seed, "runtimes": args.runtimes, "trialsPerRuntime": args.trials, "quick": args.quick,
            "exitStatus": status, "failure": failure, "summary": summary,
            "trials": [asdict(t) for t in trials],
        }, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.keep or status == EXIT_FOUND:
        print(f"kept {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
