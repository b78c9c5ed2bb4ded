"""Contract: a release (graceful shutdown) puts the item back without a stall."""

from __future__ import annotations

from dataclasses import replace

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob
from workqueue.adapters.testing.contract.steps import (
    MAX_STALLS,
    claim,
    expire_the_lease,
    running_after_stalls,
)
from workqueue.domain import (
    RecoveryResult,
    RunOutcome,
    WorkQueue,
    WorkStatus,
    WorkStore,
    stalled_error,
)

__all__ = ["ReleaseContract"]


class ReleaseContract:
    """Semantics 6: back to queued, attempt kept, no stall (neither added nor forgotten)."""

    async def test_a_release_requeues_the_item_without_a_stall(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)
        await clock.advance(4)

        assert await store.finish(claimed.lease, RunOutcome.released({"half": True})) is True

        item = await backdoor.read_item(claimed.id)
        assert item is not None
        assert (item.status, item.attempt, item.stalls) == (WorkStatus.QUEUED, 1, 0)
        assert item.lease_expires_at is None
        assert item.worker_id is None
        assert (item.finished_at, item.error) == (None, None)
        assert item.progress == {"half": True}
        assert (item.started_at, item.heartbeat_at) == (claimed.started_at, claimed.heartbeat_at)

    async def test_a_released_item_is_claimed_before_newer_items(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(AlphaJob(number=2))
        first = await claim(store)
        await store.finish(first.lease, RunOutcome.released(None))

        again = await claim(store)

        assert (again.id, again.attempt, again.stalls) == (first.id, 2, 0)

    @pytest.mark.parametrize("stalls", range(1, MAX_STALLS))
    async def test_a_release_keeps_the_stalls_an_item_already_has(
        self,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
        stalls: int,
    ) -> None:
        await queue.enqueue(AlphaJob(), dedup_key="k")
        running = await running_after_stalls(store, clock, stalls)
        await clock.advance(4)

        assert await store.finish(running.lease, RunOutcome.released({"at": stalls})) is True

        assert await backdoor.read_item(running.id) == replace(
            running,
            status=WorkStatus.QUEUED,
            lease_expires_at=None,
            worker_id=None,
            progress={"at": stalls},
        )

    async def test_stalls_before_a_release_still_count_towards_the_limit(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob())
        running = await running_after_stalls(store, clock, MAX_STALLS - 1)
        assert await store.finish(running.lease, RunOutcome.released(None))

        await claim(store)
        await expire_the_lease(clock)

        assert await store.recover_expired(max_stalls=MAX_STALLS) == RecoveryResult(
            stalled=[enqueued.id]
        )
        item = await backdoor.read_item(enqueued.id)
        assert item is not None
        assert (item.status, item.stalls) == (WorkStatus.FAILED, MAX_STALLS)
        assert item.error == stalled_error(MAX_STALLS, MAX_STALLS)
