"""Every documented filter of ``studymon runtime ps`` and ``events``, and how ``inspect`` finds a container.

Pure logic over containers' and events' shapes (docker's): each filter must keep
some containers and drop others, so that a filter that ignores its value (a
``label=K=V`` read as ``label=K``, an ``exited=N`` read as "exited") fails a
case here in well under a second.  The same filters against a real runtime and
docker itself are in ``tests/test_runtime_cli.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from studymon.engine.runtimes.cli import find
from studymon.engine.runtimes.shapes import Failure, event_filter, ps_filter, read_filters


def box(name: str, cid: str, status: str, code: int = 0, **labels: str) -> dict[str, Any]:
    return {"Id": cid, "Name": "/" + name, "State": {"Status": status, "ExitCode": code}, "Config": {"Labels": labels}}


BOXES = [
    box("inforsi-a-d1", "aa11" + "0" * 60, "exited", 0, **{"studymon.study": "a", "purpose": "diagnosis"}),
    box("inforsi-a-d2", "aa22" + "0" * 60, "exited", 2, **{"studymon.study": "a", "purpose": "ablation"}),
    box("inforsi-b-d1", "bb11" + "0" * 60, "running", 0, **{"studymon.study": "b"}),
    box("other", "cc11" + "0" * 60, "created", 0),
]


@pytest.mark.parametrize(("filters", "kept"), [
    (["name=inforsi-a-"], ["inforsi-a-d1", "inforsi-a-d2"]),
    (["name=^/inforsi-b"], ["inforsi-b-d1"]),  # docker's names begin with "/"
    (["name=d1$"], ["inforsi-a-d1", "inforsi-b-d1"]),  # a pattern
    (["name=["], []),  # a pattern that does not compile matches nothing
    (["id=^aa"], ["inforsi-a-d1", "inforsi-a-d2"]),
    (["id=bb11"], ["inforsi-b-d1"]),
    (["label=studymon.study"], ["inforsi-a-d1", "inforsi-a-d2", "inforsi-b-d1"]),
    (["label=studymon.study=a"], ["inforsi-a-d1", "inforsi-a-d2"]),  # the value counts
    (["label=studymon.study=b"], ["inforsi-b-d1"]),
    (["label=studymon.study=a", "label=purpose=ablation"], ["inforsi-a-d2"]),  # labels: all of them
    (["status=running"], ["inforsi-b-d1"]),
    (["status=exited"], ["inforsi-a-d1", "inforsi-a-d2"]),
    (["status=created", "status=running"], ["inforsi-b-d1", "other"]),  # one key's values: any of them
    (["exited=0"], ["inforsi-a-d1"]),  # the code counts, and only an exited container has one
    (["exited=2"], ["inforsi-a-d2"]),
    (["exited=0", "exited=2"], ["inforsi-a-d1", "inforsi-a-d2"]),
    (["name=inforsi-", "status=exited", "exited=2"], ["inforsi-a-d2"]),  # keys: all of them
])
def test_each_ps_filter_keeps_what_it_names(filters: list[str], kept: list[str]) -> None:
    keep = ps_filter(read_filters(filters))
    assert [b["Name"][1:] for b in BOXES if keep(b)] == kept


@pytest.mark.parametrize(("filters", "said"), [
    (["colour=red"], "Error: Invalid filter 'colour'"),
    (["status=sleeping"], "Error: Invalid filter 'status=sleeping'"),
    (["exited=yes"], "Error: Invalid filter 'exited=yes'"),
    (["ancestor=busybox"], "the filter 'ancestor' is docker's"),
    (["is-task=true"], "the filter 'is-task' is docker's"),
])
def test_a_ps_filter_that_cannot_be_read_is_refused_by_name(filters: list[str], said: str) -> None:
    with pytest.raises(Failure) as err:
        ps_filter(read_filters(filters))
    assert said in str(err.value)


def test_a_filter_without_a_value_is_refused_as_docker_refuses_it() -> None:
    from studymon.engine.runtimes.shapes import EXIT_USAGE

    with pytest.raises(Failure, match="bad format of filter") as err:
        read_filters(["status"])
    assert err.value.status == EXIT_USAGE


def test_an_event_s_image_is_its_attribute_or_its_from() -> None:
    keep = event_filter(read_filters(["image=only-from"]))
    assert keep({**EVENTS[3], "from": "only-from"}) and not keep(EVENTS[3])
    attribute = event("start", "x", "ee11", image="only-attribute")
    attribute["from"] = "something-else"
    assert event_filter(read_filters(["image=only-attribute"]))(attribute)


def event(action: str, name: str, cid: str, **attributes: str) -> dict[str, Any]:
    return {"Type": "container", "Action": action, "scope": "local", "from": attributes.get("image", "img"),
            "Actor": {"ID": cid, "Attributes": {"name": name, "image": "img", **attributes}}}


EVENTS = [
    event("create", "inforsi-a-d1", "aa11", **{"studymon.study": "a"}),
    event("start", "inforsi-a-d1", "aa11", **{"studymon.study": "a"}),
    event("die", "inforsi-b-d1", "bb11", exitCode="1", **{"studymon.study": "b"}),
    event("destroy", "other", "cc11", image="busybox"),
]


@pytest.mark.parametrize(("filters", "kept"), [
    (["container=inforsi-a"], [0, 1]),  # the start of the name
    (["container=bb"], [2]),  # or of the Id
    (["event=die"], [2]),
    (["event=create", "event=destroy"], [0, 3]),
    (["image=busybox"], [3]),
    (["image=img"], [0, 1, 2]),
    (["label=studymon.study=b"], [2]),  # the value counts
    (["label=studymon.study"], [0, 1, 2]),
    (["type=container"], [0, 1, 2, 3]),
    (["type=network"], []),
    (["scope=local"], [0, 1, 2, 3]),
    (["scope=swarm"], []),
    (["volume=v"], []),  # the process runtime has none
    (["container=inforsi-a", "event=start"], [1]),
])
def test_each_events_filter_keeps_what_it_names(filters: list[str], kept: list[int]) -> None:
    keep = event_filter(read_filters(filters))
    assert [i for i, e in enumerate(EVENTS) if keep(e)] == kept


def test_an_unknown_events_filter_is_refused() -> None:
    with pytest.raises(Failure, match="Invalid filter 'colour'"):
        event_filter(read_filters(["colour=red"]))


class Boxes:
    """What :func:`find` asks of a runtime: a container by name, and the list of them."""

    def __init__(self, boxes: list[dict[str, Any]]) -> None:
        self.boxes = boxes

    def inspect(self, name: str) -> dict[str, Any] | None:
        return next((b for b in self.boxes if b["Name"] == "/" + name), None)

    def list(self, prefix: str) -> list[dict[str, Any]]:
        return [b for b in self.boxes if b["Name"][1:].startswith(prefix)]


def test_inspect_finds_by_name_then_by_an_unambiguous_start_of_the_id_and_refuses_an_ambiguous_one() -> None:
    rt: Any = Boxes(BOXES)
    assert find(rt, "inforsi-b-d1") is BOXES[2] and find(rt, "/inforsi-b-d1") is BOXES[2]
    assert find(rt, "bb") is BOXES[2] and find(rt, "aa11") is BOXES[0]
    with pytest.raises(Failure, match="multiple IDs found with provided prefix: aa"):
        find(rt, "aa")
    assert find(rt, "dd") is None and find(rt, "nothing-like-it") is None
