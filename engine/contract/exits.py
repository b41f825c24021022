"""Exit statuses, spelled once: studymon's own (§6.6) and a controller's that the contract gives a meaning (§1).

``studymon run``, ``report`` and ``explore`` exit 0 when every check held, 1
when one failed, 2 on bad input (nothing was written) and 3 when nothing
failed but something could not be judged whole: a ✗ beats a ``?``.
A controller exits 75 on a temporary failure (after ``serviceError``) and 130
when stopped by SIGINT; any other end before its last record is a crash.
"""

from __future__ import annotations

from collections.abc import Iterable

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_UNKNOWN = 0, 1, 2, 3

TEMPORARY_FAILURE = 75  # a controller's exit after serviceError: resume it later
STOPPED = 130  # a controller's exit when stopped by SIGINT (128 + 2)


def exit_status(verdicts: Iterable[bool | None]) -> int:
    """1 when any verdict is ✗, else 3 when any is ?, else 0."""
    seen = list(verdicts)
    if any(ok is False for ok in seen):
        return EXIT_FAIL
    if any(ok is None for ok in seen):
        return EXIT_UNKNOWN
    return EXIT_OK


def worst(statuses: Iterable[int]) -> int:
    """The status of a command over several studies: 1 when one's is 1, else 3 when one's is 3, else 0."""
    seen = set(statuses)
    return next((s for s in (EXIT_FAIL, EXIT_UNKNOWN) if s in seen), EXIT_OK)
