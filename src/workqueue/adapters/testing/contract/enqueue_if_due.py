"""Contract: enqueue_if_due checks due-ness and inserts in one atomic step."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from functools import partial
from typing import ClassVar

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.fixtures import QueueFactory, StoreFactory
from workqueue.adapters.testing.contract.kinds import (
    AlphaJob,
    BetaJob,
    ContractKind,
    GammaJob,
    unvalidated_alpha_job,
)
from workqueue.adapters.testing.contract.race import at_once
from workqueue.adapters.testing.contract.steps import LEASE, claim
from workqueue.domain import (
    PERIODIC_DEDUP_KEY,
    InvalidPayloadError,
    RunOutcome,
    WorkPayload,
    WorkQueue,
    WorkSchedule,
    WorkStatus,
    WorkStore,
)

__all__ = ["EnqueueIfDueContract"]

HOUR = timedelta(hours=1)
HOURLY_ALPHA = WorkSchedule(payload=AlphaJob(number=24), interval=HOUR)


def hourly(payload: WorkPayload) -> WorkSchedule:
    return WorkSchedule(payload=payload, interval=HOUR)


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


class EnqueueIfDueContract:
    """Semantics 7 as one step: a due kind is enqueued once, however many schedulers ask.

    A kind is due when nothing of it is queued or running and its newest finished
    item, whatever it came to, finished at least one interval ago, or none ever did.

    ``concurrent_schedulers``, ``concurrent_claimers``, ``race_rounds`` and
    ``calls_per_round`` size the race test (see
    :mod:`workqueue.adapters.testing.contract.race`); an adapter may raise them, never
    lower them below the defaults.
    """

    concurrent_schedulers: ClassVar[int] = 8
    concurrent_claimers: ClassVar[int] = 6
    race_rounds: ClassVar[int] = 100
    # Only the first call of a round can race: once its item is in the table
    # (queued, running or just finished) the kind is not due for an interval.
    calls_per_round: ClassVar[int] = 1

    async def test_a_due_kind_is_enqueued_with_the_schedule_s_payload_and_dedup_key(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await clock.advance(7)
        result = await queue.enqueue_if_due(HOURLY_ALPHA)

        assert result is not None
        assert result.created
        item = await backdoor.read_item(result.id)
        assert item is not None
        assert (item.kind, item.payload, item.dedup_key) == (
            ContractKind.ALPHA.value,
            {"number": 24},
            PERIODIC_DEDUP_KEY,
        )
        assert (item.status, item.attempt, item.stalls) == (WorkStatus.QUEUED, 0, 0)
        assert item.enqueued_at == clock.now()

    async def test_a_queued_item_of_the_kind_makes_it_not_due(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        queued = await queue.enqueue(AlphaJob(number=1))

        assert await queue.enqueue_if_due(HOURLY_ALPHA) is None
        assert [item.id for item in await backdoor.all_items()] == [queued.id]

    async def test_a_queued_twin_with_the_dedup_key_is_not_due_and_absorbs_nothing(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        twin = await queue.enqueue(AlphaJob(number=1), dedup_key=PERIODIC_DEDUP_KEY)

        assert await queue.enqueue_if_due(HOURLY_ALPHA) is None
        assert [item.id for item in await backdoor.all_items()] == [twin.id]

    async def test_a_running_item_of_the_kind_makes_it_not_due(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        # Running items absorb nothing, so this is the case the atomic step is for.
        await queue.enqueue(AlphaJob(number=1), dedup_key=PERIODIC_DEDUP_KEY)
        running = await claim(store)

        assert await queue.enqueue_if_due(HOURLY_ALPHA) is None
        assert [item.id for item in await backdoor.all_items()] == [running.id]

    async def test_a_running_item_makes_it_not_due_however_old_the_last_finish(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await finished_alpha(backdoor, clock, ago=10 * HOUR, status=WorkStatus.SUCCEEDED)
        await queue.enqueue(AlphaJob(number=1))
        await claim(store)

        assert await queue.enqueue_if_due(HOURLY_ALPHA) is None
        assert len(await backdoor.all_items()) == 2

    async def test_a_finish_younger_than_the_interval_makes_it_not_due(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await finished_alpha(
            backdoor, clock, ago=HOUR - timedelta(seconds=1), status=WorkStatus.SUCCEEDED
        )

        assert await queue.enqueue_if_due(HOURLY_ALPHA) is None
        assert len(await backdoor.all_items()) == 1

    async def test_a_finish_exactly_an_interval_ago_makes_it_due(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await finished_alpha(backdoor, clock, ago=HOUR, status=WorkStatus.FAILED)

        result = await queue.enqueue_if_due(HOURLY_ALPHA)

        assert result is not None
        assert result.created

    async def test_a_failure_counts_as_a_finish_until_an_interval_has_passed(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await finished_alpha(backdoor, clock, ago=timedelta(0), status=WorkStatus.FAILED)
        await clock.advance(HOUR.total_seconds() - 1)
        too_soon = await queue.enqueue_if_due(HOURLY_ALPHA)

        await clock.advance(1)
        due = await queue.enqueue_if_due(HOURLY_ALPHA)

        assert too_soon is None
        assert due is not None
        assert due.created

    async def test_the_newest_finish_decides_whether_it_succeeded_or_failed(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await finished_alpha(backdoor, clock, ago=5 * HOUR, status=WorkStatus.SUCCEEDED)
        await finished_alpha(backdoor, clock, ago=timedelta(minutes=10), status=WorkStatus.FAILED)
        await finished_alpha(backdoor, clock, ago=3 * HOUR, status=WorkStatus.SUCCEEDED)
        every_ten_minutes = WorkSchedule(payload=AlphaJob(), interval=timedelta(minutes=10))

        assert await queue.enqueue_if_due(HOURLY_ALPHA) is None
        due = await queue.enqueue_if_due(every_ten_minutes)

        assert due is not None
        assert due.created

    async def test_the_kind_is_enqueued_again_once_the_interval_has_passed(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        first = await queue.enqueue_if_due(HOURLY_ALPHA)
        assert first is not None
        item = await claim(store)
        await clock.advance(600)
        assert await store.finish(item.lease, RunOutcome.succeeded(None))

        await clock.advance(HOUR.total_seconds() - 1)
        too_soon = await queue.enqueue_if_due(HOURLY_ALPHA)
        await clock.advance(1)
        again = await queue.enqueue_if_due(HOURLY_ALPHA)

        assert too_soon is None
        assert again is not None
        assert again.created
        assert again.id != first.id

    async def test_the_item_carries_the_schedule_s_own_dedup_key(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        nightly = WorkSchedule(payload=AlphaJob(), interval=HOUR, dedup_key="nightly")

        result = await queue.enqueue_if_due(nightly)

        assert result is not None
        item = await backdoor.read_item(result.id)
        assert item is not None
        assert item.dedup_key == "nightly"

    async def test_other_kinds_do_not_stop_the_kind_being_enqueued(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        # Another kind queued under the same key, and finished recently: alpha is due.
        await queue.enqueue(BetaJob(), dedup_key=PERIODIC_DEDUP_KEY)
        await backdoor.insert_item(
            kind=ContractKind.GAMMA,
            status=WorkStatus.SUCCEEDED,
            attempt=1,
            started_at=clock.now(),
            finished_at=clock.now(),
        )

        result = await queue.enqueue_if_due(HOURLY_ALPHA)

        assert result is not None
        assert result.created

    async def test_each_kind_is_due_by_its_own_items_alone(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(BetaJob())
        await finished_alpha(backdoor, clock, ago=2 * HOUR, status=WorkStatus.SUCCEEDED)

        beta = await queue.enqueue_if_due(hourly(BetaJob()))
        gamma = await queue.enqueue_if_due(hourly(GammaJob()))
        alpha = await queue.enqueue_if_due(HOURLY_ALPHA)

        assert beta is None
        assert gamma is not None
        assert gamma.created
        assert alpha is not None
        assert alpha.created

    async def test_an_invalid_payload_is_refused_and_nothing_is_written(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        schedule = WorkSchedule(payload=unvalidated_alpha_job(), interval=HOUR)

        with pytest.raises(InvalidPayloadError, match="contract_alpha"):
            await queue.enqueue_if_due(schedule)
        assert await backdoor.all_items() == []

    async def test_concurrent_schedulers_racing_claimers_create_one_item_per_due_round(
        self,
        queue: WorkQueue,
        store: WorkStore,
        queue_factory: QueueFactory,
        store_factory: StoreFactory,
        backdoor: Backdoor,
        clock: FakeClock,
    ) -> None:
        # The double run this guards against: scheduler A finds the kind due, B
        # enqueues it and a claimer takes B's item before A's insert lands; a
        # running item absorbs nothing, so A's insert would make a second item.
        # Each round the kind is due once (the clock moves one interval on); the
        # schedulers ask for it together, behind a barrier, while claimers take and
        # complete whatever appears: exactly one item may come of each round. The
        # queue and store under test take part.
        queues = [queue] + [await queue_factory() for _ in range(self.concurrent_schedulers - 1)]
        stores = [store] + [await store_factory() for _ in range(self.concurrent_claimers - 1)]

        async def claim_and_complete(
            store: WorkStore, worker_id: str, asked: asyncio.Event
        ) -> None:
            while True:
                item = await store.claim(
                    [ContractKind.ALPHA], worker_id=worker_id, lease_duration=LEASE
                )
                if item is not None:
                    assert await store.finish(item.lease, RunOutcome.succeeded(None))
                elif asked.is_set():
                    return
                else:
                    await asyncio.sleep(0)

        created_per_round: list[list[int]] = []
        for _ in range(self.race_rounds):
            created: list[int] = []
            asked = asyncio.Event()
            claimers = [
                asyncio.ensure_future(claim_and_complete(store, f"claimer-{n}", asked))
                for n, store in enumerate(stores)
            ]
            try:
                for _ in range(self.calls_per_round):
                    results = await at_once(
                        [partial(queue.enqueue_if_due, HOURLY_ALPHA) for queue in queues]
                    )
                    created += [result.id for result in results if result is not None]
            finally:
                asked.set()
                await asyncio.gather(*claimers)
            created_per_round.append(created)
            await clock.advance(HOUR.total_seconds())

        doubled = {
            number: ids for number, ids in enumerate(created_per_round, start=1) if len(ids) != 1
        }
        assert not doubled, (
            f"{len(doubled)} of {self.race_rounds} due rounds did not enqueue exactly one item "
            f"(round: item ids it enqueued): {doubled}; the due check and the insert of "
            "enqueue_if_due must be one step against other schedulers and claimers"
        )
        items = await backdoor.all_items()
        assert len(items) == self.race_rounds
        assert all(item.status is WorkStatus.SUCCEEDED for item in items)
