"""Contract: the read-only WorkMonitor port of the admin view, metrics and status.

A store that also offers a :class:`~workqueue.domain.WorkMonitor` runs this mixin with a
``monitor`` fixture on the same data as its other fixtures::

    class MyMonitorFixtures(MyFixtures, MonitoringFixtures):
        @pytest.fixture
        def monitor(self, ...) -> WorkMonitor: ...

    class TestMyMonitor(MonitoringContract, MyMonitorFixtures):
        pass

It is not part of :class:`WorkQueueContractSuite`: the port is optional for an
adapter, and a suite that demanded the fixture would break every adapter that
does not offer one.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.fixtures import ContractFixtures
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.adapters.testing.contract.steps import LEASE, claim
from workqueue.domain import (
    LARGEST_ITEM_ID,
    LIVE_STATUSES,
    UNSUCCESSFUL_STATUSES,
    CapSource,
    KindCap,
    KindPause,
    RunOutcome,
    ScheduleTurn,
    WorkMonitor,
    WorkQueue,
    WorkSchedule,
    WorkStatus,
    WorkStore,
)

__all__ = ["MonitoringContract", "MonitoringFixtures"]

ALPHA = ContractKind.ALPHA.value
BETA = ContractKind.BETA.value
GAMMA = ContractKind.GAMMA.value


class MonitoringFixtures(ContractFixtures):
    """Adds the ``monitor`` fixture to an adapter's fixtures; override it."""

    @pytest.fixture
    def monitor(self) -> WorkMonitor:
        """The WorkMonitor under test, on the same data as ``queue`` and ``store``."""
        raise NotImplementedError(
            "the monitoring contract needs the 'monitor' fixture: override it"
        )


async def _finished(
    backdoor: Backdoor, clock: FakeClock, kind: str, status: WorkStatus, **fields: object
) -> int:
    now = clock.now()
    defaults: dict[str, object] = {
        "attempt": 1,
        "started_at": now,
        "heartbeat_at": now,
        "finished_at": now,
        "worker_id": "w",
        "error": None if status is WorkStatus.SUCCEEDED else f"{status.value}: why",
    }
    defaults.update(fields)
    return await backdoor.insert_item(kind=kind, status=status, **defaults)  # type: ignore[arg-type]


class MonitoringContract:
    """What each read of the monitor returns, and that reading changes nothing."""

    # -- pauses ------------------------------------------------------------------

    async def test_paused_kinds_are_listed_by_name_with_since_when_and_why(
        self, monitor: WorkMonitor, store: WorkStore, clock: FakeClock
    ) -> None:
        assert await monitor.paused_kinds() == []
        beta = await store.pause_kind(BETA, reason="partner down")
        await clock.advance(7)
        alpha = await store.pause_kind(ALPHA)

        assert await monitor.paused_kinds() == [alpha, beta]
        assert alpha == KindPause(ALPHA, clock.now(), None)

        await store.resume_kind(BETA)
        assert await monitor.paused_kinds() == [alpha]

    # -- caps --------------------------------------------------------------------

    async def test_capped_kinds_are_listed_by_name_with_their_cap_and_running_items(
        self, monitor: WorkMonitor, store: WorkStore, queue: WorkQueue, clock: FakeClock
    ) -> None:
        assert await monitor.capped_kinds() == []
        await queue.enqueue(BetaJob())
        await queue.enqueue(BetaJob())
        beta = await store.cap_kind(BETA, 3)
        await clock.advance(7)
        alpha = await store.cap_kind(ALPHA, 1, source=CapSource.POLICY)
        assert beta is not None
        assert alpha is not None
        await claim(store, kinds=(BETA,))

        assert await monitor.capped_kinds() == [
            KindCap(ALPHA, 1, CapSource.POLICY, clock.now(), 0),
            KindCap(BETA, 3, CapSource.OPERATOR, beta.set_at, 1),
        ]

        await store.cap_kind(BETA, None)
        assert [cap.kind for cap in await monitor.capped_kinds()] == [ALPHA]

    # -- schedules ---------------------------------------------------------------

    async def test_a_kind_with_no_item_and_no_turn_has_an_empty_entry(
        self, monitor: WorkMonitor
    ) -> None:
        assert await monitor.schedule_turns([ALPHA, BETA]) == {
            ALPHA: ScheduleTurn(newest=None, fired_at=None),
            BETA: ScheduleTurn(newest=None, fired_at=None),
        }
        assert await monitor.schedule_turns([]) == {}

    async def test_a_calendar_s_turn_shows_its_fire_time_and_its_item(
        self, monitor: WorkMonitor, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        schedule = WorkSchedule(payload=AlphaJob(number=1), cron="0 3 * * *")
        created = await queue.enqueue_if_due(schedule)
        assert created is not None

        turns = await monitor.schedule_turns([ContractKind.ALPHA])

        assert turns == {
            ALPHA: ScheduleTurn(
                newest=await backdoor.read_item(created.id),
                fired_at=datetime(2025, 12, 31, 3, 0, tzinfo=UTC),
            )
        }

    async def test_the_newest_item_is_the_latest_queued_running_or_finished_one(
        self,
        monitor: WorkMonitor,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
    ) -> None:
        late = await _finished(backdoor, clock, ALPHA, WorkStatus.SUCCEEDED)
        await _finished(
            backdoor, clock, ALPHA, WorkStatus.FAILED, finished_at=clock.now() - timedelta(hours=1)
        )
        assert (await monitor.schedule_turns([ALPHA]))[ALPHA].newest == (
            await backdoor.read_item(late)
        )

        await queue.enqueue(AlphaJob(number=1))
        running = await claim(store)
        assert (await monitor.schedule_turns([ALPHA]))[ALPHA].newest == (
            await backdoor.read_item(running.id)
        )

        queued = await queue.enqueue(AlphaJob(number=2))
        await queue.enqueue(BetaJob())
        turns = await monitor.schedule_turns([ALPHA])
        assert turns[ALPHA].newest == await backdoor.read_item(queued.id)
        assert turns[ALPHA].fired_at is None

    async def test_of_items_that_finished_together_the_newest_is_the_higher_id(
        self, monitor: WorkMonitor, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await _finished(backdoor, clock, ALPHA, WorkStatus.SUCCEEDED)
        second = await _finished(backdoor, clock, ALPHA, WorkStatus.FAILED)
        await _finished(
            backdoor, clock, ALPHA, WorkStatus.SUCCEEDED, finished_at=clock.now() - timedelta(1)
        )

        newest = (await monitor.schedule_turns([ALPHA]))[ALPHA].newest

        assert newest == await backdoor.read_item(second)

    # -- counts ------------------------------------------------------------------

    async def test_an_empty_table_counts_and_lists_nothing(
        self, monitor: WorkMonitor, clock: FakeClock
    ) -> None:
        assert await monitor.count_live() == {}
        assert await monitor.count_finished() == {}
        assert await monitor.oldest_queued() == {}
        assert await monitor.running() == []
        assert await monitor.queued(limit=10) == []
        assert await monitor.recent_unsuccessful(limit=10) == []
        assert await monitor.count_unsuccessful_since(clock.now()) == {}
        assert await monitor.stalls_since(clock.now()) == {}
        assert await monitor.item(1) is None
        # An id beyond the largest an item can have is no item either, not an error.
        assert await monitor.item(LARGEST_ITEM_ID + 1) is None

    async def test_live_counts_are_the_queued_and_running_items_per_kind(
        self,
        monitor: WorkMonitor,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
    ) -> None:
        for number in range(3):
            await queue.enqueue(AlphaJob(number=number))
        await queue.enqueue(BetaJob())
        await claim(store, kinds=(ALPHA,))
        await _finished(backdoor, clock, ALPHA, WorkStatus.SUCCEEDED)
        await _finished(backdoor, clock, GAMMA, WorkStatus.FAILED)

        counts = await monitor.count_live()

        assert counts == {
            (ALPHA, WorkStatus.QUEUED): 2,
            (ALPHA, WorkStatus.RUNNING): 1,
            (BETA, WorkStatus.QUEUED): 1,
        }
        assert all(type(status) is WorkStatus for _, status in counts)

    async def test_finished_counts_are_every_final_status_per_kind(
        self, monitor: WorkMonitor, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        await backdoor.insert_item(kind=BETA, status=WorkStatus.RUNNING, attempt=1)
        for _ in range(2):
            await _finished(backdoor, clock, ALPHA, WorkStatus.SUCCEEDED)
        await _finished(backdoor, clock, ALPHA, WorkStatus.FAILED)
        await _finished(backdoor, clock, GAMMA, WorkStatus.FAILED)
        await _finished(backdoor, clock, GAMMA, WorkStatus.CANCELLED)

        counts = await monitor.count_finished()

        assert counts == {
            (ALPHA, WorkStatus.SUCCEEDED): 2,
            (ALPHA, WorkStatus.FAILED): 1,
            (GAMMA, WorkStatus.FAILED): 1,
            (GAMMA, WorkStatus.CANCELLED): 1,
        }
        assert all(type(status) is WorkStatus for _, status in counts)

    def test_the_live_and_unsuccessful_statuses_are_the_ones_the_queries_name(self) -> None:
        # The SQL of a store may name the statuses an item is NOT in (so a new final
        # status is counted without a change); that holds while these stay true.
        assert set(WorkStatus) - LIVE_STATUSES == {s for s in WorkStatus if s.is_finished}
        assert {WorkStatus.QUEUED, WorkStatus.RUNNING} == LIVE_STATUSES
        assert set(WorkStatus) - LIVE_STATUSES - {WorkStatus.SUCCEEDED} == UNSUCCESSFUL_STATUSES

    # -- the oldest queued item --------------------------------------------------

    async def test_the_oldest_queued_item_of_each_kind_is_the_one_a_claim_takes_next(
        self, monitor: WorkMonitor, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        start = clock.now()
        # Ids decide, not enqueued_at: a claim takes the lowest id first.
        await backdoor.insert_item(
            kind=ALPHA, status=WorkStatus.RUNNING, attempt=1, enqueued_at=start - timedelta(hours=5)
        )
        await backdoor.insert_item(kind=ALPHA, enqueued_at=start - timedelta(minutes=1))
        await backdoor.insert_item(kind=ALPHA, enqueued_at=start - timedelta(minutes=9))
        await backdoor.insert_item(kind=BETA, enqueued_at=start - timedelta(seconds=5))
        await _finished(
            backdoor, clock, GAMMA, WorkStatus.FAILED, enqueued_at=start - timedelta(days=3)
        )

        assert await monitor.oldest_queued() == {
            ALPHA: start - timedelta(minutes=1),
            BETA: start - timedelta(seconds=5),
        }

    # -- running -----------------------------------------------------------------

    async def test_every_running_item_is_listed_however_many_are_queued(
        self, monitor: WorkMonitor, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(BetaJob(label="first"))
        first = await claim(store)
        for number in range(150):
            await queue.enqueue(AlphaJob(number=number))
        second = await claim(store, worker_id="w-2")
        await store.heartbeat(second.lease, progress={"done": 7}, lease_duration=LEASE)

        running = await monitor.running()

        assert [item.id for item in running] == [first.id, second.id]
        assert running == [await backdoor.read_item(first.id), await backdoor.read_item(second.id)]
        assert running[1].progress == {"done": 7}
        assert running[1].worker_id == "w-2"

    # -- queued ------------------------------------------------------------------

    async def test_queued_items_come_oldest_first_in_pages_after_an_id(
        self, monitor: WorkMonitor, queue: WorkQueue, store: WorkStore
    ) -> None:
        ids = [(await queue.enqueue(AlphaJob(number=n))).id for n in range(7)]
        claimed = await claim(store)  # the oldest is running now, not queued
        assert claimed.id == ids[0]
        queued = ids[1:]

        first = await monitor.queued(limit=4)
        second = await monitor.queued(after_id=first[-1].id, limit=4)
        beyond = await monitor.queued(after_id=second[-1].id, limit=4)

        assert [item.id for item in first] == queued[:4]
        assert [item.id for item in second] == queued[4:]
        assert beyond == []
        assert all(item.status is WorkStatus.QUEUED for item in first + second)

    async def test_queued_items_can_be_of_one_kind(
        self, monitor: WorkMonitor, queue: WorkQueue
    ) -> None:
        alpha = [(await queue.enqueue(AlphaJob(number=n))).id for n in range(3)]
        beta = [(await queue.enqueue(BetaJob(label=str(n)))).id for n in range(3)]

        assert [item.id for item in await monitor.queued(kind=BETA, limit=10)] == beta
        assert [item.id for item in await monitor.queued(kind=ContractKind.ALPHA, limit=2)] == (
            alpha[:2]
        )
        assert [
            item.id for item in await monitor.queued(kind=ALPHA, after_id=alpha[0], limit=10)
        ] == alpha[1:]
        assert await monitor.queued(kind=GAMMA, limit=10) == []

    async def test_a_page_of_no_items_is_empty(
        self, monitor: WorkMonitor, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        await _finished(backdoor, clock, ALPHA, WorkStatus.FAILED)

        assert await monitor.queued(limit=0) == []
        assert await monitor.queued(kind=ALPHA, limit=-1) == []
        assert await monitor.recent_unsuccessful(limit=0) == []

    # -- unsuccessful items ------------------------------------------------------

    async def test_recent_unsuccessful_items_are_the_latest_finished_first(
        self, monitor: WorkMonitor, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        now = clock.now()
        older = await _finished(
            backdoor, clock, ALPHA, WorkStatus.FAILED, finished_at=now - timedelta(minutes=5)
        )
        await _finished(backdoor, clock, ALPHA, WorkStatus.SUCCEEDED)
        latest = await _finished(
            backdoor, clock, BETA, WorkStatus.FAILED, finished_at=now - timedelta(minutes=1)
        )
        tied_low = await _finished(
            backdoor, clock, GAMMA, WorkStatus.FAILED, finished_at=now - timedelta(minutes=3)
        )
        tied_high = await _finished(
            backdoor, clock, ALPHA, WorkStatus.FAILED, finished_at=now - timedelta(minutes=3)
        )
        await backdoor.insert_item(kind=ALPHA, error="a queued item's stale error")

        items = await monitor.recent_unsuccessful(limit=10)
        first_two = await monitor.recent_unsuccessful(limit=2)

        assert [item.id for item in items] == [latest, tied_high, tied_low, older]
        assert items[0] == await backdoor.read_item(latest)
        assert items[0].error == "failed: why"
        assert [item.id for item in first_two] == [latest, tied_high]

    async def test_cancelled_items_are_listed_and_counted_with_the_failures(
        self,
        monitor: WorkMonitor,
        queue: WorkQueue,
        store: WorkStore,
        clock: FakeClock,
    ) -> None:
        since = clock.now()
        failed = (await queue.enqueue(AlphaJob(number=1))).id
        cancelled = (await queue.enqueue(AlphaJob(number=2))).id
        running = await store.claim([ALPHA], worker_id="w", lease_duration=LEASE)
        assert running is not None
        await store.finish(running.lease, RunOutcome.failed("boom", None))
        await clock.advance(1)
        await store.cancel(cancelled, reason="not wanted")

        items = await monitor.recent_unsuccessful(limit=10)
        counts = await monitor.count_unsuccessful_since(since)

        assert [(item.id, item.status, item.error) for item in items] == [
            (cancelled, WorkStatus.CANCELLED, "not wanted"),
            (failed, WorkStatus.FAILED, "boom"),
        ]
        assert counts == {(ALPHA, WorkStatus.CANCELLED): 1, (ALPHA, WorkStatus.FAILED): 1}

    async def test_unsuccessful_items_since_a_moment_are_counted_per_kind_and_status(
        self, monitor: WorkMonitor, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        now = clock.now()
        since = now - timedelta(hours=1)
        await _finished(backdoor, clock, ALPHA, WorkStatus.FAILED, finished_at=since)
        await _finished(backdoor, clock, ALPHA, WorkStatus.FAILED, finished_at=now)
        await _finished(backdoor, clock, BETA, WorkStatus.FAILED, finished_at=now)
        await _finished(
            backdoor, clock, BETA, WorkStatus.FAILED, finished_at=since - timedelta(microseconds=1)
        )
        await _finished(backdoor, clock, GAMMA, WorkStatus.SUCCEEDED, finished_at=now)

        counts = await monitor.count_unsuccessful_since(since)

        assert counts == {(ALPHA, WorkStatus.FAILED): 2, (BETA, WorkStatus.FAILED): 1}
        assert all(type(status) is WorkStatus for _, status in counts)

    # -- stalls ------------------------------------------------------------------

    async def test_stalls_since_a_moment_are_summed_per_kind_over_items_seen_since(
        self, monitor: WorkMonitor, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        now = clock.now()
        since = now - timedelta(hours=1)
        before = since - timedelta(microseconds=1)
        # Finished items are seen when they finished; the others at their heartbeat.
        await _finished(
            backdoor,
            clock,
            ALPHA,
            WorkStatus.FAILED,
            stalls=3,
            finished_at=since,
            heartbeat_at=before,
        )
        await backdoor.insert_item(kind=ALPHA, stalls=1, attempt=1, heartbeat_at=now)
        await backdoor.insert_item(
            kind=ALPHA,
            status=WorkStatus.RUNNING,
            attempt=3,
            stalls=2,
            heartbeat_at=since,
            lease_expires_at=now,
        )
        await backdoor.insert_item(kind=BETA, stalls=4, attempt=4, heartbeat_at=before)
        await _finished(
            backdoor,
            clock,
            BETA,
            WorkStatus.SUCCEEDED,
            stalls=5,
            finished_at=before,
            heartbeat_at=now,
        )
        await _finished(backdoor, clock, GAMMA, WorkStatus.SUCCEEDED, stalls=0)
        await backdoor.insert_item(kind=GAMMA, stalls=1)  # never ran: seen nowhere

        assert await monitor.stalls_since(since) == {ALPHA: 6}
        assert await monitor.stalls_since(before) == {ALPHA: 6, BETA: 9}

    # -- one item ----------------------------------------------------------------

    async def test_one_item_is_the_stored_row(
        self, monitor: WorkMonitor, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob(number=5), dedup_key="five")
        claimed = await claim(store)
        await store.finish(claimed.lease, RunOutcome.failed("ValueError: <script>", {"at": [1, 2]}))

        item = await monitor.item(enqueued.id)

        assert item is not None
        assert item == await backdoor.read_item(enqueued.id)
        assert item.payload == {"number": 5}
        assert item.error == "ValueError: <script>"
        assert await monitor.item(enqueued.id + 1) is None

    # -- read-only ---------------------------------------------------------------

    async def test_reading_changes_no_row_and_returned_items_are_copies(
        self,
        monitor: WorkMonitor,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(AlphaJob(number=2))
        running = await claim(store)
        await store.heartbeat(running.lease, progress={"n": 1}, lease_duration=LEASE)
        await _finished(backdoor, clock, BETA, WorkStatus.FAILED, stalls=1)
        before = await backdoor.all_items()

        await monitor.count_live()
        await monitor.count_finished()
        await monitor.oldest_queued()
        (listed,) = await monitor.running()
        (queued,) = await monitor.queued(limit=10)
        (failed,) = await monitor.recent_unsuccessful(limit=10)
        await monitor.count_unsuccessful_since(clock.now())
        await monitor.stalls_since(clock.now())
        one = await monitor.item(running.id)
        assert one is not None
        newest = (await monitor.schedule_turns([ALPHA]))[ALPHA].newest
        assert newest is not None
        for item in (listed, queued, failed, one, newest):
            item.payload["changed"] = True
        assert isinstance(listed.progress, dict)
        listed.progress["n"] = 2

        assert await backdoor.all_items() == before
