"""Lanes: a worker's executors, each running one item at a time in a task of its own.

A worker runs each of its executors (one, or ``WORKQUEUE_CONCURRENCY`` of them)
in a *lane*: a task that sleeps until it is woken, then runs items until none is
claimable, then sleeps again. The worker loop keeps the one recovery pass, the
one scheduler and the one notification wait of the process; it runs items by
waking a lane (:meth:`ExecutorLanes.wake`).

Waking is one lane at a time, never all of them: a notification or a poll wakes
one idle lane, and each lane that gets an item wakes one more, if one is idle.
So one new item wakes two lanes (the second finds nothing and sleeps again), and a
backlog fills every lane within N claims, without N lanes racing for one item.
FIFO between lanes comes from the claim itself: each claims the oldest queued item.
Each lane claims its next item along with the last one's completion
(``run_next(claim_next=True)``), and hands back what it held when its run ends.

The lanes count every item they run into the worker's
:class:`~workqueue.application.tally.Tally`. A run of items begins when a lane is
woken while every lane sleeps, and ends when every lane sleeps again: the tally's
line is written then.

Each lane's executor keeps its own item's lease: a lost lease cancels that
lane's handler and no other. :meth:`ExecutorLanes.stop` stops every executor
(each releases its running and held item) and ends the lanes;
:meth:`ExecutorLanes.start` gives the task that ends once every lane has handed
its items back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from workqueue.application.executor import WorkExecutor
from workqueue.application.tally import Tally
from workqueue.domain import StoreUnavailableError

__all__ = ["DEFAULT_CONCURRENCY", "ExecutorLanes"]

logger = logging.getLogger("workqueue.worker")

DEFAULT_CONCURRENCY = 1
"""How many executors a worker process runs unless told otherwise: one item at a time."""


class ExecutorLanes:
    """The lanes of one worker process, one per executor (see the module).

    :param executors: one per lane; each runs one item at a time.
    :param tally: counts the items the lanes run, and writes their line when a run
        of items ends.
    :raises ValueError: if ``executors`` is empty.
    """

    # Set by stop(), for good: every lane ends.
    _stopping = False

    def __init__(self, executors: Sequence[WorkExecutor], tally: Tally) -> None:
        if not executors:
            raise ValueError("a worker needs at least one executor")
        self._executors = tuple(executors)
        self._tally = tally
        # Lanes asleep, oldest first: a wake-up goes to the one that slept longest.
        self._asleep: list[asyncio.Event] = []

    def wake(self) -> None:
        """Wake one sleeping lane, the one asleep longest; none if every lane is busy.

        Waking a lane while every lane sleeps begins a run of items.
        """
        asleep = self._asleep
        if asleep:
            if len(asleep) == len(self._executors):
                self._tally.begin()
            asleep.pop(0).set()

    def stop(self) -> None:
        """Stop every executor (each releases its item) and end every lane; idempotent.

        Lanes started after a stop end at their next stop.
        """
        self._stopping = True
        for executor in self._executors:
            executor.stop()
        for woken in self._asleep:
            woken.set()
        self._asleep.clear()

    def start(self) -> asyncio.Future[list[None]]:
        """Start every lane asleep; the future returned ends once each has released its items.

        The lanes are asleep when this returns, so a :meth:`wake` right after it is
        never lost. Cancelling the future cancels the lanes, whose executors release
        their items, and it ends once they have (``asyncio.gather``).
        """
        return asyncio.gather(
            *(self._lane(executor, self._fall_asleep()) for executor in self._executors)
        )

    def _fall_asleep(self) -> asyncio.Event:
        woken = asyncio.Event()
        self._asleep.append(woken)
        return woken

    async def _lane(self, executor: WorkExecutor, woken: asyncio.Event) -> None:
        while True:
            # wake() and stop() take the event off the sleepers before they set it. A
            # lane cancelled asleep leaves its event behind: the lanes are ending then.
            await woken.wait()
            if self._stopping:
                return
            await self._run_items(executor)
            if self._stopping:
                return
            woken = self._fall_asleep()
            if len(self._asleep) == len(self._executors):
                # Every lane sleeps: the run of items has ended.
                self._tally.log()

    async def _run_items(self, executor: WorkExecutor) -> None:
        """Run items until none is claimable; each one claimed wakes another lane."""
        tally = self._tally
        try:
            while not self._stopping:
                # Each success is completed together with the next item's claim.
                outcome = await executor.run_next(claim_next=True, on_claimed=self.wake)
                if outcome is None:
                    return
                tally.add(outcome)
        except StoreUnavailableError as error:
            # The worker loop's next pass finds the outage, says so and waits it out.
            logger.debug("a lane stopped claiming: %s", error)
        finally:
            # Stopped, cancelled or cut off with an item claimed for the next turn:
            # hand it back now rather than let its lease run out.
            await executor.release_held()
