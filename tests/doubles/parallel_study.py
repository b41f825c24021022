"""A study with two runs in flight when its first diagnosis run starts, honest to the contract.

It is the reference study, except that round 1 begins with a baseline run:
run ``a0`` (purpose ``ablation``, round 1, the first cell) measures the
experiments the diagnosis is about to choose, with fresh streams and half the
samples, for ``ablationSeconds``.  It is planned, charged and started just
before the diagnosis run ``d1``, and collected after the round's settlement,
so with ``ablationSeconds`` longer than ``diagnosisSeconds`` both runs are in
flight when ``d1`` starts.  Its result is only recorded: the round's
settlement is the diagnosis run's, as for any ablation.

On ``--resume`` it replays like the reference study: a run started and
without a result is waited for in the same container, never started or
charged again, whichever of the two it is.

    python3 tests/doubles/parallel_study.py --config C --dir D [--resume]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from studymon.refstudy.controller import Experiment, RunPlan, Study, main  # noqa: E402

BASELINE_RUN = "a0"


class ParallelStudy(Study):
    """The reference study with a baseline run in flight beside the first diagnosis run."""

    def diagnosis(self, round_: int) -> list[Experiment]:
        s = self.settings
        # Both runs are paid for before either starts, or the baseline is left out.
        if round_ != 1 or self.balance + 1e-9 < 2 * s.run_cost:
            return super().diagnosis(round_)
        chosen = self.untested[: s.diagnosis_batch]
        fresh = tuple(Experiment(e.id, e.param, e.seed + 1) for e in chosen)
        baseline = RunPlan(BASELINE_RUN, "ablation", s.cells[0], round_, fresh, s.ablation_seconds, max(1, s.samples // 2))
        self.checkpoint()
        self.journal.step("runPlanned", baseline.record())
        self.charge(baseline)
        if self.start(baseline):
            self.on_reattach(baseline)
        kept = super().diagnosis(round_)
        self.collect(baseline)
        return kept


if __name__ == "__main__":
    sys.exit(main(study_class=ParallelStudy))
