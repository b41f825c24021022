"""A minimal study with no runs, wrong in one way, for the checks the ledger alone decides.

It writes ``studyOpen``, one proposal stage and ``halt "balance exhausted"``
(a budget of 0 pays for no run), one line per write, and exits 0 — unless
``fault`` in its research.json says otherwise:

* ``gap``      - the ledger skips a ``seq``;
* ``garbage``  - one line is not JSON;
* ``export``   - an ``export`` follows the halt;
* ``otherhalt``- the halt's reason is not "balance exhausted";
* ``crash``    - it exits 1 before the halt (a resume then finishes it);
* ``replace``  - half way, it moves a rewritten copy of its ledger over it;
* ``truncate`` - half way, it cuts its ledger back to the first line (and goes on from there);
* ``none``     - nothing wrong.

    python3 tests/doubles/tiny_study.py --config C --dir D [--resume]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def now() -> str:
    t = datetime.now(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def timeline_seqs(out: Path) -> set[int]:
    """The seqs the console's watch has put in ``OUT/timeline.jsonl`` so far: the lines it has read."""
    seqs = set()
    try:
        lines = (out / "timeline.jsonl").read_text().splitlines()
    except OSError:
        return seqs
    for line in lines:
        with contextlib.suppress(ValueError, KeyError, TypeError):  # a line being written
            seqs.add(json.loads(line)["seq"])
    return seqs


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    config = json.loads(Path(args.config).read_text())
    fault = config.get("fault", "none")
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    ledger = folder / "ledger.jsonl"
    existing = ledger.read_text().splitlines() if ledger.exists() else []
    fd = os.open(ledger, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    seq = len(existing)

    def write(kind: str, content: dict, skip: int = 0) -> None:
        nonlocal seq
        seq += 1 + skip
        os.write(fd, (json.dumps({"seq": seq, "at": now(), "kind": kind, "content": content}) + "\n").encode())
        time.sleep(0.05)  # stands in for a study's own work between two records

    if not existing:
        write("studyOpen", {"study": config.get("study"), "budget": 0, "config": {}})
        write("stageOpen", {"stage": "proposal", "round": 1}, skip=1 if fault == "gap" else 0)
        if fault in ("replace", "truncate"):
            # The change comes once the console's watch has read both lines (and put them
            # in its timeline): it changes a ledger the watch follows, as the fault means.
            if str(ROOT) not in sys.path:
                sys.path.insert(0, str(ROOT))
            from tests.waits import until

            out = Path(os.environ.get("STUDYMON_OUT", "."))
            until(lambda: {1, 2} <= timeline_seqs(out), 60, "the console's watch to have read both lines",
                  seen=lambda: sorted(timeline_seqs(out)))
            data = ledger.read_bytes()
            os.close(fd)
            if fault == "replace":
                fresh = folder / "ledger.jsonl.new"
                fresh.write_bytes(data)
                os.rename(fresh, ledger)
            else:
                os.truncate(ledger, data.index(b"\n") + 1)
                seq = 1
            fd = os.open(ledger, os.O_WRONLY | os.O_APPEND)
        if fault == "garbage":
            os.write(fd, b"this is not json\n")
        if fault == "crash":
            print("crashing on purpose", flush=True)
            return 1
    write("halt", {"reason": "out of ideas" if fault == "otherhalt" else "balance exhausted"})
    if fault == "export":
        write("export", {"path": "export.json"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
