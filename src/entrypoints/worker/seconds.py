"""Where a duration crosses into the application as float seconds, and back.

The settings keep every duration as a timedelta, but the application still
takes and gives durations as float seconds (``ExecutorSettings``'s intervals,
``Worker(poll_interval=...)``, ``DEFAULT_POLL_INTERVAL``). These two functions
are the only place that converts. Once the application speaks timedelta, delete
this module: the settings' defaults and the container's arguments then pass the
values straight on.
"""

from __future__ import annotations

from datetime import timedelta

__all__ = ["from_seconds", "to_seconds"]


def to_seconds(duration: timedelta) -> float:
    """``duration`` as the application takes it today: float seconds."""
    return duration.total_seconds()


def from_seconds(seconds: float) -> timedelta:
    """An application default in float seconds, as the settings keep it."""
    return timedelta(seconds=seconds)
