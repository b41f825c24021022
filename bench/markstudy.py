"""A study for the screen-latency bench: records with a marker each, on a schedule, each write timed.

It honours the study contract (PROTOCOL.md §1-§2) and starts no runs, so it
needs no containers: ``studyOpen`` (budget 0), then, for each schedule it is
told to play, one ``decision`` record per entry whose ``name`` is a marker
unique in the ledger (``mk-00042``: ``mk-`` and the record's seq, five
digits), so the marker shows on any screen that shows the record.  Each
record is one ``os.write``; the time is taken (``time.monotonic()``, the
machine's one monotonic clock, so the bench can compare it with its own)
just before that write, with the wall clock beside it (``time.time()``, to
compare with the console's ``timeline.jsonl``), and a line ``<seq> <marker>
<monotonic> <wall> <schedule>`` is appended to the times file right after it.

The control file named in its research.json says what to do; it is read at
every record and every 20 ms when idle:

``idle``      write nothing, stay alive
``<name>``    play schedule ``<name>`` once (a schedule already played is not
              played again): wait each of its delays, then write a record;
              the times file then gets ``end <name>``
``halt``      write ``halt {"reason": "balance exhausted"}`` and exit 0 (every
              check holds: no runs, nothing charged)

A missing or unreadable control file counts as ``idle``.  SIGINT stops it
with exit 130, as the contract asks; it gives up by itself after
``maxSeconds`` (exit 1).

Keys of its research.json (besides the console's ``command``, ``study``,
``backend``, ``containerPrefix``):

``controlFile``  path of the control file (required)
``timesFile``    path of the times file (required; outside ``OUT/study``, whose
                 changes wake the console)
``schedules``    name -> list of delays in seconds (each before one record)
``maxSeconds``   lifetime limit (default 3600)

Only the standard library is imported.

    python3 bench/markstudy.py --config C --dir D [--resume]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from streamstudy import Control, last_seq, line, study_main, write_all

IDLE_POLL = 0.02  # seconds between looks at the control file while idle
EXIT_INTERRUPTED = 130


def marker(seq: int) -> str:
    """The marker of the record ``seq``: fixed width, so no marker is part of another."""
    return f"mk-{seq:05d}"


def run(cfg: dict[str, Any], study_dir: Path, resume: bool, stop: list[bool]) -> int:
    study_dir.mkdir(parents=True, exist_ok=True)
    path = study_dir / "ledger.jsonl"
    if path.exists() and path.stat().st_size and not resume:
        print(f"markstudy: {path} exists; a fresh start never reuses a ledger", file=sys.stderr)
        return 2
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    times = os.open(cfg["timesFile"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    control = Control(Path(cfg["controlFile"]))
    schedules: dict[str, list[float]] = {k: [float(d) for d in v] for k, v in (cfg.get("schedules") or {}).items()}
    deadline = time.monotonic() + float(cfg.get("maxSeconds", 3600))
    if resume:
        seq = last_seq(path) + 1
    else:
        write_all(fd, line(1, "studyOpen", {"study": cfg.get("study"), "budget": 0, "config": {"bench": "marks"}}))
        seq = 2
    played: set[str] = set()
    while not stop[0]:
        if time.monotonic() > deadline:
            print("markstudy: maxSeconds reached, giving up", file=sys.stderr)
            return 1
        phase = control.read()
        if phase == "halt":
            write_all(fd, line(seq, "halt", {"reason": "balance exhausted"}))
            return 0
        if phase not in schedules or phase in played:
            time.sleep(IDLE_POLL)
            continue
        played.add(phase)
        # A fixed schedule from the first delay on: a late wake-up does not shift the records after it.
        next_at = time.monotonic()
        for delay in schedules[phase]:
            next_at += delay
            while not stop[0] and (left := next_at - time.monotonic()) > 0:
                time.sleep(left)
            if stop[0]:
                break
            mark = marker(seq)
            data = line(seq, "decision", {"name": mark, "round": 1, "output": {}})
            wrote, wall = time.monotonic(), time.time()
            write_all(fd, data)
            write_all(times, f"{seq} {mark} {wrote:.6f} {wall:.6f} {phase}\n".encode())
            seq += 1
        write_all(times, f"end {phase}\n".encode())
    return EXIT_INTERRUPTED


def main(argv: list[str] | None = None) -> int:
    return study_main(run, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
