"""The benches still run and still measure: short runs of the kill-reaction (alone and with company),
ledger-at-kill, console-load, first-frame, soak and notice-latency benches.

Runs this short do not say whether a target is met, so the figures are not
held to one; but they must make sense.  Each test checks that the bench
works end to end (exit 0, its lines printed) and that what it printed is
what it measured: percentiles in order (0 < p50 <= p99 <= max), counts of
what it was asked to do, kills counted against the ``launches.jsonl`` of
the studies it ran (kept with ``--keep``), its table recomputed from the
evidence or from its samples (``--json``), ratios those of the figures
beside them, a verdict that of its figure.  A bench that printed constants
fails them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.benches import NUMBER as N
from tests.benches import (
    assert_ordered,
    assert_ratio,
    assert_shown,
    ended_cleanly,
    jsonl,
    kill_json,
    launches,
    ledger,
    median,
    nearest_rank,
    percentile,
    row,
    run_bench,
    run_bench_kept,
    shown,
    sigkilled,
    trigger_wrote_at,
    varied,
)

ROOT = Path(__file__).resolve().parent.parent


def _reactions(folders: list[Path]) -> tuple[list[float], list[float]]:
    """Per kept study, from its evidence: ledger record written -> SIGKILL sent, and -> trigger seen (ms)."""
    reaction, notice = [], []
    for out in folders:
        kill, wrote = kill_json(out), trigger_wrote_at(out)
        reaction.append(1e3 * (kill["killSentEpoch"] - wrote))
        notice.append(1e3 * (kill["triggerSeenEpoch"] - wrote))
    return reaction, notice


def _killed_once_and_resumed(out: Path) -> bool:
    """The study's controller was SIGKILLed once (the pid kill.json names), resumed, and halted."""
    ends = [x for x in launches(out) if x["event"] == "end"]
    killed = [x for x in ends if x.get("signal") == "SIGKILL"]
    return (
        sigkilled(out) == 1
        and killed[0]["pid"] == kill_json(out)["pid"]
        and ended_cleanly(out)
        and ledger(out)[-1]["kind"] == "halt"
    )


def _assert_floor(out: str, samples: int, values: list[float] | None = None) -> None:
    floor = row(
        out,
        rf"^machine floor: a fixed ~1 ms of work in this process after the same pauses, (\d+) samples: "
        rf"p50 ({N}) / p99 ({N}) / max ({N}) ms; over 2x its p50: (\d+)/(\d+)$",
    )
    assert floor[0] == floor[5] == samples, out
    assert_ordered(*floor[1:4], what="machine floor")
    if values is not None:
        assert len(values) == samples
        assert_shown(floor[1:4], [percentile(values, 50), percentile(values, 99), max(values)], 3, "machine floor")
        assert floor[4] == sum(1 for x in values if x > 2 * percentile(values, 50)), out


def test_kill_reaction_quick_measures_the_kills_its_studies_show(tmp_path: Path) -> None:
    began = time.time()
    out, kept = run_bench_kept(
        "kill_reaction.py", "--quick", "--silent", "--json", str(tmp_path / "kr.json"), into=tmp_path
    )
    samples = json.loads((tmp_path / "kr.json").read_text())["samples"]
    # Three triggers of each design, each a study of its own; every engine study was killed once
    # (its keeper saw the SIGKILL), resumed and halted.
    engine_outs = sorted(kept.glob("engine-10-*"))
    baseline_outs = sorted(kept.glob("baseline-10-*"))
    assert len(engine_outs) == len(baseline_outs) == 3, sorted(p.name for p in kept.iterdir())
    assert all(_killed_once_and_resumed(o) for o in engine_outs), [launches(o) for o in engine_outs]
    finished = row(out, r"^engine sessions that ran the study to its halt after the kill at 10 lines: (\d+)/(\d+)$")
    assert finished == [3, 3], out

    # The engine's row is what the studies' evidence gives: killSentEpoch (kill.json) - wroteAt (ledger).
    reaction, notice = _reactions(engine_outs)
    engine = row(out, rf"^engine\s+10\s+(\d+)\s+({N})\s+({N})\s+({N})$")
    assert engine[0] == 3, out
    assert_ordered(*engine[1:], what="engine")
    assert_shown(engine[1:], [percentile(reaction, 50), percentile(reaction, 99), max(reaction)], 3, "engine")
    notice_row = row(out, rf"^  notice\s+10\s+(\d+)\s+({N})\s+({N})\s+({N})$")
    assert_shown(notice_row[1:], [percentile(notice, 50), percentile(notice, 99), max(notice)], 3, "notice")
    act_row = row(out, rf"^  act\s+10\s+(\d+)\s+({N})\s+({N})\s+({N})$")
    assert_ordered(*act_row[1:], what="act")
    assert act_row[3] <= engine[3] + 1e-3, out  # a part of the reaction is no longer than the whole

    # The baseline's studies: its samples' trigger times are their ledgers', each killed after its write.
    base = sorted((s for s in samples if s["design"] == "baseline"), key=lambda s: s["index"])
    assert [s["wrote_at"] for s in base] == [trigger_wrote_at(o) for o in baseline_outs]
    assert all(began < s["wrote_at"] < s["kill_sent"] < time.time() for s in base), base
    assert all("nobody killed me" not in (o / "study.log").read_text() for o in baseline_outs)
    base_ms = [1e3 * (s["kill_sent"] - s["wrote_at"]) for s in base]
    baseline = row(out, rf"^baseline\s+10\s+(\d+)\s+({N})\s+({N})\s+({N})$")
    assert baseline[0] == 3, out
    assert_ordered(*baseline[1:], what="baseline")
    assert_shown(baseline[1:], [percentile(base_ms, 50), percentile(base_ms, 99), max(base_ms)], 3, "baseline")

    ratio = row(out, r"^ratio baseline/engine at 10 lines: p50 x(\d+), p99 x(\d+)$")
    assert_ratio(ratio[0], baseline[1], engine[1], 0, "baseline/engine p50")
    assert_ratio(ratio[1], baseline[2], engine[2], 0, "baseline/engine p99")
    # The machine's floor beside it: the same pauses, a fixed piece of work, three samples.
    _assert_floor(out, 3, [s["reaction_ms"] for s in samples if s["design"] == "floor"])
    over = row(out, rf"^engine at 10 lines over 2x its p50: (\d+)/3; p99/p50 engine x({N}), floor x({N})$")
    assert over[0] == sum(1 for x in reaction if x > 2 * percentile(reaction, 50)), out
    assert_ratio(over[1], engine[2], engine[1], 1, "engine p99/p50")
    verdict = re.search(r"^engine p99 target \(<= 2 ms at every size\): (met|MISSED) ", out, re.MULTILINE)
    assert verdict and (verdict.group(1) == "met") == (engine[2] <= 2.0), out


def test_ledger_at_kill_quick_writes_the_same_bytes_both_ways(tmp_path: Path) -> None:
    out, kept = run_bench_kept("ledger_at_kill.py", "--quick", "--json", str(tmp_path / "lak.json"), into=tmp_path)
    assert "the two files are the same bytes" in out, out
    runs = json.loads((tmp_path / "lak.json").read_text())["runs"]
    # What was written: the whole ledger, record by record, in both designs.
    records = jsonl(kept / "ledger.jsonl")
    assert len(records) == 5000
    written = [json.loads(p.read_bytes()) for p in sorted(kept.glob("*/kills/1/ledger-at-kill.json"))]
    assert len(written) == 2 * 2  # two designs, one round, a timed and a traced pass each
    assert all(w == records for w in written)
    size = (next(kept.glob("*/kills/1/ledger-at-kill.json"))).stat().st_size
    header = row(
        out, rf"^ledger-at-kill.json of a (\d+)-line ledger \(ledger.jsonl, ({N}) MB written\); (\d+) rounds; "
    )
    assert header[0] == 5000 and header[2] == 1, out
    assert shown(header[1], size / 1e6, 1), (header, size)
    figures = {}
    for design in ("streamed", "whole"):
        assert len(runs[design]) == 1, runs
        r = runs[design][0]
        printed = row(out, rf"^{design}\s+({N})\s+(\d+)\s+({N})\s+({N})\s+({N})$")
        assert_shown(
            printed,
            [r["seconds"], r["collections"], r["gcMs"], r["longestFullMs"], r["peakMB"]],
            [2, 0, 0, 1, 1],
            design,
        )
        assert r["seconds"] > 0 and r["peakMB"] > 0 and r["bytes"] == size, r
        figures[design] = r
    ratio = row(out, rf"^ratio whole/streamed: peak memory x({N}), .* time x({N})$")
    w, s = figures["whole"], figures["streamed"]
    assert shown(ratio[0], w["peakMB"] / s["peakMB"], 1) and shown(ratio[1], w["seconds"] / s["seconds"], 2), out


def test_kill_under_load_quick_measures_the_kills_its_studies_show(tmp_path: Path) -> None:
    began = time.monotonic()
    out, kept = run_bench_kept(
        "kill_under_load.py", "--quick", "--silent", "--json", str(tmp_path / "kul.json"), into=tmp_path
    )
    took = time.monotonic() - began
    samples = json.loads((tmp_path / "kul.json").read_text())["samples"]
    assert "company: 2 studies x 50 records/s and a 20000-line burst, in the armed study's loop" in out, out
    figures = {}
    for mode in ("quiet", "company"):
        bases = sorted(kept.glob(f"{mode}-10-*"))
        assert len(bases) == 2, sorted(p.name for p in kept.iterdir())
        armed = [b / "armed" for b in bases]
        # Every armed study killed once (its keeper saw the SIGKILL), resumed and halted.
        assert all(_killed_once_and_resumed(o) for o in armed), [launches(o) for o in armed]
        reaction, notice = _reactions(armed)
        m = row(out, rf"^{mode}\s+10\s+(\d+)\s+({N})\s+({N})\s+({N})$")
        assert m[0] == 2, out
        assert_ordered(*m[1:], what=mode)
        assert_shown(m[1:], [percentile(reaction, 50), percentile(reaction, 99), max(reaction)], 3, mode)
        n = row(out, rf"^  notice {mode}\s+10\s+(\d+)\s+({N})\s+({N})\s+({N})$")
        assert_shown(n[1:], [percentile(notice, 50), percentile(notice, 99), max(notice)], 3, f"notice {mode}")
        figures[mode] = m
        if mode == "company":
            for b in bases:
                # The company was never killed: each ran to its halt.
                for study in ("stream1", "stream2", "burst"):
                    assert sigkilled(b / study) == 0 and ended_cleanly(b / study), launches(b / study)
                    assert ledger(b / study)[-1]["kind"] == "halt"
                burst = ledger(b / "burst")
                assert len(burst) == 1 + 20_000 + 2  # studyOpen, the burst, its marker, halt
            # Written while the burst was read: the trigger (ledger) between the burst's marker (ledger)
            # and the burst's last record reaching the sink.
            company = sorted((s for s in samples if s["mode"] == "company"), key=lambda s: s["index"])
            marks = [float(ledger(b / "burst")[-2]["content"]["burstWroteAt"]) for b in bases]
            wrote = [trigger_wrote_at(o) for o in armed]
            assert [s["burst_wrote_at"] for s in company] == marks
            assert [s["wrote_at"] for s in company] == wrote
            during = sum(
                1
                for s, mark, w in zip(company, marks, wrote, strict=True)
                if s["burst_done_at"] is not None and mark <= w <= s["burst_done_at"]
            )
            assert row(out, r"^company triggers written while the burst was being read at 10 lines: (\d+)/(\d+) ") == [
                during,
                2,
            ], out
    # Only what any machine gives: a kill measured, not one that waited for the whole study.
    assert all(x < 10_000 for m in figures.values() for x in m[1:]), figures
    ratio = row(out, rf"^ratio company/quiet at 10 lines: p50 x({N}), p99 x({N})$")
    assert_ratio(ratio[0], figures["company"][1], figures["quiet"][1], 2, "company/quiet p50")
    assert_ratio(ratio[1], figures["company"][2], figures["quiet"][2], 2, "company/quiet p99")
    assert "armed sessions that ran the study to its halt after the kill at 10 lines: quiet 2/2, company 2/2" in out, (
        out
    )
    verdict = re.search(
        r"^armed p99 target \(<= 2 ms, quiet and with company, at every size\): (met|MISSED) ", out, re.MULTILINE
    )
    assert verdict and (verdict.group(1) == "met") == all(m[2] <= 2.0 for m in figures.values()), out
    _assert_floor(out, 4)
    assert took < 60


# --- the console benches (real terminals: tmux) -----------------------------------
# A developer's machine may lack tmux; CI installs it (.ci/run), and there the gate turns a skip into a failure.
needs_tmux = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed: the console benches run the console in tmux"
)


@needs_tmux
def test_console_load_quick_measures_what_it_was_asked_to(tmp_path: Path) -> None:
    out, kept = run_bench_kept(
        "console_load.py", "--quick", "--no-toolong", "--silent", "--json", str(tmp_path / "cl.json"), into=tmp_path
    )
    result = json.loads((tmp_path / "cl.json").read_text())
    assert "console load: 3 studies x 50 records/s for 8 s, then idle 5 s" in out, out
    assert "toolong" not in out, out
    for phase, seconds in (("streaming", 8), ("idle", 5)):
        series = result["samples"][phase]["studymon"]
        # One sample a second for as long as asked, over a window as long as asked.
        assert len(series["cpu"]) == len(series["rss_mb"]) == seconds, series
        assert seconds <= series["wall_seconds"] < seconds + 3, series
        assert varied(series["rss_mb"]) or phase == "idle", series
        mean = 100 * series["cpu_seconds"] / series["wall_seconds"]
        # The whole window's CPU is what its one-second samples add up to (ticks of 10 ms aside).
        assert min(series["cpu"]) - 1.5 <= mean <= max(series["cpu"]) + 1.5, series
        printed = row(out, rf"^studymon\s+{phase}\s+({N})\s+({N})\s+({N})\s+({N})$")
        assert_shown(
            printed,
            [mean, nearest_rank(series["cpu"], 0.9), max(series["cpu"]), max(series["rss_mb"])],
            [2, 1, 1, 1],
            f"studymon {phase}",
        )
        assert 0 <= printed[1] <= printed[2] and 10 < printed[3] < 1000, printed
    # The three studies streamed at the rate asked, and their ledgers hold what they wrote.
    rates = row(out, rf"^records written per study per second while streaming: ({N}), ({N}), ({N})$")
    assert_shown(rates, result["rates"], 1, "rates")
    assert all(40 <= r <= 52.5 for r in rates), rates
    written = []
    for study in ("s1", "s2", "s3"):
        records = ledger(kept / study)
        assert records[0]["kind"] == "studyOpen" and records[-1]["kind"] == "halt", records[-1]
        assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
        written.append(len(records) - 2)
        # One controller each, never killed, ended by its halt.
        assert sigkilled(kept / study) == 0 and ended_cleanly(kept / study), launches(kept / study)
        assert len(launches(kept / study)) == 2
    # Streaming ran for the warm-up and the measured seconds, at 50 a second.
    assert all(50 * 8 <= n <= 50 * (2 + 8 + 3) for n in written), written
    lag = row(out, r"^records behind the ledger at the end of streaming: studymon \[(\d+), (\d+), (\d+)\]$")
    assert lag == result["lag"]["studymon"] and all(0 <= x <= n for x, n in zip(lag, written, strict=True)), lag
    # The console's exit and its summary line are the studies' own reports.
    checks = [json.loads((kept / s / "report.json").read_text())["checks"] for s in ("s1", "s2", "s3")]
    assert all(c["ok"] is True for cs in checks for c in cs), checks
    assert f"console exit status 0: ✓ all {sum(map(len, checks))} checks hold" in out, out
    for target, figure, limit in (
        ("streaming CPU <= 10 % of a core", row(out, rf"^studymon\s+streaming\s+({N})")[0], 10),
        (r"idle CPU <= 0\.5 % of a core", row(out, rf"^studymon\s+idle\s+({N})")[0], 0.5),
    ):
        verdict = re.search(rf"^target {target}: (met|NOT MET) \(", out, re.MULTILINE)
        assert verdict and (verdict.group(1) == "met") == (figure <= limit), (target, out)
    assert re.search(r"^target RSS <= 150 MB: (met|NOT MET) \(", out, re.MULTILINE), out


@needs_tmux
def test_first_frame_quick_times_the_trials_it_was_asked_for(tmp_path: Path) -> None:
    began = time.monotonic()
    out, kept = run_bench_kept(
        "first_frame.py", "--quick", "--no-toolong", "--silent", "--json", str(tmp_path / "ff.json"), into=tmp_path
    )
    took = time.monotonic() - began
    trials = json.loads((tmp_path / "ff.json").read_text())["samples"]
    assert [t["design"] for t in trials] == ["studymon", "studymon"] and [t["index"] for t in trials] == [0, 1]
    # Each trial painted, then showed the tail, within the run.
    assert all(0 < t["paint_s"] <= t["frame_s"] and t["rss_mb"] > 10 for t in trials), trials
    assert sum(t["frame_s"] for t in trials) < took, (trials, took)
    frames = [t["frame_s"] for t in trials]
    printed = row(out, rf"^studymon\s+(\d+)\s+(\d+)\s+({N})\s+({N})\s+({N})\s+({N})\s+({N})$")
    assert printed[:2] == [20000, 2], out
    assert_shown(
        printed[2:],
        [
            median([t["paint_s"] for t in trials]),
            median(frames),
            min(frames),
            max(frames),
            max(t["rss_mb"] for t in trials),
        ],
        [3, 3, 3, 3, 1],
        "studymon row",
    )
    assert 0 < printed[4] <= printed[3] <= printed[5], printed  # min <= p50 <= max
    # The study the console attached to: 20 000 records before its halt, one controller, never restarted.
    study = kept / "study-20000"
    records = ledger(study)
    assert len(records) == 20001 and records[-2]["seq"] == 20000 and records[-1]["kind"] == "halt", records[-2:]
    assert len(launches(study)) == 2 and sigkilled(study) == 0, launches(study)
    verdict = re.search(
        r"^studymon first-frame target \(<= 1 s in every trial\): (met|MISSED) \(20000 records "
        rf"({N}) s\)$",
        out,
        re.MULTILINE,
    )
    assert verdict and shown(float(verdict.group(2)), max(frames), 3), out
    assert (verdict.group(1) == "met") == (max(frames) <= 1.0), out


# --- the kill soak (whole studies on a runtime) ------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["process", pytest.param("docker", marks=pytest.mark.docker)])
def test_soak_quick_judges_every_study_right_and_loses_nothing(
    tmp_path: Path, runtime: str, request: pytest.FixtureRequest
) -> None:
    if runtime == "docker":
        request.getfixturevalue("docker_engine")
    result = tmp_path / "soak.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "soak.py"),
            "--quick",
            "--silent",
            "--runtime",
            runtime,
            "--json",
            str(result),
            "--keep",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        check=False,
    )
    assert result.is_file(), f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    summary = json.loads(result.read_text())["summary"]
    assert summary["falsePasses"] == [], proc.stdout
    assert summary["falseFailures"] == [], proc.stdout
    assert summary["recordsLost"] == [], proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    # Its counts are those of the studies it ran, as their evidence folders (kept) show them.
    kept = re.search(r"^kept (.+)$", proc.stderr, re.MULTILINE)
    assert kept, proc.stderr
    outs = sorted(Path(kept.group(1)).glob(f"{runtime}-*/*/launches.jsonl"))
    outs = [p.parent for p in outs]
    assert summary["trials"] == 2 and summary["trialsPerRuntime"] == {runtime: 2}, summary
    assert summary["studies"] == len(outs) == 6, outs
    kills = [
        kill_json(o, int(k.name)) for o in outs for k in sorted((o / "kills").glob("*")) if (k / "kill.json").is_file()
    ]
    ends = [k for k in kills if k["trigger"] in ("crash", "stop")]  # ends the console did not make (§7)
    assert summary["endsJudged"] == len(ends), summary
    kills = [k for k in kills if k["trigger"] in ("auto", "manual")]
    assert summary["kills"] == len(kills) > 0, summary
    assert summary["manualKills"] == sum(1 for k in kills if k["trigger"] == "manual"), summary
    assert summary["armedKills"] + summary["manualKills"] == summary["kills"]
    assert summary["kills"] + summary["endsJudged"] == sum(summary["killLandings"].values())
    # Every kill recorded is a controller its keeper saw end by SIGKILL.
    killed = {(o, x["pid"]) for o in outs for x in launches(o) if x["event"] == "end" and x.get("signal") == "SIGKILL"}
    for o in outs:
        for k in sorted((o / "kills").glob("*/kill.json")):
            made = json.loads(k.read_text())
            if made["trigger"] in ("auto", "manual"):
                assert (o, made["pid"]) in killed, (k, launches(o))
            else:  # its controller ended on its own, with no SIGKILL of the console's
                assert made["signal"] is None and made["signalled"] is False, made
    assert sum(sigkilled(o) for o in outs) >= summary["kills"]
    assert summary["recordsChecked"] == sum(len({r["seq"] for r in ledger(o)}) for o in outs), summary
    verdicts = [json.loads((o / "report.json").read_text())["ok"] for o in outs]
    per_kind = summary["verdictsPerKind"].values()
    assert sum(n for counts in per_kind for n in counts.values()) == 6, summary["verdictsPerKind"]
    assert sum(counts.get("✓", 0) for counts in per_kind) == verdicts.count(True), (per_kind, verdicts)
    assert f"kills: {summary['kills']} ({summary['armedKills']} armed, {summary['manualKills']} manual)" in proc.stdout
    assert f"records lost: 0 (of {summary['recordsChecked']} ledger records checked)" in proc.stdout, proc.stdout


def test_notify_latency_quick_times_every_append_it_wrote(tmp_path: Path) -> None:
    began = time.monotonic()
    out, kept = run_bench_kept(
        "notify_latency.py", "--quick", "--silent", "--json", str(tmp_path / "nl.json"), into=tmp_path
    )
    ended = time.monotonic()
    result = json.loads((tmp_path / "nl.json").read_text())
    table = {}
    for design in ("inotify", "watchfiles", "timer"):
        mine = [x for x in result["samples"] if x["design"] == design]
        # Five appends, each the line its file holds (the writer's clock, system-wide), read after it was written.
        lines = [float(x) for x in (kept / design / "ledger.jsonl").read_text().split()]
        assert [x["wrote_at"] for x in mine] == lines and len(lines) == 5, (design, mine, lines)
        assert all(began < x["wrote_at"] < x["seen_at"] < ended for x in mine), mine
        latency = [1e3 * (x["seen_at"] - x["wrote_at"]) for x in mine]
        printed = row(out, rf"^{design}\s+(\d+)\s+({N})\s+({N})\s+({N})\s+({N})\s+({N})$")
        assert printed[0] == 5, out
        assert_ordered(*printed[1:4], what=design)
        assert_shown(printed[1:4], [percentile(latency, 50), percentile(latency, 99), max(latency)], 3, design)
        idle = next(i for i in result["idle"] if i["design"] == design)
        assert 1.0 <= idle["seconds"] < 2.0, idle  # the idle second asked for
        assert_shown(
            printed[4:],
            [100 * idle["cpu_seconds"] / idle["seconds"], idle["wakeups"] / idle["seconds"]],
            [3, 1],
            f"{design} idle",
        )
        table[design] = printed
    # Idle, the timer looks every 250 ms and the notifiers wait for a notice that never comes.
    timer_wakeups = next(i["wakeups"] for i in result["idle"] if i["design"] == "timer")
    assert 3 <= timer_wakeups <= 5, result["idle"]
    ratio = row(out, r"^ratio watchfiles/inotify: p50 x(\d+), p99 x(\d+)$")
    assert_ratio(ratio[0], table["watchfiles"][1], table["inotify"][1], 0, "watchfiles/inotify p50")
    assert_ratio(ratio[1], table["watchfiles"][2], table["inotify"][2], 0, "watchfiles/inotify p99")
    ratio = row(out, rf"^ratio timer/watchfiles: p50 x({N}), p99 x({N})$")
    assert_ratio(ratio[0], table["timer"][1], table["watchfiles"][1], 1, "timer/watchfiles p50")
    assert_ratio(ratio[1], table["timer"][2], table["watchfiles"][2], 1, "timer/watchfiles p99")
    verdict = re.search(r"^watchfiles as the fallback .*: (serves|DOES NOT SERVE) ", out, re.MULTILINE)
    serves = table["watchfiles"][2] < table["timer"][1] and table["watchfiles"][4] <= 1.0
    assert verdict and (verdict.group(1) == "serves") == serves, out


def test_point_reaction_quick_shows_what_its_kills_measured(tmp_path: Path) -> None:
    """Three kills at the seed's ledger point and three at a container point, each beside its floor: every row is
    what its samples give, and the container point is timed from the runtime's own stamp of the event."""
    out = run_bench("point_reaction.py", "--quick", "--json", str(tmp_path / "pr.json"), timeout=300)
    samples = json.loads((tmp_path / "pr.json").read_text())["samples"]
    assert len(samples["ledger"]) == len(samples["container"]) == 3, samples
    assert len(samples["event floor"]) == 3 and len(samples["work floor"]) == 6, samples
    for key in ("ledger", "container", "event floor", "work floor", "container.notice", "container.act"):
        values = samples[key]
        assert all(0 < v < 10_000 for v in values), (key, values)
        shown = row(out, rf"^  {re.escape(key)}\s+p50\s+({N})\s+p99\s+({N})\s+max\s+({N})\s+n (\d+)$")
        assert shown[3] == len(values), out
        assert_shown(shown[:3], [percentile(values, 50), percentile(values, 99), max(values)], 3, key)
    # The reaction is notice and act: no part is longer than the whole.
    for whole, notice, act in zip(samples["container"], samples["container.notice"], samples["container.act"]):
        assert abs(whole - (notice + act)) < 1e-6 and notice > 0 and act > 0


def test_fs_append_quick_prints_what_its_samples_give(tmp_path: Path) -> None:
    """Every append it was asked for, through the mount and straight to a folder, each a line of its file; the table
    and the ratios are those of the samples; and the mount is gone."""
    out, kept = run_bench_kept("fs_append.py", "--quick", "--json", str(tmp_path / "fs.json"), into=tmp_path)
    result = json.loads((tmp_path / "fs.json").read_text())
    table = {}
    for kind, label, count in (("append", "", 500), ("fsync", "+fsync", 100)):
        for design, folder in (("direct", "direct"), ("mount", "mounted")):
            samples = result[kind][design]
            assert len(samples) == count and all(s > 0 for s in samples), (kind, design)
            lines = (kept / folder / f"ledger-{int(kind == 'fsync')}.jsonl").read_bytes().splitlines()
            assert [json.loads(x)["seq"] for x in lines] == list(range(1, count + 1)), "each append whole, in order"
            printed = row(out, rf"^{re.escape(design + label)}\s+(\d+)\s+({N})\s+({N})$")
            assert printed[0] == count
            assert_ordered(*printed[1:], what=design + label)
            assert_shown(printed[1:], [percentile(samples, 50), percentile(samples, 99)], 1, design + label)
            table[design + label] = printed
    for label in ("", "+fsync"):
        ratio = row(out, rf"^ratio mount/direct{re.escape(label)}: p50 x({N}), p99 x({N})$")
        assert_ratio(ratio[0], table["mount" + label][1], table["direct" + label][1], 1, "p50" + label, given=1)
        assert_ratio(ratio[1], table["mount" + label][2], table["direct" + label][2], 1, "p99" + label, given=1)
    met = row(out, rf"^target: an append through the mount at p99 <= 50 us: ({N}) us, (?:met|not met)$")
    assert met == [table["mount"][2]]
    assert f"{'met' if table['mount'][2] <= 50 else 'not met'}\n" in out
    from studymon.engine.fs.mount import mounted

    assert not mounted(kept / "mounted")


def test_exact_point_quick_shows_both_paths_and_their_ratio(tmp_path: Path) -> None:
    """Three kills at the seed's point held by the study's file system and three timed by signals (the bench itself
    fails when a kill.json says otherwise): every row is what its samples give, and so is the ratio."""
    out = run_bench("exact_point.py", "--quick", "--json", str(tmp_path / "ep.json"), timeout=300)
    samples = json.loads((tmp_path / "ep.json").read_text())["samples"]
    for key in ("exact.frozen", "exact.killed", "signals.frozen", "signals.killed"):
        values = samples[key]
        assert len(values) == 3 and all(0 < v < 10_000 for v in values), (key, values)
        shown = row(out, rf"^  {re.escape(key)}\s+p50\s+({N})\s+p99\s+({N})\s+max\s+({N})\s+n (\d+)$")
        assert shown[3] == 3, out
        assert_shown(shown[:3], [percentile(values, 50), percentile(values, 99), max(values)], 3, key)
    ratio = row(out, rf"^  frozen, exact over signals: p50 ({N})x, p99 ({N})x$")
    e, g = samples["exact.frozen"], samples["signals.frozen"]
    assert_shown(ratio, [percentile(e, 50) / percentile(g, 50), percentile(e, 99) / percentile(g, 99)], 2, "ratio")
