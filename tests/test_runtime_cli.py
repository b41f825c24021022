"""``studymon runtime``: the process runtime through docker's command line, side by side with docker's own.

Each behaviour is asked of both, the same way, on a real engine (the docker
command line against the test's Docker engine) and on the process runtime
(the test's own state folder), and the answers are compared: what goes to
which stream, in which shape, with which exit status.  Without an engine, or
without the docker command, the comparisons skip (a failure with
STUDYMON_REQUIRE_ALL=1); what the process runtime must answer on its own is
checked without docker.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.evidence.records import time_epoch
from studymon.engine.runtimes.cli import prefix, study_environment
from studymon.engine.runtimes.process import ProcessRuntime
from studymon.refstudy.image import IMAGE
from tests.waits import until

STUDYMON = shlex.split(prefix("process"))  # what a study calls: this interpreter, -P -m studymon runtime
DOCKER = ["docker"]
ID = re.compile(r"[0-9a-f]{64}\n")
INSPECT_STATE = {"Running", "Status", "StartedAt", "FinishedAt", "ExitCode"}
# What the process runtime gives as docker does for a container's lifecycle (the engine adds network events).
LIFECYCLE = ("create", "start", "die", "destroy")


def call(cli: list[str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli, *args], capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture
def docker_cli(docker_engine: None) -> None:
    """The docker command line, beside the engine the other Docker tests use."""
    if shutil.which("docker") is None:
        pytest.skip("the docker command is not installed (the engine answers, but there is nothing to compare with)")


class Names:
    """Unique container names for one test, removed afterwards from both runtimes."""

    def __init__(self) -> None:
        self.stem = f"smtest-{uuid.uuid4().hex[:8]}-"
        self.made: list[str] = []

    def __call__(self, suffix: str) -> str:
        name = self.stem + suffix
        self.made.append(name)
        return name

    def cleanup(self, with_docker: bool) -> None:
        for cli in ([STUDYMON, DOCKER] if with_docker else [STUDYMON]):
            if self.made:
                call(cli, "rm", "-f", *self.made)


@pytest.fixture
def names(request: pytest.FixtureRequest) -> Iterator[Names]:
    made = Names()
    yield made
    made.cleanup(with_docker="docker_cli" in request.fixturenames)


def both() -> list[tuple[str, list[str]]]:
    return [("studymon", STUDYMON), ("docker", DOCKER)]


# --- what a study is given -------------------------------------------------------------------
def test_the_prefix_is_this_interpreter_and_reaches_studymon_runtime(tmp_path: Path) -> None:
    assert prefix("docker") == "docker"
    assert prefix("process").split(" ") == [sys.executable, "-P", "-m", "studymon", "runtime"]
    # Unquoted in sh, from a folder of its own (a study's OUT), as a study calls it.
    env = dict(os.environ, STUDYMON_RUNTIME=prefix("process"))
    proc = subprocess.run(["sh", "-c", "$STUDYMON_RUNTIME ps -a"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["CONTAINER", "ID", "IMAGE", "COMMAND", "CREATED", "STATUS", "PORTS", "NAMES"]


def test_an_interpreter_path_with_white_space_is_quoted_as_sh_quotes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "/opt/My Tools/bin/python3")
    words = prefix("process")
    assert words.startswith("'/opt/My Tools/bin/python3' -P ")
    assert shlex.split(words) == ["/opt/My Tools/bin/python3", "-P", "-m", "studymon", "runtime"]


def test_the_study_is_told_the_console_s_state_folder_by_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STUDYMON_PROCESS_RUNTIME", "relative-root")  # the console's own working folder's
    runtime = ProcessRuntime()
    env = study_environment("process", runtime)
    assert env == {"STUDYMON_RUNTIME": prefix("process"), "STUDYMON_PROCESS_RUNTIME": str(tmp_path / "relative-root")}
    assert study_environment("docker", runtime) == {"STUDYMON_RUNTIME": "docker"}


# --- the process runtime on its own -------------------------------------------------------------
def test_run_wait_logs_inspect_ps_rm_on_the_process_runtime(names: Names) -> None:
    name = names("one")
    ran = call(STUDYMON, "run", "-d", "--name", name, "--label", "studymon.study=x", "-l", "bare", "-e", "K=v",
               IMAGE, "sh", "-c", "echo out $K; echo err >&2; exit 3")
    assert ran.returncode == 0 and ran.stderr == "", ran.stderr
    assert ID.fullmatch(ran.stdout), ran.stdout
    assert call(STUDYMON, "wait", name).stdout == "3\n"
    logs = call(STUDYMON, "logs", name)
    assert (logs.returncode, logs.stdout, logs.stderr) == (0, "out v\n", "err\n")
    [found] = json.loads(call(STUDYMON, "inspect", name).stdout)
    assert found["Id"] == ran.stdout.strip() and found["Name"] == "/" + name
    assert found["Config"]["Labels"] == {"studymon.study": "x", "bare": ""} and found["Config"]["Image"] == IMAGE
    # By its Id, or the start of it, as docker finds containers.
    assert json.loads(call(STUDYMON, "inspect", found["Id"][:12]).stdout)[0]["Id"] == found["Id"]
    assert call(STUDYMON, "inspect", "-f", "{{.State.ExitCode}} {{json .State.Running}} {{.Config.Labels}}",
                name).stdout == "3 false map[bare: studymon.study:x]\n"
    assert call(STUDYMON, "ps", "-aq", "--filter", f"name={name}").stdout == found["Id"][:12] + "\n"
    assert call(STUDYMON, "ps", "-q", "--filter", f"name={name}").stdout == ""  # exited: only with -a
    removed = call(STUDYMON, "rm", name)
    assert (removed.returncode, removed.stdout) == (0, name + "\n")
    assert call(STUDYMON, "inspect", name).stdout == "[]\n"


def test_an_image_of_dash_records_none_and_a_run_needs_d_and_a_name(names: Names) -> None:
    name = names("dash")
    assert call(STUDYMON, "run", "-d", "--name", name, "-", "true").returncode == 0
    assert json.loads(call(STUDYMON, "inspect", name).stdout)[0]["Config"]["Image"] == "process"
    for args, said in (
        (["run", "--name", names("fg"), IMAGE, "true"], "only detached runs: add -d"),
        (["run", "-d", IMAGE, "true"], "a run needs --name NAME"),
        (["run", "-d", "--name", names("nocmd"), IMAGE], "no command specified"),
    ):
        proc = call(STUDYMON, *args)
        assert (proc.returncode, proc.stdout) == (125, ""), (args, proc)
        assert said in proc.stderr and "Traceback" not in proc.stderr


def test_a_template_beyond_fields_and_json_is_refused_in_a_line(names: Names) -> None:
    name = names("tpl")
    call(STUDYMON, "run", "-d", "--name", name, "-", "true")
    for template in ("{{range .Args}}{{.}}{{end}}", "table {{.Names}}", "{{.Names"):
        proc = call(STUDYMON, "ps", "-a", "--format", template)
        assert proc.returncode == 1 and proc.stdout == "", (template, proc)
        assert proc.stderr.count("\n") == 1 and "template" in proc.stderr, proc.stderr


def test_help_names_every_command() -> None:
    proc = call(STUDYMON, "--help")
    assert proc.returncode == 0
    for command in ("run", "inspect", "wait", "logs", "rm", "ps", "events"):
        assert f"  {command} " in proc.stdout
        assert call(STUDYMON, command, "--help").stdout.startswith(f"Usage:  studymon runtime {command} ")
    # And as a command of studymon's own.
    listed = subprocess.run([sys.executable, "-m", "studymon", "--help"], capture_output=True, text=True, timeout=60)
    assert "runtime" in listed.stdout


def test_events_without_until_follow_until_ctrl_c(names: Names) -> None:
    name = names("follow")
    since = f"{time.time():.6f}"  # the past is read once the tail is live: nothing falls between the two
    follower = subprocess.Popen([*STUDYMON, "events", "--since", since, "--format", "{{json .}}",
                                 "--filter", f"container={name}"], stdout=subprocess.PIPE, text=True)
    assert follower.stdout is not None
    try:
        call(STUDYMON, "run", "-d", "--name", name, "-", "sh", "-c", "exit 5")
        call(STUDYMON, "wait", name)
        seen: list[dict[str, Any]] = []
        arrived = threading.Event()

        def read() -> None:
            assert follower.stdout is not None
            for line in follower.stdout:
                seen.append(json.loads(line))
                arrived.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        until(lambda: any(e["Action"] == "die" for e in seen), 30, f"the die of {name} followed live",
              wake=arrived, seen=lambda: seen)
        assert [e["Action"] for e in seen] == ["create", "start", "die"]
        assert seen[-1]["Actor"]["Attributes"]["exitCode"] == "5"
        follower.send_signal(signal.SIGINT)
        assert follower.wait(timeout=30) == 130
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()


def test_a_window_still_to_come_is_followed_until_its_end(names: Names) -> None:
    name = names("until")
    call(STUDYMON, "run", "-d", "--name", name, "-", "true")
    call(STUDYMON, "wait", name)
    started = time.monotonic()
    proc = call(STUDYMON, "events", "--since", "1m", "--until", "-2s", "--filter", f"container={name}",
                "--format", "{{.Action}}")
    assert time.monotonic() - started >= 1.5  # it waited for the window's end
    assert (proc.returncode, proc.stdout) == (0, "create\nstart\ndie\n")


# --- side by side with docker -------------------------------------------------------------------
def test_run_prints_only_the_id_and_inspect_is_dockers_shape(docker_cli: None, names: Names) -> None:
    for label, cli in both():
        name = names(label)
        ran = call(cli, "run", "-d", "--name", name, "--label", "studymon.study=x", "-e", "K=v", IMAGE,
                   "sh", "-c", "echo out $K; echo err >&2; exit 3")
        assert ran.returncode == 0 and ID.fullmatch(ran.stdout), (label, ran)
        waited = call(cli, "wait", name)
        assert (waited.returncode, waited.stdout) == (0, "3\n"), (label, waited)
        logs = call(cli, "logs", name)
        assert (logs.returncode, logs.stdout, logs.stderr) == (0, "out v\n", "err\n"), (label, logs)
        proc = call(cli, "inspect", name)
        assert proc.returncode == 0 and proc.stderr == "", (label, proc)
        found = json.loads(proc.stdout)
        assert isinstance(found, list) and len(found) == 1, (label, found)
        item = found[0]
        assert {"Id", "Name", "Created", "State"} <= set(item) and INSPECT_STATE <= set(item["State"]), label
        assert item["Id"] == ran.stdout.strip() and item["Name"] == "/" + name, label
        state = item["State"]
        assert (state["Running"], state["Status"], state["ExitCode"]) == (False, "exited", 3), label
        assert item["Config"]["Labels"]["studymon.study"] == "x", label
        started_at, finished_at = time_epoch(state["StartedAt"]), time_epoch(state["FinishedAt"])
        # Docker takes StartedAt after the process runs, so a quick one may finish a moment "before" it starts;
        # the runtime takes both in order.
        assert (started_at <= finished_at) if label == "studymon" else (started_at - finished_at < 1), (label, state)
        formatted = call(cli, "inspect", "-f", "{{.Name}} {{.State.Status}} {{.State.ExitCode}} {{json .State.Running}}",
                         name)
        assert formatted.stdout == f"/{name} exited 3 false\n", (label, formatted)


def test_a_name_in_use_and_a_bad_name_are_refused_as_docker_refuses_them(docker_cli: None, names: Names) -> None:
    for label, cli in both():
        name = names(label)
        first = call(cli, "run", "-d", "--name", name, IMAGE, "sleep", "30")
        again = call(cli, "run", "-d", "--name", name, IMAGE, "true")
        assert (again.returncode, again.stdout) == (125, ""), (label, again)
        assert "Conflict" in again.stderr and f'"/{name}"' in again.stderr and first.stdout.strip() in again.stderr
        bad = call(cli, "run", "-d", "--name", "bad/name", IMAGE, "true")
        assert (bad.returncode, bad.stdout) == (125, "") and "Invalid container name (bad/name)" in bad.stderr, label
        # A running container is removed only by force, and the name is printed.
        refused = call(cli, "rm", name)
        assert refused.returncode == 1 and re.search("cannot remove .*running", refused.stderr), (label, refused)
        forced = call(cli, "rm", "-f", name)
        assert (forced.returncode, forced.stdout) == (0, name + "\n"), (label, forced)


def test_a_command_that_cannot_start_leaves_its_id_and_exits_127(docker_cli: None, names: Names) -> None:
    for label, cli in both():
        proc = call(cli, "run", "-d", "--name", names(label), IMAGE, "no-such-program-here")
        assert proc.returncode == 127 and ID.fullmatch(proc.stdout), (label, proc)
        assert "no-such-program-here" in proc.stderr, (label, proc.stderr)


def test_missing_containers_answer_as_docker_28_does(docker_cli: None, names: Names) -> None:
    present = {label: names(label) for label, _ in both()}
    missing = names("missing")
    for label, cli in both():
        call(cli, "run", "-d", "--name", present[label], IMAGE, "true")
        call(cli, "wait", present[label])
        nothing = call(cli, "inspect", missing)
        assert (nothing.returncode, nothing.stdout) == (1, "[]\n"), (label, nothing)
        assert nothing.stderr.strip().endswith(f"No such object: {missing}"), (label, nothing.stderr)
        some = call(cli, "inspect", present[label], missing)
        assert some.returncode == 1 and [i["Name"] for i in json.loads(some.stdout)] == ["/" + present[label]], label
        for verb in (["wait"], ["logs"], ["rm"]):
            proc = call(cli, *verb, missing)
            assert (proc.returncode, proc.stdout) == (1, ""), (label, verb, proc)
            assert proc.stderr.strip().endswith(f"No such container: {missing}"), (label, verb, proc.stderr)
        forced = call(cli, "rm", "-f", missing)  # docker 28: said, and no error
        assert (forced.returncode, forced.stdout) == (0, ""), (label, forced)
        assert f"No such container: {missing}" in forced.stderr, (label, forced)


def test_ps_filters_by_name_and_prints_dockers_json(docker_cli: None, names: Names) -> None:
    rows: dict[str, dict[str, Any]] = {}
    for label, cli in both():
        done, running = names(f"{label}-done"), names(f"{label}-up")
        call(cli, "run", "-d", "--name", done, "--label", "studymon.study=x", IMAGE, "sh", "-c", "exit 2")
        call(cli, "wait", done)
        ran = call(cli, "run", "-d", "--name", running, IMAGE, "sleep", "30")
        listed = call(cli, "ps", "-a", "--filter", f"name={done}", "--format", "{{json .}}")
        assert listed.returncode == 0, (label, listed)
        [row] = [json.loads(line) for line in listed.stdout.splitlines()]
        rows[label] = row
        assert row["Names"] == done and row["State"] == "exited" and row["Status"].startswith("Exited (2) "), row
        assert row["Labels"] == "studymon.study=x" and row["Image"] == IMAGE and len(row["ID"]) == 12, row
        assert row["RunningFor"].endswith(" ago"), row
        # Without -a, running ones only; a name filter is a pattern (both names share the stem), newest first.
        up = call(cli, "ps", "--filter", f"name={running}", "--format", "{{.Names}} {{.State}} {{.ID}}")
        assert up.stdout == f"{running} running {ran.stdout[:12]}\n", (label, up)
        stem = call(cli, "ps", "-a", "--filter", f"name=^{names.stem}{label}-", "--format", "{{.Names}}")
        assert stem.stdout == f"{running}\n{done}\n", (label, stem)
        assert call(cli, "ps", "-a", "--filter", "name=[", "-q").stdout == "", label  # a bad pattern matches nothing
        status = call(cli, "ps", "--filter", f"name={names.stem}{label}-", "--filter", "status=exited", "-q")
        assert status.stdout == row["ID"] + "\n", (label, status)  # a status filter looks past -a
        table = call(cli, "ps", "--filter", f"name={running}").stdout.splitlines()
        assert table[0].split() == ["CONTAINER", "ID", "IMAGE", "COMMAND", "CREATED", "STATUS", "PORTS", "NAMES"]
        assert table[1].startswith(ran.stdout[:12] + "   ") and table[1].endswith(running), (label, table)
        call(cli, "rm", "-f", running)
    assert set(rows["studymon"]) == set(rows["docker"])


def test_events_are_dockers_objects_for_the_same_lifecycle(docker_cli: None, names: Names) -> None:
    events: dict[str, dict[str, dict[str, Any]]] = {}
    lines: dict[str, list[str]] = {}
    for label, cli in both():
        name = names(label)
        since = f"{time.time() - 1:.3f}"
        call(cli, "run", "-d", "--name", name, "--label", "studymon.study=x", IMAGE, "sh", "-c", "exit 4")
        call(cli, "wait", name)
        call(cli, "rm", name)
        until_ = f"{time.time() + 1:.3f}"  # a second to come: both follow the window to its end
        proc = call(cli, "events", "--since", since, "--until", until_, "--filter", f"container={name}",
                    "--filter", "type=container", "--format", "{{json .}}")
        assert proc.returncode == 0, (label, proc)
        parsed = [json.loads(line) for line in proc.stdout.splitlines()]
        assert [e["Action"] for e in parsed] == list(LIFECYCLE), (label, parsed)
        events[label] = {e["Action"]: e for e in parsed}
        text = call(cli, "events", "--since", since, "--until", until_, "--filter", f"container={name}",
                    "--filter", "type=container")
        lines[label] = text.stdout.splitlines()
        cid = parsed[0]["id"]
        for event in parsed:
            assert event["id"] == event["Actor"]["ID"] == cid and event["status"] == event["Action"], event
            assert event["time"] == event["timeNano"] // 1_000_000_000 and event["from"] == IMAGE, event
            assert event["Actor"]["Attributes"]["name"] == name, event
        assert events[label]["die"]["Actor"]["Attributes"]["exitCode"] == "4"
        for line, action in zip(lines[label], LIFECYCLE, strict=True):
            assert re.fullmatch(rf"\S+ container {action} {cid} \(.*name={name}.*\)", line), (label, line)
    for action in LIFECYCLE:
        ours, theirs = events["studymon"][action], events["docker"][action]
        assert list(ours) == list(theirs), action  # the same keys, in the same order
        assert set(ours["Actor"]) == set(theirs["Actor"]), action
        assert set(ours["Actor"]["Attributes"]) == set(theirs["Actor"]["Attributes"]), action
        assert [ours[k] for k in ("Type", "scope")] == [theirs[k] for k in ("Type", "scope")], action


@pytest.mark.parametrize(("args", "status"), [
    (["frobnicate"], 1),  # an unknown command
    (["ps", "--bogus"], 125),  # an unknown flag
    (["ps", "--filter", "name"], 125),  # a filter that is not KEY=VALUE
    (["ps", "--filter", "bogus=1"], 1),  # a filter docker has not
    (["ps", "--filter", "status=bogus"], 1),
    (["ps", "stray"], 1),
    (["inspect"], 1),  # a name missing
    (["wait"], 1),
    (["logs", "a", "b"], 1),
    (["events", "--since", "abc", "--until", "1"], 1),
    (["events", "--since", "5", "--until", "2"], 1),
    (["run", "-d", "--bogus", "x"], 125),
])
def test_bad_input_gets_dockers_status_and_a_message(docker_cli: None, args: list[str], status: int) -> None:
    for label, cli in both():
        proc = call(cli, *args)
        assert (proc.returncode, proc.stdout) == (status, ""), (label, args, proc)
        assert proc.stderr.strip() and "Traceback" not in proc.stderr, (label, args, proc.stderr)
