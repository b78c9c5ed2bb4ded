"""FakeClock: time that moves only when a test moves it.

Every store and service takes a :class:`~workqueue.domain.Clock`. Giving them a FakeClock
makes a test deterministic: ``now()`` stands still, ``sleep()`` parks the caller,
and :meth:`FakeClock.advance` moves time forward, waking exactly the sleepers that
have become due, one at a time, in deadline order.

How settling works
------------------
After it wakes a sleeper (and before it moves time again), the clock *settles*:
it yields to the event loop, again and again, until the loop's tasks have been
still for a few turns in a row. At that point every task that was woken has run
until it blocks again, either on another ``clock.sleep``, on a future or lock, or
on real I/O.

The clock sees the tasks move through the loop's public task factory
(``loop.set_task_factory``): the first time a FakeClock is used on a loop (or
created while one runs), it makes that loop's new tasks count each step they take
(the factory already set, if any, still builds them). It reads nothing private of
the loop, so it works on any loop that takes a task factory, uvloop included.

Limits of settling:

- It sees the steps of the tasks created after the clock was first used on
  their loop (created there, or slept, advanced or settled there). While a task
  it cannot see is alive, it waits for :data:`BLIND_QUIET_TURNS` still turns
  instead, which is enough for in-memory code whose tasks each need only a few
  steps between two blocks. So a test that wants exact settling creates its
  clock in the test, or settles once, before it starts the tasks. (``now()``
  does not count as a use: it is the hottest call of a test and stays one
  attribute read.)
- A task waiting on real I/O (a database round trip, a socket) or on a real
  timer (``asyncio.sleep(0.1)``, ``asyncio.wait_for`` with a timeout) is
  *blocked* as far as settling can tell, so ``advance`` may move time on before
  that task continues. Code under test that does I/O must be awaited by the test
  itself, not left to ``advance``.
- Between two steps of a task, asyncio may run plain callbacks (a future's done
  callbacks, ``asyncio.wait``'s bookkeeping); settling waits out chains of up to
  :data:`QUIET_TURNS` - 1 of them in a row.
- A task that never blocks (``while True: await asyncio.sleep(0)``) can never
  settle; after :data:`MAX_SETTLE_YIELDS` yields :meth:`FakeClock.settle` raises
  instead of hanging the test.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Coroutine, Generator
from contextvars import Context
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

__all__ = [
    "BLIND_QUIET_TURNS",
    "DEFAULT_START",
    "MAX_SETTLE_YIELDS",
    "QUIET_TURNS",
    "Advance",
    "FakeClock",
]

DEFAULT_START = datetime(2026, 1, 1, tzinfo=UTC)
"""Where a FakeClock starts unless told otherwise."""

MAX_SETTLE_YIELDS = 10_000
"""How many times :meth:`FakeClock.settle` yields before it gives up on a busy task."""

QUIET_TURNS = 4
"""How many turns of the loop in a row without a task step count as settled."""

BLIND_QUIET_TURNS = 100
"""As :data:`QUIET_TURNS`, while a task the clock cannot see is alive (see the limits)."""


_T = TypeVar("_T")


class _CountedCoroutine(Coroutine[Any, Any, Any]):
    """A task's coroutine that counts each step the task takes before passing it on."""

    __slots__ = ("_coroutine", "_steps")

    def __init__(self, coroutine: Coroutine[Any, Any, Any], steps: _StepCounter) -> None:
        self._coroutine = coroutine
        self._steps = steps

    def send(self, value: Any) -> Any:
        self._steps.count()
        return self._coroutine.send(value)

    def throw(self, *error: Any) -> Any:
        self._steps.count()
        return self._coroutine.throw(*error)

    def close(self) -> None:
        self._coroutine.close()

    def __await__(self) -> Generator[Any, None, Any]:
        return self._coroutine.__await__()

    def __getattr__(self, name: str) -> Any:
        # cr_frame, cr_code, __qualname__ ...: a task's repr and stack still show the
        # coroutine it runs.
        return getattr(self._coroutine, name)


class _StepCounter:
    """The task factory a FakeClock puts on a loop: it builds tasks that count their steps.

    It wraps the factory that was there before, if any, so that one still builds
    the tasks.
    """

    # Only differences of it are read, so it starts as a class attribute.
    taken = 0

    def __init__(self, previous: Callable[..., asyncio.Future[Any]] | None) -> None:
        self._previous = previous

    def count(self) -> None:
        """One more step of one of the loop's tasks."""
        self.taken += 1

    def __call__(
        self,
        loop: asyncio.AbstractEventLoop,
        coro: Coroutine[Any, Any, _T] | Generator[Any, None, _T],
        /,
        **kwargs: Any,
    ) -> asyncio.Future[_T]:
        # A generator-based coroutine has send, throw and close too, all this uses.
        counted = _CountedCoroutine(coro, self)  # type: ignore[arg-type]
        if self._previous is not None:
            return self._previous(loop, counted, **kwargs)
        context: Context | None = kwargs.get("context")
        return asyncio.Task(counted, loop=loop, context=context)


def _steps_on(loop: asyncio.AbstractEventLoop) -> _StepCounter:
    """The step counter of ``loop``'s tasks, set up on first use."""
    factory = loop.get_task_factory()
    if isinstance(factory, _StepCounter):
        return factory
    counter = _StepCounter(factory)
    loop.set_task_factory(counter)
    return counter


def _counted(task: asyncio.Task[Any]) -> bool:
    return isinstance(task.get_coro(), _CountedCoroutine)


def _sees_all(current: asyncio.Task[Any] | None) -> bool:
    """Whether every live task of the running loop but ``current`` counts its steps."""
    return all(_counted(task) for task in asyncio.all_tasks() if task is not current)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


@dataclass(order=True)
class _Sleeper:
    """One parked ``sleep``: ordered by deadline, then by when it was registered."""

    deadline: datetime
    sequence: int
    wake: asyncio.Future[None] = field(compare=False)


class FakeClock:
    """A deterministic :class:`~workqueue.domain.Clock` for tests.

    :param start: the initial ``now()``; must be timezone-aware (it is converted to
        UTC). Defaults to :data:`DEFAULT_START`, 2026-01-01T00:00:00Z.
    :raises ValueError: if ``start`` is naive.
    """

    def __init__(self, start: datetime | None = None) -> None:
        start = DEFAULT_START if start is None else start
        if start.tzinfo is None or start.utcoffset() is None:
            raise ValueError(f"FakeClock start must be timezone-aware, not {start!r}")
        self._now = start.astimezone(UTC)
        self._sleepers: list[_Sleeper] = []
        self._sequence = itertools.count()
        # The advance made by a plain `clock.advance(n)`, until it is applied.
        self._pending: Advance | None = None
        loop = _running_loop()
        if loop is not None:
            _steps_on(loop)

    def now(self) -> datetime:
        """The clock's current time, timezone-aware, in UTC. It moves only in :meth:`advance`."""
        # The hottest call of a test: one attribute read unless a jump is pending.
        if self._pending is not None:
            self._apply_pending()
        return self._now

    @property
    def sleepers(self) -> int:
        """How many tasks are parked in :meth:`sleep` right now."""
        return self._parked()

    def _parked(self) -> int:
        # Apart from the property so that mutmut, which skips decorated functions, mutates it.
        self._apply_pending()
        return len(self._sleepers)

    async def sleep(self, seconds: float) -> None:
        """Park the caller until :meth:`advance` reaches now + ``seconds``.

        ``seconds <= 0`` does not park: it yields to the event loop once. A sleeper
        that is cancelled is forgotten, so it neither counts in :attr:`sleepers` nor
        holds up a later :meth:`advance`.

        :raises asyncio.CancelledError: when the sleeping task is cancelled.
        """
        _steps_on(asyncio.get_running_loop())
        now = self.now()
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        sleeper = _Sleeper(
            deadline=now + timedelta(seconds=seconds),
            sequence=next(self._sequence),
            wake=asyncio.get_running_loop().create_future(),
        )
        heapq.heappush(self._sleepers, sleeper)
        try:
            await sleeper.wake
        finally:
            # Woken sleepers were already popped; only a cancelled one is still here.
            if sleeper in self._sleepers:
                self._sleepers.remove(sleeper)
                heapq.heapify(self._sleepers)

    def advance(self, seconds: float) -> Advance:
        """Move time forward by ``seconds``, waking every sleeper that falls due.

        Awaited (``await clock.advance(10)``), it first settles, so tasks that were
        just started get to park. Then, for each due sleeper in deadline order (ties
        in the order they went to sleep), it sets ``now()`` to that deadline, wakes
        the sleeper, and settles before going on: a task sleeping 2 s in a loop
        wakes at 2, 4, 6, 8 and 10 during one ``advance(10)``, seeing each of those
        instants as ``now()``. Finally ``now()`` is the start plus ``seconds``.

        Called without ``await`` (``clock.advance(10)`` as a plain statement), the
        jump is made in one go, before anything can see the clock: the next time
        the clock is asked anything (``now()``, :attr:`sleepers`, another call), or
        at the event loop's next turn, whichever comes first. The sleepers due by
        then are woken in deadline order and ``now()`` is the start plus
        ``seconds``. The woken tasks run at the event loop's next turn and see the
        final time; a task that parks again within the jump is not woken again.
        Await it when a task's steps between deadlines matter.

        :raises ValueError: if ``seconds`` is negative (time never goes back).
        :raises RuntimeError: when awaited, if a task never blocks (see :meth:`settle`).
        """
        if seconds < 0:
            raise ValueError(f"a FakeClock cannot go back in time ({seconds} s)")
        self._apply_pending()
        advance = Advance(self, self._now + timedelta(seconds=seconds))
        self._pending = advance
        loop = _running_loop()
        if loop is not None:
            _steps_on(loop)
            loop.call_soon(self._apply_pending)
        return advance

    def _claim(self, advance: Advance) -> bool:
        """Take ``advance`` back from the pending jump, for awaiting; False if it was made."""
        if self._pending is not advance:
            return False
        self._pending = None
        return True

    def _apply_pending(self) -> None:
        advance, self._pending = self._pending, None
        if advance is not None:
            self._jump(advance.target)

    async def _advance_stepwise(self, target: datetime) -> None:
        await self.settle()
        while self._sleepers and self._sleepers[0].deadline <= target:
            self._wake_next()
            await self.settle()
        self._now = max(self._now, target)

    def _jump(self, target: datetime) -> None:
        while self._sleepers and self._sleepers[0].deadline <= target:
            self._wake_next()
        self._now = max(self._now, target)

    def _wake_next(self) -> None:
        sleeper = heapq.heappop(self._sleepers)
        self._now = sleeper.deadline
        if not sleeper.wake.done():
            sleeper.wake.set_result(None)

    async def settle(self) -> None:
        """Let every ready task run until each one blocks again.

        Yields to the event loop until no task has taken a step for
        :data:`QUIET_TURNS` turns in a row (:data:`BLIND_QUIET_TURNS` while a task
        it cannot see is alive): every other task is then parked (on this clock, a
        future, a lock) or waiting on I/O. It cannot wait for tasks blocked on
        real I/O or real timers; see the module docstring for these limits.

        :raises RuntimeError: if the loop is still busy after
            :data:`MAX_SETTLE_YIELDS` yields: some task never blocks.
        """
        # A pending jump is made at the first of these turns.
        steps = _steps_on(asyncio.get_running_loop())
        current = asyncio.current_task()
        # Our own task's steps count too when it was created after the factory was set.
        own = 1 if current is not None and _counted(current) else 0
        quiet = 0
        for _ in range(MAX_SETTLE_YIELDS):
            before = steps.taken
            await asyncio.sleep(0)
            quiet = quiet + 1 if steps.taken - before <= own else 0
            if quiet >= QUIET_TURNS and (quiet >= BLIND_QUIET_TURNS or _sees_all(current)):
                return
        raise RuntimeError(
            f"the event loop did not settle after {MAX_SETTLE_YIELDS} yields: "
            "a task keeps rescheduling itself without ever blocking"
        )


class Advance:
    """One :meth:`FakeClock.advance`: awaited, it steps; left alone, it jumps.

    Until it is awaited it is the clock's pending jump, which the clock makes at
    its next use or the event loop's next turn. Awaiting it first takes it back
    and runs the stepwise advance instead.
    """

    __slots__ = ("_clock", "target")

    def __init__(self, clock: FakeClock, target: datetime) -> None:
        # The clock until the advance is awaited, then None.
        self._clock: FakeClock | None = clock
        self.target = target

    def __await__(self) -> Generator[object, None, None]:
        clock, self._clock = self._clock, None
        if clock is None:
            raise RuntimeError("an advance is awaited at most once")
        if not clock._claim(self):
            raise RuntimeError(
                "this advance was already made as a jump: await it where it is made, "
                "as `await clock.advance(seconds)`"
            )
        return clock._advance_stepwise(self.target).__await__()
