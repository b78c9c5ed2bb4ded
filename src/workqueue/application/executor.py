"""The executor: claim one item, run its handler under a kept lease, record the outcome.

One item at a time: :meth:`WorkExecutor.run_next` claims the oldest queued item of
its kinds (the registry's, or some of them), runs its handler as a task with the
lease kept beside it, and then completes, fails or (when stopping) releases the
item. Every write is fenced by the lease; one that matches nothing means the lease
was lost, and nothing more is written.

The executor is the loop over four parts, each the one owner of its concept:

- :class:`~workqueue.application.claim.Claimer` claims items, and holds the one claimed
  along with a completion; each :class:`~workqueue.application.claim.Claim` keeps its
  item's lease: until when it is secured, and whether it was lost;
- the :class:`~workqueue.application.registry.KindRegistry` decodes the payload and finds
  the handler (:meth:`~workqueue.application.registry.KindRegistry.dispatch`);
- :class:`~workqueue.application.supervisor.LeaseSupervisor` runs the handler beside the
  heartbeat keeping its lease;
- :func:`~workqueue.application.verdict.verdict` says what a finished handler's item comes
  to, and :class:`~workqueue.application.outcome.OutcomeWriter` writes it (complete, fail
  or release), retrying while the store is unreachable.

A caller that runs item after item (the worker loop) passes ``claim_next=True``:
a success is then completed and the next item claimed in one store call
(:meth:`~workqueue.domain.WorkStore.complete_and_claim`), and the executor holds that item
for the next :meth:`~WorkExecutor.run_next`. Such a caller must end its run of
items with :meth:`~WorkExecutor.release_held`, so that no claimed item outlives it.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Collection
from datetime import datetime
from typing import Any

from pydantic import JsonValue

from workqueue.application.beats import Heartbeats, SoloHeartbeats
from workqueue.application.claim import Claim, Claimer
from workqueue.application.completions import Completions
from workqueue.application.context import ExecutionContext
from workqueue.application.execution import (
    DEFAULT_EXECUTOR_SETTINGS,
    ExecutionOutcome,
    ExecutionStatus,
    ExecutorSettings,
    bound_error,
)
from workqueue.application.outcome import OutcomeWriter
from workqueue.application.registry import KindRegistry
from workqueue.application.renewals import Renewals
from workqueue.application.supervisor import LeaseSupervisor
from workqueue.application.verdict import RELEASE, Verdict, handler_error, verdict
from workqueue.domain import (
    NO_TRACING,
    Clock,
    InvalidPayloadError,
    RunSpan,
    Tracing,
    UnknownKindError,
    WorkStore,
)

__all__ = ["WorkExecutor"]

logger = logging.getLogger("workqueue.executor")


class WorkExecutor:
    """Runs claimed items one at a time, keeping each one's lease while its handler runs.

    :param store: where items are claimed and their outcomes written.
    :param registry: the payload models and handlers of the kinds served.
    :param clock: the time every heartbeat, backoff and duration is measured on.
    :param worker_id: stamped on every claimed item.
    :param settings: heartbeat interval, lease duration and bounds.
    :param heartbeats: how the leases are renewed; not given, each item's on its
        own through ``store`` (:class:`~workqueue.application.beats.SoloHeartbeats`). The
        lanes of one process share :class:`~workqueue.application.beats.SharedHeartbeats`,
        made with the same interval and lease duration.
    :param completions: how a finished item is completed and the next claimed; not
        given, each on its own through ``store``
        (:class:`~workqueue.application.completions.SoloCompletions`). The lanes of one process
        share :class:`~workqueue.application.completions.SharedCompletions`, made with the
        same kinds, worker id and lease duration.
    :param draw: a random number from 0 to 1 per retry, for its backoff's jitter
        (tests give a fixed one).
    :param kinds: the names of the kinds to claim, some of the registry's (a worker
        told ``WORKQUEUE_KINDS``); not given, every kind of the registry.
    :param renewals: the leases the process's watchdog renews while a handler blocks
        the event loop (docs/adr/0036), shared by the process's executors.
    :param tracing: runs each attempt in a span started from its item's trace context
        (docs/adr/0038); not given, nothing is recorded.
    :raises ValueError: if ``kinds`` names a kind the registry does not serve: its
        items could be claimed but never run.
    """

    # Set by stop() and shutdown(), for good: nothing more is claimed.
    _stopping = False

    def __init__(
        self,
        store: WorkStore,
        registry: KindRegistry[Any],
        clock: Clock,
        *,
        worker_id: str,
        settings: ExecutorSettings = DEFAULT_EXECUTOR_SETTINGS,
        heartbeats: Heartbeats | None = None,
        completions: Completions | None = None,
        draw: Callable[[], float] = random.random,
        kinds: Collection[str] | None = None,
        renewals: Renewals | None = None,
        tracing: Tracing = NO_TRACING,
    ) -> None:
        claimed = registry.kinds if kinds is None else frozenset(kinds)
        unserved = claimed - registry.kinds
        if unserved:
            raise ValueError(
                f"cannot claim kinds the registry does not serve: {', '.join(sorted(unserved))}"
            )
        self._kinds = claimed
        self._registry = registry
        self._clock = clock
        self._draw = draw
        self._worker_id = worker_id
        self._settings = settings
        self._claimer = Claimer(
            store,
            clock,
            claimed,
            worker_id=worker_id,
            lease_duration=settings.lease_duration,
            completions=completions,
            renewals=renewals,
        )
        if heartbeats is None:
            heartbeats = SoloHeartbeats(
                store,
                clock,
                interval=settings.heartbeat_interval,
                lease_duration=settings.lease_duration,
            )
        self._supervisor = LeaseSupervisor(heartbeats, clock)
        self._writer = OutcomeWriter(store, clock, self._claimer)
        # Set while no run_next is running: one item at a time, and what shutdown waits for.
        self._idle = asyncio.Event()
        self._idle.set()
        # The running handler's task and its item's claim, between dispatch and verdict.
        self._running: tuple[asyncio.Task[JsonValue], Claim] | None = None
        self._tracing = tracing

    @property
    def running(self) -> tuple[asyncio.Task[JsonValue], Claim] | None:
        """The task of the handler running now and its item's claim, or None between items."""
        return self._running

    @property
    def held(self) -> Claim | None:
        """The item claimed along with a completion and held for the next run, if any."""
        return self._claimer.held

    @property
    def worker_id(self) -> str:
        """The id stamped on the items this executor claims."""
        return self._worker_id

    @property
    def kinds(self) -> frozenset[str]:
        """The names of the kinds this executor claims: its registry's, or those it was given."""
        return self._kinds

    async def next_run_at(self) -> datetime | None:
        """When the next queued item of the kinds that is not yet due becomes claimable, or
        None when none waits: how long an idle worker may sleep at most.

        :raises StoreUnavailableError: if the store cannot be reached.
        """
        return await self._claimer.next_run_at()

    async def run_next(
        self, *, claim_next: bool = False, on_claimed: Callable[[], object] | None = None
    ) -> ExecutionOutcome | None:
        """Claim one item (or take the one held), run it, and record how it ended.

        Returns None when nothing of its kinds is queued, or once the
        executor is stopping (a held item is then released). A payload that does
        not decode fails its item and returns that outcome; handler errors never
        propagate.

        With ``claim_next``, a succeeded item's completion also claims the next
        item, which this executor then holds for the next call (see
        :meth:`release_held`).

        ``on_claimed`` is called once an item is claimed (or the held one taken),
        before its handler runs: the worker's lanes wake one another on it.

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
            return await self._claim_and_run(claim_next, on_claimed)
        finally:
            self._idle.set()

    async def release_held(self) -> ExecutionOutcome | None:
        """Release the item held for the next run, if any, without a stall (fenced).

        Returns the release's outcome, or None when nothing was held. Like any write
        while stopping, it is tried a few times only when the store is unreachable;
        lease recovery requeues an item it could not release. :meth:`shutdown` waits
        for it. (An item is held only between two :meth:`run_next` calls, never
        while one runs: a run takes the held item before anything else.)
        """
        claim = self._claimer.take_held()
        if claim is None:
            return None
        self._idle.clear()
        try:
            return await self._hand_back(claim)
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
        self._writer.hurry()
        if self._running is not None:
            self._running[0].cancel()

    async def shutdown(self) -> None:
        """Stop (see :meth:`stop`) and wait until the running item, if any, is released.

        Idempotent. It waits for the release write, never for a heartbeat tick, and
        releases an item held for the next run.
        """
        self.stop()
        await self._idle.wait()
        await self.release_held()

    async def _claim_and_run(
        self, claim_next: bool, on_claimed: Callable[[], object] | None
    ) -> ExecutionOutcome | None:
        claim = self._claimer.take_held() or await self._claimer.claim()
        if claim is None:
            return None
        with self._tracing.run(claim.item, self._worker_id) as span:
            outcome = await self._run_claimed(claim, claim_next, on_claimed, span)
            span.ended(outcome.status.value, outcome.error)
        return outcome

    async def _run_claimed(
        self,
        claim: Claim,
        claim_next: bool,
        on_claimed: Callable[[], object] | None,
        span: RunSpan,
    ) -> ExecutionOutcome:
        """Run a claimed item's handler and record how it ended, in the attempt's span."""
        if on_claimed is not None:
            on_claimed()
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
            return await self._hand_back(claim)
        settings = self._settings
        try:
            handler, payload, claim.policy = self._registry.dispatch(item.kind, item.payload)
        except (InvalidPayloadError, UnknownKindError) as error:
            span.raised(error)
            failure = Verdict(
                ExecutionStatus.FAILED, bound_error(str(error), settings.max_error_length)
            )
            return await self._writer.write(claim, failure, item.progress)
        context = ExecutionContext.for_item(item, max_progress_bytes=settings.max_progress_bytes)
        handler_task = asyncio.create_task(handler.handle(payload, context))
        self._running = (handler_task, claim)
        try:
            await self._supervisor.run(claim, handler_task, context)
        except asyncio.CancelledError:
            # Our caller is being cancelled: the handler was stopped; hand the item back first.
            if claim.lost is None:
                await self._record(claim, handler_task, context, stopping=True)
            raise
        finally:
            self._running = None
        raised = handler_error(handler_task)
        if raised is not None:
            span.raised(raised)
        if claim.lost is not None:
            return self._writer.lease_lost(claim, claim.lost)
        stopping = self._stopping
        return await self._record(
            claim, handler_task, context, stopping=stopping, claim_next=claim_next and not stopping
        )

    def _record(
        self,
        claim: Claim,
        handler_task: asyncio.Task[JsonValue],
        context: ExecutionContext,
        *,
        stopping: bool,
        claim_next: bool = False,
    ) -> Awaitable[ExecutionOutcome]:
        """Write what a finished handler's item comes to; its lease was not lost.

        A success also claims the next item when ``claim_next`` says so (never
        while stopping). While stopping (or when the caller is being cancelled) the
        write is in a hurry.
        """
        ended = verdict(
            claim,
            handler_task,
            stopping=stopping,
            claim_next=claim_next,
            max_error_length=self._settings.max_error_length,
            max_result_bytes=self._settings.max_progress_bytes,
            now=self._clock.now(),
            draw=self._draw(),
        )
        return self._writer.write(claim, ended, context.snapshot, hurried=stopping)

    def _hand_back(self, claim: Claim) -> Awaitable[ExecutionOutcome]:
        """Release an item that was never run, keeping the progress it came with."""
        return self._writer.write(claim, RELEASE, claim.item.progress, hurried=True)
