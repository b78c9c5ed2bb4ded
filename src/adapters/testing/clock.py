"""FakeClock: time that moves only when a test moves it.

Every store and service takes a :class:`~domain.Clock`. Giving them a FakeClock
makes a test deterministic: ``now()`` stands still, ``sleep()`` parks the caller,
and :meth:`FakeClock.advance` moves time forward, waking exactly the sleepers that
have become due, one at a time, in deadline order.

How settling works
------------------
After it wakes a sleeper (and before it moves time again), the clock *settles*:
it yields to the event loop, again and again, until the loop has no callback
ready to run. At that point every task that was woken has run until it blocks
again, either on another ``clock.sleep``, on a future or lock, or on real I/O.

Limits of settling:

- It sees only the event loop's ready queue. A task waiting on real I/O (a
  database round trip, a socket) or on a real timer (``asyncio.sleep(0.1)``,
  ``asyncio.wait_for`` with a timeout) is *blocked* as far as settling can tell,
  so ``advance`` may move time on before that task continues. Code under test
  that does I/O must be awaited by the test itself, not left to ``advance``.
- It reads the ready queue of asyncio's own loops (``loop._ready``). On a loop
  without one (uvloop) it falls back to a fixed number of yields, which is
  enough for in-memory code whose tasks each need only a few steps.
- A task that never blocks (``while True: await asyncio.sleep(0)``) can never
  settle; after :data:`MAX_SETTLE_YIELDS` yields :meth:`FakeClock.settle` raises
  instead of hanging the test.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

__all__ = ["DEFAULT_START", "MAX_SETTLE_YIELDS", "Advance", "FakeClock"]

DEFAULT_START = datetime(2026, 1, 1, tzinfo=UTC)
"""Where a FakeClock starts unless told otherwise."""

MAX_SETTLE_YIELDS = 10_000
"""How many times :meth:`FakeClock.settle` yields before it gives up on a busy task."""

# Without a readable ready queue, this many yields stands in for "until all block".
_BLIND_SETTLE_YIELDS = 100


@dataclass(order=True)
class _Sleeper:
    """One parked ``sleep``: ordered by deadline, then by when it was registered."""

    deadline: datetime
    sequence: int
    wake: asyncio.Future[None] = field(compare=False)


class FakeClock:
    """A deterministic :class:`~domain.Clock` for tests.

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

    def now(self) -> datetime:
        """The clock's current time, timezone-aware, in UTC. It moves only in :meth:`advance`."""
        return self._now

    @property
    def sleepers(self) -> int:
        """How many tasks are parked in :meth:`sleep` right now."""
        return len(self._sleepers)

    async def sleep(self, seconds: float) -> None:
        """Park the caller until :meth:`advance` reaches now + ``seconds``.

        ``seconds <= 0`` does not park: it yields to the event loop once. A sleeper
        that is cancelled is forgotten, so it neither counts in :attr:`sleepers` nor
        holds up a later :meth:`advance`.

        :raises asyncio.CancelledError: when the sleeping task is cancelled.
        """
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        sleeper = _Sleeper(
            deadline=self._now + timedelta(seconds=seconds),
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
        jump is made at once and synchronously: the sleepers due by then are woken
        in deadline order, each with ``now()`` at its deadline when it is woken,
        and ``now()`` ends at the start plus ``seconds``. The woken tasks run at
        the event loop's next turn and see the final time; a task that parks again
        within the jump is not woken again. Await it when a task's steps between
        deadlines matter.

        :raises ValueError: if ``seconds`` is negative (time never goes back).
        :raises RuntimeError: if a task never blocks (see :meth:`settle`).
        """
        if seconds < 0:
            raise ValueError(f"a FakeClock cannot go back in time ({seconds} s)")
        return Advance(self, self._now + timedelta(seconds=seconds))

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

        Yields to the event loop until, on resuming, it finds the loop's ready queue
        empty: every other task is then parked (on this clock, a future, a lock) or
        waiting on I/O. It cannot wait for tasks blocked on real I/O or real timers;
        see the module docstring for these limits.

        :raises RuntimeError: if the loop is still busy after
            :data:`MAX_SETTLE_YIELDS` yields: some task never blocks.
        """
        loop = asyncio.get_running_loop()
        ready = getattr(loop, "_ready", None)
        if ready is None:
            for _ in range(_BLIND_SETTLE_YIELDS):
                await asyncio.sleep(0)
            return
        for _ in range(MAX_SETTLE_YIELDS):
            await asyncio.sleep(0)
            if not ready:
                return
        raise RuntimeError(
            f"the event loop did not settle after {MAX_SETTLE_YIELDS} yields: "
            "a task keeps rescheduling itself without ever blocking"
        )


class Advance:
    """A pending :meth:`FakeClock.advance`: awaited, it steps; dropped, it jumps.

    Awaiting it runs the stepwise advance. If it is never awaited, the jump is
    made synchronously when the object is released, which CPython does at once
    for ``clock.advance(n)`` written as a plain statement.
    """

    __slots__ = ("_clock", "_target")

    def __init__(self, clock: FakeClock, target: datetime) -> None:
        self._clock = clock
        # Where the jump goes when the advance is released; None once it was awaited.
        self._target: datetime | None = target

    def __await__(self) -> Generator[object, None, None]:
        target, self._target = self._target, None
        if target is None:
            raise RuntimeError("an advance is awaited at most once")
        return self._clock._advance_stepwise(target).__await__()

    def __del__(self) -> None:
        if self._target is not None:
            self._clock._jump(self._target)
