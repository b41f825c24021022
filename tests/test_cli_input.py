"""Bad input: a one-line message naming the problem, exit status 2, and the disk untouched."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from studymon.engine.contract.spec import MAX_TEMPLATE_BYTES, BadInput, check_id, check_program, load_template
from studymon.engine.launch.prepare import MAX_STUDIES, create_fresh, is_evidence_folder, plan_fresh, plan_resume

ROOT = Path(__file__).resolve().parent.parent


def studymon(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "studymon.tui.cli", *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=60
    )


def tree_digest(path: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        h.update(str(p.relative_to(path)).encode())
        if p.is_file():
            h.update(p.read_bytes())
        h.update(str(p.stat().st_mode).encode())
    return h.hexdigest()


def assert_refused(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]
    assert "Traceback" not in proc.stderr


def test_existing_out_is_refused_and_left_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "alpha"
    (out / "study").mkdir(parents=True)
    (out / "study" / "ledger.jsonl").write_text('{"seq": 1}\n')
    (out / "notes.txt").write_text("keep me")
    before = tree_digest(tmp_path)
    proc = studymon("run", "--headless", f"alpha={out}", "beta=beta", cwd=tmp_path)
    assert_refused(proc, str(out), "exists")
    assert tree_digest(tmp_path) == before
    assert not (tmp_path / "beta").exists()


@pytest.mark.parametrize("bad", ["../x", "a;b", "Upper", "x" * 70, "", "_lead", "a b"])
def test_bad_ids_are_refused(tmp_path: Path, bad: str) -> None:
    proc = studymon("run", "--headless", f"{bad}=out", "ok=ok", cwd=tmp_path)
    assert_refused(proc, "study id")
    assert list(tmp_path.iterdir()) == []


def test_missing_template(tmp_path: Path) -> None:
    proc = studymon("run", "--headless", "--template", "nope.json", "a=a", cwd=tmp_path)
    assert_refused(proc, "nope.json", "does not exist")
    assert list(tmp_path.iterdir()) == []


def test_invalid_template(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text("{ not json")
    before = tree_digest(tmp_path)
    proc = studymon("run", "--headless", "--template", "t.json", "a=a", cwd=tmp_path)
    assert_refused(proc, "t.json", "not valid JSON")
    assert tree_digest(tmp_path) == before


def test_template_without_command(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text('{"budget": 10}')
    before = tree_digest(tmp_path)
    proc = studymon("run", "--headless", "--template", "t.json", "a=a", cwd=tmp_path)
    assert_refused(proc, '"command"')
    assert tree_digest(tmp_path) == before


def test_docker_backend_without_engine(tmp_path: Path) -> None:
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-such.sock"}
    proc = studymon("demo", "--headless", "--backend", "docker", "--out", "d", cwd=tmp_path, env=env)
    assert_refused(proc, "no Docker engine answers")
    assert list(tmp_path.iterdir()) == []


def test_arming_an_unknown_study(tmp_path: Path) -> None:
    proc = studymon("run", "--headless", "--kill-after-first-diagnosis-start", "zeta", "a=a", cwd=tmp_path)
    assert_refused(proc, "zeta")
    assert list(tmp_path.iterdir()) == []


def test_resume_of_a_folder_without_study(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    before = tree_digest(tmp_path)
    proc = studymon("run", "--resume", "--headless", "a=a", cwd=tmp_path)
    assert_refused(proc, "no research.json")
    assert tree_digest(tmp_path) == before


def test_report_of_a_folder_that_is_not_evidence(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    proc = studymon("report", "a", cwd=tmp_path)
    assert_refused(proc, "not a studymon evidence folder")


def test_usage_errors_and_version(tmp_path: Path) -> None:
    assert_refused(studymon("run", cwd=tmp_path), "ID=OUT")
    assert_refused(studymon("frobnicate", cwd=tmp_path), "invalid choice")
    version = studymon("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("studymon ")
    for cmd in ("run", "report", "demo", "image"):
        helped = studymon(cmd, "--help", cwd=tmp_path)
        assert helped.returncode == 0 and "usage: studymon " + cmd in helped.stdout


# --- limits and resolution at their boundaries (in process: no command needed) ------------------

TINY = ROOT / "tests" / "doubles" / "tiny_study.py"


def _template(tmp: Path, size: int | None = None) -> Path:
    text = json.dumps({"command": [sys.executable, str(TINY)], "backend": "process"})
    if size is not None:
        text += " " * (size - len(text.encode()))
    path = tmp / "t.json"
    path.write_text(text)
    return path


def test_the_id_is_matched_in_full() -> None:
    assert check_id("a" * 63) == "a" * 63
    for bad in ("a\n", "a" * 64, "a\nb", "a "):
        with pytest.raises(BadInput, match="bad study id"):
            check_id(bad)


def test_limits_hold_at_their_boundaries(tmp_path: Path) -> None:
    pairs = [f"s{i}={tmp_path / f's{i}'}" for i in range(MAX_STUDIES + 1)]
    specs, _, _ = plan_fresh(pairs[:MAX_STUDIES], _template(tmp_path), [], "process")
    assert len(specs) == MAX_STUDIES
    with pytest.raises(BadInput, match=f"{MAX_STUDIES + 1} studies in one command; at most {MAX_STUDIES}"):
        plan_fresh(pairs, _template(tmp_path), [], "process")
    assert load_template(_template(tmp_path, MAX_TEMPLATE_BYTES))["backend"] == "process"
    with pytest.raises(BadInput, match="at most 1,048,576"):
        load_template(_template(tmp_path, MAX_TEMPLATE_BYTES + 1))
    assert list(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_a_template_folder_is_not_evidence_but_an_out_is(tmp_path: Path) -> None:
    # A study's source folder holds its template research.json: an OUT may go there.
    project = tmp_path / "project"
    project.mkdir()
    (project / "research.json").write_text(_template(tmp_path).read_text())
    assert not is_evidence_folder(project)
    plan_fresh([f"a={project / 'runs-a'}"], _template(tmp_path), [], "process")
    (project / "launches.jsonl").write_text("")
    assert is_evidence_folder(project)
    with pytest.raises(BadInput, match="inside"):
        plan_fresh([f"a={project / 'runs-a'}"], _template(tmp_path), [], "process")


def test_create_fresh_is_all_or_nothing(tmp_path: Path) -> None:
    (tmp_path / "p1").mkdir()
    (tmp_path / "p2").mkdir()
    specs, template, backend = plan_fresh([f"a={tmp_path / 'p1' / 'a'}", f"b={tmp_path / 'p2' / 'b'}"],
                                          _template(tmp_path), [], "process")
    (tmp_path / "p2").rmdir()  # gone between the check and the making
    with pytest.raises(BadInput, match="nothing was started"):
        create_fresh(specs, template, backend)
    assert not (tmp_path / "p1" / "a").exists()


def test_the_controller_program_is_resolved_as_exec_will(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "bin").mkdir(parents=True)
    script = out / "bin" / "study.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert check_program(["true"], out, "t") == shutil.which("true")
    assert check_program(["python3", "-m", "studymon.refstudy"], out, "t") == sys.executable
    # On resume OUT exists, and a relative program is taken from it, as the controller's working folder.
    assert check_program(["bin/study.sh"], out, "t") == str(script)
    with pytest.raises(BadInput, match="relative path"):
        check_program(["bin/study.sh"], tmp_path / "new", "t")
    script.chmod(0o644)
    with pytest.raises(BadInput, match="not executable"):
        check_program(["bin/study.sh"], out, "t")


def test_resume_refuses_a_controller_that_is_gone_and_leaves_the_folder(tmp_path: Path) -> None:
    out = tmp_path / "a"
    (out / "study").mkdir(parents=True)
    (out / "research.json").write_text(json.dumps({"command": [str(tmp_path / "gone.sh")], "study": "a",
                                                    "backend": "process"}))
    before = tree_digest(tmp_path)
    with pytest.raises(BadInput, match="gone.sh.*does not exist"):
        plan_resume([f"a={out}"], [])
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("value, words", [
    ("a:after:runstarted", ["'runstarted' is not a kind of record", "after:KIND[/PURPOSE][#N]"]),
    ("a:container:stop", ["'stop' is not a container action", "container:ACTION[/PURPOSE][#N]"]),
    ("a:after:charge#0", ["#0 is not a count from 1", "N counts from 1"]),
    ("a", ["write ID:POINT", "after:KIND[/PURPOSE][#N]"]),
    ("zeta:after:halt", ["--kill zeta:POINT: no study with that id"]),
])
def test_a_kill_point_that_does_not_parse_is_refused_with_the_grammar(
    tmp_path: Path, value: str, words: list[str]
) -> None:
    proc = studymon("run", "--headless", "--kill", value, "a=a", cwd=tmp_path)
    assert_refused(proc, *words)
    assert list(tmp_path.iterdir()) == []


def test_a_power_point_without_the_study_s_file_system_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """Only the study's file system knows what was made durable: without it (no FUSE, forced here) a power: point
    is refused in one line naming why, exit 2, and nothing is written."""
    before = tree_digest(tmp_path)
    proc = studymon("run", "--headless", "--kill", "alpha:power:after:charge@torn", "alpha=alpha", cwd=tmp_path,
                    env={"STUDYMON_NO_FUSE": "1"})
    assert_refused(proc, "alpha:power:after:charge@torn", "a power loss needs the study's file system",
                   "STUDYMON_NO_FUSE is set")
    assert tree_digest(tmp_path) == before and not (tmp_path / "alpha").exists()
