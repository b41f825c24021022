"""Running a bench from a test, and checking that its figures make sense.

A smoke run is too short to say whether a target is met, but not too short
to say whether the bench measured anything: its percentiles are ordered,
its counts are those of what it was asked to do and of what the evidence it
left shows, its ratios are those of the figures beside them, and its
printed table is what its raw samples give.  A bench that printed
constants fails these.  The helpers here recompute what a bench prints
from its samples (``--json``) and from the folder it leaves (``--keep``),
with their own arithmetic, not the bench's.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.studies import jsonl, launches  # noqa: F401 - the bench tests read evidence through these too

ROOT = Path(__file__).resolve().parent.parent
NUMBER = r"(?:-?[\d.]+|nan|inf)"


def _run(
    script: str, args: Sequence[str], timeout: float, env: dict[str, str] | None
) -> subprocess.CompletedProcess[str]:
    """The bench, to its exit 0; past ``timeout`` it gets SIGTERM (it cleans up and says what it kept) and fails."""
    argv = [sys.executable, str(ROOT / "bench" / script), *args]
    with subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                stdout, stderr = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                stdout, stderr = proc.communicate()
            pytest.fail(f"{script} did not end within {timeout:g} s\nstdout:\n{stdout}\nstderr:\n{stderr}")
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def run_bench(script: str, *args: str, timeout: float = 120) -> str:
    """``bench/<script> args`` with this Python from the repository root; its standard output once it exits 0."""
    return _run(script, args, timeout, None).stdout


def run_bench_kept(script: str, *args: str, into: Path, timeout: float = 120) -> tuple[str, Path]:
    """``bench/<script> --keep args`` with its temporary folder made in ``into``: its output and that folder."""
    proc = _run(script, ("--keep", *args), timeout, {"TMPDIR": str(into)})
    kept = re.search(r"^kept (.+)$", proc.stderr, re.MULTILINE)
    assert kept, f"the bench did not say which folder it kept\nstderr:\n{proc.stderr}"
    folder = Path(kept.group(1))
    assert folder.is_dir() and folder.parent == into, (folder, into)
    return proc.stdout, folder


# --- arithmetic of our own ----------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default), as the benches say they use."""
    xs = sorted(values)
    assert xs, "no values"
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def nearest_rank(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (``q`` in 0..1): the smallest value with at least ``q`` of them at or below."""
    xs = sorted(values)
    assert xs, "no values"
    return xs[min(len(xs) - 1, max(0, math.ceil(q * len(xs)) - 1))]


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def shown(printed: float, value: float, decimals: int) -> bool:
    """Whether ``printed`` (with ``decimals`` decimals) is ``value`` rounded."""
    return abs(printed - value) <= 0.5 * 10.0**-decimals + 1e-9 * max(1.0, abs(value))


def assert_shown(printed: Iterable[float], values: Iterable[float], decimals: int | Sequence[int], what: str) -> None:
    """Each printed figure is its value rounded (``decimals``: one for all, or one per figure)."""
    printed, values = list(printed), list(values)
    assert len(printed) == len(values), (what, printed, values)
    places = [decimals] * len(values) if isinstance(decimals, int) else list(decimals)
    for p, v, d in zip(printed, values, places, strict=True):
        assert shown(p, v, d), f"{what}: printed {printed}, the samples give {values}"


def assert_ordered(p50: float, *higher: float, what: str = "") -> None:
    """``0 < p50 <= ... <= max``: measured times, in order."""
    xs = [p50, *higher]
    assert xs[0] > 0 and all(a <= b for a, b in itertools.pairwise(xs)), f"{what}: not 0 < p50 <= ... <= max: {xs}"


def assert_ratio(printed: float, top: float, bottom: float, decimals: int, what: str, given: int = 3) -> None:
    """A printed ratio ``x<printed>`` (``decimals`` decimals) is ``top / bottom``, both as printed with ``given``
    decimals: their own rounding is allowed for."""
    assert bottom > 0, f"{what}: {top} / {bottom}"
    ratio = top / bottom
    half = 0.5 * 10.0**-given
    # The figures as measured lie within half a last digit of the printed ones, so the ratio lies between the
    # ratios of those bounds (exactly: a small bottom's rounding moves the ratio more than a linear bound says).
    low = max(top - half, 0.0) / (bottom + half)
    high = (top + half) / (bottom - half) if bottom > half else float("inf")
    shown = 0.5 * 10.0**-decimals + 1e-9
    assert low - shown <= printed <= high + shown, f"{what}: printed x{printed}, {top} / {bottom} = {ratio:.4f}"


def varied(values: Sequence[float]) -> bool:
    """Measured times are never all the same to the last bit."""
    return len(set(values)) > 1


def row(out: str, pattern: str) -> list[float]:
    """The numbers of the one line of ``out`` that ``pattern`` (its groups the numbers) matches."""
    found = re.findall(pattern, out, re.MULTILINE)
    assert len(found) == 1, f"{len(found)} lines match {pattern!r}:\n{out}"
    groups = found[0] if isinstance(found[0], tuple) else (found[0],)
    return [float(g) for g in groups]


# --- evidence a study leaves --------------------------------------------------------------
def sigkilled(out: Path) -> int:
    """Controllers of ``OUT`` that ended by SIGKILL, as their keeper saw it."""
    return sum(1 for line in launches(out) if line["event"] == "end" and line.get("signal") == "SIGKILL")


def ended_cleanly(out: Path) -> bool:
    """The last controller of ``OUT`` exited 0, and every start has its end."""
    lines = launches(out)
    starts = [x for x in lines if x["event"] == "start"]
    ends = [x for x in lines if x["event"] == "end"]
    return bool(ends) and len(starts) == len(ends) and ends[-1].get("code") == 0 and ends[-1].get("signal") is None


def ledger(out: Path) -> list[dict[str, Any]]:
    return jsonl(out / "study" / "ledger.jsonl")


def trigger_wrote_at(out: Path) -> float:
    """``content.wroteAt`` of the micro study's trigger, its ``runStarted``."""
    started = [r for r in ledger(out) if r["kind"] == "runStarted"]
    assert len(started) == 1, started
    return float(started[0]["content"]["wroteAt"])


def kill_json(out: Path, n: int = 1) -> dict[str, Any]:
    return json.loads((out / "kills" / str(n) / "kill.json").read_text(encoding="utf-8"))
