"""A bulk requeue or cancel asks the store for batch after batch, each after the last id
the one before took, and stops at the first batch that takes fewer than it may."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from workqueue.adapters.memory import InMemoryState, InMemoryWorkQueue, InMemoryWorkStore
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.bulk import decode
from workqueue.adapters.testing.contract.kinds import AlphaJob, ContractKind
from workqueue.application import cancel_queued, requeue_failed
from workqueue.domain import LARGEST_ITEM_ID, BulkBatch, BulkResult, RunOutcome

ALPHA = ContractKind.ALPHA.value


class CountingStore(InMemoryWorkStore):
    """The in-memory store, noting where each batch started and what it took."""

    def __init__(self, state: InMemoryState, clock: FakeClock) -> None:
        super().__init__(state, clock)
        self.batches: list[tuple[int, BulkBatch]] = []

    async def requeue_failed(self, kind: str, **kwargs: Any) -> BulkBatch:
        batch = await super().requeue_failed(kind, **kwargs)
        self.batches.append((kwargs["after_id"], batch))
        return batch

    async def cancel_queued(self, kind: str, **kwargs: Any) -> BulkBatch:
        batch = await super().cancel_queued(kind, **kwargs)
        self.batches.append((kwargs["after_id"], batch))
        return batch


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def state() -> InMemoryState:
    return InMemoryState()


@pytest.fixture
def store(state: InMemoryState, clock: FakeClock) -> CountingStore:
    return CountingStore(state, clock)


async def queued(state: InMemoryState, clock: FakeClock, count: int) -> list[int]:
    queue = InMemoryWorkQueue(state, clock)
    return [(await queue.enqueue(AlphaJob(number=n))).id for n in range(count)]


async def failed(state: InMemoryState, clock: FakeClock, store: CountingStore, count: int) -> None:
    await queued(state, clock, count)
    for _ in range(count):
        item = await store.claim([ALPHA], worker_id="w", lease_duration=timedelta(seconds=60))
        assert item is not None
        await store.finish(item.lease, RunOutcome.failed("boom", None))


async def test_a_batch_shorter_than_its_limit_is_the_last_one_asked_for(
    state: InMemoryState, clock: FakeClock, store: CountingStore
) -> None:
    await failed(state, clock, store, 3)

    result = await requeue_failed(
        ALPHA, up_to_id=LARGEST_ITEM_ID, store=store, decode=decode, batch=5
    )

    assert result == BulkResult(done=3)
    assert store.batches == [(0, BulkBatch(taken=3, done=3, last_id=3))]


async def test_a_full_batch_is_followed_by_one_after_its_last_id(
    state: InMemoryState, clock: FakeClock, store: CountingStore
) -> None:
    ids = await queued(state, clock, 4)

    result = await cancel_queued(
        ALPHA, up_to_id=LARGEST_ITEM_ID, store=store, reason="gone", batch=2
    )

    assert result == BulkResult(done=4)
    assert store.batches == [
        (0, BulkBatch(taken=2, done=2, last_id=ids[1])),
        (ids[1], BulkBatch(taken=2, done=2, last_id=ids[3])),
        (ids[3], BulkBatch(taken=0, done=0, last_id=None)),
    ]
