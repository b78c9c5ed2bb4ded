"""When leases are renewed and in how many store calls: each on its own, or a process's together.

A :class:`~workqueue.application.heartbeat.LeaseKeeper` keeps one claim's lease; it asks its
:class:`Heartbeats` to wait until its next heartbeat is due and to send that
heartbeat. There are two:

- :class:`SoloHeartbeats`, for a worker of one executor: each keeper ticks on
  its own, one interval after its last tick, and each heartbeat is one
  :meth:`~workqueue.domain.WorkStore.heartbeat`.
- :class:`SharedHeartbeats`, for the lanes of one process (``WORKQUEUE_CONCURRENCY``
  above 1): the keepers wait for one shared tick, every interval, and the
  heartbeats they send at it go out as one
  :meth:`~workqueue.domain.WorkStore.heartbeat_many`, so a process renews all its leases in
  one statement per interval. Each lease is still fenced and answered on its own,
  and each item's progress is its own.

A keeper that joins between two ticks has its first heartbeat at the next one,
sooner than one interval after its claim, never later.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from datetime import datetime, timedelta
from typing import Any

from pydantic import JsonValue

from workqueue.application.coalescer import Coalescer
from workqueue.domain import (
    Clock,
    HeartbeatAnswer,
    Lease,
    LeaseProgress,
    ProgressSnapshot,
    WorkStore,
)

__all__ = ["Heartbeats", "SharedHeartbeats", "SoloHeartbeats"]


class Heartbeats(ABC):
    """The ticks a lease keeper waits for, and the store calls its heartbeats make.

    :param store: where the heartbeats are written.
    :param clock: what the ticks are timed on.
    :param interval: how often a running item's lease is renewed.
    :param lease_duration: what each heartbeat secures an item for.
    """

    def __init__(
        self, store: WorkStore, clock: Clock, *, interval: timedelta, lease_duration: timedelta
    ) -> None:
        self._store = store
        self._clock = clock
        self._interval = interval
        self.lease_duration = lease_duration

    @abstractmethod
    async def wait(self, seconds: float) -> None:
        """Return at the next tick, or after ``seconds`` if that comes first."""

    @abstractmethod
    async def heartbeat(
        self, lease: Lease, progress: JsonValue | ProgressSnapshot
    ) -> HeartbeatAnswer:
        """Renew ``lease`` for :attr:`lease_duration` and write ``progress``: the store's answer.

        :raises StoreUnavailableError: if the store cannot be reached.
        """


class SoloHeartbeats(Heartbeats):
    """Each keeper's own ticks, one interval apart, and one store call per heartbeat."""

    async def wait(self, seconds: float) -> None:
        await self._clock.sleep(min(self._interval.total_seconds(), seconds))

    async def heartbeat(
        self, lease: Lease, progress: JsonValue | ProgressSnapshot
    ) -> HeartbeatAnswer:
        return await self._store.heartbeat(
            lease, progress=progress, lease_duration=self.lease_duration
        )


class _Tick:
    """One shared tick: when it rings, who waits for it, and the task that rings it."""

    __slots__ = ("at", "rang", "ringer", "waiting")

    def __init__(self, at: datetime, ring: Callable[[_Tick], Coroutine[Any, Any, None]]) -> None:
        self.at = at
        self.rang = asyncio.Event()
        self.waiting = 0
        self.ringer = asyncio.ensure_future(ring(self))


class SharedHeartbeats(Heartbeats):
    """One tick every interval for all the keepers of a process, and one store call per tick.

    The first keeper to wait sets the next tick one interval ahead; the keepers
    that wait before it rings share it. A tick that nobody waits for any more is
    called off. The heartbeats asked for in one turn of the event loop (those of
    the keepers one tick woke) are sent together as one
    :meth:`~workqueue.domain.WorkStore.heartbeat_many`
    (:class:`~workqueue.application.coalescer.Coalescer`);
    if it fails, each of them fails with its error.
    """

    def __init__(
        self, store: WorkStore, clock: Clock, *, interval: timedelta, lease_duration: timedelta
    ) -> None:
        super().__init__(store, clock, interval=interval, lease_duration=lease_duration)
        self._tick: _Tick | None = None
        self._beats = Coalescer(self._heartbeat_many, what=f"{type(store).__name__}.heartbeat_many")

    async def wait(self, seconds: float) -> None:
        tick = self._next_tick()
        # The lease runs out before the tick: wake at its expiry. (At the very instant
        # of the tick either wait ends then: `>=` is an equivalent mutant, ADR 0006.)
        if (tick.at - self._clock.now()).total_seconds() > seconds:  # pragma: no mutate
            await self._clock.sleep(seconds)
            return
        tick.waiting += 1
        try:
            await tick.rang.wait()
        finally:
            tick.waiting -= 1
            if not tick.waiting and not tick.rang.is_set():
                self._call_off(tick)

    def _next_tick(self) -> _Tick:
        tick = self._tick
        if tick is None:
            tick = self._tick = _Tick(self._clock.now() + self._interval, self._ring)
        return tick

    async def _ring(self, tick: _Tick) -> None:
        await self._clock.sleep((tick.at - self._clock.now()).total_seconds())
        self._tick = None
        tick.rang.set()

    def _call_off(self, tick: _Tick) -> None:
        # Only the next tick has waiters and has not rung: ``tick`` is that one.
        self._tick = None
        tick.ringer.cancel()

    async def heartbeat(
        self, lease: Lease, progress: JsonValue | ProgressSnapshot
    ) -> HeartbeatAnswer:
        return await self._beats((lease, progress))

    async def _heartbeat_many(self, beats: list[LeaseProgress]) -> list[HeartbeatAnswer]:
        return await self._store.heartbeat_many(beats, lease_duration=self.lease_duration)
