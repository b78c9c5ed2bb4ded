"""An enqueue wakes an idle worker's listener, and the listener survives a lost connection."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import asyncpg
import pytest
import pytest_asyncio

from workqueue.adapters.postgres import (
    PostgresWorkNotifications,
    PostgresWorkQueue,
    PostgresWorkStore,
)
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.domain import WorkSchedule

LISTENER_NAME = "workqueue-test-listener"
# Real time: these wait on a real server. Long enough for a loaded machine, and
# only spent in full when a test is about to fail.
PATIENCE = 10.0
# How long a listener is given to show it was NOT woken.
QUIET = 0.5
HOURLY_ALPHA = WorkSchedule(payload=AlphaJob(number=1), interval=timedelta(hours=1))


@pytest_asyncio.fixture
async def notifications(database_url: str) -> AsyncIterator[PostgresWorkNotifications]:
    async def connect() -> asyncpg.Connection:
        # Named, so a test can find (and kill) the listening connection.
        return await asyncpg.connect(
            database_url, server_settings={"application_name": LISTENER_NAME}
        )

    async with PostgresWorkNotifications(connect=connect, first_retry_delay=0.05) as listener:
        await asyncio.wait_for(listener.listening(), PATIENCE)
        yield listener


@pytest.fixture
def queue(migrated_pool: asyncpg.Pool) -> PostgresWorkQueue:
    return PostgresWorkQueue(migrated_pool, FakeClock())


async def start_waiting(
    notifications: PostgresWorkNotifications, *kinds: str
) -> asyncio.Task[None]:
    waiting = asyncio.create_task(notifications.wait_for_work(kinds))
    await asyncio.sleep(0)  # let it register before anything is enqueued
    return waiting


async def test_an_enqueue_wakes_a_listener_waiting_for_its_kind(
    notifications: PostgresWorkNotifications, queue: PostgresWorkQueue
) -> None:
    waiting = await start_waiting(notifications, ContractKind.ALPHA, ContractKind.BETA)

    await queue.enqueue(AlphaJob(number=1))

    await asyncio.wait_for(waiting, PATIENCE)


async def test_an_enqueue_of_another_kind_leaves_the_listener_waiting(
    notifications: PostgresWorkNotifications, queue: PostgresWorkQueue
) -> None:
    waiting = await start_waiting(notifications, ContractKind.ALPHA)

    await queue.enqueue(BetaJob(label="not for you"))

    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(waiting), QUIET)
    waiting.cancel()


async def test_an_absorbed_enqueue_wakes_nobody(
    notifications: PostgresWorkNotifications, queue: PostgresWorkQueue
) -> None:
    set_up = await start_waiting(notifications, ContractKind.ALPHA)
    await queue.enqueue(AlphaJob(number=1), dedup_key="once")
    # The first enqueue's own notification is heard first, so it cannot arrive late
    # and pass for one sent by the absorbed enqueue.
    await asyncio.wait_for(set_up, PATIENCE)
    waiting = await start_waiting(notifications, ContractKind.ALPHA)

    result = await queue.enqueue(AlphaJob(number=2), dedup_key="once")

    assert result.absorbed
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(waiting), QUIET)
    waiting.cancel()


async def test_a_periodic_kind_enqueued_because_it_is_due_wakes_a_listener(
    notifications: PostgresWorkNotifications, queue: PostgresWorkQueue
) -> None:
    waiting = await start_waiting(notifications, ContractKind.ALPHA)

    assert await queue.enqueue_if_due(HOURLY_ALPHA) is not None

    await asyncio.wait_for(waiting, PATIENCE)


async def test_a_periodic_kind_that_is_not_due_wakes_nobody(
    notifications: PostgresWorkNotifications, queue: PostgresWorkQueue
) -> None:
    set_up = await start_waiting(notifications, ContractKind.ALPHA)
    await queue.enqueue(AlphaJob(number=1))
    # The set-up enqueue's own notification is heard first, so it cannot arrive
    # late and pass for one sent by enqueue_if_due.
    await asyncio.wait_for(set_up, PATIENCE)
    waiting = await start_waiting(notifications, ContractKind.ALPHA)

    assert await queue.enqueue_if_due(HOURLY_ALPHA) is None

    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(waiting), QUIET)
    waiting.cancel()


async def terminate_listener(database_url: str) -> int:
    connection = await asyncpg.connect(database_url)
    try:
        terminated: int = await connection.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = $1 AND datname = current_database()",
            LISTENER_NAME,
        )
    finally:
        await connection.close()
    return terminated


async def test_the_listener_reconnects_after_its_connection_is_terminated(
    notifications: PostgresWorkNotifications, queue: PostgresWorkQueue, database_url: str
) -> None:
    waiting_through_the_loss = await start_waiting(notifications, ContractKind.ALPHA)

    assert await terminate_listener(database_url) == 1

    # Work may have been enqueued unheard while it was down: coming back wakes everyone.
    await asyncio.wait_for(waiting_through_the_loss, PATIENCE)
    await asyncio.wait_for(notifications.listening(), PATIENCE)
    waiting_after = await start_waiting(notifications, ContractKind.ALPHA)
    await queue.enqueue(AlphaJob(number=1))
    await asyncio.wait_for(waiting_after, PATIENCE)


async def test_the_listener_keeps_retrying_while_the_database_refuses_it() -> None:
    attempts = 0
    retried_twice = asyncio.Event()

    async def refuse() -> asyncpg.Connection:
        nonlocal attempts
        attempts += 1
        if attempts == 3:
            retried_twice.set()
        raise ConnectionRefusedError("nobody listens here")

    async with PostgresWorkNotifications(
        connect=refuse, first_retry_delay=0.01, max_retry_delay=0.02
    ) as listener:
        await asyncio.wait_for(retried_twice.wait(), PATIENCE)
        listening = asyncio.create_task(listener.listening())
        done, _ = await asyncio.wait([listening], timeout=0.1)
        listening.cancel()
        assert not done


async def test_a_resume_wakes_a_listener_waiting_for_the_kind_and_a_resume_of_nothing_does_not(
    notifications: PostgresWorkNotifications, migrated_pool: asyncpg.Pool
) -> None:
    store = PostgresWorkStore(migrated_pool, FakeClock())
    await store.pause_kind(ContractKind.ALPHA)
    waiting = await start_waiting(notifications, ContractKind.ALPHA)

    assert await store.resume_kind(ContractKind.BETA) is False
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(waiting), QUIET)

    assert await store.resume_kind(ContractKind.ALPHA) is True
    await asyncio.wait_for(waiting, PATIENCE)
