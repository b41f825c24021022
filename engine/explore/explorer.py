"""The crash-point explorer: one traced run of a study, its crash points in classes, a trial per class on Dask.

``studymon explore ID=CAMPAIGN`` (see :mod:`studymon.engine.explore.campaign` for
the folder):

1. **trace**: the study runs once, unkilled and traced
   (``studymon run --headless --trace``), into ``CAMPAIGN/trace/``;
2. **points**: every record and run-container event of the trace is a
   candidate, grouped into classes by what a crash there leaves behind
   (:mod:`studymon.engine.explore.crashpoints`); one trial per class, its first
   candidate (every candidate with ``all_points``), and with ``depth`` 2 one
   more per class that kills the resumed controller again at the same point;
3. **trials** on Dask (``distributed``): a ``LocalCluster`` of this machine
   by default, or any scheduler by address; one task per trial, retries 0,
   claimed before it runs (:func:`studymon.engine.explore.trial.run_trial`), its
   folder shipped back and written here once;
4. **result**: ``campaign.json`` with the matrix (a row per class, a column per check), rewritten
   as trials end; the exit status (:func:`studymon.engine.explore.campaign.campaign_status`).

A missed point (the study had gone on before the kill landed) is tried again
at its class's next candidate, up to :data:`MISSED_TRIES` times.  A trial whose
worker was lost is ``lost``, never a verdict; ``resume`` runs the lost and
the unrun again under new numbers.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import CancelledError
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studymon.engine.contract.folder import EvidenceFolder
from studymon.engine.contract.killpoint import KillPoint
from studymon.engine.contract.ledger import LedgerParser, Record
from studymon.engine.evidence.writer import read_jsonl
from studymon.engine.explore.campaign import (
    DONE,
    FAILED_TO_RUN,
    LOST,
    MISSED,
    PLANNED,
    CampaignFolder,
    Trial,
    campaign_status,
    matrix,
    to_resume,
)
from studymon.engine.explore.crashpoints import Candidate, candidates, classes, steps_of
from studymon.engine.explore.trial import run_trial, unpack
from studymon.engine.io.clock import parse_rfc3339
from studymon.engine.kill.recording import event_time

MISSED_TRIES = 3  # candidates of one class tried when each was missed
TRACE_TIMEOUT = 3600.0
POLL = 0.5  # seconds between two looks at which trials the scheduler runs, and where

Progress = Callable[[str, dict[str, Any]], None]  # (what happened, its facts): for a printer or a console


@dataclass
class ExploreOptions:
    study: str
    folder: Path
    template: dict[str, Any] = field(default_factory=dict)
    workers: int | None = None  # a LocalCluster of this many (default: the cores)
    scheduler: str | None = None  # or an existing scheduler, tcp://HOST:PORT
    max_trials: int | None = None
    all_points: bool = False
    depth: int = 1
    resume: bool = False
    env: dict[str, str] = field(default_factory=dict)  # for the trials' commands (a runtime's state folder...)


class ExploreFailed(RuntimeError):
    """The campaign could not go on; the scene is kept and the message says how to resume."""


def read_trace(trace: Path) -> tuple[str, list[Candidate]]:
    """The traced study's id and its candidates, from its evidence folder."""
    research = json.loads(EvidenceFolder(trace).research.read_text(encoding="utf-8"))
    study = str(research.get("study"))
    stem = f"{research.get('containerPrefix', 'inforsi')}-{study}-"
    parser = LedgerParser()
    records: list[Record] = []
    with open(EvidenceFolder(trace).ledger, "rb") as f:
        while chunk := f.read(1 << 20):
            records += parser.feed(chunk)[0]
    events = [e for e in read_jsonl(EvidenceFolder(trace).trace) if isinstance(e, dict) and "gap" not in e]

    def epoch(value: Any) -> float | None:
        try:
            return parse_rfc3339(value) if isinstance(value, str) else event_time(value)
        except (ValueError, TypeError, KeyError):
            return None

    return study, candidates(steps_of(records, events, stem, epoch))


def plan_trials(
    study: str, found: list[Candidate], all_points: bool, depth: int, max_trials: int | None, first_n: int = 1
) -> list[Trial]:
    """The trials: one per class (its first candidate), or one per candidate; with depth 2 one more per class
    killing the resumed controller again at the same point; at most ``max_trials``."""
    by_class = classes(found)
    trials: list[Trial] = []
    n = first_n
    for name, members in by_class.items():
        for c in members if all_points else members[:1]:
            trials.append(Trial(n, f"{study}-{n}", [str(c.point)], name))
            n += 1
        if depth >= 2:
            again = KillPoint(members[0].point.source, members[0].point.what, members[0].point.purpose, 1)
            trials.append(Trial(n, f"{study}-{n}", [str(members[0].point), str(again)], name))
            n += 1
    return trials[:max_trials] if max_trials is not None else trials


class Explorer:
    """Runs one campaign; tells ``progress`` of each step."""

    def __init__(self, options: ExploreOptions, progress: Progress | None = None) -> None:
        self.options = options
        self.folder = CampaignFolder(options.folder)
        self.progress = progress or _quiet
        self.plan: dict[str, Any] = {}
        self.trials: dict[int, Trial] = {}
        self.found: list[Candidate] = []
        self.live_root: Path | None = None  # on a local cluster, where the trials work (see _run_trials)
        self._started: set[int] = set()
        self._stop = threading.Event()
        # Seconds of this run's steps: the trace, the cluster's start (or the client's connection), the trials.
        self.timing: dict[str, float] = {}

    # --- the steps -------------------------------------------------------------
    def run(self) -> int:
        o = self.options
        if o.resume:
            self.plan = self.folder.plan()
            if not self.plan:
                raise ExploreFailed(f"{self.folder.summary} is missing or unreadable: not a campaign to resume")
            self.trials = self.folder.trials()
            _, self.found = read_trace(self.folder.trace)
            again = to_resume(self.trials)
            n = max(self.trials, default=0) + 1
            fresh = []
            for t in again:
                if t.state == PLANNED:
                    t.state, t.detail = LOST, "never ran (the campaign stopped first)"
                    self.folder.log(t)
                fresh.append(Trial(n, f"{self.plan['study']}-{n}", list(t.points), t.cls))
                n += 1
            todo = fresh
        else:
            began = time.monotonic()
            self._trace()
            self.timing["trace"] = round(time.monotonic() - began, 3)
            _, self.found = read_trace(self.folder.trace)
            by_class = classes(self.found)
            self.plan = {
                "version": 1,
                "study": o.study,
                "token": uuid.uuid4().hex,
                "template": o.template,
                "trace": "trace",
                "points": [{"point": str(c.point), "class": c.cls, "left": c.left.as_json()} for c in self.found],
                "classes": [{"name": name, "candidates": [str(c.point) for c in m]} for name, m in by_class.items()],
                "options": {"all": o.all_points, "depth": o.depth, "maxTrials": o.max_trials},
            }
            todo = plan_trials(o.study, self.found, o.all_points, o.depth, o.max_trials)
        counts = {"classes": len(classes(self.found)), "candidates": len(self.found), "trials": len(todo)}
        self.progress("planned", counts)
        for t in todo:
            self.trials[t.n] = t
            self.folder.log(t)
        self._summary()
        self._run_trials(todo)
        self.plan["timing"] = self.timing  # this run's (a resumed campaign's: the resume's)
        self._summary()
        status = campaign_status(self.trials)
        self.progress("ended", {"status": status})
        return status

    def _trace(self) -> None:
        o = self.options
        if self.folder.folder.exists() and any(self.folder.folder.iterdir()):
            raise ExploreFailed(f"{self.folder.folder} exists and is not empty: give a new CAMPAIGN folder")
        self.folder.folder.mkdir(parents=True, exist_ok=True)
        template = self.folder.folder / ".template.json"
        template.write_text(json.dumps(o.template), encoding="utf-8")
        self.progress("trace", {"out": str(self.folder.trace)})
        argv = [sys.executable, "-m", "studymon", "run", "--headless", "--trace", "--template", str(template)]
        argv.append(f"{o.study}={self.folder.trace}")
        proc = subprocess.run(
            argv,
            check=False,
            capture_output=True,
            text=True,
            timeout=TRACE_TIMEOUT,
            env={**os.environ, **o.env, "COLUMNS": "200"},
        )
        report = EvidenceFolder(self.folder.trace).report
        if not report.is_file():
            raise ExploreFailed(
                f"the trace run did not finish (exit {proc.returncode}): {proc.stdout[-500:]}{proc.stderr[-500:]}"
            )
        self.progress("traced", {"exit": proc.returncode})

    def _run_trials(self, todo: list[Trial]) -> None:
        from distributed import Client, LocalCluster

        o = self.options
        cluster = None
        began = time.monotonic()
        # distributed is untyped: its calls are marked one by one.
        if o.scheduler:
            client = Client(o.scheduler, timeout=30)  # type: ignore[no-untyped-call]
        else:
            workers = o.workers or os.cpu_count() or 1
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
            )
            client = Client(cluster)  # type: ignore[no-untyped-call]
            # On this machine a trial's folder can be read as it grows: each trial works in a folder of its
            # own under this one (the console follows it); each removes its own once shipped back.
            self.live_root = Path(tempfile.mkdtemp(prefix="studymon-campaign-"))
        self.timing["cluster"] = round(time.monotonic() - began, 3)
        try:
            began = time.monotonic()
            info = client.scheduler_info()
            workers_now = sorted(info.get("workers", {}))
            self.progress("cluster", {"scheduler": str(info.get("address", "")), "workers": workers_now})
            futures = {self._submit(client, t): t for t in todo}
            self._follow(client, futures)
            self.timing["trials"] = round(time.monotonic() - began, 3)
        finally:
            client.close()  # type: ignore[no-untyped-call]
            if cluster is not None:
                cluster.close()
            if self.live_root is not None:
                shutil.rmtree(self.live_root, ignore_errors=True)
                self.live_root = None

    def _follow(self, client: Any, futures: dict[Any, Trial]) -> None:
        """Until every trial ended (or :meth:`stop`): each trial's end as it comes, and each start the scheduler
        reports (which worker runs it), polled every :data:`POLL` seconds."""
        from distributed import wait

        while futures and not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                wait(list(futures), timeout=POLL, return_when="FIRST_COMPLETED")  # type: ignore[no-untyped-call]
            self._notice_starts(client, futures)
            for future in [f for f in futures if f.status != "pending"]:
                trial = futures.pop(future)
                retry = self._ended(trial, future)
                if retry is not None:
                    self.trials[retry.n] = retry
                    self.folder.log(retry)
                    futures[self._submit(client, retry)] = retry
                self._summary()
        if futures:  # stopped: what had not ended stays planned in the journal, for --resume
            client.cancel(list(futures))
            self.progress("stopped", {"left": sorted(t.n for t in futures.values())})

    def _notice_starts(self, client: Any, futures: dict[Any, Trial]) -> None:
        try:
            processing = client.processing()
        except (OSError, TimeoutError):
            return
        keys = {future.key: t for future, t in futures.items()}
        for worker, running in processing.items():
            for key in running:
                trial = keys.get(key)
                if trial is None or trial.n in self._started:
                    continue
                self._started.add(trial.n)
                trial.worker = str(worker)
                live = self.live_root / str(trial.n) / trial.id if self.live_root is not None else None
                self.progress("running", {"n": trial.n, "id": trial.id, "worker": str(worker), "out": live})

    def stop(self) -> None:
        """End the campaign soon (within :data:`POLL` seconds): the trials running are stopped with their cluster,
        their studies stopped and their containers removed; what did not end is left for ``--resume``."""
        self._stop.set()

    def _submit(self, client: Any, trial: Trial) -> Any:
        token = self.plan["token"]
        task = {
            "n": trial.n,
            "id": trial.id,
            "points": trial.points,
            "template": self.plan["template"],
            "claim": f"studymon-{token}-{trial.n}",
            "env": self.options.env,
        }
        if self.live_root is not None:
            task["root"] = str(self.live_root)
        self.progress("submitted", {"n": trial.n, "id": trial.id, "points": trial.points, "class": trial.cls})
        return client.submit(run_trial, task, key=f"studymon-trial-{token}-{trial.n}", pure=False, retries=0)

    def _ended(self, trial: Trial, future: Any) -> Trial | None:
        """Record how ``trial`` ended; the next candidate of its class when its point was missed."""
        from distributed import KilledWorker

        try:
            result: dict[str, Any] = future.result()
        except (KilledWorker, CancelledError, OSError, TimeoutError) as exc:
            # Its worker lost for good, the scheduler gone: never a verdict.
            trial.state, trial.detail = LOST, f"{type(exc).__name__}: {exc}"
            trial.worker = _lost_worker(exc) or trial.worker
            self.folder.log(trial)
            self.progress("lost", {"n": trial.n, "detail": trial.detail})
            return None
        except Exception as exc:  # noqa: BLE001 - the trial's own failure on its worker is the trial's, not ours
            trial.state, trial.detail = FAILED_TO_RUN, f"{type(exc).__name__}: {exc}"
            self.folder.log(trial)
            self.progress("error", {"n": trial.n, "detail": trial.detail})
            return None
        trial.worker, trial.host = result.get("worker"), result.get("host")
        trial.seconds, trial.exit = result.get("seconds"), result.get("exit")
        if result.get("state") == LOST:
            trial.state, trial.detail = LOST, str(result.get("detail", ""))
            self.folder.log(trial)
            self.progress("lost", {"n": trial.n, "detail": trial.detail})
            return None
        folder = result.get("folder") or b""
        out = None
        if folder:
            out = self.folder.trial_out(trial.n)
            unpack(folder, out)
        if result.get("state") != DONE:
            trial.state, trial.detail = FAILED_TO_RUN, str(result.get("detail", ""))
            self.folder.log(trial)
            self.progress("error", {"n": trial.n, "detail": trial.detail, "out": out})
            return None
        missed = result.get("missed") or []
        if missed:
            trial.state, trial.detail = MISSED, "; ".join(missed)
            self.folder.log(trial)
            self.progress("missed", {"n": trial.n, "detail": trial.detail, "out": out})
            return self._next_candidate(trial)
        trial.state, trial.ok = DONE, result.get("ok")
        trial.failed, trial.unknown = list(result.get("failed", [])), list(result.get("unknown", []))
        trial.checks = dict(result.get("checks", {}))
        self.folder.log(trial)
        facts = {"n": trial.n, "ok": trial.ok, "failed": trial.failed, "points": trial.points, "out": out}
        self.progress("done", {**facts, "worker": trial.worker, "seconds": trial.seconds})
        return None

    def _next_candidate(self, trial: Trial) -> Trial | None:
        members = [str(c.point) for c in self.found if c.cls == trial.cls]
        tried = [t for t in self.trials.values() if t.cls == trial.cls and t.state == MISSED]
        rest = [p for p in members if p not in {t.points[0] for t in self.trials.values()}]
        at_most = self.options.max_trials
        if not rest or len(tried) >= MISSED_TRIES or (at_most is not None and len(self.trials) >= at_most):
            return None
        n = max(self.trials) + 1
        return Trial(n, f"{self.plan['study']}-{n}", [rest[0], *trial.points[1:]], trial.cls)

    def _summary(self) -> None:
        self.folder.write_summary(self.plan, self.trials)
        self.progress("matrix", matrix(self.trials))


def _quiet(what: str, facts: dict[str, Any]) -> None:
    """No one to tell."""


def _lost_worker(exc: BaseException) -> str | None:
    # KilledWorker says which worker it last ran on.
    worker = getattr(exc, "last_worker", None)
    address = getattr(worker, "address", None)
    return str(address) if address else None
