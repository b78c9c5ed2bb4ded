"""TokenCleanup: delete refresh tokens that have expired or been revoked."""

from __future__ import annotations

from workqueue.domain import Clock, RefreshTokenStore, TokenCleanup, WorkContext, WorkHandler
from workqueue.entrypoints.worker.handlers.batches import DEFAULT_DELETE_BATCH_SIZE
from workqueue.entrypoints.worker.handlers.progress import deleted_so_far

__all__ = ["TokenCleanupHandler"]


class TokenCleanupHandler(WorkHandler[TokenCleanup]):
    """Deletes expired and revoked refresh tokens in bounded batches.

    Each batch is one short statement, so the table is never locked for long and a
    cancelled run (lease lost, shutdown) leaves only whole batches done. Progress is
    ``{"deleted": n}``, counting across attempts of the same item.
    """

    def __init__(
        self,
        tokens: RefreshTokenStore,
        clock: Clock,
        *,
        batch_size: int = DEFAULT_DELETE_BATCH_SIZE,
    ) -> None:
        """:raises ValueError: if ``batch_size`` is less than 1."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._tokens = tokens
        self._clock = clock
        self._batch_size = batch_size

    async def handle(self, payload: TokenCleanup, ctx: WorkContext) -> None:
        # One cut-off for the whole run: tokens expiring while it runs are the next
        # run's, so the loop ends even when tokens expire faster than it deletes.
        now = self._clock.now()
        deleted = deleted_so_far(ctx)
        ctx.report_progress({"deleted": deleted})
        while True:
            batch = await self._tokens.delete_expired_and_revoked(now=now, limit=self._batch_size)
            deleted += batch
            ctx.report_progress({"deleted": deleted})
            if batch < self._batch_size:
                return
