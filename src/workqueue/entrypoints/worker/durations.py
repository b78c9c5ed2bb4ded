"""Durations as settings: plain seconds in the environment, timedeltas in code."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator

__all__ = [
    "DURATION_HINT",
    "LONGEST_DURATION",
    "Duration",
    "PositiveDuration",
    "parse_duration",
    "seconds_text",
]

_NUMBER_WITH_UNIT = re.compile(
    r"^\s*(-?(?:\d+(?:\.\d*)?|\.\d+))\s*(ms|s|m|h|d)?\s*$", re.IGNORECASE
)
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
# What pydantic reads itself: ISO 8601 (P30D, -PT5M) and [-][D day[s], ]HH:MM:SS.
_PYDANTIC_FORM = re.compile(r"^\s*(-?P|.*:)", re.IGNORECASE)

DURATION_HINT = "expected a duration like 30s, 5m, 1h or a number of seconds"
"""What a duration that cannot be read is told: how one is written."""

LONGEST_DURATION = timedelta(days=36500)
"""The longest duration a setting may have.

Every duration is added to or taken from now; a century is far beyond any
sensible setting and far from the end of the calendar.
"""


def parse_duration(value: object) -> object:
    """Read ``60``, ``"60"``, ``"1.5"``, ``"500ms"``, ``"24h"`` or ``"30d"`` as a timedelta.

    A bare number is seconds, because that is what an operator types into
    ``WORKQUEUE_LEASE_DURATION=60``. A timedelta, an ISO 8601 duration such as
    ``P30D`` or a clock time such as ``01:30:00`` is returned unchanged for
    pydantic to read; any other text is refused saying what a duration looks
    like (pydantic's own wording, "invalid day identifier", says nothing of it).

    :raises ValueError: if the number is too large for a timedelta, or the text
        is no duration (:data:`DURATION_HINT`).
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return _seconds(value)
    if isinstance(value, str):
        match = _NUMBER_WITH_UNIT.match(value)
        if match:
            number, unit = match.groups()
            return _seconds(float(number) * _UNIT_SECONDS[unit.lower() if unit else "s"])
        if not _PYDANTIC_FORM.match(value):
            raise ValueError(DURATION_HINT)
    return value


def _seconds(seconds: float) -> timedelta:
    try:
        return timedelta(seconds=seconds)
    except OverflowError:
        # Raised as ValueError so that pydantic reports it, naming the setting.
        raise ValueError("is too long a duration") from None


def seconds_text(duration: timedelta) -> str:
    """A duration as the operator writes it: seconds, e.g. ``60.0``."""
    return repr(duration.total_seconds())


def _positive(duration: timedelta) -> timedelta:
    if duration <= timedelta(0):
        raise ValueError("must be a positive duration")
    if duration > LONGEST_DURATION:
        raise ValueError(f"must be at most {LONGEST_DURATION.days} days")
    return duration


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]
"""A timedelta setting that also accepts seconds and ``ms``/``s``/``m``/``h``/``d`` suffixes."""

PositiveDuration = Annotated[Duration, AfterValidator(_positive)]
"""A :data:`Duration` above zero and at most :data:`LONGEST_DURATION`."""
