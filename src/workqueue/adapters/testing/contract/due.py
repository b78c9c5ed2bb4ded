"""Contract: due-ness of a periodic kind is derived from the table."""

from __future__ import annotations

from datetime import timedelta

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.adapters.testing.contract.steps import claim
from workqueue.domain import WorkQueue, WorkStatus, WorkStore

__all__ = ["DueContract"]

HOUR = timedelta(hours=1)


async def finished_alpha(
    backdoor: Backdoor, clock: FakeClock, *, ago: timedelta, status: WorkStatus
) -> int:
    """Insert an alpha item that finished ``ago`` before now."""
    return await backdoor.insert_item(
        kind=ContractKind.ALPHA,
        status=status,
        attempt=1,
        enqueued_at=clock.now() - ago - HOUR,
        started_at=clock.now() - ago - HOUR,
        finished_at=clock.now() - ago,
        worker_id="w",
        error="boom" if status is WorkStatus.FAILED else None,
    )


class DueContract:
    """Semantics 7: due when nothing of the kind is live and the newest finish is old enough."""

    async def test_a_kind_that_never_ran_is_due(self, store: WorkStore) -> None:
        assert await store.is_due("contract_alpha", HOUR) is True

    async def test_a_kind_with_a_queued_item_is_not_due(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob())

        assert await store.is_due("contract_alpha", HOUR) is False

    async def test_a_kind_with_a_running_item_is_not_due(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await finished_alpha(backdoor, clock, ago=10 * HOUR, status=WorkStatus.SUCCEEDED)
        await queue.enqueue(AlphaJob())
        await claim(store)

        assert await store.is_due("contract_alpha", HOUR) is False

    async def test_a_kind_that_finished_less_than_an_interval_ago_is_not_due(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await finished_alpha(
            backdoor, clock, ago=HOUR - timedelta(seconds=1), status=WorkStatus.SUCCEEDED
        )

        assert await store.is_due("contract_alpha", HOUR) is False

    async def test_a_kind_that_finished_exactly_an_interval_ago_is_due(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await finished_alpha(backdoor, clock, ago=HOUR, status=WorkStatus.SUCCEEDED)

        assert await store.is_due("contract_alpha", HOUR) is True

    async def test_a_kind_becomes_due_as_time_passes(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await finished_alpha(backdoor, clock, ago=timedelta(0), status=WorkStatus.FAILED)
        await clock.advance(HOUR.total_seconds() - 1)
        assert await store.is_due("contract_alpha", HOUR) is False

        await clock.advance(1)
        assert await store.is_due("contract_alpha", HOUR) is True

    async def test_the_newest_finished_item_decides_whether_it_succeeded_or_failed(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await finished_alpha(backdoor, clock, ago=5 * HOUR, status=WorkStatus.SUCCEEDED)
        await finished_alpha(backdoor, clock, ago=timedelta(minutes=10), status=WorkStatus.FAILED)
        await finished_alpha(backdoor, clock, ago=3 * HOUR, status=WorkStatus.SUCCEEDED)

        assert await store.is_due("contract_alpha", HOUR) is False
        assert await store.is_due("contract_alpha", timedelta(minutes=10)) is True

    async def test_other_kinds_do_not_affect_due_ness(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(BetaJob())
        await finished_alpha(backdoor, clock, ago=2 * HOUR, status=WorkStatus.SUCCEEDED)

        assert await store.is_due("contract_alpha", HOUR) is True
        assert await store.is_due("contract_beta", HOUR) is False
        assert await store.is_due("contract_gamma", HOUR) is True

    async def test_a_kind_enum_member_is_accepted(self, queue: WorkQueue, store: WorkStore) -> None:
        await queue.enqueue(AlphaJob())

        assert await store.is_due(ContractKind.ALPHA, HOUR) is False
