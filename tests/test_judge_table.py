"""The check table, its summary line, its SVG, and the exit status: what every front end shows of a judgement."""

from __future__ import annotations

import io

from rich.console import Console

from studymon.engine.judge.table import MARKS, check_table, clean, summary_line, table_svg
from studymon.engine.judge.verdict import EXIT_FAIL, EXIT_OK, EXIT_UNKNOWN, Check, exit_status


def _rows() -> list[tuple[str, list[Check]]]:
    return [
        ("alpha", [Check("ledgerWellFormed", True, "9 records, seq 1..9"),
                   Check("chargedOnce", False, "run d1 charged twice", "kill 1 · d1")]),
        ("beta", [Check("exitedCleanly", None, "no end yet")]),
    ]


def _text(renderable: object, width: int = 200) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, force_terminal=False)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_the_table_has_a_row_per_check_the_study_named_once_and_the_marks() -> None:
    table = check_table(_rows(), title="the title")
    assert table.title == "the title" and table.title_justify == "left" and table.expand is False
    assert [c.header for c in table.columns] == ["study", "scope", "check", "", "detail"]
    assert table.row_count == 3
    study = [c.plain for c in table.columns[0].cells]
    assert study == ["alpha", "", "beta"]
    assert [c.plain for c in table.columns[1].cells] == ["study", "kill 1 · d1", "study"]
    assert [c.plain for c in table.columns[2].cells] == ["ledgerWellFormed", "chargedOnce", "exitedCleanly"]
    marks = list(table.columns[3].cells)
    assert [m.plain for m in marks] == ["✓", "✗", "?"]
    assert [str(m.style) for m in marks] == ["bold green", "bold red", "bold yellow"]
    details = list(table.columns[4].cells)
    assert [d.plain for d in details] == ["9 records, seq 1..9", "run d1 charged twice", "no end yet"]
    assert [str(d.style) for d in details] == ["dim", "red", "yellow"]
    assert [str(c.style) for c in table.columns[0].cells] == ["bold cyan"] * 3
    assert table.columns[4].overflow == "fold" and all(c.no_wrap for c in table.columns[:4])
    assert table.columns[3].justify == "center"
    # One section a study: the rows of a study end with a line.
    assert [r.end_section for r in table.rows] == [False, True, True]
    out = _text(table)
    assert out.splitlines()[0].startswith("the title")
    assert check_table([]).title == "studymon checks"


def test_cells_are_text_never_markup_and_control_characters_are_shown() -> None:
    hostile = "[link=https://x]d1[/link]\x1b[2J"
    table = check_table([(hostile, [Check("chargedOnce", False, f"run {hostile}", f"kill 1 · {hostile}")])])
    out = _text(table, width=300)
    assert "[link=https://x]d1[/link]\\x1b[2J" in out and "\x1b" not in out
    assert clean("plain text · ✓") == "plain text · ✓"
    assert clean("a\x1bb\nc\td") == "a\\x1bb\\nc\\td"
    assert clean("\x00") == "\\x00"


def test_the_summary_line_counts_the_worst() -> None:
    rows = _rows()
    line = summary_line(rows)
    assert line.plain == "✗ 1 of 3 checks failed" and str(line.style) == "bold red"
    line = summary_line([("beta", rows[1][1]), ("alpha", rows[0][1][:1])])
    assert line.plain == "? 1 of 2 checks unknown" and str(line.style) == "bold yellow"
    line = summary_line([("alpha", rows[0][1][:1]), ("gamma", [Check("x", True, "y")])])
    assert line.plain == "✓ all 2 checks hold" and str(line.style) == "bold green"
    assert summary_line([("a", [Check("x", False, ""), Check("y", False, ""), Check("z", None, "")])]).plain == (
        "✗ 2 of 3 checks failed")
    assert summary_line([]).plain == "✓ all 0 checks hold"


def test_the_svg_holds_the_table_and_its_summary() -> None:
    svg = table_svg("alpha", _rows()[0][1])
    # rich writes every space as &#160; in its SVG
    text = svg.replace("&#160;", " ")
    assert svg.startswith("<svg") and ">studymon — alpha</text>" in text
    assert 'viewBox="0 0 17' in svg  # 140 columns wide
    for part in ("studymon checks — alpha", "ledgerWellFormed", "chargedOnce", "run d1 charged twice",
                 "✗ 1 of 2 checks failed"):
        assert part in text, part
    assert "#" in svg and "fill" in svg  # coloured: a truecolor console


def test_the_marks() -> None:
    assert MARKS == {True: ("✓", "bold green"), False: ("✗", "bold red"), None: ("?", "bold yellow")}


def test_the_exit_status_says_the_worst_verdict() -> None:
    assert (EXIT_OK, EXIT_FAIL, EXIT_UNKNOWN) == (0, 1, 3)
    assert exit_status([]) == 0
    assert exit_status([True, True]) == 0
    assert exit_status([True, None]) == 3
    assert exit_status([None, False, True]) == 1
    assert exit_status(iter([False])) == 1
    assert exit_status([None]) == 3
