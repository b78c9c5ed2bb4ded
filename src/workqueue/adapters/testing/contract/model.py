"""QueueModel: the queue's semantics in the plainest Python, for the state machine to compare.

It is written from DESIGN.md and ADR 0004, not from any store, so a store that
agrees with it agrees with the contract. It keeps no clock of its own: every
operation is told ``now``. Cancellation (docs/adr/0018) is here beside the others,
with ``cancelled`` one more finished status: a cancel finishes a queued item and
records the request on a running one, whose heartbeats then answer so and whose
recovery or release cancels it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from pydantic import JsonValue

from workqueue.domain import (
    RETURNING_ENDINGS,
    CancelOutcome,
    EnqueueResult,
    HeartbeatAnswer,
    Lease,
    RecoveryResult,
    RunEnding,
    RunOutcome,
    WorkItem,
    WorkStatus,
    next_claimable,
    progress_value,
    stalled_error,
)

__all__ = ["QueueModel"]


class QueueModel:
    """What every store's ``work_items`` should hold after the same operations.

    :param max_stalls: the stall limit recovery is run with.
    """

    def __init__(self, max_stalls: int, rows: Iterable[WorkItem] = ()) -> None:
        self.max_stalls = max_stalls
        self.items: dict[int, WorkItem] = {item.id: item for item in rows}

    def rows(self) -> list[WorkItem]:
        """Every item, by id."""
        return [self.items[item_id] for item_id in sorted(self.items)]

    def get(self, item_id: int) -> WorkItem | None:
        return self.items.get(item_id)

    def list_items(
        self,
        statuses: Collection[WorkStatus] | None,
        kinds: Collection[str] | None,
        worker_ids: Collection[str] | None,
        limit: int,
        newest_first: bool,
    ) -> list[WorkItem]:
        """What a listing must return: filtered, by id, at most ``limit``."""
        rows = [
            item
            for item in self.rows()
            if (statuses is None or item.status in statuses)
            and (kinds is None or item.kind in kinds)
            and (worker_ids is None or item.worker_id in worker_ids)
        ]
        if newest_first:
            rows.reverse()
        return rows[:limit]

    def counts(self) -> dict[tuple[str, WorkStatus], int]:
        return dict(Counter((item.kind, item.status) for item in self.items.values()))

    def enqueue(
        self,
        kind: str,
        payload: dict[str, Any],
        dedup_key: str | None,
        now: datetime,
        *,
        new_id: int,
        priority: int = 0,
        run_at: datetime | None = None,
    ) -> EnqueueResult:
        """The result an enqueue must have; ``new_id`` is the id the store gave, if it created."""
        twin = self._queued_twin(kind, dedup_key, besides=None)
        if twin is not None:
            return EnqueueResult(id=twin, created=False)
        self.items[new_id] = WorkItem.queued(
            new_id,
            kind,
            payload,
            enqueued_at=now,
            dedup_key=dedup_key,
            priority=priority,
            run_at=run_at,
        )
        return EnqueueResult(id=new_id, created=True)

    def claim(
        self, kinds: Collection[str], worker_id: str, now: datetime, lease: timedelta
    ) -> WorkItem | None:
        """The item a claim must return, now running, or None (the domain's claim order)."""
        item = next_claimable(self.items.values(), kinds, now)
        if item is None:
            return None
        self.items[item.id] = replace(
            item,
            status=WorkStatus.RUNNING,
            attempt=item.attempt + 1,
            started_at=now,
            heartbeat_at=now,
            worker_id=worker_id,
            lease_expires_at=now + lease,
        )
        return self.items[item.id]

    def holds(self, lease: Lease) -> bool:
        """Whether ``lease`` is the live lease of a running item."""
        item = self.items.get(lease.item_id)
        return (
            item is not None and item.status is WorkStatus.RUNNING and item.attempt == lease.attempt
        )

    def heartbeat(
        self, lease: Lease, progress: JsonValue, now: datetime, duration: timedelta
    ) -> HeartbeatAnswer:
        if not self.holds(lease):
            return HeartbeatAnswer.LOST
        item = self.items[lease.item_id]
        self.items[item.id] = replace(
            item, heartbeat_at=now, lease_expires_at=now + duration, progress=progress
        )
        if item.cancel_reason is None:
            return HeartbeatAnswer.HELD
        return HeartbeatAnswer.CANCEL_REQUESTED

    def cancel(self, item_id: int, reason: str, now: datetime) -> CancelOutcome:
        """What a cancel must answer, and do: finish a queued item, mark a running one."""
        item = self.items.get(item_id)
        if item is None:
            return CancelOutcome.UNKNOWN
        if item.status is WorkStatus.QUEUED:
            self._finish(item, WorkStatus.CANCELLED, reason, now)
            return CancelOutcome.CANCELLED
        if item.status is not WorkStatus.RUNNING:
            return CancelOutcome.FINISHED
        if item.cancel_reason is not None:
            return CancelOutcome.ALREADY_REQUESTED
        self.items[item_id] = replace(item, cancel_reason=reason)
        return CancelOutcome.REQUESTED

    def finish(self, lease: Lease, outcome: RunOutcome, now: datetime) -> bool:
        """The one write of a run's end: False, changing nothing, when the lease is not held."""
        if not self.holds(lease):
            return False
        item = replace(self.items[lease.item_id], progress=progress_value(outcome.progress))
        self._end(item, outcome, now)
        return True

    def recover(self, now: datetime) -> RecoveryResult:
        """Recover expired leases, newest item first, as the contract fixes."""
        result = RecoveryResult()
        for item_id in sorted(self.items, reverse=True):
            item = self.items[item_id]
            if item.status is not WorkStatus.RUNNING:
                continue
            assert item.lease_expires_at is not None
            if not item.lease_expires_at < now:
                continue
            if item.cancel_reason is not None:
                self._end(item, RunOutcome.cancelled(item.progress), now)
                result.cancelled.append(item_id)
                continue
            stalled = replace(item, stalls=item.stalls + 1)
            if stalled.stalls >= self.max_stalls:
                error = stalled_error(stalled.stalls, self.max_stalls)
                self._end(stalled, RunOutcome.failed(error, item.progress), now)
                result.stalled.append(item_id)
            elif self._end(stalled, RunOutcome.released(item.progress), now) is WorkStatus.QUEUED:
                result.requeued.append(item_id)
            else:
                result.superseded.append(item_id)
        for ids in (result.requeued, result.stalled, result.superseded, result.cancelled):
            ids.sort()
        return result

    def complete_and_claim(
        self,
        lease: Lease,
        progress: JsonValue,
        kinds: Collection[str],
        worker_id: str,
        now: datetime,
        duration: timedelta,
    ) -> tuple[bool, WorkItem | None]:
        """Complete, then claim, exactly as the two calls in turn would."""
        completed = self.finish(lease, RunOutcome.succeeded(progress), now)
        return completed, self.claim(kinds, worker_id, now, duration)

    def enqueue_if_due(
        self,
        kind: str,
        payload: dict[str, Any],
        dedup_key: str,
        interval: timedelta,
        now: datetime,
        *,
        new_id: int | None,
    ) -> EnqueueResult | None:
        """What enqueue_if_due must return; ``new_id`` is the id the store gave, if any."""
        if not self.is_due(kind, interval, now):
            return None
        assert new_id is not None, f"{kind} is due, but enqueue_if_due enqueued nothing"
        return self.enqueue(kind, payload, dedup_key, now, new_id=new_id)

    def purgeable(self, finished_before: datetime) -> dict[int, datetime]:
        """The items a purge with this cutoff may delete, by id, with when each finished."""
        return {
            item.id: item.finished_at
            for item in self.items.values()
            if item.status.is_finished
            and item.finished_at is not None
            and item.finished_at < finished_before
        }

    def purge(self, deleted: Collection[int], finished_before: datetime, limit: int) -> None:
        """Check that a purge deleting ``deleted`` kept the contract, then forget those items.

        Ties in ``finished_at`` may be broken either way; everything else is fixed:
        ``min(limit, purgeable)`` items, each purgeable, none finished later than
        a purgeable item that was kept.

        :raises AssertionError: if the purge broke the contract.
        """
        purgeable = self.purgeable(finished_before)
        wrong = sorted(set(deleted) - set(purgeable))
        assert not wrong, f"purged items it may not: {wrong}"
        assert len(deleted) == min(limit, len(purgeable)), (
            f"purged {len(deleted)} of {len(purgeable)} purgeable items with limit {limit}"
        )
        kept = [finished for item_id, finished in purgeable.items() if item_id not in deleted]
        if deleted and kept:
            assert max(purgeable[item_id] for item_id in deleted) <= min(kept), (
                "purged an item that finished after one it kept"
            )
        for item_id in deleted:
            del self.items[item_id]

    def is_due(self, kind: str, interval: timedelta, now: datetime) -> bool:
        if any(item.kind == kind and not item.status.is_finished for item in self.items.values()):
            return False
        newest = self.newest_finish(kind)
        return newest is None or now - newest >= interval

    def newest_finish(self, kind: str) -> datetime | None:
        """When the newest finished item of ``kind`` finished, if any did."""
        finished = [
            item.finished_at
            for item in self.items.values()
            if item.kind == kind and item.finished_at is not None
        ]
        return max(finished, default=None)

    def _finish(self, item: WorkItem, status: WorkStatus, error: str | None, now: datetime) -> None:
        self.items[item.id] = replace(
            item, status=status, error=error, finished_at=now, lease_expires_at=None
        )

    def _end(self, item: WorkItem, outcome: RunOutcome, now: datetime) -> WorkStatus:
        """Write how ``item``'s run ended; return its new status (queued: back in the queue).

        A failure or a retry adds to the item's failures, a snooze to its snoozes, a
        success writes its result; a retry or a snooze goes back at its run_at.
        """
        twin = None
        if outcome.ending in RETURNING_ENDINGS:
            twin = self._queued_twin(item.kind, item.dedup_key, besides=item.id)
        failure = outcome.failure(item.attempt, now)
        item = replace(
            item,
            run_at=outcome.run_at or item.run_at,
            snoozes=item.snoozes + (1 if outcome.ending is RunEnding.SNOOZED else 0),
            failures=item.failures if failure is None else (*item.failures, failure),
            result=outcome.result if outcome.ending is RunEnding.SUCCEEDED else item.result,
        )
        status, error = outcome.ends_as(cancel_reason=item.cancel_reason, queued_twin=twin)
        if status is WorkStatus.QUEUED:
            self.items[item.id] = replace(
                item, status=status, error=error, lease_expires_at=None, worker_id=None
            )
        else:
            self._finish(item, status, error, now)
        return status

    def _queued_twin(self, kind: str, dedup_key: str | None, *, besides: int | None) -> int | None:
        if dedup_key is None:
            return None
        for item in self.items.values():
            if (
                item.id != besides
                and item.status is WorkStatus.QUEUED
                and item.kind == kind
                and item.dedup_key == dedup_key
            ):
                return item.id
        return None
