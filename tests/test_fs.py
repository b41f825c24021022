"""The study's file system (engine/fs): a real FUSE mount over a real folder, served by its own process.

What is written through the mount lands in the folder beneath it, and the
mount knows what was written and what was made durable; a server killed
leaves no mount and the files whole; a machine without FUSE is refused in one
line with exit 2, nothing touched.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studymon.engine.fs import control
from studymon.engine.fs.fuse import NO_FUSE_ENV, missing
from studymon.engine.fs.mount import StudyMount, home_of, lazy_unmount, mounted, mounted_anywhere
from studymon.engine.fs.writes import WRITES_KEPT, WriteLog
from tests.waits import until


@pytest.fixture
def study(tmp_path: Path) -> Path:
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "before.txt").write_text("there before the mount\n")
    return folder


def _append(fd: int, seq: int) -> None:
    os.write(fd, b'{"seq": %d, "kind": "decision"}\n' % seq)


def test_this_machine_can_mount() -> None:
    assert missing() is None, f"the file system's tests need FUSE here: {missing()}"


def test_what_is_written_through_the_mount_lands_beneath_it_and_is_recorded(study: Path) -> None:
    with StudyMount.start(study) as mount:
        assert mounted(study)
        assert sorted(os.listdir(study)) == ["before.txt"], "the folder's files, seen through the mount"
        fd = os.open(study / "ledger.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            for seq in (1, 2, 3):
                _append(fd, seq)
                if seq < 3:
                    os.fsync(fd)
        finally:
            os.close(fd)
        line = len(b'{"seq": 1, "kind": "decision"}\n')
        said = mount.writes()
        ledger = said["files"]["/ledger.jsonl"]
        assert ledger["size"] == 3 * line and ledger["synced"] == 2 * line and ledger["fsyncs"] == 2
        assert ledger["writesSinceSync"] == 1 and ledger["writes"] == [[2 * line, line]]
        assert said["unsyncedNames"] == ["/ledger.jsonl"], "made, and its folder not fsynced since"
        folder = os.open(study, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
        assert mount.writes()["unsyncedNames"] == []
    assert not mounted(study)
    assert (study / "ledger.jsonl").read_bytes().count(b"\n") == 3
    assert (study / "before.txt").read_text() == "there before the mount\n"


def test_a_file_written_whole_and_renamed_over_another_is_recorded_under_its_new_name(study: Path) -> None:
    with StudyMount.start(study) as mount:
        (study / "state.json.tmp").write_text('{"round": 2}')
        os.replace(study / "state.json.tmp", study / "state.json")
        files = mount.writes()["files"]
        assert "/state.json" in files and "/state.json.tmp" not in files
        assert files["/state.json"]["size"] == len('{"round": 2}')
    assert (study / "state.json").read_text() == '{"round": 2}'
    assert not list(study.glob(".fuse_hidden*")), "no hidden file left beneath"


def test_a_killed_server_leaves_no_mount_and_what_was_written_whole(study: Path) -> None:
    mount = StudyMount.start(study)
    fd = os.open(study / "ledger.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for seq in (1, 2):
            _append(fd, seq)
        os.kill(mount.process.pid, signal.SIGKILL)
        mount.process.wait(10)
        with pytest.raises(OSError) as failed:  # the writer is told, never left hanging
            _append(fd, 3)
        assert failed.value.errno in (errno.ENOTCONN, errno.ECONNABORTED, errno.EIO)
    finally:
        with contextlib.suppress(OSError):  # a close on a mount whose server is gone says so too
            os.close(fd)
    until(lambda: not mounted(study), 10, "libfuse's watchdog unmounts the folder of a killed server")
    assert (study / "ledger.jsonl").read_bytes().splitlines() == [
        b'{"seq": 1, "kind": "decision"}', b'{"seq": 2, "kind": "decision"}']
    mount.close()  # after the fact: nothing left to do, and nothing raised


def test_without_fuse_the_server_refuses_in_one_line_and_touches_nothing(study: Path, tmp_path: Path) -> None:
    before = sorted(os.listdir(study))
    done = subprocess.run(
        [sys.executable, "-m", "studymon", "fs", "serve", str(study), "--control", str(tmp_path / "c")],
        env={**os.environ, NO_FUSE_ENV: "1"}, capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 2
    assert done.stderr == f"studymon fs: cannot mount: {NO_FUSE_ENV} is set\n"
    assert not mounted(study) and sorted(os.listdir(study)) == before and not (tmp_path / "c").exists()


def test_the_writes_kept_since_a_fsync_are_bounded() -> None:
    log = WriteLog()
    log.made("/ledger.jsonl")
    for n in range(WRITES_KEPT + 10):
        log.wrote("/ledger.jsonl", n * 10, 10)
    f = log.as_json()["files"]["/ledger.jsonl"]
    assert f["writesSinceSync"] == WRITES_KEPT + 10 and len(f["writes"]) == WRITES_KEPT
    assert f["writes"][-1] == [(WRITES_KEPT + 9) * 10, 10] and f["size"] == (WRITES_KEPT + 10) * 10
    log.synced("/ledger.jsonl", f["size"])
    assert log.as_json()["files"]["/ledger.jsonl"]["writes"] == []
    log.renamed("/ledger.jsonl", "/old.jsonl")
    log.folder_synced("/")
    assert log.as_json() == {"files": {"/old.jsonl": {"size": (WRITES_KEPT + 10) * 10, "synced": (WRITES_KEPT + 10) * 10,
                                                       "base": 0, "fsyncs": 1, "writesSinceSync": 0, "writes": []}},
                             "unsyncedNames": []}


def test_a_file_first_written_through_the_mount_keeps_what_it_held_before_as_durable(study: Path) -> None:
    """A ledger the study wrote before this mount (a resumed study's): its size then is its durable base."""
    (study / "ledger.jsonl").write_bytes(b"x" * 100)
    with StudyMount.start(study) as mount:
        fd = os.open(study / "ledger.jsonl", os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"y" * 10)
        os.close(fd)
        ledger = mount.writes()["files"]["/ledger.jsonl"]
    assert (ledger["base"], ledger["size"], ledger["synced"], ledger["writes"]) == (100, 110, None, [[100, 10]])


# --- an after: point held in the ledger's writes (§9.1) --------------------------------------------------

WRITER = """
import json, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
for burst in json.loads(sys.argv[2]):
    data = b"".join(json.dumps(r).encode() + b"\\n" for r in burst)
    assert os.write(fd, data) == len(data), "a short write"
print("done", flush=True)
"""


def _record(seq: int, kind: str, **content: object) -> dict[str, object]:
    return {"seq": seq, "at": "2026-12-07T00:00:00.000Z", "kind": kind, "content": content}


def _seqs(ledger: Path) -> list[int]:
    return [json.loads(x)["seq"] for x in ledger.read_bytes().splitlines()]


BURSTS = [
    [_record(1, "studyOpen", study="s", budget=10)],
    [_record(2, "decision", name="a", round=0)],
    [_record(seq, "decision", name="b", round=seq) for seq in (3, 4, 5, 6)],  # one write, microseconds apart
    [_record(7, "halt", reason="done")],
]


def _writer(ledger: Path, bursts: list[list[dict[str, object]]]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(ledger), json.dumps(bursts)], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)


def test_a_point_inside_one_write_is_held_exactly_at_its_record(study: Path) -> None:
    """The third decision (seq 4) is in the middle of one write of four records: the file system lands the write up
    to seq 4's end and holds it; the study is killed there, and the ledger ends at seq 4, exactly."""
    ledger = study / "ledger.jsonl"
    with StudyMount.start(study) as mount:
        assert mount.ask("hold", point="after:decision#3", fromSeq=0) == {"armed": True}
        writer = _writer(ledger, BURSTS)
        hit = mount.ask("held", wait=20, timeout=30)
        assert hit["held"] and hit["seq"] == 4 and hit["kind"] == "decision" and hit["pid"] == writer.pid, hit
        assert _seqs(ledger) == [1, 2, 3, 4], "landed to the point's record, nothing past it"
        os.killpg(writer.pid, signal.SIGKILL)  # pending until the reply: the writer takes no step past seq 4
        assert mount.ask("release", landRest=False) == {"released": True, "held": True, "seq": 4}
        assert writer.wait(20) == -signal.SIGKILL
        assert writer.stdout is not None and writer.stdout.read() == ""
        ledger_said = mount.writes()["files"]["/ledger.jsonl"]
        assert ledger_said["size"] == ledger.stat().st_size
    assert _seqs(ledger) == [1, 2, 3, 4]


def test_a_held_write_let_go_lands_whole_and_the_study_goes_on(study: Path) -> None:
    ledger = study / "ledger.jsonl"
    with StudyMount.start(study) as mount:
        mount.ask("hold", point="after:decision#3", fromSeq=0)
        writer = _writer(ledger, BURSTS)
        assert mount.ask("held", wait=20, timeout=30)["seq"] == 4
        mount.ask("release", landRest=True)
        assert writer.wait(20) == 0 and writer.stdout is not None and writer.stdout.read() == "done\n"
        assert mount.ask("held", wait=0) == {"held": False}, "the point is spent"
    assert _seqs(ledger) == [1, 2, 3, 4, 5, 6, 7]


def test_a_point_of_a_purpose_knows_the_runs_planned_before_it_was_armed(study: Path) -> None:
    """d1 was planned (diagnosis) before the point was armed: its runStarted, written with its charge in one write,
    is the point's record; a1's (an ablation) is not."""
    ledger = study / "ledger.jsonl"
    planned = [_record(1, "runPlanned", run="a1", purpose="ablation", round=1),
               _record(2, "runPlanned", run="d1", purpose="diagnosis", round=1)]
    ledger.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in planned))
    with StudyMount.start(study) as mount:
        assert mount.ask("hold", point="after:runStarted/diagnosis", fromSeq=2) == {"armed": True}
        writer = _writer(ledger, [[_record(3, "charge", run="a1", amount=1), _record(4, "runStarted", run="a1")],
                                  [_record(5, "charge", run="d1", amount=1), _record(6, "runStarted", run="d1"),
                                   _record(7, "runResult", run="a1", exitCode=0, outputs={})]])
        hit = mount.ask("held", wait=20, timeout=30)
        assert (hit["seq"], hit["run"]) == (6, "d1"), hit
        os.killpg(writer.pid, signal.SIGKILL)
        mount.ask("release", landRest=False)
        writer.wait(20)
    assert _seqs(ledger) == [1, 2, 3, 4, 5, 6]


def test_a_hold_is_refused_with_the_reason() -> None:
    from studymon.engine.fs.passthrough import PassThrough
    from studymon.engine.fs.server import _hold

    ops = PassThrough(-1, WriteLog())
    assert "error" in _hold(ops, {"point": "nowhere", "fromSeq": 0})
    assert _hold(ops, {"point": "container:die", "fromSeq": 0}) == {
        "error": "hold takes an after: point and the seq it counts from"}
    assert _hold(ops, {"point": "after:charge", "fromSeq": -1})["error"].startswith("hold takes")
    assert ops.hold is None


def test_a_point_armed_late_counts_what_the_ledger_holds_already(study: Path) -> None:
    """Armed after two decisions were written (counted from seq 0), ``after:decision#3`` is the next decision: the
    ledger read at arming counts as the writes would have; the one partial line at its end is finished by the next
    write."""
    ledger = study / "ledger.jsonl"
    lines = [json.dumps(r).encode() + b"\n" for r in BURSTS[0] + BURSTS[1] + BURSTS[2][:2]]
    ledger.write_bytes(b"".join(lines[:3]) + lines[3][:10])  # seq 1, 2, 3 and the start of seq 4
    with StudyMount.start(study) as mount:
        assert mount.ask("hold", point="after:decision#3", fromSeq=0) == {"armed": True}
        rest = lines[3][10:] + lines[3].replace(b'"seq": 4', b'"seq": 5')
        writer = subprocess.Popen([sys.executable, "-c", "import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY | "
                                   "os.O_APPEND); os.write(fd, bytes.fromhex(sys.argv[2]))", str(ledger), rest.hex()],
                                  start_new_session=True)
        hit = mount.ask("held", wait=20, timeout=30)
        assert hit["held"] and hit["seq"] == 4, hit
        assert _seqs(ledger) == [1, 2, 3, 4]
        mount.ask("release", landRest=True)
        assert writer.wait(20) == 0
    assert _seqs(ledger) == [1, 2, 3, 4, 5]


def test_a_point_whose_record_is_written_already_is_not_armed_and_says_so(study: Path) -> None:
    ledger = study / "ledger.jsonl"
    ledger.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in BURSTS[0] + BURSTS[1] + BURSTS[2]))
    with StudyMount.start(study) as mount:
        assert mount.ask("hold", point="after:decision#2", fromSeq=0) == {"armed": False, "passed": 3}
        assert mount.ask("hold", point="after:decision#2", fromSeq=3) == {"armed": False, "passed": 5}
        assert mount.ask("hold", point="after:decision#2", fromSeq=5) == {"armed": True}, "counted after seq 5"
        assert mount.ask("disarm") == {"armed": False}


def test_a_point_armed_at_the_start_holds_the_first_record(study: Path) -> None:
    """``--hold`` arms the point before the server answers at all: a study's very first record can be the point."""
    ledger = study / "ledger.jsonl"
    with StudyMount.start(study, hold=("after:studyOpen", 0)) as mount:
        writer = _writer(ledger, BURSTS)
        hit = mount.ask("held", wait=20, timeout=30)
        assert (hit["seq"], hit["kind"]) == (1, "studyOpen"), hit
        os.killpg(writer.pid, signal.SIGKILL)
        mount.ask("release", landRest=False)
        writer.wait(20)
    assert _seqs(ledger) == [1]


def test_a_release_before_the_write_is_held_lets_the_write_go_at_once(tmp_path: Path) -> None:
    """The console may read the point's record (landed) and freeze the study before the file system says it holds
    the write: its release comes first, and the write, cut at the record, does not wait."""
    from studymon.engine.contract.killpoint import KillPoint
    from studymon.engine.fs.passthrough import LEDGER, PassThrough
    from studymon.engine.fs.points import LedgerHold

    root = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    ops = PassThrough(root, WriteLog())
    hold = LedgerHold(KillPoint.parse("after:decision"), 0)
    assert ops.arm(hold) is None and ops.hold is hold
    hold.release(land_rest=False)
    fh = ops.create(LEDGER, 0o644, os.O_WRONLY)
    data = b"".join(json.dumps(r).encode() + b"\n" for r in BURSTS[0] + BURSTS[1] + BURSTS[2])
    assert ops.write(LEDGER, data, 0, fh) == data.index(b"\n", data.index(b'"decision"')) + 1
    assert ops.hold is None and hold.hit is not None and hold.hit.seq == 2
    ops.release(LEDGER, fh)
    os.close(root)
    assert _seqs(tmp_path / "ledger.jsonl") == [1, 2]


def test_a_held_write_nobody_releases_lands_whole_after_the_limit(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from studymon.engine.contract.killpoint import KillPoint
    from studymon.engine.fs import passthrough
    from studymon.engine.fs.points import LedgerHold

    monkeypatch.setattr(passthrough, "HOLD_LIMIT", 0.2)
    root = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    ops = passthrough.PassThrough(root, WriteLog())
    hold = LedgerHold(KillPoint.parse("after:decision"), 0)
    ops.arm(hold)
    fh = ops.create(passthrough.LEDGER, 0o644, os.O_WRONLY)
    data = b"".join(json.dumps(r).encode() + b"\n" for r in BURSTS[0] + BURSTS[1] + BURSTS[2])
    assert ops.write(passthrough.LEDGER, data, 0, fh) == len(data)
    assert hold.timed_out and ops.hold is None
    ops.release(passthrough.LEDGER, fh)
    os.close(root)
    assert _seqs(tmp_path / "ledger.jsonl") == [1, 2, 3, 4, 5, 6]


def test_a_server_whose_keeper_and_study_are_gone_unmounts(study: Path) -> None:
    """The keeper (here a sleeper) says which controller it serves; with both gone the server unmounts and ends."""
    keeper = subprocess.Popen(["sleep", "60"])
    controller = subprocess.Popen(["sleep", "60"], start_new_session=True)
    home = home_of(study)
    home.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen([sys.executable, "-m", "studymon", "fs", "serve", str(study), "--control",
                                str(home / "control"), "--owner", str(keeper.pid)], start_new_session=True)
    try:
        until(lambda: mounted(study), 15, "the mount is up")
        assert control.ask(home / "control", "serving", pid=controller.pid) == {"serving": [controller.pid]}
        keeper.kill()
        keeper.wait()
        time.sleep(1.5)
        assert mounted(study), "the study still runs: its mount stays"
        controller.kill()
        controller.wait()
        assert process.wait(15) == 0
        assert not mounted(study) and mounted_anywhere(study) == []
    finally:
        for p in (keeper, controller, process):
            if p.poll() is None:
                p.kill()
                p.wait()
        lazy_unmount(study)
