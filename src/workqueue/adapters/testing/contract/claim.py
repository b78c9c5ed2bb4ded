"""Contract: a claim takes the oldest queued item of the given kinds, and only once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from functools import partial
from typing import ClassVar

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor, RowLockingBackdoor
from workqueue.adapters.testing.contract.fixtures import StoreFactory
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind, GammaJob
from workqueue.adapters.testing.contract.race import at_once
from workqueue.adapters.testing.contract.steps import ALL_KINDS, LEASE, WORKER, claim
from workqueue.domain import EnqueueRequest, RunOutcome, WorkItem, WorkQueue, WorkStatus, WorkStore

__all__ = ["ClaimContract", "claim_past_a_locked_item", "row_locking_backdoor"]


def row_locking_backdoor(backdoor: Backdoor) -> RowLockingBackdoor:
    """The back door, if it can hold a row lock; else the calling test is skipped, saying why.

    :raises pytest.skip.Exception: if the back door has no ``lock_item``.
    """
    if not isinstance(backdoor, RowLockingBackdoor):
        pytest.skip(
            "the back door cannot hold a row lock (no lock_item; see RowLockingBackdoor): "
            "claims passing over locked rows are checked by the race tests alone"
        )
    return backdoor


async def claim_past_a_locked_item(
    backdoor: RowLockingBackdoor,
    locked_id: int,
    claiming: Callable[[], Awaitable[WorkItem | None]],
    patience: float,
) -> WorkItem | None:
    """Run ``claiming`` while another transaction holds ``locked_id`` locked; return its item.

    :raises AssertionError: if the claim is still waiting after ``patience`` seconds.
    """
    async with backdoor.lock_item(locked_id):
        attempt = asyncio.ensure_future(claiming())
        await asyncio.wait({attempt}, timeout=patience)
        waited = not attempt.done()
    # The lock is gone now: a claim that waited for it can finish, and is let finish.
    claimed = await attempt
    assert not waited, (
        f"the claim waited {patience:g} s for item {locked_id}, which another transaction "
        "holds locked: a claim must pass over locked rows (FOR UPDATE SKIP LOCKED), "
        "not wait for them"
    )
    return claimed


class ClaimContract:
    """Semantics 2: FIFO by id, only the worker's kinds, and never one item twice.

    ``concurrent_claimers`` and ``concurrent_items`` size the drain race,
    ``claimers_per_round`` and ``claim_rounds`` the barrier race, and
    ``lock_patience_seconds`` is how long a claim may take beside a locked row
    (see :mod:`workqueue.adapters.testing.contract.race`); an adapter may raise them,
    never lower them below the defaults.
    """

    concurrent_claimers: ClassVar[int] = 20
    concurrent_items: ClassVar[int] = 500
    claimers_per_round: ClassVar[int] = 8
    claim_rounds: ClassVar[int] = 30
    lock_patience_seconds: ClassVar[float] = 10.0

    async def test_a_claim_takes_the_oldest_queued_item_first(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        ids = [(await queue.enqueue(AlphaJob(number=n))).id for n in range(3)]

        claimed = [(await claim(store)).id for _ in ids]

        assert claimed == ids

    async def test_a_claim_takes_only_the_kinds_it_is_given(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob())
        beta = await queue.enqueue(BetaJob())
        gamma = await queue.enqueue(GammaJob())

        first = await claim(store, kinds=("contract_beta", "contract_gamma"))
        second = await claim(store, kinds=("contract_beta", "contract_gamma"))

        assert (first.id, second.id) == (beta.id, gamma.id)
        assert await store.claim(["contract_beta"], worker_id="w", lease_duration=LEASE) is None

    async def test_a_claim_accepts_kind_enum_members(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        beta = await queue.enqueue(BetaJob())

        item = await store.claim([ContractKind.BETA], worker_id="w", lease_duration=LEASE)

        assert item is not None
        assert item.id == beta.id

    async def test_a_claim_starts_the_first_attempt_under_a_lease(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob(number=4), dedup_key="four")
        enqueued_at = clock.now()
        await clock.advance(5)

        item = await claim(store, worker_id="worker-7")

        assert item.id == enqueued.id
        assert (item.status, item.attempt, item.stalls) == (WorkStatus.RUNNING, 1, 0)
        assert item.started_at == item.heartbeat_at == clock.now()
        assert item.lease_expires_at == clock.now() + LEASE
        assert item.worker_id == "worker-7"
        assert item.enqueued_at == enqueued_at
        assert (item.payload, item.dedup_key) == ({"number": 4}, "four")
        assert (item.finished_at, item.error, item.progress) == (None, None, None)
        assert item.lease.attempt == 1
        assert await backdoor.read_item(item.id) == item

    async def test_a_claim_finds_nothing_when_nothing_is_queued(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None
        for status in (WorkStatus.RUNNING, WorkStatus.SUCCEEDED, WorkStatus.FAILED):
            await backdoor.insert_item(
                kind=ContractKind.ALPHA,
                status=status,
                attempt=1,
                started_at=clock.now(),
                heartbeat_at=clock.now(),
                worker_id="elsewhere",
                lease_expires_at=clock.now() + LEASE if status is WorkStatus.RUNNING else None,
                finished_at=clock.now() if status.is_finished else None,
            )

        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None

    async def test_a_claim_with_no_kinds_finds_nothing(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob())

        assert await store.claim([], worker_id="w", lease_duration=LEASE) is None

    async def test_a_claim_skips_older_items_that_are_not_queued(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await backdoor.insert_item(
            kind=ContractKind.ALPHA,
            status=WorkStatus.SUCCEEDED,
            attempt=1,
            started_at=clock.now(),
            finished_at=clock.now(),
        )
        queued = await queue.enqueue(AlphaJob())

        assert (await claim(store)).id == queued.id

    async def test_a_new_attempt_sees_the_progress_an_earlier_one_left(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob())
        first = await claim(store)
        assert await store.finish(first.lease, RunOutcome.released({"pages": 3}))

        second = await claim(store)

        assert second.id == first.id
        assert second.attempt == 2
        assert second.progress == {"pages": 3}

    async def test_concurrent_claimers_each_get_a_different_item(
        self, queue: WorkQueue, store_factory: StoreFactory, backdoor: Backdoor
    ) -> None:
        await queue.enqueue_many(
            [EnqueueRequest(AlphaJob(number=n)) for n in range(self.concurrent_items)]
        )
        stores = [await store_factory() for _ in range(self.concurrent_claimers)]
        claims: list[tuple[int, str]] = []

        async def claim_until_empty(store: WorkStore, worker_id: str) -> None:
            while item := await store.claim(ALL_KINDS, worker_id=worker_id, lease_duration=LEASE):
                claims.append((item.id, worker_id))
                # Let the other claimers in between the claim and the complete.
                await asyncio.sleep(0)
                assert await store.finish(item.lease, RunOutcome.succeeded(None))

        await asyncio.gather(
            *(claim_until_empty(store, f"claimer-{n}") for n, store in enumerate(stores))
        )

        claimed_ids = [item_id for item_id, _ in claims]
        assert len(claimed_ids) == len(set(claimed_ids)) == self.concurrent_items
        items = await backdoor.all_items()
        assert {item.id for item in items} == set(claimed_ids)
        assert all(item.status is WorkStatus.SUCCEEDED and item.attempt == 1 for item in items)
        assert {item.id: item.worker_id for item in items} == dict(claims)

    async def test_claim_order_follows_ids_not_enqueue_times(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        # Ids are the FIFO order (DESIGN.md); enqueued_at is only a stamp.
        ids = [
            await backdoor.insert_item(
                kind=ContractKind.ALPHA, enqueued_at=clock.now() - timedelta(minutes=minutes)
            )
            for minutes in (1, 5, 3)
        ]

        assert [(await claim(store)).id for _ in ids] == ids

    async def test_a_claim_does_not_take_a_running_item_whose_lease_expired(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        # Only lease recovery puts it back, counting its stall; a claim may not skip that.
        expired = await backdoor.insert_item(
            kind=ContractKind.ALPHA,
            status=WorkStatus.RUNNING,
            attempt=1,
            started_at=clock.now() - 2 * LEASE,
            heartbeat_at=clock.now() - 2 * LEASE,
            lease_expires_at=clock.now() - LEASE,
            worker_id="gone",
        )
        before = await backdoor.read_item(expired)

        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None
        assert await backdoor.read_item(expired) == before

    async def test_a_claim_passes_over_an_item_another_transaction_holds_locked(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        locking = row_locking_backdoor(backdoor)
        first = await queue.enqueue(AlphaJob(number=1))
        second = await queue.enqueue(AlphaJob(number=2))

        claimed = await claim_past_a_locked_item(
            locking,
            first.id,
            lambda: store.claim(ALL_KINDS, worker_id=WORKER, lease_duration=LEASE),
            self.lock_patience_seconds,
        )

        assert claimed is not None, "a claim beside a locked item found nothing"
        assert claimed.id == second.id, "a claim took the item another transaction holds locked"
        # Once the lock is gone, the item it passed over is the next one claimed.
        assert (await claim(store)).id == first.id

    async def test_claimers_released_together_each_get_a_different_item(
        self,
        queue: WorkQueue,
        store: WorkStore,
        store_factory: StoreFactory,
        backdoor: Backdoor,
    ) -> None:
        # The store under test races too, beside stores of their own connections.
        stores = [store] + [await store_factory() for _ in range(self.claimers_per_round - 1)]
        for round_number in range(self.claim_rounds):
            await queue.enqueue_many(
                [EnqueueRequest(AlphaJob(number=n)) for n in range(self.claimers_per_round)]
            )

            claimed = await at_once(
                [
                    partial(store.claim, ALL_KINDS, worker_id=f"claimer-{n}", lease_duration=LEASE)
                    for n, store in enumerate(stores)
                ]
            )

            ids = [item.id for item in claimed if item is not None]
            assert len(ids) == len(set(ids)) == len(stores), (
                f"round {round_number + 1}: {len(stores)} claimers released together over "
                f"{len(stores)} queued items got {sorted(ids)} "
                f"({sum(item is None for item in claimed)} found nothing)"
            )
            for item in claimed:
                assert item is not None
                stored = await backdoor.read_item(item.id)
                assert stored == item, f"round {round_number + 1}: item {item.id} was claimed twice"
                assert await store.finish(item.lease, RunOutcome.succeeded(None))

    async def test_concurrent_claimers_share_items_that_become_due_together(
        self, queue: WorkQueue, store_factory: StoreFactory, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue_many(
            [
                EnqueueRequest(AlphaJob(number=n), priority=n % 3, delay=timedelta(minutes=1))
                for n in range(self.concurrent_items)
            ]
        )
        stores = [await store_factory() for _ in range(self.concurrent_claimers)]
        await clock.advance(60)
        claims: list[int] = []

        async def claim_until_empty(claimer: WorkStore, worker_id: str) -> None:
            while item := await claimer.claim(ALL_KINDS, worker_id=worker_id, lease_duration=LEASE):
                claims.append(item.id)
                await asyncio.sleep(0)
                assert await claimer.finish(item.lease, RunOutcome.succeeded(None))

        await asyncio.gather(
            *(claim_until_empty(claimer, f"claimer-{n}") for n, claimer in enumerate(stores))
        )

        assert len(claims) == len(set(claims)) == self.concurrent_items
        items = await backdoor.all_items()
        assert all(item.status is WorkStatus.SUCCEEDED and item.attempt == 1 for item in items)
