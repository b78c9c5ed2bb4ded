"""A claim that also completes a lease, ended by PostgreSQL to break a deadlock, is run
again: the worker never sees the deadlock (it once ended a worker at 64 lanes).

The deadlock is made here on purpose: another transaction locks the lease's row,
the store's statement locks the next queued item for its claim and then waits
for the lease's row, and the other transaction then asks for the queued item.
PostgreSQL ends the store's statement (it waited first); run again, it passes
over the queued item the other transaction now holds, waits until that
transaction ends, and then completes the lease.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta

import asyncpg
import pytest

from integration.test_dedup_races import (
    PATIENCE,
    Adapters,
    adapters,
    until_a_backend_waits_on_a_lock,
)
from workqueue.adapters.testing.contract.kinds import AlphaJob, ContractKind
from workqueue.domain import Lease, WorkStatus

__all__ = ["adapters"]

KINDS = [ContractKind.ALPHA.value]
LEASE = timedelta(seconds=60)
Completion = Callable[[Lease], Awaitable[tuple[bool, int | None]]]


async def deadlocked_once(
    database_url: str,
    adapters: Adapters,
    complete: Completion,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, queue, store = adapters
    caplog.set_level(logging.INFO, logger="workqueue.postgres")
    await queue.enqueue(AlphaJob(number=1))
    queued = await queue.enqueue(AlphaJob(number=2))
    running = await store.claim(KINDS, worker_id="w", lease_duration=LEASE)
    assert running is not None
    other = await asyncpg.connect(database_url)
    observer = await asyncpg.connect(database_url)
    try:
        transaction = other.transaction()
        await transaction.start()
        await other.execute("SELECT FROM work_items WHERE id = $1 FOR UPDATE", running.id)
        completing = asyncio.ensure_future(complete(running.lease))
        await until_a_backend_waits_on_a_lock(observer)
        # Asks for the queued item the store's claim holds: one of the two must give.
        await asyncio.wait_for(
            other.execute("SELECT FROM work_items WHERE id = $1 FOR UPDATE", queued.id),
            PATIENCE,
        )
        # The store's statement, run again, passes over the queued item and waits
        # for the lease's row once more; then the other transaction ends.
        await until_a_backend_waits_on_a_lock(observer)
        await transaction.rollback()
        completed, claimed = await asyncio.wait_for(completing, PATIENCE)
    finally:
        await other.close()
        await observer.close()

    assert "a statement was ended by DeadlockDetectedError; running it again" in caplog.messages
    # Run again while the other transaction held the queued item, the claim passed
    # over it; the completion went through once that transaction ended.
    assert (completed, claimed) == (True, None)
    done = await store.get(running.id)
    assert done is not None
    assert done.status is WorkStatus.SUCCEEDED
    assert [item.id for item in await store.list_items(statuses=[WorkStatus.QUEUED])] == [queued.id]


async def test_complete_and_claim_is_run_again_after_a_deadlock(
    database_url: str, adapters: Adapters, caplog: pytest.LogCaptureFixture
) -> None:
    _, _, store = adapters

    async def complete(lease: Lease) -> tuple[bool, int | None]:
        completed, claimed = await store.complete_and_claim(
            lease, progress=None, kinds=KINDS, worker_id="w", lease_duration=LEASE
        )
        return completed, None if claimed is None else claimed.id

    await deadlocked_once(database_url, adapters, complete, caplog)


async def test_complete_and_claim_many_is_run_again_after_a_deadlock(
    database_url: str, adapters: Adapters, caplog: pytest.LogCaptureFixture
) -> None:
    _, _, store = adapters

    async def complete(lease: Lease) -> tuple[bool, int | None]:
        [(completed, claimed)] = await store.complete_and_claim_many(
            [(lease, None)], kinds=KINDS, worker_id="w", lease_duration=LEASE
        )
        return completed, None if claimed is None else claimed.id

    await deadlocked_once(database_url, adapters, complete, caplog)
