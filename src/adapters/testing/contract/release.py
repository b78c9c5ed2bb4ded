"""Contract: a release (graceful shutdown) puts the item back without a stall."""

from __future__ import annotations

from adapters.testing.clock import FakeClock
from adapters.testing.contract.backdoor import Backdoor
from adapters.testing.contract.kinds import AlphaJob
from adapters.testing.contract.steps import claim
from domain import WorkQueue, WorkStatus, WorkStore

__all__ = ["ReleaseContract"]


class ReleaseContract:
    """Semantics 6: back to queued, attempt kept, no stall, lease cleared."""

    async def test_a_release_requeues_the_item_without_a_stall(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)
        await clock.advance(4)

        assert await store.release(claimed.lease, progress={"half": True}) is True

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
        await store.release(first.lease, progress=None)

        again = await claim(store)

        assert (again.id, again.attempt, again.stalls) == (first.id, 2, 0)
