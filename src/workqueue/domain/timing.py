"""When an enqueued item may run and how soon: its ``priority`` and its ``run_at``.

A producer may give an item a priority (an integer from :data:`MIN_PRIORITY` to
:data:`MAX_PRIORITY`, :data:`DEFAULT_PRIORITY` unless given; larger runs sooner,
the range Django's Tasks framework uses) and a time before which it is not
claimable: ``run_at`` (a time with its time zone) or ``delay`` (a non-negative
:class:`~datetime.timedelta` from now), never both. An item without either may
run at once: its ``run_at`` is the time it was enqueued. Until its ``run_at`` an
item is ``queued`` like any other (a queued twin absorbs an enqueue with its
dedup key, a cancel finishes it), only not claimable (``claim_order``, ADR 0030).

The checks here run before anything is written, in every producer.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final, TypeAlias

from workqueue.domain.errors import InvalidPriorityError, InvalidRunAtError

__all__ = [
    "DEFAULT_PRIORITY",
    "MAX_PRIORITY",
    "MIN_PRIORITY",
    "When",
    "check_aware",
    "check_delay",
    "check_priority",
    "check_when",
    "run_at_of",
]

MIN_PRIORITY: Final = -100
"""The lowest priority an item may have: it runs after every other claimable item."""

MAX_PRIORITY: Final = 100
"""The highest priority an item may have: it runs before every other claimable item."""

DEFAULT_PRIORITY: Final = 0
"""The priority of an item enqueued without one."""


def check_priority(priority: int) -> int:
    """Return ``priority`` unchanged if it is an integer from -100 to 100.

    :raises InvalidPriorityError: if it is not an integer (a bool is not one) or
        lies outside :data:`MIN_PRIORITY`..:data:`MAX_PRIORITY`.
    """
    if type(priority) is not int:
        raise InvalidPriorityError(f"priority must be an integer, not {type(priority).__name__}")
    if not MIN_PRIORITY <= priority <= MAX_PRIORITY:
        raise InvalidPriorityError(
            f"priority must be from {MIN_PRIORITY} to {MAX_PRIORITY}, not {priority}"
        )
    return priority


When: TypeAlias = datetime | timedelta | None
"""When an item may run, as a producer gave it: a time with its time zone, a delay from
its enqueue, or None for at once. :func:`run_at_of` makes it the item's ``run_at``."""


def check_when(run_at: datetime | None, delay: timedelta | None) -> When:
    """The ``run_at`` or the ``delay`` given, once checked; None when neither is.

    :raises InvalidRunAtError: if both are given, or either is unusable
        (:func:`check_aware`, :func:`check_delay`).
    """
    if delay is None:
        return None if run_at is None else check_aware(run_at)
    if run_at is not None:
        raise InvalidRunAtError("give run_at or delay, not both")
    return check_delay(delay)


def run_at_of(when: When, enqueued_at: datetime) -> datetime:
    """The ``run_at`` of an item enqueued at ``enqueued_at`` to run ``when``: that time, or
    the enqueue time plus that delay, or the enqueue time itself."""
    if when is None:
        return enqueued_at
    if isinstance(when, timedelta):
        return enqueued_at + when
    return when


def check_aware(run_at: datetime) -> datetime:
    """Return ``run_at`` unchanged if it is a datetime with a time zone.

    :raises InvalidRunAtError: if it is not a datetime, or is a naive one.
    """
    if not isinstance(run_at, datetime):
        raise InvalidRunAtError(f"run_at must be a datetime, not {type(run_at).__name__}")
    if run_at.utcoffset() is None:
        raise InvalidRunAtError(
            f"run_at must have a time zone, not the naive time {run_at.isoformat()}"
        )
    return run_at


def check_delay(delay: timedelta) -> timedelta:
    """Return ``delay`` unchanged if it is a timedelta of zero or more.

    :raises InvalidRunAtError: if it is not a timedelta, or is negative.
    """
    if not isinstance(delay, timedelta):
        raise InvalidRunAtError(f"delay must be a timedelta, not {type(delay).__name__}")
    if delay < timedelta(0):
        raise InvalidRunAtError(
            f"delay must not be negative, not {delay.total_seconds():g} seconds"
        )
    return delay
