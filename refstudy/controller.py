"""The reference study's controller: plans diagnosis runs, runs each in a
container, charges the budget, settles the results, asks a (simulated) model
service for the next experiments, and records every step in the ledger, to the
study contract (PROTOCOL.md) and nothing more.

Resuming is deterministic replay: the logic below depends only on the config
and on what earlier steps recorded, so ``--resume`` runs it again from the top
while the :class:`~refstudy.ledger.Journal` answers each step from the ledger,
and the controller acts (starts containers, waits, writes) only past the
ledger's end.  A run whose ``runStarted`` is replayed but whose result is not
in the ledger is in flight: it is waited for in the same container, found by
name, and never charged or started again.

A container runtime that stops answering while a run is waited for (a Docker
engine restarting) is waited for in turn, up to ``runtimeOutageSeconds``
(60 s unless research.json sets it).  Past that the study stops as a
temporary failure, ``serviceError`` then exit 75; the run keeps its
container, and ``--resume`` passes over that mark and waits for the same
container.

Subclasses can override the run lifecycle (``charge``, ``start``,
``on_reattach``, ``collect``, ``launch``); the study's own behaviour has no
switches for doing it wrong.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import random
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from studymon.engine.runtimes import (
    ContainerConflict,
    NoSuchContainer,
    Runtime,
    RuntimeUnavailable,
    open_runtime,
    resolve_backend,
)
from studymon.refstudy.image import IMAGE, ImageError, build_image
from studymon.refstudy.ledger import (
    LEDGER_NAME,
    Content,
    Journal,
    Ledger,
    LedgerError,
    cut_torn_tail,
    read_ledger,
)

STUDY_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")

# Keys the console owns; everything else in the template is the study's.
CONSOLE_KEYS = ("command",)

FULL_STOP = "balance exhausted"

EXIT_OK, EXIT_CRASH, EXIT_CONFIG, EXIT_TEMPORARY, EXIT_INTERRUPTED = 0, 1, 2, 75, 130

# How long a wait for a run rides out a container runtime that does not answer (a Docker
# engine restarting) before the study stops with a serviceError and exit 75, for --resume
# to go on waiting for the same container.  ``runtimeOutageSeconds`` in research.json sets it.
RUNTIME_OUTAGE = 60.0
OUTAGE_RETRY = 1.0  # seconds between asking a runtime that did not answer

# How often a wait for a container looks at the stop flag: well inside the
# contract's 10 s for SIGINT, and cheap for either runtime.
WAIT_SLICE = 0.5


def say(message: str) -> None:
    """One human line for study.log."""
    print(f"{time.strftime('%H:%M:%S')} {message}", flush=True)


# --- configuration -----------------------------------------------------------


class ConfigError(ValueError):
    """The research.json cannot be run; the message names the key and the fix."""


def template() -> dict[str, Any]:
    """The default template shipped with the study (``refstudy/research.json``)."""
    data: dict[str, Any] = json.loads(
        resources.files("studymon.refstudy").joinpath("research.json").read_text(encoding="utf-8")
    )
    return data


@dataclass(frozen=True)
class Settings:
    """The study's keys, checked, with the template's defaults filled in."""

    study: str
    backend: str
    container_prefix: str
    image: str
    budget: float
    run_cost: float
    cells: tuple[str, ...]
    initial_experiments: int
    experiments_per_round: int
    diagnosis_batch: int
    diagnosis_seconds: float
    samples: int
    keep_score: float
    ablation: bool
    ablation_seconds: float
    service_fail_at_round: int | None
    seed: int
    runtime_outage_seconds: float
    step_seconds: float  # a pause after each write of the ledger (0: none), so that a kill can land between any two
    durable: bool  # each write of the ledger fsynced before the step it records is taken (§9.2); false: the old way
    effective: dict[str, Any] = field(compare=False)


def _number(config: dict[str, Any], key: str, minimum: float, integer: bool = False) -> Any:
    value = config[key]
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_type or not math.isfinite(value) or value < minimum:
        kind = "an integer" if integer else "a number"
        raise ConfigError(f"{key} must be {kind} >= {minimum:g}, not {value!r}")
    return value


def settings_from(config: dict[str, Any], study_env: str | None = None) -> Settings:
    """Check a research.json (already parsed); defaults come from the template."""
    effective = {k: v for k, v in template().items() if k not in CONSOLE_KEYS}
    effective.update(config)
    study = effective.get("study") or study_env
    if not isinstance(study, str) or not STUDY_ID.match(study):
        raise ConfigError(f"study must match {STUDY_ID.pattern}, not {study!r}")
    effective["study"] = study
    backend = effective.get("backend")
    if backend not in ("docker", "process", "auto"):
        raise ConfigError(f"backend must be docker, process or auto, not {backend!r}")
    cells = effective.get("cells")
    if not isinstance(cells, list) or not cells or not all(isinstance(c, str) and c for c in cells):
        raise ConfigError(f"cells must be a non-empty list of names, not {cells!r}")
    fail = effective.get("serviceFailAtRound")
    if fail is not None and (isinstance(fail, bool) or not isinstance(fail, int) or fail < 1):
        raise ConfigError(f"serviceFailAtRound must be null or a round number >= 1, not {fail!r}")
    for key in ("containerPrefix", "image"):
        if not isinstance(effective.get(key), str) or not effective[key]:
            raise ConfigError(f"{key} must be a non-empty string")
    if not isinstance(effective.get("ablation"), bool):
        raise ConfigError(f"ablation must be true or false, not {effective.get('ablation')!r}")
    run_cost = _number(effective, "runCost", 0)
    if run_cost <= 0:
        raise ConfigError("runCost must be more than 0, or the study never ends")
    # Not in the template: a key the template gained would change the studyOpen of every
    # study resumed from an older ledger.  A research.json may still set it.
    outage = _number(effective, "runtimeOutageSeconds", 0) if "runtimeOutageSeconds" in effective else RUNTIME_OUTAGE
    step = _number(effective, "stepSeconds", 0) if "stepSeconds" in effective else 0.0
    durable = effective.get("fsync", True)
    if not isinstance(durable, bool):
        raise ConfigError(f"fsync must be true or false, not {durable!r}")
    return Settings(
        study=study,
        backend=backend,
        container_prefix=effective["containerPrefix"],
        image=effective["image"],
        budget=_number(effective, "budget", 0),
        run_cost=run_cost,
        cells=tuple(cells),
        initial_experiments=_number(effective, "initialExperiments", 0, integer=True),
        experiments_per_round=_number(effective, "experimentsPerRound", 0, integer=True),
        diagnosis_batch=_number(effective, "diagnosisBatch", 1, integer=True),
        diagnosis_seconds=_number(effective, "diagnosisSeconds", 0),
        samples=_number(effective, "samples", 1, integer=True),
        keep_score=_number(effective, "keepScore", 0),
        ablation=effective["ablation"],
        ablation_seconds=_number(effective, "ablationSeconds", 0),
        service_fail_at_round=fail,
        seed=_number(effective, "seed", 0, integer=True),
        runtime_outage_seconds=outage,
        step_seconds=step,
        durable=durable,
        effective=effective,
    )


def load_settings(path: Path) -> Settings:
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such file") from exc
    except ValueError as exc:
        raise ConfigError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: a research.json is a JSON object")
    return settings_from(config, os.environ.get("STUDYMON_STUDY"))


# --- the research itself -----------------------------------------------------


@dataclass(frozen=True)
class Experiment:
    """A candidate parameter to measure.  ``param`` is a string when the service garbled it."""

    id: str
    param: float | str
    seed: int

    def record(self) -> Content:
        return {"id": self.id, "param": self.param}

    def argument(self) -> str:
        """How the payload receives it: ``ID:PARAM:SEED``."""
        param = f"{self.param:.3f}" if isinstance(self.param, float) else self.param
        return f"{self.id}:{param}:{self.seed}"


def experiment(study_seed: int, index: int, param: float | str) -> Experiment:
    ident = f"e{index}"
    # Each experiment has its own random stream, stable across processes.
    digest = hashlib.sha256(f"{study_seed}/{ident}".encode()).hexdigest()
    return Experiment(ident, param, int(digest[:8], 16))


class ServiceUnavailable(RuntimeError):
    """The model service did not answer."""


class ModelService:
    """A simulated model service that proposes the next experiments.

    Deterministic from the seed and what was judged so far, like a model called
    at temperature zero.  It centres its proposals on the best parameter so far
    and now and then garbles one (a parameter that is not a number, or one out
    of the valid range), which the verification then drops.  Its outages are
    scheduled: with ``fail_at_round`` the first call of that round fails.
    """

    GARBLED = "n/a"

    def __init__(self, seed: int, fail_at_round: int | None) -> None:
        self.seed = seed
        self.fail_at_round = fail_at_round

    def propose(self, round_: int, attempt: int, best: float | None, first_index: int, count: int) -> list[Experiment]:
        if round_ == self.fail_at_round and attempt == 1:
            raise ServiceUnavailable(f"model service unreachable in round {round_} (scheduled outage)")
        rng = random.Random(f"{self.seed}/propose/{round_}")
        centre = 1.0 if best is None else best
        out = []
        for offset in range(count):
            if rng.random() < 0.1:
                param: float | str = self.GARBLED
            else:
                param = round(centre + rng.gauss(0.0, 0.8), 3)
            out.append(experiment(self.seed, first_index + offset, param))
        return out

    def seed_set(self, count: int) -> list[Experiment]:
        """The experiments the study starts from, before any call to the service."""
        rng = random.Random(f"{self.seed}/seed")
        return [experiment(self.seed, 1 + i, round(rng.uniform(-0.5, 3.0), 3)) for i in range(count)]


def parse_outputs(logs: str) -> dict[str, float]:
    """The payload's outputs: the last line of its standard output, a JSON object id -> number."""
    lines = [line for line in logs.splitlines() if line.strip()]
    if not lines:
        return {}
    try:
        obj = json.loads(lines[-1])
    except ValueError:
        return {}
    if not isinstance(obj, dict):
        return {}
    return {
        str(k): v
        for k, v in obj.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    }


@dataclass(frozen=True)
class RunPlan:
    """One run: what it measures and how long it lasts."""

    run: str
    purpose: str
    cell: str
    round: int
    experiments: tuple[Experiment, ...]
    seconds: float
    samples: int

    def record(self) -> Content:
        return {
            "run": self.run,
            "purpose": self.purpose,
            "object": self.cell,
            "round": self.round,
            "experiments": [e.id for e in self.experiments],
        }


# --- the controller ----------------------------------------------------------


class Interrupted(Exception):
    """SIGINT arrived: stop at the next safe point."""


class TemporaryFailure(Exception):
    """A failure worth retrying with ``--resume`` (the serviceError is written)."""


class Halted(Exception):
    """The study reached its end (halt or export); the step is recorded."""


class Study:
    """One study's controller, from ``studyOpen`` to its halt or export."""

    def __init__(self, settings: Settings, directory: Path, journal: Journal, stop: threading.Event) -> None:
        self.settings = settings
        self.directory = directory
        self.journal = journal
        self.stop = stop
        self.balance: float = settings.budget
        self.service = ModelService(settings.seed, settings.service_fail_at_round)
        self.experiments: dict[str, Experiment] = {}
        self.untested: list[Experiment] = []
        self.scores: dict[str, float] = {}
        self._runtime: Runtime | None = None
        self._payload: str | None = None

    # --- plumbing ------------------------------------------------------------
    @property
    def runtime(self) -> Runtime:
        """Opened on first use: a resume that only replays never needs it."""
        if self._runtime is None:
            backend = resolve_backend(self.settings.backend)
            runtime = open_runtime(backend)
            if backend == "docker" and self.settings.image == IMAGE:
                # The study's own image is made locally (no registry); do it on a fresh machine.
                build_image(IMAGE)
            self._runtime = runtime
        return self._runtime

    @property
    def payload(self) -> str:
        if self._payload is None:
            self._payload = resources.files("studymon.refstudy").joinpath("payload.sh").read_text(encoding="utf-8")
        return self._payload

    def container(self, plan: RunPlan) -> str:
        return f"{self.settings.container_prefix}-{self.settings.study}-{plan.run}"

    def checkpoint(self) -> None:
        if self.stop.is_set():
            raise Interrupted

    def note(self, message: str) -> None:
        """Log only what happens now, not what a resume replays."""
        if self.journal.live:
            say(message)

    # --- the study ----------------------------------------------------------
    def run(self) -> int:
        s = self.settings
        self.journal.step("studyOpen", {"study": s.study, "budget": s.budget, "config": s.effective})
        self.note(f"study {s.study} open: budget {s.budget:g}, run cost {s.run_cost:g}, backend {s.backend}")
        self._add(self.service.seed_set(s.initial_experiments), "seedExperiments", 0)
        try:
            round_ = 0
            while True:
                round_ += 1
                self.checkpoint()
                if not self.untested:
                    self.export(round_)
                self.pay_or_halt()
                kept = self.diagnosis(round_)
                self.proposal(round_)
                if s.ablation and kept:
                    self.pay_or_halt()
                    self.ablation(round_, kept)
        except Halted:
            self.journal.finish()
            return EXIT_OK

    def _add(self, experiments: list[Experiment], decision: str, round_: int) -> None:
        output = {"experiments": [e.record() for e in experiments]}
        self.journal.step("decision", {"name": decision, "round": round_, "output": output})
        for e in experiments:
            self.experiments[e.id] = e
        self.untested.extend(experiments)

    def pay_or_halt(self) -> None:
        """Before a run is planned: stop for good when the balance cannot pay for it."""
        if self.balance + 1e-9 >= self.settings.run_cost:
            return
        self.journal.step("halt", {"reason": FULL_STOP})
        say(f"halt: balance exhausted ({self.balance:g} left, a run costs {self.settings.run_cost:g})")
        raise Halted

    def export(self, round_: int) -> None:
        """Nothing is left to diagnose: write the findings and stop."""
        self.journal.step("stageOpen", {"stage": "export", "round": round_})
        path = self.directory / "export.json"
        if self.journal.live:
            findings = {"study": self.settings.study, "balance": self.balance, "scores": self.scores}
            tmp = path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(findings, indent=2) + "\n", encoding="utf-8")
            os.replace(tmp, path)
        self.journal.step("export", {"path": path.name})
        say(f"export written to {path}")
        raise Halted

    def diagnosis(self, round_: int) -> list[Experiment]:
        """One diagnosis round; returns the experiments it kept."""
        s = self.settings
        self.journal.step("stageOpen", {"stage": "diagnosis", "round": round_})
        chosen, self.untested = self.untested[: s.diagnosis_batch], self.untested[s.diagnosis_batch :]
        self.journal.step(
            "decision", {"name": "selectDiagnosis", "round": round_, "output": {"chosen": [e.id for e in chosen]}}
        )
        cell = s.cells[(round_ - 1) % len(s.cells)]
        plan = RunPlan(f"d{round_}", "diagnosis", cell, round_, tuple(chosen), s.diagnosis_seconds, s.samples)
        result = self.execute(plan)
        return self.settle(plan, result)

    def settle(self, plan: RunPlan, result: Content | None) -> list[Experiment]:
        """Verify and judge every chosen experiment; returns the kept ones."""
        dropped, judged, kept = [], [], []
        outputs = result.get("outputs", {}) if result else {}
        for e in plan.experiments:
            value = outputs.get(e.id)
            if result is None:
                dropped.append({"experiment": e.id, "reason": "no result"})
            elif value is None:
                code = result.get("exitCode")
                reason = "missing output" if code == 0 else f"missing output (run exited {code})"
                dropped.append({"experiment": e.id, "reason": reason})
            elif not 0.0 <= value <= 1.0:
                dropped.append({"experiment": e.id, "reason": f"out of range ({value:g} not in [0, 1])"})
            else:
                score = round(float(value), 4)
                verdict = "kept" if score >= self.settings.keep_score else "rejected"
                judged.append({"id": e.id, "verdict": verdict, "score": score})
                self.scores[e.id] = score
                if verdict == "kept":
                    kept.append(e)
        self.journal.step(
            "diagnosisSettlement",
            {"round": plan.round, "run": plan.run, "dropped": dropped, "judged": {"experiments": judged}},
        )
        self.note(f"round {plan.round}: settled {len(judged)} judged ({len(kept)} kept), {len(dropped)} dropped")
        return kept

    def proposal(self, round_: int) -> None:
        """Ask the model service for the next experiments; exit 75 when it is down."""
        self.journal.step("stageOpen", {"stage": "proposal", "round": round_})
        best = max(self.scores, key=lambda i: (self.scores[i], i), default=None)
        param = self.experiments[best].param if best is not None else None
        centre = param if isinstance(param, float) else None  # a garbled one (a string) is no centre
        attempt = 0
        while True:
            attempt += 1
            self.checkpoint()
            try:
                proposed = self.service.propose(
                    round_, attempt, centre, len(self.experiments) + 1, self.settings.experiments_per_round
                )
            except ServiceUnavailable as exc:
                live = self.journal.live
                self.journal.step("serviceError", {"stage": "proposal", "round": round_, "message": str(exc)})
                if live:
                    raise TemporaryFailure(str(exc)) from exc
                # Replaying: an earlier process stopped here; this resume is its retry.
                continue
            self._add(proposed, "proposeExperiments", round_)
            self.note(f"round {round_}: the model service proposed {', '.join(e.id for e in proposed) or 'nothing'}")
            return

    def ablation(self, round_: int, kept: list[Experiment]) -> None:
        """Measure the kept experiments again with half the samples and fresh streams: do they hold?"""
        s = self.settings
        self.journal.step("stageOpen", {"stage": "ablation", "round": round_})
        fresh = tuple(Experiment(e.id, e.param, e.seed + 1) for e in kept)
        cell = s.cells[(round_ - 1) % len(s.cells)]
        plan = RunPlan(f"a{round_}", "ablation", cell, round_, fresh, s.ablation_seconds, max(1, s.samples // 2))
        self.execute(plan)

    # --- one run's lifecycle -------------------------------------------------
    def execute(self, plan: RunPlan) -> Content | None:
        """Plan, charge, start and collect one run; its ``runResult`` content (None when there is none)."""
        self.checkpoint()
        self.journal.step("runPlanned", plan.record())
        self.charge(plan)
        if self.start(plan):
            self.on_reattach(plan)
        return self.collect(plan)

    def charge(self, plan: RunPlan) -> None:
        amount = self.settings.run_cost
        self.balance = _money(self.balance - amount)
        self.journal.step("charge", {"run": plan.run, "amount": amount, "balance": self.balance})

    def start(self, plan: RunPlan) -> bool:
        """Start the run unless the ledger says it was; True when it is in flight from an earlier process."""
        content = {"run": plan.run, "container": self.container(plan)}
        if self.journal.live:
            self.launch(plan)
            self.journal.step("runStarted", content)
            say(f"round {plan.round}: {plan.purpose} run {plan.run} on {plan.cell} started in {content['container']}")
            return False
        self.journal.step("runStarted", content)
        self._skip_outages(plan)  # they follow the runStarted: past them, the run is in flight or has its result
        return self.journal.live

    def on_reattach(self, plan: RunPlan) -> None:
        say(f"run {plan.run} was in flight: waiting for the same container {self.container(plan)}")

    def launch(self, plan: RunPlan) -> None:
        """Create and start the run's container, unless this very study started it already.

        A container under the run's name is one of three things:

        * this study's own (its labels name this study folder and this run):
          an earlier process of this study started it and was killed before
          writing ``runStarted``.  Starting the run again would do its work
          twice, so that container is the run: running or exited, it is
          adopted and its result collected; only one that was created and
          never started is replaced.
        * a leftover of an earlier study (exited, or never started): removed.
        * somebody's live work (another study given the same id, running):
          never removed; the study stops with an error.
        """
        name = self.container(plan)
        command = ["sh", "-c", self.payload, "refstudy", f"{plan.seconds:g}", str(plan.samples)]
        command += [e.argument() for e in plan.experiments]
        labels = {
            "studymon.study": self.settings.study,
            "studymon.run": plan.run,
            "studymon.purpose": plan.purpose,
            "studymon.dir": str(self.directory.resolve()),
        }
        try:
            self.runtime.run(name, command, image=self.settings.image, labels=labels)
        except ContainerConflict:
            found = self.runtime.inspect(name)
        else:
            return
        state = (found or {}).get("State") or {}
        status = state.get("Status") if found else None
        theirs = ((found or {}).get("Config") or {}).get("Labels") or {}
        mine = all(theirs.get(k) == v for k, v in labels.items() if k != "studymon.purpose")
        if mine and status != "created":
            say(
                f"run {plan.run}: its container {name} was started by this study before it was stopped ({status}): "
                "adopting it, not starting the run again"
            )
            return
        if status in ("running", "restarting", "paused"):
            raise RuntimeError(
                f"container {name} already exists and is {status}: another study may use id "
                f"{self.settings.study!r} on this runtime; it was left alone"
            )
        say(f"removing the leftover container {name} ({status or 'gone'})")
        if found is not None:
            # Never started: force takes it out of "created"; an exited one needs none.
            with contextlib.suppress(NoSuchContainer):
                self.runtime.remove(name, force=status == "created")
        self.runtime.run(name, command, image=self.settings.image, labels=labels)

    def collect(self, plan: RunPlan) -> Content | None:
        """The run's result: from the ledger when it is there, else from its container."""
        content = self.journal.recorded("runResult", run=plan.run)
        if content is None:
            code, outputs = self.await_container(plan)
            content = {"run": plan.run, "exitCode": code, "outputs": outputs}
            self.journal.step("runResult", content)
            say(f"run {plan.run} exited {code}: {len(outputs)} of {len(plan.experiments)} outputs")
        self.dispose(plan)
        return content

    def await_container(self, plan: RunPlan) -> tuple[int, dict[str, float]]:
        """Wait for the run's container to exit (it may have exited already); its exit code and outputs."""
        name = self.container(plan)
        down_since: float | None = None
        try:
            while True:
                self.checkpoint()
                try:
                    code = self.runtime.wait(name, timeout=WAIT_SLICE)
                    outputs = parse_outputs(self.runtime.logs(name)) if code is not None else {}
                except RuntimeUnavailable as exc:
                    down_since = self._runtime_down(plan, exc, down_since)
                    continue
                if down_since is not None:
                    say(f"run {plan.run}: the container runtime answers again; waiting on for {name}")
                    down_since = None
                if code is not None:
                    return code, outputs
        except NoSuchContainer:
            # Someone removed it: the run is lost, and saying so beats waiting forever.
            say(f"container {name} is gone: recording run {plan.run} as failed")
            return -1, {}

    def _runtime_down(self, plan: RunPlan, exc: RuntimeUnavailable, since: float | None) -> float:
        """A wait found the runtime not answering: wait a little and ask again, or give up for now.

        Past ``runtime_outage_seconds`` the study stops as a temporary failure
        (``serviceError``, exit 75); the run keeps its container, and
        ``--resume`` waits for that same container.
        """
        now = time.monotonic()
        if since is None:
            since = now
            say(
                f"run {plan.run}: the container runtime does not answer ({exc}); "
                f"waiting for it up to {self.settings.runtime_outage_seconds:g} s"
            )
        if now - since >= self.settings.runtime_outage_seconds:
            message = f"the container runtime did not answer for {now - since:.0f} s while run {plan.run} ran: {exc}"
            self.journal.step("serviceError", {"stage": plan.purpose, "round": plan.round, "message": message})
            raise TemporaryFailure(message) from exc
        self.stop.wait(OUTAGE_RETRY)  # a SIGINT ends the wait at once (the next checkpoint stops)
        return since

    def _skip_outages(self, plan: RunPlan) -> None:
        """Replaying: an earlier process gave up waiting for the runtime here; this resume is its retry."""
        while self.journal.skip("serviceError", stage=plan.purpose, round=plan.round):
            pass

    def dispose(self, plan: RunPlan) -> None:
        """Remove a finished run's container (also when a resume finds one left over)."""
        if not self.journal.live:
            return  # replaying settled history: that process tidied up after itself
        name = self.container(plan)
        with contextlib.suppress(NoSuchContainer):
            self.runtime.remove(name, force=True)


def _money(value: int | float) -> int | float:
    """Keep sums of decimal costs exact enough to compare (0.1 + 0.2)."""
    return round(value, 9) if isinstance(value, float) else value


# --- command line --------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m studymon.refstudy", description="The studymon reference study.")
    parser.add_argument("--config", required=True, type=Path, help="the study's research.json")
    parser.add_argument("--dir", required=True, type=Path, help="the study directory (its ledger lives here)")
    parser.add_argument("--resume", action="store_true", help="continue from the ledger")
    return parser.parse_args(argv)


def open_journal(
    directory: Path,
    resume: bool,
    pause: float = 0.0,
    wait: Callable[[float], object] = time.sleep,
    durable: bool = True,
) -> Journal:
    """The journal over the study's ledger; refuses a fresh start over an existing one.  ``pause``: seconds
    ``wait``ed after each write; ``durable``: each write fsynced (and the folder, once the ledger is made)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / LEDGER_NAME
    existed = path.exists() and path.stat().st_size > 0
    if existed and not resume:
        raise LedgerError(f"{path} exists: resume it with --resume, or start the study in a new directory")
    # Lock before reading, so that no other writer can add a line in between.
    ledger = Ledger(path, durable=durable)
    try:
        torn = cut_torn_tail(path) if resume else b""
        if torn:
            shown = torn[:60].decode("utf-8", "backslashreplace").replace("\x00", "\\0")
            say(
                f"resume: cut {len(torn)} bytes after the ledger's last whole line (a crash inside a write, or a "
                f"power loss): {shown!r}{'...' if len(torn) > 60 else ''}"
            )
        history = read_ledger(path) if resume else []
    except LedgerError:
        ledger.close()
        raise
    if resume and not history:
        say(f"nothing in {path} yet: starting from the beginning")
    ledger.next_seq = len(history) + 1
    return Journal(ledger, history, pause, wait)


def main(argv: Sequence[str] | None = None, study_class: type[Study] = Study) -> int:
    stop = threading.Event()
    # The flag is looked at between steps and while waiting, so a stop never
    # lands between starting a container and recording that it started.
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    args = parse_args(argv)
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        say(f"cannot start: {exc}")
        return EXIT_CONFIG
    try:
        journal = open_journal(args.dir, args.resume, settings.step_seconds, stop.wait, settings.durable)
        if args.resume and not journal.live:
            say(f"resuming study {settings.study} from its ledger")
        return study_class(settings, args.dir, journal, stop).run()
    except Interrupted:
        say("stopped on SIGINT; any run in flight keeps running, and --resume waits for it")
        return EXIT_INTERRUPTED
    except TemporaryFailure as exc:
        say(f"temporary failure: {exc}; --resume continues")
        return EXIT_TEMPORARY
    except (LedgerError, ImageError) as exc:
        say(f"cannot go on: {exc}")
        return EXIT_CRASH
    except RuntimeUnavailable as exc:
        say(f"cannot go on: {exc}; --resume continues once it answers")
        return EXIT_CRASH


if __name__ == "__main__":
    sys.exit(main())
