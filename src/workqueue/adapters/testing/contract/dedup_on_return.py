"""Contract: a release or recovery never makes a second queued item with one kind and key."""

from __future__ import annotations

from collections import Counter

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.adapters.testing.contract.steps import LEASE, MAX_STALLS, claim, expire_the_lease
from workqueue.domain import (
    RecoveryResult,
    RunOutcome,
    WorkQueue,
    WorkStatus,
    WorkStore,
    stalled_error,
    superseded_error,
)

__all__ = ["DedupOnReturnContract"]


async def queued_twins(backdoor: Backdoor) -> list[tuple[str, str]]:
    """(kind, key) pairs held by more than one queued item: always empty."""
    counts = Counter(
        (item.kind, item.dedup_key)
        for item in await backdoor.all_items()
        if item.status is WorkStatus.QUEUED and item.dedup_key is not None
    )
    return [pair for pair, count in counts.items() if count > 1]


class DedupOnReturnContract:
    """Semantics 1 with ADR 0004: the returning item is failed as superseded by its queued twin."""

    async def test_a_release_beside_a_queued_twin_fails_as_superseded(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1), dedup_key="k")
        running = await claim(store, worker_id="worker-1")
        twin = await queue.enqueue(AlphaJob(number=2), dedup_key="k")
        await clock.advance(5)

        assert await store.finish(running.lease, RunOutcome.released({"at": 1})) is True

        item = await backdoor.read_item(running.id)
        assert item is not None
        assert (item.status, item.stalls, item.attempt) == (WorkStatus.FAILED, 0, 1)
        assert item.error == superseded_error(twin.id)
        assert item.finished_at == clock.now()
        assert item.progress == {"at": 1}
        assert item.lease_expires_at is None
        twin_item = await backdoor.read_item(twin.id)
        assert twin_item is not None
        assert (twin_item.status, twin_item.payload) == (WorkStatus.QUEUED, {"number": 2})
        assert await queued_twins(backdoor) == []

    async def test_a_recovery_beside_a_queued_twin_fails_as_superseded_and_counts_the_stall(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1), dedup_key="k")
        running = await claim(store)
        twin = await queue.enqueue(AlphaJob(number=2), dedup_key="k")
        await expire_the_lease(clock)

        result = await store.recover_expired(max_stalls=MAX_STALLS)

        assert result == RecoveryResult(superseded=[running.id])
        item = await backdoor.read_item(running.id)
        assert item is not None
        assert (item.status, item.stalls) == (WorkStatus.FAILED, 1)
        assert item.error == superseded_error(twin.id)
        assert item.finished_at == clock.now()
        assert await queued_twins(backdoor) == []

    async def test_the_queued_twin_does_the_work_afterwards(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob(number=1), dedup_key="k")
        running = await claim(store)
        twin = await queue.enqueue(AlphaJob(number=2), dedup_key="k")
        await store.finish(running.lease, RunOutcome.released(None))

        next_claim = await claim(store)

        assert (next_claim.id, next_claim.payload) == (twin.id, {"number": 2})

    async def test_items_without_a_key_always_return_to_queued(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(AlphaJob(number=1))
        released = await claim(store)
        expired = await claim(store)
        await queue.enqueue(AlphaJob(number=1))

        await store.finish(released.lease, RunOutcome.released(None))
        await expire_the_lease(clock)
        result = await store.recover_expired(max_stalls=MAX_STALLS)

        assert result == RecoveryResult(requeued=[expired.id])
        statuses = [item.status for item in await backdoor.all_items()]
        assert statuses == [WorkStatus.QUEUED] * 3

    async def test_a_queued_item_of_another_kind_or_key_supersedes_nothing(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob(), dedup_key="k")
        running = await claim(store)
        await queue.enqueue(BetaJob(), dedup_key="k")
        await queue.enqueue(AlphaJob(), dedup_key="other")

        await store.finish(running.lease, RunOutcome.released(None))

        item = await backdoor.read_item(running.id)
        assert item is not None
        assert item.status is WorkStatus.QUEUED

    async def test_a_running_twin_supersedes_nothing(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob(number=1), dedup_key="k")
        first = await claim(store)
        await queue.enqueue(AlphaJob(number=2), dedup_key="k")
        second = await claim(store)

        await store.finish(first.lease, RunOutcome.released(None))

        item = await backdoor.read_item(first.id)
        assert item is not None
        assert item.status is WorkStatus.QUEUED
        assert await backdoor.read_item(second.id) == second

    async def test_when_expired_twins_return_together_the_newer_one_is_requeued(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1), dedup_key="k")
        older = await claim(store)
        await queue.enqueue(AlphaJob(number=2), dedup_key="k")
        newer = await claim(store)
        await expire_the_lease(clock)

        result = await store.recover_expired(max_stalls=MAX_STALLS)

        assert result == RecoveryResult(requeued=[newer.id], superseded=[older.id])
        item = await backdoor.read_item(older.id)
        assert item is not None
        assert item.error == superseded_error(newer.id)
        assert await queued_twins(backdoor) == []

    async def test_the_stall_limit_wins_over_superseding(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        doomed = await backdoor.insert_item(
            kind=ContractKind.ALPHA,
            status=WorkStatus.RUNNING,
            attempt=3,
            stalls=MAX_STALLS - 1,
            dedup_key="k",
            started_at=clock.now() - 2 * LEASE,
            heartbeat_at=clock.now() - 2 * LEASE,
            lease_expires_at=clock.now() - LEASE,
            worker_id="gone",
        )
        await queue.enqueue(AlphaJob(), dedup_key="k")

        result = await store.recover_expired(max_stalls=MAX_STALLS)

        assert result == RecoveryResult(stalled=[doomed])
        item = await backdoor.read_item(doomed)
        assert item is not None
        assert item.error == stalled_error(MAX_STALLS, MAX_STALLS)
