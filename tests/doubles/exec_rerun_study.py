"""A study that, on resume, runs its in-flight run's payload again inside the in-flight container.

It is the reference study except for one step: when ``--resume`` finds a run
that was started and has no result (the run in flight at a kill), it does
not trust the work in flight and does it again *in the same container*,
``docker exec`` into the still-running container (the SDK's
``container.exec_run``: the engine records ``exec_create``, ``exec_start``
and ``exec_die`` for that container).  The second execution is the run's
payload with the same samples and experiments, without the payload's padding
sleep (so it ends while the container's own process still runs), and its
outputs are the ones the study records.  Then it waits for the container
to exit as the reference study does and writes the result with the
container's exit code: same name, same ``Id``, one ``die`` with the code the
result reports, one ``charge``, one ``runStarted``.  The exec is its one
wrong (contract v3 §6.4: ``exec_create`` and ``exec_start`` are not among
the events a target may have in its kill window).

The process runtime has no exec (its command line and its Python API offer
``run``, ``inspect``, ``wait``, ``logs``, ``rm``, ``ps`` and ``events``; a
second ``run`` under a name in use is refused): there the study asks the
runtime's command line for ``exec``, is refused, says so in its log, and
goes on as the reference study, so on that runtime it is honest.

    python3 tests/doubles/exec_rerun_study.py --config C --dir D [--resume]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from studymon.engine.runtimes.docker import DockerRuntime  # noqa: E402
from studymon.refstudy.controller import RunPlan, Study, main, parse_outputs, say  # noqa: E402
from studymon.refstudy.ledger import Content  # noqa: E402

PROCESS_RUNTIME_CLI = [sys.executable, "-m", "studymon", "runtime"]


class ExecRerunStudy(Study):
    """The reference study that redoes an in-flight run inside its own container on resume."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.redone: dict[str, dict[str, float]] = {}  # run -> the outputs of its second execution

    def payload_command(self, plan: RunPlan, seconds: float) -> list[str]:
        """The run's payload as the reference study starts it (``launch``), lasting ``seconds``."""
        command = ["sh", "-c", self.payload, "refstudy", f"{seconds:g}", str(plan.samples)]
        return command + [e.argument() for e in plan.experiments]

    def on_reattach(self, plan: RunPlan) -> None:
        name = self.container(plan)
        command = self.payload_command(plan, 0)
        runtime = self.runtime
        if isinstance(runtime, DockerRuntime):
            container = runtime.client.containers.get(name)
            code, output = container.exec_run(command)  # waits for the second execution to end
            data = output if isinstance(output, bytes) else b"".join(output)
            outputs = parse_outputs(data.decode("utf-8", errors="replace"))
            self.redone[plan.run] = outputs
            say(
                f"[fault exec] ran the payload of {plan.run} again inside {name} (docker exec): "
                f"exit {code}, {len(outputs)} outputs; now waiting for the container"
            )
            return
        proc = subprocess.run(
            [*PROCESS_RUNTIME_CLI, "exec", name, "--", *command], capture_output=True, text=True, check=False
        )
        refusal = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[0]
        say(
            f"[fault exec] the process runtime has no exec (exit {proc.returncode}: {refusal}); "
            f"waiting for {name} as the reference study does"
        )
        super().on_reattach(plan)

    def collect(self, plan: RunPlan) -> Content | None:
        outputs = self.redone.pop(plan.run, None)
        if outputs is None:
            return super().collect(plan)
        code, _ = self.await_container(plan)
        content: Content = {"run": plan.run, "exitCode": code, "outputs": outputs}
        self.journal.step("runResult", content)
        say(f"run {plan.run} exited {code}: recorded the outputs of its second execution")
        self.dispose(plan)
        return content


if __name__ == "__main__":
    sys.exit(main(study_class=ExecRerunStudy))
