"""The process runtime's state folder: the user's alone, never entered through a
link, and an event journal whose size and read cost are bounded.

Real folders, real links, real shims; the tests run as root, as CI does, so
that "a root run appends to another file" is the very thing tried.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.runtimes.journal import INDEX, segment_name
from studymon.engine.runtimes.process import ProcessRuntime
from studymon.engine.runtimes.statedir import UnsafeStateFolder
from tests.studies import ROOT, template
from tests.waits import until

NOBODY = 65534
VICTIM_TEXT = "precious\n"


def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_text(VICTIM_TEXT)
    return path


def fake_event(i: int, ns: int, pad: int = 200) -> dict[str, Any]:
    """A Docker-shaped event; ``pad`` sizes it like a real one (~300 bytes)."""
    return {
        "status": "start", "id": f"{i:064x}", "Type": "container", "Action": "start",
        "Actor": {"ID": f"{i:064x}", "Attributes": {"name": f"t-{i}", "pad": "x" * pad}},
        "time": ns // 1_000_000_000, "timeNano": ns,
    }


def bytes_read() -> int:
    """Bytes this process has read through read(2) and kin so far (``rchar``)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


# --- the root ------------------------------------------------------------------
def test_a_new_root_is_made_0700_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        rt = ProcessRuntime(tmp_path / "a" / "root")
    finally:
        os.umask(old)
    for folder in (rt.root, rt.containers, rt.root / "events"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_a_root_of_another_user_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "theirs"
    root.mkdir(mode=0o700)
    os.chown(root, NOBODY, NOBODY)
    with pytest.raises(UnsafeStateFolder) as refused:
        ProcessRuntime(root)
    message = str(refused.value)
    assert str(root) in message and f"uid {NOBODY}" in message and "STUDYMON_PROCESS_RUNTIME" in message
    assert "\n" not in message
    assert os.listdir(root) == [], "nothing is made in a refused folder"


def test_a_root_taken_over_after_opening_is_refused_at_the_next_use(tmp_path: Path) -> None:
    rt = ProcessRuntime(tmp_path / "root")
    os.chown(rt.root, NOBODY, NOBODY)
    with pytest.raises(UnsafeStateFolder, match="belongs to uid 65534"):
        rt.run("x-1", ["true"])
    with pytest.raises(UnsafeStateFolder):
        rt.history(0, time.time())


@pytest.mark.parametrize("mode, who", [(0o770, "its group"), (0o707, "others"), (0o1777, "others")])
def test_a_root_that_others_can_write_is_refused(tmp_path: Path, mode: int, who: str) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    os.chmod(root, mode)
    with pytest.raises(UnsafeStateFolder) as refused:
        ProcessRuntime(root)
    message = str(refused.value)
    assert str(root) in message and who in message and f"chmod 700 {root}" in message
    assert os.listdir(root) == []


def test_the_cli_refuses_an_unsafe_root_in_one_line(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    os.chmod(root, 0o777)
    env = dict(os.environ, STUDYMON_PROCESS_RUNTIME=str(root), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "studymon", "runtime", "ps"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and f"chmod 700 {root}" in proc.stderr


def test_studymon_refuses_an_unsafe_root_in_one_line(tmp_path: Path) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    os.chmod(root, 0o777)
    t = template(tmp_path, backend="process", budget=10)
    env = dict(os.environ, STUDYMON_PROCESS_RUNTIME=str(root), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", str(t), "s=s"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert str(root) in proc.stderr


# --- links ----------------------------------------------------------------------
def test_a_link_planted_as_the_journal_is_not_followed(tmp_path: Path) -> None:
    rt = ProcessRuntime(tmp_path / "root")
    target = victim(tmp_path)
    planted = rt.root / "events" / segment_name(1)
    planted.symlink_to(target)
    with pytest.raises(UnsafeStateFolder) as refused:
        rt.run("x-1", ["true"])
    assert target.read_text() == VICTIM_TEXT
    assert str(planted) in str(refused.value) and "symbolic link" in str(refused.value)
    assert rt.inspect("x-1") is None and not (rt.containers / "x-1").exists(), "the name is given back"
    planted.unlink()
    assert rt.run("x-1", ["true"])["State"]["Status"] in ("running", "exited"), "works again once removed"
    assert rt.wait("x-1", 10) == 0


def test_a_link_planted_as_the_earlier_single_journal_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    target = victim(tmp_path)
    (root / "events.jsonl").symlink_to(target)
    with pytest.raises(UnsafeStateFolder, match="symbolic link"):
        ProcessRuntime(root)
    assert target.read_text() == VICTIM_TEXT and (root / "events.jsonl").is_symlink()


def test_a_link_in_place_of_a_folder_on_the_way_is_not_followed(tmp_path: Path) -> None:
    rt = ProcessRuntime(tmp_path / "root")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (rt.root / "events").rename(tmp_path / "events-away")
    (rt.root / "events").symlink_to(elsewhere)
    with pytest.raises(UnsafeStateFolder, match="events is a symbolic link"):
        rt.run("x-1", ["true"])
    assert os.listdir(elsewhere) == [], "nothing was written through the link"


def test_a_linked_container_state_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    rt = ProcessRuntime(tmp_path / "root")
    rt.run("x-1", ["sh", "-c", "echo out"])
    assert rt.wait("x-1", 10) == 0
    target = victim(tmp_path)
    state = rt.containers / "x-1" / "state.json"
    state.unlink()
    state.symlink_to(target)
    with pytest.raises(UnsafeStateFolder, match="state.json is a symbolic link"):
        rt.inspect("x-1")
    logs = rt.containers / "x-1" / "stdout.log"
    logs.unlink()
    logs.symlink_to(target)
    with pytest.raises(UnsafeStateFolder):
        rt.logs("x-1")
    assert target.read_text() == VICTIM_TEXT


def test_a_linked_container_folder_is_not_listed_nor_entered(tmp_path: Path) -> None:
    rt = ProcessRuntime(tmp_path / "root")
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "state.json").write_text(json.dumps({"Id": "x", "Name": "/x-2", "State": {"Status": "exited"}}))
    (rt.containers / "x-2").symlink_to(decoy)
    assert rt.list("x-") == []
    with pytest.raises(UnsafeStateFolder, match="x-2 is a symbolic link"):
        rt.inspect("x-2")


# --- the journal: bounded, read by window ----------------------------------------
SEGMENT = 32 << 10


def fill(rt: ProcessRuntime, count: int, start_ns: int, step_ns: int = 1_000_000) -> list[dict[str, Any]]:
    written = [fake_event(i, start_ns + i * step_ns) for i in range(count)]
    for event in written:
        rt._append_event(event)
    return written


def test_the_journal_is_rotated_and_bounded(tmp_path: Path) -> None:
    rt = ProcessRuntime(tmp_path / "root", segment_bytes=SEGMENT, keep_segments=4)
    fill(rt, 2000, 1_000_000_000_000_000_000)  # ~600 KB: ~19 segments' worth
    folder = rt.root / "events"
    segments = sorted(p.name for p in folder.glob("*.jsonl"))
    assert len(segments) == 5, segments  # the 4 kept and the active one
    assert sum((folder / s).stat().st_size for s in segments) < 5 * (SEGMENT + 1024)
    index = json.loads((folder / INDEX).read_text())
    assert sorted(int(n) for n in index["segments"]) == [int(s[:12]) for s in segments[:-1]]
    assert index["droppedThrough"] is not None


def test_a_window_read_costs_the_window_not_the_history(tmp_path: Path) -> None:
    rt = ProcessRuntime(tmp_path / "root", segment_bytes=SEGMENT, keep_segments=1000)
    base = 1_000_000_000_000_000_000
    written = fill(rt, 3000, base)  # ~900 KB in ~28 segments
    kept = sum(p.stat().st_size for p in (rt.root / "events").glob("*.jsonl"))
    since, until = base + 1500 * 1_000_000, base + 1510 * 1_000_000  # 11 events in the middle
    before = bytes_read()
    found = rt.history(since / 1e9, until / 1e9)
    cost = bytes_read() - before
    assert found is not None
    assert [e["id"] for e in found] == [e["id"] for e in written[1500:1511]]
    # The segment(s) holding the window, the active one and the index: not the ~900 KB kept.
    assert cost < 4 * SEGMENT < kept / 5, (cost, kept)
    window = rt.journal.window(since, until)
    assert len(window.segments_read) <= 3, window.segments_read


def test_coverage_is_proven_only_after_what_was_dropped(tmp_path: Path) -> None:
    rt = ProcessRuntime(tmp_path / "root", segment_bytes=SEGMENT, keep_segments=3)
    base = 1_000_000_000_000_000_000
    written = fill(rt, 2000, base)
    dropped = json.loads((rt.root / "events" / INDEX).read_text())["droppedThrough"]
    assert rt.history(base / 1e9, (base + 10**9) / 1e9) is None, "the window's start was dropped: a gap"
    assert rt.history(dropped / 1e9, (dropped + 10**6) / 1e9) is None, "its very last dropped event counts"
    after = dropped + 10_000  # past the microsecond the runtime allows for float seconds
    found = rt.history(after / 1e9, (base + 3 * 10**9) / 1e9)
    assert found is not None
    assert [e["timeNano"] for e in found] == [e["timeNano"] for e in written if e["timeNano"] >= after]
    # events() still shows what is kept, without the proof.
    assert rt.events(base / 1e9, (base + 3 * 10**9) / 1e9)[-1]["timeNano"] == written[-1]["timeNano"]


def test_the_single_journal_of_earlier_versions_is_taken_over(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    old = [fake_event(i, 1_000_000_000_000_000_000 + i) for i in range(5)]
    (root / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in old))
    rt = ProcessRuntime(root)
    assert not (root / "events.jsonl").exists()
    assert rt.history(0, 2e9) == old


# --- the live tail -------------------------------------------------------------------
WRITER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from studymon.engine.runtimes.process import ProcessRuntime
from tests.test_process_state import fake_event
rt = ProcessRuntime(sys.argv[2], segment_bytes=int(sys.argv[3]), keep_segments=1000)
who, count = int(sys.argv[4]), int(sys.argv[5])
for i in range(count):
    rt._append_event(fake_event(who * 100_000 + i, time.time_ns()))
"""


def test_the_stream_follows_rotations_without_losing_a_line(tmp_path: Path) -> None:
    root = tmp_path / "root"
    rt = ProcessRuntime(root, segment_bytes=16 << 10, keep_segments=1000)
    seen: list[dict[str, Any]] = []
    gaps: list[tuple[float, float]] = []
    live = threading.Event()
    stop = threading.Event()
    tail = threading.Thread(target=rt.stream, args=(seen.append, stop),
                            kwargs={"on_live": lambda t: live.set(), "on_gap": lambda a, b: gaps.append((a, b))})
    tail.start()
    try:
        assert live.wait(10)
        writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(ROOT), str(root), str(16 << 10), str(w), "400"])
                   for w in (1, 2)]
        for proc in writers:
            assert proc.wait(120) == 0
        until(lambda: len(seen) >= 800, 10, "the 800 lines to be delivered", step=0.02,
              seen=lambda: f"{len(seen)} delivered")
    finally:
        stop.set()
        tail.join(10)
    ids = [int(e["id"], 16) for e in seen]
    assert len(ids) == 800 and len(set(ids)) == 800, f"{len(ids)} delivered, {len(set(ids))} distinct"
    for who in (1, 2):  # each writer's lines in the order it wrote them
        mine = [i for i in ids if i // 100_000 == who]
        assert mine == sorted(mine)
    assert gaps == []
    assert len(list((root / "events").glob("*.jsonl"))) > 10, "the writers rotated the journal many times"


def _wchan(thread: threading.Thread) -> str:
    """Where in the kernel ``thread`` sleeps (/proc/self/task/<tid>/wchan)."""
    try:
        return Path(f"/proc/self/task/{thread.native_id}/wchan").read_text()
    except OSError as exc:
        return f"unreadable: {exc}"


def _in_select(thread: threading.Thread) -> bool:
    """``thread`` sleeps in a select or poll (not on a lock, as a thread waiting for the GIL does)."""
    return _wchan(thread).startswith(("poll_schedule_timeout", "do_select", "do_sys_poll"))


def test_the_stream_returns_at_once_when_stopped(tmp_path: Path) -> None:
    rt = ProcessRuntime(tmp_path / "root")
    stop = threading.Event()
    live = threading.Event()
    before = {t.ident for t in threading.enumerate()}
    tail = threading.Thread(target=rt.stream, args=(lambda e: None, stop), kwargs={"on_live": lambda t: live.set()})
    tail.start()
    assert live.wait(10)
    until(lambda: _in_select(tail), 10, "the stream to wait in its select",
          seen=lambda: _wchan(tail))  # so that only the stop can wake it
    began = time.monotonic()
    stop.set()
    tail.join(5)
    took = time.monotonic() - began
    assert not tail.is_alive() and took < 0.2, f"the stream took {took:.3f} s to see its stop"
    assert {t.ident for t in threading.enumerate()} == before, "its helper thread was joined too"


def test_a_container_whose_creator_died_before_its_shim_never_starts_and_can_be_removed(tmp_path: Path) -> None:
    """A study killed between create and start leaves a created container: it is known as never starting."""
    import json as _json
    import subprocess as _sp

    from studymon.engine.runtimes.process import ProcessRuntime

    root = tmp_path / "rt"
    runtime = ProcessRuntime(root)
    gone = _sp.Popen(["true"])
    gone.wait()
    folder = root / "containers" / "orphan-d1"
    folder.mkdir(parents=True, mode=0o700)
    from studymon.engine.runtimes.process import _new_state  # the state a create writes

    state = _new_state("orphan-d1", ["sleep", "1"], "img", {}, {}, 1)
    (folder / "state.json").write_text(_json.dumps(state))
    (folder / "creator.json").write_text(_json.dumps({"Pid": gone.pid, "StartTime": 1.0}))
    seen = runtime.inspect("orphan-d1")
    assert seen is not None and seen["State"]["Status"] == "created"
    assert seen["State"]["Error"] == "its creator ended before starting it"
    started = time.monotonic()
    runtime.remove("orphan-d1", force=True)
    assert time.monotonic() - started < 2.0, "not waited for a start that never comes"
    assert runtime.inspect("orphan-d1") is None


# A creator that SIGKILLs itself at one step of ``run``: the step is named by the
# write (or the journal append) it dies at, as a study killed at that instant would.
_DIE_AT = r"""
import os, signal, sys
from studymon.engine.runtimes import process
from studymon.engine.runtimes.statedir import StateDir

root, name, step = sys.argv[1:4]
write_json = StateDir.write_json
append = process.ProcessRuntime._append_event

def dying_write(self, dir_fd, filename, obj, indent=1):
    if filename == step:
        os.kill(os.getpid(), signal.SIGKILL)
    return write_json(self, dir_fd, filename, obj, indent)

def dying_append(self, event):
    if step == "create-event" and event.get("Action") == "create":
        os.kill(os.getpid(), signal.SIGKILL)
    return append(self, event)

StateDir.write_json = dying_write
process.ProcessRuntime._append_event = dying_append
process.ProcessRuntime(root).run(name, ["sleep", "30"], image="img")
"""


@pytest.mark.parametrize("step", ["creator.json", "state.json", "create-event"])
def test_a_creator_killed_at_any_step_never_blocks_the_name(tmp_path: Path, step: str) -> None:
    """Killed mid-create, a creator leaves nothing under the name, or a created container that never starts.

    Either way its study, resumed, can clear what is there and run the container
    again (before, a folder holding only creator.json blocked the name for good).
    """
    root = tmp_path / "rt"
    runtime = ProcessRuntime(root)
    dying = subprocess.run([sys.executable, "-c", _DIE_AT, str(root), "s-d3", step], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
    assert dying.returncode == -9, dying.stderr
    left = runtime.inspect("s-d3")
    if step == "create-event":  # the name was claimed: a created container whose creator is gone
        assert left is not None and left["State"]["Status"] == "created"
        assert left["State"]["Error"] == "its creator ended before starting it"
        assert [c["Name"].lstrip("/") for c in runtime.list("s-")] == ["s-d3"]
        runtime.remove("s-d3", force=True)
    else:
        assert left is None and runtime.list("s-") == []
        assert not (root / "containers" / "s-d3").exists()
    started = runtime.run("s-d3", ["sleep", "30"], image="img")
    try:
        assert started["State"]["Status"] == "running"
        hidden = [p.name for p in (root / "containers").iterdir() if p.name.startswith(".")]
        assert hidden == [], f"what the killed creator left was swept: {hidden}"
    finally:
        runtime.remove("s-d3", force=True)


def test_a_half_made_folder_of_an_earlier_version_is_cleared_once_its_creator_is_gone(tmp_path: Path) -> None:
    """A folder holding only creator.json, of a creator that ended, no longer blocks the name."""
    root = tmp_path / "rt"
    runtime = ProcessRuntime(root)
    gone = subprocess.Popen(["true"])
    gone.wait()
    folder = root / "containers" / "s-d3"
    folder.mkdir(mode=0o700)
    (folder / "creator.json").write_text(json.dumps({"Pid": gone.pid, "StartTime": 1.0}))
    started = runtime.run("s-d3", ["sleep", "30"], image="img")
    try:
        assert started["State"]["Status"] == "running"
    finally:
        runtime.remove("s-d3", force=True)


def test_a_name_held_by_a_live_creator_or_a_container_is_still_a_conflict(tmp_path: Path) -> None:
    """Clearing half-made folders never takes a name from somebody at work."""
    from studymon.engine.runtimes.base import ContainerConflict

    root = tmp_path / "rt"
    runtime = ProcessRuntime(root)
    folder = root / "containers" / "s-live"
    folder.mkdir(mode=0o700)
    me = psutil_process()
    (folder / "creator.json").write_text(json.dumps({"Pid": me.pid, "StartTime": me.create_time()}))
    with pytest.raises(ContainerConflict):
        runtime.run("s-live", ["sleep", "30"], image="img")
    assert (folder / "creator.json").exists()
    (root / "containers" / "s-fresh").mkdir(mode=0o700)
    (root / "containers" / "s-fresh" / "note").write_text("being made")  # no creator yet, made just now
    with pytest.raises(ContainerConflict):
        runtime.run("s-fresh", ["sleep", "30"], image="img")
    runtime.run("s-d1", ["sleep", "30"], image="img")
    try:
        with pytest.raises(ContainerConflict):
            runtime.run("s-d1", ["sleep", "30"], image="img")
        assert runtime.inspect("s-d1")["State"]["Status"] == "running"
    finally:
        runtime.remove("s-d1", force=True)


def psutil_process() -> Any:
    import psutil

    return psutil.Process()
