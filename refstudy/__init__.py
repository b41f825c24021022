"""The reference study: a controller that honours the study contract in full.

It is a study like any other; the engine never special-cases it.  Its
template is the console's default (:func:`template`).
"""

from pathlib import Path


def template() -> Path:
    """The reference study's template, ``research.json`` beside this package."""
    return Path(__file__).resolve().with_name("research.json")
