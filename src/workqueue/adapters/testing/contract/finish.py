"""Contract: complete and fail finish an item, once, with its outcome."""

from __future__ import annotations

from dataclasses import replace

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob
from workqueue.adapters.testing.contract.steps import LEASE, claim, running_after_stalls
from workqueue.domain import Failure, RunOutcome, WorkQueue, WorkStatus, WorkStore

__all__ = ["FinishContract"]


class FinishContract:
    """Semantics 4: succeeded or failed, stamped, with the final progress; no retry."""

    async def test_complete_marks_the_item_succeeded(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store, worker_id="worker-1")
        await clock.advance(12)

        assert await store.finish(claimed.lease, RunOutcome.succeeded({"rows": 40})) is True

        item = await backdoor.read_item(claimed.id)
        assert item is not None
        assert item.status is WorkStatus.SUCCEEDED
        assert item.finished_at == clock.now()
        assert item.progress == {"rows": 40}
        assert item.error is None
        assert item.lease_expires_at is None
        assert (item.attempt, item.started_at, item.worker_id) == (
            1,
            claimed.started_at,
            "worker-1",
        )

    async def test_fail_marks_the_item_failed_with_the_error(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store, worker_id="worker-1")
        await clock.advance(3)

        failed = await store.finish(
            claimed.lease, RunOutcome.failed("ValueError: no such user", {"rows": 2})
        )

        assert failed is True
        item = await backdoor.read_item(claimed.id)
        assert item is not None
        assert item.status is WorkStatus.FAILED
        assert item.error == "ValueError: no such user"
        assert item.finished_at == clock.now()
        assert item.progress == {"rows": 2}
        assert item.lease_expires_at is None
        assert (item.attempt, item.worker_id) == (1, "worker-1")

    async def test_a_finished_item_is_not_claimed_again(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)
        await store.finish(claimed.lease, RunOutcome.failed("boom", None))

        assert await store.claim(["contract_alpha"], worker_id="w", lease_duration=LEASE) is None

    @pytest.mark.parametrize("outcome", [WorkStatus.SUCCEEDED, WorkStatus.FAILED])
    async def test_finishing_changes_nothing_but_status_outcome_lease_and_failures(
        self,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
        outcome: WorkStatus,
    ) -> None:
        await queue.enqueue(AlphaJob(number=3), dedup_key="three")
        running = await running_after_stalls(store, clock, 2)
        await clock.advance(8)

        if outcome is WorkStatus.SUCCEEDED:
            done = await store.finish(running.lease, RunOutcome.succeeded({"rows": 3}))
        else:
            done = await store.finish(running.lease, RunOutcome.failed("boom", {"rows": 3}))

        assert done is True
        assert await backdoor.read_item(running.id) == replace(
            running,
            status=outcome,
            finished_at=clock.now(),
            lease_expires_at=None,
            progress={"rows": 3},
            error="boom" if outcome is WorkStatus.FAILED else None,
            failures=(
                (Failure(running.attempt, clock.now(), "boom"),)
                if outcome is WorkStatus.FAILED
                else ()
            ),
        )
