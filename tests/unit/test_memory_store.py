"""What the in-memory fakes do beyond the shared contract: outages, argument checks, ids."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, cast

import pytest

from adapters.memory import (
    InMemoryRefreshTokenStore,
    InMemoryState,
    InMemoryWorkQueue,
    InMemoryWorkStore,
)
from adapters.testing import FakeClock
from adapters.testing.contract import AlphaJob, ContractKind
from domain import (
    EnqueueRequest,
    InvalidPayloadError,
    Lease,
    StoreUnavailableError,
    WorkSchedule,
    WorkStatus,
)

LEASE = timedelta(seconds=60)


@pytest.fixture
def state() -> InMemoryState:
    return InMemoryState()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue(state: InMemoryState, clock: FakeClock) -> InMemoryWorkQueue:
    return InMemoryWorkQueue(state, clock)


@pytest.fixture
def store(state: InMemoryState, clock: FakeClock) -> InMemoryWorkStore:
    return InMemoryWorkStore(state, clock)


async def test_an_unavailable_state_fails_every_call_and_changes_nothing(
    state: InMemoryState, queue: InMemoryWorkQueue, store: InMemoryWorkStore, clock: FakeClock
) -> None:
    await queue.enqueue(AlphaJob())
    claimed = await store.claim(["contract_alpha"], worker_id="w", lease_duration=LEASE)
    assert claimed is not None
    before = state.snapshot()
    state.unavailable = True
    tokens = InMemoryRefreshTokenStore(state)

    calls = [
        queue.enqueue(AlphaJob()),
        queue.enqueue_many([EnqueueRequest(AlphaJob())]),
        queue.enqueue_if_due(WorkSchedule(payload=AlphaJob(), interval=LEASE)),
        store.claim(["contract_alpha"], worker_id="w", lease_duration=LEASE),
        store.heartbeat(claimed.lease, progress=None, lease_duration=LEASE),
        store.complete(claimed.lease, progress=None),
        store.fail(claimed.lease, error="x", progress=None),
        store.release(claimed.lease, progress=None),
        store.recover_expired(max_stalls=3),
        store.is_due("contract_alpha", LEASE),
        store.purge_finished(finished_before=clock.now(), limit=10),
        store.get(claimed.id),
        store.list_items(),
        store.count_by_kind_and_status(),
        tokens.delete_expired_and_revoked(now=clock.now(), limit=10),
    ]
    for call in calls:
        with pytest.raises(StoreUnavailableError):
            await call

    assert state.snapshot() == before


async def test_an_available_state_again_serves_calls(
    state: InMemoryState, queue: InMemoryWorkQueue
) -> None:
    state.unavailable = True
    with pytest.raises(StoreUnavailableError):
        await queue.enqueue(AlphaJob())

    state.unavailable = False

    assert (await queue.enqueue(AlphaJob())).created


async def test_a_payload_that_cannot_be_dumped_as_json_is_refused(
    state: InMemoryState, queue: InMemoryWorkQueue
) -> None:
    unserialisable = AlphaJob.model_construct(number=cast(Any, object()))

    with pytest.raises(InvalidPayloadError) as raised:
        await queue.enqueue(unserialisable)

    assert raised.value.kind == "contract_alpha"
    assert "JSON" in str(raised.value)
    assert state.items == {}


async def test_what_is_stored_is_the_validated_payload(
    state: InMemoryState, queue: InMemoryWorkQueue
) -> None:
    # A constructed payload with a value its model would coerce is stored coerced.
    coercible = AlphaJob.model_construct(number=cast(Any, True))

    result = await queue.enqueue(coercible)

    assert state.items[result.id].payload == {"number": 1}


async def test_ids_are_never_handed_out_twice_even_after_a_purge(
    queue: InMemoryWorkQueue, store: InMemoryWorkStore, clock: FakeClock
) -> None:
    first = await queue.enqueue(AlphaJob())
    item = await store.claim(["contract_alpha"], worker_id="w", lease_duration=LEASE)
    assert item is not None
    await store.complete(item.lease, progress=None)
    await clock.advance(1)
    assert await store.purge_finished(finished_before=clock.now(), limit=10) == 1

    second = await queue.enqueue(AlphaJob())

    assert second.id > first.id


@pytest.mark.parametrize("limit", [0, -1])
async def test_a_purge_limit_below_one_is_refused(
    store: InMemoryWorkStore, clock: FakeClock, limit: int
) -> None:
    with pytest.raises(ValueError, match="limit"):
        await store.purge_finished(finished_before=clock.now(), limit=limit)


@pytest.mark.parametrize("limit", [0, -1])
async def test_a_token_cleanup_limit_below_one_is_refused(
    state: InMemoryState, clock: FakeClock, limit: int
) -> None:
    with pytest.raises(ValueError, match="limit"):
        await InMemoryRefreshTokenStore(state).delete_expired_and_revoked(
            now=clock.now(), limit=limit
        )


async def test_a_stall_limit_below_one_is_refused(store: InMemoryWorkStore) -> None:
    with pytest.raises(ValueError, match="max_stalls"):
        await store.recover_expired(max_stalls=0)


async def test_changing_a_claimed_item_changes_nothing_stored(
    state: InMemoryState, queue: InMemoryWorkQueue, store: InMemoryWorkStore
) -> None:
    await queue.enqueue(AlphaJob(number=1))
    item = await store.claim([ContractKind.ALPHA], worker_id="w", lease_duration=LEASE)
    assert item is not None

    item.payload["number"] = 2

    assert state.items[item.id].payload == {"number": 1}


async def test_progress_written_by_a_heartbeat_is_not_shared_with_the_caller(
    state: InMemoryState, queue: InMemoryWorkQueue, store: InMemoryWorkStore
) -> None:
    await queue.enqueue(AlphaJob())
    item = await store.claim(["contract_alpha"], worker_id="w", lease_duration=LEASE)
    assert item is not None
    snapshot: dict[str, Any] = {"done": [1]}
    await store.heartbeat(item.lease, progress=snapshot, lease_duration=LEASE)

    snapshot["done"].append(2)

    assert state.items[item.id].progress == {"done": [1]}
    assert state.items[item.id].status is WorkStatus.RUNNING


async def test_a_write_with_a_lease_on_a_purged_item_is_refused(
    queue: InMemoryWorkQueue, store: InMemoryWorkStore, clock: FakeClock
) -> None:
    await queue.enqueue(AlphaJob())
    item = await store.claim(["contract_alpha"], worker_id="w", lease_duration=LEASE)
    assert item is not None
    await store.complete(item.lease, progress=None)
    await clock.advance(1)
    await store.purge_finished(finished_before=clock.now(), limit=10)

    assert await store.heartbeat(Lease(item.id, 1), progress=None, lease_duration=LEASE) is False
