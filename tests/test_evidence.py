"""The evidence writer under failure: a write lands whole or leaves the folder as it was.

Disk-full cases run on a real 64 KiB tmpfs (needs root and a kernel that lets
this process mount; skipped with the reason otherwise); file-size-limit cases
run in a child with ``RLIMIT_FSIZE`` and need no privilege.  Short writes are
forced by capping ``os.write`` in unit tests of the loop only.
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studymon.engine.evidence import writer as evidence
from studymon.engine.evidence.writer import (
    EvidenceExists,
    EvidenceWriteError,
    append_jsonl,
    append_line_fd,
    read_json,
    read_jsonl,
    write_json,
    write_json_list,
    write_text,
)

ROOT = Path(__file__).resolve().parent.parent


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def line(seq: int, pad: int = 0) -> dict:
    return {"seq": seq, "kind": "runStarted", "at": "2026-11-30T05:32:38.123Z", "pad": "x" * pad}


# --- a tiny real file system that runs out of space ---------------------------
@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted for this test, unmounted afterwards."""
    where = tmp_path / "small"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; the RLIMIT_FSIZE tests cover the same paths")
    if shutil.which("mount") is None:
        pytest.skip("no mount command to make a small tmpfs")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[0]
        pytest.skip(f"cannot mount a small tmpfs here: {first}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(folder: Path, leave: int = 0) -> Path:
    """Take every free block of ``folder``'s file system, then give back ``leave`` bytes."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        while True:
            try:
                os.write(fd, b"\0" * 4096)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
        if leave:
            os.ftruncate(fd, os.fstat(fd).st_size - leave)
    finally:
        os.close(fd)
    return filler


def test_disk_full_during_write_json_leaves_nothing(small_fs: Path) -> None:
    fill(small_fs, leave=8192)
    before = sorted(p.name for p in small_fs.iterdir())
    free = os.statvfs(small_fs).f_bfree
    target = small_fs / "outcome.json"
    with pytest.raises(EvidenceWriteError) as caught:
        write_json(target, {"blob": "y" * 40_000})  # the first write is short, the next fails
    err = caught.value
    assert isinstance(err, OSError) and err.errno == errno.ENOSPC
    assert str(err) == f"cannot write {target}: No space left on device"
    assert err.filename == str(target)
    assert not target.exists() and leftovers(small_fs) == []
    assert sorted(p.name for p in small_fs.iterdir()) == before
    assert os.statvfs(small_fs).f_bfree == free  # the temporary's blocks were given back


def test_disk_full_when_the_temporary_cannot_even_start(small_fs: Path) -> None:
    fill(small_fs)
    target = small_fs / "report.svg"
    with pytest.raises(EvidenceWriteError) as caught:
        write_text(target, "<svg/>" * 2000)
    assert caught.value.errno == errno.ENOSPC and str(target) in str(caught.value)
    assert not target.exists() and leftovers(small_fs) == []


def test_append_failing_mid_line_leaves_the_file_byte_for_byte(small_fs: Path) -> None:
    timeline = small_fs / "timeline.jsonl"
    seq = 0
    while seq < 22:  # about 3.9 KB of whole lines in the file's first block
        seq += 1
        append_jsonl(timeline, line(seq, pad=100))
    before = timeline.read_bytes()
    assert 0 < 4096 - len(before) < 500  # the next line straddles the end of the file's only block
    filler = fill(small_fs)
    with pytest.raises(EvidenceWriteError) as caught:
        append_jsonl(timeline, line(seq + 1, pad=500))
    assert caught.value.errno == errno.ENOSPC
    assert str(caught.value) == f"cannot append to {timeline}: No space left on device"
    assert timeline.read_bytes() == before
    # Space comes back: the next lines start on a line boundary, none is glued to a torn one.
    filler.unlink()
    append_jsonl(timeline, line(seq + 1, pad=500))
    append_jsonl(timeline, line(seq + 2))
    raw = timeline.read_bytes()
    assert raw.startswith(before) and raw.endswith(b"\n")
    assert [json.loads(x)["seq"] for x in raw.splitlines()] == list(range(1, seq + 3))
    assert [r["seq"] for r in read_jsonl(timeline)] == list(range(1, seq + 3))


def test_append_with_no_room_at_all_writes_nothing(small_fs: Path) -> None:
    timeline = small_fs / "arms.jsonl"
    append_jsonl(timeline, line(1))
    with open(timeline, "ab") as fh:  # end the file exactly on a block boundary
        fh.write(b" " * (4096 - timeline.stat().st_size - 1) + b"\n")
    before = timeline.read_bytes()
    fill(small_fs)
    with pytest.raises(EvidenceWriteError) as caught:
        append_jsonl(timeline, line(2))
    assert caught.value.errno == errno.ENOSPC and timeline.read_bytes() == before


# --- a file size limit in a child: the same paths without privilege ------------
CHILD = textwrap.dedent(
    """
    import json, os, resource, signal, sys
    from pathlib import Path
    from studymon.engine.evidence.writer import EvidenceWriteError, append_jsonl, write_json
    folder = Path(sys.argv[1])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death past the limit
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
    out = {}
    for name, call in (
        ("append", lambda: append_jsonl(folder / "timeline.jsonl", {"seq": 99, "pad": "z" * 600})),
        ("publish", lambda: write_json(folder / "outcome.json", {"blob": "y" * 5000})),
    ):
        try:
            call()
            out[name] = None
        except EvidenceWriteError as exc:
            out[name] = {"errno": exc.errno, "message": str(exc)}
    print(json.dumps(out))
    """
)


def test_file_size_limit_leaves_lines_whole_and_no_partial_file(tmp_path: Path) -> None:
    timeline = tmp_path / "timeline.jsonl"
    for seq in range(1, 6):
        append_jsonl(timeline, line(seq, pad=60))
    before = timeline.read_bytes()
    assert len(before) < 1000 < len(before) + 600  # the next line crosses the limit
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["append"] == {"errno": errno.EFBIG, "message": f"cannot append to {timeline}: File too large"}
    assert got["publish"] == {"errno": errno.EFBIG,
                              "message": f"cannot write {tmp_path / 'outcome.json'}: File too large"}
    assert timeline.read_bytes() == before
    assert not (tmp_path / "outcome.json").exists() and leftovers(tmp_path) == []
    append_jsonl(timeline, line(6, pad=600))  # without the limit the same line goes in whole
    assert [r["seq"] for r in read_jsonl(timeline)] == [1, 2, 3, 4, 5, 6]


# --- never replacing what is there -------------------------------------------
def test_an_existing_file_is_never_replaced(tmp_path: Path) -> None:
    target = tmp_path / "outcome.json"
    write_json(target, {"first": True})
    with pytest.raises(EvidenceExists):
        write_json(target, {"first": False})
    with pytest.raises(EvidenceExists):
        write_text(target, "other")
    assert read_json(target) == {"first": True} and leftovers(tmp_path) == []


def test_a_racing_writer_that_published_first_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "outcome.json"
    write_json(target, {"first": True})
    # The name appears between the existence check and the link: link itself refuses.
    monkeypatch.setattr(Path, "exists", lambda self: False)
    with pytest.raises(EvidenceExists):
        write_json(target, {"first": False})
    monkeypatch.undo()
    assert read_json(target) == {"first": True} and leftovers(tmp_path) == []


def test_publish_makes_the_folder_and_writes_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "kills" / "1" / "kill.json"
    assert write_json(target, {"n": 1, "name": "é"}) == target
    assert read_json(target) == {"n": 1, "name": "é"} and leftovers(target.parent) == []


def test_a_publish_that_cannot_make_its_folder_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "kills").write_text("not a folder")
    target = tmp_path / "kills" / "1" / "kill.json"
    with pytest.raises(EvidenceWriteError) as caught:
        write_json(target, {})
    assert caught.value.errno == errno.ENOTDIR and str(caught.value).startswith(f"cannot write {target}: ")


# --- short writes (a capped os.write: a fake, for the loop's logic only) -----
def capped_write(monkeypatch: pytest.MonkeyPatch, cap: int, fail_on: int | None = None,
                 between: Callable[[], None] | None = None) -> list[int]:
    """Make ``os.write`` write at most ``cap`` bytes per call; call ``fail_on`` raises ENOSPC."""
    real = os.write
    calls: list[int] = []

    def write(fd: int, data: bytes | memoryview) -> int:
        calls.append(len(data))
        if fail_on is not None and len(calls) == fail_on:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if between is not None and len(calls) > 1:
            between()
        return real(fd, bytes(data[:cap]))

    monkeypatch.setattr(evidence.os, "write", write)
    return calls


def test_short_writes_are_completed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = capped_write(monkeypatch, cap=7)
    append_jsonl(tmp_path / "machine.jsonl", line(1, pad=30))
    write_json(tmp_path / "accounts.json", {"runs": list(range(20))})
    monkeypatch.undo()
    assert len(calls) > 10
    assert read_jsonl(tmp_path / "machine.jsonl") == [line(1, pad=30)]
    assert read_json(tmp_path / "accounts.json") == {"runs": list(range(20))}


def test_a_short_write_then_a_failure_cuts_the_line_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "timeline.jsonl"
    append_jsonl(path, line(1))
    before = path.read_bytes()
    capped_write(monkeypatch, cap=10, fail_on=3)
    with pytest.raises(EvidenceWriteError) as caught:
        append_jsonl(path, line(2, pad=50))
    monkeypatch.undo()
    assert caught.value.errno == errno.ENOSPC and path.read_bytes() == before
    append_jsonl(path, line(3))
    assert [r["seq"] for r in read_jsonl(path)] == [1, 3]


def test_append_line_fd_on_a_kept_descriptor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "timeline.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        append_line_fd(fd, path, b'{"seq": 1}\n')
        capped_write(monkeypatch, cap=4, fail_on=2)
        with pytest.raises(EvidenceWriteError) as caught:
            append_line_fd(fd, path, b'{"seq": 2, "kind": "charge"}\n')
        monkeypatch.undo()
        assert str(caught.value) == f"cannot append to {path}: No space left on device"
        append_line_fd(fd, path, b'{"seq": 3}\n')
    finally:
        os.close(fd)
    assert path.read_bytes() == b'{"seq": 1}\n{"seq": 3}\n'


def test_a_torn_line_followed_by_another_writer_is_not_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cutting back must never destroy a line another writer appended meanwhile."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"a": 1}\n')

    def other_writer() -> None:
        with open(path, "ab") as fh:
            fh.write(b'{"other": true}\n')

    capped_write(monkeypatch, cap=5, fail_on=3, between=other_writer)
    with pytest.raises(EvidenceWriteError) as caught:
        append_jsonl(path, {"mine": "x" * 20})
    monkeypatch.undo()
    assert "another writer appended after it" in str(caught.value)
    assert b'{"other": true}\n' in path.read_bytes()


def test_the_error_keeps_errno_and_file_across_pickling() -> None:
    err = evidence._write_error("write", Path("OUT/outcome.json"), OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)))
    back = pickle.loads(pickle.dumps(err))
    assert isinstance(back, EvidenceWriteError) and back.errno == errno.EDQUOT
    assert back.filename == "OUT/outcome.json" and str(back) == str(err) == "cannot write OUT/outcome.json: Disk quota exceeded"


def test_the_check_table_shows_control_characters_and_markup_instead_of_sending_them() -> None:
    """A hostile run id reaches details and scopes: the terminal gets neither its escapes nor rich markup."""
    import io

    from rich.console import Console

    from studymon.engine.judge.table import check_table
    from studymon.engine.judge.verdict import Check

    hostile = "d1\x1b[2J\x1b]0;owned\x07[link=https://example.invalid]x[/link]"
    buf = io.StringIO()
    Console(file=buf, force_terminal=True, width=300).print(
        check_table([("s", [Check("chargedOnce", False, f"run {hostile} repeats it", f"kill 1 · {hostile}")])]))
    out = buf.getvalue()
    assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\x07" not in out
    assert "?[2J" in out and "[link=https://example.invalid]" in out  # shown as text
    assert "\x1b]8;" not in out, "no hyperlink was made from the id"


# --- a JSON array written an item at a time ---------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(items=st.lists(JSON_VALUES, max_size=12), batch=st.sampled_from([1, 2, 5, 1024]))
def test_an_array_written_item_by_item_is_the_bytes_write_json_gives(
    tmp_path_factory: pytest.TempPathFactory, items: list[object], batch: int
) -> None:
    folder = tmp_path_factory.mktemp("arr")
    write_json(folder / "whole.json", items)
    write_json_list(folder / "streamed.json", iter(items), batch=batch)
    assert (folder / "streamed.json").read_bytes() == (folder / "whole.json").read_bytes()
    assert leftovers(folder) == []


def test_an_array_whose_items_fail_part_way_leaves_nothing(tmp_path: Path) -> None:
    def items() -> Iterator[dict[str, int]]:
        for k in range(50_000):
            if k == 40_000:
                raise OSError(errno.EIO, "the ledger could not be read")
            yield {"seq": k}

    target = tmp_path / "ledger-at-kill.json"
    with pytest.raises(OSError, match="could not be read"):
        write_json_list(target, items(), batch=1000)  # several pieces were written before the failure
    assert not target.exists() and leftovers(tmp_path) == []


def test_an_array_is_never_written_over_evidence(tmp_path: Path) -> None:
    target = tmp_path / "ledger-at-kill.json"
    write_json(target, [{"seq": 1}])
    with pytest.raises(EvidenceExists):
        write_json_list(target, iter([{"seq": 2}]))
    assert read_json(target) == [{"seq": 1}] and leftovers(tmp_path) == []


def test_a_lone_surrogate_is_written_as_its_json_escape(tmp_path: Path) -> None:
    """A study's ledger may hold a lone surrogate (valid JSON): every evidence writer writes it, and it reads back."""
    import json

    from studymon.engine.evidence.writer import append_jsonl, write_json, write_json_list, write_text

    value = [{"note": "cut \ud83d", "é": "ü", "k\udc00": 1}]
    write_json_list(tmp_path / "a.json", value)
    write_json(tmp_path / "b.json", value)
    append_jsonl(tmp_path / "c.jsonl", value[0])
    write_text(tmp_path / "d.jsonl", json.dumps(value[0], ensure_ascii=False) + "\n")
    for name in ("a.json", "b.json"):
        raw = (tmp_path / name).read_bytes()
        raw.decode("utf-8")  # valid UTF-8
        assert json.loads(raw) == value and b"\\ud83d" in raw and "ü".encode() in raw
    for name in ("c.jsonl", "d.jsonl"):
        assert json.loads((tmp_path / name).read_bytes()) == value[0]
