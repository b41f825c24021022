"""A judge in a process of its own: ``python3 -m tests.fuzz.worker``, one JSON request a line in, one answer out.

The fuzzer's parent (:mod:`.judges`) writes ``{"judge": "product" | "oracle",
"kind": "study" | "campaign", "path": ...}``; the answer is the verdict
(``status``, ``checks`` as ``[scope, name, ok, detail]``, ``reasons``), the
seconds it took and the process's peak memory, or the exception.  Anything a
judge prints goes to standard error, never into the answers.  A judge that
hangs (a FIFO opened for reading) is the parent's to end: it kills this
process and starts another.

The product is judged as ``studymon report`` does: a study by
``studymon.engine.judge.judge`` and ``exit_status``, a folder that is not
evidence as exit 2; a campaign as ``studymon report CAMPAIGN`` does, by
``studymon.engine.explore.campaign.rejudge`` (its checks, and the exit status they
make; it judges every trial folder again and may write ``campaign.json``
anew).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import traceback
from pathlib import Path
from typing import Any

MEMORY_GUARD = 4 << 30  # address space: a runaway judge fails here instead of taking the machine


def product(kind: str, path: Path) -> dict[str, Any]:
    from studymon.engine.contract.exits import exit_status
    from studymon.engine.judge import NotEvidence, judge

    if kind == "campaign":
        # As `studymon report CAMPAIGN` does (tui/cli.py's cmd_report): a folder that is a campaign's is judged
        # by its campaign report; any other, as a study's (a folder without its journal and campaign.json).
        from studymon.engine.explore import campaign

        if campaign.is_campaign(path.resolve()):
            report = campaign.rejudge(path.resolve())
            checks = [[c.scope, c.name, c.ok, c.detail] for c in report.checks]
            return {"status": exit_status(c.ok for c in report.checks), "checks": checks, "reasons": None}
    try:
        j = judge(path)
    except NotEvidence as exc:
        return {"status": 2, "checks": [], "reasons": None, "notEvidence": str(exc)}
    checks = [[c.scope, c.name, c.ok, c.detail] for c in j.checks]
    return {"status": exit_status([j.ok]), "checks": checks, "reasons": None}


def _plain(value: Any) -> Any:
    """A value as JSON can hold it: a dict keyed by (scope, name) becomes a list of [scope, name, value]."""
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: _plain(v) for k, v in value.items()}
        return [[*(k if isinstance(k, tuple) else (k,)), _plain(v)] for k, v in value.items()]
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def oracle(kind: str, path: Path) -> dict[str, Any]:
    from tests.oracle import judge_campaign, judge_study

    verdict = (judge_campaign if kind == "campaign" else judge_study)(path)
    checks = [[scope, name, ok, None] for (scope, name), ok in verdict.checks.items()]
    return {"status": verdict.status, "checks": checks, "reasons": _plain(verdict.reasons)}


JUDGES = {"product": product, "oracle": oracle}


def peak_mib() -> float:
    """This worker's own peak: ``VmHWM`` (the peak of its memory since it was exec'd).  ``ru_maxrss`` would carry
    the peak of the process it was forked from across the exec: a test process grown large makes every worker it
    starts look as large."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def answer(request: dict[str, Any]) -> dict[str, Any]:
    start = time.monotonic()
    try:
        body = JUDGES[request["judge"]](request["kind"], Path(request["path"]))
    except BaseException as exc:  # noqa: BLE001 - an exception of a judge (SystemExit too) is a finding, reported whole
        body = {"error": f"{type(exc).__name__}: {exc}"[:2000], "traceback": traceback.format_exc()[-6000:]}
    body["seconds"] = time.monotonic() - start
    body["peakMiB"] = peak_mib()
    return body


def main() -> None:
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a judge that prints writes to standard error
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > MEMORY_GUARD:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_GUARD, hard))
    for line in sys.stdin:
        if not line.strip():
            continue
        answers.write(json.dumps(answer(json.loads(line)), default=str) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
