"""The overview of the queue: counts per kind and status, the oldest queued item, the
paused kinds.

Live counts (queued, running) are read at every look. The finished counts read
the whole history (up to retention: a million rows or more), so they are read at
most once per :data:`FINISHED_COUNTS_MAX_AGE` by one process, however many pages
and scrapes ask: a look that finds them older starts a recount in the background
and answers with the counts it has, saying how old they are. Only the very first
look waits for them. So a page refreshed every 2 s by several people costs the
database one full count per interval, not one per refresh (docs/adr/0020).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from workqueue.domain import Clock, KindCap, KindPause, WorkMonitor, WorkStatus

__all__ = [
    "FINISHED_COUNTS_MAX_AGE",
    "FinishedCounts",
    "Overview",
    "OverviewReader",
    "counts_by_kind",
    "oldest_queued_age",
    "totals_by_status",
]

logger = logging.getLogger("workqueue.web")

FINISHED_COUNTS_MAX_AGE = 10.0
"""Seconds the finished counts are served before a look starts a recount."""

Counts = dict[tuple[str, WorkStatus], int]


@dataclass(frozen=True, slots=True)
class Overview:
    """One look at the queue, at :attr:`now` on the clock.

    - ``counts``: every kind (served, paused or found in the table) by every status,
      0 where none; the finished ones as of ``finished_counted_at``.
    - ``oldest_queued``: per kind with queued items, the ``enqueued_at`` of the
      one a claim takes next.
    - ``pauses``: the kinds no worker claims now, by kind name.
    - ``caps``: the caps in force, by kind name, each with its kind's running items.
    """

    now: datetime
    counts: dict[str, dict[WorkStatus, int]]
    finished_counted_at: datetime
    oldest_queued: dict[str, datetime]
    pauses: list[KindPause]
    caps: list[KindCap]


def counts_by_kind(
    kinds: Iterable[str], *parts: Mapping[tuple[str, WorkStatus], int]
) -> dict[str, dict[WorkStatus, int]]:
    """Every kind of ``kinds`` and of ``parts``, sorted, by every status (0 where none)."""
    counts: dict[str, dict[WorkStatus, int]] = {}
    for kind in kinds:
        counts[kind] = dict.fromkeys(WorkStatus, 0)
    for part in parts:
        for (kind, status), count in part.items():
            counts.setdefault(kind, dict.fromkeys(WorkStatus, 0))[status] = count
    return dict(sorted(counts.items()))


def totals_by_status(overview: Overview) -> dict[WorkStatus, int]:
    """How many items each status has, over every kind."""
    totals = dict.fromkeys(WorkStatus, 0)
    for by_status in overview.counts.values():
        for status, count in by_status.items():
            totals[status] += count
    return totals


def oldest_queued_age(overview: Overview) -> float | None:
    """Seconds the longest-waiting next-in-line item has waited; None when nothing is queued."""
    if not overview.oldest_queued:
        return None
    return (overview.now - min(overview.oldest_queued.values())).total_seconds()


class FinishedCounts:
    """The finished counts of one process, recounted in the background when stale.

    :param monitor: where the counts are read.
    :param clock: decides when the counts are stale.
    :param max_age: seconds the counts are served before a look starts a recount.
    """

    def __init__(self, monitor: WorkMonitor, clock: Clock, *, max_age: float) -> None:
        self._monitor = monitor
        self._clock = clock
        self._max_age = max_age
        # The counts and the moment they were read; None until the first count.
        self._last: tuple[Counts, datetime] | None = None
        self._recount: asyncio.Task[None] | None = None

    async def current(self) -> tuple[Counts, datetime]:
        """The counts and when they were read; the first call waits for them.

        :raises StoreUnavailableError: if the first count cannot be read. A failing
            recount in the background is logged and leaves the counts it had.
        """
        if self._last is None:
            self._last = await self._count()
        elif self._stale(self._last[1]) and self._recount is None:
            self._recount = asyncio.create_task(self._recount_in_background())
        return self._last

    async def close(self) -> None:
        """Stop a recount under way."""
        if self._recount is not None:
            self._recount.cancel()
            await asyncio.gather(self._recount, return_exceptions=True)

    def _stale(self, counted_at: datetime) -> bool:
        return (self._clock.now() - counted_at).total_seconds() >= self._max_age

    async def _count(self) -> tuple[Counts, datetime]:
        started = self._clock.now()
        return await self._monitor.count_finished(), started

    async def _recount_in_background(self) -> None:
        try:
            self._last = await self._count()
        except Exception:
            logger.warning("recounting the finished items failed", exc_info=True)
        finally:
            self._recount = None


class OverviewReader:
    """Reads :class:`Overview` looks from a monitor; one per process.

    :param monitor: the read-only port.
    :param clock: stamps each look.
    :param kinds: the kinds this process serves, shown even when they have no items
        (:attr:`kinds`: the actions pause only these).
    :param finished_max_age: see :data:`FINISHED_COUNTS_MAX_AGE`.
    """

    def __init__(
        self,
        monitor: WorkMonitor,
        clock: Clock,
        *,
        kinds: Iterable[str],
        finished_max_age: float = FINISHED_COUNTS_MAX_AGE,
    ) -> None:
        self._monitor = monitor
        self._clock = clock
        self.kinds = frozenset(kinds)
        self.finished = FinishedCounts(monitor, clock, max_age=finished_max_age)

    async def read(self) -> Overview:
        """One look.

        :raises StoreUnavailableError: if the monitor cannot be reached.
        """
        live = await self._monitor.count_live()
        oldest = await self._monitor.oldest_queued()
        finished, counted_at = await self.finished.current()
        pauses = await self._monitor.paused_kinds()
        caps = await self._monitor.capped_kinds()
        # A paused or capped kind has its row even when it has no items and is not
        # served here.
        kinds = [*self.kinds, *(pause.kind for pause in pauses), *(cap.kind for cap in caps)]
        return Overview(
            now=self._clock.now(),
            counts=counts_by_kind(kinds, live, finished),
            finished_counted_at=counted_at,
            oldest_queued=dict(sorted(oldest.items())),
            pauses=pauses,
            caps=caps,
        )

    async def close(self) -> None:
        """Stop a recount under way."""
        await self.finished.close()
