"""PostgresActivityLog: the fleet's activity by minute, in ``work_activity`` and ``work_depth``.

Every statement is in ``sql/activity.sql`` (docs/adr/0040). A worker adds its
counts once a cycle and offers the minute's depth sample; the web view reads.
Each call borrows a pool connection: calls are seconds apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import asyncpg

from workqueue.adapters.postgres.sql import load_statements
from workqueue.adapters.postgres.unavailable import connection_loss_as_unavailable
from workqueue.domain import ACTIVITY_KEPT, ActivityLog, MinuteActivity, MinuteCounts, minute_of

__all__ = ["PostgresActivityLog"]

_SQL = load_statements("activity.sql")


class PostgresActivityLog(ActivityLog):  # pragma: no mutate block
    """An :class:`~workqueue.domain.ActivityLog` on ``work_activity`` and ``work_depth``.

    :param pool: connections to a migrated database. Adding and sampling need
        ``SELECT``, ``INSERT``, ``UPDATE`` and ``DELETE`` on both tables (and
        ``SELECT`` on ``work_items``); reading needs ``SELECT`` on both.
    """

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def add_counts(self, counts: Sequence[MinuteCounts]) -> None:
        """See :meth:`~workqueue.domain.ActivityLog.add_counts`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        if not counts:
            return
        with connection_loss_as_unavailable():
            await self._pool.execute(
                _SQL["add_counts"],
                [minute_of(count.minute) for count in counts],
                [count.kind for count in counts],
                [count.succeeded for count in counts],
                [count.failed for count in counts],
                [count.retried for count in counts],
            )

    async def sample_depth(self, minute: datetime) -> bool:
        """See :meth:`~workqueue.domain.ActivityLog.sample_depth`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        minute = minute_of(minute)
        with connection_loss_as_unavailable():
            took: bool = await self._pool.fetchval(
                _SQL["sample_depth"], minute, minute - ACTIVITY_KEPT
            )
        return took

    async def activity(self, since: datetime, *, kind: str | None = None) -> list[MinuteActivity]:
        """See :meth:`~workqueue.domain.ActivityLog.activity`.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        with connection_loss_as_unavailable():
            rows = await self._pool.fetch(_SQL["activity"], since, kind)
        return [
            MinuteActivity(
                minute=row["minute"],
                kind=kind,
                succeeded=row["succeeded"],
                failed=row["failed"],
                retried=row["retried"],
                queued=row["queued"],
                delayed=row["delayed"],
                running=row["running"],
            )
            for row in rows
        ]
