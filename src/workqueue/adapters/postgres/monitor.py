"""PostgresWorkMonitor: the admin view's read-only queries on ``work_items``.

Every statement is in ``sql/monitor.sql`` and runs on an index (the EXPLAIN
tests in tests/integration/test_monitor_indexes.py). Nothing here writes, so the
monitor works for a role with only ``SELECT`` on ``work_items``. It borrows a pool
connection per read: a page view is a handful of reads seconds apart, with
nothing to gain from keeping one.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

import asyncpg

from workqueue.adapters.postgres.rows import (
    kind_cap_from_caps_row,
    kind_pause_from_row,
    work_item_from_row,
)
from workqueue.adapters.postgres.sql import load_statements
from workqueue.adapters.postgres.unavailable import connection_loss_as_unavailable
from workqueue.domain import (
    LARGEST_ITEM_ID,
    BulkAction,
    BulkScope,
    KindCap,
    KindPause,
    ScheduleTurn,
    WorkItem,
    WorkMonitor,
    WorkStatus,
    kind_name,
    unstorable_character,
)

__all__ = ["PostgresWorkMonitor"]

_SQL = load_statements("monitor.sql")
_CAPPED_KINDS = load_statements("caps.sql")["capped_kinds"]
# The statement that reads what each bulk action would take.
_BULK_SCOPE = {
    BulkAction.REQUEUE_FAILED: "bulk_scope_requeue_failed",
    BulkAction.CANCEL_QUEUED: "bulk_scope_cancel_queued",
}


class PostgresWorkMonitor(WorkMonitor):  # pragma: no mutate block
    """A :class:`~workqueue.domain.WorkMonitor` on the ``work_items`` table.

    :param pool: connections to a migrated database (see :func:`create_pool`); the
        role needs ``SELECT`` on ``work_items`` and nothing else.
    """

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def _fetch(self, name: str, *arguments: object) -> list[asyncpg.Record]:
        with connection_loss_as_unavailable():
            rows: list[asyncpg.Record] = await self._pool.fetch(_SQL[name], *arguments)
        return rows

    async def _counts(self, name: str, *arguments: object) -> dict[tuple[str, WorkStatus], int]:
        rows = await self._fetch(name, *arguments)
        return {(row["kind"], WorkStatus(row["status"])): row["items"] for row in rows}

    async def count_live(self) -> dict[tuple[str, WorkStatus], int]:
        """See :meth:`~workqueue.domain.WorkMonitor.count_live`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        return await self._counts("count_live")

    async def count_finished(self) -> dict[tuple[str, WorkStatus], int]:
        """See :meth:`~workqueue.domain.WorkMonitor.count_finished`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        return await self._counts("count_finished")

    async def oldest_queued(self) -> dict[str, datetime]:
        """See :meth:`~workqueue.domain.WorkMonitor.oldest_queued`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        return {row["kind"]: row["enqueued_at"] for row in await self._fetch("oldest_queued")}

    async def running(self) -> list[WorkItem]:
        """See :meth:`~workqueue.domain.WorkMonitor.running`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        return [work_item_from_row(row) for row in await self._fetch("running")]

    async def queued(
        self, *, kind: str | None = None, after_id: int = 0, limit: int
    ) -> list[WorkItem]:
        """See :meth:`~workqueue.domain.WorkMonitor.queued`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        limit = max(limit, 0)
        if kind is None:
            rows = await self._fetch("queued", after_id, limit)
        else:
            rows = await self._fetch("queued_of_kind", kind_name(kind), after_id, limit)
        return [work_item_from_row(row) for row in rows]

    async def recent_unsuccessful(self, *, limit: int) -> list[WorkItem]:
        """See :meth:`~workqueue.domain.WorkMonitor.recent_unsuccessful`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        rows = await self._fetch("recent_unsuccessful", max(limit, 0))
        return [work_item_from_row(row) for row in rows]

    async def count_unsuccessful_since(self, since: datetime) -> dict[tuple[str, WorkStatus], int]:
        """See :meth:`~workqueue.domain.WorkMonitor.count_unsuccessful_since`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        return await self._counts("count_unsuccessful_since", since)

    async def stalls_since(self, since: datetime) -> dict[str, int]:
        """See :meth:`~workqueue.domain.WorkMonitor.stalls_since`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        return {row["kind"]: row["stalls"] for row in await self._fetch("stalls_since", since)}

    async def item(self, item_id: int) -> WorkItem | None:
        """See :meth:`~workqueue.domain.WorkMonitor.item`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        if item_id > LARGEST_ITEM_ID:
            return None  # beyond a bigint: no item has it
        rows = await self._fetch("item", item_id)
        return work_item_from_row(rows[0]) if rows else None

    async def items_by_dedup_key(self, dedup_key: str, *, limit: int) -> list[WorkItem]:
        """See :meth:`~workqueue.domain.WorkMonitor.items_by_dedup_key`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        if unstorable_character(dedup_key) is not None:
            return []  # text PostgreSQL refuses to compare with: no row holds it
        rows = await self._fetch("items_by_dedup_key", dedup_key, max(limit, 0))
        return [work_item_from_row(row) for row in rows]

    async def bulk_scope(self, kind: str, action: BulkAction) -> BulkScope:
        """See :meth:`~workqueue.domain.WorkMonitor.bulk_scope`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        if unstorable_character(kind) is not None:
            return BulkScope(0, None)  # text PostgreSQL refuses to compare with
        rows = await self._fetch(_BULK_SCOPE[action], kind)
        return BulkScope(rows[0]["count"], rows[0]["up_to_id"])

    async def schedule_turns(self, kinds: Collection[str]) -> dict[str, ScheduleTurn]:
        """See :meth:`~workqueue.domain.WorkMonitor.schedule_turns`.

        Reads ``work_schedules`` too: the role needs ``SELECT`` on it.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        if not kinds:  # no periodic kinds: no need of the grant on work_schedules
            return {}
        rows = await self._fetch("schedule_turns", [kind_name(kind) for kind in kinds])
        return {
            row["periodic_kind"]: ScheduleTurn(
                newest=None if row["id"] is None else work_item_from_row(row),
                fired_at=row["fired_at"],
            )
            for row in rows
        }

    async def paused_kinds(self) -> list[KindPause]:
        """See :meth:`~workqueue.domain.WorkMonitor.paused_kinds`.

        Reads ``work_kind_pauses``: the role needs ``SELECT`` on it.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        return [kind_pause_from_row(row) for row in await self._fetch("paused_kinds")]

    async def capped_kinds(self) -> list[KindCap]:
        """See :meth:`~workqueue.domain.WorkMonitor.capped_kinds`.

        Reads ``work_kind_controls``: the role needs ``SELECT`` on it.
        """
        with connection_loss_as_unavailable():
            rows = await self._pool.fetch(_CAPPED_KINDS)
        return [kind_cap_from_caps_row(row) for row in rows]
