"""The scheduler: periodic kinds are enqueued when the table says they are due.

There is no timer and no leader. Every worker's scheduler asks the queue, at every
poll, to enqueue each periodic kind with the schedule's dedup key if it is due (no
item of it queued or running, and the newest finished one finished at least an
interval ago). The due check and the insert are one atomic step of the queue, so
workers that find a kind due together produce one item, even when another worker
claims it between their checks (docs/adr/0005). Overdue work runs at the first
poll after downtime.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from workqueue.domain import WorkQueue, WorkQueueError, WorkSchedule

__all__ = ["ScheduleOutcome", "ScheduleStatus", "WorkScheduler"]

logger = logging.getLogger("workqueue.scheduler")


class ScheduleStatus(StrEnum):
    """What one scheduling pass did for one periodic kind."""

    NOT_DUE = "not_due"
    """An item of the kind is queued or running, or the last one finished too recently."""
    ENQUEUED = "enqueued"
    """Due, and a new queued item was created."""
    ABSORBED = "absorbed"
    """Due, but the queue reported a queued item with the same dedup key absorbing it."""
    ERROR = "error"
    """The queue raised (the store unreachable, say); logged, and the next pass tries again."""


@dataclass(frozen=True, slots=True)
class ScheduleOutcome:
    """One periodic kind's result of :meth:`WorkScheduler.run_once`.

    ``item_id`` is the queued item (new or absorbing) when the kind was due;
    ``error`` the error's text when the pass failed for this kind.
    """

    kind: str
    status: ScheduleStatus
    item_id: int | None = None
    error: str | None = None


class WorkScheduler:
    """Enqueues each due :class:`~workqueue.domain.WorkSchedule`, one pass per :meth:`run_once`.

    :param queue: the only insert path; enqueues each payload if its kind is due.
    :param schedules: at most one per kind.
    :raises ValueError: if two schedules share a kind; the message names it.
    """

    __slots__ = ("_queue", "_schedules")

    def __init__(self, queue: WorkQueue, schedules: Sequence[WorkSchedule]) -> None:
        seen: set[str] = set()
        for schedule in schedules:
            if schedule.kind in seen:
                raise ValueError(
                    f"two schedules for kind {schedule.kind!r}: a periodic kind has one schedule"
                )
            seen.add(schedule.kind)
        self._queue = queue
        self._schedules = tuple(schedules)

    @property
    def schedules(self) -> tuple[WorkSchedule, ...]:
        """The schedules checked at every pass, in the order given."""
        return self._schedules

    async def run_once(self) -> list[ScheduleOutcome]:
        """Check every schedule once, enqueueing the due ones.

        An error on one schedule (the store unreachable, say) is logged and
        reported in its outcome; the other schedules are still checked.
        """
        return [await self._schedule(schedule) for schedule in self._schedules]

    async def _schedule(self, schedule: WorkSchedule) -> ScheduleOutcome:
        kind = schedule.kind
        try:
            result = await self._queue.enqueue_if_due(schedule)
        except WorkQueueError as error:
            logger.warning("periodic %s not scheduled: %s", kind, error, extra={"kind": kind})
            return ScheduleOutcome(kind, ScheduleStatus.ERROR, error=str(error))
        if result is None:
            return ScheduleOutcome(kind, ScheduleStatus.NOT_DUE)
        extra = {"kind": kind, "item_id": result.id}
        if result.created:
            logger.info("periodic %s enqueued as item %d", kind, result.id, extra=extra)
            return ScheduleOutcome(kind, ScheduleStatus.ENQUEUED, item_id=result.id)
        logger.info("periodic %s absorbed by queued item %d", kind, result.id, extra=extra)
        return ScheduleOutcome(kind, ScheduleStatus.ABSORBED, item_id=result.id)
