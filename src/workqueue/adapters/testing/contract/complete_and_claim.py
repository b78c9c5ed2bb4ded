"""Contract: complete_and_claim does what complete and then claim would, in one call."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import ClassVar

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.claim import claim_past_a_locked_item, row_locking_backdoor
from workqueue.adapters.testing.contract.fixtures import StoreFactory
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind, GammaJob
from workqueue.adapters.testing.contract.race import at_once
from workqueue.adapters.testing.contract.steps import (
    ALL_KINDS,
    LEASE,
    WORKER,
    claim,
    lost_lease_after_a_reclaim,
)
from workqueue.domain import EnqueueRequest, RunOutcome, WorkItem, WorkQueue, WorkStatus, WorkStore

__all__ = ["CompleteAndClaimContract"]


class CompleteAndClaimContract:
    """Semantics 2 and 4 together: a fenced completion, then a FIFO claim of the given kinds.

    ``racing_workers`` and ``racing_items`` size the drain race,
    ``workers_per_round`` and ``rounds`` the barrier race, and
    ``lock_patience_seconds`` is how long its claim may take beside a locked row;
    an adapter may raise them, never lower them below the defaults.
    """

    racing_workers: ClassVar[int] = 4
    racing_items: ClassVar[int] = 200
    workers_per_round: ClassVar[int] = 8
    rounds: ClassVar[int] = 30
    lock_patience_seconds: ClassVar[float] = 10.0

    async def test_it_completes_the_lease_and_claims_the_oldest_queued_item(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        first = await queue.enqueue(AlphaJob(number=1))
        second = await queue.enqueue(AlphaJob(number=2), dedup_key="two")
        await queue.enqueue(AlphaJob(number=3))
        running = await claim(store, worker_id="worker-1")
        await clock.advance(7)

        completed, claimed = await store.complete_and_claim(
            running.lease,
            progress={"rows": 9},
            kinds=ALL_KINDS,
            worker_id="worker-1",
            lease_duration=LEASE,
        )

        assert completed is True
        done = await backdoor.read_item(first.id)
        assert done is not None
        assert (done.status, done.finished_at, done.progress) == (
            WorkStatus.SUCCEEDED,
            clock.now(),
            {"rows": 9},
        )
        assert (done.lease_expires_at, done.error, done.worker_id) == (None, None, "worker-1")
        assert claimed is not None
        assert claimed.id == second.id
        assert (claimed.status, claimed.attempt, claimed.stalls) == (WorkStatus.RUNNING, 1, 0)
        assert claimed.started_at == claimed.heartbeat_at == clock.now()
        assert claimed.lease_expires_at == clock.now() + LEASE
        assert (claimed.worker_id, claimed.payload, claimed.dedup_key) == (
            "worker-1",
            {"number": 2},
            "two",
        )
        assert (claimed.finished_at, claimed.error, claimed.progress) == (None, None, None)
        assert await backdoor.read_item(second.id) == claimed

    async def test_it_claims_only_the_kinds_it_is_given_oldest_first(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob())
        await queue.enqueue(AlphaJob())
        beta = await queue.enqueue(BetaJob())
        gamma = await queue.enqueue(GammaJob())
        running = await claim(store)

        _, claimed = await store.complete_and_claim(
            running.lease,
            progress=None,
            kinds=(ContractKind.GAMMA, "contract_beta"),
            worker_id=WORKER,
            lease_duration=LEASE,
        )
        assert claimed is not None
        _, then = await store.complete_and_claim(
            claimed.lease,
            progress=None,
            kinds=("contract_beta", "contract_gamma"),
            worker_id=WORKER,
            lease_duration=LEASE,
        )

        assert claimed.id == beta.id
        assert then is not None
        assert then.id == gamma.id

    async def test_with_nothing_queued_it_completes_and_claims_nothing(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        await queue.enqueue(BetaJob())
        running = await claim(store, kinds=("contract_alpha",))

        outcome = await store.complete_and_claim(
            running.lease,
            progress=None,
            kinds=("contract_alpha",),
            worker_id=WORKER,
            lease_duration=LEASE,
        )

        assert outcome == (True, None)
        done = await backdoor.read_item(running.id)
        assert done is not None
        assert done.status is WorkStatus.SUCCEEDED

    async def test_with_no_kinds_it_completes_and_claims_nothing(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        queued = await queue.enqueue(AlphaJob())
        running = await claim(store)

        outcome = await store.complete_and_claim(
            running.lease, progress=None, kinds=(), worker_id=WORKER, lease_duration=LEASE
        )

        assert outcome == (True, None)
        left = await backdoor.read_item(queued.id)
        assert left is not None
        assert left.status is WorkStatus.QUEUED

    async def test_a_fenced_out_completion_writes_nothing_and_still_claims(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        lost, reclaimed = await lost_lease_after_a_reclaim(store, clock)
        following = await queue.enqueue(AlphaJob(number=2))

        completed, claimed = await store.complete_and_claim(
            lost, progress={"stale": True}, kinds=ALL_KINDS, worker_id=WORKER, lease_duration=LEASE
        )

        assert completed is False
        # The reclaimed attempt is untouched, and is not what the claim took.
        assert await backdoor.read_item(reclaimed.id) == reclaimed
        assert claimed is not None
        assert claimed.id == following.id
        assert claimed.attempt == 1
        assert await backdoor.read_item(following.id) == claimed

    async def test_a_completion_of_a_finished_item_changes_nothing_and_still_claims(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        following = await queue.enqueue(AlphaJob())
        running = await claim(store)
        assert await store.finish(running.lease, RunOutcome.failed("boom", None))
        failed = await backdoor.read_item(running.id)

        completed, claimed = await store.complete_and_claim(
            running.lease, progress=None, kinds=ALL_KINDS, worker_id=WORKER, lease_duration=LEASE
        )

        assert completed is False
        assert await backdoor.read_item(running.id) == failed
        assert claimed is not None
        assert claimed.id == following.id

    async def test_workers_draining_with_it_side_by_side_never_share_an_item(
        self, queue: WorkQueue, store_factory: StoreFactory, backdoor: Backdoor
    ) -> None:
        await queue.enqueue_many(
            [EnqueueRequest(AlphaJob(number=n)) for n in range(self.racing_items)]
        )
        claims: list[tuple[int, str]] = []

        async def drain(store: WorkStore, worker_id: str) -> None:
            item = await store.claim(ALL_KINDS, worker_id=worker_id, lease_duration=LEASE)
            while item is not None:
                claims.append((item.id, worker_id))
                # Let the other workers in between the claim and the completion.
                await asyncio.sleep(0)
                completed, item = await store.complete_and_claim(
                    item.lease,
                    progress=None,
                    kinds=ALL_KINDS,
                    worker_id=worker_id,
                    lease_duration=LEASE,
                )
                assert completed

        stores = [await store_factory() for _ in range(self.racing_workers)]
        await asyncio.gather(*(drain(store, f"drainer-{n}") for n, store in enumerate(stores)))

        claimed_ids = [item_id for item_id, _ in claims]
        assert len(claimed_ids) == len(set(claimed_ids)) == self.racing_items
        items = await backdoor.all_items()
        assert all(item.status is WorkStatus.SUCCEEDED and item.attempt == 1 for item in items)
        assert {item.id: item.worker_id for item in items} == dict(claims)

    async def test_its_claim_passes_over_an_item_another_transaction_holds_locked(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        locking = row_locking_backdoor(backdoor)
        await queue.enqueue(AlphaJob(number=0))
        running = await claim(store)
        locked = await queue.enqueue(AlphaJob(number=1))
        free = await queue.enqueue(AlphaJob(number=2))

        async def complete_and_claim() -> WorkItem | None:
            completed, claimed = await store.complete_and_claim(
                running.lease,
                progress=None,
                kinds=ALL_KINDS,
                worker_id=WORKER,
                lease_duration=LEASE,
            )
            assert completed
            return claimed

        claimed = await claim_past_a_locked_item(
            locking, locked.id, complete_and_claim, self.lock_patience_seconds
        )

        assert claimed is not None, "complete_and_claim beside a locked item claimed nothing"
        assert claimed.id == free.id, "complete_and_claim took the item another transaction locked"

    async def test_workers_released_together_each_claim_a_different_next_item(
        self,
        queue: WorkQueue,
        store: WorkStore,
        store_factory: StoreFactory,
        backdoor: Backdoor,
    ) -> None:
        stores = [store] + [await store_factory() for _ in range(self.workers_per_round - 1)]
        for round_number in range(self.rounds):
            await queue.enqueue_many(
                [EnqueueRequest(AlphaJob(number=n)) for n in range(2 * len(stores))]
            )
            running = [await claim(store) for store in stores]

            outcomes = await at_once(
                [
                    partial(
                        store.complete_and_claim,
                        item.lease,
                        progress=None,
                        kinds=ALL_KINDS,
                        worker_id=f"worker-{n}",
                        lease_duration=LEASE,
                    )
                    for n, (store, item) in enumerate(zip(stores, running, strict=True))
                ]
            )

            assert all(completed for completed, _ in outcomes), f"round {round_number + 1}"
            ids = [claimed.id for _, claimed in outcomes if claimed is not None]
            assert len(ids) == len(set(ids)) == len(stores), (
                f"round {round_number + 1}: {len(stores)} workers completing and claiming "
                f"together over {len(stores)} queued items got {sorted(ids)}"
            )
            for _, claimed in outcomes:
                assert claimed is not None
                assert await backdoor.read_item(claimed.id) == claimed, (
                    f"round {round_number + 1}: item {claimed.id} was claimed twice"
                )
                assert await store.finish(claimed.lease, RunOutcome.succeeded(None))
