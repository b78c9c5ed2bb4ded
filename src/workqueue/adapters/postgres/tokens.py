"""PostgresRefreshTokenStore: what token cleanup deletes, on PostgreSQL."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from workqueue.adapters.postgres.sql import load_statements
from workqueue.adapters.postgres.unavailable import connection_loss_as_unavailable

__all__ = ["PostgresRefreshTokenStore"]

_SQL = load_statements("tokens.sql")


class PostgresRefreshTokenStore:  # pragma: no mutate block
    """A :class:`~workqueue.domain.RefreshTokenStore` on the ``refresh_tokens`` table.

    A token is *expired* when ``expires_at < now`` and *revoked* when
    ``revoked_at`` is set; tokens go lowest id first. It needs no clock: the
    caller says what ``now`` is.

    :param pool: connections to a migrated database (see :func:`create_pool`).
    """

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def delete_expired_and_revoked(self, *, now: datetime, limit: int) -> int:
        """Delete at most ``limit`` tokens that expired before ``now`` or were revoked.

        :returns: how many were deleted.
        :raises ValueError: if ``limit`` is below 1.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        if limit < 1:
            raise ValueError(f"token cleanup limit must be at least 1, not {limit}")
        with connection_loss_as_unavailable():
            deleted = await self._pool.fetchval(_SQL["delete_expired_and_revoked"], now, limit)
        return int(deleted)
