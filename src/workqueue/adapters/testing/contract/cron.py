"""Contract: a cron schedule's fire times each get one turn, on the calendar of its time zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import partial
from typing import ClassVar
from zoneinfo import ZoneInfo

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.fixtures import QueueFactory
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.adapters.testing.contract.race import at_once
from workqueue.adapters.testing.contract.steps import claim
from workqueue.domain import (
    Overlap,
    RunOutcome,
    WorkItem,
    WorkQueue,
    WorkSchedule,
    WorkStatus,
    WorkStore,
)

__all__ = ["CronContract"]

PARIS = ZoneInfo("Europe/Paris")
# The days of 2026 the clocks change in Paris: forward at 02:00 on 29 March
# (a 23-hour day), back at 03:00 on 25 October (a 25-hour day).
SPRING_FORWARD = datetime(2026, 3, 29, tzinfo=PARIS)
FALL_BACK = datetime(2026, 10, 25, tzinfo=PARIS)
STEP = timedelta(minutes=10)

DAILY_AT_THREE = WorkSchedule(payload=AlphaJob(number=3), cron="0 3 * * *")


def at(moment: datetime) -> str:
    """The dedup key the item of ``DAILY_AT_THREE``'s fire time ``moment`` carries."""
    return DAILY_AT_THREE.fire_dedup_key(moment)


async def move_to(clock: FakeClock, moment: datetime) -> None:
    await clock.advance((moment - clock.now()).total_seconds())


async def ask_all_along(
    queue: WorkQueue, clock: FakeClock, schedule: WorkSchedule, until: datetime
) -> list[int]:
    """Ask for ``schedule`` every ten minutes until ``until``: the ids of the items made."""
    created: list[int] = []
    while clock.now() < until:
        result = await queue.enqueue_if_due(schedule)
        if result is not None:
            created.append(result.id)
        await clock.advance(STEP.total_seconds())
    return created


def in_paris(cron: str) -> WorkSchedule:
    """A schedule on ``cron`` in Paris whose fire times all run (none is skipped as busy)."""
    return WorkSchedule(
        payload=AlphaJob(number=1), cron=cron, timezone="Europe/Paris", overlap=Overlap.QUEUE
    )


async def through_the_clock_changes(
    queue: WorkQueue,
    clock: FakeClock,
    schedule: WorkSchedule,
    *,
    ahead: timedelta,
    after: timedelta,
) -> None:
    """Ask for ``schedule`` all along each day the clocks change, from ``ahead`` of its
    midnight to ``after`` it."""
    for day in (SPRING_FORWARD, FALL_BACK):
        await move_to(clock, day - ahead)
        await ask_all_along(queue, clock, schedule, until=day + after)


def local_days(items: list[WorkItem], dedup_key: str) -> dict[str, int]:
    """How many of ``items`` each fire day (in Paris) has, read from their dedup keys."""
    days: dict[str, int] = {}
    for item in items:
        assert item.dedup_key is not None
        assert item.dedup_key.startswith(f"{dedup_key}@")
        fire = datetime.fromisoformat(item.dedup_key.removeprefix(f"{dedup_key}@"))
        day = fire.astimezone(PARIS).date().isoformat()
        days[day] = days.get(day, 0) + 1
    return days


class CronContract:
    """A cron schedule (DESIGN.md part three, "Cron schedules"; docs/adr/0032).

    The newest fire time at or before now that has had no turn is due: the kind
    takes its turn at it once, and its item carries the fire time in its dedup
    key. Fire times missed while nobody asked make one item between them. A fire
    time that comes while an item of the kind is queued or running is skipped, or
    queued with ``Overlap.QUEUE``. Times are read in the schedule's time zone.

    ``concurrent_schedulers`` and ``race_rounds`` size the race test; an adapter
    may raise them, never lower them below the defaults.
    """

    concurrent_schedulers: ClassVar[int] = 4
    race_rounds: ClassVar[int] = 50

    async def test_the_newest_fire_time_at_or_before_now_is_due_and_names_the_item(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await move_to(clock, datetime(2026, 1, 2, 3, 0, tzinfo=UTC))

        result = await queue.enqueue_if_due(DAILY_AT_THREE)

        assert result is not None
        assert result.created
        item = await backdoor.read_item(result.id)
        assert item is not None
        assert (item.kind, item.payload, item.status) == (
            ContractKind.ALPHA.value,
            {"number": 3},
            WorkStatus.QUEUED,
        )
        assert item.dedup_key == "periodic@2026-01-02T03:00:00+00:00"
        assert item.enqueued_at == item.run_at == clock.now()

    async def test_a_fire_time_that_had_its_turn_is_not_due_again(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        first = await queue.enqueue_if_due(DAILY_AT_THREE)
        assert first is not None
        item = await claim(store)
        assert await store.finish(item.lease, RunOutcome.succeeded(None))

        assert await queue.enqueue_if_due(DAILY_AT_THREE) is None
        await clock.advance(3600)
        assert await queue.enqueue_if_due(DAILY_AT_THREE) is None
        assert [item.id for item in await backdoor.all_items()] == [first.id]

    async def test_the_next_fire_time_is_due_when_it_comes_not_before(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await move_to(clock, datetime(2026, 1, 1, 12, 0, tzinfo=UTC))
        assert await queue.enqueue_if_due(DAILY_AT_THREE) is not None
        assert await store.finish((await claim(store)).lease, RunOutcome.succeeded(None))

        await move_to(clock, datetime(2026, 1, 2, 2, 59, 59, 999999, tzinfo=UTC))
        assert await queue.enqueue_if_due(DAILY_AT_THREE) is None
        await clock.advance(0.000001)
        result = await queue.enqueue_if_due(DAILY_AT_THREE)

        assert result is not None
        assert [item.dedup_key for item in await backdoor.all_items()] == [
            at(datetime(2026, 1, 1, 3, 0, tzinfo=UTC)),
            at(datetime(2026, 1, 2, 3, 0, tzinfo=UTC)),
        ]

    async def test_fire_times_missed_while_nobody_asked_make_one_item(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        assert await queue.enqueue_if_due(DAILY_AT_THREE) is not None
        assert await store.finish((await claim(store)).lease, RunOutcome.succeeded(None))

        await move_to(clock, datetime(2026, 1, 5, 12, 0, tzinfo=UTC))
        result = await queue.enqueue_if_due(DAILY_AT_THREE)

        assert result is not None
        assert await queue.enqueue_if_due(DAILY_AT_THREE) is None
        keys = [item.dedup_key for item in await backdoor.all_items()]
        assert keys == [
            at(datetime(2025, 12, 31, 3, 0, tzinfo=UTC)),
            at(datetime(2026, 1, 5, 3, 0, tzinfo=UTC)),
        ]

    async def test_a_fire_time_while_an_item_of_the_kind_runs_is_skipped_for_good(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        assert await queue.enqueue_if_due(DAILY_AT_THREE) is not None
        running = await claim(store)

        await move_to(clock, datetime(2026, 1, 1, 3, 0, tzinfo=UTC))
        assert await queue.enqueue_if_due(DAILY_AT_THREE) is None
        assert await store.finish(running.lease, RunOutcome.succeeded(None))
        assert await queue.enqueue_if_due(DAILY_AT_THREE) is None

        await move_to(clock, datetime(2026, 1, 2, 3, 0, tzinfo=UTC))
        assert await queue.enqueue_if_due(DAILY_AT_THREE) is not None
        assert len(await backdoor.all_items()) == 2

    async def test_a_fire_time_while_an_item_of_the_kind_is_queued_is_skipped(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        queued = await queue.enqueue(AlphaJob(number=1))

        await move_to(clock, datetime(2026, 1, 1, 3, 0, tzinfo=UTC))

        assert await queue.enqueue_if_due(DAILY_AT_THREE) is None
        assert [item.id for item in await backdoor.all_items()] == [queued.id]

    async def test_with_overlap_queue_a_fire_time_has_its_item_while_one_runs(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        schedule = WorkSchedule(payload=AlphaJob(number=3), cron="0 3 * * *", overlap=Overlap.QUEUE)
        assert await queue.enqueue_if_due(schedule) is not None
        running = await claim(store)

        await move_to(clock, datetime(2026, 1, 1, 3, 0, tzinfo=UTC))
        result = await queue.enqueue_if_due(schedule)

        assert result is not None
        assert result.id != running.id
        assert await queue.enqueue_if_due(schedule) is None
        statuses = [item.status for item in await backdoor.all_items()]
        assert statuses == [WorkStatus.RUNNING, WorkStatus.QUEUED]

    async def test_turns_outlive_the_items_retention_deletes(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        assert await queue.enqueue_if_due(DAILY_AT_THREE) is not None
        assert await store.finish((await claim(store)).lease, RunOutcome.succeeded(None))
        await clock.advance(60)
        assert await store.purge_finished(finished_before=clock.now(), limit=10) == 1

        assert await queue.enqueue_if_due(DAILY_AT_THREE) is None
        assert await backdoor.all_items() == []

    async def test_each_kind_takes_its_own_turns(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        beta = WorkSchedule(payload=BetaJob(label="b"), cron="0 3 * * *")

        assert await queue.enqueue_if_due(DAILY_AT_THREE) is not None
        assert await queue.enqueue_if_due(beta) is not None
        assert sorted(item.kind for item in await backdoor.all_items()) == [
            ContractKind.ALPHA.value,
            ContractKind.BETA.value,
        ]

    async def test_a_daily_run_at_half_past_two_runs_once_on_each_day_the_clocks_change(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await through_the_clock_changes(
            queue, clock, in_paris("30 2 * * *"), ahead=timedelta(days=1), after=timedelta(days=2)
        )

        items = await backdoor.all_items()
        days = local_days(items, "periodic")
        assert (days["2026-03-29"], days["2026-10-25"]) == (1, 1)
        keys = {item.dedup_key for item in items}
        # The clocks skip 02:30 that night: it fires as they pass it, at 03:00 CEST.
        assert "periodic@2026-03-29T01:00:00+00:00" in keys
        # They pass 02:30 twice that night: it fires the first time, 02:30 CEST.
        assert "periodic@2026-10-25T00:30:00+00:00" in keys

    async def test_an_hourly_schedule_runs_23_and_25_times_on_the_days_the_clocks_change(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await through_the_clock_changes(
            queue,
            clock,
            in_paris("0 * * * *"),
            ahead=timedelta(hours=2),
            after=timedelta(days=1, hours=2),
        )

        days = local_days(await backdoor.all_items(), "periodic")
        assert (days["2026-03-29"], days["2026-10-25"]) == (23, 25)

    async def test_schedulers_that_find_a_fire_time_due_together_make_one_item(
        self, queue: WorkQueue, queue_factory: QueueFactory, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        schedule = WorkSchedule(payload=AlphaJob(number=1), cron="* * * * *", overlap=Overlap.QUEUE)
        queues = [queue] + [await queue_factory() for _ in range(self.concurrent_schedulers - 1)]
        doubled: dict[int, list[int]] = {}
        for round_number in range(self.race_rounds):
            results = await at_once([partial(other.enqueue_if_due, schedule) for other in queues])
            created = [result.id for result in results if result is not None]
            if len(created) != 1:
                doubled[round_number] = created
            await clock.advance(60)

        assert not doubled, (
            f"{len(doubled)} of {self.race_rounds} fire times did not make exactly one item "
            f"(round: item ids): {doubled}; a fire time's turn must be taken once"
        )
        keys = [item.dedup_key for item in await backdoor.all_items()]
        assert len(keys) == len(set(keys)) == self.race_rounds
