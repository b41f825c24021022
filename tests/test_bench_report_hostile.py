"""The hostile-report bench still runs and still measures: a --quick run judges every folder it built, with both judges.

A run this short says nothing about the targets (its folders are small), so
the figures are not held to them; but they must be what was measured.  The
test keeps the bench's folder (``--keep``) and checks, with its own
arithmetic: that today's judge is the baseline commit's code and the current
one the working tree's, each imported from its own copy; that the caps and
bounds the bench read are the current judge's (``engine/contract/folder.py``: each
file's own cap, the kill folders' budget, their event recordings' budget and
the kill-folder limit; ``engine/judge/read.py``'s BAD_LINES) and today's
``safefile`` ones; that every folder was built within those caps and
budgets (its grown file, its recordings or its kill folders together, just
under their --quick size), only the kill folders in number past the limit,
and its size is what the table says; that the folders of events hold
valid events inside their kill's window; that every run left the output it
counted, with as many kills as the judge reads (past the limit, the first
LIMIT and one for the rest); each table row the medians of its runs
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
from typing import Any

from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from studymon.engine.evidence.records import ContainerEvent, parse_event
from studymon.engine.judge import read
from tests.benches import NUMBER as N
from tests.benches import assert_ratio, assert_shown, median, row, run_bench, run_bench_kept, shown

ROOT = Path(__file__).resolve().parent.parent
MiB = 1 << 20
QUICK_BYTES = 256 * 1024  # a grown file's size with --quick, less the bench's 4 KiB of slack
QUICK_BUDGET = 5 * QUICK_BYTES  # the kill folders' budget with --quick, less the slack
QUICK_RECORDINGS = QUICK_BYTES  # their event recordings' budget with --quick, less the slack
SLACK = 4096
LEDGERS = ["ledger-20000", "ledger-60000"]
KILLS = ["kills-20", "kills-60", "kills-100"]
KILLS_READ = [k for k in KILLS if int(k.split("-")[1]) <= KillFolder.LIMIT]  # the line through them: within the limit
FOLDERS = [
    "sound",
    "kill-targets",
    "live-events",
    "live-lines",
    "live-others",
    "recordings-budget",
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
    "kills-limit",
    *KILLS,
    "whole-folder",
]
TABLE_ROW = (
    r"^{name}\s+({N})\s+(>?)({N})\s+(>?)({N})\s+({N})\s+(>?)({N})\s+(>?)({N})\s+({N})"
    r"\s+([<>]?)({N}|-)\s+([<>]?)({N}|-)\s+(\S+)\s+(met|MISSED.*)$"
)
KILL_DIR = re.compile(r"[1-9][0-9]{0,5}")
# The campaign folders (studymon report CAMPAIGN, the current judge alone), and the exit status each must get:
# two sound trials; a journal past the trial limit; trial folders past the budget (unknown); a trial folder of
# another study's ledger; campaign.json of empty objects; everything at once.
CAMPAIGNS = {
    "campaign-sound": 0,
    "campaign-lines": 1,
    "campaign-budget": 3,
    "campaign-ledger": 1,
    "campaign-objects": 1,
    "campaign-whole": 1,
}
CAMPAIGN_ROW = r"^{name}\s+({N})\s+(\d+)\s+(\d+)\s+(\d+)\s+(>?)({N})\s+(>?)({N})\s+({N})\s+(\S+)\s+(met|MISSED.*)$"
CHECK_ROW = re.compile(r"^│[^│]*│ (campaign|trial \d+)\s*│ (\w+)\s*│ (✓|✗|\?) │", re.MULTILINE)
QUICK_TRIALS = 200
GENERIC = ("JSON_CAP", "JSONL_CAP", "LEDGER_CAP", "ARRAY_CAP", "LINE_CAP", "ELEMENT_CAP")


def _table_row(out: str, name: str) -> list[str]:
    found = re.findall(TABLE_ROW.format(name=re.escape(name), N=N), out, re.MULTILINE)
    assert len(found) == 1, f"{len(found)} table rows for {name}:\n{out}"
    return list(found[0])


def _cap_of(rel: str) -> int | None:
    """The working tree's cap for ``OUT/rel`` (engine/contract/folder.py), or None for a file the judge does not read."""
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


def _kill_numbers(folder: Path) -> list[int]:
    """Every kill folder's number, in order."""
    return sorted(int(d.name) for d in (folder / "kills").iterdir() if KILL_DIR.fullmatch(d.name) and d.is_dir())


def _kills(folder: Path) -> dict[int, tuple[int, int]]:
    """Each kill folder the judge reads (the first LIMIT) and what it counts for against the budgets: its known files'
    sizes (one past its cap counting for nothing), and of them, its event recordings'."""
    out = {}
    for n in _kill_numbers(folder)[: KillFolder.LIMIT]:
        total = recorded = 0
        for f in (folder / "kills" / str(n)).iterdir():
            if f.name in KillFolder.CAPS and f.stat().st_size <= KillFolder.CAPS[f.name]:
                total += f.stat().st_size
                recorded += f.stat().st_size if f.name in KillFolder.RECORDINGS else 0
        out[n] = (total, recorded)
    return out


def _window(folder: Path, n: int) -> tuple[int, int]:
    """Kill ``n``'s window in ns: from its start to its first target's result seen."""
    window = json.loads((folder / f"kills/{n}/container-events-window.json").read_bytes())
    run = json.loads((folder / f"kills/{n}/kill.json").read_bytes())["targets"][0]["run"]
    return int(window["sinceEpoch"] * 1e9), int(window["targets"][run]["resultSeenEpoch"] * 1e9)


def _added_events(folder: Path, rel: str, sound: Path) -> list[ContainerEvent]:
    """The lines of ``rel`` past the sound folder's own, each a minimal valid container event inside its kill's
    window (a start, an Id and a name, its Type and the time a console saw it, nothing else)."""
    own = len((sound / rel).read_bytes().splitlines())
    lines = (folder / rel).read_bytes().splitlines()
    assert lines[:own] == (sound / rel).read_bytes().splitlines(), rel
    since, until = _window(folder, int(rel.split("/")[1]))
    events = []
    for line in lines[own:]:
        value = json.loads(line)
        assert set(value) == {"Type", "Action", "timeNano", "Actor", "seenAt"}, line
        assert set(value["Actor"]) == {"ID", "Attributes"}, line
        e = parse_event(value)
        assert isinstance(e, ContainerEvent) and e.verb == "start" and e.study is None, line
        assert since < e.lo_ns < until, (rel, line)
        events.append(e)
    return events


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

    # The caps: the current judge's are engine/contract/folder.py's, each file's own, the kills' budget, their recordings'
    # budget and the kill-folder limit, with engine/judge/read.py's BAD_LINES, as the working tree has them and as
    # its copy has them; today's (no folder.py, no judge/) safefile's, as its copy has them, and no other bound.
    own = {"evidence": dict(EvidenceFolder.CAPS), "kill": dict(KillFolder.CAPS)}
    bounds = {
        "budget": KillFolder.BUDGET,
        "recordingsBudget": KillFolder.RECORDINGS_BUDGET,
        "limit": KillFolder.LIMIT,
        "badLines": read.BAD_LINES,
    }
    assert current["file_caps"] == own and current["budget"] == KillFolder.BUDGET, current
    assert current["recordings_budget"] == KillFolder.RECORDINGS_BUDGET and current["limit"] == KillFolder.LIMIT
    assert current["bad_lines"] == read.BAD_LINES, current
    assert doc["caps"] == {**own, **bounds}
    assert Path(current["folder_module"]).is_relative_to(kept / "judge-current")
    assert Path(current["read_module"]).is_relative_to(kept / "judge-current")
    copied = _probe(
        kept / "judge-current",
        "import json; from studymon.engine.contract.folder import EvidenceFolder as E, KillFolder as K; "
        "from studymon.engine.judge.read import BAD_LINES; "
        "print(json.dumps([E.CAPS, K.CAPS, K.BUDGET, K.RECORDINGS_BUDGET, K.LIMIT, BAD_LINES]))",
    )
    assert copied == [own["evidence"], own["kill"], *bounds.values()], copied
    assert not (kept / "judge-today/studymon/engine/folder.py").exists()
    assert not (kept / "judge-today/studymon/engine/judge").exists()
    assert today["file_caps"] is None and today["budget"] is None and today["folder_module"] is None, today
    assert today["recordings_budget"] is None and today["limit"] is None and today["bad_lines"] is None, today
    assert today["read_module"] is None, today
    generic = _probe(
        kept / "judge-today",
        "import json; from studymon.engine import safefile as s; "
        f"print(json.dumps({{n: getattr(s, n) for n in {GENERIC!r}}}))",
    )
    assert today["caps"] == generic, (today["caps"], generic)
    caps_shown = ", ".join(f"{k} {v / MiB:g} MiB" for k, v in EvidenceFolder.CAPS.items())
    kill_shown = ", ".join(f"{k} {v / MiB:g} MiB" for k, v in KillFolder.CAPS.items())
    assert (
        f"caps (current: engine/contract/folder.py's, each file's own): {caps_shown}; kills/<n>/: {kill_shown}; "
        f"all kill folders {KillFolder.BUDGET / MiB:g} MiB, their event recordings "
        f"{KillFolder.RECORDINGS_BUDGET / MiB:g} MiB; the first {KillFolder.LIMIT} kill folders read; "
        f"a file with more than {read.BAD_LINES} lines that are not its records refused\n" in out
    )
    assert (
        "caps (today: engine/safefile.py's, by kind of file; no bound on the kill folders): "
        + ", ".join(
            f"{k} {v / MiB:g} MiB"
            for k, v in generic.items()  # type: ignore[union-attr]
        )
        in out
    )
    sound = kept / "folders" / "sound"

    for name, f in folders.items():
        # The folder as built: its files, their sizes, each within its cap (both judges'); the kill folders the
        # judge reads within the budget and their recordings within theirs; only the kill folders in number past
        # the limit; the grown file (or the kill folders together, or their recordings) just under --quick's size.
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
        kills, count = _kills(root), len(_kill_numbers(root))
        spent, recorded = sum(t for t, _ in kills.values()), sum(r for _, r in kills.values())
        # Within the budget; those built to it, within --quick's (the others' files are each --quick's size).
        assert spent <= (QUICK_BUDGET if f["cap"] == "budget" else KillFolder.BUDGET) - SLACK, name
        assert recorded <= min(QUICK_RECORDINGS, KillFolder.RECORDINGS_BUDGET) - SLACK, (name, recorded)
        assert f["kills"] == {"folders": len(kills), "bytes": spent, "recorded": recorded}, name
        past = max(0, count - KillFolder.LIMIT)
        assert not past or name in KILLS, (name, count)  # only the kill folders in number are past the limit
        assert f["unread"] == {
            "today": {"overCap": [], "pastBudget": [], "pastRecordings": [], "pastLimit": 0},
            "current": {"overCap": [], "pastBudget": [], "pastRecordings": [], "pastLimit": past},
        }, name
        judged = {"today": count, "current": min(count, KillFolder.LIMIT + 1)}
        assert f["killsJudged"] == judged, (name, f["killsJudged"])
        said = (
            rf"current does not read {past} kill folders past the limit, for which one kill stands"
            if past
            else r"both judges read every file \(none past its cap, no kill folder past the budgets or the limit\)"
        )
        shown_judged = rf"kills judged {count}/{judged['current']} \(today/current\)"
        assert re.search(rf"^{re.escape(name)}: .*; {shown_judged}; {said}$", out, re.MULTILINE), name
        if f["cap"] == "budget":
            assert f["capBytes"] == KillFolder.BUDGET
        elif f["cap"] == "recordings":  # the recordings together just under --quick's budget for them
            assert f["capBytes"] == KillFolder.RECORDINGS_BUDGET
            assert recorded > QUICK_RECORDINGS - SLACK - 1024, (name, recorded)
        elif f["cap"] == "limit":  # as many kill folders as the judge reads
            assert f["capBytes"] is None and count == len(kills) == KillFolder.LIMIT, (name, count)
        elif f["cap"] is not None:
            assert f["capBytes"] == _cap_of(f["cap"]), name
        if f["cap"] in f["files"] and name not in LEDGERS and not name.startswith("at-kill"):
            # The file its case grows, within 1 KiB under its size; a recording, or as far as the recordings'
            # budget allows (the sound folder's other recordings hold a few KiB of it).
            grown = on_disk[f["cap"]]
            assert grown <= _quick(f["capBytes"]), (name, f["cap"], grown)
            full = f["cap"].rsplit("/", 1)[-1] in KillFolder.RECORDINGS and recorded > QUICK_RECORDINGS - SLACK - 1024
            assert full or _quick(f["capBytes"]) - 1024 < grown, (name, f["cap"], grown)
        if name == "at-kill-element":  # one element of ledger-at-kill.json, not the file, is what is grown
            element, size = f["info"]["elementBytes"], on_disk[f["cap"]]
            assert _quick(f["capBytes"]) - 1024 < size <= _quick(f["capBytes"]), (name, size)
            assert size - 2048 < element < size, (name, element)
        if name in ("at-kill", "whole-folder"):  # each ledger-at-kill.json: the ledger's first records, compared
            records = [json.loads(x) for x in (root / "study/ledger.jsonl").read_bytes().splitlines()]
            first = kept / "folders" / name / "kills/1/ledger-at-kill.json"
            assert first.stat().st_size == _quick(_cap_of("kills/1/ledger-at-kill.json"))  # type: ignore[arg-type]
            for rel, held in f["info"]["atKillRecords"].items():
                assert json.loads((root / rel).read_bytes()) == records[:held], rel
                assert held > 1000, (rel, held)
        if name == "live-others":  # events of other containers, none the study's, each read and parsed
            events = _added_events(root, "kills/1/container-events-live.jsonl", sound)
            assert len(events) == f["info"]["addedEvents"] > 1500, len(events)  # ~150 bytes each, in the quick run's budget
            assert not any(e.name.startswith("inforsi-") for e in events if e.name), events[:3]
            assert len({e.id for e in events}) == len(events)
        if name == "recordings-budget":
            # A share of the budget in each recording of kills 1 and 2, half its events the study's containers';
            # a kill's read-back the same events as its live recording.
            added = {}
            for n in (1, 2):
                for file in ("container-events-live.jsonl", "container-events.jsonl"):
                    rel = f"kills/{n}/{file}"
                    added[rel] = _added_events(root, rel, sound)
                    assert len(added[rel]) == f["info"][f"events:{rel}"] > 300, rel
                    ours = sum(1 for e in added[rel] if e.name and e.name.startswith("inforsi-s-z"))
                    assert ours == len(added[rel]) // 2, (rel, ours)
                live, back = added[f"kills/{n}/container-events-live.jsonl"], added[f"kills/{n}/container-events.jsonl"]
                common = min(len(live), len(back))
                assert [e.key for e in live[:common]] == [e.key for e in back[:common]], n
            assert max(len(x) for x in added.values()) - min(len(x) for x in added.values()) < 50, added.keys()
        if name == "kills-budget":
            # As many kill folders as the budget lets in, within the limit, each kill.json up to its size (the last
            # one up to what is left); the recordings' budget spent on kill 1's live recording first.
            assert len(kills) == count == f["info"]["killFolders"] >= 3, kills
            assert count <= KillFolder.LIMIT
            assert spent >= QUICK_BUDGET - SLACK - 4096, kills
            assert recorded > QUICK_RECORDINGS - SLACK - 1024, recorded
            for n in range(1, len(kills)):
                rel = f"kills/{n}/kill.json"
                assert _quick(_cap_of(rel)) - 1024 < on_disk[rel] <= _quick(_cap_of(rel)), (rel, on_disk[rel])  # type: ignore[arg-type]
            assert on_disk["kills/1/container-events-live.jsonl"] > QUICK_RECORDINGS - SLACK - 8192
        if name == "kills-limit":  # kill 2's files in every kill folder past the sound folder's two
            for n in range(3, count + 1):
                assert {p.name: p.read_bytes() for p in (root / "kills" / str(n)).iterdir()} == {
                    p.name: p.read_bytes() for p in (sound / "kills" / "2").iterdir()
                }, n
        if name in KILLS:
            assert count == f["info"]["killFolders"] == int(name.split("-")[1]), (name, count)
            assert len(kills) == min(count, KillFolder.LIMIT)
        if name == "whole-folder":
            # Every file of the folder's own up to its size, with lines of its own kind (ledger-watch.jsonl, whose
            # every line is a fault, with lines '0'); the ledger as many rounds as fit; the recordings' budget spent
            # on minimal events; the rest of the budget on the ledger-at-kill.json copies, then on kill.json.
            for rel in ("timeline.jsonl", "launches.jsonl", "arms.jsonl", "ledger-watch.jsonl", "research.json"):
                assert _quick(_cap_of(rel)) - 1024 < on_disk[rel] <= _quick(_cap_of(rel)), (rel, on_disk[rel])  # type: ignore[arg-type]
            assert json.loads((root / "launches.jsonl").read_bytes().splitlines()[0])["event"] == "start"
            assert json.loads((root / "arms.jsonl").read_bytes().splitlines()[0])["event"] == "arm"
            timeline = (root / "timeline.jsonl").read_bytes().splitlines()
            assert len(timeline) > f["info"]["records"] and all(isinstance(json.loads(x)["seq"], int) for x in timeline)
            assert (root / "ledger-watch.jsonl").read_bytes().startswith(b"0\n0\n")
            ledger = on_disk["study/ledger.jsonl"]
            assert _quick(EvidenceFolder.CAPS[EvidenceFolder.LEDGER]) - 2048 < ledger, ledger
            assert recorded > QUICK_RECORDINGS - SLACK - 1024, recorded
            # Its kill folders are those of every long study (ledger-*), before their recordings grew.
            events = _added_events(root, "kills/1/container-events-live.jsonl", kept / "folders" / LEDGERS[0])
            assert len(events) == f["info"]["events:kills/1/container-events-live.jsonl"] > 1500
            for rel in ("kills/2/ledger-at-kill.json", "kills/1/kill.json", "kills/2/kill.json"):
                assert spent > QUICK_BUDGET - SLACK - 16384 or on_disk[rel] > _quick(_cap_of(rel)) - 1024, (rel, spent)  # type: ignore[arg-type]

        # Every run: the output it counted, kept; as many runs as asked (the sound folder's five); in it, every kill
        # the judge reads, and past the limit one more that stands for the others.
        mine = {j: [s for s in samples if s["case"] == name and s["judge"] == j] for j in ("today", "current")}
        for runs in mine.values():
            assert len(runs) == (5 if name == "sound" else 1), (name, runs)
            for s in runs:
                stdout = kept / "runs" / f"{name}-{s['judge']}-{s['round']}.stdout"
                assert stdout.stat().st_size == s["stdout_bytes"] > 0, (name, s)
                text = stdout.read_text()
                assert s["summary"] == text.strip().splitlines()[-1].strip()[:200]
                assert s["killed"] is None and not s["crashed"], s
                assert s["cpu"] > 0 and 10 * MiB < s["peak_rss"] < 4 << 30, s
                # Started by a process of a few MiB, not by the bench: the peak is the judge's own.
                assert 0 < s["floor"] < 20 * MiB < s["peak_rss"], s
                labels = {int(k) for k in re.findall(r"^│[^│]*│ kill (\d+)[ ·]", text, re.MULTILINE)}
                assert labels == set(range(1, judged[s["judge"]] + 1)), (name, s["judge"], sorted(labels)[-3:])
                standing = f"kills/ holds more than {KillFolder.LIMIT} kill folders"
                assert (standing in text) == (s["judge"] == "current" and past > 0), (name, s["judge"])

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
    # Events of other containers concern nothing of the study: valid lines, read, and the folder still sound.
    assert {s["exit"] for s in samples if s["case"] == "live-others"} == {0}
    # A listed target that is no run in flight fails a check, for both; so does a kill folder the ledger never had,
    # and a container of the study started in a kill's window for a run never planned.
    for name in ("kill-targets", "recordings-budget", "kills-budget", *KILLS, "whole-folder"):
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

    # The kill folders: what each kill judged costs past the sound folder's two, in time and in report; past the
    # limit, the first LIMIT and one for the others.
    for name in KILLS:
        kills = folders[name]["info"]["killFolders"]
        for judge in ("today", "current"):
            judged = folders[name]["killsJudged"][judge]
            mine_, sound_runs = folders[name]["judges"][judge], folders["sound"]["judges"][judge]
            rest = kills - KillFolder.LIMIT
            part = rf", {judged} kills judged \(the first {KillFolder.LIMIT} read, one for the other {rest}\)"
            got = row(
                out,
                rf"^{name} {judge}: (\d+) kill folders{part if judged < kills else ''} in ({N}) s, ({N}) KB of "
                rf"report: ({N}) ms and (-?\d+) bytes of report a kill judged past the sound folder's two "
                rf"\(({N}) s, ({N}) KB\)$",
            )
            assert got[0] == kills
            assert_shown(
                got[1:],
                [
                    mine_["seconds"],
                    mine_["stdoutBytes"] / 1e3,
                    1e3 * (mine_["seconds"] - sound_runs["seconds"]) / (judged - 2),
                    (mine_["stdoutBytes"] - sound_runs["stdoutBytes"]) / (judged - 2),
                    sound_runs["seconds"],
                    sound_runs["stdoutBytes"] / 1e3,
                ],
                [2, 1, 2, 0, 2, 1],
                f"{name} {judge} per kill folder",
            )
            # The report follows the kills judged, not the kill folders.
            assert mine_["stdoutBytes"] > sound_runs["stdoutBytes"] + 500 * (judged - 2)
            assert mine_["stdoutBytes"] < sound_runs["stdoutBytes"] + 5000 * (judged - 2)

    # What fits in 10 s and in 1 GiB: the line through the two long studies (the two kill counts), solved for each.
    for group, names, key in (("ledger", LEDGERS, "records"), ("kills", KILLS_READ, "killFolders")):
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
                tail = (
                    rf"; the report grows by (-?\d+) bytes a kill folder; the current judge reads the first "
                    rf"{KillFolder.LIMIT}"
                )
                size = r"(\d+) kill folders()"
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

    _check_campaigns(out, doc, kept)

    met_on = sum(1 for name in FOLDERS if _table_row(out, name)[16] == "met")
    assert f"target (current judge, each folder under 10 s and 1 GiB): met on {met_on}/{len(FOLDERS)}" in out
    assert re.search(r"^machine: \d+ cores, Python [\d.]+, load average", out, re.MULTILINE), out


def _check_campaigns(out: str, doc: dict[str, Any], kept: Path) -> None:
    """The campaign folders: each built within the report's bounds (the journal, campaign.json, the trials, the
    trial folders' budget) as its case says, reported on once by the current judge alone, its table row those
    runs' figures, its exit the one its folder must get, and the checks its report shows those that say why."""
    from studymon.engine.explore import campaign as c

    bounds = doc["campaignBounds"]
    assert bounds == {name: getattr(c, name) for name in bounds} and len(bounds) == 9, bounds
    results = {r["name"]: r for r in doc["campaigns"]}
    assert list(results) == list(CAMPAIGNS), list(results)
    marks: dict[str, dict[tuple[str, str], str]] = {}
    for name, r in results.items():
        camp = kept / "campaigns" / name
        on_disk = {str(p.relative_to(camp)): p.stat().st_size for p in camp.rglob("*") if p.is_file()}
        assert (sum(on_disk.values()), len(on_disk)) == (r["bytes"], r["files"]), name
        journal, summary = camp / "trials.jsonl", camp / "campaign.json"
        assert journal.stat().st_size <= c.JOURNAL_CAP - SLACK and summary.stat().st_size <= c.SUMMARY_CAP - SLACK
        lines = [json.loads(x) for x in journal.read_bytes().splitlines()]
        assert len(lines) == r["info"]["journalLines"], name
        assert len({x["n"] for x in lines}) == r["info"]["trials"], name
        assert (name == "campaign-lines") == (r["info"]["trials"] > c.TRIALS_LIMIT), name  # only it past the limit
        folders = sorted(int(p.name) for p in (camp / "trials").iterdir())
        assert folders == list(range(1, r["info"]["trialFolders"] + 1)), name
        runs = [s for s in doc["campaignSamples"] if s["case"] == name]
        assert len(runs) == 1 and runs[0]["judge"] == "current", runs
        s = runs[0]
        stdout = kept / "runs" / f"{name}-current-0.stdout"
        assert stdout.stat().st_size == s["stdout_bytes"] > 0, name
        text = stdout.read_text()
        assert s["killed"] is None and not s["crashed"] and s["exit"] == CAMPAIGNS[name], (name, s)
        assert 0 < s["floor"] < 20 * MiB < s["peak_rss"] < 4 << 30 and s["cpu"] > 0, s
        assert "studymon explore — s" in text, name
        marks[name] = {(scope, check): mark for scope, check, mark in CHECK_ROW.findall(text)}
        assert {check for scope, check in marks[name] if scope == "campaign"} == {
            "journalWellFormed",
            "trialFolders",
            "journalAgrees",
            "summaryAgrees",
            "trialsJudged",
            "trialsRan",
        }, (name, marks[name])
        # Its table row: the folder's size, trials, folders and lines, the run's time, peak and output, its exit.
        found = re.findall(CAMPAIGN_ROW.format(name=re.escape(name), N=N), out, re.MULTILINE)
        assert len(found) == 1, (name, out)
        cells = found[0]
        assert shown(float(cells[0]), r["bytes"] / MiB, 1)
        assert [int(x) for x in cells[1:4]] == [r["info"][k] for k in ("trials", "trialFolders", "journalLines")]
        assert cells[4] == cells[6] == "", cells
        assert_shown(
            [float(cells[5]), float(cells[7]), float(cells[8])],
            [s["seconds"], s["peak_rss"] / MiB, s["stdout_bytes"] / 1e3],
            [2, 1, 1],
            name,
        )
        assert cells[9] == str(s["exit"]), cells
        over = [(w, v / t) for w, v, t in (("time", s["seconds"], 10), ("memory", s["peak_rss"], 1 << 30)) if v > t]
        assert cells[10] == ("met" if not over else "MISSED (" + ", ".join(f"{w} x{x:.2f}" for w, x in over) + ")")

    assert set(marks["campaign-sound"].values()) == {"✓"} and len(marks["campaign-sound"]) == 8
    # The journal of 100 000 lines: reading stops past the trial limit.
    assert marks["campaign-lines"][("campaign", "journalWellFormed")] == "✗"
    # Trial folders up to the budget: the report examines (and judges) exactly those whose weights fit, in order.
    budget = results["campaign-budget"]["info"]
    camp = kept / "campaigns" / "campaign-budget"
    weights = [
        c.trial_weight(str(camp / "trials" / str(n)), True, c.TRIALS_BUDGET) for n in range(1, budget["trials"] + 1)
    ]
    fit = max(
        k for k in range(len(weights) + 1) if sum(w or c.TRIALS_BUDGET + 1 for w in weights[:k]) <= c.TRIALS_BUDGET
    )
    assert fit == budget["examined"] == budget["trials"] - 1 > 100, (fit, budget)
    assert marks["campaign-budget"][("campaign", "trialsJudged")] == "?"
    assert sum(1 for scope, check in marks["campaign-budget"] if check == "trialHolds") == fit
    # The long study: one trial folder within the budget, judged.
    ledger = results["campaign-ledger"]["info"]
    assert ledger["weight"] <= c.TRIALS_BUDGET and ("trial 1", "trialHolds") in marks["campaign-ledger"]
    # campaign.json of empty objects, up to --quick's size: read whole, refused at its first point.
    objects = kept / "campaigns" / "campaign-objects" / "campaign.json"
    assert _quick(c.SUMMARY_CAP) - 8 < objects.stat().st_size <= _quick(c.SUMMARY_CAP)
    assert marks["campaign-objects"][("campaign", "summaryAgrees")] == "✗"
    # Everything at once: --quick's trials, the journal and campaign.json up to --quick's size, trial 1 judged and
    # trial 2 as far as the budget lets it (a full run: past it).
    whole = results["campaign-whole"]["info"]
    assert whole["trials"] == QUICK_TRIALS and whole["journalLines"] == 2 * QUICK_TRIALS
    assert _quick(c.JOURNAL_CAP) - 2 * QUICK_TRIALS < whole["journalBytes"] <= _quick(c.JOURNAL_CAP), whole
    assert _quick(c.SUMMARY_CAP) - 1024 < whole["summaryBytes"] <= _quick(c.SUMMARY_CAP), whole
    judged = sorted(int(scope.split()[1]) for scope, check in marks["campaign-whole"] if check == "trialHolds")
    assert judged == list(range(1, whole["examined"] + 1)) and whole["examined"] >= 1, (judged, whole)
    met = sum(1 for r in results.values() if r["verdict"] == "met")
    assert f"target (current judge, each campaign folder under 10 s and 1 GiB): met on {met}/{len(CAMPAIGNS)}" in out


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
