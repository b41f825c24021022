"""One trial of a campaign, where it runs: a fresh study killed at its points, resumed, judged, and shipped back.

:func:`run_trial` is what a Dask worker runs (it is also called directly,
without Dask).  It makes a temporary folder of its own, writes the study's
template there, and runs the trial as any operator would::

    studymon run --headless --template T --kill ID-n:POINT [--kill ID-n:POINT2] ID-n=TMP/ID-n

so a trial is judged by the same engine as every study, and its folder is
an evidence folder like any other.  The folder comes back whole as a
gzipped tar (no shared file system is needed); only the client writes the
campaign folder (:func:`unpack`).  The temporary folder is removed.

A trial is never run twice: with ``claim`` it first marks itself started in
a Dask ``Variable`` (kept by the scheduler, which outlives workers); a
scheduler that gives it to a second worker after the first was lost finds
the mark and gets ``lost`` back, naming the first worker, without running.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from studymon.engine.contract.folder import EvidenceFolder
from studymon.engine.contract.rules import stem
from studymon.engine.contract.spec import container_prefix
from studymon.engine.explore.campaign import trial_verdict
from studymon.engine.judge.report import report_checks

TRIAL_TIMEOUT = 3600.0  # seconds a trial may take before it is given up (its scene kept in the folder shipped)
OUTPUT_KEPT = 4000  # characters of the trial command's output kept, for a trial that could not run


def run_trial(task: dict[str, Any]) -> dict[str, Any]:
    """Run one trial: ``task`` has ``n``, ``id``, ``points``, ``template`` (the research.json object), and may have
    ``claim`` (a Variable name), ``timeout`` and ``env``; returns the outcome and ``folder`` (tar.gz bytes)."""
    started = time.monotonic()
    worker = _worker_address()
    claim = task.get("claim")
    if claim:
        first = _claim(str(claim), worker or socket.gethostname())
        if first is not None:
            return {"state": "lost", "worker": first, "detail": f"its worker {first} was lost while it ran"}
    work = _work_folder(task)
    try:
        template = work / "template.json"
        template.write_text(json.dumps(task["template"]), encoding="utf-8")
        out = work / str(task["id"])
        argv = trial_command(task, template, out)
        env = {**os.environ, **task.get("env", {}), "COLUMNS": "200"}
        try:
            proc = subprocess.run(
                argv,
                check=False,
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=float(task.get("timeout", TRIAL_TIMEOUT)),
                start_new_session=True,
                preexec_fn=_stop_with_parent,  # only prctl, between fork and exec
            )
            code: int | None = proc.returncode
            output = proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as exc:
            code, output = None, f"the trial ran past {exc.timeout:g} s and was given up"
        result = trial_outcome(out, code, output)
        result.update(worker=worker, host=socket.gethostname(), folder=_pack(out) if out.is_dir() else b"")
        result["seconds"] = round(time.monotonic() - started, 3)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def trial_outcome(out: Path, code: int | None, output: str) -> dict[str, Any]:
    """What a trial's study left in ``out`` says: its verdict and the points it missed, or that it could not run."""
    result: dict[str, Any] = {"state": "done", "exit": code, "output": output[-OUTPUT_KEPT:]}
    report = EvidenceFolder(out).report
    if report.is_file():
        result.update(trial_verdict(report_checks(json.loads(report.read_text(encoding="utf-8")))))
        result["missed"] = missed_points(out)
    else:
        result.update(state="error", detail=f"no report.json: exit {code}; {output[-300:].strip()}")
    return result


def trial_command(task: dict[str, Any], template: Path, out: Path) -> list[str]:
    """The command a trial runs: its study with every one of its points armed, in order, under the guard."""
    study = [sys.executable, "-m", "studymon", "run", "--headless", "--template", str(template)]
    for point in task["points"]:
        study += ["--kill", f"{task['id']}:{point}"]
    study.append(f"{task['id']}={out}")
    # The guard runs the study's command and, should this worker die, stops it and removes its containers.
    names = stem(container_prefix(task["template"]), task["id"])
    backend = str(task["template"].get("backend", "process"))
    return [sys.executable, "-m", "studymon.engine.explore.trial", backend, names, "--", *study]


def _work_folder(task: dict[str, Any]) -> Path:
    """Where the trial runs: ``root/<n>`` when the client gave a ``root`` (a local cluster: the console follows the
    trial there as it runs), else a temporary folder of its own."""
    root = task.get("root")
    if root:
        work = Path(str(root)) / str(task["n"])
        with contextlib.suppress(OSError):  # not on this machine after all, or taken: a folder of its own
            work.mkdir()
            return work
    return Path(tempfile.mkdtemp(prefix=f"studymon-trial-{task['n']}-"))


def _stop_with_parent() -> None:
    """In the trial's command, before exec: SIGTERM when its worker dies, which stops the trial's study (as a
    headless run stops on SIGTERM: the evidence kept) rather than leaving it running with nobody to collect it."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


def missed_points(out: Path) -> list[str]:
    """The points the trial's ``arms.jsonl`` says were missed, each with why (a missed trial is no verdict)."""
    arms = EvidenceFolder(out).arms
    if not arms.is_file():
        return []
    missed = []
    for line in arms.read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("event") == "missed":
            missed.append(f"{obj.get('point')}: {obj.get('detail')}")
    return missed


def _pack(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname=".")
    return buf.getvalue()


def unpack(data: bytes, dest: Path) -> None:
    """Write a shipped trial folder as ``dest``, whole: unpacked beside it first, then renamed into place; a
    ``dest`` that exists is never touched (:class:`FileExistsError`)."""
    if dest.exists():
        raise FileExistsError(f"{dest} exists; a trial's folder is never overwritten")
    tmp = dest.with_name(f".{dest.name}.unpacking")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(tmp, filter="data")  # nothing outside it, no links out, no devices
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    os.rename(tmp, dest)


def _worker_address() -> str | None:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return None


def _claim(name: str, worker: str) -> str | None:
    """Mark the trial started by ``worker``; the worker that started it before, if one did."""
    from distributed import Event, Variable

    # An Event answers at once whether it is set; the Variable beside it says who set it.  (A Variable alone
    # would be asked with a timeout, which the scheduler logs as an error each time.)  distributed is untyped.
    started = Event(name)  # type: ignore[no-untyped-call]
    who = Variable(name)  # type: ignore[no-untyped-call]
    if started.is_set():  # type: ignore[no-untyped-call]
        return str(who.get(timeout=30))  # type: ignore[no-untyped-call]
    who.set(worker)  # type: ignore[no-untyped-call]
    started.set()  # type: ignore[no-untyped-call]
    return None


# --- the guard: python -m studymon.engine.explore.trial BACKEND STEM -- COMMAND... ---------------------------------


def guard(backend: str, stem: str, command: list[str]) -> int:
    """Run a trial's command; when this process is told to stop (SIGTERM: its worker died, see
    :func:`_stop_with_parent`), stop the command the way its own SIGTERM does (the study stopped, its evidence
    kept), wait for it, then remove the trial study's containers (``STEM*``), running or not: a lost trial leaves
    no container or process behind.  The command's exit status."""
    import signal

    child = subprocess.Popen(command)
    stopped = False

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopped
        stopped = True
        child.send_signal(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    code = child.wait()
    if stopped:
        _remove_containers(backend, stem)
    return code


def _remove_containers(backend: str, stem: str) -> None:
    from studymon.engine.runtimes import NoSuchContainer, open_runtime

    runtime = open_runtime(backend)
    try:
        for inspect in runtime.list(stem):
            name = str(inspect.get("Name", "")).lstrip("/")
            if name.startswith(stem):
                with contextlib.suppress(NoSuchContainer):
                    runtime.remove(name, force=True)
    finally:
        runtime.close()


if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit("usage: python -m studymon.engine.explore.trial BACKEND STEM -- COMMAND...")
    sys.exit(guard(sys.argv[1], sys.argv[2], sys.argv[4:]))
