"""A handler that blocks the event loop costs only its own item: while it blocks, the
watchdog renews every other lease the worker holds and names the blocker in the log."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from service_bench import Bench, StoreSpy

from workqueue.application import ExecutionOutcome, ExecutorSettings, WorkExecutor
from workqueue.application.beats import SoloHeartbeats
from workqueue.application.claim import Claimer
from workqueue.application.renewals import Renewals
from workqueue.application.watchdog import ADVICE, BlockedLoopGuard, pulse_period
from workqueue.domain import HeartbeatAnswer, Lease, StoreUnavailableError, WorkStatus, WorkStore

INTERVAL = timedelta(seconds=2)
LEASE = timedelta(seconds=6)
SETTINGS = ExecutorSettings(heartbeat_interval=INTERVAL, lease_duration=LEASE)
WATCHDOG_LOG = "workqueue.watchdog"


class Lanes:
    """Two lanes of one worker sharing their renewals, and the guard watching them."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.renewals = Renewals()
        self.spy = StoreSpy(bench.store)
        self.beats = StoreSpy(bench.store)
        """The store the lanes' own heartbeats go through."""
        self.opened = 0
        self.closed = 0
        self.executors = [self._executor() for _ in range(2)]
        self.guard = BlockedLoopGuard(
            self.executors,
            self.renewals,
            bench.clock,
            worker_id="lanes",
            heartbeat_interval=INTERVAL,
            lease_duration=LEASE,
            open_store=self._open,
        )
        self.runs: list[asyncio.Task[ExecutionOutcome | None]] = []

    def _executor(self) -> WorkExecutor:
        return WorkExecutor(
            self.bench.store,
            self.bench.registry,
            self.bench.clock,
            worker_id="lanes",
            settings=SETTINGS,
            heartbeats=SoloHeartbeats(
                self.beats, self.bench.clock, interval=INTERVAL, lease_duration=LEASE
            ),
            renewals=self.renewals,
        )

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[WorkStore]:
        self.opened += 1
        try:
            yield self.spy  # type: ignore[misc]
        finally:
            self.closed += 1

    async def running(self, *labels: str) -> list[int]:
        """Each lane runs one of ``labels``' items, whose handlers wait: their ids."""
        ids = []
        for label, executor in zip(labels, self.executors, strict=False):
            self.bench.script.block(label)
            ids.append(await self.bench.enqueue(label))
            self.runs.append(asyncio.create_task(executor.run_next()))
            await self.bench.clock.settle()
        return ids

    def handler(self, lane: int) -> asyncio.Task[object]:
        running = self.executors[lane].running
        assert running is not None, f"lane {lane} runs nothing"
        return running[0]  # type: ignore[return-value]

    def secured(self, lane: int) -> datetime:
        running = self.executors[lane].running
        assert running is not None, f"lane {lane} runs nothing"
        return running[1].secured_until

    def answer_late(self, item_id: int) -> asyncio.Event:
        """Hold the answer of ``item_id``'s heartbeats, written at once, until the event
        returned is set: a heartbeat out when the loop blocks."""
        answered = asyncio.Event()
        store = self.bench.store

        async def answered_late(lease: Lease, **kwargs: object) -> object:
            answer = await store.heartbeat(lease, **kwargs)  # type: ignore[arg-type]
            if lease.item_id == item_id:
                await answered.wait()
            return answer

        self.beats.overrides["heartbeat"] = answered_late
        return answered

    async def expiry(self, item_id: int) -> datetime | None:
        return (await self.bench.item(item_id)).lease_expires_at

    async def stop(self) -> None:
        for executor in self.executors:
            executor.stop()
        await asyncio.gather(*self.runs, return_exceptions=True)


@pytest.fixture
async def lanes(bench: Bench) -> AsyncIterator[Lanes]:
    world = Lanes(bench)
    yield world
    await world.stop()


def watchdog_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == WATCHDOG_LOG]


def at_line() -> str:
    return " at handlers.py:12 in crawl"


class TestWhenTheWatchdogActs:
    async def test_a_loop_silent_for_less_than_a_heartbeat_interval_renews_nothing(
        self, lanes: Lanes, caplog: pytest.LogCaptureFixture
    ) -> None:
        await lanes.running("a", "b")
        await lanes.guard.look(blocked_for=1.99, running=lanes.handler(0))
        assert lanes.spy.count("heartbeat_many") == 0
        assert lanes.opened == 0
        assert watchdog_lines(caplog) == []

    async def test_a_loop_blocked_for_a_heartbeat_interval_renews_the_other_items_leases(
        self, lanes: Lanes
    ) -> None:
        blocker, other = await lanes.running("a", "b")
        await lanes.bench.clock.advance(3)
        blocker_expiry = await lanes.expiry(blocker)
        blocker_secured = lanes.secured(0)
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        renewed_until = lanes.bench.clock.now() + LEASE
        assert await lanes.expiry(other) == renewed_until
        assert lanes.secured(1) == renewed_until
        assert await lanes.expiry(blocker) == blocker_expiry
        assert lanes.secured(0) == blocker_secured

    async def test_the_renewal_keeps_each_items_stored_progress(
        self, lanes: Lanes, bench: Bench
    ) -> None:
        _, other = await lanes.running("a", "b")
        bench.state.write(replace(bench.state.items[other], progress={"done": 3}))
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        assert (await bench.item(other)).progress == {"done": 3}

    async def test_while_the_block_lasts_the_leases_are_renewed_every_heartbeat_interval(
        self, lanes: Lanes
    ) -> None:
        await lanes.running("a", "b")
        blocker = lanes.handler(0)
        for blocked_for in (2.0, 2.5, 3.99, 4.0, 5.0, 6.1):
            await lanes.guard.look(blocked_for=blocked_for, running=blocker)
        assert lanes.spy.count("heartbeat_many") == 3

    async def test_only_the_running_items_of_the_worker_are_heartbeated(
        self, lanes: Lanes, bench: Bench
    ) -> None:
        done = await bench.enqueue("done")
        await lanes.executors[1].run_next()
        assert (await bench.item(done)).status is WorkStatus.SUCCEEDED
        _, other = await lanes.running("a", "b")
        sent: list[list[Lease]] = []
        store = bench.store

        async def noted(beats: list[tuple[Lease, object]], **kwargs: object) -> object:
            sent.append([lease for lease, _ in beats])
            return await store.heartbeat_many(beats, **kwargs)  # type: ignore[arg-type]

        lanes.spy.overrides["heartbeat_many"] = noted
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        assert sent == [[Lease(other, 1)]]

    async def test_every_item_of_the_worker_is_renewed_however_many_it_holds(
        self, lanes: Lanes, bench: Bench
    ) -> None:
        await lanes.running("a")
        held = []
        for n in range(150):
            await bench.enqueue(f"held {n}")
            held.append(await bench.claim_as_dead_worker(worker_id="lanes"))
        await bench.clock.advance(1)
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        renewed_until = bench.clock.now() + LEASE
        assert {await lanes.expiry(item.id) for item in held} == {renewed_until}

    async def test_items_of_other_workers_are_not_renewed(self, lanes: Lanes, bench: Bench) -> None:
        await lanes.running("a", "b")
        await bench.enqueue("elsewhere")
        theirs = await bench.claim_as_dead_worker(worker_id="another-worker")
        await bench.clock.advance(3)
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        assert await lanes.expiry(theirs.id) == theirs.lease_expires_at

    async def test_a_lease_no_longer_held_is_left_as_it_is(
        self, lanes: Lanes, bench: Bench
    ) -> None:
        _, other = await lanes.running("a", "b")
        secured = lanes.secured(1)
        bench.take_over(other, worker_id="lanes")
        await bench.clock.advance(1)
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        assert lanes.secured(1) == secured
        taken = Lease(other, 2)
        assert lanes.renewals.secured_until(taken, secured) == bench.clock.now() + LEASE
        assert lanes.renewals.secured_until(Lease(other, 1), secured) == secured

    async def test_a_task_that_runs_no_handler_blocks_no_lease_from_being_renewed(
        self, lanes: Lanes, caplog: pytest.LogCaptureFixture
    ) -> None:
        first, second = await lanes.running("a", "b")
        await lanes.bench.clock.advance(3)
        stranger = asyncio.current_task()
        assert stranger is not None
        await lanes.guard.look(blocked_for=2.0, running=stranger)
        renewed_until = lanes.bench.clock.now() + LEASE
        assert [await lanes.expiry(first), await lanes.expiry(second)] == [renewed_until] * 2
        assert [lanes.secured(0), lanes.secured(1)] == [renewed_until] * 2
        assert (
            f"by a task that runs no item's handler ({stranger.get_name()})"
            in (watchdog_lines(caplog)[0])
        )

    async def test_an_idle_loop_blocked_by_nothing_renews_the_items_held(
        self, lanes: Lanes, caplog: pytest.LogCaptureFixture
    ) -> None:
        first, _ = await lanes.running("a", "b")
        await lanes.bench.clock.advance(3)
        await lanes.guard.look(blocked_for=2.0, running=None)
        assert await lanes.expiry(first) == lanes.bench.clock.now() + LEASE
        assert watchdog_lines(caplog)[0].startswith(
            "the event loop has been blocked for 2.0 s by a task that runs no item's handler;"
        )

    async def test_a_new_blocker_ends_the_last_block_and_its_lease_is_renewed_at_once(
        self, lanes: Lanes, caplog: pytest.LogCaptureFixture
    ) -> None:
        first, second = await lanes.running("a", "b")
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        first_expiry = await lanes.expiry(first)
        await lanes.bench.clock.advance(1)
        await lanes.guard.look(blocked_for=2.5, running=lanes.handler(1))
        assert await lanes.expiry(first) == lanes.bench.clock.now() + LEASE != first_expiry
        assert await lanes.expiry(second) == first_expiry
        lines = watchdog_lines(caplog)
        assert (
            lines[1]
            == f"the event loop was blocked for at least 2.0 s by alpha item {first} (attempt 1)"
        )
        assert f"by alpha item {second} (attempt 1)" in lines[2]


class TestWhatTheLogSays:
    async def test_the_block_names_the_blockers_kind_item_line_and_what_to_do_instead(
        self, lanes: Lanes, caplog: pytest.LogCaptureFixture
    ) -> None:
        blocker, _ = await lanes.running("a", "b")
        await lanes.guard.look(blocked_for=2.04, running=lanes.handler(0), where=at_line)
        [record] = [r for r in caplog.records if r.name == WATCHDOG_LOG]
        assert record.levelno == logging.WARNING
        assert record.getMessage() == (
            f"the event loop has been blocked for 2.0 s by alpha item {blocker} (attempt 1)"
            " at handlers.py:12 in crawl; the leases of this worker's other items are renewed"
            f" meanwhile; {ADVICE}"
        )
        assert (record.item_id, record.kind, record.attempt) == (blocker, "alpha", 1)  # type: ignore[attr-defined]

    async def test_a_block_that_ends_is_logged_once_with_how_long_it_lasted(
        self, lanes: Lanes, caplog: pytest.LogCaptureFixture
    ) -> None:
        blocker, _ = await lanes.running("a", "b")
        for blocked_for in (2.0, 3.26, 0.1, 0.2):
            await lanes.guard.look(blocked_for=blocked_for, running=lanes.handler(0))
        [record] = [r for r in caplog.records if r.name == WATCHDOG_LOG][1:]
        assert record.levelno == logging.WARNING
        assert record.getMessage() == (
            f"the event loop was blocked for at least 3.3 s by alpha item {blocker} (attempt 1)"
        )
        assert record.item_id == blocker  # type: ignore[attr-defined]

    async def test_a_block_by_no_handler_that_ends_says_so(
        self, lanes: Lanes, caplog: pytest.LogCaptureFixture
    ) -> None:
        await lanes.running("a", "b")
        await lanes.guard.look(blocked_for=2.0, running=None)
        await lanes.guard.look(blocked_for=0.0, running=None)
        [record] = [r for r in caplog.records if r.name == WATCHDOG_LOG][1:]
        assert record.getMessage() == (
            "the event loop was blocked for at least 2.0 s by a task that runs no item's handler"
        )
        assert not hasattr(record, "item_id")

    async def test_a_store_that_fails_is_logged_and_tried_again_at_the_next_interval(
        self, lanes: Lanes, caplog: pytest.LogCaptureFixture
    ) -> None:
        _, other = await lanes.running("a", "b")
        calls = 0
        store = lanes.bench.store

        async def down_once(*args: object, **kwargs: object) -> object:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise StoreUnavailableError("connection refused")
            return await store.heartbeat_many(*args, **kwargs)  # type: ignore[arg-type]

        lanes.spy.overrides["heartbeat_many"] = down_once
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        failure = [r for r in caplog.records if r.name == WATCHDOG_LOG][1]
        assert failure.getMessage() == (
            "the watchdog could not renew the leases of this worker's items; it tries again"
            " at its next look"
        )
        assert failure.exc_info is not None
        assert failure.exc_info[0] is StoreUnavailableError
        await lanes.bench.clock.advance(3)
        await lanes.guard.look(blocked_for=4.0, running=lanes.handler(0))
        assert await lanes.expiry(other) == lanes.bench.clock.now() + LEASE


class TestAHeartbeatInFlightWhenTheLoopBlocks:
    """A lane's heartbeat sent just before a handler blocks the loop is answered only once
    the block is over, after the watchdog renewed that lease for longer."""

    async def test_its_late_answer_leaves_the_lease_secured_as_long_as_the_watchdog_renewed_it(
        self, lanes: Lanes, bench: Bench
    ) -> None:
        _, other = await lanes.running("a", "b")
        answered = lanes.answer_late(other)
        await bench.clock.advance(INTERVAL.total_seconds())
        await bench.clock.advance(1)
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        renewed_until = bench.clock.now() + LEASE
        answered.set()
        await bench.clock.settle()
        assert lanes.secured(1) == renewed_until

    async def test_the_lane_keeps_its_item_when_the_loop_resumes_past_that_heartbeats_lease(
        self, lanes: Lanes, bench: Bench
    ) -> None:
        _, other = await lanes.running("a", "b")
        answered = lanes.answer_late(other)
        sent_at = bench.clock.now() + INTERVAL
        await bench.clock.advance(INTERVAL.total_seconds())
        await bench.clock.advance(1)
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        answered.set()
        await bench.clock.settle()
        # The loop blocks again, past the lease that heartbeat secured but not as far as
        # the watchdog's renewal.
        bench.clock.advance((sent_at + LEASE - bench.clock.now()).total_seconds() + 0.5)
        await bench.clock.settle()
        running = lanes.executors[1].running
        assert running is not None
        handler, claim = running
        assert claim.lost is None
        assert not handler.cancelled()
        item = await bench.item(other)
        assert (item.status, item.attempt) == (WorkStatus.RUNNING, 1)

    async def test_a_write_that_lands_after_the_renewal_leaves_no_shorter_lease_stored(
        self, lanes: Lanes, bench: Bench
    ) -> None:
        """The heartbeat's statement reached the store only after the block, carrying the
        lease it was sent with, shorter than the watchdog's renewal."""
        _, other = await lanes.running("a", "b")
        delayed = asyncio.Event()
        late = [True]
        store = bench.store

        async def written_late(lease: Lease, **kwargs: object) -> object:
            if lease.item_id != other or not late[0]:
                return await store.heartbeat(lease, **kwargs)  # type: ignore[arg-type]
            late[0] = False
            sent_at = bench.clock.now()
            await delayed.wait()
            item = bench.state.items[other]
            bench.state.write(replace(item, lease_expires_at=sent_at + LEASE))
            return HeartbeatAnswer.HELD

        lanes.beats.overrides["heartbeat"] = written_late
        await bench.clock.advance(INTERVAL.total_seconds())
        await bench.clock.advance(1)
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        delayed.set()
        await bench.clock.settle()
        stored = await lanes.expiry(other)
        assert stored is not None
        assert stored >= lanes.secured(1) == bench.clock.now() + LEASE

    async def test_a_heartbeat_that_fails_then_is_tried_again_at_the_next_tick_not_at_once(
        self, lanes: Lanes, bench: Bench
    ) -> None:
        _, other = await lanes.running("a", "b")
        answered = asyncio.Event()
        sent: list[datetime] = []
        store = bench.store

        async def down(lease: Lease, **kwargs: object) -> object:
            if lease.item_id != other:
                return await store.heartbeat(lease, **kwargs)  # type: ignore[arg-type]
            sent.append(bench.clock.now())
            await answered.wait()
            raise StoreUnavailableError("connection refused")

        lanes.beats.overrides["heartbeat"] = down
        first = bench.clock.now() + INTERVAL
        await bench.clock.advance(INTERVAL.total_seconds())
        await bench.clock.advance(1)
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        answered.set()
        await bench.clock.settle()
        assert sent == [first]
        await bench.clock.advance(INTERVAL.total_seconds())
        assert sent == [first, bench.clock.now()]


def claimer_noting(renewals: Renewals, bench: Bench) -> Claimer:
    """A lane's claimer on the bench that consults ``renewals`` for what it claims."""
    return Claimer(
        bench.store,
        bench.clock,
        bench.registry.kinds,
        worker_id="lanes",
        lease_duration=LEASE,
        renewals=renewals,
    )


class TestClaimsTheWatchdogCannotSee:
    async def test_an_item_held_for_the_next_run_is_secured_by_the_renewal(
        self, lanes: Lanes, bench: Bench
    ) -> None:
        [blocker] = await lanes.running("a")
        await bench.enqueue("next")
        await bench.enqueue("after")
        runner = lanes.executors[1]
        run = asyncio.create_task(runner.run_next(claim_next=True))
        await bench.clock.settle()
        await run
        held = runner.held
        assert held is not None
        await bench.clock.advance(3)
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        assert held.secured_until == bench.clock.now() + LEASE
        assert await lanes.expiry(held.item.id) == bench.clock.now() + LEASE
        assert blocker != held.item.id
        await runner.release_held()

    async def test_a_claim_in_flight_during_the_block_is_secured_until_its_renewal(
        self, bench: Bench
    ) -> None:
        renewals = Renewals()
        claimer = claimer_noting(renewals, bench)
        item_id = await bench.enqueue("in flight")
        renewed_until = bench.clock.now() + timedelta(seconds=100)
        renewals.note(Lease(item_id, 1), renewed_until)
        claim = await claimer.claim()
        assert claim is not None
        assert claim.secured_until == renewed_until

    async def test_a_claim_without_a_renewal_is_secured_by_its_own_lease(
        self, bench: Bench
    ) -> None:
        renewals = Renewals()
        claimer = claimer_noting(renewals, bench)
        item_id = await bench.enqueue("in flight")
        renewals.note(Lease(item_id + 1, 1), bench.clock.now() + timedelta(seconds=100))
        claim = await claimer.claim()
        assert claim is not None
        assert claim.secured_until == bench.clock.now() + LEASE

    async def test_renewals_run_out_and_are_forgotten_at_the_next_look(
        self, lanes: Lanes, bench: Bench
    ) -> None:
        lanes.renewals.note(Lease(1, 1), bench.clock.now() + timedelta(seconds=1))
        lanes.renewals.note(Lease(2, 1), bench.clock.now() + timedelta(seconds=2))
        await bench.clock.advance(1)
        await lanes.guard.look(blocked_for=0.0, running=None)
        assert len(lanes.renewals) == 1
        later = bench.clock.now() + timedelta(seconds=5)
        assert lanes.renewals.secured_until(Lease(1, 1), bench.clock.now()) == bench.clock.now()
        assert lanes.renewals.secured_until(Lease(2, 1), later) == later


class TestTheGuardsOwnStore:
    async def test_it_is_opened_on_first_need_once_and_closed_with_the_guard(
        self, lanes: Lanes
    ) -> None:
        await lanes.running("a", "b")
        for blocked_for in (2.0, 4.0, 6.0):
            await lanes.guard.look(blocked_for=blocked_for, running=lanes.handler(0))
        assert (lanes.opened, lanes.closed) == (1, 0)
        await lanes.guard.close()
        assert (lanes.opened, lanes.closed) == (1, 1)

    async def test_a_guard_that_never_renewed_opens_and_closes_nothing(self, lanes: Lanes) -> None:
        await lanes.guard.close()
        assert (lanes.opened, lanes.closed) == (0, 0)

    async def test_with_nothing_to_renew_no_heartbeat_is_sent(self, lanes: Lanes) -> None:
        await lanes.running("a")
        await lanes.guard.look(blocked_for=2.0, running=lanes.handler(0))
        assert lanes.spy.count("list_items") == 1
        assert lanes.spy.count("heartbeat_many") == 0


class TestHowOftenItLooks:
    @pytest.mark.parametrize(
        ("interval", "period"), [(2.0, 0.25), (1.0, 0.25), (0.4, 0.1), (0.1, 0.025)]
    )
    def test_a_quarter_of_the_heartbeat_interval_at_most_a_quarter_second(
        self, interval: float, period: float
    ) -> None:
        assert pulse_period(timedelta(seconds=interval)) == pytest.approx(period)


async def test_a_block_still_open_when_the_guard_closes_is_logged_as_ended(
    lanes: Lanes, caplog: pytest.LogCaptureFixture
) -> None:
    blocker, _ = await lanes.running("a", "b")
    await lanes.guard.look(blocked_for=2.5, running=lanes.handler(0))
    await lanes.guard.close()
    assert watchdog_lines(caplog)[1:] == [
        f"the event loop was blocked for at least 2.5 s by alpha item {blocker} (attempt 1)"
    ]
