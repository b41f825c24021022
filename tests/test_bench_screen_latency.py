"""The screen-latency bench still runs and still measures: a short run in real terminals (tmux), real command line.

It checks that the bench works end to end (exit 0, a row per phase, the
kill line, the target lines), and that what it printed is what happened:
every record asked for was written (the study's ledger and times file,
kept with ``--keep``), seen after it was written, and its row is the
percentiles of those records' times (``--json``); the engine's read of
each is the console's own ``timeline.jsonl``; each kill is a fresh study
whose keeper saw its controller end by SIGKILL, timed to the
``killSentEpoch`` of its ``kill.json``.  Not the numbers: a run this
short says nothing about the targets.  Without toolong (CI does not
install it) the quick run measures studymon alone and says so; with
toolong found it measures both.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.benches import NUMBER as N
from tests.benches import (
    assert_ordered,
    assert_shown,
    ended_cleanly,
    jsonl,
    kill_json,
    launches,
    ledger,
    percentile,
    row,
    run_bench_kept,
    sigkilled,
)

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
sys.path.insert(0, str(BENCH))

from first_frame import find_toolong  # noqa: E402
from screen_latency import KILL_KEYS  # noqa: E402

# A developer's machine may lack tmux; CI installs it (.ci/run), and there the gate turns a skip into a failure.
pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed: the bench runs the console in tmux"
)

PHASES = (("a", r"\(a\) 6 at 0\.3-1\.1 s", 6), ("b", r"\(b\) 10 at 5/s", 10))  # what --quick asks for
KILLS = 2


def _times(path: Path) -> dict[str, tuple[int, float, float, str]]:
    """The study's own times file: marker -> (seq, monotonic, wall, schedule) of each write."""
    found = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 5:
            found[parts[1]] = (int(parts[0]), float(parts[2]), float(parts[3]), parts[4])
    return found


def test_screen_latency_quick_measures_both_phases_and_the_kill(tmp_path: Path) -> None:
    began = time.monotonic()
    out, kept = run_bench_kept(
        "screen_latency.py", "--quick", "--silent", "--json", str(tmp_path / "sl.json"), into=tmp_path, timeout=180
    )
    ended = time.monotonic()
    result = json.loads((tmp_path / "sl.json").read_text())
    programs = ["studymon"] + (["toolong"] if find_toolong(None) else [])
    if len(programs) == 1:
        assert "toolong not found: studymon measured alone" in out, out
    assert result["programs"] == programs
    study = kept / "lat"
    records = {r["seq"]: r for r in ledger(study)}
    times = _times(kept / "times-lat")
    reads = {r["seq"]: datetime.fromisoformat(r["seenAt"]).timestamp() for r in jsonl(study / "timeline.jsonl")}
    for name, title, count in PHASES:
        mine = result["phases"][name]["records"]
        # As many records as asked, each the study's: in its ledger with its marker, timed in its times file.
        assert len(mine) == count, mine
        for r in mine:
            assert records[r["seq"]]["content"]["name"] == r["marker"], r
            assert times[r["marker"]] == (r["seq"], r["wroteMonotonic"], r["wroteEpoch"], name), r
            assert r["engineReadEpoch"] == reads[r["seq"]], r
        for program in programs:
            seen = [r["seen"][program] for r in mine]
            assert all(s is not None for s in seen), mine
            assert all(began < r["wroteMonotonic"] < s < ended for r, s in zip(mine, seen, strict=True)), mine
            latency = [1000 * (s - r["wroteMonotonic"]) for r, s in zip(mine, seen, strict=True)]
            # n, p50, p90, max, missed: every record written was seen.
            printed = row(out, rf"^{title}\s+{program}\s+(\d+)\s+({N})\s+({N})\s+({N})\s+(\d+)$")
            assert printed[0] == count and printed[4] == 0, out
            assert_ordered(*printed[1:4], what=f"{name} {program}")
            assert_shown(
                printed[1:4], [percentile(latency, 50), percentile(latency, 90), max(latency)], 1, f"{name} {program}"
            )
        engine = [1000 * (reads[r["seq"]] - r["wroteEpoch"]) for r in mine]
        split = row(
            out,
            rf"^studymon {title}, write -> engine read .*: p50 ({N}) / p90 ({N}) / max ({N}) ms; "
            rf"engine read -> visible: p50 ({N}) / p90 ({N}) / max ({N}) ms$",
        )
        assert_shown(split[:3], [percentile(engine, 50), percentile(engine, 90), max(engine)], 1, f"{name} engine read")
        target = re.search(rf"^target {title}: max <= 100 ms: (met|NOT MET) \(", out, re.MULTILINE)
        studymon_max = row(out, rf"^{title}\s+studymon\s+\d+\s+{N}\s+{N}\s+({N})\s+\d+$")[0]
        assert target and (target.group(1) == "met") == (studymon_max <= 100), out

    # The kills: each a fresh study whose keeper saw its controller end by SIGKILL, the pid kill.json names.
    assert len(result["kills"]) == KILLS, result["kills"]
    killed_ms = []
    for k in result["kills"]:
        out_k = kept / "kills" / k["study"]
        kill = kill_json(out_k)
        assert kill["trigger"] == "manual" and kill["killSentEpoch"] == k["killSentEpoch"], (kill, k)
        assert sigkilled(out_k) == 1, launches(out_k)
        assert [x["pid"] for x in launches(out_k) if x.get("signal") == "SIGKILL"] == [kill["pid"]]
        assert k["keyEpoch"] < k["killSentEpoch"], k
        killed_ms.append(1000 * (k["killSentEpoch"] - k["keyEpoch"]))
    assert len(list((kept / "kills").iterdir())) == KILLS
    kill_row = row(
        out,
        rf"^manual kill, confirming key \({re.escape(KILL_KEYS[-1])}\) -> SIGKILL sent, (\d+) kills each "
        rf"of a fresh study: p50 ({N}) / p99 ({N}) / max ({N}) ms$",
    )
    assert kill_row[0] == KILLS, out
    assert_ordered(*kill_row[1:], what="kill key -> SIGKILL")
    assert_shown(kill_row[1:], [percentile(killed_ms, 50), percentile(killed_ms, 99), max(killed_ms)], 2, "kills")
    target = re.search(r"^target kill key -> SIGKILL p99 <= 20 ms: (met|NOT MET) \(", out, re.MULTILINE)
    assert target and (target.group(1) == "met") == (kill_row[2] <= 20), out
    # The console ended with the study's halt, and the study ended by it.
    assert "console exit status 0 after the study halted" in out, out
    assert ended_cleanly(study) and sigkilled(study) == 0 and ledger(study)[-1]["kind"] == "halt", launches(study)
