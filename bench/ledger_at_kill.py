"""ledger-at-kill.json of a long ledger: written record by record, against the whole list at once.

After every kill the engine writes ``OUT/kills/<n>/ledger-at-kill.json``,
every ledger record as it stood, in a thread.  Two designs, run in turn on
the same ledger in this process, so machine noise hits both alike:

* **streamed** (the engine's): ``engine.kill.write_ledger_at_kill``, the
  ledger read a chunk at a time and the array published 1024 records at a
  time (``engine.evidence.write_json_list``);
* **whole** (the baseline, the engine's way before): every record read into
  a list, turned into a list of dicts, and published with one ``json.dumps``
  (``engine.evidence.write_json``).

For each: the wall time, the garbage collections it set off (all of them,
and the longest full one: a collection holds the GIL, so the event loop
waits for it even though the writing is in a thread), and in a separate
pass under ``tracemalloc`` its peak of allocated memory.  The two files must
be the same bytes; the bench fails otherwise.

    python bench/ledger_at_kill.py                 # 100 000 lines, 3 rounds (~40 s)
    python bench/ledger_at_kill.py --lines 1000000 --rounds 1
    python bench/ledger_at_kill.py --quick         # smoke run: 5 000 lines, 1 round (~2 s)

``--json FILE`` saves every round's figures and the medians; ``--keep`` keeps
the temporary folder (the ledger and every ``ledger-at-kill.json`` written;
its path is printed).  Exit status 0 when measured (2 when the files differ).
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kill_reaction as kr  # puts the project root on sys.path, for the imports below

from studymon.engine.contract.folder import KillFolder
from studymon.engine.contract.ledger import read_ledger
from studymon.engine.evidence.writer import write_json
from studymon.engine.kill.protocol import write_ledger_at_kill


def whole(folder: KillFolder, ledger: Path) -> None:
    """The baseline: the whole ledger as one list of dicts, dumped at once."""
    records, _ = read_ledger(ledger)
    write_json(folder.at_kill, [r.as_json() for r in records])


DESIGNS: dict[str, Callable[[KillFolder, Path], None]] = {"streamed": write_ledger_at_kill, "whole": whole}


class Collections:
    """Durations of the garbage collections, by generation, while installed."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, float]] = []
        self._start = (0, 0.0)

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = (info["generation"], time.perf_counter())
        else:
            self.spans.append((self._start[0], time.perf_counter() - self._start[1]))


def measure(fn: Callable[[KillFolder, Path], None], ledger: Path, work: Path) -> dict[str, float]:
    folder = KillFolder(Path(tempfile.mkdtemp(dir=work)), 1)  # OUT/kills/1/, as a kill writes it
    folder.path.mkdir(parents=True)
    spans = Collections()
    gc.collect()
    gc.callbacks.append(spans)
    began = time.perf_counter()
    try:
        fn(folder, ledger)
    finally:
        took = time.perf_counter() - began
        gc.callbacks.remove(spans)
    full = [s for g, s in spans.spans if g == 2]
    traced = KillFolder(Path(tempfile.mkdtemp(dir=work)), 1)
    traced.path.mkdir(parents=True)
    gc.collect()
    tracemalloc.start()
    try:
        fn(traced, ledger)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {
        "seconds": took,
        "collections": len(spans.spans),
        "gcMs": 1e3 * sum(s for _, s in spans.spans),
        "longestFullMs": 1e3 * max(full, default=0.0),
        "peakMB": peak / 1e6,
        "bytes": folder.at_kill.read_bytes(),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=None, help="ledger lines (default 100 000; 5 000 with --quick)")
    p.add_argument("--rounds", type=int, default=None, help="rounds of both designs (default 3; 1 with --quick)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json", type=Path, help="save every round's figures and the medians to this file")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    args = p.parse_args(argv)
    lines = args.lines or (5_000 if args.quick else 100_000)
    rounds = args.rounds or (1 if args.quick else 3)
    work = Path(tempfile.mkdtemp(prefix="studymon-at-kill-"))
    try:
        ledger = work / "ledger.jsonl"
        kr.make_fillers(ledger, lines)  # ~220 bytes a line, as the kill benches' long ledgers
        results: dict[str, list[dict[str, float]]] = {name: [] for name in DESIGNS}
        for k in range(rounds):
            order = list(DESIGNS) if k % 2 == 0 else list(DESIGNS)[::-1]
            for name in order:
                results[name].append(measure(DESIGNS[name], ledger, work))
        if results["streamed"][0]["bytes"] != results["whole"][0]["bytes"]:
            print("ledger_at_kill: the two designs wrote different files", file=sys.stderr)
            return 2
        size = len(results["streamed"][0]["bytes"])
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    rows = [
        f"ledger-at-kill.json of a {lines}-line ledger ({ledger.name}, {size / 1e6:.1f} MB written); {rounds} rounds; "
        "medians",
        "",
        f"{'design':<10}{'seconds':>9}{'collections':>13}{'gc ms':>8}{'longest full ms':>17}{'peak MB':>9}",
    ]
    med: dict[str, dict[str, float]] = {}
    for name, runs in results.items():
        med[name] = {key: statistics.median(r[key] for r in runs) for key in runs[0] if key != "bytes"}
        m = med[name]
        rows.append(f"{name:<10}{m['seconds']:>9.2f}{m['collections']:>13.0f}{m['gcMs']:>8.0f}"
                    f"{m['longestFullMs']:>17.1f}{m['peakMB']:>9.1f}")
    s, w = med["streamed"], med["whole"]
    rows.append("")
    full = (f"x{w['longestFullMs'] / s['longestFullMs']:.1f}" if s["longestFullMs"] and w["longestFullMs"]
            else "- (no full collection in one of them)")
    rows.append(f"ratio whole/streamed: peak memory x{w['peakMB'] / s['peakMB']:.1f}, "
                f"longest full collection {full}, time x{w['seconds'] / s['seconds']:.2f}")
    rows.append("the two files are the same bytes")
    print("\n".join(rows))
    if args.json:
        runs = {name: [{**{k: v for k, v in r.items() if k != "bytes"}, "bytes": len(r["bytes"])} for r in runs]
                for name, runs in results.items()}
        args.json.write_text(json.dumps({"lines": lines, "rounds": rounds, "bytes": size, "runs": runs,
                                         "medians": med}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
