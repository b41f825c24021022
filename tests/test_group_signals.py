"""A signal sent to a study's process group while the study makes a container does not kill the container's
making: the process runtime's shim starts in a session of its own, and until it has one it is in the study's
group.  A console stopping a study (SIGINT to its group) once crashed the reference study that way: "could not
start the shim ... (no output)", exit 1 instead of its 130 at a safe point."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.studies import ROOT

STUDY = """
import os, signal, sys
from studymon.engine.runtimes.process import ProcessRuntime
seen = []
signal.signal(signal.SIGINT, lambda *_: seen.append(1))  # a study that stops at a safe point, later
runtime = ProcessRuntime()
print("ready", flush=True)
made = failed = 0
for i in range(int(sys.argv[1])):
    try:
        runtime.run(f"grp-{os.getpid()}-{i}", ["true"])
        made += 1
    except RuntimeError as exc:
        failed += 1
        print("failed:", exc, flush=True)
print(f"made {made} failed {failed} interrupts {len(seen)}", flush=True)
"""


def test_containers_are_made_whole_while_sigint_rains_on_the_makers_group(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    study = subprocess.Popen([sys.executable, "-c", STUDY, "20"], start_new_session=True, env=env,
                             stdout=subprocess.PIPE, text=True)
    assert study.stdout is not None
    assert study.stdout.readline().strip() == "ready"
    sent = 0
    while study.poll() is None:
        try:
            os.killpg(study.pid, signal.SIGINT)
        except ProcessLookupError:
            break
        sent += 1
        time.sleep(0.003)
    said = study.stdout.read()
    # The study's own end may meet a SIGINT too, once its handler is gone (-2): what counts is what it made.
    assert study.returncode in (0, -signal.SIGINT), said
    assert "made 20 failed 0" in said, said
    interrupts = int(said.rsplit("interrupts ", 1)[1])
    assert sent > 100 and interrupts > 100, (sent, said)  # the signals reached the study all along
