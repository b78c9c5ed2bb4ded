"""Reading one item on a psycopg connection: what a Django task's result is read from.

The statement is the monitor's own ``item`` (``adapters/postgres/sql/monitor.sql``),
sent as written through a :class:`psycopg.RawCursor`, on the caller's connection:
inside the caller's transaction, an item it enqueued and has not committed yet is
read too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import tuple_row
from psycopg.types.json import JsonbLoader

from workqueue.adapters.postgres.columns import ITEM_COLUMNS
from workqueue.adapters.postgres.sql import load_statements
from workqueue.adapters.psycopg.unavailable import enqueue_error
from workqueue.domain import Failure, WorkItem, WorkStatus

__all__ = ["item_from_row", "read_item"]

_ITEM = load_statements("monitor.sql")["item"]


def item_from_row(row: Sequence[Any]) -> WorkItem:
    """The :class:`~workqueue.domain.WorkItem` of a row of :data:`ITEM_COLUMNS`, in order.

    JSON columns arrive decoded; each failure is an object with its ``attempt``,
    ``at`` (ISO 8601 text) and ``error``.

    :raises ValueError: if the row's status is not a :class:`~workqueue.domain.WorkStatus`.
    """
    values = dict(zip(ITEM_COLUMNS, row, strict=True))
    values["status"] = WorkStatus(values["status"])
    values["failures"] = tuple(
        Failure(int(failure["attempt"]), datetime.fromisoformat(failure["at"]), failure["error"])
        for failure in values["failures"]
    )
    return WorkItem(**values)


def read_item(
    connection: psycopg.Connection[Any], item_id: int
) -> WorkItem | None:  # pragma: no mutate block
    """The item ``item_id`` (a bigint) as ``connection`` sees it; None if there is none.

    Whatever loaders the connection has (Django's load ``jsonb`` as text), JSON
    columns are decoded here.

    :raises StoreUnavailableError: if the database cannot be reached.
    """
    try:
        with psycopg.RawCursor(connection, row_factory=tuple_row) as cursor:
            cursor.adapters.register_loader("jsonb", JsonbLoader)
            cursor.execute(_ITEM, (item_id,))
            row = cursor.fetchone()
    except (psycopg.Error, OSError) as error:
        translated = enqueue_error(error)
        if translated is not None:
            raise translated from error
        raise
    return None if row is None else item_from_row(row)
