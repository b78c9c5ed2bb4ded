"""Release and recovery stay race-free when an enqueue commits a queued twin under them.

The statements decide "requeue or supersede" from their snapshot. Here a twin is
inserted by a transaction that commits only once the release (or recovery) is
already waiting on the unique dedup index, the narrowest window there is: the
store must end with the twin queued and the returning item superseded by it,
not with an error and not with two queued twins.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta

import asyncpg
import pytest

from workqueue.adapters.postgres import (
    PostgresWorkQueue,
    PostgresWorkStore,
    close_pool,
    create_pool,
)
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, ContractKind
from workqueue.domain import RecoveryResult, RunOutcome, WorkItem, WorkStatus

KEY = "daily"
LEASE = timedelta(seconds=60)
PATIENCE = 10.0
POLL = 0.01


async def running_item_with_a_key(store: PostgresWorkStore, queue: PostgresWorkQueue) -> WorkItem:
    await queue.enqueue(AlphaJob(number=1), dedup_key=KEY)
    item = await store.claim([ContractKind.ALPHA], worker_id="w", lease_duration=LEASE)
    assert item is not None
    return item


async def insert_twin_uncommitted(connection: asyncpg.Connection, clock: FakeClock) -> int:
    twin_id: int = await connection.fetchval(
        "INSERT INTO work_items (kind, payload, status, dedup_key, enqueued_at) "
        "VALUES ($1, '{\"number\": 2}', 'queued', $2, $3) RETURNING id",
        ContractKind.ALPHA.value,
        KEY,
        clock.now(),
    )
    return twin_id


async def until_a_backend_waits_on_a_lock(connection: asyncpg.Connection) -> None:
    polls = int(PATIENCE / POLL)
    for _ in range(polls):
        if await connection.fetchval(
            "SELECT count(*) > 0 FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ):
            return
        await asyncio.sleep(POLL)
    raise AssertionError(f"no statement waited on a lock within {PATIENCE} s")


async def race_a_twin_against(
    database_url: str, clock: FakeClock, returning: Callable[[], Awaitable[object]]
) -> tuple[object, int]:
    """Insert a queued twin, start ``returning``, and commit the twin while it waits."""
    twin_writer = await asyncpg.connect(database_url)
    observer = await asyncpg.connect(database_url)
    try:
        transaction = twin_writer.transaction()
        await transaction.start()
        twin_id = await insert_twin_uncommitted(twin_writer, clock)
        returning_task = asyncio.ensure_future(returning())
        await until_a_backend_waits_on_a_lock(observer)
        await transaction.commit()
        outcome = await asyncio.wait_for(returning_task, PATIENCE)
    finally:
        await twin_writer.close()
        await observer.close()
    return outcome, twin_id


Adapters = tuple[FakeClock, PostgresWorkQueue, PostgresWorkStore]


@pytest.fixture
async def adapters(database_url: str) -> AsyncIterator[Adapters]:
    clock = FakeClock()
    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        yield clock, PostgresWorkQueue(pool, clock), PostgresWorkStore(pool, clock)
    finally:
        await close_pool(pool)


async def test_a_release_racing_a_committed_twin_is_superseded_by_it(
    database_url: str, adapters: Adapters
) -> None:
    clock, queue, store = adapters
    item = await running_item_with_a_key(store, queue)

    released, twin_id = await race_a_twin_against(
        database_url, clock, lambda: store.finish(item.lease, RunOutcome.released(None))
    )

    assert released is True
    after = await store.get(item.id)
    assert after is not None
    assert after.status is WorkStatus.FAILED
    assert after.error == f"superseded by queued item {twin_id} with the same dedup key"
    assert [queued.id for queued in await store.list_items(statuses=[WorkStatus.QUEUED])] == [
        twin_id
    ]


async def test_a_recovery_racing_a_committed_twin_supersedes_instead_of_failing(
    database_url: str, adapters: Adapters
) -> None:
    clock, queue, store = adapters
    item = await running_item_with_a_key(store, queue)
    await clock.advance(LEASE.total_seconds() + 1)

    result, twin_id = await race_a_twin_against(
        database_url, clock, lambda: store.recover_expired(max_stalls=3)
    )

    assert result == RecoveryResult(superseded=[item.id])
    after = await store.get(item.id)
    assert after is not None
    assert after.stalls == 1
    assert after.error == f"superseded by queued item {twin_id} with the same dedup key"
    assert [queued.id for queued in await store.list_items(statuses=[WorkStatus.QUEUED])] == [
        twin_id
    ]


async def test_an_enqueue_racing_a_release_is_absorbed_by_the_released_item(
    database_url: str, adapters: Adapters
) -> None:
    _, queue, store = adapters
    item = await running_item_with_a_key(store, queue)
    releaser = await asyncpg.connect(database_url)
    observer = await asyncpg.connect(database_url)
    try:
        # The release is in flight (its row back in queued, not yet committed) when
        # the enqueue arrives: the enqueue must wait for it, then be absorbed.
        transaction = releaser.transaction()
        await transaction.start()
        await releaser.execute(
            "UPDATE work_items SET status = 'queued', lease_expires_at = NULL, worker_id = NULL "
            "WHERE id = $1",
            item.id,
        )
        enqueue_task = asyncio.ensure_future(queue.enqueue(AlphaJob(number=2), dedup_key=KEY))
        await until_a_backend_waits_on_a_lock(observer)
        await transaction.commit()
        result = await asyncio.wait_for(enqueue_task, PATIENCE)
    finally:
        await releaser.close()
        await observer.close()

    assert result.absorbed
    assert result.id == item.id


async def test_an_enqueue_racing_another_enqueue_is_absorbed_by_the_winner(
    database_url: str, adapters: Adapters
) -> None:
    clock, queue, store = adapters
    twin_writer = await asyncpg.connect(database_url)
    observer = await asyncpg.connect(database_url)
    try:
        # The other enqueue commits only after ours has taken its snapshot and is
        # waiting on the unique index: ours then conflicts with a row its snapshot
        # cannot see, and must look again rather than report nothing.
        transaction = twin_writer.transaction()
        await transaction.start()
        winner_id = await insert_twin_uncommitted(twin_writer, clock)
        enqueue_task = asyncio.ensure_future(queue.enqueue(AlphaJob(number=3), dedup_key=KEY))
        await until_a_backend_waits_on_a_lock(observer)
        await transaction.commit()
        result = await asyncio.wait_for(enqueue_task, PATIENCE)
    finally:
        await twin_writer.close()
        await observer.close()

    assert result.absorbed
    assert result.id == winner_id
    assert [item.id for item in await store.list_items()] == [winner_id]
