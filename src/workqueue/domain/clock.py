"""The Clock port: the only source of time."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

__all__ = ["Clock"]


@runtime_checkable
class Clock(Protocol):
    """Every timestamp the queue writes comes from here.

    Stores take a Clock, so tests control time on the in-memory fake and on
    PostgreSQL alike.
    """

    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of this clock's time."""
        ...
