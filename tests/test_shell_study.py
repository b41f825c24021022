"""A study in POSIX sh, the README's own, killed at its run's start and resumed, on both backends.

The study and its template are read out of README.md ("Writing your own
study"), so the text a reader copies is the text that is tested: it drives
its runs through ``$STUDYMON_RUNTIME`` alone (``studymon runtime`` on the
process backend, the docker command on the Docker backend), and every check
of the judge must hold.  Also: what a study's environment says, and that it
reaches the console's own process runtime from the study's working folder.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.runtimes.cli import prefix
from studymon.engine.runtimes.process import ProcessRuntime
from studymon.refstudy.image import IMAGE
from tests.studies import ROOT, studymon, verdicts
from tests.test_runtime_cli import docker_cli  # noqa: F401 - the fixture, for the Docker backend

pytestmark = pytest.mark.slow
TINY = ROOT / "tests" / "doubles" / "tiny_study.py"


def readme_study() -> tuple[str, dict[str, Any], list[str]]:
    """The README's shell study, its template and the command that runs it, as printed there."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Writing your own study\n", 1)[1].split("\n## ", 1)[0]
    script = re.search(r"```sh\n(.*?)```", section, re.S)
    template = re.search(r"```json\n(.*?)```", section, re.S)
    command = re.search(r"^    (studymon run .*)$", section, re.M)
    assert script and template and command, "README.md's 'Writing your own study' lost its study, template or command"
    return script[1], json.loads(template[1]), shlex.split(command[1])


@pytest.mark.parametrize("backend", ["process", "docker"])
def test_the_readme_s_shell_study_survives_its_kill(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    if backend == "docker":
        request.getfixturevalue("docker_cli")  # the engine, its image and the docker command
    script, template, command = readme_study()
    assert IMAGE in script, "the README's study names the image studymon image builds"
    study = tmp_path / "study.sh"
    study.write_text(script, encoding="utf-8")
    template["command"] = [str(study) if word == "/path/to/study.sh" else word for word in template["command"]]
    assert str(study) in template["command"], template
    template["backend"] = backend
    (tmp_path / "research.json").write_text(json.dumps(template))
    # The README's command, with an id of this test's own (a Docker engine is shared).
    sid = f"sh{uuid.uuid4().hex[:8]}"
    assert command[:2] == ["studymon", "run"] and "--kill-after-first-diagnosis-start" in command, command
    args = [re.sub(r"\bs1\b", sid, word) for word in command[1:]]
    name = f"inforsi-{sid}-d1"
    try:
        proc = studymon(*args, cwd=tmp_path)
        out = tmp_path / sid
        log = out / "study.log"
        assert proc.returncode == 0, proc.stdout + proc.stderr + (log.read_text() if log.exists() else "")
        assert json.loads((out / "research.json").read_text())["backend"] == backend
        v = verdicts(out)
        assert v and all(ok is True for ok in v.values()), v
        for check in ("killTriggered", "killDelivered", "sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished"):
            assert check in {c for _, c in v}, (check, v)
        # Started once, found again by name on resume, removed at the end: one create, one start, one die.
        kill = out / "kills" / "1"
        events = [json.loads(line) for line in (kill / "container-events-live.jsonl").read_text().splitlines()]
        actions = [e["Action"] for e in events if e.get("Actor", {}).get("Attributes", {}).get("name") == name]
        assert actions.count("create") <= 1 and actions.count("start") <= 1 and actions.count("die") == 1, actions
        again = studymon("report", str(out), cwd=tmp_path)
        assert again.returncode == 0 and "✗" not in again.stdout and "?" not in again.stdout, again.stdout
    finally:
        if backend == "docker":
            subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False, timeout=60)


def test_a_study_is_told_its_runtime_and_reaches_the_console_s_state_folder(tmp_path: Path) -> None:
    """From its own working folder (OUT), through the console's state folder given relative to the console's."""
    root = tmp_path / "procrt-rel"
    ProcessRuntime(root).run("smtest-seen", ["true"])
    look = (
        '{ printf "%s\\n" "$STUDYMON_RUNTIME" "$STUDYMON_PROCESS_RUNTIME"; '
        "$STUDYMON_RUNTIME ps -a --format '{{.Names}}'; } > seen.txt 2>&1; "
        f'exec {shlex.quote(sys.executable)} {shlex.quote(str(TINY))} "$@"'
    )
    (tmp_path / "t.json").write_text(json.dumps({"command": ["sh", "-c", look, "sh"], "backend": "process"}))
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", STUDYMON_PROCESS_RUNTIME="procrt-rel")
    proc = subprocess.run([sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", "t.json",
                           "s=s"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = (tmp_path / "s" / "seen.txt").read_text().splitlines()
    assert seen == [prefix("process"), str(root), "smtest-seen"], seen
