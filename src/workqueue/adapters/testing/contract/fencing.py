"""Contract: every write after a claim is fenced by id, attempt and status running."""

from __future__ import annotations

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob
from workqueue.adapters.testing.contract.steps import (
    LEASED_WRITES,
    MAX_STALLS,
    claim,
    expire_the_lease,
    lost_lease_after_a_reclaim,
)
from workqueue.domain import Lease, RunOutcome, WorkQueue, WorkStatus, WorkStore

__all__ = ["FencingContract"]

WRITES = sorted(LEASED_WRITES)


class FencingContract:
    """Semantics 2 and 4: a lost lease writes nothing, and a finished item never changes."""

    @pytest.mark.parametrize("write", WRITES)
    async def test_the_old_attempt_cannot_write_after_a_reclaim(
        self,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
        write: str,
    ) -> None:
        await queue.enqueue(AlphaJob())
        lost, reclaimed = await lost_lease_after_a_reclaim(store, clock)
        await clock.advance(1)

        assert await LEASED_WRITES[write](store, lost) is False

        assert await backdoor.read_item(reclaimed.id) == reclaimed

    @pytest.mark.parametrize("write", WRITES)
    async def test_the_new_attempt_still_writes_after_a_reclaim(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock, write: str
    ) -> None:
        await queue.enqueue(AlphaJob())
        _, reclaimed = await lost_lease_after_a_reclaim(store, clock)

        assert await LEASED_WRITES[write](store, reclaimed.lease) is True

    @pytest.mark.parametrize("write", WRITES)
    async def test_a_lease_from_a_later_attempt_is_refused(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, write: str
    ) -> None:
        await queue.enqueue(AlphaJob())
        item = await claim(store)

        assert await LEASED_WRITES[write](store, Lease(item.id, item.attempt + 1)) is False

        assert await backdoor.read_item(item.id) == item

    @pytest.mark.parametrize("write", WRITES)
    async def test_a_lease_on_a_missing_item_is_refused(
        self, store: WorkStore, backdoor: Backdoor, write: str
    ) -> None:
        assert await LEASED_WRITES[write](store, Lease(424242, 1)) is False
        assert await backdoor.all_items() == []

    @pytest.mark.parametrize("write", WRITES)
    async def test_a_released_item_refuses_its_old_lease(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, write: str
    ) -> None:
        await queue.enqueue(AlphaJob())
        item = await claim(store)
        assert await store.finish(item.lease, RunOutcome.released(None))
        released = await backdoor.read_item(item.id)

        assert await LEASED_WRITES[write](store, item.lease) is False

        assert await backdoor.read_item(item.id) == released

    @pytest.mark.parametrize("finish", ["complete", "fail", "mark_cancelled"])
    @pytest.mark.parametrize("write", WRITES)
    async def test_a_finished_item_never_changes_again(
        self,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
        finish: str,
        write: str,
    ) -> None:
        await queue.enqueue(AlphaJob(), dedup_key="k")
        item = await claim(store)
        assert await LEASED_WRITES[finish](store, item.lease)
        finished = await backdoor.read_item(item.id)
        assert finished is not None
        assert finished.status.is_finished

        await clock.advance(1)
        assert await LEASED_WRITES[write](store, item.lease) is False
        await queue.enqueue(AlphaJob(number=2), dedup_key="k")
        await expire_the_lease(clock)
        await store.recover_expired(max_stalls=MAX_STALLS)
        await claim(store)

        assert await backdoor.read_item(item.id) == finished

    async def test_a_stale_heartbeat_does_not_extend_the_new_lease(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        lost, reclaimed = await lost_lease_after_a_reclaim(store, clock)
        await expire_the_lease(clock)

        await LEASED_WRITES["heartbeat"](store, lost)
        recovered = await store.recover_expired(max_stalls=MAX_STALLS)

        assert recovered.requeued == [reclaimed.id]
        item = await backdoor.read_item(reclaimed.id)
        assert item is not None
        assert (item.status, item.stalls) == (WorkStatus.QUEUED, 2)
