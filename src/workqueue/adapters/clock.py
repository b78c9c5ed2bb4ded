"""The production clock: wall time in UTC and the event loop's own sleep."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

__all__ = ["SystemClock"]


class SystemClock:
    """The :class:`~workqueue.domain.Clock` a deployed worker runs on.

    Stores stamp every timestamp from ``now()``; tests swap in
    :class:`workqueue.adapters.testing.FakeClock` to control time instead.
    """

    def now(self) -> datetime:
        """The current wall time, timezone-aware, in UTC."""
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of wall time (no wait at all when ``seconds <= 0``).

        :raises asyncio.CancelledError: when the sleeping task is cancelled.
        """
        await asyncio.sleep(max(seconds, 0.0))
