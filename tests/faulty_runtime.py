"""A real runtime whose first inspects fail or hang: the one stand-in the fault tests use.

Everything else (containers, events, the stream) is the real runtime's.
"""

from __future__ import annotations

import time
from typing import Any

from studymon.engine.runtimes import Runtime, open_runtime


class FaultyInspect:
    """``real`` (default: the process runtime), except that its first ``calls`` inspects raise ``error`` or,
    with ``mode="hang"``, take 3 s first."""

    def __init__(
        self,
        mode: str = "fail",
        calls: int = 1,
        real: Runtime | None = None,
        error: Exception | None = None,
    ) -> None:
        self.real = real if real is not None else open_runtime("process")
        self.mode = mode
        self.left = calls
        self.error = error or RuntimeError("inspect failed on purpose")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def inspect(self, name: str) -> dict[str, Any] | None:
        if self.left > 0:
            self.left -= 1
            if self.mode == "hang":
                time.sleep(3)  # stands in for the runtime's hang: the fault injected
            else:
                raise self.error
        return self.real.inspect(name)
