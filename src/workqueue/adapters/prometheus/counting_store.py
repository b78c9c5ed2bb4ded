"""CountingWorkStore: a worker's WorkStore that counts what each of its calls did."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from datetime import datetime, timedelta

from prometheus_client import Counter
from pydantic import JsonValue

from workqueue.adapters.prometheus.worker_metrics import WorkerMetrics
from workqueue.domain import (
    BulkBatch,
    CancelOutcome,
    CapSource,
    HeartbeatAnswer,
    KindCap,
    KindPause,
    Lease,
    LeaseProgress,
    PayloadDecoder,
    ProgressSnapshot,
    RecoveryResult,
    RunEnding,
    RunOutcome,
    WorkItem,
    WorkStatus,
    WorkStore,
)

__all__ = ["UNKNOWN_KIND", "CountingWorkStore"]

UNKNOWN_KIND = "unknown"
"""The kind label of a lease this store did not claim (none, in a worker)."""


class CountingWorkStore(WorkStore):
    """Passes every call on to ``store`` and counts, in ``metrics``, what it came to.

    A claim counts for its item's kind; each outcome write counts as what it wrote
    when its lease was held, and as a lost lease when it was not, as does a
    heartbeat that matched no row (one answering that a cancel was requested still
    holds its lease: the holder then writes ``cancelled``). Every heartbeat is
    timed, answered or not. A call that raises counts nothing. ``complete_and_claim``
    is passed on whole, so a store that does both in one statement still does.

    :param timer: seconds on a monotonic clock, for the heartbeat latency.
    :param claimed_kinds: the kind of every item claimed and not yet written, by
        lease; stores that write each other's leases share one (a worker's lanes,
        whose heartbeats go through one of them). Not given, the store keeps its own.
    """

    def __init__(
        self,
        store: WorkStore,
        metrics: WorkerMetrics,
        *,
        timer: Callable[[], float] = time.perf_counter,
        claimed_kinds: dict[Lease, str] | None = None,
    ) -> None:
        self._store = store
        self._metrics = metrics
        self._timer = timer
        self._kinds: dict[Lease, str] = {} if claimed_kinds is None else claimed_kinds

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        item = await self._store.claim(kinds, worker_id=worker_id, lease_duration=lease_duration)
        self._claimed(item)
        return item

    async def next_run_at(self, kinds: Collection[str]) -> datetime | None:
        return await self._store.next_run_at(kinds)

    async def heartbeat(
        self, lease: Lease, *, progress: JsonValue | ProgressSnapshot, lease_duration: timedelta
    ) -> HeartbeatAnswer:
        started = self._timer()
        try:
            answer = await self._store.heartbeat(
                lease, progress=progress, lease_duration=lease_duration
            )
        finally:
            self._metrics.heartbeat_seconds.observe(self._timer() - started)
        if answer is HeartbeatAnswer.LOST:
            self._metrics.leases_lost.labels(self._forget(lease)).inc()
        return answer

    async def heartbeat_many(
        self,
        beats: Sequence[LeaseProgress],
        *,
        lease_duration: timedelta,
    ) -> list[HeartbeatAnswer]:
        started = self._timer()
        try:
            answers = await self._store.heartbeat_many(beats, lease_duration=lease_duration)
        finally:
            self._metrics.heartbeat_seconds.observe(self._timer() - started)
        for index, (lease, _) in enumerate(beats):
            if answers[index] is HeartbeatAnswer.LOST:
                self._metrics.leases_lost.labels(self._forget(lease)).inc()
        return answers

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        finished = await self._store.finish(lease, outcome)
        self._written(lease, finished, self._counter_of(outcome.ending))
        return finished

    async def complete_and_claim(
        self,
        lease: Lease,
        *,
        progress: JsonValue | ProgressSnapshot,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> tuple[bool, WorkItem | None]:
        completed, item = await self._store.complete_and_claim(
            lease,
            progress=progress,
            kinds=kinds,
            worker_id=worker_id,
            lease_duration=lease_duration,
        )
        self._written(lease, completed, self._metrics.succeeded)
        self._claimed(item)
        return completed, item

    async def complete_and_claim_many(
        self,
        completions: Sequence[LeaseProgress],
        *,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> list[tuple[bool, WorkItem | None]]:
        answers = await self._store.complete_and_claim_many(
            completions, kinds=kinds, worker_id=worker_id, lease_duration=lease_duration
        )
        for index, (lease, _) in enumerate(completions):
            completed, item = answers[index]
            self._written(lease, completed, self._metrics.succeeded)
            self._claimed(item)
        return answers

    async def cancel(self, item_id: int, *, reason: str) -> CancelOutcome:
        return await self._store.cancel(item_id, reason=reason)

    async def requeue_failed(
        self,
        kind: str,
        *,
        after_id: int,
        up_to_id: int,
        limit: int,
        decode: PayloadDecoder,
    ) -> BulkBatch:
        return await self._store.requeue_failed(
            kind, after_id=after_id, up_to_id=up_to_id, limit=limit, decode=decode
        )

    async def cancel_queued(
        self, kind: str, *, after_id: int, up_to_id: int, limit: int, reason: str
    ) -> BulkBatch:
        return await self._store.cancel_queued(
            kind, after_id=after_id, up_to_id=up_to_id, limit=limit, reason=reason
        )

    async def pause_kind(self, kind: str, *, reason: str | None = None) -> KindPause:
        return await self._store.pause_kind(kind, reason=reason)

    async def resume_kind(self, kind: str) -> bool:
        return await self._store.resume_kind(kind)

    async def cap_kind(
        self, kind: str, max_running: int | None, *, source: CapSource = CapSource.OPERATOR
    ) -> KindCap | None:
        return await self._store.cap_kind(kind, max_running, source=source)

    async def caps(self) -> list[KindCap]:
        return await self._store.caps()

    async def recover_expired(self, *, max_stalls: int) -> RecoveryResult:
        result = await self._store.recover_expired(max_stalls=max_stalls)
        for outcome, items in (
            ("requeued", result.requeued),
            ("stalled", result.stalled),
            ("superseded", result.superseded),
            ("cancelled", result.cancelled),
        ):
            if items:
                self._metrics.recovered.labels(outcome).inc(len(items))
        return result

    async def purge_finished(self, *, finished_before: datetime, limit: int) -> int:
        return await self._store.purge_finished(finished_before=finished_before, limit=limit)

    async def get(self, item_id: int) -> WorkItem | None:
        return await self._store.get(item_id)

    async def list_items(
        self,
        *,
        statuses: Collection[WorkStatus] | None = None,
        kinds: Collection[str] | None = None,
        worker_ids: Collection[str] | None = None,
        limit: int = 100,
        newest_first: bool = False,
    ) -> list[WorkItem]:
        return await self._store.list_items(
            statuses=statuses,
            kinds=kinds,
            worker_ids=worker_ids,
            limit=limit,
            newest_first=newest_first,
        )

    async def count_by_kind_and_status(self) -> dict[tuple[str, WorkStatus], int]:
        return await self._store.count_by_kind_and_status()

    def _counter_of(self, ending: RunEnding) -> Counter:
        """The counter of the runs that ended so (a release counts as released, wherever
        the item went: back to queued, superseded, or cancelled on its request)."""
        return {
            RunEnding.SUCCEEDED: self._metrics.succeeded,
            RunEnding.FAILED: self._metrics.failed,
            RunEnding.RETRIED: self._metrics.retried,
            RunEnding.SNOOZED: self._metrics.snoozed,
            RunEnding.CANCELLED: self._metrics.cancelled,
            RunEnding.RELEASED: self._metrics.released,
        }[ending]

    def _claimed(self, item: WorkItem | None) -> None:
        if item is not None:
            self._kinds[Lease(item.id, item.attempt)] = item.kind
            self._metrics.claimed.labels(item.kind).inc()

    def _written(self, lease: Lease, held: bool, counter: Counter) -> None:
        """Count one outcome write: as ``counter`` when its lease was held, else as lost."""
        (counter if held else self._metrics.leases_lost).labels(self._forget(lease)).inc()

    def _forget(self, lease: Lease) -> str:
        """The kind of ``lease``'s item, which nothing more will be written for."""
        return self._kinds.pop(lease, UNKNOWN_KIND)
