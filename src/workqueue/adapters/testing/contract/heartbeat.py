"""Contract: a heartbeat extends the lease and records the latest progress."""

from __future__ import annotations

from dataclasses import replace

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob
from workqueue.adapters.testing.contract.steps import LEASE, MAX_STALLS, claim, running_after_stalls
from workqueue.domain import HeartbeatAnswer, WorkQueue, WorkStatus, WorkStore

__all__ = ["HeartbeatContract"]


class HeartbeatContract:
    """Semantics 3: a held lease is renewed to now + lease and keeps its item running."""

    async def test_a_heartbeat_extends_the_lease_and_writes_progress(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)
        await clock.advance(10)

        held = await store.heartbeat(
            claimed.lease, progress={"done": 3, "of": 10}, lease_duration=LEASE
        )

        assert held is HeartbeatAnswer.HELD
        item = await backdoor.read_item(claimed.id)
        assert item is not None
        assert item.status is WorkStatus.RUNNING
        assert item.heartbeat_at == clock.now()
        assert item.lease_expires_at == clock.now() + LEASE
        assert item.progress == {"done": 3, "of": 10}
        assert (item.started_at, item.attempt, item.worker_id) == (
            claimed.started_at,
            claimed.attempt,
            claimed.worker_id,
        )

    async def test_each_heartbeat_replaces_the_progress_snapshot(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)

        await store.heartbeat(
            claimed.lease, progress={"step": 1, "note": "a"}, lease_duration=LEASE
        )
        await store.heartbeat(claimed.lease, progress=[2, "b"], lease_duration=LEASE)

        item = await backdoor.read_item(claimed.id)
        assert item is not None
        assert item.progress == [2, "b"]

    async def test_a_lease_kept_alive_by_heartbeats_is_never_recovered(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)

        for _ in range(5):
            await clock.advance(LEASE.total_seconds() - 1)
            assert await store.heartbeat(claimed.lease, progress=None, lease_duration=LEASE)
            assert (await store.recover_expired(max_stalls=MAX_STALLS)).total == 0

    async def test_a_heartbeat_after_expiry_but_before_recovery_still_holds_the_lease(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)
        await clock.advance(LEASE.total_seconds() + 30)

        assert await store.heartbeat(claimed.lease, progress=None, lease_duration=LEASE)
        assert (await store.recover_expired(max_stalls=MAX_STALLS)).total == 0

    async def test_a_heartbeat_changes_nothing_but_lease_heartbeat_and_progress(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=6), dedup_key="six")
        running = await running_after_stalls(store, clock, 1)
        await clock.advance(9)

        assert await store.heartbeat(running.lease, progress={"step": 2}, lease_duration=LEASE)

        assert await backdoor.read_item(running.id) == replace(
            running,
            heartbeat_at=clock.now(),
            lease_expires_at=clock.now() + LEASE,
            progress={"step": 2},
        )

    async def test_a_heartbeat_without_progress_clears_the_snapshot(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)
        await store.heartbeat(claimed.lease, progress={"step": 1}, lease_duration=LEASE)

        await store.heartbeat(claimed.lease, progress=None, lease_duration=LEASE)

        item = await backdoor.read_item(claimed.id)
        assert item is not None
        assert item.progress is None
