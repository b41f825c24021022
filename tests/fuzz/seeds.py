"""The seeds: sound evidence folders written by studymon itself, made once and judged ✓ by the product.

The reference study with the short configuration of ``tests/studies.py``,
run for real by ``studymon run --headless`` and ``studymon explore
--headless`` (four commands at once, so that the lot takes well under two
minutes on two cores):

* on the process runtime, one command: a study nobody kills (``process-plain``),
  one killed at ``after:runStarted/diagnosis``, ``after:charge`` and
  ``after:runResult`` each, and one killed twice (``after:charge``, then
  ``after:runStarted/diagnosis`` on the resumed controller);
* on Docker, one command: killed at ``after:runStarted/diagnosis`` and at
  ``container:start``;
* a crash from outside: the controller SIGKILLed while its first diagnosis
  run runs (the console judges it as an end it did not make), then
  ``studymon run --resume --headless``;
* a campaign: ``studymon explore --headless --max-trials 2`` (the study
  pausing a tenth of a second after each record, ``stepSeconds``, so that its
  first classes, kills between records written in one burst, are rarely
  missed).

A point can be missed on a loaded machine (the study wrote its next record
before the kill landed): a seed that does not pass is made again, alone
(twice at most).  Every seed must then pass (status 0), and a copy of
it elsewhere too, since mutants live elsewhere.  ``seeds.json`` in the seeds'
folder lists them, so that ``python3 -m tests.fuzz --seeds DIR`` can reuse
them (and replay a case exactly).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fuzz.mutators import copy_folder
from tests.studies import template

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = "seeds.json"
COMMAND_TIMEOUT = 300.0

# Seed name -> the kill points of its study, in order.
PROCESS_STUDIES: dict[str, list[str]] = {
    "process-plain": [],
    "process-diagnosis": ["after:runStarted/diagnosis"],
    "process-charge": ["after:charge"],
    "process-result": ["after:runResult"],
    "process-twice": ["after:charge", "after:runStarted/diagnosis"],
}
DOCKER_STUDIES: dict[str, list[str]] = {
    "docker-diagnosis": ["after:runStarted/diagnosis"],
    "docker-start": ["container:start"],
}
CRASH = "process-crash"
CAMPAIGN = "campaign"


class SeedError(RuntimeError):
    """A seed could not be made sound."""


@dataclass(frozen=True)
class Seed:
    name: str
    path: Path
    kind: str  # "study" or "campaign"


@dataclass
class Maker:
    """One making of the seeds under ``root``: its own process-runtime state, study locks and container prefix."""

    root: Path
    docker: bool = True

    def __post_init__(self) -> None:
        self.tag = secrets.token_hex(2)
        self.prefix = f"fz{self.tag}"
        self.folder = self.root / "seeds"
        self.folder.mkdir(parents=True, exist_ok=True)
        runtime, locks = self.root / "procrt", self.root / "locks"
        runtime.mkdir(exist_ok=True)
        locks.mkdir(exist_ok=True)
        locks.chmod(0o700)
        self.env = dict(
            os.environ,
            PYTHONPATH=str(ROOT),
            COLUMNS="200",
            STUDYMON_PROCESS_RUNTIME=str(runtime),
            STUDYMON_LOCK_DIR=str(locks),
        )
        self.env.pop("LINES", None)
        self.templates = {
            b: template(self.root, f"{b}.json", backend=b, containerPrefix=self.prefix) for b in ("process", "docker")
        }
        # The campaign's first classes are kills between records the study writes in one burst: a pause after
        # each record (the reference study's stepSeconds) lets a trial's kill land there rather than be missed.
        self.templates[CAMPAIGN] = template(
            self.root, "campaign.json", backend="process", containerPrefix=self.prefix, stepSeconds=0.1
        )
        self.logs: list[Path] = []

    def sid(self, name: str, attempt: int = 0) -> str:
        """A study id of its own for the seed (a Docker engine tells studies apart by id)."""
        short = name.split("-", 1)[-1]
        return f"{short}{self.tag}" + (f"r{attempt}" if attempt else "")

    def _argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "studymon.tui.cli", *args]

    def _start(self, label: str, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
        log = self.root / f"{label}.log"
        self.logs.append(log)
        with log.open("wb") as f:
            proc = subprocess.Popen(self._argv(*args), cwd=self.root, env=self.env, stdout=f, stderr=subprocess.STDOUT)
        return proc, log

    def _run_argv(self, backend: str, studies: dict[str, list[str]], attempt: int) -> list[str]:
        args = ["run", "--headless", "--template", str(self.templates[backend])]
        for name, points in studies.items():
            args += [a for point in points for a in ("--kill", f"{self.sid(name, attempt)}:{point}")]
        args += [f"{self.sid(name, attempt)}={self.folder / name}" for name in studies]
        return args

    def studies(self, backend: str, studies: dict[str, list[str]], attempt: int = 0) -> Callable[[], None]:
        """Start one ``studymon run`` of several studies; the function returned waits for it."""
        proc, log = self._start(f"run-{backend}-{attempt}", *self._run_argv(backend, studies, attempt))

        def wait() -> None:
            code = proc.wait(timeout=COMMAND_TIMEOUT)
            if code not in (0, 1, 3):  # 1 or 3: a seed that did not pass is made again below
                raise SeedError(f"studymon run on {backend} exited {code}:\n{_tail(log)}")

        return wait

    def campaign(self, attempt: int = 0) -> Callable[[], None]:
        out = self.folder / CAMPAIGN
        proc, log = self._start(
            f"explore-{attempt}",
            "explore",
            "--headless",
            "--template",
            str(self.templates[CAMPAIGN]),
            "--workers",
            "2",
            "--max-trials",
            "2",
            f"camp{self.tag}{f'r{attempt}' if attempt else ''}={out}",
        )

        def wait() -> None:
            code = proc.wait(timeout=COMMAND_TIMEOUT)
            if code not in (0, 3):  # 3: a trial's point was missed, and the campaign is made again below
                raise SeedError(f"studymon explore exited {code}:\n{_tail(log)}")

        return wait

    def crash(self, name: str = CRASH, attempt: int = 0) -> Callable[[], None]:
        """A study whose controller this process SIGKILLs while its first diagnosis run runs, then resumes."""
        out = self.folder / name
        sid = self.sid(name, attempt)
        errors: list[BaseException] = []

        def body() -> None:
            proc, log = self._start(
                f"crash-{attempt}", "run", "--headless", "--template", str(self.templates["process"]), f"{sid}={out}"
            )
            deadline = time.monotonic() + COMMAND_TIMEOUT
            pid = None
            while pid is None:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SeedError(f"the study to crash ended (or never ran a diagnosis):\n{_tail(log)}")
                pid = _diagnosis_running(out)
                time.sleep(0.02)
            os.kill(pid, signal.SIGKILL)
            code = proc.wait(timeout=COMMAND_TIMEOUT)
            if code != 3:
                raise SeedError(f"the crashed study's run exited {code}, not 3:\n{_tail(log)}")
            again, log = self._start(f"crash-resume-{attempt}", "run", "--resume", "--headless", f"{sid}={out}")
            if again.wait(timeout=COMMAND_TIMEOUT) not in (0, 1, 3):
                raise SeedError(f"the crashed study's resume failed:\n{_tail(log)}")

        def run() -> None:
            try:
                body()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                errors.append(exc)

        thread = threading.Thread(target=run, name="crash-seed")
        thread.start()

        def wait() -> None:
            thread.join(COMMAND_TIMEOUT * 2)
            if errors:
                raise errors[0]

        return wait

    def remove_containers(self) -> None:
        if not self.docker:
            return
        from studymon.engine.runtimes import open_runtime

        runtime = open_runtime("docker")
        try:
            for left in runtime.list(self.prefix + "-"):
                runtime.remove(left["Name"].lstrip("/"), force=True)
        finally:
            runtime.close()


def _tail(log: Path, size: int = 4000) -> str:
    try:
        return log.read_text(errors="replace")[-size:]
    except OSError as exc:
        return f"(no log: {exc})"


def _diagnosis_running(out: Path) -> int | None:
    """The controller's pid once the ledger shows a diagnosis run started, and that pid is the study's."""
    try:
        ledger = [json.loads(line) for line in (out / "study" / "ledger.jsonl").read_text().splitlines() if line]
        launches = [json.loads(line) for line in (out / "launches.jsonl").read_text().splitlines() if line]
    except (OSError, ValueError):
        return None
    planned = {
        r["content"]["run"] for r in ledger if r["kind"] == "runPlanned" and r["content"]["purpose"] == "diagnosis"
    }
    if not any(r["kind"] == "runStarted" and r["content"]["run"] in planned for r in ledger):
        return None
    starts = [x for x in launches if x.get("event") == "start"]
    if not starts:
        return None
    pid = int(starts[-1]["pid"])
    try:  # the pid is the controller this study launched, not a process that took its number
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return pid if str(out).encode() in cmdline else None


def product_status(seed: Seed) -> tuple[int, str]:
    """The product's exit status for a seed, and what it said (judged on a copy: a campaign's report may
    rewrite it)."""
    from tests.fuzz.worker import product

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / seed.path.name
        copy_folder(seed.path, copy)
        body = product(seed.kind, copy)
    marks = {True: "✓", False: "✗", None: "?"}
    table = "\n".join(f"  {scope:14} {name:26} {marks[ok]} {detail}" for scope, name, ok, detail in body["checks"])
    return int(body["status"]), table or json.dumps(body)


def make(root: Path, docker: bool = True) -> dict[str, Seed]:
    """Every seed, made under ``root`` (new), each passing the product's judge; ``seeds.json`` lists them."""
    maker = Maker(root, docker)
    studies: dict[str, Seed] = {}
    try:
        backends = [("process", PROCESS_STUDIES)] + ([("docker", DOCKER_STUDIES)] if docker else [])
        waits = [maker.studies(b, s) for b, s in backends] + [maker.crash(), maker.campaign()]
        for wait in waits:
            wait()
        wanted = {**PROCESS_STUDIES, **(DOCKER_STUDIES if docker else {}), CRASH: []}
        for name in wanted:
            studies[name] = Seed(name, maker.folder / name, "study")
        studies[CAMPAIGN] = Seed(CAMPAIGN, maker.folder / CAMPAIGN, "campaign")
        for attempt in (1, 2):
            failing = [s for s in studies.values() if product_status(s)[0] != 0]
            if not failing:
                break
            for seed in failing:  # made again, alone, under a new id; the failed folder is kept aside
                seed.path.rename(seed.path.with_name(f"{seed.name}.failed{attempt}"))
                if seed.name == CRASH:
                    maker.crash(attempt=attempt)()
                elif seed.name == CAMPAIGN:
                    maker.campaign(attempt)()
                else:
                    backend = "docker" if seed.name in DOCKER_STUDIES else "process"
                    maker.studies(backend, {seed.name: wanted[seed.name]}, attempt)()
    finally:
        maker.remove_containers()
    for seed in studies.values():
        status, table = product_status(seed)
        if status != 0:
            raise SeedError(f"seed {seed.name} does not pass the product's judge (exit {status}):\n{table}")
    _write_manifest(maker.folder, studies)
    return studies


def _write_manifest(folder: Path, seeds: dict[str, Seed]) -> None:
    body = {name: {"path": s.name, "kind": s.kind} for name, s in seeds.items()}
    (folder.parent / MANIFEST).write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")


def load(root: Path) -> dict[str, Seed] | None:
    """The seeds made under ``root`` before, if it holds them."""
    try:
        body: dict[str, Any] = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    seeds = {name: Seed(name, root / "seeds" / str(s["path"]), str(s["kind"])) for name, s in body.items()}
    return seeds if all(s.path.is_dir() for s in seeds.values()) else None


def discard(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
