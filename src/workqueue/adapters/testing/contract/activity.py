"""Contract: the ActivityLog, the fleet's activity by minute that the charts draw.

A store that keeps the activity (docs/adr/0040) runs this mixin with an
``activity_log`` fixture on the same data as its other fixtures::

    class MyActivityFixtures(MyFixtures, ActivityFixtures):
        @pytest.fixture
        def activity_log(self, ...) -> ActivityLog: ...

    class TestMyActivity(ActivityContract, MyActivityFixtures):
        pass

Like the monitoring contract, it is not part of :class:`WorkQueueContractSuite`:
the port is optional for an adapter.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.fixtures import ContractFixtures
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind, GammaJob
from workqueue.adapters.testing.contract.race import at_once
from workqueue.adapters.testing.contract.steps import claim
from workqueue.domain import (
    ACTIVITY_KEPT,
    ActivityLog,
    MinuteActivity,
    MinuteCounts,
    WorkQueue,
    WorkStore,
    minute_of,
)

__all__ = ["ActivityContract", "ActivityFixtures"]

ALPHA = ContractKind.ALPHA.value
BETA = ContractKind.BETA.value
GAMMA = ContractKind.GAMMA.value
MINUTE = timedelta(minutes=1)


class ActivityFixtures(ContractFixtures):
    """Adds the ``activity_log`` fixture to an adapter's fixtures; override it."""

    @pytest.fixture
    def activity_log(self) -> ActivityLog:
        """The ActivityLog under test, on the same data as ``queue`` and ``store``."""
        raise NotImplementedError(
            "the activity contract needs the 'activity_log' fixture: override it"
        )


class ActivityContract:
    """docs/adr/0040: counts added per minute and kind, one depth sample a minute."""

    async def test_counts_from_several_workers_add_up_per_minute_and_kind(
        self, activity_log: ActivityLog, clock: FakeClock
    ) -> None:
        minute = minute_of(clock.now())
        later = minute + MINUTE
        await activity_log.add_counts(
            [
                MinuteCounts(minute, ALPHA, succeeded=3, failed=1),
                MinuteCounts(minute, BETA, succeeded=2, retried=4),
            ]
        )
        await activity_log.add_counts(
            [
                MinuteCounts(minute, ALPHA, succeeded=10, retried=1),
                MinuteCounts(later, ALPHA, failed=7),
            ]
        )

        assert await activity_log.activity(minute, kind=ALPHA) == [
            MinuteActivity(minute, ALPHA, succeeded=13, failed=1, retried=1),
            MinuteActivity(later, ALPHA, failed=7),
        ]
        assert await activity_log.activity(minute, kind=BETA) == [
            MinuteActivity(minute, BETA, succeeded=2, retried=4),
        ]
        assert await activity_log.activity(minute) == [
            MinuteActivity(minute, None, succeeded=15, failed=1, retried=5),
            MinuteActivity(later, None, failed=7),
        ]

    async def test_a_count_is_kept_under_the_minute_its_time_falls_in(
        self, activity_log: ActivityLog, clock: FakeClock
    ) -> None:
        minute = minute_of(clock.now())
        await activity_log.add_counts(
            [
                MinuteCounts(minute + timedelta(seconds=59, microseconds=999_999), ALPHA, 1),
                MinuteCounts(minute, ALPHA, 1),
            ]
        )

        assert await activity_log.activity(minute) == [MinuteActivity(minute, None, 2)]

    async def test_only_the_minutes_from_since_on_are_read_oldest_first(
        self, activity_log: ActivityLog, clock: FakeClock
    ) -> None:
        minute = minute_of(clock.now())
        await activity_log.add_counts(
            [MinuteCounts(minute + MINUTE * n, ALPHA, succeeded=n + 1) for n in (3, 0, 2, 1)]
        )

        assert await activity_log.activity(minute + MINUTE) == [
            MinuteActivity(minute + MINUTE * n, None, succeeded=n + 1) for n in (1, 2, 3)
        ]
        assert await activity_log.activity(minute + MINUTE * 4) == []

    async def test_adding_no_counts_keeps_nothing(
        self, activity_log: ActivityLog, clock: FakeClock
    ) -> None:
        await activity_log.add_counts([])

        assert await activity_log.activity(minute_of(clock.now()) - MINUTE) == []

    async def test_a_sample_counts_each_kind_s_queued_delayed_and_running_items(
        self, activity_log: ActivityLog, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        for number in range(3):
            await queue.enqueue(AlphaJob(number=number))
        await queue.enqueue(AlphaJob(number=9), delay=timedelta(days=1))
        await queue.enqueue(BetaJob(label="running"))
        await queue.enqueue(BetaJob(label="running too"))
        await queue.enqueue(BetaJob(label="later"), delay=timedelta(hours=2))
        await queue.enqueue(BetaJob(label="later too"), delay=timedelta(hours=3))
        await queue.enqueue(GammaJob(), delay=timedelta(minutes=5))
        running = [await claim(store, kinds=(BETA,)) for _ in range(2)]
        assert [item.payload for item in running] == [
            {"label": "running"},
            {"label": "running too"},
        ]
        minute = minute_of(clock.now())

        assert await activity_log.sample_depth(clock.now()) is True

        assert await activity_log.activity(minute) == [
            MinuteActivity(minute, None, queued=3, delayed=4, running=2)
        ]
        assert await activity_log.activity(minute, kind=ALPHA) == [
            MinuteActivity(minute, ALPHA, queued=3, delayed=1, running=0)
        ]
        assert await activity_log.activity(minute, kind=BETA) == [
            MinuteActivity(minute, BETA, queued=0, delayed=2, running=2)
        ]
        assert await activity_log.activity(minute, kind=GAMMA) == [
            MinuteActivity(minute, GAMMA, queued=0, delayed=1, running=0)
        ]

    async def test_a_kind_with_no_items_in_a_sampled_minute_reads_zeros_and_none_unsampled(
        self, activity_log: ActivityLog, queue: WorkQueue, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        minute = minute_of(clock.now())
        await activity_log.sample_depth(minute)
        await activity_log.add_counts([MinuteCounts(minute + MINUTE, BETA, succeeded=1)])

        assert await activity_log.activity(minute, kind=BETA) == [
            MinuteActivity(minute, BETA, queued=0, delayed=0, running=0),
            MinuteActivity(minute + MINUTE, BETA, succeeded=1),
        ]

    async def test_an_empty_queue_is_sampled_as_zeros(
        self, activity_log: ActivityLog, clock: FakeClock
    ) -> None:
        minute = minute_of(clock.now())

        assert await activity_log.sample_depth(minute) is True

        assert await activity_log.activity(minute) == [
            MinuteActivity(minute, None, queued=0, delayed=0, running=0)
        ]

    async def test_a_minute_is_sampled_once_and_the_first_sample_stays(
        self, activity_log: ActivityLog, queue: WorkQueue, clock: FakeClock
    ) -> None:
        minute = minute_of(clock.now())
        await activity_log.sample_depth(minute + timedelta(seconds=5))
        await queue.enqueue(AlphaJob())
        await clock.advance(30)

        assert await activity_log.sample_depth(clock.now()) is False

        assert await activity_log.activity(minute) == [
            MinuteActivity(minute, None, queued=0, delayed=0, running=0)
        ]
        assert await activity_log.sample_depth(minute + MINUTE) is True
        assert (await activity_log.activity(minute + MINUTE))[0].queued == 1

    async def test_of_many_workers_sampling_one_minute_at_once_one_takes_the_sample(
        self, activity_log: ActivityLog, queue: WorkQueue, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        minute = minute_of(clock.now())

        took = await at_once([lambda: activity_log.sample_depth(minute) for _ in range(4)])

        assert sorted(took) == [False, False, False, True]
        assert await activity_log.activity(minute) == [
            MinuteActivity(minute, None, queued=1, delayed=0, running=0)
        ]

    async def test_a_sample_forgets_the_minutes_kept_long_enough_before_it(
        self, activity_log: ActivityLog, clock: FakeClock
    ) -> None:
        minute = minute_of(clock.now())
        oldest_kept = minute - ACTIVITY_KEPT
        too_old = oldest_kept - MINUTE
        await activity_log.sample_depth(too_old)
        await activity_log.sample_depth(oldest_kept)
        await activity_log.add_counts(
            [
                MinuteCounts(too_old, ALPHA, succeeded=1),
                MinuteCounts(oldest_kept, ALPHA, succeeded=2),
            ]
        )

        await activity_log.sample_depth(minute)

        assert await activity_log.activity(too_old) == [
            MinuteActivity(oldest_kept, None, succeeded=2, queued=0, delayed=0, running=0),
            MinuteActivity(minute, None, queued=0, delayed=0, running=0),
        ]

    async def test_a_time_without_a_zone_is_refused(
        self, activity_log: ActivityLog, clock: FakeClock
    ) -> None:
        naive = clock.now().replace(tzinfo=None)

        with pytest.raises(ValueError, match="a minute of activity needs a time with a zone"):
            await activity_log.sample_depth(naive)
        with pytest.raises(ValueError, match="a minute of activity needs a time with a zone"):
            await activity_log.add_counts([MinuteCounts(naive, ALPHA, succeeded=1)])
        assert await activity_log.activity(minute_of(clock.now()) - ACTIVITY_KEPT) == []
