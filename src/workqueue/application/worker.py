"""The worker loop: recover, schedule, wake a lane, then idle.

The worker runs each of its executors in a lane (:mod:`workqueue.application.lanes`;
one executor is one lane, ``WORKQUEUE_CONCURRENCY`` executors are as many), and
keeps one recovery pass, one scheduler and one notification wait for them all.
Each cycle recovers expired leases, enqueues the periodic kinds that are due,
writes the lanes' count line (:mod:`workqueue.application.tally`), adds what they
ran to the activity by minute (:mod:`workqueue.application.activity`) and wakes one
sleeping lane, which runs items until none is claimable, waking one more lane with
every item it claims. Then the worker idles for the poll interval, woken early by
a work notification (where the store offers them), by the run_at of the next
queued item that waits for it (``WorkStore.next_run_at``, asked as the idle wait
begins) or by :meth:`Worker.stop`. So
expired leases are recovered at every poll interval, whatever the lanes are
running: a worker that never runs dry does not leave a dead worker's item stuck.

A notification, or a waiting item's run_at, that comes within a poll interval of
the last recovery and scheduling pass goes straight to waking a lane: those
passes are the poll's work, and a round trip each before the claim is latency
the new item would wait for. An
unreachable store never ends the loop: the worker says so once, waits, and carries
on when the store is back. A lane that cannot reach the store goes back to sleep;
the loop's next pass meets the outage.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from workqueue.application.activity import ActivityRecorder
from workqueue.application.execution import seconds_text
from workqueue.application.executor import WorkExecutor
from workqueue.application.lanes import ExecutorLanes
from workqueue.application.recovery import LeaseRecovery
from workqueue.application.scheduler import WorkScheduler
from workqueue.application.tally import Tally
from workqueue.domain import Clock, StoreUnavailableError, WorkNotifications

__all__ = ["DEFAULT_POLL_INTERVAL", "Worker"]

logger = logging.getLogger("workqueue.worker")

DEFAULT_POLL_INTERVAL = timedelta(seconds=5)
"""How long an idle worker waits between cycles when no notification wakes it."""


class Worker:
    """One worker process's loop over its executors' lanes, the scheduler and lease recovery.

    :param executor: runs the claimed items; each executor runs in a lane of its
        own, one item at a time (see the module). The first names the worker in its
        log lines and gives the kinds it is woken for.
    :param scheduler: enqueues the due periodic kinds at every cycle.
    :param recovery: requeues expired leases at every cycle.
    :param clock: what the idle wait and the outage backoff sleep on.
    :param poll_interval: how long to idle between cycles, and to wait after a failed one.
    :param notifications: wakes the idle worker early when work may have arrived for
        one of the executor's kinds.
    :param activity: counts the items run by minute for the charts, and adds them to
        the store at every cycle (docs/adr/0040); None records nothing.
    :raises ValueError: if ``poll_interval`` is not positive, or no executor is given.
    :raises TypeError: if ``poll_interval`` is not a :class:`~datetime.timedelta`.
    """

    def __init__(
        self,
        *,
        executor: WorkExecutor | Sequence[WorkExecutor],
        scheduler: WorkScheduler,
        recovery: LeaseRecovery,
        clock: Clock,
        poll_interval: timedelta = DEFAULT_POLL_INTERVAL,
        notifications: WorkNotifications | None = None,
        activity: ActivityRecorder | None = None,
    ) -> None:
        if not isinstance(poll_interval, timedelta):
            raise TypeError(f"poll_interval must be a timedelta, not {poll_interval!r}")
        if not poll_interval > timedelta(0):
            raise ValueError(f"poll_interval must be positive, not {seconds_text(poll_interval)}")
        executors = (executor,) if isinstance(executor, WorkExecutor) else tuple(executor)
        self._tally = Tally(clock, activity)
        self._activity = activity
        self._lanes = ExecutorLanes(executors, self._tally)
        self._executor = executors[0]
        self._concurrency = len(executors)
        self._scheduler = scheduler
        self._recovery = recovery
        self._clock = clock
        self._poll_interval = poll_interval
        # What the clock sleeps take, computed once.
        self._poll_seconds = poll_interval.total_seconds()
        self._notifications = notifications
        # Set by stop(): ends the idle wait, and the loop.
        self._stop_event = asyncio.Event()
        # Held while run() runs: one run at a time.
        self._running = asyncio.Lock()
        self._outage_since: datetime | None = None
        # When the next full cycle is due even for a notification; set by every cycle's
        # recovery pass, and a run starts with one.
        self._next_recovery: datetime

    @property
    def concurrency(self) -> int:
        """How many items this worker runs at a time: one per executor."""
        return self._concurrency

    @property
    def poll_interval(self) -> timedelta:
        """How long the worker idles between cycles."""
        return self._poll_interval

    async def run(self) -> None:
        """Run cycles until :meth:`stop` is called, then return.

        A worker runs once: after it stops, ``run`` returns at once. If this task is
        cancelled instead, the lanes still release the items they were running.

        :raises RuntimeError: if this worker is already running.
        """
        if self._running.locked():
            raise RuntimeError("this worker is already running")
        async with self._running:
            concurrency = self._concurrency
            logger.info(
                "worker %s started for kinds %s%s",
                self._executor.worker_id,
                ", ".join(sorted(self._executor.kinds)),
                "" if concurrency == 1 else f", {concurrency} items at a time",
            )
            lanes = self._lanes.start()
            try:
                await self._cycles()
            finally:
                # Every lane releases its running and held item; then the last count.
                self._lanes.stop()
                try:
                    await lanes
                finally:
                    self._tally.log()
                await self._record_the_last_activity()
                logger.info("worker %s stopped", self._executor.worker_id)

    async def _record_the_last_activity(self) -> None:
        """Add what the lanes ran since the last cycle to the activity, if the store answers."""
        if self._activity is not None:
            try:
                await self._activity.run_once()
            except StoreUnavailableError:
                logger.warning(
                    "worker %s stopped without recording its last activity: the store is"
                    " unreachable",
                    self._executor.worker_id,
                )

    async def _cycles(self) -> None:
        """Cycle until stopped: a full cycle first, after an outage, and after every poll."""
        full = True
        while not self._stop_event.is_set():
            if full:
                try:
                    await self._cycle()
                except StoreUnavailableError as error:
                    self._store_unavailable(error)
                    # No early wake-up: the poll interval is the outage's backoff.
                    await self._idle(None, None)
                    continue
            self._lanes.wake()
            woken = await self._idle(self._notifications, await self._next_run_at())
            # Woken by a notification or a run_at within a poll interval of the last
            # recovery pass: straight to waking a lane. Asking the clock alone would
            # not do: a wall clock stepped back would then skip the passes a poll is owed.
            full = not woken or self._clock.now() >= self._next_recovery

    async def _cycle(self) -> None:
        """Recover expired leases, enqueue the due periodic kinds, log and record what ran.

        The next full cycle is due a poll interval from now. A recovery pass that
        reaches the store ends an outage.

        :raises StoreUnavailableError: if the store cannot be reached.
        """
        self._next_recovery = self._clock.now() + self._poll_interval
        await self._recovery.run_once()
        self._store_reachable()
        await self._scheduler.run_once()
        self._tally.log()
        if self._activity is not None:
            await self._activity.run_once()

    def stop(self) -> None:
        """Stop claiming, cancel the running handlers (their items are released), end :meth:`run`.

        Synchronous and idempotent: call it from a signal handler
        (``loop.add_signal_handler``), or from another thread through
        ``loop.call_soon_threadsafe``.
        """
        if self._stop_event.is_set():
            return
        self._stop_event.set()
        logger.info("worker %s stopping", self._executor.worker_id)
        self._lanes.stop()

    async def _next_run_at(self) -> datetime | None:
        """When the next item of the kinds that waits for its run_at becomes claimable; None
        when none waits, or when the store cannot say (the next full cycle meets that)."""
        try:
            return await self._executor.next_run_at()
        except StoreUnavailableError as error:
            logger.debug("could not ask when the next waiting item is due: %s", error)
            return None

    async def _idle(self, notifications: WorkNotifications | None, due: datetime | None) -> bool:
        """Wait the poll interval, or less if stopped, if ``notifications`` says work came, or
        until ``due``, when an item waiting for its run_at becomes claimable.

        Returns True when a notification or ``due`` ended the wait. A notification wait
        that fails is dropped for this idle period; the poll interval still bounds the
        wait.
        """
        seconds = self._poll_seconds
        if due is not None:
            seconds = min(seconds, max(0.0, (due - self._clock.now()).total_seconds()))
        waits: list[asyncio.Task[Any]] = [
            asyncio.create_task(self._clock.sleep(seconds)),
            asyncio.create_task(self._stop_event.wait()),
        ]
        notified = (
            None
            if notifications is None
            else asyncio.create_task(notifications.wait_for_work(self._executor.kinds))
        )
        if notified is not None:
            waits.append(notified)
        pending = set(waits)
        try:
            # Ends by a return: the poll interval's sleep always finishes.
            while True:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                if notified not in done or notified.cancelled():
                    # The sleep ended it (or a stop, after which nothing is asked).
                    return seconds < self._poll_seconds
                if notified.exception() is None:
                    return True
                logger.debug(
                    "waiting for work notifications failed: %s; polling instead",
                    notified.exception(),
                )
        finally:
            for wait in waits:
                wait.cancel()
            # Let the cancelled waits unwind (a listener gives back its connection).
            await asyncio.gather(*waits, return_exceptions=True)

    def _store_unavailable(self, error: StoreUnavailableError) -> None:
        """Log the start of an outage once; later failures of the same outage are quiet."""
        if self._outage_since is not None:
            logger.debug("store still unavailable: %s", error)
            return
        self._outage_since = self._clock.now()
        logger.warning("store unavailable: %s; retrying every %.1f s", error, self._poll_seconds)

    def _store_reachable(self) -> None:
        """Log the end of an outage, if one was going on."""
        if self._outage_since is None:
            return
        down_for = (self._clock.now() - self._outage_since).total_seconds()
        self._outage_since = None
        logger.info("store reachable again after %.1f s", down_for)
