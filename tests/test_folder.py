"""The evidence folder is spelled once (engine/contract/folder.py): its names, its kill folders, and no name written elsewhere."""

from __future__ import annotations

import os
from pathlib import Path

from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from tests.test_engine_import import code_strings

ROOT = Path(__file__).resolve().parent.parent


def _names() -> set[str]:
    """Every file name the folder module spells, for OUT and for kills/<n>/."""
    out = {v for k, v in vars(EvidenceFolder).items() if k.isupper() and isinstance(v, str)}
    kill = {v for k, v in vars(KillFolder).items() if k.isupper() and isinstance(v, str)}
    return (out | kill) - {EvidenceFolder.STUDY, EvidenceFolder.KILLS}


def test_every_file_of_the_folder_has_one_name() -> None:
    names = _names()
    assert len(names) == 24
    assert EvidenceFolder.LEDGER == "study/ledger.jsonl" and KillFolder.WINDOW == "container-events-window.json"
    assert set(KillFolder.AT_KILL_FILES) < set(KillFolder.FILES) and set(KillFolder.SNAPSHOTS) < set(KillFolder.FILES)
    assert set(EvidenceFolder.APPENDED) <= names and set(EvidenceFolder.MARKS) - {"study"} <= names


def test_no_evidence_file_is_named_anywhere_else_in_the_product() -> None:
    """A string literal naming an evidence file, outside engine/contract/folder.py, is a path built by hand."""
    names = _names()
    found = []
    for folder in ("engine", "tui", "widgets"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "folder.py" and path.parent.name == "contract":
                continue
            for line, text in code_strings(path.read_text()):
                if text in names:
                    found.append(f"{path.relative_to(ROOT)}:{line}: {text!r}")
    assert found == []


def test_the_scan_sees_a_name_written_by_hand(tmp_path: Path) -> None:
    """The scan above is not blind: the same walk finds a literal in a module."""
    source = 'PATH = out / "launches.jsonl"\n'
    docstring = '"""launches.jsonl, in a docstring, is a word, not a path."""\n'
    hits = [text for _, text in code_strings(docstring + source) if text in _names()]
    assert hits == ["launches.jsonl"]


def test_kill_folders_paths_and_relative_names(tmp_path: Path) -> None:
    k = EvidenceFolder(tmp_path).kill(3)
    assert k.path == tmp_path / "kills" / "3"
    assert k.kill_json == tmp_path / "kills" / "3" / "kill.json"
    assert k.rel(KillFolder.LIVE) == "kills/3/container-events-live.jsonl"
    assert EvidenceFolder(tmp_path).ledger == tmp_path / "study" / "ledger.jsonl"


def test_next_kill_and_open_windows(tmp_path: Path) -> None:
    folder = EvidenceFolder(tmp_path)
    assert folder.next_kill().number == 1
    assert folder.open_windows() == []
    for n in (1, 2, 5):
        (tmp_path / "kills" / str(n)).mkdir(parents=True)
        (tmp_path / "kills" / str(n) / "kill.json").write_text("{}")
    (tmp_path / "kills" / "2" / "container-events-window.json").write_text("{}")
    (tmp_path / "kills" / "notes").mkdir()
    assert folder.next_kill().number == 6
    assert [k.number for k in folder.open_windows()] == [1, 5]
    assert [k.number for k in folder.kills()] == [1, 2, 5]


def test_kill_folders_that_lead_out_of_out_are_not_kills(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "kills" / "1").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", out / "kills" / "2")
    (out / "kills" / "01").mkdir()
    (out / "kills" / "3").write_text("a file")
    assert EvidenceFolder(out).kill_numbers() == [1]
    os.symlink(tmp_path / "elsewhere", tmp_path / "out2")
    assert EvidenceFolder(tmp_path / "nowhere").kill_numbers() == []
