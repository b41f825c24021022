"""The study's file system (engine/fs): a real FUSE mount over a real folder, served by its own process.

What is written through the mount lands in the folder beneath it, and the
mount knows what was written and what was made durable; a server killed
leaves no mount and the files whole; a machine without FUSE is refused in one
line with exit 2, nothing touched.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from studymon.engine.fs.fuse import NO_FUSE_ENV, missing
from studymon.engine.fs.mount import StudyMount, mounted
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
                                                       "fsyncs": 1, "writesSinceSync": 0, "writes": []}},
                             "unsyncedNames": []}
