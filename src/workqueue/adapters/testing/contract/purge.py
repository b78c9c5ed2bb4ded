"""Contract: retention purges old finished items in batches and never touches live ones."""

from __future__ import annotations

from datetime import timedelta

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import ContractKind
from workqueue.adapters.testing.contract.steps import LEASE
from workqueue.domain import WorkStatus, WorkStore

__all__ = ["PurgeContract"]

DAY = timedelta(days=1)


async def finished_days_ago(
    backdoor: Backdoor, clock: FakeClock, *, days_ago: float, status: WorkStatus
) -> int:
    """Insert an alpha item that finished ``days_ago`` days before now."""
    finished_at = clock.now() - days_ago * DAY
    return await backdoor.insert_item(
        kind=ContractKind.ALPHA,
        status=status,
        attempt=1,
        enqueued_at=finished_at - DAY,
        started_at=finished_at - DAY,
        finished_at=finished_at,
        worker_id="w",
    )


async def remaining_ids(backdoor: Backdoor) -> list[int]:
    return [item.id for item in await backdoor.all_items()]


class PurgeContract:
    """Semantics 8: only succeeded and failed items finished before the cutoff go."""

    async def test_purge_deletes_finished_items_older_than_the_cutoff(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await finished_days_ago(backdoor, clock, days_ago=40, status=WorkStatus.SUCCEEDED)
        await finished_days_ago(backdoor, clock, days_ago=31, status=WorkStatus.FAILED)
        recent_success = await finished_days_ago(
            backdoor, clock, days_ago=29, status=WorkStatus.SUCCEEDED
        )
        recent_failure = await finished_days_ago(
            backdoor, clock, days_ago=1, status=WorkStatus.FAILED
        )

        deleted = await store.purge_finished(finished_before=clock.now() - 30 * DAY, limit=100)

        assert deleted == 2
        assert await remaining_ids(backdoor) == [recent_success, recent_failure]

    async def test_purge_never_touches_queued_or_running_items_however_old(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        long_ago = clock.now() - 400 * DAY
        queued = await backdoor.insert_item(
            kind=ContractKind.ALPHA,
            enqueued_at=long_ago,
            attempt=2,
            started_at=long_ago,
            heartbeat_at=long_ago,
        )
        running = await backdoor.insert_item(
            kind=ContractKind.ALPHA,
            status=WorkStatus.RUNNING,
            attempt=1,
            enqueued_at=long_ago,
            started_at=long_ago,
            heartbeat_at=long_ago,
            lease_expires_at=long_ago + LEASE,
            worker_id="w",
        )

        deleted = await store.purge_finished(finished_before=clock.now(), limit=100)

        assert deleted == 0
        assert await remaining_ids(backdoor) == [queued, running]

    async def test_purge_deletes_at_most_the_limit_oldest_first(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        by_age = {
            days: await finished_days_ago(
                backdoor, clock, days_ago=days, status=WorkStatus.SUCCEEDED
            )
            for days in (35, 50, 40, 45, 60)
        }
        cutoff = clock.now() - 30 * DAY

        assert await store.purge_finished(finished_before=cutoff, limit=2) == 2
        assert sorted(await remaining_ids(backdoor)) == sorted([by_age[35], by_age[40], by_age[45]])
        assert await store.purge_finished(finished_before=cutoff, limit=2) == 2
        assert await remaining_ids(backdoor) == [by_age[35]]
        assert await store.purge_finished(finished_before=cutoff, limit=2) == 1
        assert await store.purge_finished(finished_before=cutoff, limit=2) == 0
        assert await remaining_ids(backdoor) == []

    async def test_an_item_finished_exactly_at_the_cutoff_is_kept(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        kept = await finished_days_ago(backdoor, clock, days_ago=30, status=WorkStatus.SUCCEEDED)

        deleted = await store.purge_finished(finished_before=clock.now() - 30 * DAY, limit=10)

        assert deleted == 0
        assert await remaining_ids(backdoor) == [kept]

    async def test_purge_goes_by_status_not_by_a_finished_at_a_live_item_carries(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        # However a live row came to carry a finish time (by hand, from an older
        # version), only the status says an item is finished.
        long_ago = clock.now() - 400 * DAY
        live = [
            await backdoor.insert_item(
                kind=ContractKind.ALPHA,
                status=status,
                attempt=1,
                enqueued_at=long_ago,
                started_at=long_ago,
                heartbeat_at=long_ago,
                lease_expires_at=clock.now() + LEASE if status is WorkStatus.RUNNING else None,
                finished_at=long_ago,
                worker_id="w" if status is WorkStatus.RUNNING else None,
            )
            for status in (WorkStatus.QUEUED, WorkStatus.RUNNING)
        ]
        old = await finished_days_ago(backdoor, clock, days_ago=40, status=WorkStatus.FAILED)

        deleted = await store.purge_finished(finished_before=clock.now() - 30 * DAY, limit=100)

        assert deleted == 1
        assert await remaining_ids(backdoor) == live
        assert old not in await remaining_ids(backdoor)
