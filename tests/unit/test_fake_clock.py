"""FakeClock: time stands still until advanced, and advancing wakes exactly the due sleepers."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone

import pytest

from adapters.clock import SystemClock
from adapters.testing import DEFAULT_START, FakeClock

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
