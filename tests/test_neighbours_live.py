"""Neighbour studies (contract v3 §6.1): stems that extend one another, run at once on one runtime.

One console refuses the second (tests/test_study_lock.py).  Two users on one
engine each have their own lock folder, though, and there nothing stops
them: then `exp`'s stem ``inforsi-exp-`` is a prefix of every container
name of `exp-x`.  Labels decide whose a container is: the reference study
labels its runs ``studymon.study=<ID>``, so `exp`, killed while `exp-x`
starts its runs, is judged sound, though its recording holds `exp-x`'s
containers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from studymon.engine.judge import judge
from tests.studies import FAST, ROOT, jsonl
from tests.waits import until


def _start(args: list[str], cwd: Path, locks: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", STUDYMON_LOCK_DIR=str(locks))
    return subprocess.Popen(
        [sys.executable, "-m", "studymon.tui.cli", *args], cwd=cwd, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )


def test_a_study_beside_a_neighbour_whose_stem_extends_its_own_is_judged_sound(tmp_path: Path) -> None:
    base = {"command": ["python3", "-m", "studymon.refstudy"], "backend": "process", **FAST}
    # exp's diagnosis run lasts a while, and its kill window with it; exp-x's runs are short.
    slow, quick = tmp_path / "slow.json", tmp_path / "quick.json"
    slow.write_text(json.dumps({**base, "diagnosisSeconds": 6}))
    quick.write_text(json.dumps({**base, "diagnosisSeconds": 0.3, "ablationSeconds": 0.3, "budget": 80}))
    locks = [tmp_path / "locks-a", tmp_path / "locks-b"]
    for folder in locks:
        folder.mkdir(mode=0o700)
    # exp first: a fresh study is refused where containers under its stem already run.
    study = _start(["run", "--headless", "--template", str(slow), "--kill-after-first-diagnosis-start", "exp",
                    "exp=exp"], tmp_path, locks[0])
    until(lambda: (tmp_path / "exp" / "kills" / "1" / "kill.json").is_file(), 120, "exp is killed at d1's start")
    neighbour = _start(["run", "--headless", "--template", str(quick), "exp-x=exp-x"], tmp_path, locks[1])
    out_b, _ = neighbour.communicate(timeout=300)
    out_a, _ = study.communicate(timeout=300)
    assert study.returncode == 0, out_a
    assert neighbour.returncode == 0, out_b
    # exp's kill window was open while exp-x made its containers, under exp's stem, labelled as exp-x's.
    live = jsonl(tmp_path / "exp" / "kills" / "1" / "container-events-live.jsonl")
    window = json.loads((tmp_path / "exp" / "kills" / "1" / "container-events-window.json").read_text())
    theirs = [
        e for e in live
        if "Actor" in e and e["Actor"]["Attributes"].get("name", "").startswith("inforsi-exp-x-")
        and window["sinceEpoch"] <= e["timeNano"] / 1e9 <= window["untilEpoch"]
    ]
    assert any(e["Action"] in ("create", "start") for e in theirs), "exp-x made no container in exp's window"
    assert {e["Actor"]["Attributes"].get("studymon.study") for e in theirs} == {"exp-x"}
    for out in ("exp", "exp-x"):
        bad = [(c.scope, c.name, c.detail) for c in judge(tmp_path / out).checks if c.ok is not True]
        assert bad == [], (out, bad)


def test_without_labels_a_neighbours_container_under_the_stem_is_the_studys(tmp_path: Path) -> None:
    """What the labels buy: the same recording with exp-x's labels taken away fails exp (its stem holds them)."""
    from tests.corpus import add_event, container_id, derive, event, in_window, sound, write

    files = derive(sound())
    for action in ("create", "start"):
        e = event(action, "inforsi-s-x-d1", in_window(files, 1, 0.3))
        e["Actor"]["ID"] = e["id"] = container_id("inforsi-s-x-d1")
        add_event(files, 1, e)
    unlabelled = {(c.scope, c.name) for c in judge(write(files, tmp_path / "a")).checks if c.ok is not True}
    assert unlabelled == {("kill 1 · d1", "sameContainerNoRerun")}
    for lines in (files["kills/1/container-events-live.jsonl"], files["kills/1/container-events.jsonl"]):
        for e in lines:
            if e.get("Actor", {}).get("Attributes", {}).get("name") == "inforsi-s-x-d1":
                e["Actor"]["Attributes"]["studymon.study"] = "s-x"
    assert all(c.ok is True for c in judge(write(files, tmp_path / "b")).checks)
