"""``workqueue enqueue KIND``: put one item of work in the queue, by hand."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import TextIO

from pydantic import TypeAdapter, ValidationError

from workqueue.domain import (
    DEFAULT_PRIORITY,
    EnqueueResult,
    InvalidPayloadError,
    InvalidRunAtError,
    check_aware,
    check_dedup_key,
    check_delay,
    check_priority,
    check_when,
)
from workqueue.entrypoints.worker.container import WorkerContainer, provide
from workqueue.entrypoints.worker.durations import DURATION_HINT, Duration

__all__ = ["delay_text", "enqueue_work", "payload_file_text", "run_at_text"]

_DURATION: TypeAdapter[timedelta] = TypeAdapter(Duration)


def run_at_text(text: str) -> datetime:
    """``--run-at``: an ISO 8601 time, which must name its time zone (``Z`` or an offset).

    :raises InvalidRunAtError: if ``text`` is no ISO 8601 time, or names no time zone.
    """
    try:
        run_at = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidRunAtError(
            f"--run-at {text!r} is not an ISO 8601 time, e.g. 2026-12-24T18:00:00+01:00"
        ) from None
    return check_aware(run_at)


def payload_file_text(path: str, kind: str) -> str:
    """``--payload-file``: the text of the file at ``path``, or of standard input for ``-``.

    :raises InvalidPayloadError: naming ``kind``, if the file cannot be read as UTF-8 text.
    """
    try:
        if path == "-":
            return sys.stdin.read()
        return Path(path).read_bytes().decode()  # UTF-8, whatever the locale says
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise InvalidPayloadError(
            kind, f"--payload-file {path!r} cannot be read: {reason}"
        ) from None


def delay_text(text: str) -> timedelta:
    """``--delay``: a duration such as ``90``, ``30s``, ``5m``, ``2h``, ``1d`` or ``PT5M``.

    :raises InvalidRunAtError: if ``text`` is no duration.
    """
    try:
        delay = _DURATION.validate_python(text)
    except ValidationError:
        raise InvalidRunAtError(f"--delay {text!r}: {DURATION_HINT}") from None
    return check_delay(delay)


async def enqueue_work(
    container: WorkerContainer,
    out: TextIO,
    *,
    kind: str,
    payload_json: str = "{}",
    dedup_key: str | None = None,
    priority: int = DEFAULT_PRIORITY,
    run_at: datetime | None = None,
    delay: timedelta | None = None,
) -> EnqueueResult:
    """Validate ``payload_json`` through the kind's model and enqueue it.

    Everything the caller typed is checked before anything is written, so a
    rejected enqueue leaves the queue as it was. Prints the item's id and whether
    it was created or absorbed by a queued item with the same dedup key.

    :raises InvalidDedupKeyError: if ``dedup_key`` is empty, blank or too long.
    :raises InvalidPriorityError: if ``priority`` is not from -100 to 100.
    :raises InvalidRunAtError: if ``run_at`` has no time zone, ``delay`` is negative, or
        both are given.
    :raises UnknownKindError: if no payload model serves ``kind``.
    :raises AppLoadError: if the application (``--app``) cannot be loaded.
    :raises InvalidPayloadError: if ``payload_json`` is not JSON or does not validate.
    :raises SchemaNotCurrentError: if the database is not migrated.
    """
    check_dedup_key(dedup_key)
    check_priority(priority)
    check_when(run_at, delay)
    # The payload half of the registry: no handler is built, no database reached,
    # so bad input is refused at once (and the embedded server not started for it).
    catalog = await provide(container.catalog)
    payload = catalog.parse_json(kind, payload_json)
    schema = await provide(container.schema)
    await schema.check_current()
    queue = await provide(container.work_queue)
    result = await queue.enqueue(
        payload, dedup_key=dedup_key, priority=priority, run_at=run_at, delay=delay
    )
    if result.created:
        print(f"created item {result.id} ({kind})", file=out)
    else:
        print(
            f"absorbed by queued item {result.id} ({kind}, dedup key {dedup_key!r})",
            file=out,
        )
    return result
