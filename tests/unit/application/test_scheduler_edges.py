"""The scheduler's edges: every outcome names its kind, and each pass logs what it did."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest
from service_bench import AlphaJob

from application import ScheduleOutcome, ScheduleStatus, WorkScheduler
from domain import (
    EnqueueRequest,
    EnqueueResult,
    StoreUnavailableError,
    WorkPayload,
    WorkSchedule,
)

SCHEDULER_LOG = "workqueue.scheduler"
HOURLY = WorkSchedule(payload=AlphaJob(label="tick"), interval=timedelta(hours=1))


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


async def test_a_kind_that_is_not_due_is_named_in_its_outcome_and_not_logged(
    info_log: pytest.LogCaptureFixture,
) -> None:
    outcomes = await WorkScheduler(AnsweringQueue(None), [HOURLY]).run_once()

    assert outcomes == [ScheduleOutcome("alpha", ScheduleStatus.NOT_DUE)]
    assert scheduler_lines(info_log) == []


async def test_an_enqueued_kind_is_one_line_with_its_item(
    info_log: pytest.LogCaptureFixture,
) -> None:
    queue = AnsweringQueue(EnqueueResult(id=7, created=True))

    outcomes = await WorkScheduler(queue, [HOURLY]).run_once()

    assert outcomes == [ScheduleOutcome("alpha", ScheduleStatus.ENQUEUED, item_id=7)]
    assert scheduler_lines(info_log) == [
        ("INFO", "periodic alpha enqueued as item 7", {"kind": "alpha", "item_id": 7})
    ]


async def test_an_absorbed_kind_is_one_line_naming_the_item_that_absorbed_it(
    info_log: pytest.LogCaptureFixture,
) -> None:
    queue = AnsweringQueue(EnqueueResult(id=4, created=False))

    outcomes = await WorkScheduler(queue, [HOURLY]).run_once()

    assert outcomes == [ScheduleOutcome("alpha", ScheduleStatus.ABSORBED, item_id=4)]
    assert scheduler_lines(info_log) == [
        ("INFO", "periodic alpha absorbed by queued item 4", {"kind": "alpha", "item_id": 4})
    ]


async def test_a_failed_pass_is_one_warning_with_the_error(
    info_log: pytest.LogCaptureFixture,
) -> None:
    queue = AnsweringQueue(StoreUnavailableError("connection refused"))

    outcomes = await WorkScheduler(queue, [HOURLY]).run_once()

    assert outcomes == [ScheduleOutcome("alpha", ScheduleStatus.ERROR, error="connection refused")]
    assert scheduler_lines(info_log) == [
        ("WARNING", "periodic alpha not scheduled: connection refused", {"kind": "alpha"})
    ]
