"""A lost connection surfaces from every queue and store method as StoreUnavailableError."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta

import asyncpg
import pytest
import pytest_asyncio

from integration.severable_link import SeverableLink
from workqueue.adapters.postgres import (
    PostgresRefreshTokenStore,
    PostgresWorkQueue,
    PostgresWorkStore,
    check_schema_current,
    close_pool,
    create_pool,
)
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, ContractKind
from workqueue.domain import EnqueueRequest, Lease, RunOutcome, StoreUnavailableError, WorkSchedule

LEASE = Lease(item_id=1, attempt=1)
MINUTE = timedelta(minutes=1)


class Adapters:
    def __init__(self, pool: asyncpg.Pool, clock: FakeClock) -> None:
        self.queue = PostgresWorkQueue(pool, clock)
        self.store = PostgresWorkStore(pool, clock)
        self.tokens = PostgresRefreshTokenStore(pool)
        self.now = clock.now()


CALLS: dict[str, Callable[[Adapters], Awaitable[object]]] = {
    "enqueue": lambda a: a.queue.enqueue(AlphaJob(number=1)),
    "enqueue_many": lambda a: a.queue.enqueue_many([EnqueueRequest(AlphaJob(number=1))]),
    "enqueue_if_due": lambda a: a.queue.enqueue_if_due(WorkSchedule(AlphaJob(number=1), MINUTE)),
    "claim": lambda a: a.store.claim([ContractKind.ALPHA], worker_id="w", lease_duration=MINUTE),
    "heartbeat": lambda a: a.store.heartbeat(LEASE, progress=None, lease_duration=MINUTE),
    "complete": lambda a: a.store.finish(LEASE, RunOutcome.succeeded(None)),
    "fail": lambda a: a.store.finish(LEASE, RunOutcome.failed("boom", None)),
    "release": lambda a: a.store.finish(LEASE, RunOutcome.released(None)),
    "recover_expired": lambda a: a.store.recover_expired(max_stalls=3),
    "purge_finished": lambda a: a.store.purge_finished(finished_before=a.now, limit=10),
    "get": lambda a: a.store.get(1),
    "list_items": lambda a: a.store.list_items(),
    "count_by_kind_and_status": lambda a: a.store.count_by_kind_and_status(),
    "delete_expired_and_revoked": lambda a: a.tokens.delete_expired_and_revoked(
        now=a.now, limit=10
    ),
}


@pytest_asyncio.fixture
async def link(database_url: str) -> AsyncIterator[SeverableLink]:
    link = SeverableLink(database_url)
    await link.open()
    try:
        yield link
    finally:
        await link.cut()


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
async def test_a_lost_database_raises_store_unavailable(
    link: SeverableLink, call: Callable[[Adapters], Awaitable[object]]
) -> None:
    # The pool's connection is open before the cut, so the call meets it dead
    # (and a new one is refused).
    pool = await create_pool(link.url, min_size=1, max_size=1)
    try:
        adapters = Adapters(pool, FakeClock())
        await link.cut()

        with pytest.raises(StoreUnavailableError) as raised:
            await call(adapters)

        assert isinstance(raised.value.__cause__, Exception)
    finally:
        pool.terminate()


async def test_the_store_works_again_once_the_database_is_back(link: SeverableLink) -> None:
    pool = await create_pool(link.url, min_size=1, max_size=1)
    try:
        store = PostgresWorkStore(pool, FakeClock())
        await link.cut()
        with pytest.raises(StoreUnavailableError):
            await store.get(1)

        await link.open()

        assert await store.get(1) is None
    finally:
        await close_pool(pool)


async def test_a_closed_pool_raises_store_unavailable(database_url: str) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=1)
    await pool.close()

    with pytest.raises(StoreUnavailableError):
        await PostgresWorkStore(pool, FakeClock()).get(1)


async def test_an_unreachable_server_raises_store_unavailable_from_the_schema_check() -> None:
    # Port 1 on loopback: nothing listens there, so the connection is refused at once.
    with pytest.raises(StoreUnavailableError):
        await check_schema_current("postgresql://postgres@127.0.0.1:1/postgres")


async def test_a_failing_statement_is_not_mistaken_for_an_outage(
    migrated_pool: asyncpg.Pool,
) -> None:
    store = PostgresWorkStore(migrated_pool, FakeClock())

    # A limit beyond bigint is the statement's fault, not the connection's.
    with pytest.raises(asyncpg.DataError):
        await store.list_items(limit=2**70)
