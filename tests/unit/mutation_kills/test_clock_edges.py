"""Both clocks at their edges: odd time zones, exact deadlines, and settling without wall time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta, tzinfo

import pytest

from adapters.clock import SystemClock
from adapters.testing import FakeClock


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


class TestFakeClock:
    def test_a_start_whose_zone_has_no_offset_is_refused(self) -> None:
        start = datetime(2026, 1, 1, tzinfo=Unresolved())

        with pytest.raises(ValueError, match="FakeClock start must be timezone-aware"):
            FakeClock(start)

    async def test_a_sleeper_wakes_at_its_deadline_and_not_before(self) -> None:
        clock = FakeClock()
        sleeper = asyncio.create_task(clock.sleep(5))

        await clock.advance(4.9)
        early = sleeper.done()
        await clock.advance(0.1)

        assert (early, sleeper.done()) == (False, True)

    async def test_time_moves_by_fractions_and_by_nothing(self) -> None:
        clock = FakeClock()

        await clock.advance(0.5)
        await clock.advance(0)

        assert clock.now() == FakeClock().now() + timedelta(seconds=0.5)

    async def test_settling_yields_without_waiting_on_the_wall_clock(
        self, slept: list[float]
    ) -> None:
        clock = FakeClock()
        done: list[int] = []
        task = asyncio.create_task(steps(20, done)())

        await clock.settle()

        assert (done, task.done()) == ([20], True)
        assert set(slept) == {0}

    async def test_a_task_that_never_blocks_is_reported_not_waited_for(self) -> None:
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

    async def test_without_a_readable_ready_queue_settling_yields_a_hundred_times(
        self, monkeypatch: pytest.MonkeyPatch, slept: list[float]
    ) -> None:
        clock = FakeClock()
        done: list[int] = []
        short = asyncio.create_task(steps(90, done)())
        long = asyncio.create_task(steps(110, done)())
        monkeypatch.setattr(asyncio, "get_running_loop", lambda: object())

        await clock.settle()

        assert (short.done(), long.done()) == (True, False)
        assert slept.count(0) >= 100
        assert set(slept) == {0}
        monkeypatch.undo()
        await long


class TestSystemClock:
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


class TestAdvanceNotAwaited:
    async def test_a_jump_to_exactly_a_deadline_wakes_that_sleeper(self) -> None:
        clock = FakeClock()
        sleeper = asyncio.create_task(clock.sleep(5))
        await clock.settle()

        clock.advance(5)
        await clock.settle()

        assert (clock.sleepers, sleeper.done()) == (0, True)

    async def test_an_awaited_advance_does_not_jump_again_when_released(self) -> None:
        clock = FakeClock()
        advance = clock.advance(5)
        await advance
        sleeper = asyncio.create_task(clock.sleep(1))
        await clock.settle()

        del advance

        assert (clock.sleepers, sleeper.done()) == (1, False)
        sleeper.cancel()


async def test_an_advance_awaited_a_second_time_is_refused_and_moves_the_clock_once() -> None:
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    advance = clock.advance(10)
    await advance

    with pytest.raises(RuntimeError, match=r"^an advance is awaited at most once$"):
        await advance

    assert clock.now() == datetime(2026, 1, 1, 0, 0, 10, tzinfo=UTC)
