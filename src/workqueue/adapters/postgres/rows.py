"""Reading ``work_items`` rows as domain values."""

from __future__ import annotations

import asyncpg

from workqueue.domain import WorkItem, WorkStatus

__all__ = ["work_item_from_row"]

# WorkStatus(value) goes through the enum's lookup machinery at every row; a dict
# answers the same in a fraction of the time.
_STATUSES: dict[str, WorkStatus] = {status.value: status for status in WorkStatus}


def work_item_from_row(row: asyncpg.Record) -> WorkItem:
    """The :class:`~workqueue.domain.WorkItem` for a row holding every ``work_items`` column.

    ``payload`` and ``progress`` arrive decoded by the pool's JSON codecs, and
    timestamps as aware datetimes in UTC.

    :raises ValueError: if the row's status is not a :class:`~workqueue.domain.WorkStatus`.
    """
    return WorkItem(
        id=row["id"],
        kind=row["kind"],
        payload=row["payload"],
        status=_status(row["status"]),
        attempt=row["attempt"],
        stalls=row["stalls"],
        dedup_key=row["dedup_key"],
        enqueued_at=row["enqueued_at"],
        started_at=row["started_at"],
        heartbeat_at=row["heartbeat_at"],
        lease_expires_at=row["lease_expires_at"],
        finished_at=row["finished_at"],
        worker_id=row["worker_id"],
        progress=row["progress"],
        error=row["error"],
        cancel_reason=row["cancel_reason"],
    )


def _status(value: str) -> WorkStatus:
    try:
        return _STATUSES[value]
    except KeyError:
        return WorkStatus(value)  # not a status: raises ValueError naming the value
