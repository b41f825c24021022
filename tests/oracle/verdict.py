"""The oracle's answer (``OracleVerdict``) and the small ledger of reasons it is built from.

A check is ✓ unless a reason is given against it: a failing reason makes
it ✗ (``False``), an unknown one ``?`` (``None``), and ✗ beats ? beats ✓.
The status follows §6.6: 0 every check holds, 1 one is ✗, 3 none is ✗ and
one is ?; 2 (and no check) for a folder that is not a studymon evidence folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Key = tuple[str, str]


@dataclass
class OracleVerdict:
    status: int
    checks: dict[Key, bool | None]
    reasons: dict[Key, str] = field(default_factory=dict)

    def failing(self) -> dict[Key, str]:
        return {k: self.reasons.get(k, "") for k, v in self.checks.items() if v is False}

    def unknown(self) -> dict[Key, str]:
        return {k: self.reasons.get(k, "") for k, v in self.checks.items() if v is None}


class Tally:
    """Checks as they are found to apply, with every reason given against each."""

    def __init__(self) -> None:
        self.order: list[Key] = []
        self.fails: dict[Key, list[str]] = {}
        self.unknowns: dict[Key, list[str]] = {}

    def add(self, scope: str, name: str) -> Key:
        key = (scope, name)
        if key not in self.fails:
            self.order.append(key)
            self.fails[key] = []
            self.unknowns[key] = []
        return key

    def fail(self, scope: str, name: str, reason: str) -> None:
        self.fails[self.add(scope, name)].append(reason)

    def unknown(self, scope: str, name: str, reason: str) -> None:
        self.unknowns[self.add(scope, name)].append(reason)

    def is_failing(self, scope: str, name: str) -> bool:
        return bool(self.fails.get((scope, name)))

    def verdict(self) -> OracleVerdict:
        checks: dict[Key, bool | None] = {}
        reasons: dict[Key, str] = {}
        for key in self.order:
            if self.fails[key]:
                checks[key] = False
                reasons[key] = summarize(self.fails[key])
            elif self.unknowns[key]:
                checks[key] = None
                reasons[key] = summarize(self.unknowns[key])
            else:
                checks[key] = True
        values = list(checks.values())
        status = 1 if False in values else 3 if None in values else 0
        return OracleVerdict(status, checks, reasons)


def summarize(reasons: list[str], shown: int = 3) -> str:
    unique = list(dict.fromkeys(reasons))
    text = "; ".join(unique[:shown])
    if len(unique) > shown:
        text += f"; and {len(unique) - shown} more"
    return text
