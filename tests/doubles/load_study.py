"""A study whose runs either compute hard or only sleep, honest to the contract, for the study-load tests.

It plans ``runs`` runs (default 1) of purpose ``ablation`` in round 1,
charges each ``runCost`` (the budget is exactly their sum), starts them all
in containers of its backend, waits for each, records its result and halts
with ``"balance exhausted"``.  What a run does is ``work`` in its
research.json (a word, or an object from study id to word):

* ``compute`` - a busy shell loop (``while :; do :; done``, no process
  started per turn) for ``workSeconds`` (default 8), then stopped;
* ``sleep``   - ``sleep workSeconds``.

On ``--resume`` it reads its ledger back: a run planned and not charged is
charged, charged and not started is started, started and without a result is
waited for in the same container; it never starts or charges a run twice.
On SIGINT it exits 130 within moments.

    python3 tests/doubles/load_study.py --config C --dir D [--resume]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from studymon.engine.runtimes import open_runtime  # noqa: E402
from studymon.refstudy.image import IMAGE  # noqa: E402

WORK = {
    # The busy loop runs in a subshell that the run's shell stops after the time is up, so the run exits 0.
    "compute": "while :; do :; done & busy=$!; sleep {seconds}; kill $busy; wait $busy; exit 0",
    "sleep": "sleep {seconds}",
}


def now() -> str:
    t = datetime.now(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def per_study(value: Any, study: str, default: Any) -> Any:
    return value.get(study, default) if isinstance(value, dict) else value


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    config = json.loads(Path(args.config).read_text())
    study = str(config["study"])
    work = per_study(config.get("work", "sleep"), study, "sleep")
    seconds = float(per_study(config.get("workSeconds", 8), study, 8))
    count = int(config.get("runs", 1))
    cost = float(config.get("runCost", 10))
    prefix = f"{config.get('containerPrefix', 'inforsi')}-{study}-"
    runtime = open_runtime(config.get("backend", "process"))
    interrupted = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal interrupted
        interrupted = True

    signal.signal(signal.SIGINT, on_signal)
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    ledger = folder / "ledger.jsonl"
    records = [json.loads(line) for line in ledger.read_text().splitlines()] if ledger.exists() else []
    fd = os.open(ledger, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    seq = len(records)

    def write(kind: str, content: dict[str, Any]) -> None:
        nonlocal seq
        seq += 1
        os.write(fd, (json.dumps({"seq": seq, "at": now(), "kind": kind, "content": content}) + "\n").encode())

    def done(kind: str, run: str) -> bool:
        return any(r["kind"] == kind and r["content"].get("run") == run for r in records)

    if any(r["kind"] == "halt" for r in records):
        return 0
    budget = cost * count
    if not records:
        write("studyOpen", {"study": study, "budget": budget, "config": {"work": work, "workSeconds": seconds}})
        write("stageOpen", {"stage": "ablation", "round": 1})
    balance = budget - sum(r["content"]["amount"] for r in records if r["kind"] == "charge")
    runs = [f"r{i}" for i in range(1, count + 1)]
    command = ["sh", "-c", WORK[work].format(seconds=f"{seconds:g}")]
    for run in runs:
        if not done("runPlanned", run):
            write("runPlanned", {"run": run, "purpose": "ablation", "object": "cell", "round": 1, "experiments": []})
        if not done("charge", run):
            balance -= cost
            write("charge", {"run": run, "amount": cost, "balance": balance})
        if not done("runStarted", run):
            runtime.run(prefix + run, command, image=IMAGE, labels={"studymon.study": study})
            write("runStarted", {"run": run, "container": prefix + run})
    for run in runs:
        if done("runResult", run):
            continue
        while (code := runtime.wait(prefix + run, timeout=0.2)) is None:
            if interrupted:
                return 130
        write("runResult", {"run": run, "exitCode": code, "outputs": {}})
        runtime.remove(prefix + run)
    write("halt", {"reason": "balance exhausted"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
