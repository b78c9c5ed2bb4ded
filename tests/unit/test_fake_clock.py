"""FakeClock: time stands still until advanced, and advancing wakes exactly the due sleepers."""

from __future__ import annotations

import asyncio
import contextvars
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any

import pytest

from workqueue.adapters.clock import SystemClock
from workqueue.adapters.testing import DEFAULT_START, FakeClock
from workqueue.adapters.testing.clock import BLIND_QUIET_TURNS, QUIET_TURNS

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def seconds_since_start(clock: FakeClock) -> float:
    return (clock.now() - T0).total_seconds()


async def test_a_fake_clock_starts_at_new_year_2026_in_utc() -> None:
    clock = FakeClock()

    assert clock.now() == T0 == DEFAULT_START
    assert clock.now().tzinfo is UTC


async def test_a_given_start_is_kept_as_the_same_instant_in_utc() -> None:
    start = datetime(2030, 6, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))

    clock = FakeClock(start)

    assert clock.now() == start
    assert clock.now().tzinfo is UTC
    assert clock.now().hour == 12


async def test_a_naive_start_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        FakeClock(datetime(2026, 1, 1))


async def test_time_stands_still_until_advanced() -> None:
    clock = FakeClock()
    await asyncio.sleep(0)

    assert clock.now() == T0

    await clock.advance(90.5)
    assert clock.now() == T0 + timedelta(seconds=90.5)


async def test_time_never_goes_back() -> None:
    clock = FakeClock()

    with pytest.raises(ValueError, match="back in time"):
        await clock.advance(-1)
    assert clock.now() == T0


async def test_a_sleeper_wakes_only_once_its_deadline_is_reached() -> None:
    clock = FakeClock()
    sleeper = asyncio.create_task(clock.sleep(5))

    await clock.advance(4.9)
    assert not sleeper.done()
    assert clock.sleepers == 1

    await clock.advance(0.1)
    assert sleeper.done()
    assert clock.sleepers == 0


async def test_sleepers_wake_in_deadline_order_each_seeing_its_deadline_as_now() -> None:
    clock = FakeClock()
    woken: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woken.append((name, seconds_since_start(clock)))

    for name, seconds in [("c", 3), ("a", 1), ("late", 20), ("b", 2), ("a-twin", 1)]:
        asyncio.create_task(sleeper(name, seconds))  # noqa: RUF006 - awaited via advance

    await clock.advance(10)

    assert woken == [("a", 1), ("a-twin", 1), ("b", 2), ("c", 3)]
    assert clock.sleepers == 1
    assert seconds_since_start(clock) == 10


async def test_a_looping_sleeper_wakes_at_every_period_within_one_advance() -> None:
    clock = FakeClock()
    ticks: list[float] = []

    async def every_two_seconds() -> None:
        while True:
            await clock.sleep(2)
            ticks.append(seconds_since_start(clock))

    ticker = asyncio.create_task(every_two_seconds())
    await clock.advance(10)

    assert ticks == [2, 4, 6, 8, 10]
    ticker.cancel()


async def test_a_woken_task_runs_until_it_blocks_before_time_moves_on() -> None:
    clock = FakeClock()
    trace: list[str] = []

    async def worker() -> None:
        await clock.sleep(1)
        trace.append(f"worker woke at {seconds_since_start(clock):g}")
        lock = asyncio.Event()
        helper = asyncio.create_task(clock.sleep(0))
        await helper
        lock.set()
        await lock.wait()
        trace.append(f"worker still at {seconds_since_start(clock):g}")
        await clock.sleep(5)
        trace.append(f"worker woke at {seconds_since_start(clock):g}")

    async def watcher() -> None:
        await clock.sleep(3)
        trace.append(f"watcher woke at {seconds_since_start(clock):g}")

    tasks = [asyncio.create_task(worker()), asyncio.create_task(watcher())]
    await clock.advance(10)

    assert trace == [
        "worker woke at 1",
        "worker still at 1",
        "watcher woke at 3",
        "worker woke at 6",
    ]
    assert all(task.done() for task in tasks)


async def test_a_task_started_just_before_an_advance_parks_before_time_moves() -> None:
    clock = FakeClock()
    woke_at: list[float] = []

    async def sleeper() -> None:
        await clock.sleep(2)
        woke_at.append(seconds_since_start(clock))

    asyncio.create_task(sleeper())  # noqa: RUF006 - awaited via advance
    await clock.advance(3)

    assert woke_at == [2]


@pytest.mark.parametrize("seconds", [0, -5])
async def test_a_sleep_of_no_time_only_yields(seconds: float) -> None:
    clock = FakeClock()

    await asyncio.wait_for(clock.sleep(seconds), timeout=1)

    assert clock.sleepers == 0
    assert clock.now() == T0


async def test_a_cancelled_sleeper_is_forgotten() -> None:
    clock = FakeClock()
    sleeper = asyncio.create_task(clock.sleep(5))
    await clock.settle()
    assert clock.sleepers == 1

    sleeper.cancel()
    await clock.settle()

    assert sleeper.cancelled()
    assert clock.sleepers == 0
    await clock.advance(10)
    assert clock.now() == T0 + timedelta(seconds=10)


async def test_settle_lets_ready_tasks_run_until_they_block() -> None:
    clock = FakeClock()
    steps: list[int] = []

    async def hops() -> None:
        for step in range(50):
            steps.append(step)
            await asyncio.sleep(0)
        await clock.sleep(1)

    asyncio.create_task(hops())  # noqa: RUF006 - left parked on the clock
    await clock.settle()

    assert steps == list(range(50))
    assert clock.sleepers == 1


async def test_settle_gives_up_on_a_task_that_never_blocks() -> None:
    clock = FakeClock()

    async def busy() -> None:
        while True:  # noqa: ASYNC110 - a task that never blocks is the point
            await asyncio.sleep(0)

    spinner = asyncio.create_task(busy())
    try:
        with pytest.raises(RuntimeError, match="did not settle"):
            await clock.settle()
    finally:
        spinner.cancel()


async def test_the_same_program_interleaves_the_same_way_every_time() -> None:
    async def program() -> list[tuple[str, float]]:
        clock = FakeClock()
        trace: list[tuple[str, float]] = []

        async def loop(name: str, period: float) -> None:
            while True:
                await clock.sleep(period)
                trace.append((name, seconds_since_start(clock)))

        tasks = [asyncio.create_task(loop(name, p)) for name, p in [("x", 1.5), ("y", 1), ("z", 3)]]
        await clock.advance(9)
        for task in tasks:
            task.cancel()
        return trace

    first, second = await program(), await program()

    assert first == second
    # At 3 s three sleepers fall due: z went to sleep first (at 0), then x (1.5), then y (2).
    assert first[:6] == [("y", 1), ("x", 1.5), ("y", 2), ("z", 3), ("x", 3), ("y", 3)]


async def test_the_system_clock_tells_aware_utc_wall_time() -> None:
    clock = SystemClock()
    before = datetime.now(UTC)

    now = clock.now()

    assert now.tzinfo is UTC
    assert before <= now <= datetime.now(UTC)
    await clock.sleep(0)


async def test_an_advance_that_is_not_awaited_jumps_at_once_waking_the_due_sleepers() -> None:
    clock = FakeClock()
    woke_at: dict[str, float] = {}

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke_at[name] = seconds_since_start(clock)

    tasks = [asyncio.create_task(sleeper(name, s)) for name, s in (("a", 3), ("b", 1), ("c", 9))]
    await clock.settle()

    clock.advance(5)

    assert seconds_since_start(clock) == 5
    assert clock.sleepers == 1
    await clock.settle()
    assert woke_at == {"a": 5, "b": 5}
    await clock.advance(4)
    assert woke_at["c"] == 9
    await asyncio.gather(*tasks)


def test_an_advance_that_is_not_awaited_works_without_an_event_loop() -> None:
    clock = FakeClock()

    clock.advance(2.5)
    clock.advance(0)

    assert seconds_since_start(clock) == 2.5


def test_an_advance_backwards_is_refused_at_the_call() -> None:
    clock = FakeClock()

    with pytest.raises(ValueError, match="back in time"):
        clock.advance(-1)
    assert seconds_since_start(clock) == 0


class Unresolved(tzinfo):
    """A time zone that cannot say its offset."""

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every asyncio.sleep asked for, answered by one turn of the loop."""
    delays: list[float] = []
    real_sleep = asyncio.sleep

    async def recorded(delay: float, result: object = None) -> object:
        delays.append(delay)
        return await real_sleep(0, result)

    monkeypatch.setattr(asyncio, "sleep", recorded)
    return delays


def steps(count: int, done: list[int]) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        for _ in range(count):
            await asyncio.sleep(0)
        done.append(count)

    return run


def callbacks_in_a_row(count: int, then: asyncio.Future[None]) -> None:
    """Schedule ``count`` plain callbacks, each scheduling the next; the last sets ``then``."""
    loop = asyncio.get_running_loop()

    def step(left: int) -> None:
        if left == 1:
            then.set_result(None)
        else:
            loop.call_soon(step, left - 1)

    loop.call_soon(step, count)


async def test_a_start_whose_zone_has_no_offset_is_refused() -> None:
    with pytest.raises(ValueError, match="FakeClock start must be timezone-aware"):
        FakeClock(datetime(2026, 1, 1, tzinfo=Unresolved()))


async def test_time_moves_by_fractions_and_by_nothing() -> None:
    clock = FakeClock()

    await clock.advance(0.5)
    await clock.advance(0)

    assert seconds_since_start(clock) == 0.5


async def test_settling_yields_without_waiting_on_the_wall_clock(slept: list[float]) -> None:
    clock = FakeClock()
    done: list[int] = []
    task = asyncio.create_task(steps(20, done)())

    await clock.settle()

    assert (done, task.done()) == ([20], True)
    assert set(slept) == {0}


async def test_settling_with_nothing_to_run_takes_four_turns_of_the_loop(
    slept: list[float],
) -> None:
    clock = FakeClock()

    await clock.settle()

    assert slept == [0] * QUIET_TURNS == [0, 0, 0, 0]


async def test_settling_from_a_task_of_its_own_still_settles(slept: list[float]) -> None:
    clock = FakeClock()

    await asyncio.create_task(clock.settle())

    # Its own steps do not count against it; the test's task, which it cannot see
    # (it began before the clock), makes it wait the longer count of still turns.
    assert slept.count(0) == BLIND_QUIET_TURNS


async def test_a_task_that_never_blocks_is_reported_in_one_line() -> None:
    clock = FakeClock()

    async def spin() -> None:
        while True:  # noqa: ASYNC110 - the busy task under test
            await asyncio.sleep(0)

    spinner = asyncio.create_task(spin())
    try:
        with pytest.raises(RuntimeError) as refused:
            await clock.settle()
    finally:
        spinner.cancel()

    assert str(refused.value) == (
        "the event loop did not settle after 10000 yields: "
        "a task keeps rescheduling itself without ever blocking"
    )


async def test_settling_waits_out_three_plain_callbacks_between_two_steps_of_a_task() -> None:
    clock = FakeClock()
    ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    waiter = asyncio.create_task(asyncio.wait_for(ready, timeout=None))
    await clock.settle()

    callbacks_in_a_row(3, then=ready)
    await clock.settle()

    assert waiter.done()


async def test_settling_does_not_wait_out_four_plain_callbacks_in_a_row() -> None:
    clock = FakeClock()
    ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    waiter = asyncio.create_task(asyncio.wait_for(ready, timeout=None))
    await clock.settle()

    callbacks_in_a_row(4, then=ready)
    await clock.settle()

    assert not waiter.done()
    await waiter


async def test_a_cancelled_task_is_settled_until_its_cleanup_blocks() -> None:
    clock = FakeClock()
    cleaned: list[str] = []
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def cleans_up_after_plain_callbacks() -> None:
        try:
            await never
        except asyncio.CancelledError:
            # The step the cancellation runs in schedules plain callbacks first.
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            callbacks_in_a_row(3, then=ready)
            await ready
            cleaned.append("cleaned")
            raise

    task = asyncio.create_task(cleans_up_after_plain_callbacks())
    await clock.settle()
    task.cancel()
    await clock.settle()

    assert (cleaned, task.cancelled()) == (["cleaned"], True)


async def test_a_task_started_before_the_clock_is_waited_for_a_hundred_still_turns() -> None:
    turns = 0

    async def unseen() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    # Started before any FakeClock touched this loop, so its steps are not counted.
    spinner = asyncio.create_task(unseen())
    clock = FakeClock()
    try:
        await clock.settle()
    finally:
        spinner.cancel()

    assert turns == BLIND_QUIET_TURNS == 100


@pytest.mark.parametrize("first_use", ["created", "advanced", "slept"])
async def test_tasks_started_after_the_clock_is_first_used_are_seen(
    first_use: str, slept: list[float]
) -> None:
    done: list[int] = []
    if first_use == "created":
        clock = FakeClock()
    else:
        clock = await asyncio.to_thread(FakeClock)  # made off the loop: it touches none
        if first_use == "advanced":
            clock.advance(0)
        else:
            await clock.sleep(0)
    slept.clear()
    task = asyncio.create_task(steps(10, done)())

    await clock.settle()

    assert task.done()
    # The task's ten sleeps, and the settle's: one per step of the task, its last
    # one included, then the quiet turns (not the hundred of a task unseen).
    assert len(slept) == 10 + (10 + 1 + QUIET_TURNS)


async def test_a_task_factory_set_before_the_clock_still_builds_the_tasks() -> None:
    loop = asyncio.get_running_loop()
    built: list[tuple[bool, dict[str, Any]]] = []

    def factory(
        given: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], **kwargs: Any
    ) -> asyncio.Task[Any]:
        built.append((given is loop, kwargs))
        return asyncio.Task(coro, loop=given, **kwargs)

    context = contextvars.copy_context()
    loop.set_task_factory(factory)
    try:
        clock = FakeClock()
        done: list[int] = []
        task = loop.create_task(steps(30, done)(), context=context)
        await clock.settle()
    finally:
        loop.set_task_factory(None)

    assert (built, task.done()) == ([(True, {"context": context})], True)


async def test_a_task_created_in_a_context_runs_in_it() -> None:
    FakeClock()
    setting: contextvars.ContextVar[str] = contextvars.ContextVar("setting", default="outside")
    context = contextvars.copy_context()
    context.run(setting.set, "inside")

    async def read() -> str:
        return setting.get()

    assert await asyncio.get_running_loop().create_task(read(), context=context) == "inside"


async def test_a_seen_task_still_shows_its_coroutine_in_its_repr_and_stack() -> None:
    clock = FakeClock()
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def parked_on_a_future() -> None:
        await never

    task = asyncio.create_task(parked_on_a_future())
    await clock.settle()

    assert "parked_on_a_future" in repr(task)
    assert [frame.f_code.co_name for frame in task.get_stack()] == ["parked_on_a_future"]
    task.get_coro().close()
    assert task.get_coro().cr_frame is None
    task.cancel()
    with pytest.raises((asyncio.CancelledError, RuntimeError)):
        await task


class TestTheSystemClock:
    def test_now_is_the_current_time_in_utc(self) -> None:
        before = datetime.now(UTC)
        now = SystemClock().now()
        after = datetime.now(UTC)

        assert before <= now <= after
        assert now.utcoffset() == timedelta(0)

    async def test_a_sleep_of_no_time_or_less_does_not_wait(self, slept: list[float]) -> None:
        clock = SystemClock()

        await clock.sleep(-5)
        await clock.sleep(0.25)

        assert slept == [0.0, 0.25]


class TestAnAdvanceNotAwaited:
    async def test_a_jump_to_exactly_a_deadline_wakes_that_sleeper(self) -> None:
        clock = FakeClock()
        sleeper = asyncio.create_task(clock.sleep(5))
        await clock.settle()

        clock.advance(5)
        await clock.settle()

        assert (clock.sleepers, sleeper.done()) == (0, True)

    async def test_the_jump_is_made_at_the_loops_next_turn_if_no_one_asks_the_clock(
        self,
    ) -> None:
        clock = FakeClock()
        sleeper = asyncio.create_task(clock.sleep(5))
        await clock.settle()

        clock.advance(5)
        async with asyncio.timeout(5):
            await sleeper

    async def test_a_sleep_after_the_jump_counts_from_the_time_jumped_to(self) -> None:
        clock = FakeClock()

        clock.advance(5)
        sleeper = asyncio.create_task(clock.sleep(1))
        await clock.advance(1)

        assert sleeper.done()

    async def test_an_advance_awaited_after_its_jump_was_made_is_refused(self) -> None:
        clock = FakeClock()
        advance = clock.advance(5)
        assert seconds_since_start(clock) == 5

        with pytest.raises(RuntimeError) as refused:
            await advance

        assert str(refused.value) == (
            "this advance was already made as a jump: await it where it is made, "
            "as `await clock.advance(seconds)`"
        )
        assert seconds_since_start(clock) == 5

    async def test_an_awaited_advance_does_not_jump_again_later(self) -> None:
        clock = FakeClock()
        advance = clock.advance(5)
        await advance
        sleeper = asyncio.create_task(clock.sleep(1))
        await clock.settle()

        del advance
        await clock.settle()

        assert (clock.sleepers, sleeper.done()) == (1, False)
        sleeper.cancel()

    async def test_an_advance_awaited_a_second_time_is_refused_and_moves_the_clock_once(
        self,
    ) -> None:
        clock = FakeClock()
        advance = clock.advance(10)
        await advance

        with pytest.raises(RuntimeError, match=r"^an advance is awaited at most once$"):
            await advance

        assert seconds_since_start(clock) == 10


def test_settling_from_a_task_that_sees_every_task_still_waits_for_the_others() -> None:
    # A loop of its own, its clock made first: every task after that is counted,
    # the one that settles included, and no task the clock cannot see is alive.
    loop = asyncio.new_event_loop()
    try:

        async def make_clock() -> FakeClock:
            return FakeClock()

        clock = loop.run_until_complete(make_clock())

        async def settle_beside_a_busy_task() -> tuple[list[int], int]:
            done: list[int] = []
            turns = 0
            busy = asyncio.create_task(steps(20, done)())
            real_sleep = asyncio.sleep

            async def counted_sleep(delay: float) -> None:
                nonlocal turns
                turns += 1
                await real_sleep(delay)

            asyncio.sleep = counted_sleep  # type: ignore[assignment]
            try:
                await clock.settle()
            finally:
                asyncio.sleep = real_sleep
            assert busy.done()
            return done, turns

        done, turns = loop.run_until_complete(settle_beside_a_busy_task())
    finally:
        loop.close()

    assert done == [20]
    # The busy task's steps and its end, then the quiet turns: no blind wait.
    assert turns < BLIND_QUIET_TURNS


async def test_the_coroutine_of_a_seen_task_passes_on_what_is_sent_and_thrown_to_it() -> None:
    FakeClock()

    @types.coroutine
    def echo() -> Generator[None, object, object]:
        try:
            received = yield
        except LookupError as error:
            return f"caught {error}"
        return received

    sent = asyncio.create_task(echo())
    thrown = asyncio.create_task(echo())
    for task in (sent, thrown):
        task.get_coro().send(None)  # started by hand, before the loop's first turn

    with pytest.raises(StopIteration) as answered:
        sent.get_coro().send("hello")
    with pytest.raises(StopIteration) as caught:
        thrown.get_coro().throw(LookupError("x"))

    assert (answered.value.value, caught.value.value) == ("hello", "caught x")
    # The tasks' own steps find their coroutines finished; how they end is theirs.
    await asyncio.gather(sent, thrown, return_exceptions=True)
