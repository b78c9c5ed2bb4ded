"""Bulk requeue of a kind's failed items and bulk cancel of its queued ones (docs/adr/0041).

Each runs in batches of :data:`~workqueue.domain.BULK_BATCH` items, each batch one
short step of the store, from the oldest id to ``up_to_id``: the highest id the
operator was shown (:meth:`~workqueue.domain.WorkMonitor.bulk_scope`). Nothing
enqueued, or failed, after that count was read is touched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from workqueue.domain import (
    BULK_BATCH,
    BulkBatch,
    BulkResult,
    PayloadDecoder,
    WorkStore,
)

__all__ = ["cancel_queued", "requeue_failed"]


async def requeue_failed(
    kind: str,
    *,
    up_to_id: int,
    store: WorkStore,
    decode: PayloadDecoder,
    batch: int = BULK_BATCH,
) -> BulkResult:
    """Requeue ``kind``'s failed items up to ``up_to_id`` that no bulk requeue requeued yet.

    Each gets a new item with its kind, payload and dedup key (absorbed by a queued
    twin, as any enqueue is); one whose stored payload no longer validates stays
    failed, its id in the result's ``invalid``.

    :raises UnknownKindError: if ``decode`` knows no model for ``kind`` and it has
        failed items; nothing is written.
    :raises StoreUnavailableError: if the store cannot be reached (the batches
        done before stay done).
    """
    return await _in_batches(
        lambda after_id: store.requeue_failed(
            kind, after_id=after_id, up_to_id=up_to_id, limit=batch, decode=decode
        ),
        batch,
    )


async def cancel_queued(
    kind: str, *, up_to_id: int, store: WorkStore, reason: str, batch: int = BULK_BATCH
) -> BulkResult:
    """Cancel ``kind``'s queued items up to ``up_to_id`` (delayed ones too), ``reason`` their error.

    :raises InvalidCancelReasonError: if no store can hold ``reason``.
    :raises StoreUnavailableError: if the store cannot be reached (the batches
        done before stay done).
    """
    return await _in_batches(
        lambda after_id: store.cancel_queued(
            kind, after_id=after_id, up_to_id=up_to_id, limit=batch, reason=reason
        ),
        batch,
    )


async def _in_batches(step: Callable[[int], Awaitable[BulkBatch]], batch: int) -> BulkResult:
    """Run ``step`` from id 0 on, each time after the last id taken, until a batch is short."""
    result = BulkResult()
    after_id = 0
    while True:
        done = await step(after_id)
        result = result.after(done)
        if done.taken < batch or done.last_id is None:
            return result
        after_id = done.last_id
