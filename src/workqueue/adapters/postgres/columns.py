"""The one list of the ``work_items`` columns a :class:`~workqueue.domain.WorkItem` holds.

Every field of ``WorkItem``, in its order, is a column of ``work_items`` of the
same name: the statements select them as ``{{item_columns}}`` (see
:mod:`~workqueue.adapters.postgres.sql`), and
:func:`~workqueue.adapters.postgres.rows.work_item_from_row` reads them back. A new
column is a migration and a field of ``WorkItem``; no statement lists the columns
by hand. No driver is imported here: the psycopg adapter loads statements too.
"""

from __future__ import annotations

from dataclasses import fields

from workqueue.domain import WorkItem

__all__ = ["ITEM_COLUMNS", "item_columns"]

ITEM_COLUMNS: tuple[str, ...] = tuple(field.name for field in fields(WorkItem))
"""The ``work_items`` columns a :class:`~workqueue.domain.WorkItem` holds, in its order."""


def item_columns(alias: str | None = None) -> str:
    """:data:`ITEM_COLUMNS`, comma-separated, as a statement selects them.

    :param alias: a table alias to prefix each column with (``w`` gives ``w.id, ...``).
    """
    prefix = "" if alias is None else f"{alias}."
    return ", ".join(prefix + column for column in ITEM_COLUMNS)
