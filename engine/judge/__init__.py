"""The judge: every check of a study, from its evidence folder alone.

The modules, in the order a judgement runs:

* :mod:`.read` reads ``OUT`` through :mod:`studymon.engine.contract.folder` and
  :mod:`studymon.engine.io.safefile` into the facts of :mod:`.facts` (the
  container events into the tally of :mod:`.events`);
* :mod:`.study`, :mod:`.kill` and :mod:`.target` hold the checks, each a
  function of facts already read (nothing there touches a file), giving a
  :class:`~.verdict.Check`;
* :mod:`.report` puts them together (:func:`judge`), :mod:`.table` shows them.

The checks and what makes each hold are in ``docs/contract.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studymon.engine.judge.verdict import Check, overall

if TYPE_CHECKING:
    from studymon.engine.judge.report import Judgement, NotEvidence, judge

__all__ = ["Check", "Judgement", "NotEvidence", "judge", "overall"]


def __getattr__(name: str) -> Any:
    # The judge proper is read on first use: a console's first frame does not wait for the
    # tenth of a second its import takes (engine.events needs only the verdict's Check).
    if name in ("Judgement", "NotEvidence", "judge"):
        from studymon.engine.judge import report

        return getattr(report, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
