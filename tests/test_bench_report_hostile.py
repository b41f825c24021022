"""The hostile-report bench still runs and still measures: a --quick run judges every folder it built, with both judges.

A run this short says nothing about the targets (its folders are small), so
the figures are not held to them; but they must be what was measured.  The
test keeps the bench's folder (``--keep``) and checks, with its own
arithmetic: that today's judge is the baseline commit's code and the current
one the working tree's, each imported from its own copy; that every folder
was built within the caps (its grown file just under its --quick size), and
its size is what the table says; that every run left the output it counted;
each table row the medians of its runs (``--json``), its ratios and its
verdict those of the figures beside them; the long sound studies judged
sound by both judges, their throughput and the fitted ledger size those of
their runs.  A second, shorter run checks that a judge past the time or
memory limit is killed and shown as such.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

from tests.benches import NUMBER as N
from tests.benches import assert_ratio, assert_shown, median, row, run_bench, run_bench_kept, shown

ROOT = Path(__file__).resolve().parent.parent
MiB = 1 << 20
QUICK_BYTES = 256 * 1024  # a grown file's size with --quick, less the bench's 4 KiB of slack
SLACK = 4096
FOLDERS = [
    "sound",
    "kill-targets",
    "live-events",
    "live-lines",
    "ledger-20000",
    "ledger-60000",
    "at-kill",
    "at-kill-element",
    "snapshots",
    "window",
    "launches",
    "arms",
    "timeline",
]
TABLE_ROW = (
    r"^{name}\s+({N})\s+(>?)({N})\s+(>?)({N})\s+({N})\s+(>?)({N})\s+(>?)({N})\s+({N})"
    r"\s+([<>]?)({N}|-)\s+([<>]?)({N}|-)\s+(\S+)\s+(met|MISSED.*)$"
)


def _table_row(out: str, name: str) -> list[str]:
    found = re.findall(TABLE_ROW.format(name=re.escape(name), N=N), out, re.MULTILINE)
    assert len(found) == 1, f"{len(found)} table rows for {name}:\n{out}"
    return list(found[0])


def _cap_of(rel: str, caps: dict[str, int]) -> int:
    if rel == "study/ledger.jsonl":
        return caps["LEDGER_CAP"]
    if rel.endswith("ledger-at-kill.json"):
        return caps["ARRAY_CAP"]
    return caps["JSONL_CAP"] if rel.endswith(".jsonl") else caps["JSON_CAP"]


def _fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    (x1, y1), (x2, y2) = points  # two ledger sizes with --quick: the line through them
    a = (y2 - y1) / (x2 - x1)
    return a, y1 - a * x1


def test_report_hostile_quick_measures_every_folder_with_both_judges(tmp_path: Path) -> None:
    out, kept = run_bench_kept(
        "report_hostile.py", "--quick", "--silent", "--json", str(tmp_path / "rh.json"), into=tmp_path, timeout=600
    )
    doc = json.loads((tmp_path / "rh.json").read_text())
    caps, samples = doc["caps"], doc["samples"]
    folders = {f["name"]: f for f in doc["folders"]}
    assert list(folders) == FOLDERS, list(folders)

    # Today's judge is the baseline commit's code, the current one the working tree's, each run from its copy.
    today, current = doc["judges"]["today"], doc["judges"]["current"]
    assert today["source"] == "ae54883" and today["commit"].startswith("ae54883"), today
    assert current["source"] == "working tree", current
    for judge in (today, current):
        assert Path(judge["imported_from"]).is_relative_to(kept / f"judge-{'today' if judge is today else 'current'}")
    baseline_safefile = subprocess.run(
        [shutil.which("git") or "git", "show", f"{today['commit']}:engine/safefile.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert (kept / "judge-today/studymon/engine/safefile.py").read_text() == baseline_safefile
    assert (kept / "judge-today/studymon/__init__.py").is_file()
    assert f"today = ae54883 ({today['commit'][:7]}), current = the working tree (HEAD {current['commit'][:7]}" in out

    for name, f in folders.items():
        # The folder as built: its files, their sizes, each within its cap; the grown one just under --quick's size.
        on_disk = {
            str(p.relative_to(kept / "folders" / name)): p.stat().st_size
            for p in (kept / "folders" / name).rglob("*")
            if p.is_file()
        }
        assert on_disk == f["files"], name
        assert f["bytes"] == sum(on_disk.values())
        assert all(size <= _cap_of(rel, caps) - SLACK for rel, size in on_disk.items()), (name, on_disk)
        if f["cap"] in ("JSON_CAP", "JSONL_CAP"):
            grown = on_disk[f["largest"]]
            assert QUICK_BYTES - SLACK - 1024 < grown <= QUICK_BYTES - SLACK, (name, f["largest"], grown)
        elif f["cap"] == "ELEMENT_CAP":  # one element of ledger-at-kill.json, not the file, is what is grown
            element = f["info"]["elementBytes"]
            assert QUICK_BYTES - SLACK - 1024 < element <= QUICK_BYTES - SLACK < on_disk[f["largest"]], (name, element)

        # Every run: the output it counted, kept; as many runs as asked (the sound folder's five).
        mine = {j: [s for s in samples if s["case"] == name and s["judge"] == j] for j in ("today", "current")}
        for runs in mine.values():
            assert len(runs) == (5 if name == "sound" else 1), (name, runs)
            for s in runs:
                stdout = kept / "runs" / f"{name}-{s['judge']}-{s['round']}.stdout"
                assert stdout.stat().st_size == s["stdout_bytes"] > 0, (name, s)
                assert s["summary"] == stdout.read_text().strip().splitlines()[-1].strip()[:200]
                assert s["killed"] is None and not s["crashed"], s
                assert s["cpu"] > 0 and 10 * MiB < s["peak_rss"] < 4 << 30, s
                # Started by a process of a few MiB, not by the bench: the peak is the judge's own.
                assert 0 < s["floor"] < 20 * MiB < s["peak_rss"], s

        # The table row: the folder's size and each judge's medians, the ratios of those, the verdict of current's.
        cells = _table_row(out, name)
        assert shown(float(cells[0]), f["bytes"] / MiB, 1), (name, cells)
        figures = {}
        for k, judge in enumerate(("today", "current")):
            runs = mine[judge]
            seconds, rss = median([s["seconds"] for s in runs]), median([s["peak_rss"] for s in runs])
            printed = [float(cells[2 + 5 * k]), float(cells[4 + 5 * k]), float(cells[5 + 5 * k])]
            assert cells[1 + 5 * k] == cells[3 + 5 * k] == "", cells  # nothing killed: no lower bounds
            assert_shown(
                printed,
                [seconds, rss / MiB, median([s["stdout_bytes"] for s in runs]) / 1e3],
                [2, 1, 1],
                f"{name} {judge}",
            )
            assert f["judges"][judge]["seconds"] == seconds
            figures[judge] = (printed[0], printed[1], seconds, rss)
        assert cells[11] == cells[13] == "", cells
        assert_ratio(float(cells[12]), figures["today"][0], figures["current"][0], 2, f"{name} time x", given=2)
        assert_ratio(float(cells[14]), figures["today"][1], figures["current"][1], 2, f"{name} rss x", given=1)
        exits = "/".join(",".join(str(x) for x in sorted({s["exit"] for s in mine[j]})) for j in ("today", "current"))
        assert cells[15] == exits, (name, cells)
        _, _, seconds, rss = figures["current"]
        met = seconds <= 10 and rss <= 1 << 30
        assert (cells[16] == "met") == met, (name, cells, seconds, rss)

    # The sound folder is sound for both judges; so are the long studies, read to their end.
    for name in ("sound", "ledger-20000", "ledger-60000"):
        assert {s["exit"] for s in samples if s["case"] == name} == {0}, name
    # A listed target that is no run in flight fails a check, for both.
    assert {s["exit"] for s in samples if s["case"] == "kill-targets"} == {1}
    assert folders["kill-targets"]["info"]["listedTargets"] > 1000

    # The long studies: their ledger's records and bytes, the throughput of each judge on them.
    for name in ("ledger-20000", "ledger-60000"):
        info = folders[name]["info"]
        ledger = kept / "folders" / name / "study" / "ledger.jsonl"
        lines = ledger.read_bytes().splitlines()
        assert len(lines) == info["records"] and ledger.stat().st_size == info["ledgerBytes"]
        assert abs(info["records"] - int(name.split("-")[1])) < 10
        records = [json.loads(x) for x in lines]
        assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
        assert records[-1]["kind"] == "halt"
        timeline = (kept / "folders" / name / "timeline.jsonl").read_bytes().splitlines()
        assert len(timeline) == len(records)
        for judge in ("today", "current"):
            seconds = folders[name]["judges"][judge]["seconds"]
            start = folders["sound"]["judges"][judge]["seconds"]
            got = row(
                out,
                rf"^{name} {judge}: (\d+) records, ({N}) MB of ledger in ({N}) s: (\d+) records/s, ({N}) MB/s "
                rf"\((\d+) records/s past the sound folder's ({N}) s\); (\d+) records a CPU second$",
            )
            assert got[0] == info["records"]
            assert_shown(
                got[1:],
                [
                    info["ledgerBytes"] / 1e6,
                    seconds,
                    info["records"] / seconds,
                    info["ledgerBytes"] / 1e6 / seconds,
                    info["records"] / (seconds - start),
                    start,
                    info["records"] / median([x["cpu"] for x in samples if x["case"] == name and x["judge"] == judge]),
                ],
                [1, 2, 0, 2, 0, 2, 0],
                f"{name} {judge} throughput",
            )

    # The ledger that fits in 10 s and in 1 GiB: the line through the two long studies, solved for each.
    info = [folders[n]["info"] for n in ("ledger-20000", "ledger-60000")]
    per_record = sum(i["ledgerBytes"] for i in info) / sum(i["records"] for i in info)
    for judge in ("today", "current"):
        runs = [folders[n]["judges"][judge] for n in ("ledger-20000", "ledger-60000")]
        a, b = _fit([(i["records"], r["seconds"]) for i, r in zip(info, runs, strict=True)])
        c, d = _fit([(i["records"], r["peakRss"]) for i, r in zip(info, runs, strict=True)])
        in10 = (10 - b) / a if a > 0 else math.inf
        in1g = ((1 << 30) - d) / c if c > 0 else math.inf
        fitted = re.search(
            rf"^ledger within 10 s and 1 GiB, {judge} \(a line through ledger-20000, ledger-60000; ({N}) bytes a "
            rf"record\): in 10 s (.+); in 1 GiB (.+); both (.+)$",
            out,
            re.MULTILINE,
        )
        assert fitted, out
        assert shown(float(fitted.group(1)), per_record, 1), fitted.group(0)
        for text, value in ((fitted.group(2), in10), (fitted.group(3), in1g), (fitted.group(4), min(in10, in1g))):
            if math.isinf(value):
                assert text == "- (does not grow)", fitted.group(0)
            else:
                number = re.fullmatch(r"(\d+) records \((\d+) MB\)", text)
                assert number, text
                assert shown(float(number.group(1)), value, 0) and shown(
                    float(number.group(2)), value * per_record / 1e6, 0
                ), (text, value)
        capacity = doc["capacity"][judge]
        assert capacity["folders"] == ["ledger-20000", "ledger-60000"]

    met_on = sum(1 for name in FOLDERS if _table_row(out, name)[16] == "met")
    assert f"target (current judge, each folder under 10 s and 1 GiB): met on {met_on}/{len(FOLDERS)}" in out
    assert re.search(r"^machine: \d+ cores, Python [\d.]+, load average", out, re.MULTILINE), out


def test_report_hostile_kills_a_judge_past_its_limits(tmp_path: Path) -> None:
    """Past --timeout, or past --memory-limit resident, a judge is killed; its figures are shown as lower bounds."""
    for option, value, reason in (("--timeout", "0.05", "time"), ("--memory-limit", "0.015", "memory")):
        path = tmp_path / f"{reason}.json"
        out = run_bench(
            "report_hostile.py", "--quick", "--silent", "--only", "sound", option, value, "--json", str(path)
        )
        doc = json.loads(path.read_text())
        assert len(doc["samples"]) == 10
        for s in doc["samples"]:
            assert s["killed"] == reason and s["exit"] is None and not s["crashed"], s
            if reason == "time":
                assert 0.05 <= s["seconds"] < 5, s
            else:
                # Killed once /proc/<pid>/statm showed more than the limit; the kernel's high-water mark
                # (ru_maxrss) is counted apart and was seen a little under it.
                assert s["peak_rss"] > 0.9 * 0.015 * (1 << 30), s
        cells = _table_row(out, "sound")
        assert cells[1] == cells[3] == cells[6] == cells[8] == ">", cells
        assert cells[12] == cells[14] == "-" and cells[15] == "k/k", cells
        assert cells[16] == f"MISSED (killed at the {reason} limit)", cells
        assert "target (current judge, each folder under 10 s and 1 GiB): met on 0/1" in out
