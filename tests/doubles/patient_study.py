"""The reference study, waiting out an engine that went away while it waits for a run.

An honest study: while it waits for a run's container and the container
engine does not answer (stopped, crashed, restarting), it asks again every
half second, up to ``engineWaitSeconds`` (default 120), instead of exiting.
So a console watching it stays up across an engine restart, which is what
the engine fault tests need.  Everything else is the reference study.

    python3 tests/doubles/patient_study.py --config C --dir D [--resume]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import requests.exceptions  # noqa: E402

from studymon.engine.runtimes import RuntimeUnavailable  # noqa: E402
from studymon.refstudy.controller import RunPlan, Study, main, say  # noqa: E402

RETRY_PAUSE = 0.5


class PatientStudy(Study):
    """Waits for the engine to answer again rather than crashing while a run is in flight."""

    def await_container(self, plan: RunPlan) -> tuple[int, dict[str, float]]:
        limit = float(self.settings.effective.get("engineWaitSeconds", 120))
        deadline = time.monotonic() + limit
        while True:
            try:
                return super().await_container(plan)
            except (RuntimeUnavailable, requests.exceptions.ConnectionError) as exc:
                if time.monotonic() > deadline:
                    raise
                say(f"the container engine does not answer ({exc}); asking again")
                if self._runtime is not None:
                    self._runtime.close()
                self._runtime = None  # a fresh client once it is back
                self.stop.wait(RETRY_PAUSE)
                self.checkpoint()


if __name__ == "__main__":
    sys.exit(main(study_class=PatientStudy))
