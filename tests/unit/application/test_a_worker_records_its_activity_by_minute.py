"""A worker counts what its lanes ran by minute and kind, adds it to the activity log at
every cycle, and offers the minute's depth sample (docs/adr/0040)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

import pytest
from service_bench import Bench
from worker_bench import WORKER_LOG, RoundTripStore, start, stopped, takes

from workqueue.adapters.memory import InMemoryActivityLog, InMemoryState
from workqueue.adapters.testing.clock import FakeClock
from workqueue.application import LeaseRecovery, Worker, WorkScheduler
from workqueue.application.activity import ActivityRecorder
from workqueue.application.execution import ExecutionOutcome, ExecutionStatus
from workqueue.domain import (
    ACTIVITY_KEPT,
    MinuteActivity,
    MinuteCounts,
    StoreUnavailableError,
    minute_of,
)

ALPHA, BETA = "alpha", "beta"


def ended(status: ExecutionStatus, kind: str = ALPHA) -> ExecutionOutcome:
    return ExecutionOutcome(item_id=1, kind=kind, attempt=1, status=status, duration=0.1)


class FlakyLog(InMemoryActivityLog):
    """An in-memory activity log whose calls fail with ``errors`` while there are any."""

    def __init__(self, state: InMemoryState, clock: FakeClock) -> None:
        super().__init__(state, clock)
        self.add_errors: list[Exception] = []
        self.sample_errors: list[Exception] = []
        self.samples: list[datetime] = []

    async def add_counts(self, counts: Sequence[MinuteCounts]) -> None:
        if self.add_errors:
            raise self.add_errors.pop(0)
        await super().add_counts(counts)

    async def sample_depth(self, minute: datetime) -> bool:
        self.samples.append(minute)
        if self.sample_errors:
            raise self.sample_errors.pop(0)
        return await super().sample_depth(minute)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def log(clock: FakeClock) -> FlakyLog:
    return FlakyLog(InMemoryState(), clock)


@pytest.fixture
def recorder(log: FlakyLog, clock: FakeClock) -> ActivityRecorder:
    return ActivityRecorder(log, clock)


def counts_of(activity: list[MinuteActivity]) -> list[tuple[datetime, int, int, int]]:
    """The minutes with items counted (a depth sample alone makes a minute of zeros)."""
    counts = [(row.minute, row.succeeded, row.failed, row.retried) for row in activity]
    return [count for count in counts if count[1:] != (0, 0, 0)]


class TestCountingWhatRan:
    async def test_successes_failures_and_retries_are_counted_by_minute_and_kind(
        self, recorder: ActivityRecorder, log: FlakyLog, clock: FakeClock
    ) -> None:
        minute = minute_of(clock.now())
        for status in (
            ExecutionStatus.SUCCEEDED,
            ExecutionStatus.SUCCEEDED,
            ExecutionStatus.FAILED,
        ):
            recorder.add(ended(status))
        recorder.add(ended(ExecutionStatus.RETRIED, BETA))
        await clock.advance(60)
        recorder.add(ended(ExecutionStatus.RETRIED))

        await recorder.run_once()

        assert counts_of(await log.activity(minute, kind=ALPHA)) == [
            (minute, 2, 1, 0),
            (minute + timedelta(minutes=1), 0, 0, 1),
        ]
        assert counts_of(await log.activity(minute, kind=BETA)) == [(minute, 0, 0, 1)]

    @pytest.mark.parametrize(
        "status",
        [
            ExecutionStatus.SNOOZED,
            ExecutionStatus.LEASE_LOST,
            ExecutionStatus.RELEASED,
            ExecutionStatus.CANCELLED,
            ExecutionStatus.ABANDONED,
        ],
    )
    async def test_other_endings_are_not_charted(
        self, recorder: ActivityRecorder, log: FlakyLog, clock: FakeClock, status: ExecutionStatus
    ) -> None:
        recorder.add(ended(status))

        await recorder.run_once()

        assert counts_of(await log.activity(minute_of(clock.now()), kind=ALPHA)) == []

    async def test_each_count_is_added_once(
        self, recorder: ActivityRecorder, log: FlakyLog, clock: FakeClock
    ) -> None:
        recorder.add(ended(ExecutionStatus.SUCCEEDED))
        await recorder.run_once()
        await recorder.run_once()
        recorder.add(ended(ExecutionStatus.SUCCEEDED))
        await recorder.run_once()

        (row,) = await log.activity(minute_of(clock.now()), kind=ALPHA)
        assert row.succeeded == 2


class TestSamplingTheDepth:
    async def test_a_worker_offers_each_minute_s_sample_once(
        self, recorder: ActivityRecorder, log: FlakyLog, clock: FakeClock
    ) -> None:
        minute = minute_of(clock.now())
        await recorder.run_once()
        await clock.advance(5)
        await recorder.run_once()
        await clock.advance(60)
        await recorder.run_once()

        assert log.samples == [minute, minute + timedelta(minutes=1)]
        assert [row.queued for row in await log.activity(minute)] == [0, 0]

    async def test_a_sample_that_failed_is_offered_again_at_the_next_cycle(
        self, recorder: ActivityRecorder, log: FlakyLog, clock: FakeClock
    ) -> None:
        log.sample_errors.append(StoreUnavailableError("down"))
        with pytest.raises(StoreUnavailableError):
            await recorder.run_once()
        log.sample_errors.append(RuntimeError("permission denied"))
        await recorder.run_once()

        await recorder.run_once()

        minute = minute_of(clock.now())
        assert log.samples == [minute, minute, minute]
        assert [row.minute for row in await log.activity(minute)] == [minute]


class TestAnUnreachableStore:
    async def test_the_counts_wait_for_the_next_cycle_and_the_outage_is_the_worker_s(
        self, recorder: ActivityRecorder, log: FlakyLog, clock: FakeClock
    ) -> None:
        minute = minute_of(clock.now())
        recorder.add(ended(ExecutionStatus.SUCCEEDED))
        log.add_errors.append(StoreUnavailableError("down"))

        with pytest.raises(StoreUnavailableError):
            await recorder.run_once()
        recorder.add(ended(ExecutionStatus.FAILED))
        await recorder.run_once()

        assert counts_of(await log.activity(minute, kind=ALPHA)) == [(minute, 1, 1, 0)]

    async def test_counts_added_while_the_failed_write_was_under_way_are_kept_beside_them(
        self, clock: FakeClock
    ) -> None:
        class LaneEndsItemsMeanwhile(InMemoryActivityLog):
            """The first write fails after a lane ended two more items while it was out."""

            failed = False

            async def add_counts(self, counts: Sequence[MinuteCounts]) -> None:
                if not self.failed:
                    self.failed = True
                    recorder.add(ended(ExecutionStatus.SUCCEEDED))
                    recorder.add(ended(ExecutionStatus.FAILED))
                    raise StoreUnavailableError("down")
                await super().add_counts(counts)

        log = LaneEndsItemsMeanwhile(InMemoryState(), clock)
        recorder = ActivityRecorder(log, clock)
        recorder.add(ended(ExecutionStatus.SUCCEEDED))
        recorder.add(ended(ExecutionStatus.RETRIED))

        with pytest.raises(StoreUnavailableError):
            await recorder.run_once()
        await recorder.run_once()

        minute = minute_of(clock.now())
        assert counts_of(await log.activity(minute, kind=ALPHA)) == [(minute, 2, 1, 1)]

    async def test_counts_already_added_are_not_added_again_when_the_sample_fails(
        self, recorder: ActivityRecorder, log: FlakyLog, clock: FakeClock
    ) -> None:
        recorder.add(ended(ExecutionStatus.SUCCEEDED))
        log.sample_errors.append(StoreUnavailableError("down"))

        with pytest.raises(StoreUnavailableError):
            await recorder.run_once()
        await recorder.run_once()

        (row,) = await log.activity(minute_of(clock.now()), kind=ALPHA)
        assert row.succeeded == 1

    async def test_counts_older_than_what_the_log_keeps_are_dropped_the_rest_kept(
        self, recorder: ActivityRecorder, log: FlakyLog, clock: FakeClock
    ) -> None:
        first = minute_of(clock.now())
        recorder.add(ended(ExecutionStatus.SUCCEEDED))
        await clock.advance(60)
        recorder.add(ended(ExecutionStatus.FAILED))
        await clock.advance(ACTIVITY_KEPT.total_seconds())
        log.add_errors.append(StoreUnavailableError("down"))

        with pytest.raises(StoreUnavailableError):
            await recorder.run_once()
        await recorder.run_once()

        second = first + timedelta(minutes=1)
        assert counts_of(await log.activity(first, kind=ALPHA)) == [(second, 0, 1, 0)]


class TestALogThatFails:
    async def test_another_error_is_logged_once_and_the_worker_goes_on(
        self,
        recorder: ActivityRecorder,
        log: FlakyLog,
        clock: FakeClock,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        caplog.set_level(logging.WARNING, logger=WORKER_LOG)
        recorder.add(ended(ExecutionStatus.SUCCEEDED))
        log.add_errors.extend([RuntimeError("permission denied for table work_activity")] * 2)

        await recorder.run_once()
        recorder.add(ended(ExecutionStatus.SUCCEEDED))
        await recorder.run_once()

        assert [r.getMessage() for r in caplog.records if r.name == WORKER_LOG] == [
            "the activity by minute was not recorded (the charts miss it): "
            "RuntimeError: permission denied for table work_activity"
        ]
        assert await log.activity(minute_of(clock.now())) == []

    async def test_a_failure_after_the_log_worked_again_is_logged_again(
        self,
        recorder: ActivityRecorder,
        log: FlakyLog,
        clock: FakeClock,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        caplog.set_level(logging.WARNING, logger=WORKER_LOG)
        log.add_errors.append(RuntimeError("first"))
        await recorder.run_once()
        await recorder.run_once()
        log.add_errors.append(RuntimeError("second"))
        await recorder.run_once()
        await clock.advance(60)
        await recorder.run_once()
        log.sample_errors.extend([RuntimeError("third"), RuntimeError("fourth")])
        await clock.advance(60)
        await recorder.run_once()
        await recorder.run_once()

        assert [r.getMessage().rpartition(": ")[2] for r in caplog.records] == [
            "first",
            "second",
            "third",
        ]

    async def test_a_sample_that_fails_otherwise_is_logged_and_the_counts_stay_added(
        self,
        recorder: ActivityRecorder,
        log: FlakyLog,
        clock: FakeClock,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        caplog.set_level(logging.WARNING, logger=WORKER_LOG)
        recorder.add(ended(ExecutionStatus.SUCCEEDED))
        log.sample_errors.append(RuntimeError("no grant"))

        await recorder.run_once()

        assert counts_of(await log.activity(minute_of(clock.now()), kind=ALPHA))[0][1] == 1
        assert [r.getMessage().rpartition(": ")[2] for r in caplog.records] == ["no grant"]


class TestAWorkerWithTheRecorder:
    async def test_what_its_lanes_ran_is_in_the_log_after_its_next_cycle(
        self, bench: Bench, store: RoundTripStore
    ) -> None:
        log = InMemoryActivityLog(bench.state, bench.clock)
        the_worker = Worker(
            executor=[bench.executor(store=store) for _ in range(2)],
            scheduler=WorkScheduler(bench.queue, []),
            recovery=LeaseRecovery(store),  # type: ignore[arg-type]
            clock=bench.clock,
            poll_interval=timedelta(seconds=5),
            activity=ActivityRecorder(log, bench.clock),
        )
        minute = minute_of(bench.clock.now())
        takes(bench, 1, "a", "b", "c")
        for label in ("a", "b", "c"):
            await bench.enqueue(label)
        running: list[tuple[Worker, asyncio.Task[None]]] = []
        task = await start(bench, the_worker, running)

        await bench.clock.advance(3)
        assert await log.activity(minute, kind="alpha") == [
            MinuteActivity(minute, "alpha", queued=3, delayed=0, running=0)
        ]
        await bench.clock.advance(3)

        (row,) = await log.activity(minute, kind="alpha")
        assert (row.succeeded, row.queued) == (3, 3)
        await stopped(bench, the_worker, task)

    async def test_a_worker_that_stops_while_the_store_is_unreachable_says_what_it_lost(
        self, bench: Bench, store: RoundTripStore, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.WARNING, logger=WORKER_LOG)
        log = FlakyLog(bench.state, bench.clock)
        executor = bench.executor(store=store)
        the_worker = Worker(
            executor=executor,
            scheduler=WorkScheduler(bench.queue, []),
            recovery=LeaseRecovery(store),  # type: ignore[arg-type]
            clock=bench.clock,
            activity=ActivityRecorder(log, bench.clock),
        )
        running: list[tuple[Worker, asyncio.Task[None]]] = []
        task = await start(bench, the_worker, running)
        log.add_errors.append(StoreUnavailableError("down"))

        await stopped(bench, the_worker, task)

        assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
            f"worker {executor.worker_id} stopped without recording its last activity: the"
            " store is unreachable"
        ]
