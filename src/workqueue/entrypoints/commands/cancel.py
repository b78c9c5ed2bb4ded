"""``workqueue cancel ID`` and ``workqueue requeue ID``: an operator acts on one item.

Each prints one line saying what happened, or why nothing did, and returns the
exit status: 0 when the request took effect, 1 when there was nothing to do
(docs/adr/0018).
"""

from __future__ import annotations

from typing import TextIO

from workqueue.application import requeue
from workqueue.domain import (
    CancelOutcome,
    RequeueOutcome,
    RequeueResult,
    WorkStore,
    cancel_reason_text,
)
from workqueue.entrypoints.exit_status import ExitStatus
from workqueue.entrypoints.worker.container import WorkerContainer, provide

__all__ = [
    "cancel_item",
    "cancel_line",
    "finished_status",
    "no_item_line",
    "requeue_item",
    "requeue_line",
]


def no_item_line(item_id: int) -> str:
    """The one line a cancel or a requeue of an id no item has prints."""
    return f"nothing to do: no item {item_id}"


def cancel_line(item_id: int, outcome: CancelOutcome, status: str) -> str:
    """The one line ``workqueue cancel`` prints for ``outcome``.

    :param status: how the item ended, said when it had already finished.
    """
    if outcome is CancelOutcome.CANCELLED:
        return f"cancelled item {item_id} (it was queued)"
    if outcome is CancelOutcome.REQUESTED:
        return (
            f"cancel of item {item_id} requested: it is running, and its worker "
            "cancels it at its next heartbeat (or lease recovery does, if the worker is gone)"
        )
    if outcome is CancelOutcome.ALREADY_REQUESTED:
        return f"nothing to do: a cancel of item {item_id} was already requested"
    if outcome is CancelOutcome.FINISHED:
        return f"nothing to do: item {item_id} already finished ({status})"
    return no_item_line(item_id)


async def finished_status(store: WorkStore, item_id: int) -> str:
    """How finished item ``item_id`` ended, for a cancel's line ("deleted" once retention was)."""
    item = await store.get(item_id)
    return "deleted since" if item is None else item.status.value


async def cancel_item(
    container: WorkerContainer, out: TextIO, *, item_id: int, reason: str | None = None
) -> ExitStatus:
    """Cancel item ``item_id``: at once when queued, through its worker when running.

    :raises SchemaNotCurrentError: if the database is not migrated.
    :raises StoreUnavailableError: if the database stops answering.
    """
    schema = await provide(container.schema)
    await schema.check_current()
    store = await provide(container.work_store)
    outcome = await store.cancel(item_id, reason=cancel_reason_text(reason))
    # Read after the cancel: a finished item's line says how it ended (the others ignore it).
    print(cancel_line(item_id, outcome, await finished_status(store, item_id)), file=out)
    return ExitStatus.OK if outcome.took_effect() else ExitStatus.FAILURE


def requeue_line(item_id: int, result: RequeueResult) -> str:
    """The one line ``workqueue requeue`` prints for ``result``."""
    outcome, status = result.outcome, result.status
    if outcome is RequeueOutcome.REQUEUED:
        return f"requeued {status} item {item_id} as item {result.queued_id}"
    if outcome is RequeueOutcome.ABSORBED:
        return (
            f"requeue of {status} item {item_id} absorbed by queued item {result.queued_id} "
            "with the same dedup key"
        )
    if outcome is RequeueOutcome.REFUSED:
        return f"nothing to do: item {item_id} is {status}; only failed or cancelled items requeue"
    return no_item_line(item_id)


async def requeue_item(container: WorkerContainer, out: TextIO, *, item_id: int) -> ExitStatus:
    """Enqueue a new item with the kind, payload and dedup key of failed or cancelled ``item_id``.

    :raises UnknownKindError: if no payload model serves the item's kind.
    :raises InvalidPayloadError: if its payload no longer validates.
    :raises SchemaNotCurrentError: if the database is not migrated.
    :raises StoreUnavailableError: if the database stops answering.
    """
    schema = await provide(container.schema)
    await schema.check_current()
    # The payload half of the registry (the application's kinds too): no handler built.
    catalog = await provide(container.catalog)
    store = await provide(container.work_store)
    queue = await provide(container.work_queue)
    result = await requeue(item_id, store=store, queue=queue, decode=catalog.decode)
    print(requeue_line(item_id, result), file=out)
    return ExitStatus.OK if result.outcome.took_effect() else ExitStatus.FAILURE
