"""Kill reaction with company: the armed study alone, and beside busy studies in the same event loop.

``bench/kill_reaction.py`` measures one armed study under its own engine.
``studymon run`` with several studies runs every session in one asyncio loop,
so a study that is busy reading holds up the kill of another.  This bench
measures the armed study's reaction (ledger record written -> SIGKILL sent)
in two modes that take turns, trigger by trigger:

* **quiet**: one armed study under an ``studymon.engine.live.supervisor.Supervisor``, as in
  ``kill_reaction.py``.
* **company**: the same armed study under one Supervisor with three more
  studies: two (``bench/streamstudy.py``) append 50 records a second each for
  the whole trigger, and a third (``bench/burststudy.py``) appends a
  100 000-line burst in a single write just after the armed study's console
  has read its ``charge`` line, so that the trigger is written while the
  engine is taking the burst in.

Everything is the real engine (no mocks, no Textual): fresh ``OUT`` folders
(``studymon.engine.launch.prepare.create_fresh``, backend ``process``), controllers launched,
frozen, killed and resumed by the engine.  The armed study is
``bench/microstudy.py``: a backlog of 10 or 100 000 lines, its first
diagnosis ``runPlanned`` and ``charge``, a random pause, then ``runStarted``
with ``content.wroteAt``.  Reaction = ``killSentEpoch`` (``OUT/kills/1/kill.json``)
minus ``wroteAt``, split into *notice* and *act* as in ``kill_reaction.py``.
Once the kill is sent (or the armed study ends otherwise) and the burst has
been read, the company is told to halt, so every session ends and is judged.

Also measured, per company trigger: when the burst was written
(``burstWroteAt``, its last line) and when the engine had taken all of it in
(its last record handed to the event sink), so the report says how many
triggers were written while the burst was being read; and, in both modes,
the full garbage collections (generation 2) that overlapped a trigger's
write -> SIGKILL.

    python bench/kill_under_load.py                  # 20 triggers per mode and size (~7.5 min on 2 cores)
    python bench/kill_under_load.py --triggers 50 --sizes 10 --json company.json
    python bench/kill_under_load.py --slice 16384    # another READ_SLICE, to choose one
    python bench/kill_under_load.py --quick          # smoke run: 2 triggers, 10 lines, 20 000-line burst

Exit status: 0 when every trigger was measured (``--require-target`` makes a
missed target exit 1), 2 when a trigger failed, 130 when interrupted.  Every
child process is killed and the temporary folder removed on the way out.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kill_reaction as kr  # puts the project root on sys.path, for the imports below
from streamstudy import tail_of

import studymon.engine.contract.ledger as ledger_mod
import studymon.engine.live.pump as pump_mod
from studymon.engine.contract.spec import StudySpec
from studymon.engine.events import KillStep, RecordsSeen, State, StateChanged, StudyEvent
from studymon.engine.evidence.writer import read_json
from studymon.engine.launch.prepare import create_fresh
from studymon.engine.live.supervisor import Supervisor

BENCH = Path(__file__).resolve().parent
STREAMSTUDY = BENCH / "streamstudy.py"
BURSTSTUDY = BENCH / "burststudy.py"
MODES = ("quiet", "company")
STREAMERS = 2
RATE = 50.0  # records a second from each streaming study
BURST, QUICK_BURST = 100_000, 20_000
# The armed study's pause before its trigger, and the burst study's before its
# burst, both counted from the moment the armed study's console has read its
# charge line.  The engine gathers an unarmed study's appends for 100 ms before
# reading them, then needs ~1 s or more for 100 000 lines, so a trigger 150-900
# ms after that moment falls inside the burst's reading.  Both modes use the
# same pause, so the only difference between them is the company.
DELAY_MS = (150, 900)
BURST_DELAY_MS = (0, 50)


@dataclass
class Sample:
    """One trigger, times in milliseconds unless named otherwise."""

    mode: str
    lines: int
    index: int
    reaction_ms: float
    notice_ms: float
    act_ms: float
    wrote_at: float
    kill_sent: float
    finished: bool  # the armed session ran its study to the halt after the kill
    freeze_ms: float | None  # act, first part: trigger seen -> SIGSTOP sent (``frozenEpoch``)
    frozen_ms: float | None  # act, the rest: SIGSTOP sent -> SIGKILL sent (stop confirmed, read, inspect, hand-over)
    full_gcs: int  # generation-2 collections that overlapped write -> SIGKILL
    full_gc_ms: float  # their total duration
    burst_wrote_at: float | None = None
    burst_done_at: float | None = None  # the burst's last record handed to the sink
    burst_drains_ms: list[float] = field(default_factory=list)  # each read of the burst study's session, in the loop
    seconds: float = 0.0

    @property
    def during_burst(self) -> bool | None:
        """The trigger was written after the burst and before the engine had taken all of it in."""
        if self.burst_wrote_at is None:
            return None
        done = self.burst_done_at if self.burst_done_at is not None else float("inf")
        return self.burst_wrote_at <= self.wrote_at <= done


# --- what happens in the loop -------------------------------------------------------
class FullCollections:
    """Generation-2 garbage collections, as ``(start, end)`` in ``time.time()``, while installed."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.time()
        else:
            self.spans.append((self._started, time.time()))

    def within(self, start: float, end: float) -> list[tuple[float, float]]:
        return [(a, b) for a, b in self.spans if b >= start and a <= end]


def time_drains(session: Any, into: list[float]) -> None:
    """Time each ``drain`` of a session's ledger pump that reads 1 KiB or more (the burst's reads: slices, or one read).

    Wrapped on the pump instance, in this process only: two clock readings a call.
    """
    pump = session.pump
    drain = pump.drain

    def timed(*args: Any, **kwargs: Any) -> None:
        offset, began = pump.tail.offset, time.perf_counter()
        try:
            drain(*args, **kwargs)
        finally:
            took = (time.perf_counter() - began) * 1e3
            if pump.tail.offset - offset >= 1024:
                into.append(took)

    pump.drain = timed


class Watch:
    """The event sink: notes the end of the armed study's trigger and of the burst's reading.

    It is called in the loop for every event of every study, so it only
    compares and stores (as a front end's sink should).
    """

    def __init__(self, armed: str, burst: str | None, burst_end_seq: int) -> None:
        self.armed = armed
        self.burst = burst
        self.burst_end_seq = burst_end_seq
        self.over = asyncio.Event()
        self.burst_read = asyncio.Event()
        self.burst_done: float | None = None

    def __call__(self, event: StudyEvent) -> None:
        if event.study == self.armed:
            if isinstance(event, KillStep) or (
                isinstance(event, StateChanged) and event.state not in (State.STARTING, State.RUNNING, State.RESUMING)
            ):
                self.over.set()
        elif (event.study == self.burst and self.burst_done is None and isinstance(event, RecordsSeen)
              and event.records and event.records[-1].seq >= self.burst_end_seq):
            self.burst_done = time.time()
            self.burst_read.set()


# --- one trigger ---------------------------------------------------------------------
def burst_wrote_at(ledger: Path) -> float | None:
    """``content.burstWroteAt`` of the burst study's marker line (it is near the ledger's end)."""
    found = tail_of(ledger)
    if found is None:
        return None
    for raw in reversed(found[0].splitlines()):
        if b'"burstWroteAt"' in raw:
            try:
                return float(json.loads(raw)["content"]["burstWroteAt"])
            except (ValueError, KeyError, TypeError):
                return None
    return None


def company_specs(
    base: Path, lines: int, armed: StudySpec, burst_file: Path, burst_lines: int
) -> tuple[list[StudySpec], Path]:
    """Make the company's folders; their specs (streamers first, the burst study last) and the control file."""
    control = base / "control"
    control.write_text("stream", encoding="utf-8")
    specs = []
    for k in range(1, STREAMERS + 1):
        spec = StudySpec(f"stream{k}", base / f"stream{k}")
        create_fresh([spec], {"command": ["python3", str(STREAMSTUDY)], "backend": "process",
                              "containerPrefix": "bench", "controlFile": str(control), "rate": RATE,
                              "maxSeconds": 600}, "process")
        specs.append(spec)
    spec = StudySpec("burst", base / "burst")
    create_fresh([spec], {
        "command": ["python3", str(BURSTSTUDY)], "backend": "process", "containerPrefix": "bench",
        "controlFile": str(control), "burstFile": str(burst_file), "burstLines": burst_lines,
        # The armed study's charge line is its seq `lines` (studyOpen, fillers, 4 more lines).
        "awaitTimeline": str(armed.out / "timeline.jsonl"), "awaitSeq": lines,
        "delayMs": list(BURST_DELAY_MS), "maxSeconds": 600,
    }, "process")
    specs.append(spec)
    return specs, control


async def trigger(
    work: Path, mode: str, lines: int, index: int, files: dict[str, Path], burst_lines: int,
    children: kr.Children, gcs: FullCollections,
) -> Sample:
    base = work / f"{mode}-{lines}-{index:03d}"
    base.mkdir()
    armed = StudySpec("armed", base / "armed")
    create_fresh([armed], {**kr.template(files[f"fillers-{lines}"], lines - kr.FIXED_LINES, await_console=True),
                           "delayMs": list(DELAY_MS)}, "process")
    company: list[StudySpec] = []
    control: Path | None = None
    if mode == "company":
        company, control = company_specs(base, lines, armed, files["burst"], burst_lines)
    watch = Watch(armed.id, company[-1].id if company else None, burst_lines + 2)
    sup = Supervisor(watch)
    sup.add(armed, resume=False, armed=True)
    drains: list[float] = []
    for spec in company:
        session = sup.add(spec, resume=False, armed=False)
        if spec is company[-1]:
            time_drains(session, drains)
    children.supervisors.append(sup)
    running = asyncio.ensure_future(sup.run())
    try:
        over = asyncio.ensure_future(watch.over.wait())
        await asyncio.wait({running, over}, timeout=kr.TRIGGER_DEADLINE, return_when=asyncio.FIRST_COMPLETED)
        over.cancel()
        if control is not None:
            if watch.over.is_set():
                # The company halts once the burst is read: a session whose
                # controller has ended reads the rest of its ledger in one go,
                # which would blur the burst's figures (not the kill's).
                read = asyncio.ensure_future(watch.burst_read.wait())
                await asyncio.wait({running, read}, timeout=kr.TRIGGER_DEADLINE, return_when=asyncio.FIRST_COMPLETED)
                read.cancel()
            control.write_text("halt", encoding="utf-8")  # the company ends; its sessions are judged
        if not watch.over.is_set():
            raise kr.TriggerFailed(f"{base.name}: no kill within {kr.TRIGGER_DEADLINE:.0f} s")
        try:
            results = await asyncio.wait_for(running, kr.TRIGGER_DEADLINE)
        except TimeoutError:
            raise kr.TriggerFailed(
                f"{base.name}: the sessions did not end within {kr.TRIGGER_DEADLINE:.0f} s"
            ) from None
    finally:
        if not running.done():
            running.cancel()
        children.kill_all()
    kill_path = armed.out / "kills" / "1" / "kill.json"
    if not kill_path.is_file():
        raise kr.TriggerFailed(f"{base.name}: no kill recorded ({results[0].message or 'see armed/study.log'})")
    kill = read_json(kill_path)
    wrote = kr.trigger_wrote_at(armed.folder.ledger)
    sent, seen = float(kill["killSentEpoch"]), float(kill["triggerSeenEpoch"])
    frozen = kill.get("frozenEpoch")
    overlapping = gcs.within(wrote, sent)
    sample = Sample(
        mode, lines, index, (sent - wrote) * 1e3, (seen - wrote) * 1e3, (sent - seen) * 1e3, wrote, sent,
        results[0].finished,
        (float(frozen) - seen) * 1e3 if frozen is not None else None,
        (sent - float(frozen)) * 1e3 if frozen is not None else None,
        len(overlapping), sum(b - a for a, b in overlapping) * 1e3,
    )
    if company:
        sample.burst_wrote_at = burst_wrote_at(company[-1].folder.ledger)
        sample.burst_done_at = watch.burst_done
        sample.burst_drains_ms = drains
        if sample.burst_wrote_at is None:
            raise kr.TriggerFailed(f"{base.name}: the burst study wrote no burst (see burst/study.log)")
    return sample


# --- the run -------------------------------------------------------------------------
def slicing() -> str:
    """What the ledger pump does with a burst, read from its source: in slices, or at once."""
    import inspect

    source = inspect.getsource(pump_mod)
    if "READ_SLICE" in source or "max_bytes" in source:
        return f"in slices of {getattr(pump_mod, 'READ_SLICE', ledger_mod.READ_SLICE)} bytes"
    return "all at once (no bounded read in engine/live/pump.py)"


async def run_all(
    args: argparse.Namespace, work: Path, children: kr.Children, floors: list[float]
) -> list[Sample]:
    """Every trigger's sample; ``floors`` gets the machine's floor measured after each."""
    files: dict[str, Path] = {}
    for lines in args.sizes:
        files[f"fillers-{lines}"] = work / f"fillers-{lines}.jsonl"
        kr.make_fillers(files[f"fillers-{lines}"], lines - kr.FIXED_LINES)
    files["burst"] = work / "burst.jsonl"
    kr.make_fillers(files["burst"], args.burst)  # seq 2 .. burst+1, ~220 bytes a line
    gcs = FullCollections()
    gc.callbacks.append(gcs)
    samples: list[Sample] = []
    total = args.triggers * len(args.sizes) * len(MODES)
    work_lines = kr.calibrate_floor()
    try:
        for i in range(args.triggers):
            for k, lines in enumerate(args.sizes):
                # Alternate which mode goes first, so neither always follows the other's clean-up.
                order = MODES if (i + k) % 2 == 0 else MODES[::-1]
                for mode in order:
                    began = time.monotonic()
                    sample = await trigger(work, mode, lines, i, files, args.burst, children, gcs)
                    sample.seconds = time.monotonic() - began
                    samples.append(sample)
                    # The machine's floor beside it (see kill_reaction.py), after the same pauses as the trigger's.
                    floors.append(await kr.floor_ms(work_lines, DELAY_MS))
                    if not args.silent:
                        extra = ""
                        if sample.burst_wrote_at is not None:
                            after = 1e3 * (sample.wrote_at - sample.burst_wrote_at)
                            extra = (f"  trigger {after:.0f} ms after the burst, "
                                     f"{'while' if sample.during_burst else 'NOT while'} it was read")
                        print(f"[{len(samples):>3}/{total}] {mode:<8}{lines:>7} lines: {sample.reaction_ms:9.3f} ms "
                              f"(notice {sample.notice_ms:.3f}, act {sample.act_ms:.3f}){extra}  "
                              f"[{sample.seconds:.1f} s]", file=sys.stderr, flush=True)
                    gcs.spans.clear()
    finally:
        gc.callbacks.remove(gcs)
    return samples


def summarise(samples: list[Sample], sizes: list[int]) -> dict[str, Any]:
    keys = ("reaction", "notice", "act", "freeze", "frozen", "ratio", "target", "finished",
            "fullGcs", "duringBurst", "afterBurstMs", "burstReadS", "burstDrainMs")
    out: dict[str, Any] = {k: {} for k in keys}
    for lines in sizes:
        for mode in MODES:
            mine = [s for s in samples if s.mode == mode and s.lines == lines]
            key = f"{mode}/{lines}"
            out["reaction"][key] = kr.stats([s.reaction_ms for s in mine])
            out["notice"][key] = kr.stats([s.notice_ms for s in mine])
            out["act"][key] = kr.stats([s.act_ms for s in mine])
            out["freeze"][key] = kr.stats([s.freeze_ms for s in mine if s.freeze_ms is not None])
            out["frozen"][key] = kr.stats([s.frozen_ms for s in mine if s.frozen_ms is not None])
            out["target"][key] = out["reaction"][key]["p99"] <= kr.TARGET_P99_MS
            out["finished"][key] = [sum(1 for s in mine if s.finished), len(mine)]
            longest = max((s.full_gc_ms for s in mine), default=0.0)
            out["fullGcs"][key] = [sum(1 for s in mine if s.full_gcs), len(mine), longest]
        company = [s for s in samples if s.mode == "company" and s.lines == lines]
        out["duringBurst"][str(lines)] = [sum(1 for s in company if s.during_burst), len(company)]
        out["afterBurstMs"][str(lines)] = kr.stats(
            [1e3 * (s.wrote_at - s.burst_wrote_at) for s in company if s.burst_wrote_at])
        out["burstReadS"][str(lines)] = kr.stats(
            [s.burst_done_at - s.burst_wrote_at for s in company if s.burst_wrote_at and s.burst_done_at])
        out["burstDrainMs"][str(lines)] = kr.stats([d for s in company for d in s.burst_drains_ms])
        q, c = out["reaction"][f"quiet/{lines}"], out["reaction"][f"company/{lines}"]
        out["ratio"][str(lines)] = {p: c[p] / q[p] if q[p] else float("inf") for p in ("p50", "p99")}
    out["targetMet"] = all(out["target"].values())
    return out


def report(summary: dict[str, Any], args: argparse.Namespace, slices: str, load: list[float]) -> str:
    rows = [
        (f"kill reaction with company: ledger record written -> SIGKILL sent, milliseconds; {args.triggers} triggers "
         f"per mode and size; {os.cpu_count()} cores, Python {platform.python_version()}; "
         f"load average {load[0]:.2f} at the start, {load[1]:.2f} at the end"),
        (f"company: {STREAMERS} studies x {RATE:g} records/s and a {args.burst}-line burst, in the armed study's loop; "
         f"the session reads a burst {slices}"),
        "",
        f"{'mode':<10}{'ledger lines':>13}{'n':>5}{'p50':>11}{'p99':>11}{'max':>11}",
    ]
    for lines in args.sizes:
        for mode in MODES:
            s = summary["reaction"][f"{mode}/{lines}"]
            rows.append(f"{mode:<10}{lines:>13}{s['n']:>5}{s['p50']:>11.3f}{s['p99']:>11.3f}{s['max']:>11.3f}")
    rows.append("")
    rows.append("where the time goes (notice = trigger seen - written; act = SIGKILL sent - trigger seen, "
                "of which freeze = SIGSTOP sent - trigger seen and frozen = SIGKILL sent - SIGSTOP sent):")
    for part in ("notice", "act", "freeze", "frozen"):
        for lines in args.sizes:
            for mode in MODES:
                s = summary[part][f"{mode}/{lines}"]
                rows.append(f"  {part:<7}{mode:<8}{lines:>7}{s['n']:>5}"
                            f"{s['p50']:>11.3f}{s['p99']:>11.3f}{s['max']:>11.3f}")
    rows.append("")
    for lines in args.sizes:
        r = summary["ratio"][str(lines)]
        rows.append(f"ratio company/quiet at {lines} lines: p50 x{r['p50']:.2f}, p99 x{r['p99']:.2f}")
    for lines in args.sizes:
        k, n = summary["duringBurst"][str(lines)]
        after, read = summary["afterBurstMs"][str(lines)], summary["burstReadS"][str(lines)]
        rows.append(f"company triggers written while the burst was being read at {lines} lines: {k}/{n} "
                    f"(trigger after the burst: p50 {after['p50']:.0f} ms, max {after['max']:.0f}; "
                    f"burst written -> all of it read: p50 {read['p50']:.2f} s, max {read['max']:.2f})")
    for lines in args.sizes:
        d = summary["burstDrainMs"][str(lines)]
        rows.append(f"the burst study's reads in the loop at {lines} lines: {d['n']}, p50 {d['p50']:.3f} ms, "
                    f"p99 {d['p99']:.3f}, max {d['max']:.3f}")
    for lines in args.sizes:
        parts = []
        for mode in MODES:
            k, n, worst = summary["fullGcs"][f"{mode}/{lines}"]
            parts.append(f"{mode} {k}/{n}" + (f" (longest {worst:.1f} ms)" if k else ""))
        rows.append(f"triggers with a full garbage collection between write and SIGKILL at {lines} lines: "
                    f"{', '.join(parts)}")
    for lines in args.sizes:
        finished = {mode: summary["finished"][f"{mode}/{lines}"] for mode in MODES}
        parts = [f"{mode} {finished[mode][0]}/{finished[mode][1]}" for mode in MODES]
        rows.append(f"armed sessions that ran the study to its halt after the kill at {lines} lines: "
                    f"{', '.join(parts)}")
    rows.append(kr.floor_line(summary["floor"]))
    verdicts = ", ".join(
        f"{mode} {lines} lines {summary['reaction'][f'{mode}/{lines}']['p99']:.3f} ms"
        for lines in args.sizes for mode in MODES
    )
    rows.append(f"armed p99 target (<= {kr.TARGET_P99_MS:g} ms, quiet and with company, at every size): "
                f"{'met' if summary['targetMet'] else 'MISSED'} ({verdicts})")
    return "\n".join(rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--triggers", type=int, default=None,
                   help="triggers per mode and ledger size (default 20; 2 with --quick)")
    p.add_argument("--quick", action="store_true", help=f"smoke run: 2 triggers, 10 lines, a {QUICK_BURST}-line burst")
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=None,
                   help=f"the armed study's ledger lines before the trigger "
                        f"(default {kr.SHORT},{kr.LONG}; each >= {kr.FIXED_LINES})")
    p.add_argument("--burst", type=int, default=None,
                   help=f"lines of the company's burst (default {BURST}; {QUICK_BURST} with --quick)")
    p.add_argument("--slice", type=int, default=None,
                   help="bytes per bounded ledger read, instead of engine.contract.ledger.READ_SLICE")
    p.add_argument("--json", type=Path, help="save every sample and the summary to this file")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    p.add_argument("--require-target", action="store_true", help="exit 1 when a p99 misses its target")
    p.add_argument("--silent", action="store_true", help="no per-trigger progress on stderr")
    args = p.parse_args(argv)
    if args.sizes is None:
        args.sizes = [kr.SHORT] if args.quick else [kr.SHORT, kr.LONG]
    if args.triggers is None:
        args.triggers = 2 if args.quick else 20
    if args.burst is None:
        args.burst = QUICK_BURST if args.quick else BURST
    if args.triggers < 1 or args.burst < 1 or any(n < kr.FIXED_LINES for n in args.sizes):
        p.error(f"--triggers and --burst must be >= 1 and every size >= {kr.FIXED_LINES}")
    if args.slice is not None and args.slice < 1:
        p.error("--slice must be >= 1")
    return args


async def amain(args: argparse.Namespace, work: Path, children: kr.Children, floors: list[float]) -> list[Sample]:
    task = asyncio.current_task()
    assert task is not None
    # SIGTERM ends the bench like Ctrl-C does: cancelled, children killed, folder removed.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await run_all(args, work, children, floors)
    finally:
        children.kill_all()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.slice is not None:
        # The ledger pump takes READ_SLICE from engine.contract.ledger by name, so both are set.
        ledger_mod.READ_SLICE = args.slice
        if hasattr(pump_mod, "READ_SLICE"):
            pump_mod.READ_SLICE = args.slice
    slices = slicing()
    started = time.time()
    work = Path(tempfile.mkdtemp(prefix="studymon-company-bench-"))
    # The engine's process runtime keeps its state here, not in the user's state folder.
    os.environ["STUDYMON_PROCESS_RUNTIME"] = str(work / "runtime")
    children = kr.Children()
    floors: list[float] = []
    began = time.monotonic()
    load = [os.getloadavg()[0]]  # other work on the machine shows in every figure: say how much there was
    try:
        samples = asyncio.run(amain(args, work, children, floors))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("interrupted", file=sys.stderr)
        return 130
    except kr.TriggerFailed as exc:
        print(f"kill_under_load: {exc}", file=sys.stderr)
        return 2
    finally:
        children.kill_all()
        kr.Children.sweep(work, started)
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    load.append(os.getloadavg()[0])
    summary = summarise(samples, args.sizes)
    summary["floor"] = kr.floor_summary(floors)
    print(report(summary, args, slices, load))
    print(f"bench wall time: {time.monotonic() - began:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({
            "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "triggers": args.triggers, "sizes": args.sizes, "burst": args.burst, "streamers": STREAMERS, "rate": RATE,
            "session": slices, "loadAverage": load, "targetP99Ms": kr.TARGET_P99_MS, "summary": summary,
            "samples": [{**asdict(s), "duringBurst": s.during_burst} for s in samples],
        }, indent=2) + "\n", encoding="utf-8")
    return 1 if args.require_target and not summary["targetMet"] else 0


if __name__ == "__main__":
    sys.exit(main())
