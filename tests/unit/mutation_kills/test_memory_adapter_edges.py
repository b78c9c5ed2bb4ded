"""The in-memory adapter at its edges: limits of one, default limits, ids, and listeners."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from adapters.memory import (
    InMemoryRefreshTokenStore,
    InMemoryState,
    InMemoryWorkNotifications,
    InMemoryWorkQueue,
    InMemoryWorkStore,
    StoredRefreshToken,
)
from adapters.testing import FakeClock
from domain import StoreUnavailableError, TokenCleanup, WorkItemRetention, WorkSchedule

LEASE = timedelta(seconds=60)


@pytest.fixture
def state() -> InMemoryState:
    return InMemoryState()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(state: InMemoryState, clock: FakeClock) -> InMemoryWorkStore:
    return InMemoryWorkStore(state, clock)


@pytest.fixture
def queue(state: InMemoryState, clock: FakeClock) -> InMemoryWorkQueue:
    return InMemoryWorkQueue(state, clock)


async def finish_one(queue: InMemoryWorkQueue, store: InMemoryWorkStore) -> int:
    item_id = (await queue.enqueue(TokenCleanup())).id
    claimed = await store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
    assert claimed is not None
    await store.complete(claimed.lease, progress=None)
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


class TestNotifications:
    async def test_a_wait_ends_on_an_item_of_its_kinds_only_and_then_stops_listening(
        self, state: InMemoryState, clock: FakeClock
    ) -> None:
        notifications = InMemoryWorkNotifications(state)
        waiting = asyncio.create_task(notifications.wait_for_work({"token_cleanup"}))
        await clock.settle()

        state.announce_enqueued("work_item_retention")
        await clock.settle()
        woken_by_another_kind = waiting.done()
        state.announce_enqueued("token_cleanup")
        state.announce_enqueued("token_cleanup")
        await clock.settle()

        assert (woken_by_another_kind, waiting.done()) == (False, True)
        waiting.result()
        # The state's listener list is its back door: nothing of the wait stays there.
        assert state._enqueue_listeners == []

    async def test_a_cancelled_wait_stops_listening(self, state: InMemoryState) -> None:
        notifications = InMemoryWorkNotifications(state)
        waiting = asyncio.create_task(notifications.wait_for_work({"token_cleanup"}))
        await asyncio.sleep(0)

        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

        assert state._enqueue_listeners == []


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

        assert not await store.is_due("token_cleanup", timedelta(hours=1))
        schedule = WorkSchedule(payload=TokenCleanup(), interval=timedelta(hours=1))
        assert await queue.enqueue_if_due(schedule) is None

    async def test_the_newest_finished_item_counts_behind_items_of_other_kinds(
        self, queue: InMemoryWorkQueue, store: InMemoryWorkStore, clock: FakeClock
    ) -> None:
        await finish_one(queue, store)
        await clock.advance(10)
        await queue.enqueue(WorkItemRetention())
        await finish_one(queue, store)

        await clock.advance(3599)
        assert not await store.is_due("token_cleanup", timedelta(hours=1))
        await clock.advance(1)
        assert await store.is_due("token_cleanup", timedelta(hours=1))


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
