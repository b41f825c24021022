"""A study that, on resume, forgets its in-flight run and goes on to its halt as if nothing were lost.

It is the reference study except for one step: when ``--resume`` finds a run
that was started and has no result (the run in flight at a kill, or at any
crash of the controller), it forgets it.  It never waits for the run's
container (nor removes it), never writes its ``runResult``, and for a
diagnosis run never writes the round's ``diagnosisSettlement``; it opens the
round's proposal stage and goes on, spends the rest of its budget on the
runs that follow, writes ``halt "balance exhausted"`` and exits 0.  Every
other record is the reference study's: one ``charge`` and one
``runStarted`` for the forgotten run, no rerun, no other container.

Contract v3 §6.2 rule 14 (``resultsAccounted``) and §6.4 ("lost is lost"):
once the study has finished, a started run without a result is lost, whether
a kill of the console's was in flight or not; nothing is left for a resume.

    python3 tests/doubles/forgetful_study.py --config C --dir D [--resume]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from studymon.refstudy.controller import Experiment, RunPlan, Study, main, say  # noqa: E402
from studymon.refstudy.ledger import Content  # noqa: E402


class ForgetfulStudy(Study):
    """The reference study that drops a run in flight on resume: no wait, no result, no settlement."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.forgotten: set[str] = set()

    def on_reattach(self, plan: RunPlan) -> None:
        self.forgotten.add(plan.run)
        say(
            f"[fault forgetful] run {plan.run} was in flight in {self.container(plan)}: forgetting it "
            "(no wait, no result, no settlement)"
        )

    def collect(self, plan: RunPlan) -> Content | None:
        if plan.run in self.forgotten:
            return None
        return super().collect(plan)

    def settle(self, plan: RunPlan, result: Content | None) -> list[Experiment]:
        if plan.run in self.forgotten:
            return []
        return super().settle(plan, result)


if __name__ == "__main__":
    sys.exit(main(study_class=ForgetfulStudy))
