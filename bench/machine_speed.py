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

A machine shared with other work, or a core whose sibling is busy, is slower
while the run goes on than before or after it, and a figure taken then is
the machine's slowdown as much as the code's.  So the bench also keeps a
:class:`Probe` running all through the run: a process of its own that every
quarter second parses a few hundred such lines (about 1 % of a core) and
notes the rate.  The median rate over a phase is the machine's speed during
that phase, and the phase's figures are held to the targets at its scale.

    python bench/machine_speed.py            # this machine's rate and scale
    python bench/machine_speed.py --probe F  # the probe: a line "monotonic rate" in F every 0.25 s, until killed
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# DESIGN.md, "Parsing 1M such lines: json.loads 0.36-0.41 M lines/s" on the machine the targets come from.
NOMINAL_LINES_PER_S = 380_000.0
LINE = json.dumps(
    {"seq": 1017, "at": "2026-11-30T05:32:38.123Z", "kind": "runStarted",
     "content": {"run": "d12", "container": "inforsi-alpha-d12", "purpose": "diagnosis", "round": 12,
                 "experiments": ["e1", "e2", "e3"]}}
)
ROUND_LINES = 20_000  # one round: about 50-100 ms of CPU on such machines
ROUNDS = 5
PROBE_EVERY = 0.25  # seconds between the probe's bursts
PROBE_LINES = 500  # lines a burst: 1-2 ms of CPU, so the probe costs about 1 % of a core


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


def probe(path: Path) -> None:
    """Until killed: a burst of ``PROBE_LINES`` parses every ``PROBE_EVERY`` s, each a line ``monotonic rate``."""
    loads = json.loads
    with open(path, "a", encoding="utf-8", buffering=1) as out:
        wake = time.monotonic()
        while True:
            began = time.process_time()
            for _ in range(PROBE_LINES):
                loads(LINE)
            spent = max(time.process_time() - began, 1e-9)
            out.write(f"{time.monotonic():.3f} {PROBE_LINES / spent:.0f}\n")
            wake += PROBE_EVERY
            time.sleep(max(0.0, wake - time.monotonic()))


class Probe:
    """The probe's process, and the rates it noted between two moments (``time.monotonic()``, the same clock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.proc = subprocess.Popen([sys.executable, __file__, "--probe", str(path)], stdin=subprocess.DEVNULL,
                                     start_new_session=True)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def median(self, since: float, until: float) -> float | None:
        """The median rate noted within ``[since, until]``; None when none was."""
        rates = self.rates(since, until)
        return statistics.median(rates) if rates else None

    def rates(self, since: float, until: float) -> list[float]:
        """The rates of the bursts noted within ``[since, until]`` (whole lines only: it may be killed mid-line)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        found = []
        for line in text.split("\n")[:-1]:
            at, rate = (float(x) for x in line.split(" "))
            if since <= at <= until:
                found.append(rate)
        return found


@dataclass(frozen=True)
class Speed:
    """This machine's rate, measured before and after a bench's run and during each of its phases, and the scale
    of its targets."""

    before: float  # lines a CPU second
    after: float
    during: dict[str, float] = field(default_factory=dict)  # a phase's median rate, by the probe

    @property
    def rate(self) -> float:
        return (self.before + self.after) / 2

    @property
    def scale(self) -> float:
        """How many times slower than the nominal machine, before and after the run."""
        return NOMINAL_LINES_PER_S / self.rate

    def scale_of(self, phase: str) -> float:
        """How many times slower than the nominal machine during ``phase`` (a target then is the nominal one times
        this); before and after the run when the probe noted nothing in it."""
        rate = self.during.get(phase)
        return self.scale if rate is None else NOMINAL_LINES_PER_S / rate

    def line(self) -> str:
        during = "".join(f", {r / 1e3:.0f}k during {p} (x{self.scale_of(p):.2f})" for p, r in self.during.items())
        return (f"machine speed: json.loads of a {len(LINE)}-byte ledger line, {self.before / 1e3:.0f}k lines per "
                f"CPU second before the run, {self.after / 1e3:.0f}k after (x{self.scale:.2f}){during}; DESIGN.md's "
                f"machine, which the targets are for: {NOMINAL_LINES_PER_S / 1e3:.0f}k")

    def as_json(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, "nominal": NOMINAL_LINES_PER_S, "scale": self.scale,
                "during": dict(self.during), "scales": {p: self.scale_of(p) for p in self.during}}


def main() -> int:
    if sys.argv[1:2] == ["--probe"] and len(sys.argv) == 3:
        probe(Path(sys.argv[2]))
        return 0
    rate = lines_per_second()
    speed = Speed(rate, rate)
    sys.stdout.write(f"{rate / 1e3:.0f}k lines per CPU second; nominal {NOMINAL_LINES_PER_S / 1e3:.0f}k; "
                     f"targets x{speed.scale:.2f} here\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
