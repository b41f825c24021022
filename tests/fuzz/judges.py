"""The two judges, each in a worker process of its own (:mod:`.worker`), asked under a timeout.

A judge that hangs, crashes its process or runs past the timeout cannot
stop the fuzzer: the worker is killed (this module started it, and ends it
by its own handle) and another takes its place, and the verdict says what
happened (``timeout``, ``error``).  Whether the oracle can be asked at all is
:func:`oracle_state`'s: it is asked as soon as ``tests.oracle`` imports.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "tests" / "oracle"
Key = tuple[str, str]

# The contract's bound on one judgement (docs/contract.md, "Hostile evidence"), and how long the fuzzer
# waits for an answer before it calls the judge hung: past the bound by half again, a margin for a loaded
# machine (a sound folder is judged in milliseconds).
SLOW_SECONDS = 10.0
TIMEOUT_SECONDS = 15.0
MEMORY_MIB = 1024.0  # ...and in under 1 GiB


@dataclass
class Verdict:
    """What one judge said of one folder, or why it said nothing."""

    judge: str
    status: int | None = None
    checks: dict[Key, bool | None] = field(default_factory=dict)
    details: dict[Key, str] = field(default_factory=dict)
    reasons: Any = None
    seconds: float = 0.0
    peak_mib: float = 0.0
    error: str | None = None
    trace: str | None = None
    timeout: bool = False
    not_evidence: str | None = None

    @property
    def answered(self) -> bool:
        return self.status is not None

    def reason(self, key: Key) -> Any:
        """Why this judge gave ``key`` its verdict: the product's detail, or the oracle's reasons for it."""
        if key in self.details:
            return self.details[key]
        reasons = self.reasons
        if isinstance(reasons, list):  # [[scope, name, reason], ...] or a list of texts
            found = [r[-1] for r in reasons if isinstance(r, list) and len(r) >= 3 and tuple(r[:2]) == key]
            if found:
                return found[0] if len(found) == 1 else found
            return [r for r in reasons if isinstance(r, str) and (key[1] in r)] or None
        if isinstance(reasons, dict):
            return reasons.get(f"{key[0]} · {key[1]}") or reasons.get(key[1])
        return None

    def as_json(self, keys: list[Key] | None = None) -> dict[str, Any]:
        """The verdict for a case: its status, and the checks ``keys`` names (all that do not hold if None)."""
        if keys is None:
            keys = [k for k, ok in self.checks.items() if ok is not True]
        body: dict[str, Any] = {"judge": self.judge, "status": self.status}
        body["checks"] = {f"{s} · {n}": self.checks.get((s, n), "absent") for s, n in keys}
        body["reasons"] = {f"{s} · {n}": self.reason((s, n)) for s, n in keys}
        if self.error:
            body["error"], body["traceback"] = self.error, self.trace
        if self.timeout:
            body["timeout"] = TIMEOUT_SECONDS
        if self.not_evidence:
            body["notEvidence"] = self.not_evidence
        body["seconds"] = round(self.seconds, 3)
        return body


def _verdict(judge: str, body: dict[str, Any]) -> Verdict:
    v = Verdict(judge, seconds=float(body.get("seconds", 0.0)), peak_mib=float(body.get("peakMiB", 0.0)))
    if "error" in body:
        v.error, v.trace = str(body["error"]), body.get("traceback")
        return v
    v.status = int(body["status"])
    for scope, name, ok, detail in body.get("checks", []):
        key = (str(scope), str(name))
        # A key named twice keeps the worse verdict: ✗ beats ? beats ✓.
        if key not in v.checks or ok is False or (ok is None and v.checks[key] is True):
            v.checks[key] = ok
            if detail is not None:
                v.details[key] = str(detail)
    v.reasons = body.get("reasons")
    v.not_evidence = body.get("notEvidence")
    return v


class Judge:
    """One judge's worker: :meth:`ask` sends a folder and waits for the verdict, at most ``timeout`` seconds."""

    def __init__(self, judge: str, log: Path, timeout: float = TIMEOUT_SECONDS) -> None:
        self.judge = judge
        self.log = log
        self.timeout = timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.restarts = 0

    def _start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        with self.log.open("ab") as log:
            return subprocess.Popen(
                [sys.executable, "-m", "tests.fuzz.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=ROOT,
                env=env,
                bufsize=0,
            )

    def ask(self, kind: str, path: Path) -> Verdict:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        proc = self.proc
        assert proc.stdin is not None and proc.stdout is not None
        request = json.dumps({"judge": self.judge, "kind": kind, "path": str(path)}) + "\n"
        start = time.monotonic()
        try:
            proc.stdin.write(request.encode())
        except BrokenPipeError:
            self.stop()
            return Verdict(self.judge, error="the worker was gone before the request")
        got = b""
        fd = proc.stdout.fileno()
        while not got.endswith(b"\n"):
            left = start + self.timeout - time.monotonic()
            ready = select.select([fd], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                self.stop()
                return Verdict(
                    self.judge,
                    timeout=True,
                    seconds=time.monotonic() - start,
                    error=f"no answer in {self.timeout:.0f} s",
                )
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                code = proc.wait()
                self.stop()
                return Verdict(
                    self.judge, seconds=time.monotonic() - start, error=f"the judge's process died (exit {code})"
                )
            got += chunk
        verdict = _verdict(self.judge, json.loads(got))
        if verdict.peak_mib > MEMORY_MIB:
            self.stop()  # a new worker, so that the next mutant's peak is its own
        return verdict

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        self.restarts += 1
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def oracle_state() -> str | None:
    """None when ``tests.oracle`` imports and offers ``judge_study`` and ``judge_campaign``; else why not
    (``"absent"`` while it does not exist yet)."""
    if not ORACLE.exists():
        return "absent"
    try:
        module = importlib.import_module("tests.oracle")
    except Exception as exc:  # noqa: BLE001 - any failure to import is the reason the comparison is off
        return f"tests.oracle does not import: {type(exc).__name__}: {exc}"
    missing = [name for name in ("judge_study", "judge_campaign", "OracleVerdict") if not hasattr(module, name)]
    return f"tests.oracle has no {', '.join(missing)}" if missing else None
