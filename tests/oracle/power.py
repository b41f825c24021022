"""Power loss (§9.3): a kill folder's ``power.json``, read and held to ``kill.json``, ``ledger-at-kill.json`` and the
ledger, and what a power loss it explains changes in how the ledger is read.

docs/contract.md ("Power loss (§9.3): `kills/<n>/power.json` and `kills/<n>/lost/`"): "The judge reads the kill's
`ledger-at-kill.json` as the ledger before the loss, and the ledger's first `ledgerSeqAfter` records must equal its
first `ledgerSeqAfter` records; the records after those in `ledger-at-kill.json` are lost, as are the lines of
`timeline.jsonl` that saw them before the kill: the resumed controller writes its own from seq
`ledgerSeqAfter + 1` ... A shrink of the ledger that no `power.json` explains is `ledgerWellFormed` ✗ as before."

A ``power.json`` is trusted only when it is read as the console writes it and every field is of its record and
agrees with ``kill.json`` and ``ledger-at-kill.json``; one that is not (refused unread, not JSON, a field missing
or of another type, a negative size, a ``ledgerSeqAfter`` past ``beforeKillSeq`` or past what
``ledger-at-kill.json`` holds, ...) explains nothing: the kill is judged as a kill without a power loss,
``killEvidence`` fails naming why, the folder is incomplete for its stage (``killTriggered``), and a ledger that is
not what it was at the kill fails ``ledgerWellFormed`` (README.md, open question 97).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from tests.oracle.evidence import Ledger, LossWindow, Record, Timeline, parse_power_point, parse_state
from tests.oracle.killfolder import KillFolder
from tests.oracle.reading import BigInt, file_size, quote, strict_equal
from tests.oracle.times import FLOAT_SLACK, epoch, parse_time
from tests.oracle.verdict import Tally

S, LWF = "study", "ledgerWellFormed"
POWER = "power.json"
SIZES = ("sizeBefore", "durable", "sizeAfter", "zeroTail")


@dataclass
class PowerLoss:
    """A power loss a kill folder's power.json explains: the ledger at the kill (before the loss) and where the
    ledger as it ends takes over from it."""

    n: int
    at: Fraction  # kill.json's at
    before_seq: int  # kill.json's beforeKillSeq
    seq_after: int  # power.json's ledgerSeqAfter: the last record kept
    at_epoch: Fraction  # power.json's atEpoch: when the files were rewritten
    kept_ok: bool  # the ledger's records to seq_after are ledger-at-kill.json's, exactly
    records: list[Record]  # the ledger at the kill: the records kept, then those lost
    lost: list[Record]  # ledger-at-kill.json's records after seq_after

    def by_seq(self, seq: Any) -> Record | None:
        if not (isinstance(seq, int) and not isinstance(seq, bool)):
            return None
        return next((r for r in self.records if r.seq == seq), None)

    def took(self, rec: Record | None) -> bool:
        """Whether a record of the ledger at the kill was lost (its seq after ledgerSeqAfter)."""
        seq = _seq(rec.seq) if rec is not None else None
        return seq is not None and seq > self.seq_after

    @property
    def window(self) -> LossWindow:
        return LossWindow(self.n, self.at, self.seq_after, self.before_seq)


@dataclass
class Powers:
    """Every kill folder's power.json, read: the losses trusted, and for each kill why its power.json is not
    trusted (killEvidence's reasons), or what of its lost/ files is wrong (killEvidence's, the loss still read)."""

    trusted: dict[int, PowerLoss] = field(default_factory=dict)
    untrusted: set[int] = field(default_factory=set)  # power.json there (read or not) and not trusted
    problems: dict[int, list[str]] = field(default_factory=dict)

    @property
    def windows(self) -> tuple[LossWindow, ...]:
        return tuple(p.window for p in self.trusted.values())


def read_powers(out: Path, folders: list[KillFolder], ledger: Ledger) -> Powers:
    powers = Powers()
    for kf in folders:
        if kf.unread is not None or POWER not in kf.present:
            continue
        loss, problems = read_power(out, kf, ledger)
        if loss is None:
            powers.untrusted.add(kf.n)
        else:
            powers.trusted[kf.n] = loss
        if problems:
            powers.problems[kf.n] = problems
    return powers


def _path(value: Any) -> bool:
    """A path relative to OUT/study, '/' separated: no leading '/', no empty, '.' or '..' part, no NUL."""
    if not isinstance(value, str) or not value or "\x00" in value:
        return False
    return all(part not in ("", ".", "..") for part in value.split("/"))


def _size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _entry_problem(path: str, entry: Any, state: tuple[str, str | None]) -> str | None:
    """Why a ``files`` entry is not its record: ``sizeBefore``, ``durable``, ``sizeAfter``, ``zeroTail`` sizes (integers
    from 0), ``lost`` ``lost/<path>`` or null, and what a real file system can leave in that state: zeros at its end
    only in ``zeros`` (then up to the size it had), its durable bytes kept, nothing kept beyond what it had, and the
    bytes cut kept in ``lost/<path>`` exactly when some were cut."""
    if not isinstance(entry, dict):
        return "is not an object"
    for key in SIZES:
        if key not in entry:
            return f"has no {key}"
        if not _size(entry[key]):
            return f"has a {key} that is not a size (an integer from 0)"
    if "lost" not in entry:
        return "has no lost"
    before, durable, after, zeros = (entry[k] for k in SIZES)
    kept = after - zeros
    if zeros > after:
        return "has a zeroTail larger than its sizeAfter"
    if zeros and state[0] != "zeros":
        return "has a zeroTail, and the state is not zeros"
    if state[0] == "zeros" and after != before:
        return "is not zeros up to the size it had (sizeAfter is not sizeBefore)"
    if kept > before:
        return "keeps more bytes than it had (sizeAfter - zeroTail past sizeBefore)"
    if durable > kept:
        return "keeps less than its durable size"
    if state[0] in ("synced", "zeros") and kept != durable:
        return "is not at its durable size"
    lost = entry["lost"]
    if kept == before:
        if lost is not None:
            return "names lost bytes, and none were cut"
    elif lost != f"lost/{path}":
        return "does not name lost/<its path> for the bytes cut"
    return None


def read_power(out: Path, kf: KillFolder, ledger: Ledger) -> tuple[PowerLoss | None, list[str]]:
    """The power loss a kill folder's power.json explains, or None and why it explains none; and, for a loss
    trusted, what of its ``lost/`` files is wrong."""
    rel = f"{kf.rel}/{POWER}"
    if POWER in kf.problems:
        return None, []  # refused unread, not JSON, not an object: killEvidence says so already (kf.problems)
    p = kf.power
    if p is None:
        return None, [f"{rel}: not read"]
    untrusted: list[str] = []

    def bad(why: str) -> None:
        untrusted.append(f"{rel}: {why}: the power loss it describes cannot be read")

    k = kf.kill
    point = p.get("point")
    parsed = parse_power_point(point)
    if parsed is None:
        bad("point is not a power point")
    if k is None:
        bad("kill.json cannot be read to hold it to")
        k = {}
    elif k.get("trigger") != "auto" or k.get("point") != point:
        bad("point is not kill.json's (an automatic kill at that power point)")
    state = parse_state(p.get("state"))
    if state is None:
        bad("state is none of synced, synced+K (K from 1), torn, zeros")
    elif parsed is not None and state != parsed[1]:
        bad("state is not its point's")
    at = parse_time(k.get("at"))
    at_epoch = epoch(p.get("atEpoch"))
    if at_epoch is None:
        bad("atEpoch is not a time")
    elif at is not None and at_epoch < at - FLOAT_SLACK:
        bad("atEpoch is before the kill: the files were rewritten once the controller was killed")
    files = p.get("files")
    if not isinstance(files, dict):
        bad("files is not an object")
    else:
        wrong = []
        for path, entry in files.items():
            why = "is not a path in the study's folder" if not _path(path) else None
            why = why or _entry_problem(path, entry, state or ("", None))
            if why is not None:
                wrong.append(f"files[{quote(path)}] {why}")
        for why in wrong[:3]:
            bad(why)
        if len(wrong) > 3:
            bad(f"and {len(wrong) - 3} more files entries not of their record")
    removed = p.get("removed")
    if not (isinstance(removed, list) and all(_path(x) for x in removed)):
        bad("removed is not a list of paths in the study's folder")
    bks = k.get("beforeKillSeq")
    after = p.get("ledgerSeqAfter")
    if not (isinstance(bks, int) and not isinstance(bks, bool) and bks >= 0):
        bad("kill.json's beforeKillSeq is not a seq to hold ledgerSeqAfter to")
    if "ledgerSeqAfter" not in p:
        bad("ledgerSeqAfter is missing")
    elif isinstance(after, BigInt):  # an integer of thousands of digits: negative, or past any beforeKillSeq
        negative = after.text.startswith("-")
        bad("ledgerSeqAfter is negative" if negative else "ledgerSeqAfter is beyond the kill's beforeKillSeq")
    elif not (isinstance(after, int) and not isinstance(after, bool)):
        bad("ledgerSeqAfter is not an integer")
    elif after < 0:
        bad("ledgerSeqAfter is negative")
    elif isinstance(bks, int) and not isinstance(bks, bool) and after > bks:
        bad("ledgerSeqAfter is beyond the kill's beforeKillSeq")
    if at is None:
        bad("kill.json's at is not a time")
    if untrusted:
        return None, untrusted
    assert isinstance(after, int) and isinstance(bks, int) and at is not None and at_epoch is not None
    # ledger-at-kill.json, the ledger before the loss: its records to ledgerSeqAfter are kept, and those after it
    # are the records of seq ledgerSeqAfter + 1 to beforeKillSeq, each a record.
    entries = kf.at_kill
    if entries is None:
        return None, [f"{rel}: ledger-at-kill.json cannot be read: the ledger before the loss is not known"]
    cut = 0
    if after > 0:
        cut = next((i + 1 for i, e in enumerate(entries) if isinstance(e, dict) and _seq(e.get("seq")) == after), -1)
        if cut < 0:
            return None, [f"{rel}: ledgerSeqAfter {after} is beyond what ledger-at-kill.json holds"]
    lost: list[Record] = []
    for i, e in enumerate(entries[cut:]):
        rec = as_record(cut + i + 1, e)
        if rec is None or rec.seq != after + 1 + i:
            why = f"ledger-at-kill.json's record {cut + i + 1} is not the record of seq {after + 1 + i}"
            return None, [f"{rel}: {why}: the records lost are not known"]
        lost.append(rec)
    if (lost[-1].seq if lost else after) != bks:
        why = f"ledger-at-kill.json does not hold the ledger to beforeKillSeq {bks}"
        return None, [f"{rel}: {why}: the loss is not known"]
    # The ledger as it ends: its records to seq ledgerSeqAfter, in file order (as ledger-at-kill.json is held to
    # the ledger's first records), must be ledger-at-kill.json's first ones, exactly.
    kept = kept_records(ledger, after)
    kept_ok = (
        ledger.readable
        and kept is not None
        and len(kept) == cut
        and all(strict_equal(a, r.raw) for a, r in zip(entries[:cut], kept, strict=True))
    )
    if kept_ok:
        assert kept is not None
        records = [*kept, *(_renumber(r, (kept[-1].line if kept else 0) + i + 1) for i, r in enumerate(lost))]
    else:
        records = [r for r in (as_record(i + 1, e) for i, e in enumerate(entries)) if r is not None]
    loss = PowerLoss(kf.n, at, bks, after, at_epoch, kept_ok, records, lost)
    return loss, lost_files(out, kf, p)


def _seq(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _renumber(rec: Record, line: int) -> Record:
    return Record(line, rec.seq, rec.at, rec.time, rec.kind, rec.content, rec.raw, rec.nonfinite, rec.beyond_double)


def as_record(line: int, entry: Any) -> Record | None:
    """A record of ledger-at-kill.json, read as a ledger line is (its seq from 1, at, kind and content of their
    types), on a line of its own; None for an entry that is no record."""
    if not isinstance(entry, dict):
        return None
    seq, at, kind, content = _seq(entry.get("seq")), entry.get("at"), entry.get("kind"), entry.get("content")
    if seq is None or seq < 1 or not isinstance(at, str) or not isinstance(kind, str):
        return None
    if not isinstance(content, dict):
        return None
    return Record(line, seq, at, parse_time(at), kind, content, entry, False)


def kept_records(ledger: Ledger, seq_after: int) -> list[Record] | None:
    """The ledger's records in file order up to the first of seq ``seq_after`` (none for 0); None when it has no
    record of that seq."""
    if seq_after == 0:
        return []
    out: list[Record] = []
    for r in ledger.records:
        out.append(r)
        if r.seq == seq_after:
            return out
    return None


def lost_files(out: Path, kf: KillFolder, p: dict[str, Any]) -> list[str]:
    """docs/contract.md: "Nothing is deleted: the bytes cut from a file are kept in `kills/<n>/lost/<path>` ..., a
    removed file whole at the same place."  Each ``lost/<path>`` a power.json names is a regular file inside the kill
    folder (no link followed), holding as many bytes as were cut: killEvidence's; the loss is still read."""
    problems: list[str] = []
    files = p.get("files") or {}
    for path, entry in files.items():
        lost = entry.get("lost")
        if lost is None:
            continue
        size = file_size(out, f"{kf.rel}/{lost}")
        cut = entry["sizeBefore"] - (entry["sizeAfter"] - entry["zeroTail"])
        where = f"{kf.rel}/lost/{quote(path)}"  # a path of the folder's, validated, shown quoted
        if size is None:
            problems.append(f"{where}: missing or not a regular file (the bytes cut from it)")
        elif size != cut:
            problems.append(f"{where}: {size} bytes, not the {cut} cut from it")
    problems.extend(
        f"{kf.rel}/lost/{quote(path)}: missing or not a regular file (the file removed, kept whole)"
        for path in p.get("removed") or []
        if file_size(out, f"{kf.rel}/lost/{path}") is None
    )
    if len(problems) > 3:
        return [*problems[:3], f"and {len(problems) - 3} more lost/ files not as power.json says"]
    return problems


def judge_power_ledger(t: Tally, ledger: Ledger, timeline: Timeline, powers: Powers, folders: list[KillFolder]) -> None:
    """What a power loss asks of the ledger and the timeline (ledgerWellFormed):

    - a loss trusted: the ledger's records to ``ledgerSeqAfter`` are ledger-at-kill.json's (it shrank there, and
      changed nothing before); the timeline's lines that saw its lost records before the kill saw them as
      ledger-at-kill.json holds them (kind and at as written: the fact is held twice, §6.9);
    - a power.json there and not trusted: the ledger that is not what ledger-at-kill.json says it was at the kill
      shrank or changed, and no power.json explains it (README.md, open question 97)."""
    if not ledger.readable:
        return
    for n, loss in sorted(powers.trusted.items()):
        if not loss.kept_ok:
            t.fail(
                S,
                LWF,
                f"kill {n}: the ledger's records to seq {loss.seq_after} are not ledger-at-kill.json's: the power "
                f"loss (power.json) explains the ledger cut after seq {loss.seq_after}, not changed before it",
            )
        lost = {r.seq: r for r in loss.lost}
        wrong = []
        for seq, seen in sorted(timeline.lost.get(n, {}).items()):
            rec = lost.get(seq)
            if rec is None or timeline.saw_lost(n, rec) is None:
                wrong.append(
                    f"timeline.jsonl line {seen.line}: seq {seq}, lost at kill {n}, is not ledger-at-kill.json's "
                    "record of that seq (its kind or at)"
                )
        for why in wrong[:3]:
            t.fail(S, LWF, why)
        if len(wrong) > 3:
            t.fail(S, LWF, f"and {len(wrong) - 3} more timeline.jsonl lines of records lost at kill {n}")
    by_n = {kf.n: kf for kf in folders}
    for n in sorted(powers.untrusted):
        kf = by_n[n]
        bks = (kf.kill or {}).get("beforeKillSeq")
        if kf.at_kill is None or not (isinstance(bks, int) and not isinstance(bks, bool)):
            continue
        prefix: list[Record] = []
        for r in ledger.records if bks > 0 else []:
            prefix.append(r)
            if r.seq == bks:
                break
        else:
            if bks > 0:
                prefix = []
        same = len(prefix) == len(kf.at_kill) and all(
            strict_equal(a, r.raw) for a, r in zip(kf.at_kill, prefix, strict=True)
        )
        if not same:
            t.fail(
                S,
                LWF,
                f"kill {n}: the ledger is not what ledger-at-kill.json says it was at the kill, and no power.json "
                f"explains a loss ({kf.rel}/{POWER} is not trusted)",
            )
