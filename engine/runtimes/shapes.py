"""docker's shapes, for ``studymon runtime``: what ``ps`` and ``events`` print, Go's templates, filters, times.

Each function answers as docker 28 does for the same container or event
(read from its command line against an engine; ``tests/test_runtime_cli.py``
compares the two).  Pure: no runtime is touched here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from studymon.engine.io.clock import parse_rfc3339
from studymon.engine.runtimes.base import Event, Inspect
from studymon.engine.runtimes.process import ZERO_TIME

PROG = "studymon runtime"
# docker's exit statuses.
EXIT_ERROR = 1  # what the daemon refuses; a wrong number of arguments
EXIT_USAGE = 125  # a flag that cannot be parsed; a run that cannot be created
_ZERO = parse_rfc3339(ZERO_TIME)
_PS_STATUSES = ("created", "restarting", "running", "removing", "paused", "exited", "dead")
# Filters docker's ``ps`` has that this does not.
_PS_FILTERS_LEFT_OUT = ("ancestor", "before", "since", "volume", "network", "publish", "expose", "health", "isolation")
# Event filters of things the process runtime has none of: each matches no event.
_EVENT_FILTERS_OF_NOTHING = ("config", "daemon", "network", "node", "plugin", "secret", "service", "volume")


class Failure(Exception):
    """A refusal: one line on standard error (and the usage of the command named ``usage``), and docker's status."""

    def __init__(self, message: str, status: int = EXIT_ERROR, usage: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.usage = usage


def name_of(state: Inspect) -> str:
    return str(state["Name"]).lstrip("/")


# --- Go's templates, the part a study uses --------------------------------------------------
_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")


@dataclass(frozen=True)
class Template:
    """A format of ``{{json .}}``, ``{{json .Path}}`` and ``{{.Path}}`` actions between text.

    ``fields`` are what ``.Path`` reads (docker's Go names), ``raw`` what
    ``{{json .}}`` prints.  A key missing at the top, or anywhere when
    ``strict``, is an error, as in docker (``inspect`` reads maps strictly);
    deeper in a map it is ``<no value>``.
    """

    text: str
    strict: bool = False

    def __post_init__(self) -> None:
        if self.text.split(maxsplit=1)[:1] == ["table"]:
            raise Failure(f"template: the table directive is not supported by {PROG}: give the fields alone")
        for action in _ACTION.findall(self.text):
            _action_parts(action)
        if "{{" in _ACTION.sub("", self.text):
            raise Failure(f"template parsing error: unclosed action in {self.text!r}")

    def render(self, fields: Any, raw: Any) -> str:
        def one(match: re.Match[str]) -> str:
            as_json, path = _action_parts(match[1])
            value = raw if as_json and not path else self._lookup(fields, path, match[0])
            return go_json(value) if as_json else go_text(value)

        return _ACTION.sub(one, self.text)

    def _lookup(self, value: Any, path: list[str], action: str) -> Any:
        for depth, key in enumerate(path):
            if isinstance(value, dict) and key in value:
                value = value[key]
            elif isinstance(value, dict) and depth > 0 and not self.strict:
                return "<no value>"
            else:
                raise Failure(f'template: executing "" at <{action[2:-2].strip()}>: no field or key "{key}"')
        return value


def _action_parts(action: str) -> tuple[bool, list[str]]:
    """``(json?, path)`` of an action; anything else is refused."""
    words = action.split()
    as_json = bool(words) and words[0] == "json"
    rest = words[1:] if as_json else words
    if len(rest) == 1 and re.fullmatch(r"\.|(\.[A-Za-z_][\w-]*)+", rest[0]):
        return as_json, [k for k in rest[0].split(".") if k]
    raise Failure(
        f"template: {{{{{action}}}}} is not supported by {PROG}: use {{{{json .}}}}, {{{{json .Field}}}} "
        "or {{.Field.Key}}"
    )


def go_json(value: Any, indent: int | None = None) -> str:
    """JSON as Go writes it: UTF-8, compact (or indented), ``<``, ``>``, ``&`` escaped."""
    separators = (",", ":") if indent is None else (",", ": ")
    text = json.dumps(value, ensure_ascii=False, indent=indent, separators=separators)
    for char, escape in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escape)
    return text


def go_text(value: Any) -> str:
    """A value as Go's templates print it (``true``, ``127``, ``map[a:1 b:]``, ``[x y]``, ``<nil>``)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_text(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_text(v) for v in value) + "]"
    return str(value)


# --- times and durations as docker prints and reads them ------------------------------------
def human_duration(seconds: float) -> str:
    """go-units' ``HumanDuration``: ``Less than a second``, ``3 seconds``, ``About a minute``, ``5 hours``..."""
    s = int(seconds)
    if s < 1:
        return "Less than a second"
    if s == 1:
        return "1 second"
    if s < 60:
        return f"{s} seconds"
    minutes = s // 60
    if minutes == 1:
        return "About a minute"
    if minutes < 60:
        return f"{minutes} minutes"
    hours = int(seconds / 3600 + 0.5)
    if hours == 1:
        return "About an hour"
    if hours < 48:
        return f"{hours} hours"
    if hours < 24 * 7 * 2:
        return f"{hours // 24} days"
    if hours < 24 * 30 * 2:
        return f"{hours // 24 // 7} weeks"
    if hours < 24 * 365 * 2:
        return f"{hours // 24 // 30} months"
    return f"{int(seconds / 3600) // 24 // 365} years"


_DURATION = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def read_time(text: str, now: float) -> float:
    """Epoch seconds of ``--since``/``--until``: a Unix time, an RFC 3339 time or date, or a Go duration ago."""
    body = text.lstrip("+-")
    if body and _DURATION.sub("", body) == "" and _DURATION.search(body):
        ago = sum(float(n) * _UNITS[unit] for n, unit in _DURATION.findall(body))
        return now - ago if not text.startswith("-") else now + ago
    try:
        return float(text)
    except ValueError:
        pass
    try:
        if text.endswith(("Z", "z")) or re.search(r"[+-]\d\d:\d\d$", text):
            return parse_rfc3339(text.upper() if text.endswith("z") else text)
        return datetime.fromisoformat(text).astimezone().timestamp()  # no zone: the local time, as docker reads it
    except ValueError:
        raise Failure(f'failed to parse value as time or duration: "{text}"') from None


def local_time(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds).astimezone()


def rfc3339_nano(ns: int) -> str:
    """Go's RFC3339Nano in local time: trailing zeros of the fraction dropped, ``Z`` for UTC."""
    sec, frac = divmod(ns, 1_000_000_000)
    dt = local_time(sec)
    fraction = f".{frac:09d}".rstrip("0").rstrip(".")
    offset = dt.strftime("%z")
    zone = "Z" if offset in ("+0000", "-0000") else f"{offset[:3]}:{offset[3:]}"
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + fraction + zone


def epoch(text: str) -> float:
    """Epoch seconds of an inspect's time; docker's zero time for one that is not a time."""
    try:
        return parse_rfc3339(text)
    except ValueError:
        return _ZERO


def status_text(state: Inspect, now: float) -> str:
    """The ``Status`` column: ``Up 5 seconds``, ``Exited (3) 2 minutes ago``, ``Created``, ``Dead``."""
    st = state["State"]
    status = st["Status"]
    if status == "running":
        return "Up " + human_duration(now - epoch(st["StartedAt"]))
    if status == "exited":
        finished = epoch(st["FinishedAt"])
        if finished <= _ZERO:
            return ""
        return f"Exited ({st['ExitCode']}) {human_duration(now - finished)} ago"
    if status == "removing":
        return "Removal In Progress"
    return str(status).capitalize()


def command_text(state: Inspect) -> str:
    """docker's ``Command``: the path and the arguments, one holding a space put in single quotes."""
    args = [f"'{a}'" if " " in a else a for a in state.get("Args") or []]
    return " ".join([str(state.get("Path", "")), *args])


def ps_row(state: Inspect, now: float, trunc: bool) -> dict[str, Any]:
    """A ``docker ps --format '{{json .}}'`` object (its keys, in its order) for a container."""
    created = epoch(state["Created"])
    command = command_text(state)
    if trunc and len(command) > 20:
        command = command[:19] + "…"
    labels = state["Config"].get("Labels") or {}
    return {
        "Command": json.dumps(command, ensure_ascii=False),
        "CreatedAt": local_time(int(created)).strftime("%Y-%m-%d %H:%M:%S %z %Z"),
        "ID": state["Id"][:12] if trunc else state["Id"],
        "Image": state["Config"].get("Image", ""),
        "Labels": ",".join(f"{k}={labels[k]}" for k in sorted(labels)),
        "LocalVolumes": "0",
        "Mounts": "",
        "Names": name_of(state),
        "Networks": "",
        "Platform": None,
        "Ports": "",
        "RunningFor": human_duration(now - created) + " ago",
        "Size": "0B",
        "State": state["State"]["Status"],
        "Status": status_text(state, now),
    }


def ps_table(rows: list[dict[str, Any]]) -> str:
    """``docker ps``'s table (Go's tabwriter): each column three wider than its widest cell, ten at least.

    The last column is not padded.
    """
    columns = [
        ("CONTAINER ID", "ID"),
        ("IMAGE", "Image"),
        ("COMMAND", "Command"),
        ("CREATED", "RunningFor"),
        ("STATUS", "Status"),
        ("PORTS", "Ports"),
        ("NAMES", "Names"),
    ]
    cells = [[title for title, _ in columns]] + [[str(r[key]) for _, key in columns] for r in rows]
    widths = [max(10, 3 + max(len(c[i]) for c in cells)) for i in range(len(columns) - 1)]
    return "".join(
        "".join(c.ljust(w) for c, w in zip(line[:-1], widths, strict=True)) + line[-1] + "\n" for line in cells
    )


def event_fields(event: Event) -> dict[str, Any]:
    """An event under the names Go's templates use for it (``.Action``, ``.Actor.Attributes.name``, ``.TimeNano``)."""
    actor = event.get("Actor") or {}
    return {
        "Status": event.get("status", ""),
        "ID": event.get("id", ""),
        "From": event.get("from", ""),
        "Type": event.get("Type", ""),
        "Action": event.get("Action", ""),
        "Actor": {"ID": actor.get("ID", ""), "Attributes": actor.get("Attributes") or {}},
        "Scope": event.get("scope", ""),
        "Time": event.get("time", 0),
        "TimeNano": event.get("timeNano", 0),
    }


def event_line(event: Event) -> str:
    """``docker events`` without a format: time, type, action, actor, and the attributes."""
    actor = event.get("Actor") or {}
    attributes = actor.get("Attributes") or {}
    line = f"{rfc3339_nano(int(event.get('timeNano', 0)))} {event.get('Type')} {event.get('Action')} {actor.get('ID')}"
    if attributes:
        line += " (" + ", ".join(f"{k}={attributes[k]}" for k in sorted(attributes)) + ")"
    return line


# --- filters -------------------------------------------------------------------------------
def read_filters(items: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            raise Failure(
                f'invalid argument "{item}" for "-f, --filter" flag: bad format of filter (expected name=value)',
                EXIT_USAGE,
            )
        out.setdefault(key.strip().lower(), []).append(value)
    return out


def _regex_match(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False  # as docker: a pattern that does not compile matches nothing


def _labels_match(wanted: list[str], labels: dict[str, str]) -> bool:
    """Every ``K`` is there, every ``K=V`` has that value."""
    for item in wanted:
        key, eq, value = item.partition("=")
        if key not in labels or (eq and labels[key] != value):
            return False
    return True


def ps_filter(filters: dict[str, list[str]]) -> Callable[[Inspect], bool]:
    """A container test for ``ps --filter``: each key's values are alternatives, keys must all hold."""
    for key, values in filters.items():
        if key in _PS_FILTERS_LEFT_OUT or key == "is-task":
            raise Failure(f"Error: the filter '{key}' is docker's, not {PROG}'s: use name, id, label, status or exited")
        if key not in ("name", "id", "label", "status", "exited"):
            raise Failure(f"Error: Invalid filter '{key}'")
        for value in values:
            if key == "status" and value not in _PS_STATUSES:
                raise Failure(f"Error: Invalid filter 'status={value}'")
            if key == "exited" and not re.fullmatch(r"-?\d+", value):
                raise Failure(f"Error: Invalid filter 'exited={value}'")

    def test(state: Inspect) -> bool:
        name = name_of(state)
        st = state["State"]
        checks: dict[str, Callable[[str], bool]] = {
            "name": lambda v: _regex_match(v, name) or _regex_match(v, "/" + name),
            "id": lambda v: _regex_match(v, state["Id"]),
            "status": lambda v: st["Status"] == v,
            "exited": lambda v: st["Status"] == "exited" and int(st["ExitCode"]) == int(v),
        }
        for key, values in filters.items():
            if key == "label":
                if not _labels_match(values, state["Config"].get("Labels") or {}):
                    return False
            elif not any(checks[key](v) for v in values):
                return False
        return True

    return test


def event_filter(filters: dict[str, list[str]]) -> Callable[[Event], bool]:
    """An event test for ``events --filter`` (container, event, image, label, type, scope)."""
    known = ("container", "event", "image", "label", "type", "scope", *_EVENT_FILTERS_OF_NOTHING)
    for key in filters:
        if key not in known:
            raise Failure(f"Error: Invalid filter '{key}'")

    def test(event: Event) -> bool:
        actor = event.get("Actor") or {}
        attributes = actor.get("Attributes") or {}
        cid = str(actor.get("ID", ""))
        name = str(attributes.get("name", ""))
        checks: dict[str, Callable[[str], bool]] = {
            # docker's FuzzyMatch: the value starts the Id or the name
            "container": lambda v: cid.startswith(v) or name.startswith(v),
            "event": lambda v: event.get("Action") == v,
            "image": lambda v: v in (attributes.get("image"), event.get("from")),
            "type": lambda v: event.get("Type") == v,
            "scope": lambda v: event.get("scope") == v,
        }
        for key, values in filters.items():
            if key in _EVENT_FILTERS_OF_NOTHING:
                return False
            if key == "label":
                if not _labels_match(values, attributes):
                    return False
            elif not any(checks[key](v) for v in values):
                return False
        return True

    return test
