"""A power loss made on the study's files (engine/fs/power.py): each crash state of §9.3, on real files.

What the study wrote and fsynced is given as the study's file system reports it; the files are real, and so
is every byte kept in ``lost/``: nothing the study wrote is deleted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studymon.engine.fs.power import last_seq, make, plan, records_kept


def _line(seq: int) -> bytes:
    return json.dumps({"seq": seq, "at": "2026-12-07T00:00:00.000Z", "kind": "decision", "content": {}}).encode() + b"\n"


LEDGER = b"".join(_line(n) for n in range(1, 7))  # six records, 1..6
DURABLE = len(_line(1)) * 3  # fsynced after seq 3


@pytest.fixture
def study(tmp_path: Path) -> Path:
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / "ledger.jsonl").write_bytes(LEDGER)
    (folder / "state.json").write_bytes(b'{"round": 2}')
    (folder / "scratch.txt").write_bytes(b"never made durable in its folder")
    return folder


def _writes() -> dict[str, object]:
    return {"files": {"/ledger.jsonl": {"size": len(LEDGER), "synced": DURABLE, "base": 0},
                      "/state.json": {"size": 12, "synced": None, "base": 5},
                      "/scratch.txt": {"size": 32, "synced": None, "base": 0}},
            "unsyncedNames": ["/scratch.txt"]}


def _made(study: Path, state: str) -> tuple[dict[str, object], Path]:
    kill = study.parent / "kills" / "1"
    kill.mkdir(parents=True)
    loss = plan(_writes(), state, lambda path: (study / path).read_bytes())
    return make(study, kill, loss, f"power:after:decision@{state}"), kill


@pytest.mark.parametrize(("state", "kept", "seq"), [("synced", DURABLE, 3),
                                                   ("synced+2", DURABLE + 2 * len(_line(1)), 5),
                                                   ("synced+9", len(LEDGER), 6)])
def test_synced_keeps_what_was_fsynced_and_synced_k_the_next_k_records(study: Path, state: str, kept: int,
                                                                        seq: int) -> None:
    power, kill = _made(study, state)
    assert (study / "ledger.jsonl").read_bytes() == LEDGER[:kept]
    assert power["ledgerSeqAfter"] == seq and power["state"] == state
    ledger = power["files"]["ledger.jsonl"]
    assert (ledger["sizeBefore"], ledger["durable"], ledger["sizeAfter"], ledger["zeroTail"]) == (
        len(LEDGER), DURABLE, kept, 0)
    if kept < len(LEDGER):
        assert (kill / "lost" / "ledger.jsonl").read_bytes() == LEDGER[kept:], "every byte cut is kept"
        assert ledger["lost"] == "lost/ledger.jsonl"
    else:
        assert ledger["lost"] is None and not (kill / "lost" / "ledger.jsonl").exists()
    # A file never fsynced keeps what it held before this controller wrote to it; a name never durable is moved.
    assert (study / "state.json").read_bytes() == b'{"rou' and (kill / "lost" / "state.json").read_bytes() == b'nd": 2}'
    assert not (study / "scratch.txt").exists() and power["removed"] == ["scratch.txt"]
    assert (kill / "lost" / "scratch.txt").read_bytes() == b"never made durable in its folder"


def test_torn_keeps_part_of_the_first_record_written_since(study: Path) -> None:
    power, kill = _made(study, "torn")
    after = (study / "ledger.jsonl").read_bytes()
    assert after.startswith(LEDGER[:DURABLE]) and DURABLE < len(after) < DURABLE + len(_line(4))
    assert not after.endswith(b"\n") and power["ledgerSeqAfter"] == 3, "a torn line is not a record"
    assert after + (kill / "lost" / "ledger.jsonl").read_bytes() == LEDGER


def test_zeros_keeps_the_size_with_zeros_where_the_unsynced_data_was(study: Path) -> None:
    power, kill = _made(study, "zeros")
    after = (study / "ledger.jsonl").read_bytes()
    assert len(after) == len(LEDGER) and after == LEDGER[:DURABLE] + b"\0" * (len(LEDGER) - DURABLE)
    assert power["files"]["ledger.jsonl"]["zeroTail"] == len(LEDGER) - DURABLE and power["ledgerSeqAfter"] == 3
    assert (kill / "lost" / "ledger.jsonl").read_bytes() == LEDGER[DURABLE:]
    assert (study / "state.json").read_bytes() == b'{"rou' + b"\0" * 7


def test_a_ledger_whose_name_was_never_durable_is_lost_whole(study: Path) -> None:
    """The study created its ledger and never fsynced the folder (§9.2): the name goes, with every record."""
    kill = study.parent / "kills" / "1"
    kill.mkdir(parents=True)
    writes = {"files": {"/ledger.jsonl": {"size": len(LEDGER), "synced": len(LEDGER), "base": 0}},
              "unsyncedNames": ["/ledger.jsonl"]}
    power = make(study, kill, plan(writes, "synced", lambda p: (study / p).read_bytes()), "power:after:decision")
    assert not (study / "ledger.jsonl").exists() and (kill / "lost" / "ledger.jsonl").read_bytes() == LEDGER
    assert power["removed"] == ["ledger.jsonl"] and power["ledgerSeqAfter"] == 0 and power["files"] == {}


def test_lost_bytes_never_write_over_evidence(study: Path) -> None:
    kill = study.parent / "kills" / "1"
    (kill / "lost").mkdir(parents=True)
    (kill / "lost" / "ledger.jsonl").write_bytes(b"kept before")
    loss = plan(_writes(), "synced", lambda path: (study / path).read_bytes())
    with pytest.raises(FileExistsError):
        make(study, kill, loss, "power:after:decision")
    assert (kill / "lost" / "ledger.jsonl").read_bytes() == b"kept before"
    assert (study / "ledger.jsonl").read_bytes() == LEDGER, "nothing cut before its bytes were kept"


def test_the_last_seq_is_of_the_last_whole_record() -> None:
    assert last_seq(LEDGER) == 6 and last_seq(LEDGER[:-5]) == 5 and last_seq(b"") == 0
    assert last_seq(LEDGER + b"\0\0\0") == 6 and last_seq(b"not json\n") == 0
    assert records_kept("synced+12") == 12 and records_kept("torn") == 0 and records_kept("synced") == 0
