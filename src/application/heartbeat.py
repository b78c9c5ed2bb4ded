"""The heartbeat that keeps one claimed item's lease while its handler runs.

A :class:`LeaseKeeper` runs as a task beside the handler's task. Every heartbeat
interval it extends the lease and writes the latest progress snapshot. When the
lease is lost it cancels the handler and says why; the executor then writes
nothing more to the item.

The lease is lost when a heartbeat matches no running item (another worker
reclaimed it after it expired), or when heartbeats keep failing until the lease
this worker last secured has run out, measured on its own clock (ADR 0003): past
that instant lease recovery may hand the item to someone else, so the handler
must not go on.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any

from application.context import ExecutionContext
from domain import Clock, Lease, StoreUnavailableError, WorkStore

__all__ = ["LeaseKeeper"]

logger = logging.getLogger("workqueue.heartbeat")


class LeaseKeeper:
    """Heartbeats for one lease, cancelling ``handler`` once the lease is lost.

    Creating one costs a few attribute writes; :meth:`start` creates its task only
    if the handler is still running after its first step, and until the first tick
    that task only sleeps: an item that finishes sooner costs no heartbeat write.

    :param secured_until: when the lease runs out unless renewed, on ``clock``; a
        conservative start is the time the claim was sent plus the lease.
    """

    __slots__ = (
        "_clock",
        "_context",
        "_handler",
        "_interval",
        "_lease",
        "_lease_duration",
        "_log_extra",
        "_starting",
        "_store",
        "_task",
        "lost",
        "secured_until",
    )

    def __init__(
        self,
        store: WorkStore,
        clock: Clock,
        lease: Lease,
        *,
        handler: asyncio.Task[Any],
        context: ExecutionContext,
        secured_until: datetime,
        interval: float,
        lease_duration: timedelta,
        log_extra: dict[str, Any],
    ) -> None:
        self._store = store
        self._clock = clock
        self._lease = lease
        self._handler = handler
        self._context = context
        self._interval = interval
        self._lease_duration = lease_duration
        self._log_extra = log_extra
        self.secured_until = secured_until
        """The instant the lease last secured runs out, on the clock."""
        self.lost: str | None = None
        """Why the lease was lost, or None while it is held."""
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

        A heartbeat that fails (the store unreachable, or any other error) is
        retried at the next tick; it never ends this task by itself.
        """
        clock = self._clock
        while True:
            remaining = (self.secured_until - clock.now()).total_seconds()
            if remaining <= 0:
                # A handler that already returned has nothing left to stop, and whether
                # the lease is still held is for its outcome's write (fenced) to find out.
                # Which of the two wakes first after a stalled loop is the event loop's
                # choice (uvloop runs due timers before ready callbacks).
                if not self._handler.done():
                    self._lose("its lease ran out before a heartbeat could renew it")
                return
            # Normally the next tick comes long before the lease runs out; after failed
            # heartbeats, wake at the expiry instead of past it.
            await clock.sleep(min(self._interval, remaining))
            beat_at = clock.now()
            if beat_at >= self.secured_until:
                continue
            try:
                held = await self._heartbeat_before_expiry(beat_at)
            except StoreUnavailableError as error:
                logger.warning(
                    "heartbeat of %s item %d failed: %s; retrying at the next tick",
                    self._context.kind,
                    self._lease.item_id,
                    error,
                    extra=self._log_extra,
                )
                continue
            except Exception:
                # An unexpected store error is treated as an unreachable store: the
                # lease is kept for as long as it was secured, never beyond.
                logger.exception(
                    "heartbeat of %s item %d raised; retrying at the next tick",
                    self._context.kind,
                    self._lease.item_id,
                    extra=self._log_extra,
                )
                continue
            if held is None:
                continue
            if not held:
                self._lose("a heartbeat found it no longer held (the item was reclaimed)")
                return
            self.secured_until = beat_at + self._lease_duration

    async def _heartbeat_before_expiry(self, beat_at: datetime) -> bool | None:
        """One heartbeat, abandoned if the lease runs out before the store answers.

        Returns the store's answer, or None when the lease ran out first (a store
        that hangs must not let the handler outlive its lease).

        :raises StoreUnavailableError: if the store cannot be reached.
        """
        call = asyncio.ensure_future(
            self._store.heartbeat(
                self._lease,
                progress=self._context.progress,
                lease_duration=self._lease_duration,
            )
        )
        expiry = asyncio.ensure_future(
            self._clock.sleep((self.secured_until - beat_at).total_seconds())
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
        """Record why the lease is lost and cancel the handler."""
        self.lost = reason
        self._handler.cancel()
