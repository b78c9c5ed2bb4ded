"""The scheduler enqueues each periodic kind the table says is due, with its dedup key,
and says per kind what it did."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta

import pytest
from service_bench import AlphaJob, Bench

from workqueue.application import ScheduleOutcome, ScheduleStatus, WorkScheduler
from workqueue.domain import (
    EnqueueRequest,
    EnqueueResult,
    StoreUnavailableError,
    WorkPayload,
    WorkQueue,
    WorkSchedule,
    WorkStatus,
)

HOURLY = timedelta(hours=1)


SCHEDULER_LOG = "workqueue.scheduler"


HOURLY_TICK = WorkSchedule(payload=AlphaJob(label="tick"), interval=timedelta(hours=1))


def hourly(bench: Bench, label: str = "tick", *, beta: bool = False) -> WorkSchedule:
    return WorkSchedule(payload=bench.payload(label, beta=beta), interval=HOURLY)


async def finish_everything(bench: Bench) -> None:
    executor = bench.executor()
    while await executor.run_next() is not None:
        pass


async def queued(bench: Bench, kind: str = "alpha") -> list[int]:
    items = await bench.store.list_items(statuses=[WorkStatus.QUEUED], kinds=[kind])
    return [item.id for item in items]


async def ever_created(bench: Bench, kind: str = "alpha") -> list[int]:
    return [item.id for item in await bench.store.list_items(kinds=[kind])]


EnqueueIfDue = Callable[[WorkSchedule], Awaitable[EnqueueResult | None]]


class ScriptedQueue:
    """The bench's queue, except that a test scripts what enqueue_if_due does."""

    def __init__(self, inner: WorkQueue, enqueue_if_due: EnqueueIfDue) -> None:
        self.inner = inner
        self.script = enqueue_if_due

    async def enqueue(self, payload: WorkPayload, *, dedup_key: str | None = None) -> EnqueueResult:
        return await self.inner.enqueue(payload, dedup_key=dedup_key)

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        return await self.inner.enqueue_many(requests)

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        return await self.script(schedule)


class AnsweringQueue:
    """A WorkQueue whose enqueue_if_due gives one scripted answer (or raises it)."""

    def __init__(self, answer: EnqueueResult | Exception | None) -> None:
        self.answer = answer

    async def enqueue(self, payload: WorkPayload, *, dedup_key: str | None = None) -> EnqueueResult:
        raise AssertionError("the scheduler enqueues only through enqueue_if_due")

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        raise AssertionError("the scheduler enqueues only through enqueue_if_due")

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def scheduler_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str, dict[str, object]]]:
    return [
        (
            r.levelname,
            r.getMessage(),
            {key: getattr(r, key) for key in ("kind", "item_id") if hasattr(r, key)},
        )
        for r in caplog.records
        if r.name == SCHEDULER_LOG
    ]


@pytest.fixture
def info_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level("INFO", logger=SCHEDULER_LOG)
    return caplog


class TestDueness:
    async def test_a_kind_that_never_ran_is_due_and_enqueued_with_its_dedup_key(
        self, bench: Bench
    ) -> None:
        (outcome,) = await WorkScheduler(bench.queue, [hourly(bench)]).run_once()

        assert outcome.status is ScheduleStatus.ENQUEUED
        item = await bench.item(outcome.item_id or 0)
        assert (item.kind, item.payload, item.dedup_key) == (
            "alpha",
            {"label": "tick", "count": 0},
            "periodic",
        )

    async def test_a_queued_item_of_the_kind_means_not_due(self, bench: Bench) -> None:
        await bench.enqueue("by hand")

        (outcome,) = await WorkScheduler(bench.queue, [hourly(bench)]).run_once()

        assert outcome.status is ScheduleStatus.NOT_DUE
        assert len(await queued(bench)) == 1

    async def test_a_running_item_of_the_kind_means_not_due(self, bench: Bench) -> None:
        await bench.enqueue("by hand")
        await bench.claim_as_dead_worker()

        (outcome,) = await WorkScheduler(bench.queue, [hourly(bench)]).run_once()

        assert outcome.status is ScheduleStatus.NOT_DUE
        assert await queued(bench) == []

    async def test_due_ness_counts_from_when_the_last_item_finished(self, bench: Bench) -> None:
        scheduler = WorkScheduler(bench.queue, [hourly(bench)])
        await scheduler.run_once()
        await bench.clock.advance(600)  # enqueued at 0, finished at 600 s
        await finish_everything(bench)

        await bench.clock.advance(3599)
        (early,) = await scheduler.run_once()
        await bench.clock.advance(1)
        (due,) = await scheduler.run_once()

        assert early.status is ScheduleStatus.NOT_DUE
        assert due.status is ScheduleStatus.ENQUEUED

    async def test_a_failed_last_item_counts_like_a_succeeded_one(self, bench: Bench) -> None:
        bench.script.fail_with("tick", RuntimeError("broken"))
        scheduler = WorkScheduler(bench.queue, [hourly(bench)])
        await scheduler.run_once()
        await finish_everything(bench)

        (soon,) = await scheduler.run_once()
        await bench.clock.advance(3600)
        (later,) = await scheduler.run_once()

        assert (soon.status, later.status) == (ScheduleStatus.NOT_DUE, ScheduleStatus.ENQUEUED)

    async def test_overdue_work_is_enqueued_once_at_the_first_pass_after_downtime(
        self, bench: Bench
    ) -> None:
        scheduler = WorkScheduler(bench.queue, [hourly(bench)])
        await scheduler.run_once()
        await finish_everything(bench)

        await bench.clock.advance(3 * 24 * 3600)  # the workers were down for three days
        outcomes = [await scheduler.run_once() for _ in range(3)]

        assert [outcome.status for (outcome,) in outcomes] == [
            ScheduleStatus.ENQUEUED,
            ScheduleStatus.NOT_DUE,
            ScheduleStatus.NOT_DUE,
        ]
        assert len(await queued(bench)) == 1


class TestTwoWorkers:
    async def test_two_schedulers_that_find_a_kind_due_together_produce_one_queued_item(
        self, bench: Bench
    ) -> None:
        # Both reach the queue at the same instant, as two workers polling together.
        both_ready = asyncio.Barrier(2)

        async def together(schedule: WorkSchedule) -> EnqueueResult | None:
            await both_ready.wait()
            return await bench.queue.enqueue_if_due(schedule)

        queue = ScriptedQueue(bench.queue, together)
        first = WorkScheduler(queue, [hourly(bench)])
        second = WorkScheduler(queue, [hourly(bench)])

        (a,), (b,) = await asyncio.gather(first.run_once(), second.run_once())

        assert sorted([a.status, b.status]) == [ScheduleStatus.ENQUEUED, ScheduleStatus.NOT_DUE]
        assert await queued(bench) == [a.item_id or b.item_id]

    async def test_a_pass_under_way_while_another_worker_enqueues_and_claims_adds_nothing(
        self, bench: Bench
    ) -> None:
        # The double run this guards against: A's pass has begun when B enqueues the
        # kind and a worker claims B's item. A running item absorbs nothing, so an
        # A that had decided "due" before B enqueued would now run the kind twice.
        claimed = asyncio.Event()

        async def after_the_claim(schedule: WorkSchedule) -> EnqueueResult | None:
            await claimed.wait()
            return await bench.queue.enqueue_if_due(schedule)

        late = WorkScheduler(ScriptedQueue(bench.queue, after_the_claim), [hourly(bench)])
        late_pass = asyncio.ensure_future(late.run_once())
        await asyncio.sleep(0)  # the late pass starts, and waits inside the queue
        (early,) = await WorkScheduler(bench.queue, [hourly(bench)]).run_once()
        running = await bench.claim_as_dead_worker()
        claimed.set()
        (outcome,) = await late_pass

        assert (early.status, early.item_id) == (ScheduleStatus.ENQUEUED, running.id)
        assert outcome.status is ScheduleStatus.NOT_DUE
        assert await ever_created(bench) == [running.id]


class TestSchedules:
    def test_two_schedules_of_one_kind_are_refused_naming_the_kind(self, bench: Bench) -> None:
        with pytest.raises(ValueError, match="two schedules for kind 'alpha'"):
            WorkScheduler(bench.queue, [hourly(bench, "x"), hourly(bench, "y")])

    async def test_an_unreachable_store_on_one_schedule_does_not_stop_the_others(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        async def alpha_unreachable(schedule: WorkSchedule) -> EnqueueResult | None:
            if schedule.kind == "alpha":
                raise StoreUnavailableError("connection reset")
            return await bench.queue.enqueue_if_due(schedule)

        scheduler = WorkScheduler(
            ScriptedQueue(bench.queue, alpha_unreachable),
            [hourly(bench), hourly(bench, beta=True)],
        )

        alpha, beta = await scheduler.run_once()

        assert (alpha.kind, alpha.status, alpha.error) == (
            "alpha",
            ScheduleStatus.ERROR,
            "connection reset",
        )
        assert (beta.kind, beta.status) == ("beta", ScheduleStatus.ENQUEUED)
        assert "periodic alpha not scheduled: connection reset" in caplog.text

    async def test_enqueued_and_absorbed_are_logged_by_kind(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.scheduler")
        item_id = await bench.enqueue("by hand", beta=True, dedup_key="periodic")

        async def beta_absorbed(schedule: WorkSchedule) -> EnqueueResult | None:
            if schedule.kind == "beta":
                # As a queue that reports a queued twin absorbing the enqueue would.
                return await bench.queue.enqueue(schedule.payload, dedup_key=schedule.dedup_key)
            return await bench.queue.enqueue_if_due(schedule)

        scheduler = WorkScheduler(
            ScriptedQueue(bench.queue, beta_absorbed),
            [hourly(bench), hourly(bench, beta=True)],
        )

        alpha, beta = await scheduler.run_once()

        assert alpha.status is ScheduleStatus.ENQUEUED
        assert (beta.status, beta.item_id) == (ScheduleStatus.ABSORBED, item_id)
        assert f"periodic alpha enqueued as item {alpha.item_id}" in caplog.text
        assert f"periodic beta absorbed by queued item {item_id}" in caplog.text


class TestOutcomesAndLogLines:
    async def test_a_kind_that_is_not_due_is_named_in_its_outcome_and_not_logged(
        self,
        info_log: pytest.LogCaptureFixture,
    ) -> None:
        outcomes = await WorkScheduler(AnsweringQueue(None), [HOURLY_TICK]).run_once()

        assert outcomes == [ScheduleOutcome("alpha", ScheduleStatus.NOT_DUE)]
        assert scheduler_lines(info_log) == []

    async def test_an_enqueued_kind_is_one_line_with_its_item(
        self,
        info_log: pytest.LogCaptureFixture,
    ) -> None:
        queue = AnsweringQueue(EnqueueResult(id=7, created=True))

        outcomes = await WorkScheduler(queue, [HOURLY_TICK]).run_once()

        assert outcomes == [ScheduleOutcome("alpha", ScheduleStatus.ENQUEUED, item_id=7)]
        assert scheduler_lines(info_log) == [
            ("INFO", "periodic alpha enqueued as item 7", {"kind": "alpha", "item_id": 7})
        ]

    async def test_an_absorbed_kind_is_one_line_naming_the_item_that_absorbed_it(
        self,
        info_log: pytest.LogCaptureFixture,
    ) -> None:
        queue = AnsweringQueue(EnqueueResult(id=4, created=False))

        outcomes = await WorkScheduler(queue, [HOURLY_TICK]).run_once()

        assert outcomes == [ScheduleOutcome("alpha", ScheduleStatus.ABSORBED, item_id=4)]
        assert scheduler_lines(info_log) == [
            ("INFO", "periodic alpha absorbed by queued item 4", {"kind": "alpha", "item_id": 4})
        ]

    async def test_a_failed_pass_is_one_warning_with_the_error(
        self,
        info_log: pytest.LogCaptureFixture,
    ) -> None:
        queue = AnsweringQueue(StoreUnavailableError("connection refused"))

        outcomes = await WorkScheduler(queue, [HOURLY_TICK]).run_once()

        assert outcomes == [
            ScheduleOutcome("alpha", ScheduleStatus.ERROR, error="connection refused")
        ]
        assert scheduler_lines(info_log) == [
            ("WARNING", "periodic alpha not scheduled: connection refused", {"kind": "alpha"})
        ]
