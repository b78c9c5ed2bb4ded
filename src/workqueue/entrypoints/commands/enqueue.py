"""``workqueue enqueue KIND``: put one item of work in the queue, by hand."""

from __future__ import annotations

from typing import TextIO

from workqueue.domain import EnqueueResult, check_dedup_key
from workqueue.entrypoints.worker.container import WorkerContainer, provide

__all__ = ["enqueue_work"]


async def enqueue_work(
    container: WorkerContainer,
    out: TextIO,
    *,
    kind: str,
    payload_json: str = "{}",
    dedup_key: str | None = None,
) -> EnqueueResult:
    """Validate ``payload_json`` through the kind's model and enqueue it.

    Everything the caller typed is checked before anything is written, so a
    rejected enqueue leaves the queue as it was. Prints the item's id and whether
    it was created or absorbed by a queued item with the same dedup key.

    :raises InvalidDedupKeyError: if ``dedup_key`` is empty, blank or too long.
    :raises UnknownKindError: if no payload model serves ``kind``.
    :raises AppLoadError: if the application (``--app``) cannot be loaded.
    :raises InvalidPayloadError: if ``payload_json`` is not JSON or does not validate.
    :raises SchemaNotCurrentError: if the database is not migrated.
    """
    check_dedup_key(dedup_key)
    # The payload half of the registry: no handler is built, no database reached,
    # so bad input is refused at once (and the embedded server not started for it).
    catalog = await provide(container.catalog)
    payload = catalog.parse_json(kind, payload_json)
    schema = await provide(container.schema)
    await schema.check_current()
    queue = await provide(container.work_queue)
    result = await queue.enqueue(payload, dedup_key=dedup_key)
    if result.created:
        print(f"created item {result.id} ({kind})", file=out)
    else:
        print(
            f"absorbed by queued item {result.id} ({kind}, dedup key {dedup_key!r})",
            file=out,
        )
    return result
