"""The PostgreSQL back door: the kit's Backdoor as plain SQL on the documented tables.

Any store over ``work_items`` and ``refresh_tokens`` as DESIGN.md and
``docs/schema.sql`` lay them out can use it, ours or not: it shares nothing
with the adapter under test but the table layout (its own statements, in
``backdoor.sql``, and its own row reading). Inserting through it is how the kit
sets up rows the API would never make (finished items, expired leases).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from importlib.resources import files
from typing import Any

import asyncpg
from pydantic import JsonValue

from workqueue.adapters.postgres.sql import parse_statements
from workqueue.domain import Clock, Failure, WorkItem, WorkStatus, kind_name

__all__ = ["PostgresBackdoor"]

_SQL = parse_statements(
    "backdoor.sql",
    files("workqueue.adapters.testing.postgres")
    .joinpath("backdoor.sql")
    .read_text(encoding="utf-8"),
)


class PostgresBackdoor:
    """Writes and reads ``work_items`` and ``refresh_tokens`` with SQL of its own.

    JSON travels as text here, so the back door does not lean on the pool's JSON
    codecs either: a SQL ``null`` progress reads back as None, like a JSON one.
    It is a :class:`~workqueue.adapters.testing.contract.RowLockingBackdoor`: it can hold a
    row lock for the claim contract's skip-locked test.

    :param pool: a pool on the database under test (any asyncpg pool; no codecs needed).
    :param clock: where ``enqueued_at`` comes from when not given, and the now against
        which a queued item's ``run_at`` is still to come (the store's ``delayed``).
    """

    def __init__(self, pool: asyncpg.Pool, clock: Clock) -> None:
        self._pool = pool
        self._clock = clock

    async def insert_item(
        self,
        *,
        kind: str,
        payload: dict[str, Any] | None = None,
        status: WorkStatus = WorkStatus.QUEUED,
        attempt: int = 0,
        stalls: int = 0,
        dedup_key: str | None = None,
        enqueued_at: datetime | None = None,
        priority: int = 0,
        run_at: datetime | None = None,
        started_at: datetime | None = None,
        heartbeat_at: datetime | None = None,
        lease_expires_at: datetime | None = None,
        finished_at: datetime | None = None,
        worker_id: str | None = None,
        progress: JsonValue = None,
        error: str | None = None,
    ) -> int:
        enqueued = self._clock.now() if enqueued_at is None else enqueued_at
        item_id: int = await self._pool.fetchval(
            _SQL["insert_item"],
            kind_name(kind),
            json.dumps({} if payload is None else payload),
            WorkStatus(status).value,
            attempt,
            stalls,
            dedup_key,
            enqueued,
            started_at,
            heartbeat_at,
            lease_expires_at,
            finished_at,
            worker_id,
            None if progress is None else json.dumps(progress),
            error,
            priority,
            enqueued if run_at is None else run_at,
            self._clock.now(),
        )
        return item_id

    async def read_item(self, item_id: int) -> WorkItem | None:
        row = await self._pool.fetchrow(_SQL["read_item"], item_id)
        return None if row is None else _item(row)

    async def all_items(self) -> list[WorkItem]:
        return [_item(row) for row in await self._pool.fetch(_SQL["all_items"])]

    @asynccontextmanager
    async def lock_item(self, item_id: int) -> AsyncIterator[None]:
        """Hold ``SELECT ... FOR UPDATE`` on the item's row until the block exits.

        :raises LookupError: if there is no such item.
        """
        async with self._pool.acquire() as connection:
            transaction = connection.transaction()
            await transaction.start()
            try:
                if await connection.fetchval(_SQL["lock_item"], item_id) is None:
                    raise LookupError(f"no work item {item_id} to lock")
                yield
            finally:
                await transaction.rollback()

    async def insert_refresh_token(
        self,
        *,
        user_id: int,
        token_hash: str,
        created_at: datetime,
        expires_at: datetime,
        revoked_at: datetime | None = None,
    ) -> int:
        token_id: int = await self._pool.fetchval(
            _SQL["insert_refresh_token"], user_id, token_hash, created_at, expires_at, revoked_at
        )
        return token_id

    async def refresh_token_hashes(self) -> set[str]:
        return {row["token_hash"] for row in await self._pool.fetch(_SQL["refresh_token_hashes"])}


def _item(row: asyncpg.Record) -> WorkItem:
    fields = dict(row)
    fields["status"] = WorkStatus(fields["status"])
    fields["payload"] = json.loads(fields["payload"])
    fields["progress"] = None if fields["progress"] is None else json.loads(fields["progress"])
    fields["result"] = None if fields["result"] is None else json.loads(fields["result"])
    fields["trace_context"] = (
        None if fields["trace_context"] is None else json.loads(fields["trace_context"])
    )
    fields["failures"] = tuple(
        Failure(failure["attempt"], datetime.fromisoformat(failure["at"]), failure["error"])
        for failure in json.loads(fields["failures"])
    )
    return WorkItem(**fields)
