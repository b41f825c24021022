"""A verdict and how reasons make one.

A check is ``True`` (holds), ``False`` (fails) or ``None`` (unknown: the
evidence needed may still come).  As in Jepsen, false beats unknown beats
pass: a :class:`Verdict` collects every reason a check fails and every
reason it cannot tell, and fails if there is any of the first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from studymon.engine.contract.automata import Proof

STUDY_CHECKS = (
    "ledgerWellFormed",
    "contractKept",
    "haltedAtExport",
    "chargedEqualsStarts",
    "exitedCleanly",
    "resultsAccounted",
)
KILL_CHECKS = ("killDelivered", "killEvidence")
TARGET_CHECKS = ("sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished")


RESUME_HINT = "`studymon run --resume` continues it"
WINDOW_OPEN = f"window still open; {RESUME_HINT}"
SHOWN = 3  # reasons shown per check before "and N more"
# Distinct events remembered to count an event once when both the live recording and
# the read-back hold it; past this many, further ones may be counted twice (still a failure).
SEEN_KEPT = 256
# Proofs kept for one check's report.json entry (and for each list of failures they come from): each is a few
# lines of text, and a hostile folder may fail one rule a million times.
PROOFS_KEPT = 16


@dataclass(frozen=True)
class Check:
    """One verdict: the check's name, what it is about (``scope``), ok and why; for a ✗, the proofs the judge
    could state (each contradiction with its files and lines, §6.8.3), whole."""

    name: str
    ok: bool | None
    detail: str
    scope: str = "study"
    proofs: tuple[Proof, ...] = field(default=(), compare=False)

    def as_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.name, "scope": self.scope, "ok": self.ok, "detail": self.detail}
        if self.proofs:
            doc["proofs"] = [p.as_json() for p in self.proofs]
        return doc


def overall(checks: Iterable[Check]) -> bool | None:
    """False if any check fails, else None if any is unknown, else True."""
    result: bool | None = True
    for c in checks:
        if c.ok is False:
            return False
        if c.ok is None:
            result = None
    return result


class Verdict:
    """Reasons gathered for one check: any failure makes it ✗, else any unknown makes it ?."""

    def __init__(self, name: str, scope: str) -> None:
        self.name = name
        self.scope = scope
        self.failures: list[str] = []
        self.unknowns: list[str] = []
        self.context: list[str] = []
        self.proofs: list[Proof] = []

    def fail(self, reason: str, proof: Proof | None = None) -> None:
        self.failures.append(reason)
        if proof is not None and len(self.proofs) < PROOFS_KEPT:
            self.proofs.append(proof)

    def proven(self, proofs: Iterable[Proof]) -> None:
        """Proofs of failures already given (a list of reasons said with :meth:`listed`)."""
        for proof in proofs:
            if len(self.proofs) >= PROOFS_KEPT:
                break
            self.proofs.append(proof)

    def unknown(self, reason: str, proof: Proof | None = None) -> None:  # noqa: ARG002
        """A reason the check cannot tell yet.  A proof given with it (by a step that fails once the study has
        finished, and may still come before) is dropped: what may still come contradicts nothing."""
        self.unknowns.append(reason)

    def explain(self, reason: str) -> None:
        """A fact that bears on every other reason (a runtime restart): shown first, fail or unknown.

        Alone it makes the check unknown, never a pass.
        """
        self.context.append(reason)

    def listed(self, shown: list[str], total: int, one: str, many: str, more: bool = False) -> None:
        """Failures of one kind: the first few, the last of them saying how many more there are
        (``more``: at least that many, the search having stopped there)."""
        reasons = list(shown)
        left = total - len(reasons)
        if reasons and (left > 0 or more):
            least = "at least " if more else ""
            count = left + more
            reasons[-1] += f" (and {least}{count} more {one if count == 1 else many})"
        for reason in reasons:
            self.fail(reason)

    def check(self, passed: str | Callable[[], str]) -> Check:
        """The verdict; ``passed`` (text, or a function giving it) is the detail when the check holds."""
        ok: bool | None
        proofs: tuple[Proof, ...] = ()
        if self.failures:
            ok, reasons, proofs = False, self.context + self.failures, tuple(self.proofs)
        elif self.unknowns or self.context:
            ok, reasons = None, self.context + self.unknowns
        else:
            return Check(self.name, True, passed if isinstance(passed, str) else passed(), self.scope)
        shown = "; ".join(reasons[:SHOWN])
        more = f"; and {len(reasons) - SHOWN} more" if len(reasons) > SHOWN else ""
        return Check(self.name, ok, shown + more, self.scope, proofs)
