"""The study's ledger as a session reads it live: one object the ledger pump and the kill driver share.

:class:`LedgerReads` reads what is new in ``OUT/study/ledger.jsonl`` and
accounts it at once; each read is then asked whether it begins a kill (the
driver's trigger) and recorded (``timeline.jsonl``, reported) by the pump
alone, in the order it was read.  A read the driver makes on its own behalf
(the scene before a container moment or a manual kill, the last read of a
capture) is queued for the pump and wakes it; the reads made while a kill
has the controller frozen are held until the kill lets them go
(:meth:`LedgerReads.thaw`, once SIGKILL is sent or the controller let go).
So data goes one way: the pump asks the driver of each batch it read, and
the driver never calls the pump.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from pathlib import Path

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.ledger import LedgerIssue, LedgerTail, Record
from studymon.engine.io.notify import Notifier

Read = tuple[list[Record], list[LedgerIssue], float]  # records, issues, and when they were seen
# Asked of each read, its records just accounted: whether they began a kill (the controller is then frozen).
Trigger = Callable[[list[Record], float], bool]


class LedgerReads:
    """The ledger's tail, its notice source and the accounts, with the reads waiting to be recorded."""

    def __init__(self, ledger: Path, accounts: Accounts, notifier: Notifier | None = None) -> None:
        self.tail = LedgerTail(ledger)
        self.accounts = accounts
        self.notifier = notifier if notifier is not None else Notifier()
        self.frozen = False  # a kill holds the controller frozen: what is read waits for its thaw
        self._held: list[Read] = []
        self._ready: collections.deque[Read] = collections.deque()

    def read(self, trigger: Trigger, max_bytes: int | None = None) -> bool:
        """Read what is new (at most about ``max_bytes``), account it, and ask ``trigger`` of it; whether
        anything was read.  The read that begins a kill is held first, before what the freeze reads."""
        records, issues = self.tail.read_new(max_bytes)
        if not records and not issues:
            return False
        seen = time.time()
        for r in records:
            self.accounts.add(r)
        read = (records, issues, seen)
        if self.frozen:
            self._held.append(read)
        elif trigger(records, seen):
            self._held.insert(0, read)
        else:
            self._ready.append(read)
        return True

    def read_aside(self, trigger: Trigger) -> None:
        """:meth:`read`, on the kill's behalf: the pump records it at the wake-up this brings."""
        if self.read(trigger) and not self.frozen:
            self.notifier.poke()

    def freeze(self) -> None:
        """A kill froze the controller: reads are held from now until :meth:`thaw`."""
        self.frozen = True

    def read_frozen(self) -> None:
        """The last read before SIGKILL (the study cannot write more): accounted now, held until the thaw."""
        records, issues = self.tail.read_new()
        for r in records:
            self.accounts.add(r)
        if records or issues:
            self._held.append((records, issues, time.time()))

    def thaw(self) -> None:
        """SIGKILL was sent, or the controller let go: the held reads go to the pump, which this wakes."""
        self.frozen = False
        self._ready.extend(self._held)
        self._held = []
        if self._ready:
            self.notifier.poke()

    def take_ready(self) -> list[Read]:
        """The reads to record now, oldest first (none while held)."""
        ready = list(self._ready)
        self._ready.clear()
        return ready

    def close(self) -> None:
        self.notifier.close()
        self.tail.close()
