"""The check run after every test (``tests/sound_folders.py``): it finds the study folders a test left, asks the
oracle of those the product passes, and can fail.  The oracle's verdict is replaced here only to show that a
disagreement is said; the folders and the product's judge are real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import sound_folders
from tests.corpus import build, derive, write
from tests.oracle.verdict import OracleVerdict


def _folder(root: Path) -> Path:
    """The corpus's sound study, unkilled (its kill folders are the corpus's own shape, not a console's whole)."""
    out = write(derive(build(kills=())), root / "study")
    (out / "report.json").write_text(json.dumps({"checks": []}))
    (out / "study.log").write_text("")  # as a console run writes it
    return out


def test_a_sound_folder_passes_both_judges(tmp_path: Path) -> None:
    out = _folder(tmp_path / "a")
    assert sound_folders.study_folders(tmp_path) == [out]
    assert sound_folders.oracle_disagrees(tmp_path) == []


def test_a_sound_folder_the_oracle_fails_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _folder(tmp_path / "a")
    failed = OracleVerdict(1, {("study", "contractKept"): False}, {("study", "contractKept"): "rule 3, line 9"})
    monkeypatch.setattr(sound_folders, "judge_study", lambda folder: failed)
    said = sound_folders.oracle_disagrees(tmp_path)
    assert len(said) == 1 and said[0].startswith(f"{out}: the product passes it, the oracle exits 1"), said
    assert "rule 3, line 9" in said[0]


def test_a_folder_the_product_fails_is_left_to_its_own_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _folder(tmp_path / "a")
    (out / "outcome.json").unlink()  # exitedCleanly fails: a folder broken on purpose after its run
    asked: list[Path] = []
    monkeypatch.setattr(sound_folders, "judge_study", lambda folder: asked.append(folder))
    assert sound_folders.oracle_disagrees(tmp_path) == [] and asked == []


def test_a_campaign_s_trial_folders_are_judged_by_both_too(tmp_path: Path) -> None:
    out = _folder(tmp_path / "campaign" / "trials" / "1")
    assert sound_folders.study_folders(tmp_path) == [out]
    assert sound_folders.oracle_disagrees(tmp_path) == []


def test_a_hand_built_folder_without_the_console_s_log_is_not_looked_at(tmp_path: Path) -> None:
    out = _folder(tmp_path / "a")
    (out / "study.log").unlink()
    assert sound_folders.study_folders(tmp_path) == []


def test_folders_are_looked_for_so_deep_and_so_many(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["d"] * (sound_folders.DEPTH + 1))
    _folder(deep)
    assert sound_folders.study_folders(tmp_path) == []
    for n in range(sound_folders.MOST + 2):
        folder = tmp_path / "many" / str(n)
        folder.mkdir(parents=True)
        (folder / "report.json").write_text("{}")
        (folder / "launches.jsonl").write_text("")
        (folder / "study.log").write_text("")
    assert len(sound_folders.study_folders(tmp_path / "many")) == sound_folders.MOST


def test_a_folder_too_large_to_judge_in_the_test_s_own_process_is_left_to_its_own_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _folder(tmp_path / "a")
    asked: list[Path] = []
    monkeypatch.setattr(sound_folders, "judge_study", lambda folder: asked.append(folder))
    (out / "study" / "big.bin").write_bytes(b"\0" * (sound_folders.LARGEST + 1))
    assert sound_folders.too_large(out)
    assert sound_folders.oracle_disagrees(tmp_path) == [] and asked == []
    (out / "study" / "big.bin").unlink()
    assert not sound_folders.too_large(out)
