"""WorkItemRetention: delete finished work items older than the retention period."""

from __future__ import annotations

from datetime import timedelta

from workqueue.domain import Clock, WorkContext, WorkHandler, WorkItemRetention, WorkStore
from workqueue.entrypoints.worker.handlers.batches import DEFAULT_DELETE_BATCH_SIZE
from workqueue.entrypoints.worker.handlers.progress import deleted_so_far

__all__ = ["WorkItemRetentionHandler"]


class WorkItemRetentionHandler(WorkHandler[WorkItemRetention]):
    """Purges succeeded and failed items that finished more than ``retention`` ago.

    Deletes in bounded batches (short statements, whole batches only when
    cancelled) and reports ``{"deleted": n}``. A payload's ``retention_days``
    overrides the configured period for that run. Queued and running items are
    never touched: the store's purge only sees finished ones.
    """

    def __init__(
        self,
        store: WorkStore,
        clock: Clock,
        retention: timedelta,
        *,
        batch_size: int = DEFAULT_DELETE_BATCH_SIZE,
    ) -> None:
        """:raises ValueError: if ``retention`` is negative or ``batch_size`` is less than 1."""
        if retention < timedelta(0):
            raise ValueError("retention must not be negative")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._store = store
        self._clock = clock
        self._retention = retention
        self._batch_size = batch_size

    def retention_for(self, payload: WorkItemRetention) -> timedelta:
        """The period this run keeps: the payload's ``retention_days`` or the configured one.

        :raises ValueError: if ``retention_days`` is negative (it would purge the future).
        """
        if payload.retention_days is None:
            return self._retention
        if payload.retention_days < 0:
            raise ValueError(f"retention_days must not be negative, got {payload.retention_days}")
        return timedelta(days=payload.retention_days)

    async def handle(self, payload: WorkItemRetention, ctx: WorkContext) -> None:
        # One cut-off for the whole run, so the loop ends while items keep finishing.
        finished_before = self._clock.now() - self.retention_for(payload)
        deleted = deleted_so_far(ctx)
        ctx.report_progress({"deleted": deleted})
        while True:
            batch = await self._store.purge_finished(
                finished_before=finished_before, limit=self._batch_size
            )
            deleted += batch
            ctx.report_progress({"deleted": deleted})
            if batch < self._batch_size:
                return
