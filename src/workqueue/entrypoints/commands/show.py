"""``workqueue show ID``: one item in full, its result and every failure included.

The text form is for a terminal, one field per line; ``--json`` prints every
column as one JSON document, for scripts. Read-only; an id with no item prints
one line and exits 1.
"""

from __future__ import annotations

import json
from typing import TextIO

from pydantic import JsonValue

from workqueue.domain import WorkItem
from workqueue.entrypoints.exit_status import ExitStatus
from workqueue.entrypoints.timestamps import iso_timestamp
from workqueue.entrypoints.worker.container import WorkerContainer, provide

__all__ = ["item_document", "render_item", "show_item"]

_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, sort_keys=True)
_DOCUMENT_JSON = json.JSONEncoder(indent=2, ensure_ascii=False)


def item_document(item: WorkItem) -> dict[str, JsonValue]:
    """Every column of ``item``, times in ISO 8601 UTC, for ``--json``."""
    return {
        "id": item.id,
        "kind": item.kind,
        "status": item.status.value,
        "attempt": item.attempt,
        "stalls": item.stalls,
        "snoozes": item.snoozes,
        "priority": item.priority,
        "dedup_key": item.dedup_key,
        "worker_id": item.worker_id,
        "enqueued_at": iso_timestamp(item.enqueued_at),
        "run_at": iso_timestamp(item.run_at),
        "started_at": iso_timestamp(item.started_at),
        "heartbeat_at": iso_timestamp(item.heartbeat_at),
        "lease_expires_at": iso_timestamp(item.lease_expires_at),
        "finished_at": iso_timestamp(item.finished_at),
        "payload": item.payload,
        "progress": item.progress,
        "result": item.result,
        "error": item.error,
        "cancel_reason": item.cancel_reason,
        "requeued_as": item.requeued_as,
        "failures": [
            {"attempt": failure.attempt, "at": iso_timestamp(failure.at), "error": failure.error}
            for failure in item.failures
        ],
    }


def render_item(item: WorkItem) -> str:
    """``item`` as text: a heading, then one field per line (absent ones left out)."""
    lines = [f"item {item.id}: {item.kind}, {item.status.value}"]
    fields: list[tuple[str, object]] = [
        ("attempt", item.attempt),
        ("stalls", item.stalls),
        ("snoozes", item.snoozes),
        ("priority", item.priority),
        ("dedup key", item.dedup_key),
        ("worker", item.worker_id),
        ("enqueued", iso_timestamp(item.enqueued_at)),
        ("runs from", iso_timestamp(item.run_at)),
        ("started", iso_timestamp(item.started_at)),
        ("heartbeat", iso_timestamp(item.heartbeat_at)),
        ("lease expires", iso_timestamp(item.lease_expires_at)),
        ("finished", iso_timestamp(item.finished_at)),
        ("payload", _COMPACT_JSON.encode(item.payload)),
        ("progress", None if item.progress is None else _COMPACT_JSON.encode(item.progress)),
        ("result", None if item.result is None else _COMPACT_JSON.encode(item.result)),
        ("cancel requested", item.cancel_reason),
        ("error", item.error),
        ("requeued as item", item.requeued_as),
    ]
    lines += [f"  {name}: {value}" for name, value in fields if value is not None]
    if item.failures:
        lines.append(f"  failures ({len(item.failures)}):")
        lines += [
            f"    attempt {failure.attempt} at {iso_timestamp(failure.at)}: {failure.error}"
            for failure in item.failures
        ]
    return "\n".join(lines)


async def show_item(
    container: WorkerContainer, out: TextIO, *, item_id: int, as_json: bool = False
) -> ExitStatus:
    """Print item ``item_id`` in full; exit 1 when there is no such item.

    :raises SchemaNotCurrentError: if the database is not migrated.
    :raises DatabaseUnreachableError: if the database does not answer.
    :raises StoreUnavailableError: if it stops answering while being read.
    """
    schema = await provide(container.schema)
    await schema.check_current()
    monitor = await provide(container.work_monitor)
    item = await monitor.item(item_id)
    if item is None:
        print(f"no item {item_id}", file=out)
        return ExitStatus.FAILURE
    print(_DOCUMENT_JSON.encode(item_document(item)) if as_json else render_item(item), file=out)
    return ExitStatus.OK
