"""A claim or heartbeat that waits for a connection leases from when it is sent.

The PostgreSQL store reads the clock for a claim's or a heartbeat's lease only once
the statement has its connection (docs/adr/0036). A statement that waited for one
(the pool busy, or the event loop blocked by a handler meanwhile) then never writes
a lease that ran out before it reached the database, and the worker that claimed
secures the item until the lease written.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TypeVar

import asyncpg
import pytest

from workqueue.adapters.postgres import PostgresWorkQueue, PostgresWorkStore, create_pool
from workqueue.domain import HeartbeatAnswer, WorkPayload

T = TypeVar("T")
LEASE = timedelta(seconds=60)
WAITED = timedelta(seconds=90)


class StampKind(StrEnum):
    STAMPED = "stamped"


class Stamped(WorkPayload):
    kind = StampKind.STAMPED


class HandClock:
    """A clock moved by the test alone."""

    def __init__(self) -> None:
        self.at = datetime(2026, 12, 8, 9, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.at

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(0)


@pytest.fixture
async def pool_of_one(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(database_url, min_size=1, max_size=1)
    try:
        yield pool
    finally:
        await pool.close()


async def _sent_after_a_wait(
    pool: asyncpg.Pool, clock: HandClock, statement: Callable[[], Coroutine[object, object, T]]
) -> T:
    """Run ``statement`` while the test holds the pool's only connection and moves the
    clock on; it is sent once the connection is given back."""
    async with pool.acquire():
        waiting = asyncio.create_task(statement())
        await asyncio.sleep(0.1)
        assert not waiting.done()
        clock.at += WAITED
    return await waiting


async def test_a_claim_that_waited_for_a_connection_leases_from_when_it_was_sent(
    pool_of_one: asyncpg.Pool,
) -> None:
    clock = HandClock()
    store = PostgresWorkStore(pool_of_one, clock)
    enqueued = await PostgresWorkQueue(pool_of_one, clock).enqueue(Stamped())

    claimed = await _sent_after_a_wait(
        pool_of_one,
        clock,
        lambda: store.claim([StampKind.STAMPED], worker_id="w", lease_duration=LEASE),
    )

    assert claimed is not None
    assert claimed.id == enqueued.id
    assert claimed.started_at == clock.now()
    assert claimed.lease_expires_at == clock.now() + LEASE
    await store.close()


async def test_a_heartbeat_that_waited_for_a_connection_renews_from_when_it_was_sent(
    pool_of_one: asyncpg.Pool,
) -> None:
    clock = HandClock()
    store = PostgresWorkStore(pool_of_one, clock)
    await PostgresWorkQueue(pool_of_one, clock).enqueue(Stamped())
    claimed = await store.claim([StampKind.STAMPED], worker_id="w", lease_duration=LEASE)
    assert claimed is not None

    held = await _sent_after_a_wait(
        pool_of_one,
        clock,
        lambda: store.heartbeat(claimed.lease, progress=None, lease_duration=LEASE),
    )
    assert held is HeartbeatAnswer.HELD
    answers = await _sent_after_a_wait(
        pool_of_one,
        clock,
        lambda: store.heartbeat_many([(claimed.lease, None)], lease_duration=LEASE),
    )
    assert answers == [HeartbeatAnswer.HELD]

    async with pool_of_one.acquire() as connection:
        stored = await connection.fetchrow(
            "SELECT heartbeat_at, lease_expires_at FROM work_items WHERE id = $1", claimed.id
        )
    assert stored is not None
    assert (stored["heartbeat_at"], stored["lease_expires_at"]) == (
        clock.now(),
        clock.now() + LEASE,
    )
    await store.close()
