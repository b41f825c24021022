"""A study with no runs that waits at a gate, and answers SIGINT in one of two contract-abiding ways.

It writes ``studyOpen`` and ``stageOpen proposal 1`` (a budget of 0 pays
for no run), then waits until the file named by ``gate`` in its
research.json exists, then writes ``halt "balance exhausted"`` and exits 0.
On SIGINT, ``onSigint`` in research.json (a word, or an object from study
id to word) says what it does:

* ``stop``   - exits 130 at once (``--resume`` continues it);
* ``finish`` - keeps going to its end (it still waits at the gate), as a
  study may that can end within the contract's 10 seconds anyway.

It writes ``sigint`` into ``OUT/study/signals`` for every SIGINT it gets,
so a test can tell that the console's stop reached it.

    python3 tests/doubles/gated_study.py --config C --dir D [--resume]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from datetime import datetime, timezone
from pathlib import Path


def now() -> str:
    t = datetime.now(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    config = json.loads(Path(args.config).read_text())
    gate = Path(config["gate"])
    on_sigint = config.get("onSigint", "stop")
    if isinstance(on_sigint, dict):  # one template for several studies: per study id
        on_sigint = on_sigint.get(config.get("study"), "stop")
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    interrupted = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal interrupted
        interrupted = True
        with open(folder / "signals", "a") as fh:
            fh.write("sigint\n")

    signal.signal(signal.SIGINT, on_signal)
    ledger = folder / "ledger.jsonl"
    kinds = [json.loads(line)["kind"] for line in ledger.read_text().splitlines()] if ledger.exists() else []
    fd = os.open(ledger, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    seq = len(kinds)

    def write(kind: str, content: dict) -> None:
        nonlocal seq
        seq += 1
        os.write(fd, (json.dumps({"seq": seq, "at": now(), "kind": kind, "content": content}) + "\n").encode())

    if not kinds:
        write("studyOpen", {"study": config.get("study"), "budget": 0, "config": {}})
        write("stageOpen", {"stage": "proposal", "round": 1})
    print("waiting at the gate", flush=True)
    while not gate.exists():
        if interrupted and on_sigint == "stop":
            print("stopped on SIGINT", flush=True)
            return 130
        time.sleep(0.02)  # stands in for a study's own work, which lasts until the gate opens
    if "halt" not in kinds:
        write("halt", {"reason": "balance exhausted"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
