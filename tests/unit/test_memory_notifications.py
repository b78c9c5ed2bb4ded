"""InMemoryWorkNotifications: an idle worker wakes when the in-memory queue creates its kind."""

from __future__ import annotations

import asyncio
from enum import StrEnum

import pytest

from workqueue.adapters.memory import (
    InMemoryState,
    InMemoryWorkNotifications,
    InMemoryWorkQueue,
    InMemoryWorkStore,
)
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract import AlphaJob, BetaJob, ContractKind
from workqueue.domain import EnqueueRequest


class Unrelated(StrEnum):
    OTHER = "other"


def fakes() -> tuple[InMemoryWorkQueue, InMemoryWorkNotifications]:
    """A queue and notifications sharing one fresh state."""
    state = InMemoryState()
    return InMemoryWorkQueue(state, FakeClock()), InMemoryWorkNotifications(state)


async def test_a_waiter_wakes_when_an_item_of_its_kind_is_enqueued() -> None:
    queue, notifications = fakes()
    waiter = asyncio.create_task(notifications.wait_for_work([ContractKind.ALPHA]))
    await asyncio.sleep(0)

    await queue.enqueue(AlphaJob())

    await asyncio.wait_for(waiter, timeout=1)


async def test_a_waiter_sleeps_through_other_kinds() -> None:
    queue, notifications = fakes()
    waiter = asyncio.create_task(notifications.wait_for_work(["contract_alpha", Unrelated.OTHER]))
    await asyncio.sleep(0)

    await queue.enqueue(BetaJob())
    await asyncio.sleep(0)

    assert not waiter.done()
    waiter.cancel()


async def test_an_absorbed_enqueue_wakes_nobody() -> None:
    queue, notifications = fakes()
    await queue.enqueue(AlphaJob(), dedup_key="daily")
    waiter = asyncio.create_task(notifications.wait_for_work(["contract_alpha"]))
    await asyncio.sleep(0)

    result = await queue.enqueue(AlphaJob(), dedup_key="daily")
    await asyncio.sleep(0)

    assert result.absorbed
    assert not waiter.done()
    waiter.cancel()


async def test_enqueues_before_the_wait_do_not_count() -> None:
    queue, notifications = fakes()
    await queue.enqueue(AlphaJob())

    waiter = asyncio.create_task(notifications.wait_for_work(["contract_alpha"]))
    await asyncio.sleep(0)

    assert not waiter.done()
    waiter.cancel()


async def test_every_waiter_for_the_kind_wakes() -> None:
    queue, notifications = fakes()
    waiters = [
        asyncio.create_task(notifications.wait_for_work(["contract_alpha"])) for _ in range(3)
    ]
    await asyncio.sleep(0)

    await queue.enqueue_many([EnqueueRequest(AlphaJob()), EnqueueRequest(AlphaJob())])

    await asyncio.wait_for(asyncio.gather(*waiters), timeout=1)


async def test_a_waiter_on_another_state_is_not_woken() -> None:
    queue, _ = fakes()
    _, elsewhere = fakes()
    waiter = asyncio.create_task(elsewhere.wait_for_work(["contract_alpha"]))
    await asyncio.sleep(0)

    await queue.enqueue(AlphaJob())
    await asyncio.sleep(0)

    assert not waiter.done()
    waiter.cancel()


@pytest.fixture
def state() -> InMemoryState:
    return InMemoryState()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


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


async def test_a_resume_wakes_a_waiter_for_the_kind_and_a_resume_of_nothing_does_not() -> None:
    state = InMemoryState()
    store, notifications = InMemoryWorkStore(state, FakeClock()), InMemoryWorkNotifications(state)
    await store.pause_kind(ContractKind.ALPHA)
    waiter = asyncio.create_task(notifications.wait_for_work([ContractKind.ALPHA]))
    await asyncio.sleep(0)

    await store.resume_kind(ContractKind.BETA)
    await asyncio.sleep(0)
    assert not waiter.done()

    await store.resume_kind(ContractKind.ALPHA)
    await asyncio.wait_for(waiter, timeout=1)


@pytest.mark.parametrize("max_running", [2, None], ids=["a new cap", "a cleared cap"])
async def test_a_changed_cap_wakes_a_waiter_for_the_kind_and_an_unchanged_one_does_not(
    max_running: int | None,
) -> None:
    state = InMemoryState()
    store, notifications = InMemoryWorkStore(state, FakeClock()), InMemoryWorkNotifications(state)
    await store.cap_kind(ContractKind.ALPHA.value, 1)
    await store.cap_kind(ContractKind.BETA.value, 1)
    waiter = asyncio.create_task(notifications.wait_for_work([ContractKind.ALPHA]))
    await asyncio.sleep(0)

    await store.cap_kind(ContractKind.ALPHA.value, 1)
    await store.cap_kind(ContractKind.BETA.value, max_running)
    await asyncio.sleep(0)
    assert not waiter.done()

    await store.cap_kind(ContractKind.ALPHA.value, max_running)
    await asyncio.wait_for(waiter, timeout=1)
