"""A store's statements go on one borrowed connection, and nothing is lost when it fails."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta

import asyncpg
import pytest

from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import (
    PostgresWorkQueue,
    PostgresWorkStore,
    create_pool,
    is_connection_loss,
)
from workqueue.adapters.postgres.held import IDLE_CHECK_SECONDS, HeldConnection
from workqueue.domain import StoreUnavailableError, TokenCleanup

BACKEND = "SELECT pg_backend_pid()"
# Long enough that a check or a close meets it still running; short enough for a test.
SLOW_BACKEND = "SELECT pg_backend_pid() FROM pg_sleep(0.3)"
QUICK_CHECK = 0.02


async def _terminate(pool: asyncpg.Pool, pid: int) -> None:
    async with pool.acquire() as other:
        assert await other.fetchval("SELECT pg_terminate_backend($1)", pid)


async def _fails_as_a_lost_connection_if_at_all(
    call: Awaitable[object], loss: type[Exception] | None = None
) -> bool:
    """Await ``call``: True when it succeeds or fails as a lost connection (as ``loss``)."""
    try:
        await call
    except Exception as error:
        failure: Exception | None = error
    else:
        failure = None
    if failure is None:
        return True
    return isinstance(failure, loss) if loss is not None else is_connection_loss(failure)


async def _until(condition: Callable[[], bool], *, within: float = 5.0) -> None:
    for _ in range(int(within / QUICK_CHECK)):
        if condition():
            return
        await asyncio.sleep(QUICK_CHECK)
    raise AssertionError(f"not so within {within} s")


async def test_statements_one_after_another_share_one_connection(
    migrated_pool: asyncpg.Pool,
) -> None:
    held = HeldConnection(migrated_pool)

    pids = {await held.fetchval(BACKEND) for _ in range(5)}

    assert len(pids) == 1
    assert held.holding
    await held.close()
    assert not held.holding


async def test_a_statement_meeting_the_held_connection_busy_goes_through_the_pool(
    migrated_pool: asyncpg.Pool,
) -> None:
    held = HeldConnection(migrated_pool)

    slow, quick = await asyncio.gather(held.fetchval(SLOW_BACKEND), held.fetchval(BACKEND))

    assert slow != quick
    assert await held.fetchval(BACKEND) == slow
    await held.close()


async def test_rows_and_values_come_back_as_from_the_pool(migrated_pool: asyncpg.Pool) -> None:
    held = HeldConnection(migrated_pool)

    rows = await held.fetch("SELECT n FROM generate_series(1, 3) AS n")
    row = await held.fetchrow("SELECT $1::int AS n, $2::jsonb AS doc", 7, {"a": [1]})
    nothing = await held.fetchrow("SELECT 1 WHERE false")

    assert [r["n"] for r in rows] == [1, 2, 3]
    assert row is not None
    assert (row["n"], row["doc"]) == (7, {"a": [1]})
    assert nothing is None
    await held.close()


async def test_a_failed_statement_raises_as_it_would_and_the_next_one_runs(
    migrated_pool: asyncpg.Pool,
) -> None:
    held = HeldConnection(migrated_pool)
    first = await held.fetchval(BACKEND)

    with pytest.raises(asyncpg.DivisionByZeroError):
        await held.fetchval("SELECT 1 / 0")

    assert not held.holding
    assert await held.fetchval("SELECT 2") == 2
    assert isinstance(first, int)
    await held.close()


async def test_a_connection_killed_under_the_store_is_unavailable_once_at_most_then_replaced(
    migrated_pool: asyncpg.Pool,
) -> None:
    store = PostgresWorkStore(migrated_pool, SystemClock())
    assert await store.count_by_kind_and_status() == {}
    async with migrated_pool.acquire() as other:
        killed = await other.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    assert killed >= 1  # the store's own connection among them

    # Unavailable if sent before the pool noticed, else on a fresh connection.
    assert await _fails_as_a_lost_connection_if_at_all(store.get(1), StoreUnavailableError)

    assert await store.get(1) is None
    await store.close()


async def test_a_killed_held_connection_fails_one_statement_at_most_and_the_next_gets_a_new_one(
    migrated_pool: asyncpg.Pool,
) -> None:
    held = HeldConnection(migrated_pool)
    first = await held.fetchval(BACKEND)
    await _terminate(migrated_pool, first)

    # Sent before the pool noticed the death, it fails as a lost connection; after,
    # it goes on a fresh connection (the test below).
    assert await _fails_as_a_lost_connection_if_at_all(held.fetchval(BACKEND))

    second = await held.fetchval(BACKEND)
    assert second != first
    await held.close()


async def test_a_held_connection_the_pool_took_back_when_it_died_is_never_used_again(
    migrated_pool: asyncpg.Pool,
) -> None:
    held = HeldConnection(migrated_pool, idle_check=60)
    first = await held.fetchval(BACKEND)
    await _terminate(migrated_pool, first)
    # The pool notices the closed socket and takes the connection back on its own.
    await asyncio.sleep(0.5)

    second = await held.fetchval(BACKEND)
    third = await held.fetchval(BACKEND)

    assert first != second == third
    await held.close()


async def test_a_cancelled_statement_gives_the_connection_back_and_the_next_one_runs(
    migrated_pool: asyncpg.Pool,
) -> None:
    held = HeldConnection(migrated_pool)
    running = asyncio.ensure_future(held.fetchval("SELECT pg_sleep(30)"))
    await _until(lambda: held.holding)
    await asyncio.sleep(0.1)  # the statement is on the server now

    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running

    assert not held.holding
    assert await asyncio.wait_for(held.fetchval("SELECT 3"), 5) == 3
    await held.close()


async def test_an_unused_connection_goes_back_to_the_pool_by_itself(database_url: str) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        held = HeldConnection(pool, idle_check=QUICK_CHECK)
        await held.fetchval(BACKEND)
        assert held.holding

        await _until(lambda: not held.holding and pool.get_idle_size() == pool.get_size())
    finally:
        await asyncio.wait_for(pool.close(), 5)


async def test_a_busy_connection_is_kept_past_its_idle_checks(migrated_pool: asyncpg.Pool) -> None:
    held = HeldConnection(migrated_pool, idle_check=QUICK_CHECK)
    before = await held.fetchval(BACKEND)

    # Over a dozen checks pass while the statement runs; none takes its connection.
    during = await held.fetchval(SLOW_BACKEND)

    assert during == before
    assert held.holding
    await held.close()


async def test_closing_the_pool_without_closing_the_store_or_queue_does_not_hang(
    database_url: str,
) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=3)
    clock = SystemClock()
    store = PostgresWorkStore(pool, clock)
    queue = PostgresWorkQueue(pool, clock)
    await queue.enqueue(TokenCleanup())
    await store.count_by_kind_and_status()

    # Well within the time asyncpg would wait (forever) for a connection never released.
    await asyncio.wait_for(pool.close(), 2)


async def test_a_closed_queue_hands_its_connection_back_and_still_enqueues(
    migrated_pool: asyncpg.Pool,
) -> None:
    queue = PostgresWorkQueue(migrated_pool, SystemClock())
    await queue.enqueue(TokenCleanup())
    idle_while_kept = migrated_pool.get_idle_size()

    await queue.close()

    assert migrated_pool.get_idle_size() == idle_while_kept + 1
    assert (await queue.enqueue(TokenCleanup())).created


async def test_close_during_a_statement_lets_it_finish_and_then_gives_the_connection_back(
    database_url: str,
) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        held = HeldConnection(pool)
        running = asyncio.ensure_future(held.fetchval(SLOW_BACKEND))
        await _until(lambda: held.holding)

        await held.close()
        pid = await running
        await _until(lambda: not held.holding)

        assert isinstance(pid, int)
        assert await held.fetchval("SELECT 4") == 4  # through the pool now
        assert not held.holding
    finally:
        await asyncio.wait_for(pool.close(), 5)


async def test_a_pool_with_no_other_connection_to_give_gets_it_back_after_each_statement(
    database_url: str,
) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=1)
    try:
        # An idle check a minute away: only the pool's shortage can send it back.
        held = HeldConnection(pool, idle_check=60)

        await held.fetchval(BACKEND)

        assert not held.holding
        await _until(lambda: pool.get_idle_size() == 1)
    finally:
        await asyncio.wait_for(pool.close(), 5)


async def test_a_queue_and_a_store_sharing_a_pool_of_one_take_turns_without_waiting(
    database_url: str,
) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=1)
    clock = SystemClock()
    queue = PostgresWorkQueue(pool, clock)
    store = PostgresWorkStore(pool, clock)
    try:
        # Were either to keep the only connection, each turn would wait for its idle check.
        async with asyncio.timeout(10 * IDLE_CHECK_SECONDS):
            for _ in range(10):
                await queue.enqueue(TokenCleanup())
                assert await store.count_by_kind_and_status()
    finally:
        await queue.close()
        await store.close()
        await asyncio.wait_for(pool.close(), 5)


async def test_a_sibling_store_keeps_a_connection_of_its_own_and_closes_with_its_store(
    migrated_pool: asyncpg.Pool,
) -> None:
    store = PostgresWorkStore(migrated_pool, SystemClock())
    sibling = store.sibling()

    await asyncio.gather(
        store.claim(["nothing"], worker_id="w", lease_duration=timedelta(seconds=5)),
        sibling.claim(["nothing"], worker_id="w", lease_duration=timedelta(seconds=5)),
    )
    assert migrated_pool.get_idle_size() <= migrated_pool.get_size() - 2

    await store.close()
    assert migrated_pool.get_idle_size() == migrated_pool.get_size()
