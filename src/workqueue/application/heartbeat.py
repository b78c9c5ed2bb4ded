"""The heartbeat that keeps one claimed item's lease while its handler runs.

A :class:`LeaseKeeper` runs as a task beside the handler's task. Every heartbeat
interval it extends the lease and writes the latest progress snapshot, moving the
claim's :attr:`~workqueue.application.claim.Claim.secured_until` on. When the lease is lost
it records why on the claim (:attr:`~workqueue.application.claim.Claim.lost`) and cancels
the handler; the executor then writes nothing more to the item.

A heartbeat that answers that a cancel of the item was requested (docs/adr/0018)
records it on the claim (:attr:`~workqueue.application.claim.Claim.cancel_requested`) and
cancels the handler, once; the keeper goes on renewing the lease until the handler
has ended (one that swallows the cancellation still holds its item), and the
executor then marks the item cancelled. An answer that comes once the handler has
already ended is too late to cancel it: its item ends as the handler did.

The lease is lost when a heartbeat matches no running item (another worker
reclaimed it after it expired), or when heartbeats keep failing until the lease
this worker last secured has run out, measured on its own clock (ADR 0003): past
that instant lease recovery may hand the item to someone else, so the handler
must not go on.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any

from workqueue.application.beats import Heartbeats
from workqueue.application.claim import Claim
from workqueue.application.context import ExecutionContext
from workqueue.domain import Clock, HeartbeatAnswer, StoreUnavailableError

__all__ = ["LeaseKeeper"]

logger = logging.getLogger("workqueue.heartbeat")


class LeaseKeeper:
    """Heartbeats for one claim's lease, cancelling ``handler`` once the lease is lost.

    The lease's state is the claim's: the keeper renews
    :attr:`~workqueue.application.claim.Claim.secured_until` and sets
    :attr:`~workqueue.application.claim.Claim.lost`, and keeps no copy of either.

    Creating one costs a few attribute writes; :meth:`start` creates its task only
    if the handler is still running after its first step, and until the first tick
    that task only sleeps: an item that finishes sooner costs no heartbeat write.

    :param heartbeats: when the heartbeats are due, and how they are sent
        (:mod:`workqueue.application.beats`).
    :param claim: the claimed item whose lease is kept.
    :param handler: the task running the item's handler.
    :param context: the handler's context, whose latest snapshot each heartbeat writes.
    """

    __slots__ = (
        "_beats",
        "_claim",
        "_clock",
        "_context",
        "_handler",
        "_starting",
        "_task",
    )

    def __init__(
        self,
        heartbeats: Heartbeats,
        clock: Clock,
        claim: Claim,
        *,
        handler: asyncio.Task[Any],
        context: ExecutionContext,
    ) -> None:
        self._beats = heartbeats
        self._clock = clock
        self._claim = claim
        self._handler = handler
        self._context = context
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Run :meth:`keep` as a task of its own, unless the handler's first step finishes it.

        Call it just after the handler's task was created: the check is scheduled
        behind that task's first step, so a handler that returns without awaiting
        anything slow (most short items) costs no keeper task and no timer at all.
        """
        self._starting = asyncio.get_running_loop().call_soon(self._start_unless_done)

    def _start_unless_done(self) -> None:
        if not self._handler.done():
            self._task = asyncio.create_task(self.keep())

    def stop(self) -> None:
        """Stop heartbeating, or never start; the lease stays as it was last secured.

        Call it after :meth:`start`.
        """
        self._starting.cancel()  # nothing happens if the check already ran
        if self._task is not None:
            self._task.cancel()

    async def keep(self) -> None:
        """Heartbeat until the lease is lost (then cancel the handler) or this task is cancelled.

        The first answer that a cancel was requested cancels the handler too, and
        the heartbeats go on.

        A heartbeat that fails (the store unreachable, or any other error) is
        retried at the next tick; it never ends this task by itself.
        """
        clock = self._clock
        claim = self._claim
        wait = True
        while True:
            remaining = (claim.secured_until - clock.now()).total_seconds()
            if remaining <= 0:
                # A handler that already returned has nothing left to stop, and whether
                # the lease is still held is for its outcome's write (fenced) to find out.
                # Which of the two wakes first after a stalled loop is the event loop's
                # choice (uvloop runs due timers before ready callbacks).
                if not self._handler.done():
                    self._lose("its lease ran out before a heartbeat could renew it")
                return
            if wait:
                # Normally the next tick comes long before the lease runs out; after
                # failed heartbeats, wake at the expiry instead of past it.
                await self._beats.wait(remaining)
            wait = True
            beat_at = clock.now()
            if beat_at >= claim.secured_until:
                continue
            try:
                held = await self._heartbeat_before_expiry(beat_at)
            except StoreUnavailableError as error:
                logger.warning(
                    "heartbeat of %s item %d failed: %s; retrying at the next tick",
                    claim.item.kind,
                    claim.item.id,
                    error,
                    extra=claim.log_extra,
                )
                continue
            except Exception:
                # An unexpected store error is treated as an unreachable store: the
                # lease is kept for as long as it was secured, never beyond.
                logger.exception(
                    "heartbeat of %s item %d raised; retrying at the next tick",
                    claim.item.kind,
                    claim.item.id,
                    extra=claim.log_extra,
                )
                continue
            if held is None:
                continue
            if not held:
                self._lose("a heartbeat found it no longer held (the item was reclaimed)")
                return
            renewed = beat_at + self._beats.lease_duration
            # The watchdog may have renewed the lease for longer while this heartbeat
            # was out (the loop was blocked, docs/adr/0036): what it secured holds,
            # never back. But this heartbeat's write may have landed after the
            # watchdog's and shortened the stored lease: then renew at once, from now,
            # so that the stored lease is again at least as long as the one kept here.
            wait = renewed >= claim.secured_until
            claim.secured_until = max(claim.secured_until, renewed)
            if (
                held is HeartbeatAnswer.CANCEL_REQUESTED
                and not claim.cancel_requested
                and not self._handler.done()
            ):
                # A handler that has already returned (or raised) did what it did:
                # the request came too late to cancel it, and its item ends by that.
                claim.cancel_requested = True
                self._handler.cancel()

    async def _heartbeat_before_expiry(self, beat_at: datetime) -> HeartbeatAnswer | None:
        """One heartbeat, abandoned if the lease runs out before the store answers.

        Returns the store's answer, or None when the lease ran out first (a store
        that hangs must not let the handler outlive its lease).

        :raises StoreUnavailableError: if the store cannot be reached.
        """
        call = asyncio.ensure_future(
            self._beats.heartbeat(self._claim.item.lease, self._context.snapshot)
        )
        expiry = asyncio.ensure_future(
            self._clock.sleep((self._claim.secured_until - beat_at).total_seconds())
        )
        try:
            await asyncio.wait((call, expiry), return_when=asyncio.FIRST_COMPLETED)
        finally:
            expiry.cancel()
            if call.done():
                # Retrieve the outcome even when cancelled, so no error goes unobserved.
                if not call.cancelled():
                    call.exception()
            else:
                call.cancel()
        if call.done() and not call.cancelled():
            return call.result()
        return None

    def _lose(self, reason: str) -> None:
        """Record on the claim why its lease is lost, and cancel the handler."""
        self._claim.lost = reason
        self._handler.cancel()
