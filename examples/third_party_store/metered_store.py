"""MeteredWorkStore: any WorkStore, counting the calls made to it (say, for a metrics page).

A store written outside workqueue, as a third party would write one: it
subclasses the port, ``workqueue.domain.WorkStore``, and implements every method by
handing it to the store it wraps. It leaves ``complete_and_claim`` to the
port's default, a ``finish`` and then a ``claim`` (both counted), whatever
the wrapped store would do in one step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from datetime import datetime, timedelta

from pydantic import JsonValue

from workqueue.domain import (
    BulkBatch,
    CancelOutcome,
    CapSource,
    HeartbeatAnswer,
    KindCap,
    KindPause,
    Lease,
    PayloadDecoder,
    RecoveryResult,
    RunOutcome,
    WorkItem,
    WorkStatus,
    WorkStore,
)

__all__ = ["MeteredWorkStore"]


class MeteredWorkStore(WorkStore):
    """Counts each call by method name in :attr:`calls`, then makes it on ``inner``."""

    def __init__(self, inner: WorkStore) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    async def close(self) -> None:
        """Close the wrapped store, if it has anything to close."""
        close = getattr(self.inner, "close", None)
        if close is not None:
            await close()

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        self.calls["claim"] += 1
        return await self.inner.claim(kinds, worker_id=worker_id, lease_duration=lease_duration)

    async def next_run_at(self, kinds: Collection[str]) -> datetime | None:
        self.calls["next_run_at"] += 1
        return await self.inner.next_run_at(kinds)

    async def heartbeat(
        self, lease: Lease, *, progress: JsonValue, lease_duration: timedelta
    ) -> HeartbeatAnswer:
        self.calls["heartbeat"] += 1
        return await self.inner.heartbeat(lease, progress=progress, lease_duration=lease_duration)

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        self.calls["finish"] += 1
        return await self.inner.finish(lease, outcome)

    async def cancel(self, item_id: int, *, reason: str) -> CancelOutcome:
        self.calls["cancel"] += 1
        return await self.inner.cancel(item_id, reason=reason)

    async def requeue_failed(
        self,
        kind: str,
        *,
        after_id: int,
        up_to_id: int,
        limit: int,
        decode: PayloadDecoder,
    ) -> BulkBatch:
        self.calls["requeue_failed"] += 1
        return await self.inner.requeue_failed(
            kind, after_id=after_id, up_to_id=up_to_id, limit=limit, decode=decode
        )

    async def cancel_queued(
        self, kind: str, *, after_id: int, up_to_id: int, limit: int, reason: str
    ) -> BulkBatch:
        self.calls["cancel_queued"] += 1
        return await self.inner.cancel_queued(
            kind, after_id=after_id, up_to_id=up_to_id, limit=limit, reason=reason
        )

    async def pause_kind(self, kind: str, *, reason: str | None = None) -> KindPause:
        self.calls["pause_kind"] += 1
        return await self.inner.pause_kind(kind, reason=reason)

    async def resume_kind(self, kind: str) -> bool:
        self.calls["resume_kind"] += 1
        return await self.inner.resume_kind(kind)

    async def cap_kind(
        self, kind: str, max_running: int | None, *, source: CapSource = CapSource.OPERATOR
    ) -> KindCap | None:
        self.calls["cap_kind"] += 1
        return await self.inner.cap_kind(kind, max_running, source=source)

    async def caps(self) -> list[KindCap]:
        self.calls["caps"] += 1
        return await self.inner.caps()

    async def recover_expired(self, *, max_stalls: int) -> RecoveryResult:
        self.calls["recover_expired"] += 1
        return await self.inner.recover_expired(max_stalls=max_stalls)

    async def purge_finished(self, *, finished_before: datetime, limit: int) -> int:
        self.calls["purge_finished"] += 1
        return await self.inner.purge_finished(finished_before=finished_before, limit=limit)

    async def get(self, item_id: int) -> WorkItem | None:
        self.calls["get"] += 1
        return await self.inner.get(item_id)

    async def list_items(
        self,
        *,
        statuses: Collection[WorkStatus] | None = None,
        kinds: Collection[str] | None = None,
        worker_ids: Collection[str] | None = None,
        limit: int = 100,
        newest_first: bool = False,
    ) -> list[WorkItem]:
        self.calls["list_items"] += 1
        return await self.inner.list_items(
            statuses=statuses,
            kinds=kinds,
            worker_ids=worker_ids,
            limit=limit,
            newest_first=newest_first,
        )

    async def count_by_kind_and_status(self) -> dict[tuple[str, WorkStatus], int]:
        self.calls["count_by_kind_and_status"] += 1
        return await self.inner.count_by_kind_and_status()
