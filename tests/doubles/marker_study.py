"""A study that is an adversary: each text it writes carries a marker of escape sequences and markup.

A study's ledger is its own, and a console shows what it says (a halt's
reason, a service error's message, a stage, a run id): this one puts in
every such place ``MK<n>`` and a tail that would act on a terminal if it
reached one raw (SGR, an OSC 8 hyperlink ended by BEL, rich markup, a bidi
override, NUL, a C1 CSI, a line separator), ``n`` unique to the place.  It
writes ``studyOpen`` (its id as given, so that it stays a study), then a
``stageOpen`` of a marker stage and round, a ``decision`` named by one, a
``serviceError`` whose message is one, a record of a kind that is one, a
record whose content has a marker as a key, a ``runPlanned`` whose run,
purpose, cell and experiments are markers, and ``halt`` with a marker
reason; it prints markers on its standard output and error (``study.log``).
Each write is a line, a moment apart; after ``runPlanned`` it waits a few
seconds, so that a kill point there finds its controller running, the
markers all written; resumed, it writes the halt.

``crash`` in its research.json: it prints a marker as its last line and
exits 1 before the halt (the console then quotes that line).

    python3 tests/doubles/marker_study.py --config C --dir D [--resume]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

TAIL = "\x1b[31m\x1b]8;;http://x\x07[bold]\u202e\x00\x9b\u2028"
FIRST = 9000  # the study's markers are MK9000 and up: the test's own numbers stay below
PAUSE = 3.0  # seconds after its runPlanned, on its first run


def marker(n: int) -> str:
    return f"MK{FIRST + n}{TAIL}"


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
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    ledger = folder / "ledger.jsonl"
    existing = ledger.read_text().splitlines() if ledger.exists() else []
    fd = os.open(ledger, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    seq = len(existing)

    def write(kind: str, content: dict) -> None:
        nonlocal seq
        seq += 1
        os.write(fd, (json.dumps({"seq": seq, "at": now(), "kind": kind, "content": content}) + "\n").encode())
        time.sleep(0.3)  # a moment between records: a kill point finds its controller between two of them

    print(f"starting {marker(1)}", flush=True)
    print(f"warning {marker(2)}", file=sys.stderr, flush=True)
    if not existing:
        write("studyOpen", {"study": config.get("study"), "budget": 0, "config": {"note": marker(3)}})
        write("stageOpen", {"stage": marker(8), "round": marker(9)})
        write("decision", {"name": marker(10), "round": 1, "output": {"chosen": [marker(11)]}})
        write("serviceError", {"message": marker(12)})
        write(marker(13), {"text": marker(14)})
        write("note", {marker(15): marker(16)})
        write("runPlanned", {"run": marker(4), "purpose": marker(5), "object": marker(6), "round": 1,
                             "experiments": [marker(7)]})
        time.sleep(PAUSE)  # the kill point after runPlanned lands here, even on a loaded machine
        if config.get("fault") == "crash":
            print(f"crashing {marker(17)}", flush=True)
            return 1
    write("halt", {"reason": marker(18)})
    print(f"done {marker(19)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
