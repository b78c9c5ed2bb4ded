"""Reading ``work_items`` rows as domain values: the columns of
:data:`~workqueue.adapters.postgres.columns.ITEM_COLUMNS`, by name."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from workqueue.adapters.postgres.columns import ITEM_COLUMNS
from workqueue.domain import CapSource, Failure, KindCap, KindPause, WorkItem, WorkStatus

__all__ = [
    "failures_of",
    "kind_cap_from_caps_row",
    "kind_cap_from_row",
    "kind_pause_from_row",
    "work_item_from_row",
]

# WorkStatus(value) goes through the enum's lookup machinery at every row; a dict
# answers the same in a fraction of the time.
_STATUSES: dict[str, WorkStatus] = {status.value: status for status in WorkStatus}


def work_item_from_row(row: asyncpg.Record) -> WorkItem:
    """The :class:`~workqueue.domain.WorkItem` for a row holding every ``work_items`` column.

    ``payload``, ``progress``, ``result`` and ``failures`` arrive decoded by the
    pool's JSON codecs (each failure an object with its ``attempt``, ``at`` as ISO
    8601 text and ``error``), and timestamps as aware datetimes in UTC.

    :raises ValueError: if the row's status is not a :class:`~workqueue.domain.WorkStatus`.
    """
    values = {column: row[column] for column in ITEM_COLUMNS}
    values["status"] = _status(values["status"])
    values["failures"] = failures_of(values["failures"])
    return WorkItem(**values)


def failures_of(value: list[dict[str, Any]]) -> tuple[Failure, ...]:
    """The :class:`~workqueue.domain.Failure` values of a row's ``failures`` array."""
    return tuple(
        Failure(int(failure["attempt"]), datetime.fromisoformat(failure["at"]), failure["error"])
        for failure in value
    )


def _status(value: str) -> WorkStatus:
    try:
        return _STATUSES[value]
    except KeyError:
        return WorkStatus(value)  # not a status: raises ValueError naming the value


def kind_pause_from_row(row: asyncpg.Record) -> KindPause:
    """A :class:`~workqueue.domain.KindPause` from a row of ``work_kind_pauses``."""
    return KindPause(kind=row["kind"], paused_at=row["paused_at"], reason=row["reason"])


def kind_cap_from_row(kind: str, row: asyncpg.Record) -> KindCap | None:
    """The cap of ``kind`` from its row of ``work_kind_controls`` (held slots not
    counted: ``running`` 0), or None when the row holds no cap."""
    if row["max_running"] is None:
        return None
    return KindCap(kind, row["max_running"], CapSource(row["cap_source"]), row["cap_set_at"], 0)


def kind_cap_from_caps_row(row: asyncpg.Record) -> KindCap:
    """A :class:`~workqueue.domain.KindCap` from a row of the ``caps`` statement."""
    return KindCap(
        row["kind"],
        row["max_running"],
        CapSource(row["cap_source"]),
        row["cap_set_at"],
        row["running"],
    )
