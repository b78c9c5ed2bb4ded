"""What the in-memory fakes do beyond the shared contract: outages, argument checks, ids."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, cast

import pytest

from workqueue.adapters.memory import (
    InMemoryRefreshTokenStore,
    InMemoryState,
    InMemoryWorkQueue,
    InMemoryWorkStore,
    StoredRefreshToken,
)
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract import AlphaJob, ContractKind
from workqueue.domain import (
    EnqueueRequest,
    InvalidPayloadError,
    Lease,
    RunOutcome,
    StoreUnavailableError,
    TokenCleanup,
    WorkItemRetention,
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
        store.next_run_at(["contract_alpha"]),
        store.heartbeat(claimed.lease, progress=None, lease_duration=LEASE),
        store.finish(claimed.lease, RunOutcome.succeeded(None)),
        store.finish(claimed.lease, RunOutcome.failed("x", None)),
        store.finish(claimed.lease, RunOutcome.released(None)),
        store.recover_expired(max_stalls=3),
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
    await store.finish(item.lease, RunOutcome.succeeded(None))
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
    await store.finish(item.lease, RunOutcome.succeeded(None))
    await clock.advance(1)
    await store.purge_finished(finished_before=clock.now(), limit=10)

    assert not await store.heartbeat(Lease(item.id, 1), progress=None, lease_duration=LEASE)


async def finish_one(queue: InMemoryWorkQueue, store: InMemoryWorkStore) -> int:
    item_id = (await queue.enqueue(TokenCleanup())).id
    claimed = await store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
    assert claimed is not None
    await store.finish(claimed.lease, RunOutcome.succeeded(None))
    return item_id


class TestState:
    def test_a_new_state_is_available_and_numbers_from_one(self, state: InMemoryState) -> None:
        assert state.unavailable is False
        assert (state.next_item_id(), state.next_token_id()) == (1, 1)
        assert (state.next_item_id(), state.next_token_id()) == (2, 2)

    def test_an_unavailable_state_says_so(self, state: InMemoryState) -> None:
        state.unavailable = True

        with pytest.raises(StoreUnavailableError) as raised:
            state.check_available()

        assert str(raised.value) == "the in-memory store is marked unavailable"

    def test_unsubscribing_a_listener_that_never_subscribed_is_ignored(
        self, state: InMemoryState
    ) -> None:
        heard: list[str] = []
        state.subscribe_to_enqueues(heard.append)

        state.unsubscribe_from_enqueues(print)
        state.announce_enqueued("token_cleanup")
        state.unsubscribe_from_enqueues(heard.append)
        state.announce_enqueued("token_cleanup")

        assert heard == ["token_cleanup"]


class TestLimits:
    async def test_a_purge_of_one_deletes_one_and_a_purge_of_none_is_refused(
        self, queue: InMemoryWorkQueue, store: InMemoryWorkStore, clock: FakeClock
    ) -> None:
        await finish_one(queue, store)
        await finish_one(queue, store)
        await clock.advance(1)

        assert await store.purge_finished(finished_before=clock.now(), limit=1) == 1
        with pytest.raises(ValueError, match="purge limit must be at least 1, not 0"):
            await store.purge_finished(finished_before=clock.now(), limit=0)

    async def test_a_token_cleanup_of_one_deletes_one_and_of_none_is_refused(
        self, state: InMemoryState, clock: FakeClock
    ) -> None:
        for _ in range(2):
            token_id = state.next_token_id()
            state.refresh_tokens[token_id] = StoredRefreshToken(
                id=token_id,
                user_id=1,
                token_hash=f"h{token_id}",
                created_at=clock.now(),
                expires_at=clock.now() - timedelta(seconds=1),
            )
        tokens = InMemoryRefreshTokenStore(state)

        assert await tokens.delete_expired_and_revoked(now=clock.now(), limit=1) == 1
        with pytest.raises(ValueError, match="token cleanup limit must be at least 1, not 0"):
            await tokens.delete_expired_and_revoked(now=clock.now(), limit=0)

    async def test_a_listing_holds_a_hundred_items_unless_told_otherwise(
        self, queue: InMemoryWorkQueue, store: InMemoryWorkStore
    ) -> None:
        for _ in range(101):
            await queue.enqueue(TokenCleanup())

        assert len(await store.list_items()) == 100
        assert len(await store.list_items(limit=101)) == 101
        assert await store.list_items(limit=0) == []
        assert await store.list_items(limit=-1) == []


class TestDueness:
    async def test_items_of_other_kinds_do_not_hide_a_kind_that_is_not_due(
        self, queue: InMemoryWorkQueue, store: InMemoryWorkStore
    ) -> None:
        await queue.enqueue(WorkItemRetention())
        await queue.enqueue(TokenCleanup())

        schedule = WorkSchedule(payload=TokenCleanup(), interval=timedelta(hours=1))
        assert await queue.enqueue_if_due(schedule) is None

    async def test_the_newest_finished_item_counts_behind_items_of_other_kinds(
        self, queue: InMemoryWorkQueue, store: InMemoryWorkStore, clock: FakeClock
    ) -> None:
        await finish_one(queue, store)
        await clock.advance(10)
        await queue.enqueue(WorkItemRetention())
        await finish_one(queue, store)

        schedule = WorkSchedule(payload=TokenCleanup(), interval=timedelta(hours=1))
        await clock.advance(3599)
        assert await queue.enqueue_if_due(schedule) is None
        await clock.advance(1)
        assert await queue.enqueue_if_due(schedule) is not None


async def test_a_stall_limit_reached_says_how_often_and_what_the_limit_is(
    queue: InMemoryWorkQueue, store: InMemoryWorkStore, clock: FakeClock
) -> None:
    item_id = (await queue.enqueue(TokenCleanup())).id
    await store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
    await clock.advance(61)

    result = await store.recover_expired(max_stalls=1)

    assert result.stalled == [item_id]
    item = await store.get(item_id)
    assert item is not None
    assert item.error == "stalled: lease expired 1 times (max stalls 1)"
