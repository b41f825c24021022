"""Kill windows judged from the console's own live recording, on whole studies.

Real ``studymon`` processes, real controllers, real containers (Docker and the
process runtime) and the evidence folders they leave:

* a study that starts its in-flight run again on resume is caught, also when
  the Docker engine is flooded with events inside the kill window, so that
  reading the window back from the engine afterwards has lost the rerun;
* every run in flight at the kill is a target and is judged;
* an arming made before a temporary failure (exit 75) still fires in the
  resumed study.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.studies import KILL_FILES, ROOT, broken_template, report, studymon, template, unique_sid, verdicts

pytestmark = pytest.mark.slow

PARALLEL = ROOT / "tests" / "doubles" / "parallel_study.py"
EARLY_OUTAGE = ROOT / "tests" / "doubles" / "early_outage_study.py"
LIVE_FILE = "container-events-live.jsonl"
# The kill checks of the contract (PROTOCOL.md §4), each judged for every target;
# the judge gives killDelivered once per kill (one signal reaches every target).
TARGET_CHECKS = ("killDelivered", "sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished")
# The Docker engine keeps only its last 256 events (of every type) for reading back.
DOCKER_EVENT_MEMORY = 256
FLOOD_IN_WINDOW = 300
ACTIONS = ("create", "start", "rename", "kill", "stop", "die", "destroy")


# --- reading the evidence ------------------------------------------------------


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def event_name(event: dict[str, Any]) -> str:
    name = ((event.get("Actor") or {}).get("Attributes") or {}).get("name", "")
    return name.lstrip("/") if isinstance(name, str) else ""


def event_action(event: dict[str, Any]) -> str:
    return str(event.get("Action") or event.get("status") or "").split(":", 1)[0]


def event_id(event: dict[str, Any]) -> str:
    return str((event.get("Actor") or {}).get("ID") or event.get("id") or "")


def event_epoch(event: dict[str, Any]) -> float:
    return int(event["timeNano"]) / 1e9


def of_container(events: list[dict[str, Any]], name: str, *actions: str) -> list[dict[str, Any]]:
    return [e for e in events if "gap" not in e and event_name(e) == name and event_action(e) in actions]


def kill_folder(out: Path, n: int = 1) -> Path:
    return out / "kills" / str(n)


def scope(run: str, n: int = 1) -> str:
    return f"kill {n} · {run}"


def unique_prefix() -> str:
    """A container prefix no other test on the same engine uses."""
    return "kl" + uuid.uuid4().hex[:8]


def explain(proc: Any) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def run_armed(tmp_path: Path, t: Path, sid: str = "x") -> Any:
    return studymon(
        "run", "--headless", "--template", str(t), "--kill-after-first-diagnosis-start", sid, f"{sid}={sid}",
        cwd=tmp_path,
    )


# --- an engine flooded with events -------------------------------------------------


class VolumeFlood:
    """Creates and removes Docker volumes in a tight loop: two engine events a pair, no container's.

    Every call is timed (before, after), so the events that fall inside a
    window can be counted from our side: an event made by a call lies between
    the call's start and its return.
    """

    def __init__(self) -> None:
        import docker

        self.client = docker.from_env(timeout=60)
        self.prefix = f"studymon-flood-{uuid.uuid4().hex[:8]}-"
        self.calls: list[tuple[float, float]] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="volume-flood", daemon=True)

    def _loop(self) -> None:
        n = 0
        while not self._stop.is_set():
            name = f"{self.prefix}{n}"
            n += 1
            try:
                t0 = time.time()
                self.client.api.create_volume(name=name)
                t1 = time.time()
                self.client.api.remove_volume(name)
                t2 = time.time()
            except Exception as exc:  # noqa: BLE001 - reported by the test
                self.errors.append(exc)
                return
            self.calls.append((t0, t1))
            self.calls.append((t1, t2))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)
        for volume in self.client.volumes.list(filters={"name": self.prefix}):
            if volume.name.startswith(self.prefix):
                volume.remove(force=True)
        self.client.close()

    def inside(self, since: float, until: float) -> int:
        """How many of the flood's events certainly happened in ``[since, until]``."""
        return sum(1 for t0, t1 in self.calls if t0 >= since and t1 <= until)


# --- 1 and 2: a rerun is caught from the live recording -------------------------------


def assert_rerun_in_live_recording(out: Path) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """The kill's one target was replaced on resume, and the live recording shows it.

    Returns the replacement's ``create`` and ``start`` and the live lines.
    """
    folder = kill_folder(out)
    for name in (*KILL_FILES, LIVE_FILE):
        assert (folder / name).is_file(), f"kills/1/{name} missing"
    kill = json.loads((folder / "kill.json").read_text())
    assert [t["run"] for t in kill["targets"]] == ["d1"]
    container = kill["targets"][0]["container"]
    before = json.loads((folder / "container-before.json").read_text())[container]
    assert before["State"]["Running"]
    old_id = before["Id"]
    window = json.loads((folder / "container-events-window.json").read_text())
    since, until = window["sinceEpoch"], window["untilEpoch"]
    live = read_lines(folder / LIVE_FILE)
    assert all("seenAt" in line for line in live if "gap" not in line)
    assert not [line for line in live if "gap" in line], "the live recording has a gap"
    creates = of_container(live, container, "create")
    starts = of_container(live, container, "start")
    assert len(creates) == 1 and len(starts) == 1, [event_action(e) for e in of_container(live, container, *ACTIONS)]
    create, start = creates[0], starts[0]
    new_id = event_id(create)
    assert new_id and new_id != old_id and event_id(start) == new_id
    assert since <= event_epoch(create) <= event_epoch(start) <= until
    # The run's own container went first: killed and removed while the study was resumed.
    assert [e for e in of_container(live, container, "die", "destroy") if event_id(e) == old_id]
    return create, start, live



@pytest.mark.docker
def test_rerun_is_caught_under_an_event_flood_on_docker(tmp_path: Path, docker_engine: None) -> None:
    prefix = unique_prefix()
    t = broken_template(tmp_path, "rerun", backend="docker", diagnosisSeconds=6, budget=10, containerPrefix=prefix)
    flood = VolumeFlood()
    flood.start()  # armed from the launch on: the flood runs from then until the study has ended
    try:
        proc = run_armed(tmp_path, t, sid := unique_sid())
    finally:
        flood.stop()
    assert not flood.errors, flood.errors
    out = tmp_path / sid
    folder = kill_folder(out)
    assert folder.is_dir(), explain(proc)
    window = json.loads((folder / "container-events-window.json").read_text())
    since, until = window["sinceEpoch"], window["untilEpoch"]
    inside = flood.inside(since, until)
    assert inside > FLOOD_IN_WINDOW, f"only {inside} flood events in the {until - since:.1f} s window"

    create, start, _ = assert_rerun_in_live_recording(out)
    container = event_name(create)

    # Read back from the engine when the window closed, the rerun is gone: more
    # than the engine's 256 remembered events came after it.
    after_rerun = flood.inside(event_epoch(start), until)
    assert after_rerun > DOCKER_EVENT_MEMORY, f"only {after_rerun} flood events after the rerun's start"
    read_back = read_lines(folder / "container-events.jsonl")
    assert not of_container(read_back, container, "create", "start"), (
        "the engine kept the rerun's create/start although it saw "
        f"{after_rerun} events after them"
    )

    assert proc.returncode == 1, explain(proc)
    assert verdicts(out)[(scope("d1"), "sameContainerNoRerun")] is False, report(out)


def test_rerun_is_caught_on_the_process_runtime(tmp_path: Path) -> None:
    t = broken_template(tmp_path, "rerun", backend="process", diagnosisSeconds=4, budget=10,
                        containerPrefix=unique_prefix())
    proc = run_armed(tmp_path, t)
    out = tmp_path / "x"
    assert kill_folder(out).is_dir(), explain(proc)
    assert_rerun_in_live_recording(out)
    assert proc.returncode == 1, explain(proc)
    assert verdicts(out)[(scope("d1"), "sameContainerNoRerun")] is False, report(out)


# --- 3: every run in flight is a target -----------------------------------------------


@pytest.mark.parametrize("backend", ["process", pytest.param("docker", marks=pytest.mark.docker)])
def test_every_run_in_flight_is_a_target(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    if backend == "docker":
        request.getfixturevalue("docker_engine")
    # The baseline run a0 outlasts the diagnosis run d1 that starts after it.
    t = template(tmp_path, "parallel.json", command=[sys.executable, str(PARALLEL)], backend=backend,
                 budget=20, diagnosisSeconds=3, ablationSeconds=7, containerPrefix=unique_prefix())
    # A study id of its own: its window lasts seconds, and a container labelled studymon.study=<ID> is that study's
    # whatever its name (docs/contract.md, "Whose a container is"), so another test's study "x" on the same engine
    # at the same time would be taken for its own (the console never runs two studies of one id on one runtime).
    sid = unique_sid()
    proc = run_armed(tmp_path, t, sid)
    out = tmp_path / sid
    folder = kill_folder(out)
    assert (folder / "kill.json").is_file(), explain(proc)
    kill = json.loads((folder / "kill.json").read_text())
    targets = {t["run"]: t for t in kill["targets"]}
    assert set(targets) == {"a0", "d1"}, kill["targets"]
    assert targets["a0"]["startSeq"] < targets["d1"]["startSeq"] == kill["triggerSeq"]
    before = json.loads((folder / "container-before.json").read_text())
    for target in targets.values():
        assert before[target["container"]]["State"]["Running"], target

    # The window stayed open until both had their results.
    window = json.loads((folder / "container-events-window.json").read_text())
    assert set(window["targets"]) == {"a0", "d1"}
    assert all(isinstance(w["resultSeq"], int) for w in window["targets"].values()), window
    live = read_lines(folder / LIVE_FILE)
    assert not [line for line in live if "gap" in line], "the live recording has a gap"
    for target in targets.values():
        name, cid = target["container"], before[target["container"]]["Id"]
        assert not of_container(live, name, "create", "start", "rename", "kill", "stop"), name
        dies = of_container(live, name, "die")
        assert [event_id(e) for e in dies] == [cid], name

    assert proc.returncode == 0, explain(proc)
    v = verdicts(out)
    for run in targets:
        for check in TARGET_CHECKS:
            ok = v.get((scope(run), check), v.get(("kill 1", check)) if check == "killDelivered" else None)
            assert ok is True, (run, check, report(out))
    assert v[("study", "killTriggered")] is True
    assert all(ok is True for ok in v.values()), v


# --- 4: an arming survives --resume ---------------------------------------------------


def test_arming_survives_a_temporary_failure_and_resume(tmp_path: Path) -> None:
    t = template(tmp_path, "outage.json", command=[sys.executable, str(EARLY_OUTAGE)], backend="process",
                 budget=10, diagnosisSeconds=3, containerPrefix=unique_prefix())
    first = run_armed(tmp_path, t)
    assert first.returncode == 3, explain(first)
    out = tmp_path / "x"
    kinds = [r["kind"] for r in read_lines(out / "study" / "ledger.jsonl")]
    assert kinds[-1] == "serviceError" and "runStarted" not in kinds, kinds
    assert not (out / "kills").exists()
    assert [a["event"] for a in read_lines(out / "arms.jsonl")] == ["arm"]

    # Without the flag: the arming is read back from arms.jsonl.
    second = studymon("run", "--resume", "--headless", f"x={out}", cwd=tmp_path)
    folder = kill_folder(out)
    assert folder.is_dir(), explain(second)
    for name in (*KILL_FILES, LIVE_FILE):
        assert (folder / name).is_file(), f"kills/1/{name} missing"
    kill = json.loads((folder / "kill.json").read_text())
    assert kill["trigger"] == "auto" and [t["run"] for t in kill["targets"]] == ["d1"]
    assert [a["event"] for a in read_lines(out / "arms.jsonl")] == ["arm", "fired"]
    launches = [(l["event"], l.get("resume"), l.get("code"), l.get("signal")) for l in read_lines(out / "launches.jsonl")]
    assert launches == [
        ("start", False, None, None), ("end", None, 75, None),
        ("start", True, None, None), ("end", None, None, "SIGKILL"),
        ("start", True, None, None), ("end", None, 0, None),
    ], launches
    assert second.returncode == 0, explain(second)
    v = verdicts(out)
    assert v[("study", "killTriggered")] is True
    assert all(ok is True for ok in v.values()), v
