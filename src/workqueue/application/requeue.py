"""Requeue: run a failed or cancelled item again, as a new queued item.

There are no retries by design; a person decides that an item that failed (or was
cancelled) should run again. The new item has the old one's kind, payload and
dedup key and is enqueued through the :class:`~workqueue.domain.WorkQueue`, the only insert
path: a queued item with the same kind and dedup key absorbs it, as it would any
enqueue. The old item is not changed (docs/adr/0018).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from workqueue.domain import (
    RequeueOutcome,
    RequeueResult,
    WorkPayload,
    WorkQueue,
    WorkStatus,
    WorkStore,
)

__all__ = ["REQUEUABLE_STATUSES", "requeue"]

REQUEUABLE_STATUSES = frozenset({WorkStatus.FAILED, WorkStatus.CANCELLED})
"""The statuses of the items a requeue runs again."""


async def requeue(
    item_id: int,
    *,
    store: WorkStore,
    queue: WorkQueue,
    decode: Callable[[str, Mapping[str, Any]], WorkPayload],
) -> RequeueResult:
    """Enqueue a new item with the kind, payload and dedup key of failed or cancelled ``item_id``.

    :param decode: the payload model of a kind, validating the stored payload
        (:meth:`~workqueue.application.KindRegistry.decode`).
    :returns: requeued (with the new item's id), absorbed (with the queued twin's),
        refused (the item is neither failed nor cancelled; with its status), or
        unknown. Only a requeue writes, and only through ``queue``.
    :raises UnknownKindError: if ``decode`` knows no model for the item's kind.
    :raises InvalidPayloadError: if the stored payload no longer validates.
    :raises StoreUnavailableError: if the store cannot be reached.
    """
    item = await store.get(item_id)
    if item is None:
        return RequeueResult(RequeueOutcome.UNKNOWN)
    if item.status not in REQUEUABLE_STATUSES:
        return RequeueResult(RequeueOutcome.REFUSED, status=item.status)
    payload = decode(item.kind, item.payload)
    enqueued = await queue.enqueue(payload, dedup_key=item.dedup_key)
    outcome = RequeueOutcome.REQUEUED if enqueued.created else RequeueOutcome.ABSORBED
    return RequeueResult(outcome, queued_id=enqueued.id, status=item.status)
