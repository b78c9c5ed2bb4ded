"""The lease supervisor: a claimed item's handler runs beside the heartbeat keeping its lease.

:meth:`LeaseSupervisor.run` waits for a handler's task with a
:class:`~workqueue.application.heartbeat.LeaseKeeper` beside it, and stops the keeper once
the handler is done. How the lease fared is on the claim
(:attr:`~workqueue.application.claim.Claim.lost`); how the handler fared is its task's. What
the item comes to is the executor's to decide (:func:`~workqueue.application.verdict.verdict`).
"""

from __future__ import annotations

import asyncio

from pydantic import JsonValue

from workqueue.application.beats import Heartbeats
from workqueue.application.claim import Claim
from workqueue.application.context import ExecutionContext
from workqueue.application.heartbeat import LeaseKeeper
from workqueue.domain import Clock

__all__ = ["LeaseSupervisor"]


class LeaseSupervisor:
    """Runs each handler task beside a heartbeat that keeps its item's lease.

    :param heartbeats: when each heartbeat is due and how it is sent
        (:mod:`workqueue.application.beats`).
    :param clock: what the lease's expiry is measured on.
    """

    __slots__ = ("_clock", "_heartbeats")

    def __init__(self, heartbeats: Heartbeats, clock: Clock) -> None:
        self._heartbeats = heartbeats
        self._clock = clock

    async def run(
        self, claim: Claim, handler: asyncio.Task[JsonValue], context: ExecutionContext
    ) -> None:
        """Wait until ``handler`` is done, whatever its outcome, keeping the claim's lease.

        Call it just after the handler's task was created. If the lease is lost
        meanwhile, the handler is cancelled and this still waits for it to end.

        :raises asyncio.CancelledError: if the task awaiting this is cancelled; the
            handler was then cancelled too and has ended.
        """
        keeper = LeaseKeeper(self._heartbeats, self._clock, claim, handler=handler, context=context)
        keeper.start()
        try:
            await _finished(handler)
        except asyncio.CancelledError:
            keeper.stop()
            handler.cancel()
            await asyncio.wait((handler,))
            raise
        finally:
            keeper.stop()


def _finished(task: asyncio.Task[JsonValue]) -> asyncio.Future[None]:
    """A future that is done once ``task`` is, whatever its outcome; cancelling it
    leaves ``task`` running. What ``asyncio.wait`` on one task does, for less."""
    finished = task.get_loop().create_future()

    def wake(_: asyncio.Task[JsonValue]) -> None:
        if not finished.done():
            finished.set_result(None)

    task.add_done_callback(wake)
    return finished
