"""Contract: a lease lasts the duration the worker asks for, not a duration the store picks."""

from __future__ import annotations

from datetime import timedelta

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob
from workqueue.adapters.testing.contract.steps import (
    ALL_KINDS,
    LEASE,
    LONG_LEASE,
    MAX_STALLS,
    SHORT_LEASE,
    WORKER,
    claim,
)
from workqueue.domain import RecoveryResult, WorkQueue, WorkStore

__all__ = ["LeaseDurationContract"]

DURATIONS = [SHORT_LEASE, LONG_LEASE]
IDS = [f"{duration.total_seconds():g}s" for duration in DURATIONS]
MICROSECOND = timedelta(microseconds=1)


class LeaseDurationContract:
    """Semantics 2, 3 and 5: ``lease_duration`` sets ``lease_expires_at``, and expiry follows it.

    The worker's lease comes from its settings (``WORKQUEUE_LEASE_DURATION``); a
    store that leased for a fixed 60 s would let a longer-running handler's item be
    recovered under it, or keep a dead worker's item for too long.
    """

    @pytest.mark.parametrize("duration", DURATIONS, ids=IDS)
    async def test_a_claim_leases_for_the_duration_it_is_given(
        self,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
        duration: timedelta,
    ) -> None:
        await queue.enqueue(AlphaJob())

        item = await claim(store, lease=duration)

        assert item.lease_expires_at == clock.now() + duration
        assert await backdoor.read_item(item.id) == item

    @pytest.mark.parametrize("duration", DURATIONS, ids=IDS)
    async def test_a_lease_expires_when_its_own_duration_has_passed(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock, duration: timedelta
    ) -> None:
        await queue.enqueue(AlphaJob())
        item = await claim(store, lease=duration)

        await clock.advance(duration.total_seconds())
        assert await store.recover_expired(max_stalls=MAX_STALLS) == RecoveryResult()
        await clock.advance(MICROSECOND.total_seconds())
        assert await store.recover_expired(max_stalls=MAX_STALLS) == RecoveryResult(
            requeued=[item.id]
        )

    @pytest.mark.parametrize("duration", DURATIONS, ids=IDS)
    async def test_a_heartbeat_extends_the_lease_by_the_duration_it_is_given(
        self,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
        duration: timedelta,
    ) -> None:
        await queue.enqueue(AlphaJob())
        item = await claim(store, lease=LEASE)
        await clock.advance(5)

        assert await store.heartbeat(item.lease, progress=None, lease_duration=duration)

        stored = await backdoor.read_item(item.id)
        assert stored is not None
        assert stored.lease_expires_at == clock.now() + duration
        await clock.advance(duration.total_seconds())
        assert (await store.recover_expired(max_stalls=MAX_STALLS)).total == 0
        await clock.advance(MICROSECOND.total_seconds())
        assert (await store.recover_expired(max_stalls=MAX_STALLS)).requeued == [item.id]

    @pytest.mark.parametrize("duration", DURATIONS, ids=IDS)
    async def test_complete_and_claim_leases_the_next_item_for_the_duration_it_is_given(
        self,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
        duration: timedelta,
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        following = await queue.enqueue(AlphaJob(number=2))
        running = await claim(store)
        await clock.advance(3)

        _, claimed = await store.complete_and_claim(
            running.lease,
            progress=None,
            kinds=ALL_KINDS,
            worker_id=WORKER,
            lease_duration=duration,
        )

        assert claimed is not None
        assert claimed.id == following.id
        assert claimed.lease_expires_at == clock.now() + duration
        assert await backdoor.read_item(following.id) == claimed

    @pytest.mark.parametrize("duration", DURATIONS, ids=IDS)
    async def test_heartbeat_many_extends_each_lease_by_the_duration_it_is_given(
        self,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
        duration: timedelta,
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(AlphaJob(number=2))
        items = [await claim(store, lease=LEASE) for _ in range(2)]
        await clock.advance(5)

        answers = await store.heartbeat_many(
            [(item.lease, None) for item in items], lease_duration=duration
        )

        assert all(answers)
        for item in items:
            stored = await backdoor.read_item(item.id)
            assert stored is not None
            assert stored.lease_expires_at == clock.now() + duration

    @pytest.mark.parametrize("duration", DURATIONS, ids=IDS)
    async def test_complete_and_claim_many_leases_the_next_items_for_the_duration_it_is_given(
        self,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
        duration: timedelta,
    ) -> None:
        for number in range(4):
            await queue.enqueue(AlphaJob(number=number))
        running = [await claim(store) for _ in range(2)]
        await clock.advance(3)

        answers = await store.complete_and_claim_many(
            [(item.lease, None) for item in running],
            kinds=ALL_KINDS,
            worker_id=WORKER,
            lease_duration=duration,
        )

        claimed = [item for _, item in answers]
        assert len(claimed) == 2
        for item in claimed:
            assert item is not None
            assert item.lease_expires_at == clock.now() + duration
            assert await backdoor.read_item(item.id) == item

    async def test_each_item_expires_by_its_own_lease(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(AlphaJob(number=2))
        await queue.enqueue(AlphaJob(number=3))
        long = await claim(store, lease=LONG_LEASE)
        short = await claim(store, lease=SHORT_LEASE)
        usual = await claim(store, lease=LEASE)

        await clock.advance(SHORT_LEASE.total_seconds() + 1)
        first = await store.recover_expired(max_stalls=MAX_STALLS)
        await clock.advance((LEASE - SHORT_LEASE).total_seconds())
        second = await store.recover_expired(max_stalls=MAX_STALLS)
        await clock.advance((LONG_LEASE - LEASE).total_seconds())
        third = await store.recover_expired(max_stalls=MAX_STALLS)

        assert (first, second, third) == (
            RecoveryResult(requeued=[short.id]),
            RecoveryResult(requeued=[usual.id]),
            RecoveryResult(requeued=[long.id]),
        )
