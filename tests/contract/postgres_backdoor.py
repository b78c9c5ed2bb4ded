"""The PostgreSQL back door: the contract kit's Backdoor as plain SQL on the tables.

It shares nothing with the adapter under test but the table layout: its own
statements, its own row reading. Inserting through it is how the kit sets up rows
the API would never make on its own (finished items, expired leases, odd ids).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import asyncpg
from pydantic import JsonValue

from adapters.testing import FakeClock
from domain import WorkItem, WorkStatus, kind_name

__all__ = ["PostgresBackdoor"]

_INSERT_ITEM = """
INSERT INTO work_items (
    kind, payload, status, attempt, stalls, dedup_key, enqueued_at, started_at,
    heartbeat_at, lease_expires_at, finished_at, worker_id, progress, error
)
VALUES ($1, $2::text::jsonb, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::text::jsonb, $14)
RETURNING id
"""
_ITEM_COLUMNS = """
id, kind, payload::text AS payload, status, attempt, stalls, dedup_key, enqueued_at,
started_at, heartbeat_at, lease_expires_at, finished_at, worker_id,
progress::text AS progress, error
"""
_READ_ITEM = f"SELECT {_ITEM_COLUMNS} FROM work_items WHERE id = $1"
_ALL_ITEMS = f"SELECT {_ITEM_COLUMNS} FROM work_items ORDER BY id"
_INSERT_TOKEN = """
INSERT INTO refresh_tokens (user_id, token_hash, created_at, expires_at, revoked_at)
VALUES ($1, $2, $3, $4, $5)
RETURNING id
"""
_TOKEN_HASHES = "SELECT token_hash FROM refresh_tokens"


class PostgresBackdoor:
    """Writes and reads ``work_items`` and ``refresh_tokens`` with SQL of its own.

    JSON travels as text here, so the back door does not lean on the pool's JSON
    codecs either: a SQL ``null`` progress reads back as None, like a JSON one.

    :param pool: a pool on the database under test.
    :param clock: where ``enqueued_at`` comes from when not given.
    """

    def __init__(self, pool: asyncpg.Pool, clock: FakeClock) -> None:
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
        started_at: datetime | None = None,
        heartbeat_at: datetime | None = None,
        lease_expires_at: datetime | None = None,
        finished_at: datetime | None = None,
        worker_id: str | None = None,
        progress: JsonValue = None,
        error: str | None = None,
    ) -> int:
        item_id: int = await self._pool.fetchval(
            _INSERT_ITEM,
            kind_name(kind),
            json.dumps({} if payload is None else payload),
            WorkStatus(status).value,
            attempt,
            stalls,
            dedup_key,
            self._clock.now() if enqueued_at is None else enqueued_at,
            started_at,
            heartbeat_at,
            lease_expires_at,
            finished_at,
            worker_id,
            None if progress is None else json.dumps(progress),
            error,
        )
        return item_id

    async def read_item(self, item_id: int) -> WorkItem | None:
        row = await self._pool.fetchrow(_READ_ITEM, item_id)
        return None if row is None else _item(row)

    async def all_items(self) -> list[WorkItem]:
        return [_item(row) for row in await self._pool.fetch(_ALL_ITEMS)]

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
            _INSERT_TOKEN, user_id, token_hash, created_at, expires_at, revoked_at
        )
        return token_id

    async def refresh_token_hashes(self) -> set[str]:
        return {row["token_hash"] for row in await self._pool.fetch(_TOKEN_HASHES)}


def _item(row: asyncpg.Record) -> WorkItem:
    fields = dict(row)
    fields["status"] = WorkStatus(fields["status"])
    fields["payload"] = json.loads(fields["payload"])
    fields["progress"] = None if fields["progress"] is None else json.loads(fields["progress"])
    return WorkItem(**fields)
