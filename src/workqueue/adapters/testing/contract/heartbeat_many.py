"""Contract: many leases heartbeated in one call, each fenced and answered on its own."""

from __future__ import annotations

from dataclasses import replace

from pydantic import JsonValue

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob
from workqueue.adapters.testing.contract.steps import (
    LEASE,
    a_lost_lease_beside_a_held_one,
    a_lost_lease_beside_a_held_one_of_the_same_attempt,
    claim,
)
from workqueue.domain import (
    HeartbeatAnswer,
    Lease,
    ProgressSnapshot,
    RunOutcome,
    WorkItem,
    WorkQueue,
    WorkStatus,
    WorkStore,
)

__all__ = ["HeartbeatManyContract"]


class HeartbeatManyContract:
    """``heartbeat_many``: what one heartbeat does, for each lease of a worker's lanes at once."""

    async def test_each_held_lease_is_extended_with_its_own_progress(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(BetaJob())
        await queue.enqueue(AlphaJob(number=3))
        first, second, third = [await claim(store) for _ in range(3)]
        await clock.advance(7)

        answers = await store.heartbeat_many(
            [
                (first.lease, {"page": 1}),
                (second.lease, ProgressSnapshot.of_value(["two", 2])),
                (third.lease, None),
            ],
            lease_duration=LEASE,
        )

        assert answers == [HeartbeatAnswer.HELD] * 3
        written: list[tuple[WorkItem, JsonValue]] = [
            (first, {"page": 1}),
            (second, ["two", 2]),
            (third, None),
        ]
        for claimed, progress in written:
            assert await backdoor.read_item(claimed.id) == replace(
                claimed,
                heartbeat_at=clock.now(),
                lease_expires_at=clock.now() + LEASE,
                progress=progress,
            )

    async def test_a_lease_no_longer_held_is_lost_and_changes_nothing_beside_held_ones(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        stale, reclaimed, held = await a_lost_lease_beside_a_held_one(queue, store, clock)
        await clock.advance(3)

        answers = await store.heartbeat_many(
            [(stale, {"from": "the old attempt"}), (held.lease, {"from": "the holder"})],
            lease_duration=LEASE,
        )

        assert answers == [HeartbeatAnswer.LOST, HeartbeatAnswer.HELD]
        assert not answers[0]
        assert await backdoor.read_item(reclaimed.id) == reclaimed
        item = await backdoor.read_item(held.id)
        assert item is not None
        assert (item.progress, item.lease_expires_at) == (
            {"from": "the holder"},
            clock.now() + LEASE,
        )

    async def test_each_lease_is_fenced_by_its_own_attempt_not_by_the_batchs(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        stale, reclaimed, held = await a_lost_lease_beside_a_held_one_of_the_same_attempt(
            queue, store, clock
        )
        await clock.advance(3)

        answers = await store.heartbeat_many(
            [(stale, {"from": "the old attempt"}), (held.lease, None)], lease_duration=LEASE
        )

        assert answers == [HeartbeatAnswer.LOST, HeartbeatAnswer.HELD]
        assert await backdoor.read_item(reclaimed.id) == reclaimed

    async def test_the_answers_come_in_the_order_of_the_leases(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(AlphaJob(number=2))
        await queue.enqueue(AlphaJob(number=3))
        first, second, third = [await claim(store) for _ in range(3)]
        await store.cancel(third.id, reason="enough")
        await store.finish(first.lease, RunOutcome.succeeded(None))

        answers = await store.heartbeat_many(
            [(third.lease, None), (first.lease, None), (second.lease, None)],
            lease_duration=LEASE,
        )

        assert answers == [
            HeartbeatAnswer.CANCEL_REQUESTED,
            HeartbeatAnswer.LOST,
            HeartbeatAnswer.HELD,
        ]

    async def test_a_lease_of_an_unknown_item_is_lost(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)

        answers = await store.heartbeat_many(
            [(Lease(claimed.id + 1000, 1), {"x": 1}), (claimed.lease, {"x": 2})],
            lease_duration=LEASE,
        )

        assert answers == [HeartbeatAnswer.LOST, HeartbeatAnswer.HELD]
        item = await backdoor.read_item(claimed.id)
        assert item is not None
        assert (item.status, item.progress) == (WorkStatus.RUNNING, {"x": 2})

    async def test_no_leases_is_no_answers(self, store: WorkStore) -> None:
        assert await store.heartbeat_many([], lease_duration=LEASE) == []
