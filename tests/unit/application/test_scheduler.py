"""The scheduler: a periodic kind is enqueued when the table says it is due, once."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

import pytest
from service_bench import Bench, StoreSpy

from application import ScheduleStatus, WorkScheduler
from domain import StoreUnavailableError, WorkSchedule, WorkStatus

HOURLY = timedelta(hours=1)


def hourly(bench: Bench, label: str = "tick", *, beta: bool = False) -> WorkSchedule:
    return WorkSchedule(payload=bench.payload(label, beta=beta), interval=HOURLY)


async def finish_everything(bench: Bench) -> None:
    executor = bench.executor()
    while await executor.run_next() is not None:
        pass


async def queued(bench: Bench, kind: str = "alpha") -> list[int]:
    items = await bench.store.list_items(statuses=[WorkStatus.QUEUED], kinds=[kind])
    return [item.id for item in items]


class TestDueness:
    async def test_a_kind_that_never_ran_is_due_and_enqueued_with_its_dedup_key(
        self, bench: Bench
    ) -> None:
        (outcome,) = await WorkScheduler(bench.store, bench.queue, [hourly(bench)]).run_once()

        assert outcome.status is ScheduleStatus.ENQUEUED
        item = await bench.item(outcome.item_id or 0)
        assert (item.kind, item.payload, item.dedup_key) == (
            "alpha",
            {"label": "tick", "count": 0},
            "periodic",
        )

    async def test_a_queued_item_of_the_kind_means_not_due(self, bench: Bench) -> None:
        await bench.enqueue("by hand")

        (outcome,) = await WorkScheduler(bench.store, bench.queue, [hourly(bench)]).run_once()

        assert outcome.status is ScheduleStatus.NOT_DUE
        assert len(await queued(bench)) == 1

    async def test_a_running_item_of_the_kind_means_not_due(self, bench: Bench) -> None:
        await bench.enqueue("by hand")
        await bench.claim_as_dead_worker()

        (outcome,) = await WorkScheduler(bench.store, bench.queue, [hourly(bench)]).run_once()

        assert outcome.status is ScheduleStatus.NOT_DUE
        assert await queued(bench) == []

    async def test_due_ness_counts_from_when_the_last_item_finished(self, bench: Bench) -> None:
        scheduler = WorkScheduler(bench.store, bench.queue, [hourly(bench)])
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
        scheduler = WorkScheduler(bench.store, bench.queue, [hourly(bench)])
        await scheduler.run_once()
        await finish_everything(bench)

        (soon,) = await scheduler.run_once()
        await bench.clock.advance(3600)
        (later,) = await scheduler.run_once()

        assert (soon.status, later.status) == (ScheduleStatus.NOT_DUE, ScheduleStatus.ENQUEUED)

    async def test_overdue_work_is_enqueued_once_at_the_first_pass_after_downtime(
        self, bench: Bench
    ) -> None:
        scheduler = WorkScheduler(bench.store, bench.queue, [hourly(bench)])
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
        # Both ask before either enqueues, as two workers polling at the same instant.
        both_asked = asyncio.Barrier(2)
        spy = StoreSpy(bench.store)

        async def is_due_then_wait(kind: str, interval: timedelta) -> bool:
            due = await bench.store.is_due(kind, interval)
            await both_asked.wait()
            return due

        spy.is_due = is_due_then_wait  # type: ignore[method-assign]
        first = WorkScheduler(spy, bench.queue, [hourly(bench)])  # type: ignore[arg-type]
        second = WorkScheduler(spy, bench.queue, [hourly(bench)])  # type: ignore[arg-type]

        (a,), (b,) = await asyncio.gather(first.run_once(), second.run_once())

        assert sorted([a.status, b.status]) == [ScheduleStatus.ABSORBED, ScheduleStatus.ENQUEUED]
        assert a.item_id == b.item_id
        assert await queued(bench) == [a.item_id]


class TestSchedules:
    def test_two_schedules_of_one_kind_are_refused_naming_the_kind(self, bench: Bench) -> None:
        with pytest.raises(ValueError, match="two schedules for kind 'alpha'"):
            WorkScheduler(bench.store, bench.queue, [hourly(bench, "x"), hourly(bench, "y")])

    async def test_an_unreachable_store_on_one_schedule_does_not_stop_the_others(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        spy = StoreSpy(bench.store)

        async def alpha_unreachable(kind: str, interval: timedelta) -> Any:
            if kind == "alpha":
                raise StoreUnavailableError("connection reset")
            return await bench.store.is_due(kind, interval)

        spy.is_due = alpha_unreachable  # type: ignore[method-assign]
        scheduler = WorkScheduler(
            spy,  # type: ignore[arg-type]
            bench.queue,
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
        spy = StoreSpy(bench.store)

        async def always_due(kind: str, interval: timedelta) -> bool:
            return True

        spy.is_due = always_due  # type: ignore[method-assign]
        scheduler = WorkScheduler(
            spy,  # type: ignore[arg-type]
            bench.queue,
            [hourly(bench), hourly(bench, beta=True)],
        )

        alpha, beta = await scheduler.run_once()

        assert alpha.status is ScheduleStatus.ENQUEUED
        assert (beta.status, beta.item_id) == (ScheduleStatus.ABSORBED, item_id)
        assert f"periodic alpha enqueued as item {alpha.item_id}" in caplog.text
        assert f"periodic beta absorbed by queued item {item_id}" in caplog.text
