"""How fast this machine does the console's kind of work, beside the machine its CPU and time targets were set for.

A console's cost in % of a core, or its first frame in seconds, is a figure
of the machine as much as of the code: the same code drew the overview of
48 streaming studies at 5.1 % of a core on one 2-core machine and 15.2 % on
another (bench/README.md).  A bench that holds such a figure to a target
measures this machine beside it, in the same run: a fixed piece of Python
work (``json.loads`` of one ledger line of about 200 bytes, the work the
console does most) timed in CPU seconds, best of a few short rounds, so that
a busy neighbour costs wall time but not the measure.

The targets are for the machine of ``DESIGN.md``'s table, which parsed such
lines at 0.36-0.41 M a second (:data:`NOMINAL_LINES_PER_S`, its middle).
:func:`scale` is how much slower this machine is (below 1: faster); a CPU or
time target times the scale is the target here, and a figure divided by it is
what the nominal machine would have shown.

    python bench/machine_speed.py            # this machine's rate and scale
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass

# DESIGN.md, "Parsing 1M such lines: json.loads 0.36-0.41 M lines/s" on the machine the targets come from.
NOMINAL_LINES_PER_S = 380_000.0
LINE = json.dumps(
    {"seq": 1017, "at": "2026-11-30T05:32:38.123Z", "kind": "runStarted",
     "content": {"run": "d12", "container": "inforsi-alpha-d12", "purpose": "diagnosis", "round": 12,
                 "experiments": ["e1", "e2", "e3"]}}
)
ROUND_LINES = 20_000  # one round: about 50-100 ms of CPU on such machines
ROUNDS = 5


def lines_per_second(rounds: int = ROUNDS, lines: int = ROUND_LINES) -> float:
    """Ledger lines parsed per CPU second here: the best of ``rounds`` rounds of ``lines`` each."""
    best = float("inf")
    loads = json.loads
    for _ in range(rounds):
        began = time.process_time()
        for _ in range(lines):
            loads(LINE)
        best = min(best, time.process_time() - began)
    return lines / max(best, 1e-9)


@dataclass(frozen=True)
class Speed:
    """This machine's rate, measured before and after a bench's run, and the scale of its targets."""

    before: float  # lines a CPU second
    after: float

    @property
    def rate(self) -> float:
        return (self.before + self.after) / 2

    @property
    def scale(self) -> float:
        """How many times slower than the nominal machine (a target here is the nominal one times this)."""
        return NOMINAL_LINES_PER_S / self.rate

    def line(self) -> str:
        return (f"machine speed: json.loads of a {len(LINE)}-byte ledger line, {self.before / 1e3:.0f}k lines per "
                f"CPU second before the run, {self.after / 1e3:.0f}k after (DESIGN.md's machine, which the targets "
                f"are for: {NOMINAL_LINES_PER_S / 1e3:.0f}k): targets x{self.scale:.2f} here")

    def as_json(self) -> dict[str, float]:
        return {"before": self.before, "after": self.after, "nominal": NOMINAL_LINES_PER_S, "scale": self.scale}


def main() -> int:
    rate = lines_per_second()
    speed = Speed(rate, rate)
    sys.stdout.write(f"{rate / 1e3:.0f}k lines per CPU second; nominal {NOMINAL_LINES_PER_S / 1e3:.0f}k; "
                     f"targets x{speed.scale:.2f} here\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
