"""A study that breaks the contract in exactly one way, for testing the console's checks.

It is the reference study with one step of the run lifecycle overridden; the
``fault`` key of its research.json picks which:

* ``rerun``    - on resume, the in-flight run is started again: the old
  container is removed and a new one made under the same name (no second
  ``runStarted`` or ``charge``);
* ``recharge`` - on resume, the in-flight run is charged a second time;
* ``noresult`` - on resume, the in-flight run's ``runResult`` is never
  written (its settlement drops every experiment with "no result") and the
  study goes on to its halt;
* ``instant``  - the first diagnosis run's ``runStarted`` and ``runResult``
  reach the ledger in one write, so a watcher never sees it in flight.

    python3 tests/doubles/broken_study.py --config C --dir D [--resume]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from studymon.refstudy.controller import RunPlan, Study, main, say  # noqa: E402
from studymon.refstudy.ledger import Content  # noqa: E402

FAULTS = ("rerun", "recharge", "noresult", "instant")


class BrokenStudy(Study):
    """The reference study, wrong in the one way ``fault`` names."""

    @property
    def fault(self) -> str:
        fault = self.settings.effective.get("fault")
        if fault not in FAULTS:
            raise SystemExit(f"broken_study: fault must be one of {', '.join(FAULTS)}, not {fault!r}")
        return fault

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fault  # refuse a bad config before anything is written
        self.reattached: str | None = None
        self.held_start: Content | None = None

    def on_reattach(self, plan: RunPlan) -> None:
        self.reattached = plan.run
        if self.fault == "rerun":
            say(f"[fault rerun] starting run {plan.run} again in a new {self.container(plan)}")
            self.runtime.remove(self.container(plan), force=True)
            self.launch(plan)
        elif self.fault == "recharge":
            say(f"[fault recharge] charging run {plan.run} again")
            self.charge(plan)
        else:
            super().on_reattach(plan)

    def start(self, plan: RunPlan) -> bool:
        if self.fault == "instant" and plan.run == "d1" and self.journal.live:
            # Start the container but keep its runStarted back for collect().
            self.launch(plan)
            self.held_start = {"run": plan.run, "container": self.container(plan)}
            return False
        return super().start(plan)

    def collect(self, plan: RunPlan) -> Content | None:
        if self.fault == "noresult" and plan.run == self.reattached:
            # Let the container finish and go as a run's does, so the missing result is the only fault.
            self.await_container(plan)
            self.dispose(plan)
            say(f"[fault noresult] leaving run {plan.run} without a result")
            return None
        if self.held_start is not None and plan.run == self.held_start["run"]:
            code, outputs = self.await_container(plan)
            result = {"run": plan.run, "exitCode": code, "outputs": outputs}
            self.journal.steps([("runStarted", self.held_start), ("runResult", result)])
            say(f"[fault instant] run {plan.run} started and settled in one write")
            self.held_start = None
            self.dispose(plan)
            return result
        return super().collect(plan)


if __name__ == "__main__":
    sys.exit(main(study_class=BrokenStudy))
