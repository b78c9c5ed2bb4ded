"""Contract: complete_and_claim_many does what complete_and_claim would for each, in one call."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import ClassVar

from pydantic import JsonValue

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.fixtures import StoreFactory
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.adapters.testing.contract.race import at_once
from workqueue.adapters.testing.contract.steps import (
    ALL_KINDS,
    LEASE,
    WORKER,
    a_lost_lease_beside_a_held_one,
    a_lost_lease_beside_a_held_one_of_the_same_attempt,
    claim,
)
from workqueue.domain import EnqueueRequest, RunOutcome, WorkItem, WorkQueue, WorkStatus, WorkStore

__all__ = ["CompleteAndClaimManyContract"]


class CompleteAndClaimManyContract:
    """A worker's lanes finishing items together: each completion fenced, the claims FIFO.

    ``racing_batches`` and ``batch_rounds`` size the race of workers completing
    and claiming together; an adapter may raise them, never lower them.
    """

    racing_batches: ClassVar[int] = 4
    batch_rounds: ClassVar[int] = 20

    async def test_each_lease_is_completed_and_the_oldest_items_claimed_first_for_the_first(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        for number in range(5):
            await queue.enqueue(AlphaJob(number=number))
        first, second = [await claim(store) for _ in range(2)]
        await clock.advance(4)

        answers = await store.complete_and_claim_many(
            [(first.lease, {"rows": 1}), (second.lease, None)],
            kinds=ALL_KINDS,
            worker_id="lanes",
            lease_duration=LEASE,
        )

        assert [completed for completed, _ in answers] == [True, True]
        claimed = [item for _, item in answers]
        assert [item.id if item else None for item in claimed] == [first.id + 2, first.id + 3]
        for item in claimed:
            assert item is not None
            assert await backdoor.read_item(item.id) == item
            assert (item.status, item.worker_id, item.attempt) == (WorkStatus.RUNNING, "lanes", 1)
            assert item.lease_expires_at == clock.now() + LEASE
        finished: list[tuple[WorkItem, JsonValue]] = [(first, {"rows": 1}), (second, None)]
        for done, progress in finished:
            assert await backdoor.read_item(done.id) == replace(
                done,
                status=WorkStatus.SUCCEEDED,
                finished_at=clock.now(),
                lease_expires_at=None,
                progress=progress,
            )

    async def test_each_completion_is_fenced_by_its_own_attempt_not_by_the_batchs(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        stale, reclaimed, held = await a_lost_lease_beside_a_held_one_of_the_same_attempt(
            queue, store, clock
        )

        answers = await store.complete_and_claim_many(
            [(stale, {"from": "the old attempt"}), (held.lease, None)],
            kinds=ALL_KINDS,
            worker_id=WORKER,
            lease_duration=LEASE,
        )

        assert [completed for completed, _ in answers] == [False, True]
        assert await backdoor.read_item(reclaimed.id) == reclaimed
        done = await backdoor.read_item(held.id)
        assert done is not None
        assert done.status is WorkStatus.SUCCEEDED

    async def test_a_lease_no_longer_held_is_not_completed_and_still_claims(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        stale, reclaimed, held = await a_lost_lease_beside_a_held_one(queue, store, clock)
        waiting = await queue.enqueue(AlphaJob(number=3))
        also = await queue.enqueue(AlphaJob(number=4))

        answers = await store.complete_and_claim_many(
            [(stale, {"from": "the old attempt"}), (held.lease, None)],
            kinds=ALL_KINDS,
            worker_id=WORKER,
            lease_duration=LEASE,
        )

        assert [(completed, item.id if item else None) for completed, item in answers] == [
            (False, waiting.id),
            (True, also.id),
        ]
        assert await backdoor.read_item(reclaimed.id) == reclaimed

    async def test_fewer_queued_items_than_completions_leave_the_last_without_one(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        for number in range(3):
            await queue.enqueue(AlphaJob(number=number))
        lanes = [await claim(store) for _ in range(2)]
        last = await queue.enqueue(BetaJob())

        answers = await store.complete_and_claim_many(
            [(running.lease, None) for running in lanes],
            kinds=ALL_KINDS,
            worker_id=WORKER,
            lease_duration=LEASE,
        )

        assert [(completed, item.id if item else None) for completed, item in answers] == [
            (True, last.id - 1),
            (True, last.id),
        ]
        second = await store.complete_and_claim_many(
            [(item.lease, None) for _, item in answers if item is not None],
            kinds=ALL_KINDS,
            worker_id=WORKER,
            lease_duration=LEASE,
        )
        assert second == [(True, None), (True, None)]

    async def test_only_the_given_kinds_are_claimed(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        running = await claim(store)
        await queue.enqueue(BetaJob())
        alpha = await queue.enqueue(AlphaJob(number=2))

        answers = await store.complete_and_claim_many(
            [(running.lease, None)],
            kinds=[ContractKind.ALPHA],
            worker_id=WORKER,
            lease_duration=LEASE,
        )

        assert [(completed, item.id if item else None) for completed, item in answers] == [
            (True, alpha.id)
        ]

    async def test_no_completions_is_no_answers_and_claims_nothing(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        queued = await queue.enqueue(AlphaJob())

        assert (
            await store.complete_and_claim_many(
                [], kinds=ALL_KINDS, worker_id=WORKER, lease_duration=LEASE
            )
            == []
        )
        item = await backdoor.read_item(queued.id)
        assert item is not None
        assert item.status is WorkStatus.QUEUED

    async def test_workers_completing_together_each_claim_different_items(
        self, queue: WorkQueue, store: WorkStore, store_factory: StoreFactory
    ) -> None:
        stores = [store] + [await store_factory() for _ in range(self.racing_batches - 1)]
        for round_number in range(self.batch_rounds):
            await queue.enqueue_many(
                [EnqueueRequest(AlphaJob(number=n)) for n in range(4 * len(stores))]
            )
            lanes = [[await claim(store) for _ in range(2)] for store in stores]

            answers = await at_once(
                [
                    partial(
                        store.complete_and_claim_many,
                        [(item.lease, None) for item in pair],
                        kinds=ALL_KINDS,
                        worker_id=f"worker-{n}",
                        lease_duration=LEASE,
                    )
                    for n, (store, pair) in enumerate(zip(stores, lanes, strict=True))
                ]
            )

            claimed = [item for batch in answers for _, item in batch if item is not None]
            ids = sorted(item.id for item in claimed)
            assert len(ids) == len(set(ids)) == 2 * len(stores), (
                f"round {round_number + 1}: {len(stores)} workers of two lanes completing "
                f"and claiming together got {ids}"
            )
            for item in claimed:
                assert await store.finish(item.lease, RunOutcome.succeeded(None)), (
                    f"round {round_number + 1}: item {item.id} was claimed twice"
                )
