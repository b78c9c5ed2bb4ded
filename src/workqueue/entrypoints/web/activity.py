"""What the charts read: a window of the fleet's activity by minute (docs/adr/0040).

The overview draws it (:mod:`workqueue.entrypoints.web.charts`) and ``GET
/api/activity`` gives the same buckets as JSON, both from :func:`read_activity`,
so the picture and its numbers agree.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime

from pydantic import JsonValue

from workqueue.domain import ActivityLog
from workqueue.entrypoints.timestamps import iso_timestamp
from workqueue.entrypoints.web.charts import Bucket, ChartWindow, buckets

__all__ = ["activity_document", "read_activity"]


async def read_activity(
    log: ActivityLog, *, kind: str | None, window: ChartWindow, now: datetime
) -> list[Bucket]:
    """The buckets of ``window`` ending at ``now``, of ``kind`` (None: every kind).

    Reads the minutes from a whole window before ``now`` (those before the first
    bucket are left out).

    :raises StoreUnavailableError: if the store cannot be reached.
    """
    shape = window.value
    rows = await log.activity(now - shape.step * shape.count, kind=kind)
    return buckets(rows, end=now, window=window)


def activity_document(
    found: list[Bucket], *, kind: str | None, window: ChartWindow, now: datetime
) -> dict[str, JsonValue]:
    """``GET /api/activity``'s answer: the window, the kind, and each bucket's numbers."""
    return {
        "now": iso_timestamp(now),
        "window": window.value.text,
        "kind": kind,
        "buckets": [
            {
                **asdict(bucket),
                "start": iso_timestamp(bucket.start),
                "end": iso_timestamp(bucket.end),
            }
            for bucket in found
        ],
    }
