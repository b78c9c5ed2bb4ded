"""A worker whose capped kind is full claims beside it, and takes it again once it has room.

While a capped kind a store serves has no room (its slots held elsewhere), the
store's claims run the plain statement with a probe of the capped kinds
(``complete_and_claim_beside_capped``, docs/adr/0035) instead of the capped one;
these tests hold that the cheaper path loses nothing: the capped kind's item is
claimed by the same call that finds a slot free, whoever freed it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
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
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.domain import RunOutcome, WorkItem

LEASE = timedelta(seconds=60)
ALPHA, BETA = ContractKind.ALPHA.value, ContractKind.BETA.value
BOTH = [ALPHA, BETA]


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(database_url, min_size=2, max_size=4)
    yield pool
    await close_pool(pool)


async def claimed(store: PostgresWorkStore, kinds: list[str], worker: str) -> WorkItem:
    item = await store.claim(kinds, worker_id=worker, lease_duration=LEASE)
    assert item is not None
    return item


async def beside_a_full_cap(pool: asyncpg.Pool) -> tuple[PostgresWorkStore, WorkItem, WorkItem]:
    """Alpha capped at 1, its slot held by another worker; ours claimed beta beside it.

    :returns: our store, the other worker's alpha item, our beta item.
    """
    clock = FakeClock()
    queue = PostgresWorkQueue(pool, clock)
    elsewhere, ours = PostgresWorkStore(pool, clock), PostgresWorkStore(pool, clock)
    await ours.cap_kind(ALPHA, 1)
    await queue.enqueue(AlphaJob(number=1))
    held = await claimed(elsewhere, [ALPHA], "elsewhere")
    await queue.enqueue(AlphaJob(number=2))
    await queue.enqueue(BetaJob())
    await queue.enqueue(BetaJob())
    beta = await claimed(ours, BOTH, "ours")
    assert beta.kind == BETA
    return ours, held, beta


async def test_a_full_capped_kind_is_passed_over_and_the_other_kinds_claimed(
    pool: asyncpg.Pool,
) -> None:
    ours, _, beta = await beside_a_full_cap(pool)

    answers = await ours.complete_and_claim_many(
        [(beta.lease, None)], kinds=BOTH, worker_id="ours", lease_duration=LEASE
    )

    assert [(held, item and item.kind) for held, item in answers] == [(True, BETA)]


async def test_a_slot_freed_elsewhere_is_taken_by_the_next_claim(pool: asyncpg.Pool) -> None:
    ours, held, beta = await beside_a_full_cap(pool)
    elsewhere = PostgresWorkStore(pool, FakeClock())
    await ours.complete_and_claim_many(
        [(beta.lease, None)], kinds=BOTH, worker_id="ours", lease_duration=LEASE
    )

    assert await elsewhere.finish(held.lease, RunOutcome.failed("boom"))
    item = await ours.claim(BOTH, worker_id="ours", lease_duration=LEASE)

    assert item is not None
    assert (item.kind, item.payload) == (ALPHA, {"number": 2})


async def test_a_completion_that_frees_the_slot_claims_the_capped_kind_in_the_same_call(
    pool: asyncpg.Pool,
) -> None:
    clock = FakeClock()
    queue = PostgresWorkQueue(pool, clock)
    store = PostgresWorkStore(pool, clock)
    await store.cap_kind(ALPHA, 1)
    await queue.enqueue(AlphaJob(number=1))
    alpha = await claimed(store, [ALPHA], "ours")
    await queue.enqueue(AlphaJob(number=2))
    await queue.enqueue(BetaJob())
    beta = await claimed(store, BOTH, "ours")

    answers = await store.complete_and_claim_many(
        [(alpha.lease, None), (beta.lease, None)],
        kinds=BOTH,
        worker_id="ours",
        lease_duration=LEASE,
    )

    assert [held for held, _ in answers] == [True, True]
    assert [(item.kind, item.payload) for _, item in answers if item is not None] == [
        (ALPHA, {"number": 2})
    ]
