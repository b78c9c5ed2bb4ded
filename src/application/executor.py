"""The executor: claim one item, run its handler under a kept lease, record the outcome.

One item at a time: :meth:`WorkExecutor.run_next` claims the oldest queued item of
the registry's kinds, runs its handler as a task with a
:class:`~application.heartbeat.LeaseKeeper` beside it, and then completes, fails
or (when stopping) releases the item. Every write is fenced by the lease; one that
matches nothing means the lease was lost, and nothing more is written.

A caller that runs item after item (the worker loop) passes ``claim_next=True``:
a success is then completed and the next item claimed in one store call
(:meth:`~domain.WorkStore.complete_and_claim`), and the executor holds that item
for the next :meth:`~WorkExecutor.run_next`. Such a caller must end its run of
items with :meth:`~WorkExecutor.release_held`, so that no claimed item outlives it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from pydantic import JsonValue

from application.context import ExecutionContext
from application.execution import (
    DEFAULT_EXECUTOR_SETTINGS,
    ExecutionOutcome,
    ExecutionStatus,
    ExecutorSettings,
    bound_error,
    error_text,
)
from application.heartbeat import LeaseKeeper
from application.registry import KindRegistry
from domain import (
    Clock,
    InvalidPayloadError,
    StoreUnavailableError,
    UnknownKindError,
    WorkHandler,
    WorkItem,
    WorkPayload,
    WorkStore,
)

__all__ = ["WorkExecutor"]

logger = logging.getLogger("workqueue.executor")

# Backoff of an outcome write (complete, fail, release) while the store is unreachable.
_FIRST_RETRY_DELAY = 0.05
_MAX_RETRY_DELAY = 1.0
# A stopping worker should not linger: it tries this many times, then leaves the
# item to lease recovery.
_ATTEMPTS_WHILE_STOPPING = 3

_SELF_CANCELLED = "CancelledError: the handler was cancelled, not by this worker"


class _Claim:
    """One claimed item on its way to an outcome."""

    # Set when the caller is being cancelled: its outcome write must not linger.
    hurried: bool = False

    def __init__(self, item: WorkItem, claimed_at: datetime, lease_duration: timedelta) -> None:
        self.item = item
        self.claimed_at = claimed_at
        # Measured from before the claim was sent, so never later than the store's own expiry.
        self.secured_until = claimed_at + lease_duration
        self.log_extra: dict[str, Any] = {
            "item_id": item.id,
            "kind": item.kind,
            "attempt": item.attempt,
        }


class WorkExecutor:
    """Runs claimed items one at a time, keeping each one's lease while its handler runs.

    :param store: where items are claimed and their outcomes written.
    :param registry: the kinds to claim, and their payload models and handlers.
    :param clock: the time every heartbeat, backoff and duration is measured on.
    :param worker_id: stamped on every claimed item.
    :param settings: heartbeat interval, lease duration and bounds.
    """

    def __init__(
        self,
        store: WorkStore,
        registry: KindRegistry[Any],
        clock: Clock,
        *,
        worker_id: str,
        settings: ExecutorSettings = DEFAULT_EXECUTOR_SETTINGS,
    ) -> None:
        self._store = store
        # A store that does not inherit the port may lack complete_and_claim: the
        # port's own default (complete, then claim) serves it then.
        self._complete_and_claim = getattr(store, "complete_and_claim", None) or partial(
            WorkStore.complete_and_claim, store
        )
        self._registry = registry
        self._clock = clock
        self._worker_id = worker_id
        self._settings = settings
        self._lease_duration = timedelta(seconds=self._settings.lease_duration)
        self._stopping = False
        # Set while no run_next is running: one item at a time, and what shutdown waits for.
        self._idle = asyncio.Event()
        self._idle.set()
        self._handler_task: asyncio.Task[None] | None = None
        # Claimed along with the last completion, for the next run_next to run.
        self._held: _Claim | None = None

    @property
    def worker_id(self) -> str:
        """The id stamped on the items this executor claims."""
        return self._worker_id

    @property
    def settings(self) -> ExecutorSettings:
        return self._settings

    @property
    def stopping(self) -> bool:
        """True once :meth:`stop` or :meth:`shutdown` was called; nothing more is claimed."""
        return self._stopping

    @property
    def holding(self) -> bool:
        """True while an item claimed with the last completion waits for the next run."""
        return self._held is not None

    async def run_next(self, *, claim_next: bool = False) -> ExecutionOutcome | None:
        """Claim one item (or take the one held), run it, and record how it ended.

        Returns None when nothing of the registry's kinds is queued, or once the
        executor is stopping (a held item is then released). A payload that does
        not decode fails its item and returns that outcome; handler errors never
        propagate.

        With ``claim_next``, a succeeded item's completion also claims the next
        item, which this executor then holds for the next call (see
        :attr:`holding`, :meth:`release_held`).

        If the task awaiting this is cancelled, the handler is cancelled and the
        item released (or completed, if the handler had already returned) before the
        cancellation propagates.

        :raises RuntimeError: if another call is still running: one item at a time.
        :raises StoreUnavailableError: if the claim cannot reach the store (nothing
            was claimed).
        """
        if not self._idle.is_set():
            raise RuntimeError(
                "run_next is already running: a WorkExecutor runs one item at a time"
            )
        if self._stopping:
            await self.release_held()
            return None
        self._idle.clear()
        try:
            return await self._claim_and_run(claim_next)
        finally:
            self._handler_task = None
            self._idle.set()

    async def release_held(self) -> ExecutionOutcome | None:
        """Release the item held for the next run, if any, without a stall (fenced).

        Returns the release's outcome, or None when nothing was held. Like any write
        while stopping, it is tried a few times only when the store is unreachable;
        lease recovery requeues an item it could not release. :meth:`shutdown` waits
        for it. (An item is held only between two :meth:`run_next` calls, never
        while one runs: a run takes the held item before anything else.)
        """
        claim = self._held
        if claim is None:
            return None
        self._held = None
        claim.hurried = True
        self._idle.clear()
        try:
            return await self._release(claim, claim.item.progress)
        finally:
            self._idle.set()

    def stop(self) -> None:
        """Stop claiming, and cancel the running handler so that its item is released.

        Synchronous and idempotent, so a signal handler may call it. The release
        itself happens in the running :meth:`run_next`; await :meth:`shutdown` to
        wait for it.
        """
        if self._stopping:
            return
        self._stopping = True
        if self._handler_task is not None:
            self._handler_task.cancel()

    async def shutdown(self) -> None:
        """Stop (see :meth:`stop`) and wait until the running item, if any, is released.

        Idempotent. It waits for the release write, never for a heartbeat tick, and
        releases an item held for the next run.
        """
        self.stop()
        await self._idle.wait()
        await self.release_held()

    async def _claim_and_run(self, claim_next: bool) -> ExecutionOutcome | None:
        claim = self._held
        if claim is None:
            claimed_at = self._clock.now()
            item = await self._store.claim(
                self._registry.kinds,
                worker_id=self._worker_id,
                lease_duration=self._lease_duration,
            )
            if item is None:
                return None
            claim = _Claim(item, claimed_at, self._lease_duration)
        else:
            self._held = None
            item = claim.item
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "claimed %s item %d (attempt %d)",
                item.kind,
                item.id,
                item.attempt,
                extra=claim.log_extra,
            )
        if self._stopping:
            # stop() came while the claim was in flight: hand the item straight back.
            return await self._release(claim, item.progress)
        try:
            payload = self._registry.decode(item.kind, item.payload)
            handler = self._registry.handler(item.kind)
        except (InvalidPayloadError, UnknownKindError) as error:
            return await self._fail(
                claim, bound_error(str(error), self._settings.max_error_length), item.progress
            )
        return await self._supervise(claim, handler, payload, claim_next)

    async def _supervise(
        self, claim: _Claim, handler: WorkHandler[Any], payload: WorkPayload, claim_next: bool
    ) -> ExecutionOutcome:
        """Run the handler beside its lease keeper, then record what it came to."""
        settings = self._settings
        context = ExecutionContext.for_item(
            claim.item, max_progress_bytes=settings.max_progress_bytes
        )
        handler_task = asyncio.create_task(handler.handle(payload, context))
        self._handler_task = handler_task
        keeper = LeaseKeeper(
            self._store,
            self._clock,
            claim.item.lease,
            handler=handler_task,
            context=context,
            secured_until=claim.secured_until,
            interval=settings.heartbeat_interval,
            lease_duration=self._lease_duration,
            log_extra=claim.log_extra,
        )
        keeper.start()
        try:
            await _finished(handler_task)
        except asyncio.CancelledError:
            # Our caller is being cancelled: stop the handler and hand the item back first.
            keeper.stop()
            handler_task.cancel()
            await asyncio.wait((handler_task,))
            claim.secured_until = keeper.secured_until
            claim.hurried = True
            if keeper.lost is None:
                await self._record(claim, handler_task, context, stopping=True)
            raise
        finally:
            keeper.stop()
            self._handler_task = None
        claim.secured_until = keeper.secured_until
        if keeper.lost is not None:
            return self._lease_lost(claim, keeper.lost)
        return await self._record(
            claim,
            handler_task,
            context,
            stopping=self._stopping,
            claim_next=claim_next and not self._stopping,
        )

    async def _record(
        self,
        claim: _Claim,
        handler_task: asyncio.Task[None],
        context: ExecutionContext,
        *,
        stopping: bool,
        claim_next: bool = False,
    ) -> ExecutionOutcome:
        """Write the outcome of a finished handler task whose lease was not lost.

        A success also claims the next item when ``claim_next`` says so; never while
        stopping or when the caller is being cancelled.
        """
        progress = context.progress
        if handler_task.cancelled():
            if stopping:
                return await self._release(claim, progress)
            return await self._fail(claim, _SELF_CANCELLED, progress)
        error = handler_task.exception()
        if error is None:
            return await self._complete(claim, progress, claim_next=claim_next)
        if stopping:
            # Most likely the handler turned our cancellation into an error of its own.
            return await self._release(claim, progress)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("traceback of %s item %d", claim.item.kind, claim.item.id, exc_info=error)
        return await self._fail(claim, error_text(error, self._settings.max_error_length), progress)

    async def _complete(
        self, claim: _Claim, progress: JsonValue, *, claim_next: bool
    ) -> ExecutionOutcome:
        lease = claim.item.lease
        store = self._store
        tries = 0

        async def complete() -> bool:
            nonlocal tries
            tries += 1
            if not claim_next or tries > 1:
                # A retry completes only: the first try may have claimed before it failed.
                return await store.complete(lease, progress=progress)
            claimed_at = self._clock.now()
            completed, following = await self._complete_and_claim(
                lease,
                progress=progress,
                kinds=self._registry.kinds,
                worker_id=self._worker_id,
                lease_duration=self._lease_duration,
            )
            if following is not None:
                self._held = _Claim(following, claimed_at, self._lease_duration)
            return completed

        written = await self._write(claim, "complete", complete)
        if written is None:
            return self._outcome(claim, ExecutionStatus.ABANDONED, "the store was unreachable")
        if not written:
            return self._lease_lost(claim, "completing it found the lease no longer held")
        outcome = self._outcome(claim, ExecutionStatus.SUCCEEDED)
        # DEBUG: the table records every success, and the worker logs a count of them at
        # INFO; a line per success would cost a drain of short items a third of its pace.
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "%s item %d succeeded in %.3f s (attempt %d)",
                outcome.kind,
                outcome.item_id,
                outcome.duration,
                outcome.attempt,
                extra=claim.log_extra,
            )
        return outcome

    async def _fail(self, claim: _Claim, error: str, progress: JsonValue) -> ExecutionOutcome:
        lease = claim.item.lease
        written = await self._write(
            claim, "fail", lambda: self._store.fail(lease, error=error, progress=progress)
        )
        if written is None:
            return self._outcome(claim, ExecutionStatus.ABANDONED, "the store was unreachable")
        if not written:
            return self._lease_lost(claim, "failing it found the lease no longer held")
        outcome = self._outcome(claim, ExecutionStatus.FAILED, error)
        logger.warning(
            "%s item %d failed (attempt %d): %s",
            outcome.kind,
            outcome.item_id,
            outcome.attempt,
            error,
            extra=claim.log_extra,
        )
        return outcome

    async def _release(self, claim: _Claim, progress: JsonValue) -> ExecutionOutcome:
        lease = claim.item.lease
        written = await self._write(
            claim, "release", lambda: self._store.release(lease, progress=progress)
        )
        if written is None:
            return self._outcome(claim, ExecutionStatus.ABANDONED, "the store was unreachable")
        if not written:
            return self._lease_lost(claim, "releasing it found the lease no longer held")
        outcome = self._outcome(claim, ExecutionStatus.RELEASED)
        logger.info(
            "%s item %d released on shutdown (attempt %d)",
            outcome.kind,
            outcome.item_id,
            outcome.attempt,
            extra=claim.log_extra,
        )
        return outcome

    def _lease_lost(self, claim: _Claim, reason: str) -> ExecutionOutcome:
        outcome = self._outcome(claim, ExecutionStatus.LEASE_LOST, reason)
        logger.warning(
            "%s item %d lost its lease (attempt %d): %s; recording nothing",
            outcome.kind,
            outcome.item_id,
            outcome.attempt,
            reason,
            extra=claim.log_extra,
        )
        return outcome

    async def _write(
        self, claim: _Claim, action: str, write: Callable[[], Awaitable[bool]]
    ) -> bool | None:
        """Run a fenced outcome write, retrying while the store is unreachable.

        Returns the store's answer, or None after giving up: when the lease would
        have run out before the next try (lease recovery requeues the item then), or
        after a few tries once the executor is stopping or its caller is cancelled.
        """
        delay = _FIRST_RETRY_DELAY
        attempts = 0
        while True:
            attempts += 1
            try:
                return await write()
            except StoreUnavailableError as error:
                out_of_lease = self._clock.now() + timedelta(seconds=delay) >= claim.secured_until
                in_a_hurry = self._stopping or claim.hurried
                if out_of_lease or (in_a_hurry and attempts >= _ATTEMPTS_WHILE_STOPPING):
                    logger.error(
                        "could not %s %s item %d after %d tries: %s; "
                        "lease recovery will requeue it",
                        action,
                        claim.item.kind,
                        claim.item.id,
                        attempts,
                        error,
                        extra=claim.log_extra,
                    )
                    return None
                logger.debug(
                    "could not %s %s item %d: %s; retrying in %.2f s",
                    action,
                    claim.item.kind,
                    claim.item.id,
                    error,
                    delay,
                    extra=claim.log_extra,
                )
            await self._clock.sleep(delay)
            delay = min(delay * 2, _MAX_RETRY_DELAY)

    def _outcome(
        self, claim: _Claim, status: ExecutionStatus, error: str | None = None
    ) -> ExecutionOutcome:
        item = claim.item
        return ExecutionOutcome(
            item_id=item.id,
            kind=item.kind,
            attempt=item.attempt,
            status=status,
            duration=(self._clock.now() - claim.claimed_at).total_seconds(),
            error=error,
        )


def _finished(task: asyncio.Task[None]) -> asyncio.Future[None]:
    """A future that is done once ``task`` is, whatever its outcome; cancelling it
    leaves ``task`` running. What ``asyncio.wait`` on one task does, for less."""
    finished = task.get_loop().create_future()

    def wake(_: asyncio.Task[None]) -> None:
        if not finished.done():
            finished.set_result(None)

    task.add_done_callback(wake)
    return finished
