"""Bulk actions on a kind: requeue its failed items, cancel its queued ones (docs/adr/0041).

An operator reads how many items an action would touch and the highest id among
them (:class:`BulkScope`), then confirms; the action takes only items up to that
id, so nothing enqueued or failed after the count was read is touched. It runs in
batches (:meth:`~workqueue.domain.WorkStore.requeue_failed`,
:meth:`~workqueue.domain.WorkStore.cancel_queued`), each one short transaction
that skips rows other transactions hold, in id order.

A bulk requeue marks each failed item it requeued with the item that replaced it
(``requeued_as``), in the transaction that enqueues it: pressed twice, or by two
operators at once, it requeues each failed item once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeAlias

from workqueue.domain.errors import InvalidPayloadError
from workqueue.domain.items import WorkItem
from workqueue.domain.payload import WorkPayload
from workqueue.domain.queue import EnqueueRequest, EnqueueResult
from workqueue.domain.status import WorkStatus

__all__ = [
    "BULK_BATCH",
    "BulkAction",
    "BulkBatch",
    "BulkResult",
    "BulkScope",
    "PayloadDecoder",
    "decoded",
    "requeued_batch",
]

BULK_BATCH = 500
"""How many items one batch of a bulk action takes: one short transaction."""

PayloadDecoder: TypeAlias = Callable[[str, Mapping[str, Any]], WorkPayload]
"""A kind's payload model applied to a stored payload (``KindRegistry.decode``).

:raises UnknownKindError: if the kind has no model.
:raises InvalidPayloadError: if the stored payload does not validate.
"""


class BulkAction(Enum):
    """The bulk actions on a kind, by the status of the items they take."""

    REQUEUE_FAILED = "requeue-failed"
    """Requeue the kind's failed items that no bulk requeue requeued yet."""
    CANCEL_QUEUED = "cancel-queued"
    """Cancel the kind's queued items, delayed ones too."""

    def takes(self, item: WorkItem, kind: str) -> bool:
        """Whether this action on ``kind`` would take ``item``, whatever its id."""
        status = WorkStatus.FAILED if self is BulkAction.REQUEUE_FAILED else WorkStatus.QUEUED
        return item.kind == kind and item.status is status and item.requeued_as is None


@dataclass(frozen=True, slots=True)
class BulkScope:
    """What a bulk action would take now: how many items, and the highest id among them.

    ``up_to_id`` is None when there is none. Passed back to the action, it bounds it.
    """

    count: int
    up_to_id: int | None


@dataclass(frozen=True, slots=True)
class BulkBatch:
    """What one batch of a bulk action did.

    ``taken`` counts the items the batch took (their ids above ``after_id``, in id
    order, at most ``limit``), ``last_id`` is the highest of their ids (None when
    it took none). Of them, ``done`` were requeued as new items or cancelled,
    ``absorbed`` requeued into a queued twin with their kind and dedup key, and
    ``invalid`` (by id) left failed, their payload no longer valid for their kind.
    """

    taken: int
    done: int
    last_id: int | None
    absorbed: int = 0
    invalid: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class BulkResult:
    """What a bulk action did in all its batches (:class:`BulkBatch`'s counts, summed)."""

    done: int = 0
    absorbed: int = 0
    invalid: tuple[int, ...] = ()

    def after(self, batch: BulkBatch) -> BulkResult:
        """This result with ``batch``'s counts added."""
        return BulkResult(
            self.done + batch.done,
            self.absorbed + batch.absorbed,
            self.invalid + batch.invalid,
        )


def decoded(
    items: Sequence[WorkItem], decode: PayloadDecoder
) -> tuple[list[tuple[WorkItem, EnqueueRequest]], tuple[int, ...]]:
    """The enqueue that requeues each of ``items``, and the ids of those ``decode`` refuses.

    Each request has the item's payload, through ``decode``, and its dedup key: what
    a single requeue enqueues.

    :raises UnknownKindError: if ``decode`` knows no model for an item's kind.
    """
    requests: list[tuple[WorkItem, EnqueueRequest]] = []
    invalid: list[int] = []
    for item in items:
        try:
            payload = decode(item.kind, item.payload)
        except InvalidPayloadError:
            invalid.append(item.id)
        else:
            requests.append((item, EnqueueRequest(payload, item.dedup_key)))
    return requests, tuple(invalid)


def requeued_batch(
    taken: Sequence[WorkItem], results: Sequence[EnqueueResult], invalid: tuple[int, ...]
) -> BulkBatch:
    """The batch of a bulk requeue that took ``taken`` and enqueued ``results`` for them."""
    created = sum(result.created for result in results)
    return BulkBatch(
        taken=len(taken),
        done=created,
        last_id=taken[-1].id if taken else None,
        absorbed=len(results) - created,
        invalid=invalid,
    )
