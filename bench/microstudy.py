"""A minimal study for the kill-reaction bench: a ledger that reaches its first diagnosis start, and nothing else.

It honours the study contract (PROTOCOL.md §1-§2) just enough to be
launched, killed and resumed by the console:

* fresh start: ``studyOpen``, then a block of filler records (``stageOpen`` /
  ``decision`` pairs of earlier proposal rounds, copied from a file the bench
  made once, in a single write), then ``stageOpen diagnosis``, ``decision
  selectDiagnosis``, ``runPlanned`` (purpose diagnosis), ``charge``; a random
  pause; then ``runStarted`` whose ``content.wroteAt`` is ``time.time()``
  taken just before the single ``os.write`` of that line.  Then it sleeps
  until it is killed (exit 1 if nobody does).
* ``--resume``: writes the run's ``runResult``, the ``diagnosisSettlement``,
  ``stageOpen proposal`` and ``halt {"reason": "balance exhausted"}``, and
  exits 0.

Keys of its research.json (besides the console's ``command``, ``study``,
``backend``, ``containerPrefix``):

``fillerFile``      path of the filler lines (seq 2 .. fillers+1), or null
``fillers``         how many lines that file holds
``delayMs``         ``[low, high]``: the random pause before ``runStarted``
``containerPoint``  instead of writing ``runStarted``, start the run's container
                    through ``$STUDYMON_RUNTIME`` (a ``container:start`` point's
                    moment) and write nothing more; the resume writes its
                    ``runStarted`` (adopting it) and removes it
``awaitConsole``    wait until the console's ``OUT/timeline.jsonl`` shows the
                    ``charge`` line before the pause, so the trigger meets an
                    idle console that has already read the backlog (the bench
                    measures reaction, not catch-up)

Only the standard library and `streamstudy.py` beside it are imported: start-up
time is part of every trigger.

    python3 bench/microstudy.py --config C --dir D [--resume]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from streamstudy import at, tail_of, write_all

BUDGET = 10
RUN = "d1-0"
EXPERIMENT = "e1"
KILL_WAIT = 120.0  # seconds to sleep after the trigger; the console kills it well before
AWAIT_DEADLINE = 120.0  # give up waiting for the console's timeline after this long


class Ledger:
    """Appends records with one ``os.write`` per call on an ``O_APPEND`` descriptor."""

    def __init__(self, path: Path, next_seq: int) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.seq = next_seq

    def line(self, kind: str, content: dict[str, Any], t: float | None = None) -> bytes:
        record = {"seq": self.seq, "at": at(time.time() if t is None else t), "kind": kind, "content": content}
        self.seq += 1
        return (json.dumps(record, separators=(",", ":")) + "\n").encode()

    def append(self, kind: str, content: dict[str, Any]) -> int:
        seq = self.seq
        write_all(self.fd, self.line(kind, content))
        return seq


def timeline_shows(path: Path, seq: int) -> bool:
    """Whether the last lines of ``path`` (a console's ``timeline.jsonl``) hold a ``seq`` >= ``seq``."""
    found = tail_of(path)
    if found is None:
        return False
    tail, cut = found
    lines = tail.splitlines()
    for raw in lines[1:] if cut else lines:  # the first line of a cut tail may be a part
        try:
            if json.loads(raw).get("seq", 0) >= seq:
                return True
        except ValueError:
            continue
    return False


def await_console(out: Path, seq: int) -> None:
    """Wait until the console's timeline records ``seq`` (polls the file's tail)."""
    deadline = time.monotonic() + AWAIT_DEADLINE
    while time.monotonic() < deadline and not timeline_shows(out / "timeline.jsonl", seq):
        time.sleep(0.005)


def fresh(cfg: dict[str, Any], study_dir: Path, out: Path) -> int:
    study_dir.mkdir(parents=True, exist_ok=True)
    ledger_path = study_dir / "ledger.jsonl"
    if ledger_path.exists():
        print(f"microstudy: {ledger_path} exists; a fresh start never reuses a ledger", file=sys.stderr)
        return 2
    study = cfg["study"]
    fillers = int(cfg.get("fillers", 0))
    ledger = Ledger(ledger_path, 1)
    ledger.append("studyOpen", {"study": study, "budget": BUDGET, "config": {"bench": True}})
    if cfg.get("fillerFile") and fillers:
        # One write for the whole backlog: a 100 000-line ledger appears at once.
        write_all(ledger.fd, Path(cfg["fillerFile"]).read_bytes())
        ledger.seq += fillers
    rnd = fillers // 2 + 1
    container = f"{cfg.get('containerPrefix', 'inforsi')}-{study}-{RUN}"
    ledger.append("stageOpen", {"stage": "diagnosis", "round": rnd})
    ledger.append("decision", {"name": "selectDiagnosis", "round": rnd, "output": {"chosen": [EXPERIMENT]}})
    ledger.append(
        "runPlanned",
        {"run": RUN, "purpose": "diagnosis", "object": "cell-a", "round": rnd, "experiments": [EXPERIMENT]},
    )
    charge_seq = ledger.append("charge", {"run": RUN, "amount": BUDGET, "balance": 0})
    if cfg.get("awaitConsole"):
        await_console(out, charge_seq)
    low, high = cfg.get("delayMs", [50, 200])
    time.sleep(random.uniform(low, high) / 1000.0)
    if cfg.get("containerPoint"):
        # The trigger is the runtime's start event of this container; runStarted never comes before the kill.
        runtime = shlex.split(os.environ["STUDYMON_RUNTIME"])
        image = cfg.get("image") or "-"  # "-": the process runtime runs the command on this machine
        subprocess.run([*runtime, "run", "-d", "--name", container, image, "sleep", "120"], check=True,
                       stdout=subprocess.DEVNULL)
        time.sleep(KILL_WAIT)
        print("microstudy: nobody killed me", file=sys.stderr)
        return 1

    # The trigger: everything but the clock reading is prepared, so wroteAt
    # precedes the write by only the formatting of two numbers.
    seq = ledger.seq
    head = f'{{"seq":{seq},"at":"'.encode()
    body = f'","kind":"runStarted","content":{{"run":"{RUN}","container":"{container}","wroteAt":'.encode()
    ledger.seq += 1
    t = time.time()
    os.write(ledger.fd, head + at(t).encode() + body + repr(t).encode() + b"}}\n")
    time.sleep(KILL_WAIT)
    print("microstudy: nobody killed me", file=sys.stderr)
    return 1


def resume(cfg: dict[str, Any], study_dir: Path) -> int:
    ledger_path = study_dir / "ledger.jsonl"
    # The state needed is in the last lines; a 100 000-line ledger is not re-parsed.
    with open(ledger_path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, size - 8192))
        tail = fh.read()
    if not tail.endswith(b"\n"):
        print("microstudy: the ledger ends in a torn line", file=sys.stderr)
        return 3
    records = []
    for raw in tail.splitlines():
        try:
            records.append(json.loads(raw))
        except ValueError:
            continue  # the first line of the tail window may be cut
    last = records[-1]["seq"]
    plan = next((r for r in records if r["kind"] == "runPlanned" and r["content"].get("run") == RUN), None)
    if plan is None:
        print("microstudy: no diagnosis run in the ledger's tail", file=sys.stderr)
        return 3
    rnd = plan["content"]["round"]
    ledger = Ledger(ledger_path, last + 1)
    if not any(r["kind"] == "runStarted" for r in records):  # a container point's kill: its container is adopted
        container = f"{cfg.get('containerPrefix', 'inforsi')}-{cfg['study']}-{RUN}"
        ledger.append("runStarted", {"run": RUN, "container": container})
        runtime = shlex.split(os.environ["STUDYMON_RUNTIME"])
        subprocess.run([*runtime, "rm", "-f", container], check=False, stdout=subprocess.DEVNULL)
    if not any(r["kind"] == "runResult" for r in records):
        ledger.append("runResult", {"run": RUN, "exitCode": 0, "outputs": {EXPERIMENT: 0.5}})
        ledger.append(
            "diagnosisSettlement",
            {
                "round": rnd,
                "run": RUN,
                "dropped": [],
                "judged": {"experiments": [{"id": EXPERIMENT, "verdict": "kept", "score": 0.5}]},
            },
        )
        ledger.append("stageOpen", {"stage": "proposal", "round": rnd})
    ledger.append("halt", {"reason": "balance exhausted"})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)
    cfg = json.loads(args.config.read_text(encoding="utf-8"))
    out = Path(os.environ.get("STUDYMON_OUT") or args.config.parent)
    if args.resume:
        return resume(cfg, args.dir)
    return fresh(cfg, args.dir, out)


if __name__ == "__main__":
    sys.exit(main())
