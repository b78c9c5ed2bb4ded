"""The loop watchdog: a handler that blocks the event loop costs only its own item.

Every lane of a worker process runs on one event loop (docs/adr/0019). A handler
that blocks it (a ``time.sleep``, a synchronous HTTP call, a long computation)
stops every heartbeat of the process: without a watchdog the lane-mates' leases
would run out, their items be reclaimed elsewhere while their handlers go on,
and collect the blocker's stalls. The watchdog (docs/adr/0036) keeps that from
happening:

- :class:`LoopPulse` is the loop's sign of life: a callback on the loop that
  notes, every period, the monotonic time it ran.
- :class:`LoopWatchdog` is a thread of its own that looks every period at how long
  the pulse has been silent, and which task is running on the loop meanwhile.
- :class:`BlockedLoopGuard` is what each look does. Once the loop has been blocked
  for a heartbeat interval, it names the blocker in the log (its kind, item,
  attempt and the line it blocks at) and, every heartbeat interval while the block
  lasts, renews on a store of its own the lease of every item this worker holds
  (running, held for the next run, or claimed by a statement still in flight)
  except the blocker's. The blocker's lease runs out as it would have: it alone
  stalls. The claims it can see are told how long their leases are secured
  (:attr:`~workqueue.application.claim.Claim.secured_until`); the others find it in
  :class:`~workqueue.application.renewals.Renewals` when they are built.

A block that ends is logged with how long it lasted.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from datetime import datetime, timedelta
from functools import partial
from inspect import CO_COROUTINE
from typing import Any

from workqueue.application.claim import Claim
from workqueue.application.executor import WorkExecutor
from workqueue.application.renewals import Renewals
from workqueue.domain import Clock, Lease, LeaseProgress, WorkStatus, WorkStore

__all__ = ["BlockedLoopGuard", "LoopPulse", "LoopWatchdog", "line_of", "pulse_period"]

logger = logging.getLogger("workqueue.watchdog")

# How many of its running items one look reads at most: far more than one process holds.
_LISTED = 10_000

ADVICE = (
    "a handler must not block the event loop: run blocking code in a thread"
    " (asyncio.to_thread) and await it"
)
"""What the log says a handler must do instead."""


def pulse_period(heartbeat_interval: timedelta) -> float:
    """How often the loop's pulse beats and the watchdog looks, in seconds: a quarter of
    the heartbeat interval, at most a quarter of a second."""
    return min(0.25, heartbeat_interval.total_seconds() / 4)


class LoopPulse:
    """The watched loop's sign of life: :attr:`last` is when its pulse last ran.

    :param period: seconds between two beats.
    :param monotonic: the time the beats are noted on.
    """

    __slots__ = ("_handle", "_loop", "_monotonic", "_period", "last")

    def __init__(self, period: float, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._period = period
        self._monotonic = monotonic
        self._handle: asyncio.TimerHandle | None = None
        self.last = monotonic()

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Beat now and every period on ``loop``; call it on that loop's thread."""
        self._loop = loop
        self._beat()

    def _beat(self) -> None:
        self.last = self._monotonic()
        self._handle = self._loop.call_later(self._period, self._beat)

    def stop(self) -> None:
        """Beat no more."""
        if self._handle is not None:
            self._handle.cancel()


class _Spell:
    """One block of the loop by one task: who, for how long so far, and how long it had
    lasted at the last renewal."""

    __slots__ = ("blocked_for", "blocker", "renewed_for")

    def __init__(self, blocker: Claim | None, blocked_for: float) -> None:
        self.blocker = blocker
        self.blocked_for = blocked_for
        """How long the loop had been blocked at the last look."""
        self.renewed_for: float | None = None


class BlockedLoopGuard:
    """What the watchdog does at each look (see the module).

    It runs on the watchdog's own event loop; the claims and renewals it writes to
    are the watched loop's, each write a single attribute or dictionary step.

    :param executors: the process's executors (one per lane), whose running and
        held claims it sees.
    :param renewals: where it notes each lease it renewed, for the claims still in
        flight; the same the executors' claimers read.
    :param clock: the time the leases are measured on (the executors' clock).
    :param worker_id: the process's worker id: only the items it holds are renewed.
    :param heartbeat_interval: how long the loop must be blocked before the guard
        acts, and how often it renews while the block lasts.
    :param lease_duration: what each renewal secures an item for.
    :param open_store: opens the store the guard renews through, on first need; it
        is the guard's own (a connection of its own on PostgreSQL), closed by
        :meth:`close`.
    """

    def __init__(
        self,
        executors: Sequence[WorkExecutor],
        renewals: Renewals,
        clock: Clock,
        *,
        worker_id: str,
        heartbeat_interval: timedelta,
        lease_duration: timedelta,
        open_store: Callable[[], AbstractAsyncContextManager[WorkStore]],
    ) -> None:
        self._executors = tuple(executors)
        self._renewals = renewals
        self._clock = clock
        self._worker_id = worker_id
        self._after = heartbeat_interval.total_seconds()
        self._lease_duration = lease_duration
        self._open_store = open_store
        self._stack: AsyncExitStack | None = None
        self._store: WorkStore | None = None
        self._spell: _Spell | None = None

    async def look(
        self,
        *,
        blocked_for: float,
        running: asyncio.Task[Any] | None,
        where: Callable[[], str] = str,
    ) -> None:
        """One look at the watched loop: silent for ``blocked_for`` seconds, running
        ``running`` (its current task, or None), at the line ``where()`` says (``" at
        file:line in function"``, or ``""``)."""
        self._renewals.forget_before(self._clock.now())
        if blocked_for < self._after:
            self._end_spell()
            return
        blocker = self._blocker_of(running)
        spell = self._spell
        if spell is None or spell.blocker is not blocker:
            self._end_spell()
            spell = self._spell = _Spell(blocker, blocked_for)
            self._warn(spell, blocked_for, running, where())
        else:
            spell.blocked_for = blocked_for
        if spell.renewed_for is None or blocked_for - spell.renewed_for >= self._after:
            spell.renewed_for = blocked_for
            await self._renew(blocker)

    async def close(self) -> None:
        """Log the end of a block still open (the loop that stops the watchdog runs), and
        close the store the guard opened, if it opened one."""
        self._end_spell()
        if self._stack is not None:
            await self._stack.aclose()

    def _blocker_of(self, running: asyncio.Task[Any] | None) -> Claim | None:
        for executor in self._executors:
            handler = executor.running
            if handler is not None and handler[0] is running:
                return handler[1]
        return None

    def _claims(self) -> Iterator[Claim]:
        for executor in self._executors:
            handler = executor.running
            if handler is not None:
                yield handler[1]
            held = executor.held
            if held is not None:
                yield held

    def _warn(
        self, spell: _Spell, blocked_for: float, running: asyncio.Task[Any] | None, where: str
    ) -> None:
        by = _blocker_named(spell.blocker)
        if spell.blocker is None and running is not None:
            by = f"{by} ({running.get_name()})"
        logger.warning(
            "the event loop has been blocked for %.1f s by %s%s; the leases of this"
            " worker's other items are renewed meanwhile; %s",
            blocked_for,
            by,
            where,
            ADVICE,
            extra=_log_extra(spell.blocker),
        )

    def _end_spell(self) -> None:
        spell = self._spell
        if spell is None:
            return
        self._spell = None
        logger.warning(
            "the event loop was blocked for at least %.1f s by %s",
            spell.blocked_for,
            _blocker_named(spell.blocker),
            extra=_log_extra(spell.blocker),
        )

    async def _renew(self, blocker: Claim | None) -> None:
        """Renew every lease this worker holds but the blocker's; log, never raise, a failure."""
        try:
            store = await self._opened_store()
            items = await store.list_items(
                statuses=[WorkStatus.RUNNING], worker_ids=[self._worker_id], limit=_LISTED
            )
            blocked = None if blocker is None else blocker.item.lease
            beats: list[LeaseProgress] = [
                (item.lease, item.progress) for item in items if item.lease != blocked
            ]
            if not beats:
                return
            until = self._clock.now() + self._lease_duration
            answers = await store.heartbeat_many(beats, lease_duration=self._lease_duration)
        except Exception:
            logger.warning(
                "the watchdog could not renew the leases of this worker's items; it tries"
                " again at its next look",
                exc_info=True,
            )
            return
        renewed = {beats[index][0] for index, answer in enumerate(answers) if answer}
        self._secure(renewed, until)

    def _secure(self, renewed: set[Lease], until: datetime) -> None:
        for lease in renewed:
            self._renewals.note(lease, until)
        for claim in self._claims():
            if claim.item.lease in renewed:
                claim.secured_until = max(claim.secured_until, until)

    async def _opened_store(self) -> WorkStore:
        if self._store is None:
            stack = AsyncExitStack()
            self._store = await stack.enter_async_context(self._open_store())
            self._stack = stack
        return self._store


def _blocker_named(blocker: Claim | None) -> str:
    if blocker is None:
        return "a task that runs no item's handler"
    item = blocker.item
    return f"{item.kind} item {item.id} (attempt {item.attempt})"


def _log_extra(blocker: Claim | None) -> dict[str, Any]:
    return {} if blocker is None else blocker.log_extra


class LoopWatchdog:
    """A thread, ``workqueue-watchdog``, that looks at the watched event loop every period
    (see the module). A daemon: it never holds up the process's exit.

    :param guard: what each look does.
    :param period: seconds between two looks, and between two beats of the pulse.
    :param stop_grace: seconds :meth:`stop` waits for the thread to end (a look in
        progress, then the closing of the guard's store); past them the worker stops
        without it, and the daemon thread ends with the process.
    :param monotonic: the time the pulse and the looks are measured on.
    """

    _loop_thread: int
    """The ident of the watched loop's thread, set by :meth:`start`."""

    def __init__(
        self,
        guard: BlockedLoopGuard,
        *,
        period: float,
        stop_grace: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._guard = guard
        self._period = period
        self.stop_grace = stop_grace
        self._monotonic = monotonic
        self._pulse = LoopPulse(period, monotonic)
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the pulse on the running loop and the watchdog's thread; call it on that loop."""
        loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._pulse.start(loop)
        self._thread = threading.Thread(
            target=self._watch, args=(loop,), name="workqueue-watchdog", daemon=True
        )
        self._thread.start()

    async def stop(self) -> None:
        """Stop looking, and wait (off the loop, at most :attr:`stop_grace` seconds) until
        the thread has closed its store."""
        self._pulse.stop()
        self._stopped.set()
        thread = self._thread
        if thread is None:
            return
        await asyncio.to_thread(thread.join, self.stop_grace)
        if thread.is_alive():
            logger.warning(
                "the watchdog did not stop within %.1f s (a look at the loop, or the closing"
                " of its store, is slow); the worker stops without waiting for it",
                self.stop_grace,
            )

    def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        own = asyncio.new_event_loop()
        try:
            while not self._stopped.wait(self._period):
                blocked_for = self._monotonic() - self._pulse.last
                running = asyncio.current_task(loop)
                where = partial(line_of, self._loop_thread)
                own.run_until_complete(
                    self._guard.look(blocked_for=blocked_for, running=running, where=where)
                )
        finally:
            own.run_until_complete(self._guard.close())
            own.close()


def line_of(thread: int) -> str:
    """Where the thread of ident ``thread`` is stuck: `` at file:line in function``, or
    ``""`` when no such thread runs.

    The line is that of the innermost coroutine on the thread's stack (the async
    function that called the blocking code: a handler's own line, not one deep in a
    socket library), else the thread's innermost line.
    """
    innermost = sys._current_frames().get(thread)
    frame = innermost
    while frame is not None and not frame.f_code.co_flags & CO_COROUTINE:
        frame = frame.f_back
    frame = frame or innermost
    if frame is None:
        return ""
    code = frame.f_code
    return f" at {code.co_filename}:{frame.f_lineno} in {code.co_name}"
