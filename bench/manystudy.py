"""A study for the many-studies bench: streamstudy's records, some of them timed, and on request a diagnosis run.

Every study of ``bench/many_studies.py``'s big console runs this program
(one template serves a whole command, so what a study does is told by its
id).  It honours the study contract (PROTOCOL.md §1-§2) and, like
``bench/streamstudy.py``, writes ``studyOpen`` and then the records a study
writes between runs (``stageOpen`` proposal and diagnosis, ``decision``
proposeExperiments and selectDiagnosis, round after round; one ``os.write``
per record) at ``rate`` a second while the control file says ``stream``,
nothing on ``idle``, and ``halt`` then exit 0 on ``halt``.  Each round is four
records; its two ``stageOpen`` move the round and the stage that the
overview's row of the study shows.

Besides:

``spread``     each study starts streaming at an offset within one record's
               interval, drawn from its id, so that many studies do not write
               in lockstep (as real studies do not)
``timed``      ids of studies that note each write: the time
               (``time.monotonic()`` and ``time.time()``) is taken just before
               the record's ``os.write``, and a line ``<study> <seq> <kind>
               <round> <what> <monotonic> <wall>`` (``what``: the stage, or the
               run) is appended to ``timesFile`` right after it
``armed``      ids of studies that plan a diagnosis run when asked: the bench
               writes a count into ``triggerDir/<study>``; while the study has
               planned fewer runs, it ends its round (up to ``selectDiagnosis``),
               then writes ``runPlanned`` (purpose diagnosis) and ``charge``,
               starts the run's container through ``$STUDYMON_RUNTIME``
               (``sleep runSeconds``), pauses a random ``delayMs`` and writes
               ``runStarted`` with ``content.wroteAt`` (``time.time()`` just
               before that one write; nothing after it, not even a times
               line: the console's kill comes within milliseconds).  Then
               it waits for the run, as a study does: killed there by the
               console, its ``--resume`` waits for the same container, writes
               ``runResult`` (the container's exit code), the round's
               ``diagnosisSettlement`` and its ``stageOpen proposal``, removes
               the container, and streams on from the next round.  Not killed, it does the same itself.

A missing or unreadable control file counts as ``idle``.  SIGINT stops it
with exit 130; it gives up by itself after ``maxSeconds`` (exit 1).

Keys of its research.json (besides the console's ``command``, ``study``,
``backend``, ``containerPrefix``): ``controlFile`` (required), ``rate``
(default 2), ``maxSeconds`` (default 3600), ``spread`` (default false),
``timed`` and ``armed`` (lists of ids), ``timesFile`` (required when a study
is timed; outside ``OUT/study``, whose changes wake the console),
``triggerDir`` (required when one is armed), ``budget`` of an armed study
(default 1000; each run costs 1, so the bench gives the number of runs it will
ask for, and the halt's "balance exhausted" is true), ``runSeconds`` (default 1), ``delayMs`` (default
``[50, 200]``).

Only the standard library and ``streamstudy.py`` beside it are imported.

    python3 bench/manystudy.py --config C --dir D [--resume]
"""

from __future__ import annotations

import json
import os
import random
import shlex
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

from streamstudy import Control, at, content_at, last_seq, line, study_main, write_all

# Seconds between looks at the control file while idle.  Twice a second: at 20 a second, 48 idle
# studies took 8 % of a core, a load on the machine under the console whose idle cost is measured
# (its figures and the probe's both carried it); a phase change reaches them within half a second,
# inside the bench's warm-up and settle.
IDLE_POLL = 0.5
KILL_WAIT = 30.0  # seconds an armed study waits for its kill before it collects its run itself
EXIT_INTERRUPTED = 130


class Study:
    """One study's ledger and times file, and what it has written."""

    def __init__(self, cfg: dict[str, Any], study_dir: Path) -> None:
        self.cfg = cfg
        self.id = str(cfg.get("study"))
        self.path = study_dir / "ledger.jsonl"
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.armed = self.id in (cfg.get("armed") or [])
        self.timed = self.id in (cfg.get("timed") or [])
        self.times = os.open(cfg["timesFile"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if self.timed else -1
        self.seq = 1
        self.prefix = str(cfg.get("containerPrefix", "bench"))

    def write(self, kind: str, content: dict[str, Any], what: str = "-") -> None:
        """One record, one ``os.write``; timed when the study is (its time taken just before the write)."""
        data = line(self.seq, kind, content)
        if self.timed:
            wrote, wall = time.monotonic(), time.time()
            write_all(self.fd, data)
            self.note(kind, content, what, wrote, wall)
        else:
            write_all(self.fd, data)
        self.seq += 1

    def note(self, kind: str, content: dict[str, Any], what: str, wrote: float, wall: float) -> None:
        rnd = content.get("round", "-")
        write_all(self.times, f"{self.id} {self.seq} {kind} {rnd} {what} {wrote:.6f} {wall:.6f}\n".encode())

    def container(self, run: str) -> str:
        return f"{self.prefix}-{self.id}-{run}"


def runtime() -> list[str]:
    return shlex.split(os.environ["STUDYMON_RUNTIME"])


def records(path: Path) -> list[dict[str, Any]]:
    out = []
    for raw in path.read_bytes().splitlines():
        try:
            out.append(json.loads(raw))
        except ValueError:
            continue
    return out


def requested(cfg: dict[str, Any], study: str) -> int:
    """How many diagnosis runs the bench has asked this study for (0 when it has not)."""
    try:
        return int((Path(cfg["triggerDir"]) / study).read_text(encoding="utf-8").strip() or 0)
    except (OSError, ValueError):
        return 0


def plan_run(s: Study, rnd: int, number: int) -> tuple[str, list[str]]:
    """Plan, charge and start diagnosis run ``d<number>`` of round ``rnd``, then write its timed ``runStarted``."""
    run = f"d{number}"
    chosen = [f"e{3 * rnd + k}" for k in range(3)]
    budget = float(s.cfg.get("budget", 1000))
    s.write("runPlanned", {"run": run, "purpose": "diagnosis", "object": "cell-a", "round": rnd, "experiments": chosen})
    s.write("charge", {"run": run, "amount": 1, "balance": budget - number})
    seconds = float(s.cfg.get("runSeconds", 1.0))
    subprocess.run([*runtime(), "run", "-d", "--name", s.container(run), "-", "sleep", f"{seconds:g}"], check=True,
                   stdout=subprocess.DEVNULL)
    low, high = s.cfg.get("delayMs", [50, 200])
    time.sleep(random.uniform(low, high) / 1000.0)  # noqa: S311 - a pause, not a secret
    # The trigger: everything but the clock readings is prepared, so wroteAt precedes the write by only
    # the formatting of two numbers (as bench/microstudy.py writes it).
    container = s.container(run)
    head = f'{{"seq":{s.seq},"at":"'.encode()
    body = f'","kind":"runStarted","content":{{"run":"{run}","container":"{container}","wroteAt":'.encode()
    wall = time.time()
    os.write(s.fd, head + at(wall).encode() + body + repr(wall).encode() + b"}}\n")
    s.seq += 1  # nothing more: the console freezes the study within a millisecond or two
    return run, chosen


def collect(s: Study, run: str, rnd: int, chosen: list[str]) -> None:
    """Wait for the run's container; write its result, the round's settlement and its proposal stage; remove it."""
    name = s.container(run)
    done = subprocess.run([*runtime(), "wait", name], capture_output=True, text=True, check=False)
    try:
        code = int(done.stdout.strip().splitlines()[0])
    except (ValueError, IndexError):
        code = -1
    outputs = dict.fromkeys(chosen, 0.5) if code == 0 else {}
    s.write("runResult", {"run": run, "exitCode": code, "outputs": outputs})
    judged = [{"id": e, "verdict": "kept", "score": 0.5} for e in outputs]
    dropped = [{"experiment": e, "reason": "no result"} for e in chosen if e not in outputs]
    s.write("diagnosisSettlement", {"round": rnd, "run": run, "dropped": dropped, "judged": {"experiments": judged}})
    # A settled round is followed by its proposal stage (as the reference study's rounds go), then the stream's
    # next round.
    s.write("stageOpen", {"stage": "proposal", "round": rnd}, "proposal")
    subprocess.run([*runtime(), "rm", "-f", name], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def resume_state(s: Study) -> tuple[int, int, int]:
    """After a kill: the run in flight collected (if one is); the stream's next index, the runs planned so far and
    the round of the last."""
    recs = records(s.path)
    s.seq = (recs[-1]["seq"] + 1) if recs else last_seq(s.path) + 1
    planned = [r for r in recs if r.get("kind") == "runPlanned"]
    results = {r["content"].get("run") for r in recs if r.get("kind") == "runResult"}
    rounds = [r["content"]["round"] for r in recs if isinstance(r.get("content"), dict) and "round" in r["content"]]
    last_round = max(rounds, default=0)
    for plan in planned:
        run = plan["content"]["run"]
        if run not in results:
            collect(s, run, plan["content"]["round"], list(plan["content"]["experiments"]))
    # The next round, from its first record (content_at's round is index // 4 + 1).
    return 4 * last_round, len(planned), max((p["content"]["round"] for p in planned), default=0)


def run(cfg: dict[str, Any], study_dir: Path, resume: bool, stop: list[bool]) -> int:
    study_dir.mkdir(parents=True, exist_ok=True)
    path = study_dir / "ledger.jsonl"
    if path.exists() and path.stat().st_size and not resume:
        sys.stderr.write(f"manystudy: {path} exists; a fresh start never reuses a ledger" + "\n")
        return 2
    s = Study(cfg, study_dir)
    control = Control(Path(cfg["controlFile"]))
    rate = float(cfg.get("rate", 2))
    deadline = time.monotonic() + float(cfg.get("maxSeconds", 3600))
    offset = (zlib.crc32(s.id.encode()) % 1000) / 1000.0 / rate if cfg.get("spread") else 0.0
    if resume:
        index, planned, run_round = resume_state(s)
    else:
        budget = float(cfg.get("budget", 1000)) if s.armed else 0
        s.write("studyOpen", {"study": cfg.get("study"), "budget": budget, "config": {"bench": "many"}})
        index, planned, run_round = 0, 0, 0
    next_at: float | None = None
    while not stop[0]:
        now = time.monotonic()
        if now > deadline:
            sys.stderr.write("manystudy: maxSeconds reached, giving up" + "\n")
            return 1
        phase = control.read()
        if phase == "halt":
            s.write("halt", {"reason": "balance exhausted"})
            return 0
        if phase != "stream":
            next_at = None
            time.sleep(IDLE_POLL)
            continue
        if s.armed and index % 4 == 0 and index // 4 > run_round and requested(cfg, s.id) > planned:
            # The round has ended with its selectDiagnosis (a round of the stream, not one that had its run): its
            # diagnosis run, the trigger.
            rnd = run_round = index // 4
            planned += 1
            run_id, chosen = plan_run(s, rnd, planned)
            waited = time.monotonic() + KILL_WAIT
            while not stop[0] and time.monotonic() < waited and control.read() != "halt":
                time.sleep(0.05)  # the console kills it here
            if stop[0]:
                break
            sys.stderr.write(f"manystudy: nobody killed me at {run_id}; collecting it myself" + "\n")
            collect(s, run_id, rnd, chosen)
            next_at = None
            continue
        if next_at is None:
            next_at = now + offset
        if next_at > now:
            time.sleep(next_at - now)
        kind, content = content_at(index)
        s.write(kind, content, str(content.get("stage") or content.get("name") or "-"))
        index += 1
        next_at += 1.0 / rate
    return EXIT_INTERRUPTED


def main(argv: list[str] | None = None) -> int:
    return study_main(run, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
