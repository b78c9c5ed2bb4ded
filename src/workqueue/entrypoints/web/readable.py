"""How the pages write numbers, moments and progress for people (the templates' filters).

Pure functions of their arguments, so the tests judge each one directly:

- :func:`thousands`: a count with thousands separators (``20,000``).
- :func:`relative_time` and :func:`when`: a moment against the view's clock
  (``4 s ago``, ``in 3 min``), in a ``<time>`` element whose ``datetime`` and
  ``title`` (shown on hover) hold the exact ISO 8601 moment. "Now" is the
  :class:`~workqueue.domain.Clock`'s, passed in by the page, so a page renders the
  same on a FakeClock every time.
- :func:`count_class`: the CSS class of a count: ``zero`` (muted) when it is 0,
  else the status's class, so a colour only ever marks items that are there.
- :func:`progress_bar`: a progress report that follows the convention
  ``{"done": <number>, "total": <number above 0>}`` as a bar's numbers;
  :func:`progress_rest` the report's other keys, shown beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import TypeGuard

from markupsafe import Markup, escape
from pydantic import JsonValue

__all__ = [
    "DONE",
    "NO_VALUE",
    "TOTAL",
    "ProgressBar",
    "count_class",
    "due",
    "filled",
    "number",
    "progress_bar",
    "progress_rest",
    "relative_time",
    "thousands",
    "when",
]

NO_VALUE = "\u2013"  # an en dash
"""What a page shows where there is no value."""

DONE = "done"
TOTAL = "total"
"""The keys of a progress report a bar is drawn from (the README's convention)."""

# Each unit and its length in seconds, largest first; a moment is said in the
# largest unit it has one whole of.
_UNITS = (("d", 86400), ("h", 3600), ("min", 60))

_TIME = Markup('<time datetime="{0}" title="{0}">{1}</time>')


def thousands(count: int) -> str:
    """``count`` with a comma between each group of three digits: ``20,000``."""
    return f"{count:,}"


def number(value: float) -> str:
    """An int as :func:`thousands` writes it; a float too, with its fraction: ``1,234.5``."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,}"
    return thousands(int(value))


def _span(seconds: float) -> str:
    """A positive span in its largest whole unit, rounded down: ``3 min``, ``4 s``."""
    whole = math.floor(seconds)
    for unit, size in _UNITS:
        if whole >= size:
            return f"{whole // size} {unit}"
    return f"{whole} s"


def relative_time(moment: datetime, now: datetime) -> str:
    """``moment`` said from ``now``: ``4 s ago``, ``in 3 min``, ``now`` within a second."""
    seconds = (moment - now).total_seconds()
    if seconds >= 1:
        return f"in {_span(seconds)}"
    if seconds <= -1:
        return f"{_span(-seconds)} ago"
    return "now"


def when(iso: str | None, now: datetime) -> Markup:
    """A ``<time>`` element saying the ISO 8601 moment ``iso`` from ``now``, exact on hover.

    None (no such moment) reads as a dash.
    """
    if iso is None:
        return escape(NO_VALUE)
    moment = datetime.fromisoformat(iso)
    # Markup.format escapes its arguments.
    return _TIME.format(iso, relative_time(moment, now))


def due(iso: str, now: datetime) -> Markup:
    """When a queued item may be claimed: its ``run_at`` (:func:`when`) while ahead, else now."""
    if datetime.fromisoformat(iso) > now:
        return when(iso, now)
    return Markup("now")


def count_class(status: str, count: int) -> str:
    """The CSS class of a count of ``status`` items: ``zero`` when there are none."""
    if count == 0:
        return "zero"
    return f"status-{status}"


@dataclass(frozen=True, slots=True)
class ProgressBar:
    """How far a run has come: ``done`` of ``total``, the bar's fill in percent
    (:func:`filled`) and both numbers as the page writes them (``1,234 / 20,000``)."""

    done: float
    total: float
    percent: int
    text: str


def filled(done: float, total: float) -> int:
    """The share ``done`` of ``total``, 0 to 100, rounded down (past the total: full)."""
    return math.floor(min(max(done / total, 0), 1) * 100)


def _is_number(value: JsonValue) -> TypeGuard[float]:
    # bool is an int to Python, not a number to a reader of the convention.
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def progress_bar(progress: JsonValue) -> ProgressBar | None:
    """The bar of a progress report with numeric ``done`` and a ``total`` above 0, else None."""
    if not isinstance(progress, dict):
        return None
    done, total = progress.get(DONE), progress.get(TOTAL)
    if not (_is_number(done) and _is_number(total)):
        return None
    if total <= 0:
        return None
    text = f"{number(done)} / {number(total)}"
    return ProgressBar(done=done, total=total, percent=filled(done, total), text=text)


def progress_rest(progress: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """The keys of a report with a bar (a JSON object), but ``done`` and ``total``."""
    return {key: value for key, value in progress.items() if key not in (DONE, TOTAL)}
