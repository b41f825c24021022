"""The reference study: a controller that honours the study contract in full.

It is a study like any other; the engine never special-cases it.
"""
