"""A study for the company bench: a long burst of records in one write, timed against another study.

It honours the study contract (PROTOCOL.md §1-§2) and starts no runs, so it
needs no containers: ``studyOpen`` (budget 0), then it waits until the
awaited study's ``OUT/timeline.jsonl`` shows ``awaitSeq`` (that study's
console has read up to there), pauses a random ``delayMs``, and appends in a
single ``os.write`` the burst file (records seq 2 .. burstLines+1) and one
more line, ``stageOpen`` whose ``content.burstWroteAt`` is ``time.time()``
taken just before that write.  Then it does what the control file says:
``halt`` writes ``halt {"reason": "balance exhausted"}`` and exits 0 (every
check of the study holds: no runs, nothing charged); anything else waits.

Keys of its research.json (besides the console's ``command``, ``study``,
``backend``, ``containerPrefix``):

``controlFile``    path of the control file (required; read every 50 ms)
``burstFile``      path of the burst's lines, seq 2 .. burstLines+1
``burstLines``     how many lines that file holds
``awaitTimeline``  the ``timeline.jsonl`` to wait on, or null to burst at once
``awaitSeq``       the seq it must show
``delayMs``        ``[low, high]``: the random pause before the burst
``maxSeconds``     lifetime limit (default 600), so nothing outlives an interrupted bench

SIGINT stops it with exit 130, as the contract asks.  Only the standard
library and its sibling bench studies are imported.

    python3 bench/burststudy.py --config C --dir D [--resume]
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from microstudy import timeline_shows
from streamstudy import Control, last_seq, line, study_main, write_all

POLL = 0.005  # seconds between looks at the awaited timeline (as microstudy waits on its own)
IDLE_POLL = 0.05  # seconds between looks at the control file after the burst
EXIT_INTERRUPTED = 130


def run(cfg: dict[str, Any], study_dir: Path, resume: bool, stop: list[bool]) -> int:
    study_dir.mkdir(parents=True, exist_ok=True)
    path = study_dir / "ledger.jsonl"
    if path.exists() and path.stat().st_size and not resume:
        print(f"burststudy: {path} exists; a fresh start never reuses a ledger", file=sys.stderr)
        return 2
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    control = Control(Path(cfg["controlFile"]))
    deadline = time.monotonic() + float(cfg.get("maxSeconds", 600))
    if resume:
        seq = last_seq(path) + 1
    else:
        write_all(fd, line(1, "studyOpen", {"study": cfg.get("study"), "budget": 0, "config": {"bench": "burst"}}))
        awaited = cfg.get("awaitTimeline")
        while awaited and not timeline_shows(Path(awaited), int(cfg["awaitSeq"])):
            if stop[0] or control.read() == "halt" or time.monotonic() > deadline:
                break  # the bench ended the trigger first: no burst
            time.sleep(POLL)
        else:
            low, high = cfg.get("delayMs", [0, 0])
            time.sleep(random.uniform(low, high) / 1000.0)
            lines = int(cfg.get("burstLines") or 0)
            burst = Path(cfg["burstFile"]).read_bytes() if lines else b""
            seq = lines + 2
            t = time.time()
            marker = line(seq, "stageOpen", {"stage": "proposal", "round": lines // 2 + 1, "burstWroteAt": t}, t)
            write_all(fd, burst + marker)
        seq = last_seq(path) + 1
    while not stop[0]:
        if time.monotonic() > deadline:
            print("burststudy: maxSeconds reached, giving up", file=sys.stderr)
            return 1
        if control.read() == "halt":
            write_all(fd, line(seq, "halt", {"reason": "balance exhausted"}))
            return 0
        time.sleep(IDLE_POLL)
    return EXIT_INTERRUPTED


def main(argv: list[str] | None = None) -> int:
    return study_main(run, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
