"""Contract: an item waits for its run_at, and claims take the highest priority first."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob
from workqueue.adapters.testing.contract.steps import ALL_KINDS, LEASE, claim
from workqueue.domain import (
    EnqueueRequest,
    InvalidPriorityError,
    InvalidRunAtError,
    RunOutcome,
    WorkQueue,
    WorkStatus,
    WorkStore,
)

__all__ = ["TimingContract"]

MINUTE = timedelta(minutes=1)


async def claimed_ids(store: WorkStore, count: int) -> list[int]:
    """The ids of the next ``count`` claims, each completed before the next."""
    ids = []
    for _ in range(count):
        item = await claim(store)
        ids.append(item.id)
        assert await store.finish(item.lease, RunOutcome.succeeded(None))
    return ids


class TimingContract:
    """DESIGN.md part three, "Time": run_at, delay and priority, on every store and producer.

    Claims of items that become due together, by concurrent claimers, are in
    :class:`~workqueue.adapters.testing.contract.ClaimContract`.
    """

    async def test_an_item_given_no_time_may_run_at_once_at_priority_zero(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob())

        item = await backdoor.read_item(enqueued.id)
        assert item is not None
        assert (item.priority, item.run_at) == (0, clock.now())
        assert (await claim(store)).id == enqueued.id

    async def test_an_item_with_a_delay_is_not_claimed_before_its_run_at(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob(), delay=timedelta(seconds=30))
        run_at = clock.now() + timedelta(seconds=30)

        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None
        await clock.advance(29.999)
        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None
        await clock.advance(0.001)
        item = await claim(store)

        assert (item.id, item.run_at, item.status) == (enqueued.id, run_at, WorkStatus.RUNNING)
        assert item.enqueued_at == run_at - timedelta(seconds=30)

    async def test_a_waiting_item_is_queued_and_says_when_it_runs(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        paris = timezone(timedelta(hours=1))
        run_at = (clock.now() + 3 * MINUTE).astimezone(paris)

        enqueued = await queue.enqueue(BetaJob(), run_at=run_at, priority=-20)

        item = await backdoor.read_item(enqueued.id)
        assert item is not None
        assert (item.status, item.priority, item.run_at) == (WorkStatus.QUEUED, -20, run_at)
        assert item.run_at.utcoffset() is not None

    async def test_an_item_whose_run_at_has_passed_may_run_at_once(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob(), run_at=clock.now() - MINUTE)
        at_once = await queue.enqueue(AlphaJob(), delay=timedelta(0))

        assert await claimed_ids(store, 2) == [enqueued.id, at_once.id]

    async def test_a_claim_takes_the_highest_priority_first_then_the_oldest(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        low = await queue.enqueue(AlphaJob(number=1), priority=-3)
        plain = await queue.enqueue(AlphaJob(number=2))
        high = await queue.enqueue(BetaJob(label="3"), priority=5)
        high_later = await queue.enqueue(AlphaJob(number=4), priority=5)
        top = await queue.enqueue(AlphaJob(number=5), priority=100)
        bottom = await queue.enqueue(BetaJob(label="6"), priority=-100)

        assert await claimed_ids(store, 6) == [
            top.id,
            high.id,
            high_later.id,
            plain.id,
            low.id,
            bottom.id,
        ]

    async def test_an_item_that_becomes_due_is_ordered_by_its_priority_among_the_rest(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        first = await queue.enqueue(AlphaJob(number=1))
        later = await queue.enqueue(AlphaJob(number=2), priority=-10, delay=MINUTE)
        second = await queue.enqueue(AlphaJob(number=3))
        urgent = await queue.enqueue(AlphaJob(number=4), priority=10, delay=MINUTE)

        assert await claimed_ids(store, 1) == [first.id]
        await clock.advance(60)

        assert await claimed_ids(store, 3) == [urgent.id, second.id, later.id]

    async def test_many_waiting_items_of_the_highest_priority_do_not_hold_up_a_claimable_one(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await queue.enqueue_many(
            [
                EnqueueRequest(AlphaJob(number=n), priority=100, delay=timedelta(days=1))
                for n in range(50)
            ]
        )
        ready = await queue.enqueue(AlphaJob(), priority=-100)

        assert (await claim(store)).id == ready.id
        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None

    async def test_complete_and_claim_takes_the_next_item_in_priority_order_once_due(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await claim(store)
        plain = await queue.enqueue(AlphaJob(number=1))
        urgent = await queue.enqueue(AlphaJob(number=2), priority=9, delay=MINUTE)
        await clock.advance(60)

        completed, following = await store.complete_and_claim(
            running.lease, progress=None, kinds=ALL_KINDS, worker_id="w", lease_duration=LEASE
        )

        assert completed
        assert following is not None
        assert following.id == urgent.id
        assert (await claim(store)).id == plain.id

    async def test_complete_and_claim_many_claims_in_priority_order_among_due_items(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        low = await queue.enqueue(AlphaJob(number=1), priority=-1)
        due = await queue.enqueue(AlphaJob(number=2), priority=3, delay=MINUTE)
        waiting = await queue.enqueue(AlphaJob(number=3), priority=50, delay=2 * MINUTE)
        plain = await queue.enqueue(AlphaJob(number=4))
        first = await claim(store)
        assert first.id == plain.id
        await clock.advance(60)

        answers = await store.complete_and_claim_many(
            [(first.lease, None)],
            kinds=ALL_KINDS,
            worker_id="w",
            lease_duration=LEASE,
        )

        assert [(held, following.id if following else None) for held, following in answers] == [
            (True, due.id)
        ]
        assert (await claim(store)).id == low.id
        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None
        await clock.advance(60)
        assert (await claim(store)).id == waiting.id

    async def test_complete_and_claim_many_hands_the_next_items_out_in_claim_order(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue_many([EnqueueRequest(AlphaJob(number=n)) for n in range(2)])
        first, second = await claim(store), await claim(store)
        plain = await queue.enqueue(AlphaJob(number=2))
        urgent = await queue.enqueue(AlphaJob(number=3), priority=1)

        answers = await store.complete_and_claim_many(
            [(first.lease, None), (second.lease, None)],
            kinds=ALL_KINDS,
            worker_id="w",
            lease_duration=LEASE,
        )

        assert [(held, following.id if following else None) for held, following in answers] == [
            (True, urgent.id),
            (True, plain.id),
        ]

    async def test_a_waiting_item_absorbs_an_enqueue_with_its_key_and_keeps_its_own_timing(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        waiting = await queue.enqueue(AlphaJob(number=1), dedup_key="k", priority=2, delay=MINUTE)

        again = await queue.enqueue(AlphaJob(number=2), dedup_key="k", priority=90)

        assert (again.id, again.created) == (waiting.id, False)
        item = await backdoor.read_item(waiting.id)
        assert item is not None
        assert (item.priority, item.run_at) == (2, clock.now() + MINUTE)
        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None

    async def test_a_cancelled_waiting_item_is_never_claimed(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        waiting = await queue.enqueue(AlphaJob(), delay=MINUTE)

        await store.cancel(waiting.id, reason="not needed")
        await clock.advance(60)

        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None
        item = await store.get(waiting.id)
        assert item is not None
        assert item.status is WorkStatus.CANCELLED

    async def test_next_run_at_is_the_earliest_run_at_still_to_come_of_the_kinds(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        now = clock.now()
        assert await store.next_run_at(ALL_KINDS) is None
        await queue.enqueue(AlphaJob(number=1), delay=5 * MINUTE)
        await queue.enqueue(AlphaJob(number=2), delay=3 * MINUTE)
        await queue.enqueue(BetaJob(), delay=MINUTE)
        await queue.enqueue(AlphaJob(number=3))

        assert await store.next_run_at(ALL_KINDS) == now + MINUTE
        assert await store.next_run_at(["contract_alpha"]) == now + 3 * MINUTE
        assert await store.next_run_at(["contract_gamma"]) is None
        await clock.advance(180)
        assert await store.next_run_at(["contract_alpha"]) == now + 5 * MINUTE
        await clock.advance(120)
        assert await store.next_run_at(ALL_KINDS) is None

    async def test_a_batch_gives_each_item_its_own_priority_and_run_at(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        now = clock.now()
        results = await queue.enqueue_many(
            [
                EnqueueRequest(AlphaJob(number=1), priority=-5),
                EnqueueRequest(AlphaJob(number=2), dedup_key="two", delay=MINUTE),
                EnqueueRequest(BetaJob(label="3"), priority=7, run_at=now + 2 * MINUTE),
                EnqueueRequest(BetaJob(label="4")),
            ]
        )

        items = [await backdoor.read_item(result.id) for result in results]
        assert [(item.priority, item.run_at) for item in items if item is not None] == [
            (-5, now),
            (0, now + MINUTE),
            (7, now + 2 * MINUTE),
            (0, now),
        ]
        assert await claimed_ids(store, 2) == [results[3].id, results[0].id]

    @pytest.mark.parametrize(
        ("options", "error", "message"),
        [
            ({"priority": 101}, InvalidPriorityError, "priority must be from -100 to 100, not 101"),
            (
                {"priority": -101},
                InvalidPriorityError,
                "priority must be from -100 to 100, not -101",
            ),
            ({"priority": True}, InvalidPriorityError, "priority must be an integer, not bool"),
            ({"priority": 1.5}, InvalidPriorityError, "priority must be an integer, not float"),
            (
                {"run_at": datetime(2030, 1, 1)},
                InvalidRunAtError,
                "run_at must have a time zone, not the naive time 2030-01-01T00:00:00",
            ),
            (
                {"delay": timedelta(seconds=-1)},
                InvalidRunAtError,
                "delay must not be negative, not -1 seconds",
            ),
            ({"delay": 30}, InvalidRunAtError, "delay must be a timedelta, not int"),
            ({"run_at": "tomorrow"}, InvalidRunAtError, "run_at must be a datetime, not str"),
        ],
        ids=[
            "priority too high",
            "priority too low",
            "priority a bool",
            "priority a float",
            "naive run_at",
            "negative delay",
            "delay a number",
            "run_at a string",
        ],
    )
    async def test_an_unusable_priority_or_time_is_refused_before_anything_is_written(
        self,
        queue: WorkQueue,
        backdoor: Backdoor,
        options: dict[str, Any],
        error: type[Exception],
        message: str,
    ) -> None:
        with pytest.raises(error) as raised:
            await queue.enqueue(AlphaJob(), **options)
        with pytest.raises(error):
            await queue.enqueue_many(
                [EnqueueRequest(AlphaJob()), EnqueueRequest(AlphaJob(), **options)]
            )

        assert str(raised.value) == message
        assert await backdoor.all_items() == []

    async def test_a_run_at_and_a_delay_together_are_refused(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        with pytest.raises(InvalidRunAtError, match=r"^give run_at or delay, not both$"):
            await queue.enqueue(AlphaJob(), run_at=clock.now(), delay=MINUTE)

        assert await backdoor.all_items() == []
