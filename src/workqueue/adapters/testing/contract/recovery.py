"""Contract: expired leases go back to queued with a stall; the stall limit fails them."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob, ContractKind
from workqueue.adapters.testing.contract.steps import (
    LEASE,
    MAX_STALLS,
    claim,
    expire_the_lease,
    running_after_stalls,
)
from workqueue.domain import (
    Failure,
    RecoveryResult,
    RunOutcome,
    WorkQueue,
    WorkStatus,
    WorkStore,
    stalled_error,
)

__all__ = ["RecoveryContract"]


class RecoveryContract:
    """Semantics 5: an expired lease (``lease_expires_at < now``) is recovered."""

    async def test_an_expired_lease_is_requeued_with_one_more_stall(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)
        await store.heartbeat(claimed.lease, progress={"page": 2}, lease_duration=LEASE)
        await expire_the_lease(clock)

        result = await store.recover_expired(max_stalls=MAX_STALLS)

        assert result == RecoveryResult(requeued=[claimed.id])
        item = await backdoor.read_item(claimed.id)
        assert item is not None
        assert (item.status, item.attempt, item.stalls) == (WorkStatus.QUEUED, 1, 1)
        assert item.lease_expires_at is None
        assert item.worker_id is None
        assert (item.finished_at, item.error) == (None, None)
        assert item.progress == {"page": 2}
        assert item.started_at == claimed.started_at

    async def test_one_pass_recovers_every_expired_lease_listed_by_id(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        ids = [(await queue.enqueue(AlphaJob(number=n))).id for n in range(3)]
        for _ in ids:
            await claim(store)
        await expire_the_lease(clock)

        result = await store.recover_expired(max_stalls=MAX_STALLS)

        assert result == RecoveryResult(requeued=ids)
        assert [(await claim(store)).id for _ in ids] == ids

    async def test_a_lease_that_has_not_expired_is_left_alone(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(AlphaJob(number=2))
        older = await claim(store)
        await clock.advance(30)
        younger = await claim(store)
        await clock.advance(31)

        result = await store.recover_expired(max_stalls=MAX_STALLS)

        assert result == RecoveryResult(requeued=[older.id])
        assert await backdoor.read_item(younger.id) == younger

    async def test_a_lease_is_still_held_at_the_instant_it_expires(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)
        await clock.advance(LEASE.total_seconds())

        assert (await store.recover_expired(max_stalls=MAX_STALLS)).total == 0

        await clock.advance(timedelta(microseconds=1).total_seconds())
        assert await store.recover_expired(max_stalls=MAX_STALLS) == RecoveryResult(
            requeued=[claimed.id]
        )

    async def test_recovery_finds_nothing_to_do_when_no_lease_expired(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        finished = await claim(store)
        await store.finish(finished.lease, RunOutcome.succeeded(None))
        await queue.enqueue(AlphaJob())
        await clock.advance(3600)
        before = await backdoor.all_items()

        assert await store.recover_expired(max_stalls=MAX_STALLS) == RecoveryResult()
        assert await backdoor.all_items() == before

    async def test_the_third_stall_fails_the_item(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob())
        results = []
        for _ in range(MAX_STALLS):
            await claim(store, worker_id="doomed")
            await expire_the_lease(clock)
            results.append(await store.recover_expired(max_stalls=MAX_STALLS))

        assert results == [
            RecoveryResult(requeued=[enqueued.id]),
            RecoveryResult(requeued=[enqueued.id]),
            RecoveryResult(stalled=[enqueued.id]),
        ]
        item = await backdoor.read_item(enqueued.id)
        assert item is not None
        assert (item.status, item.attempt, item.stalls) == (WorkStatus.FAILED, 3, 3)
        assert item.error == stalled_error(3, MAX_STALLS)
        assert item.finished_at == clock.now()
        assert item.lease_expires_at is None
        assert item.worker_id == "doomed"

    async def test_an_item_that_stalled_out_is_never_requeued(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        for _ in range(MAX_STALLS):
            await claim(store)
            await expire_the_lease(clock)
            await store.recover_expired(max_stalls=MAX_STALLS)
        stalled_out = await backdoor.all_items()

        await expire_the_lease(clock)
        assert await store.recover_expired(max_stalls=MAX_STALLS) == RecoveryResult()
        assert await store.claim(["contract_alpha"], worker_id="w", lease_duration=LEASE) is None
        assert await backdoor.all_items() == stalled_out

    async def test_the_stall_limit_counts_stalls_already_recorded(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        item_id = await backdoor.insert_item(
            kind=ContractKind.ALPHA,
            status=WorkStatus.RUNNING,
            attempt=5,
            stalls=MAX_STALLS - 1,
            started_at=clock.now() - 2 * LEASE,
            heartbeat_at=clock.now() - 2 * LEASE,
            lease_expires_at=clock.now() - LEASE,
            worker_id="gone",
        )

        result = await store.recover_expired(max_stalls=MAX_STALLS)

        assert result == RecoveryResult(stalled=[item_id])
        item = await backdoor.read_item(item_id)
        assert item is not None
        assert (item.status, item.stalls, item.attempt) == (WorkStatus.FAILED, MAX_STALLS, 5)

    async def test_a_stall_limit_of_one_fails_on_the_first_stall(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob())
        await claim(store)
        await expire_the_lease(clock)

        assert await store.recover_expired(max_stalls=1) == RecoveryResult(stalled=[enqueued.id])

    async def test_a_requeue_changes_nothing_but_status_stalls_lease_and_worker(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=5), dedup_key="five")
        running = await running_after_stalls(store, clock, 1)
        await clock.advance(20)
        assert await store.heartbeat(running.lease, progress={"page": 9}, lease_duration=LEASE)
        beating = await backdoor.read_item(running.id)
        assert beating is not None
        await expire_the_lease(clock)

        assert await store.recover_expired(max_stalls=MAX_STALLS) == RecoveryResult(
            requeued=[running.id]
        )

        assert await backdoor.read_item(running.id) == replace(
            beating,
            status=WorkStatus.QUEUED,
            stalls=2,
            lease_expires_at=None,
            worker_id=None,
        )

    async def test_a_stall_out_changes_nothing_but_status_stalls_lease_outcome_and_failures(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=5), dedup_key="five")
        running = await running_after_stalls(store, clock, MAX_STALLS - 1)
        assert await store.heartbeat(running.lease, progress={"page": 4}, lease_duration=LEASE)
        beating = await backdoor.read_item(running.id)
        assert beating is not None
        await expire_the_lease(clock)

        assert await store.recover_expired(max_stalls=MAX_STALLS) == RecoveryResult(
            stalled=[running.id]
        )

        assert await backdoor.read_item(running.id) == replace(
            beating,
            status=WorkStatus.FAILED,
            stalls=MAX_STALLS,
            lease_expires_at=None,
            finished_at=clock.now(),
            error=stalled_error(MAX_STALLS, MAX_STALLS),
            failures=(
                Failure(beating.attempt, clock.now(), stalled_error(MAX_STALLS, MAX_STALLS)),
            ),
        )
