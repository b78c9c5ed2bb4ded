"""The Jinja2 environment of the pages: autoescaped, strict, with the view's filters.

Every template is HTML and autoescaped; no template marks table text safe. A
value the table holds (a kind, a payload, an error, a worker id) reaches the page
only through ``{{ ... }}``, escaped, or as the text of a ``<pre>``.
"""

from __future__ import annotations

import math

from jinja2 import Environment, PackageLoader, StrictUndefined

from workqueue.entrypoints.web.documents import compact_json, pretty_json
from workqueue.entrypoints.web.readable import (
    count_class,
    due,
    progress_bar,
    progress_rest,
    thousands,
    when,
)

__all__ = ["duration", "environment"]

_UNITS = (("d", 86400), ("h", 3600), ("min", 60))


def duration(seconds: float | None) -> str:
    """``seconds`` for people: ``0.4 s``, ``12 s``, ``3 min 5 s``, ``2 h 10 min``, ``4 d 1 h``.

    Negative durations (a lease that ran out) read ``-12 s``; None reads as a dash.
    """
    if seconds is None:
        return "\u2013"  # an en dash
    if seconds < 0:
        return "-" + duration(-seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = math.floor(seconds)
    for index, (unit, size) in enumerate(_UNITS):
        if whole >= size:
            smaller_unit, smaller_size = (*_UNITS, ("s", 1))[index + 1]
            return f"{whole // size} {unit} {whole % size // smaller_size} {smaller_unit}"
    return f"{whole} s"


def environment() -> Environment:
    """The environment every page is rendered in."""
    # PackageLoader reads the package's templates/ folder. A name a template uses
    # but the route did not give fails the page instead of rendering as blank.
    env = Environment(
        loader=PackageLoader("workqueue.entrypoints.web"),
        autoescape=True,
        undefined=StrictUndefined,
    )
    env.filters["duration"] = duration
    env.filters["pretty_json"] = pretty_json
    env.filters["compact_json"] = compact_json
    env.filters["thousands"] = thousands
    env.filters["when"] = when
    env.filters["due"] = due
    env.filters["count_class"] = count_class
    env.filters["progress_bar"] = progress_bar
    env.filters["progress_rest"] = progress_rest
    return env
