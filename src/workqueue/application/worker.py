"""The worker loop: recover, schedule, execute until nothing is claimable, then idle.

Each cycle recovers expired leases, enqueues the periodic kinds that are due, and
runs items one at a time until none is claimable, recovering expired leases again
between items whenever a poll interval has passed: a worker that never runs dry
must not leave a dead worker's item stuck until it does. Then the worker idles for
the poll interval, woken early by a work notification (where the store offers them)
or by :meth:`Worker.stop`. A notification that comes within a poll interval of
the last recovery and scheduling pass goes straight to claiming: those passes are
the poll's work, and a round trip each before the claim is latency the new item
would wait for. An unreachable store never ends the loop: the worker says so
once, waits, and carries on when the store is back.

Given several executors (``WORKQUEUE_CONCURRENCY``), the worker runs each in a
lane of its own (:mod:`workqueue.application.lanes`) and keeps one recovery pass, one
scheduler and one notification wait for them all: where a single executor's
worker runs items itself, a worker of lanes wakes one sleeping lane, and every
item a lane claims wakes one more. Its recovery passes come with each poll
interval's full cycle, whatever the lanes are running.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from workqueue.application.execution import ExecutionStatus, seconds_text
from workqueue.application.executor import WorkExecutor
from workqueue.application.lanes import ExecutorLanes
from workqueue.application.recovery import LeaseRecovery
from workqueue.application.scheduler import WorkScheduler
from workqueue.domain import Clock, StoreUnavailableError, WorkNotifications

__all__ = ["DEFAULT_POLL_INTERVAL", "Worker"]

logger = logging.getLogger("workqueue.worker")

DEFAULT_POLL_INTERVAL = timedelta(seconds=5)
"""How long an idle worker waits between cycles when no notification wakes it."""


_RunCounts = Counter[tuple[ExecutionStatus, str]]
"""Items run, counted by how they ended and their kind: one increment per item."""


@dataclass(slots=True)
class _Stretch:
    """Items run since ``began``, counted by how they ended and their kind, for the INFO line."""

    began: datetime
    counts: _RunCounts = field(default_factory=Counter)


def count_line(counts: _RunCounts) -> tuple[str, dict[str, object]]:
    """What the worker's INFO line says of ``counts``, and its fields.

    The text gives each way items ended with its count, then the kinds that ended
    so, the most frequent first: ``810 succeeded (send_digest 809, token_cleanup 1),
    2 failed (send_digest)`` (a kind alone there is not counted again). The fields
    are the count of each way (``succeeded``: 810) and ``by_kind``, each kind's
    counts by how its items ended (``{"send_digest": {"succeeded": 809, "failed": 2}}``).
    """
    ended: dict[str, dict[str, int]] = {}
    by_kind: dict[str, dict[str, int]] = {}
    for (status, kind), count in counts.items():
        ended.setdefault(status.value, {})[kind] = count
        by_kind.setdefault(kind, {})[status.value] = count
    parts: list[str] = []
    fields: dict[str, object] = {}
    for status in ExecutionStatus:
        kinds = ended.get(status.value)
        if kinds is None:
            continue
        total = sum(kinds.values())
        fields[status.value] = total
        ranked = sorted(kinds.items(), key=lambda kind_count: (-kind_count[1], kind_count[0]))
        named = ranked[0][0] if len(ranked) == 1 else ", ".join(f"{k} {n}" for k, n in ranked)
        parts.append(f"{total} {status.value} ({named})")
    fields["by_kind"] = {kind: by_kind[kind] for kind in sorted(by_kind)}
    return ", ".join(parts), fields


class Worker:
    """One worker process's loop over the executor, scheduler and lease recovery.

    :param executor: runs the claimed items; several executors run in lanes of
        their own, each one item at a time (see the module).
    :param scheduler: enqueues the due periodic kinds at every cycle.
    :param recovery: requeues expired leases at every cycle.
    :param clock: what the idle wait and the outage backoff sleep on.
    :param poll_interval: how long to idle between cycles, and to wait after a failed one.
    :param notifications: wakes the idle worker early when work may have arrived for
        one of the executor's kinds.
    :raises ValueError: if ``poll_interval`` is not positive.
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
    ) -> None:
        if not isinstance(poll_interval, timedelta):
            raise TypeError(f"poll_interval must be a timedelta, not {poll_interval!r}")
        if not poll_interval > timedelta(0):
            raise ValueError(f"poll_interval must be positive, not {seconds_text(poll_interval)}")
        executors = (executor,) if isinstance(executor, WorkExecutor) else tuple(executor)
        # Several executors run in lanes (one alone runs in the loop itself); the
        # first names the worker in its log lines.
        self._lanes = None if len(executors) == 1 else ExecutorLanes(executors)
        self._executor = executors[0]
        self._concurrency = len(executors)
        self._scheduler = scheduler
        self._recovery = recovery
        self._clock = clock
        self._poll_interval = poll_interval
        # What the clock sleeps take, computed once.
        self._poll_seconds = poll_interval.total_seconds()
        self._notifications = notifications
        self._stop_requested = False
        self._stop_event = asyncio.Event()
        # Held while run() runs: one run at a time.
        self._running = asyncio.Lock()
        self._outage_since: datetime | None = None
        # When a busy cycle next recovers expired leases between items; set by every
        # recovery pass, and a run starts with one.
        self._next_recovery: datetime
        # What the lanes ran since the last full cycle's count; none before the first.
        self._lanes_stretch: _Stretch | None = None

    @property
    def stopping(self) -> bool:
        """True once :meth:`stop` was called."""
        return self._stop_requested

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
        cancelled instead, the executor still releases the item it was running.

        :raises RuntimeError: if this worker is already running.
        """
        if self._running.locked():
            raise RuntimeError("this worker is already running")
        async with self._running:
            logger.info(
                "worker %s started for kinds %s%s",
                self._executor.worker_id,
                ", ".join(sorted(self._executor.kinds)),
                "" if self._lanes is None else f", {self.concurrency} items at a time",
            )
            lanes = None if self._lanes is None else self._lanes.start()
            try:
                await self._cycles()
            finally:
                if lanes is not None:
                    await self._stop_lanes(lanes)
                logger.info("worker %s stopped", self._executor.worker_id)

    async def _stop_lanes(self, lanes: asyncio.Future[list[None]]) -> None:
        """Stop every lane (each releases its running and held item) and wait for them."""
        assert self._lanes is not None
        self._lanes.stop()
        try:
            await lanes
        finally:
            self._log_lanes()

    async def _cycles(self) -> None:
        """Cycle until stopped: a full cycle first, after an outage, and after every poll."""
        cycle = self.run_cycle
        while not self._stop_requested:
            try:
                await cycle()
            except StoreUnavailableError as error:
                self._store_unavailable(error)
                # No early wake-up: the poll interval is the outage's backoff.
                await self._idle(None)
                cycle = self.run_cycle
                continue
            notified = await self._idle(self._notifications)
            # Woken by a notification within a poll interval of the last recovery pass:
            # straight to claiming. Asking the clock alone would not do: a wall clock
            # stepped back would then skip the passes a poll is owed.
            quick = notified and self._clock.now() < self._next_recovery
            cycle = self._run_items if quick else self.run_cycle

    async def run_cycle(self) -> int:
        """One cycle: recover expired leases, schedule due kinds, run items until none is left.

        Between items, expired leases are recovered again whenever a poll interval
        has passed since the last pass. Stops running items once :meth:`stop` is
        called. Returns how many items were run (whatever their outcome).

        :raises StoreUnavailableError: if the store cannot be reached.
        """
        await self._recover()
        await self._scheduler.run_once()
        if self._lanes is not None:
            self._log_lanes()
        return await self._run_items()

    async def _run_items(self) -> int:
        """Run items until none is claimable, recovering expired leases when a pass is due.

        The executor claims each next item along with the previous one's completion;
        whatever ends the run, an item still held for a next turn is released.

        A worker of lanes wakes one sleeping lane instead and returns 0 at once: the
        lanes run the items, and wake one another while there are more.

        :raises StoreUnavailableError: if the store cannot be reached.
        """
        if self._lanes is not None:
            self._lanes.wake()
            return 0
        executed = 0
        stretch = _Stretch(self._clock.now())
        try:
            while not self._stop_requested:
                # Each success is completed together with the next item's claim.
                outcome = await self._executor.run_next(claim_next=True)
                if outcome is None:
                    break
                executed += 1
                stretch.counts[outcome.status, outcome.kind] += 1
                if self._clock.now() >= self._next_recovery:
                    stretch = self._log_stretch(stretch)
                    await self._recover()
        finally:
            # Stopped, cancelled or cut off with an item claimed for the next turn:
            # hand it back now rather than let its lease run out.
            await self._executor.release_held()
            self._log_stretch(stretch)
        return executed

    def _log_stretch(self, stretch: _Stretch) -> _Stretch:
        """Log what the items run since ``stretch`` began came to, if any; start a new one.

        One INFO line per run of items, and one per poll interval of a long run: how
        many, in how long, how they ended and of which kinds (see :func:`count_line`).
        Each item's own line is DEBUG (a failure or a lost lease is also a WARNING of
        its own).
        """
        now = self._clock.now()
        items = sum(stretch.counts.values())
        if items:
            text, fields = count_line(stretch.counts)
            seconds = (now - stretch.began).total_seconds()
            logger.info(
                "ran %d %s in %.3f s: %s",
                items,
                "item" if items == 1 else "items",
                seconds,
                text,
                extra={"items": items, "seconds": seconds, **fields},
            )
        return _Stretch(now)

    def _log_lanes(self) -> None:
        """The lanes' INFO line: what they ran since the last one (none when they ran nothing)."""
        assert self._lanes is not None
        if self._lanes_stretch is not None:
            self._lanes_stretch.counts, self._lanes.counts = self._lanes.counts, Counter()
            self._log_stretch(self._lanes_stretch)
        self._lanes_stretch = _Stretch(self._clock.now())

    async def _recover(self) -> None:
        """One lease-recovery pass; the next is due a poll interval from now.

        A pass that reaches the store ends an outage: a busy cycle may run long after
        the store came back, and the next outage must be told apart from this one.
        """
        self._next_recovery = self._clock.now() + self._poll_interval
        await self._recovery.run_once()
        self._store_reachable()

    def stop(self) -> None:
        """Stop claiming, cancel the running handler (its item is released) and end :meth:`run`.

        Synchronous and idempotent: call it from a signal handler
        (``loop.add_signal_handler``), or from another thread through
        ``loop.call_soon_threadsafe``.
        """
        if self._stop_requested:
            return
        self._stop_requested = True
        logger.info("worker %s stopping", self._executor.worker_id)
        self._stop_event.set()
        if self._lanes is None:
            self._executor.stop()
        else:
            self._lanes.stop()

    async def _idle(self, notifications: WorkNotifications | None) -> bool:
        """Wait the poll interval, or less if stopped or ``notifications`` says work came.

        Returns True when a notification ended the wait. A notification wait that
        fails is dropped for this idle period; the poll interval still bounds the wait.
        """
        waits: list[asyncio.Task[Any]] = [
            asyncio.create_task(self._clock.sleep(self._poll_seconds)),
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
                    return False
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
