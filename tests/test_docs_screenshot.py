"""The README's screenshot is drawn the same in every SVG viewer: no text run has spaces at its edges.

``docs/screenshot.py`` takes the picture from a real demo run (a slow tool,
run by hand); what it does to the exported SVG is tested here on a snapshot
of the console: every character stays where it was, and no run of text
starts or ends with a space (viewers squeeze those, which slid a graph's
blocks under its scale and glued "machine" to "load").
"""

from __future__ import annotations

import html
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = ROOT / "tests" / "__snapshots__" / "test_snapshots"
RUN = re.compile(r'<text [^>]*?x="([0-9.]+)"[^>]*?y="([0-9.]+)"[^>]*?textLength="([0-9.]+)"[^>]*>([^<]*)</text>')


def load_tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("screenshot", ROOT / "docs" / "screenshot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def placed(svg: str) -> set[tuple[int, int, str]]:
    """Every visible character with where it is drawn (x and y to a tenth of a pixel)."""
    out = set()
    for x, y, length, text in RUN.findall(svg):
        chars = html.unescape(text)
        cell = float(length) / len(chars) if chars else 0.0
        for k, ch in enumerate(chars):
            if not ch.isspace():
                out.add((round((float(x) + k * cell) * 10), round(float(y) * 10), ch))
    return out


def test_tidy_keeps_every_character_in_place_and_no_run_has_edge_spaces() -> None:
    tidy = load_tool().tidy_svg
    for name in ("test_main_screen_three_studies.svg", "test_end_of_studies_verdicts.svg"):
        svg = (SNAPSHOTS / name).read_text(encoding="utf-8")
        edged = [t for *_, t in RUN.findall(svg) if t.strip("&#160;") and (t.startswith("&#160;") or t.endswith("&#160;"))]
        assert edged, "the console's export has runs with edge spaces: the case the tidy is for"
        out = tidy(svg)
        assert placed(out) == placed(svg), name
        left = [t for *_, t in RUN.findall(out) if t.startswith("&#160;") or t.endswith("&#160;")]
        assert not left, left[:5]
