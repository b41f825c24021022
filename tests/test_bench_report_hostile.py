"""The hostile-report bench still runs and still measures: a --quick run judges every folder it built, with both judges.

A run this short says nothing about the targets (its folders are small), so
the figures are not held to them; but they must be what was measured.  The
test keeps the bench's folder (``--keep``) and checks, with its own
arithmetic: that today's judge is the baseline commit's code and the current
one the working tree's, each imported from its own copy; that the caps the
bench read are the current judge's ``engine/folder.py`` (each file's own, and
the kill folders' budget) and today's ``safefile`` ones; that every folder
was built within those caps (its grown file, or its kill folders together,
just under their --quick size), and its size is what the table says; that
every run left the output it counted; each table row the medians of its runs
(``--json``), its ratios and its verdict those of the figures beside them;
the long sound studies judged sound by both judges, their throughput and the
fitted ledger size those of their runs; the kill folders' cost and the
number that fits in 10 s those of the runs on them.  A second, shorter run
checks that a judge past the time or memory limit is killed and shown as
such.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from studymon.engine.folder import EvidenceFolder, KillFolder
from tests.benches import NUMBER as N
from tests.benches import assert_ratio, assert_shown, median, row, run_bench, run_bench_kept, shown

ROOT = Path(__file__).resolve().parent.parent
MiB = 1 << 20
QUICK_BYTES = 256 * 1024  # a grown file's size with --quick, less the bench's 4 KiB of slack
QUICK_BUDGET = 5 * QUICK_BYTES  # the kill folders' budget with --quick, less the slack
SLACK = 4096
LEDGERS = ["ledger-20000", "ledger-60000"]
KILLS = ["kills-20", "kills-60"]
FOLDERS = [
    "sound",
    "kill-targets",
    "live-events",
    "live-lines",
    *LEDGERS,
    "ledger-lines",
    "at-kill",
    "at-kill-element",
    "snapshots",
    "window",
    "launches",
    "launches-lines",
    "arms",
    "timeline",
    "timeline-lines",
    "kills-budget",
    *KILLS,
    "whole-folder",
]
TABLE_ROW = (
    r"^{name}\s+({N})\s+(>?)({N})\s+(>?)({N})\s+({N})\s+(>?)({N})\s+(>?)({N})\s+({N})"
    r"\s+([<>]?)({N}|-)\s+([<>]?)({N}|-)\s+(\S+)\s+(met|MISSED.*)$"
)
KILL_DIR = re.compile(r"[1-9][0-9]{0,5}")
GENERIC = ("JSON_CAP", "JSONL_CAP", "LEDGER_CAP", "ARRAY_CAP", "LINE_CAP", "ELEMENT_CAP")


def _table_row(out: str, name: str) -> list[str]:
    found = re.findall(TABLE_ROW.format(name=re.escape(name), N=N), out, re.MULTILINE)
    assert len(found) == 1, f"{len(found)} table rows for {name}:\n{out}"
    return list(found[0])


def _cap_of(rel: str) -> int | None:
    """The working tree's cap for ``OUT/rel`` (engine/folder.py), or None for a file the judge does not read."""
    parts = rel.split("/")
    if len(parts) == 3 and parts[0] == "kills" and KILL_DIR.fullmatch(parts[1]):
        return KillFolder.CAPS.get(parts[2])
    return EvidenceFolder.CAPS.get(rel)


def _generic_cap_of(rel: str, caps: dict[str, int]) -> int:
    """Today's cap for ``OUT/rel``: safefile's, by kind of file."""
    if rel == "study/ledger.jsonl":
        return caps["LEDGER_CAP"]
    if rel.endswith("/ledger-at-kill.json"):
        return caps["ARRAY_CAP"]
    return caps["JSONL_CAP"] if rel.endswith(".jsonl") else caps["JSON_CAP"]


def _kills(folder: Path) -> dict[int, int]:
    """Each kill folder and what it counts for against the budget: its known files' sizes, each up to its cap."""
    out = {}
    for d in (folder / "kills").iterdir():
        if KILL_DIR.fullmatch(d.name) and d.is_dir():
            out[int(d.name)] = sum(
                min(f.stat().st_size, KillFolder.CAPS[f.name]) for f in d.iterdir() if f.name in KillFolder.CAPS
            )
    return out


def _quick(cap: int) -> int:
    """What a file of this cap is made up to with --quick."""
    return min(cap, QUICK_BYTES) - SLACK


def _probe(root: Path, code: str) -> object:
    """``code``'s printed JSON, run in a judge's copy as the bench runs it (-P, only the copy on PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(root)
    proc = subprocess.run(
        [sys.executable, "-P", "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout)


def _fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    (x1, y1), (x2, y2) = points  # two ledger sizes with --quick: the line through them
    a = (y2 - y1) / (x2 - x1)
    return a, y1 - a * x1


def test_report_hostile_quick_measures_every_folder_with_both_judges(tmp_path: Path) -> None:
    out, kept = run_bench_kept(
        "report_hostile.py", "--quick", "--silent", "--json", str(tmp_path / "rh.json"), into=tmp_path, timeout=600
    )
    doc = json.loads((tmp_path / "rh.json").read_text())
    samples = doc["samples"]
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

    # The caps: the current judge's are engine/folder.py's, each file's own, and the kills' budget, as the working
    # tree has them and as its copy has them; today's (no folder.py) safefile's, as its copy has them.
    own = {"evidence": dict(EvidenceFolder.CAPS), "kill": dict(KillFolder.CAPS)}
    assert current["file_caps"] == own and current["budget"] == KillFolder.BUDGET, current
    assert doc["caps"] == {**own, "budget": KillFolder.BUDGET}
    assert Path(current["folder_module"]).is_relative_to(kept / "judge-current")
    copied = _probe(
        kept / "judge-current",
        "import json; from studymon.engine.folder import EvidenceFolder as E, KillFolder as K; "
        "print(json.dumps([E.CAPS, K.CAPS, K.BUDGET]))",
    )
    assert copied == [own["evidence"], own["kill"], KillFolder.BUDGET], copied
    assert not (kept / "judge-today/studymon/engine/folder.py").exists()
    assert today["file_caps"] is None and today["budget"] is None and today["folder_module"] is None, today
    generic = _probe(
        kept / "judge-today",
        "import json; from studymon.engine import safefile as s; "
        f"print(json.dumps({{n: getattr(s, n) for n in {GENERIC!r}}}))",
    )
    assert today["caps"] == generic, (today["caps"], generic)
    caps_shown = ", ".join(f"{k} {v / MiB:g} MiB" for k, v in EvidenceFolder.CAPS.items())
    kill_shown = ", ".join(f"{k} {v / MiB:g} MiB" for k, v in KillFolder.CAPS.items())
    assert (
        f"caps (current: engine/folder.py's, each file's own): {caps_shown}; kills/<n>/: {kill_shown}; "
        f"all kill folders {KillFolder.BUDGET / MiB:g} MiB" in out
    )
    assert (
        "caps (today: engine/safefile.py's, by kind of file; no bound on the kill folders): "
        + ", ".join(
            f"{k} {v / MiB:g} MiB"
            for k, v in generic.items()  # type: ignore[union-attr]
        )
        in out
    )

    for name, f in folders.items():
        # The folder as built: its files, their sizes, each within its cap (both judges'); the kill folders
        # within the budget; the grown file (or the kill folders together) just under --quick's size.
        root = kept / "folders" / name
        on_disk = {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}
        assert on_disk == f["files"], name
        assert f["bytes"] == sum(on_disk.values())
        for rel, size in on_disk.items():
            cap = _cap_of(rel)
            assert cap is not None, (name, rel)
            # The long studies are sized in records, not bytes: their files are within the caps themselves.
            assert size <= (cap - SLACK if name in LEDGERS else _quick(cap)), (name, rel, size)
            assert size <= _generic_cap_of(rel, generic), (name, rel)  # type: ignore[arg-type]
        assert on_disk["study/ledger.jsonl"] <= EvidenceFolder.CAPS[EvidenceFolder.LEDGER] - SLACK
        kills = _kills(root)
        # Within the budget; those built to it, within --quick's (the others' files are each --quick's size).
        assert sum(kills.values()) <= (QUICK_BUDGET if f["cap"] == "budget" else KillFolder.BUDGET) - SLACK, name
        assert f["kills"] == {"folders": len(kills), "bytes": sum(kills.values())}, name
        assert f["unread"] == {j: {"overCap": [], "pastBudget": []} for j in ("today", "current")}, name
        said = r"both judges read every file \(none past its cap, no kill folder past the budget\)"
        assert re.search(rf"^{re.escape(name)}: .*; {said}$", out, re.MULTILINE), name
        if f["cap"] == "budget":
            assert f["capBytes"] == KillFolder.BUDGET
        elif f["cap"] is not None:
            assert f["capBytes"] == _cap_of(f["cap"]), name
        if f["cap"] is not None and f["cap"] != "budget" and name not in LEDGERS and not name.startswith("at-kill"):
            grown = on_disk[f["cap"]]  # the file its case grows, within 1 KiB under its size
            assert _quick(f["capBytes"]) - 1024 < grown <= _quick(f["capBytes"]), (name, f["cap"], grown)
        if name == "at-kill-element":  # one element of ledger-at-kill.json, not the file, is what is grown
            element, size = f["info"]["elementBytes"], on_disk[f["cap"]]
            assert _quick(f["capBytes"]) - 1024 < size <= _quick(f["capBytes"]), (name, size)
            assert size - 2048 < element < size, (name, element)
        if name == "at-kill":  # each ledger-at-kill.json padded to its size: the ledger's first records, compared
            records = [json.loads(x) for x in (root / "study/ledger.jsonl").read_bytes().splitlines()]
            first = kept / "folders" / name / "kills/1/ledger-at-kill.json"
            assert first.stat().st_size == _quick(f["capBytes"])
            for rel, held in f["info"]["atKillRecords"].items():
                assert json.loads((root / rel).read_bytes()) == records[:held], rel
                assert held > 1000, (rel, held)
        if name == "kills-budget":
            # As many kill folders as the budget lets in, each kill.json and live recording up to its size.
            assert len(kills) == f["info"]["killFolders"] >= 3, kills
            assert sum(kills.values()) >= QUICK_BUDGET - SLACK - 4096, kills
            for n in range(1, len(kills)):
                for rel in (f"kills/{n}/kill.json", f"kills/{n}/container-events-live.jsonl"):
                    assert _quick(_cap_of(rel)) - 1024 < on_disk[rel] <= _quick(_cap_of(rel)), (rel, on_disk[rel])  # type: ignore[arg-type]
        if name in KILLS:
            assert len(kills) == f["info"]["killFolders"] == int(name.split("-")[1]), (name, len(kills))
        if name == "whole-folder":
            # Every file of the folder's own up to its size; the ledger as many rounds as fit; the event recordings
            # each up to its size, as long as the budget lasts.
            for rel in ("timeline.jsonl", "launches.jsonl", "arms.jsonl", "ledger-watch.jsonl", "research.json"):
                assert _quick(_cap_of(rel)) - 1024 < on_disk[rel] <= _quick(_cap_of(rel)), (rel, on_disk[rel])  # type: ignore[arg-type]
            assert (root / "launches.jsonl").read_bytes().startswith(b"0\n0\n")
            assert (root / "timeline.jsonl").read_bytes().endswith(b"\n0\n0\n")
            ledger = on_disk["study/ledger.jsonl"]
            assert _quick(EvidenceFolder.CAPS[EvidenceFolder.LEDGER]) - 2048 < ledger, ledger
            spent = sum(kills.values())
            for rel in [f"kills/{n}/container-events{s}.jsonl" for n in (1, 2) for s in ("-live", "")]:
                assert spent > QUICK_BUDGET - SLACK - 1024 or on_disk[rel] > _quick(_cap_of(rel)) - 1024, (rel, spent)  # type: ignore[arg-type]

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
        over = [(w, v / t) for w, v, t in (("time", seconds, 10), ("memory", rss, 1 << 30)) if v > t]
        expected = "met" if not over else "MISSED (" + ", ".join(f"{w} x{x:.2f}" for w, x in over) + ")"
        assert cells[16] == expected, (name, cells, seconds, rss)

    # The sound folder is sound for both judges; so are the long studies, read to their end.
    for name in ("sound", *LEDGERS):
        assert {s["exit"] for s in samples if s["case"] == name} == {0}, name
    # A listed target that is no run in flight fails a check, for both; so does a kill folder the ledger never had.
    for name in ("kill-targets", "kills-budget", *KILLS, "whole-folder"):
        assert {s["exit"] for s in samples if s["case"] == name} == {1}, name
    assert folders["kill-targets"]["info"]["listedTargets"] > 1000

    # The long studies: their ledger's records and bytes, the throughput of each judge on them.
    for name in LEDGERS:
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

    # The kill folders: what each costs past the sound folder's two, in time and in report.
    for name in KILLS:
        kills = folders[name]["info"]["killFolders"]
        for judge in ("today", "current"):
            mine_, sound = folders[name]["judges"][judge], folders["sound"]["judges"][judge]
            got = row(
                out,
                rf"^{name} {judge}: (\d+) kill folders in ({N}) s, ({N}) KB of report: ({N}) ms and (-?\d+) bytes of "
                rf"report a kill folder past the sound folder's two \(({N}) s, ({N}) KB\)$",
            )
            assert got[0] == kills
            assert_shown(
                got[1:],
                [
                    mine_["seconds"],
                    mine_["stdoutBytes"] / 1e3,
                    1e3 * (mine_["seconds"] - sound["seconds"]) / (kills - 2),
                    (mine_["stdoutBytes"] - sound["stdoutBytes"]) / (kills - 2),
                    sound["seconds"],
                    sound["stdoutBytes"] / 1e3,
                ],
                [2, 1, 2, 0, 2, 1],
                f"{name} {judge} per kill folder",
            )
            assert mine_["stdoutBytes"] > sound["stdoutBytes"] + 500 * (kills - 2)  # the report follows the kills

    # What fits in 10 s and in 1 GiB: the line through the two long studies (the two kill counts), solved for each.
    for group, names, key in (("ledger", LEDGERS, "records"), ("kills", KILLS, "killFolders")):
        info = [folders[n]["info"] for n in names]
        per_record = sum(i["ledgerBytes"] for i in info) / sum(i["records"] for i in info) if group == "ledger" else 0
        for judge in ("today", "current"):
            runs = [folders[n]["judges"][judge] for n in names]
            a, b = _fit([(i[key], r["seconds"]) for i, r in zip(info, runs, strict=True)])
            c, d = _fit([(i[key], r["peakRss"]) for i, r in zip(info, runs, strict=True)])
            e, _ = _fit([(i[key], r["stdoutBytes"]) for i, r in zip(info, runs, strict=True)])
            in10 = (10 - b) / a if a > 0 else math.inf
            in1g = ((1 << 30) - d) / c if c > 0 else math.inf
            if group == "ledger":
                head = (
                    rf"^ledger within 10 s and 1 GiB, {judge} \(a line through {', '.join(names)}; "
                    rf"({N}) bytes a record\)"
                )
                tail, size = "", r"(\d+) records \((\d+) MB\)"
            else:
                head = rf"^kill folders within 10 s and 1 GiB, {judge} \(a line through {', '.join(names)}\)()"
                tail, size = r"; the report grows by (-?\d+) bytes a kill folder", r"(\d+) kill folders()"
            fitted = re.search(rf"{head}: in 10 s (.+?); in 1 GiB (.+?); both (.+?){tail}$", out, re.MULTILINE)
            assert fitted, out
            if group == "ledger":
                assert shown(float(fitted.group(1)), per_record, 1), fitted.group(0)
            else:
                assert shown(float(fitted.group(5)), e, 0), (fitted.group(0), e)
            for text, value in ((fitted.group(2), in10), (fitted.group(3), in1g), (fitted.group(4), min(in10, in1g))):
                if math.isinf(value):
                    assert text == "- (does not grow)", fitted.group(0)
                    continue
                number = re.fullmatch(size, text)
                assert number, text
                assert shown(float(number.group(1)), value, 0), (text, value)
                if group == "ledger":
                    assert shown(float(number.group(2)), value * per_record / 1e6, 0), (text, value)
            assert doc["capacity"][group][judge]["folders"] == names

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
