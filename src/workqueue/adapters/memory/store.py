"""InMemoryWorkStore: claims, fenced writes, recovery, due-ness and purge on plain Python.

The PostgreSQL store must behave identically; these are the choices DESIGN.md
leaves open, made here and checked by the contract kit
(``workqueue.adapters.testing.contract``) on both stores:

- **Lease columns.** ``lease_expires_at`` is set exactly while an item is
  ``running``. Release and recovery (back to ``queued``) clear
  ``lease_expires_at`` and ``worker_id`` and keep ``started_at``,
  ``heartbeat_at``, ``attempt`` and ``progress`` as history, so the next attempt
  sees the earlier progress snapshot. Every way of finishing (complete, fail,
  stalled, superseded) clears ``lease_expires_at``, keeps ``worker_id`` (the last
  holder) and stamps ``finished_at``.
- **Claim** leaves ``progress`` and ``stalls`` alone; ``error`` and
  ``finished_at`` are None on every live item because only finishing writes them.
- **Expiry** is strict: a lease has expired when ``lease_expires_at < now``. At
  the very instant it expires it is still held.
- **Dedup on return.** When release or recovery would put an item back in
  ``queued`` while another ``queued`` item of the same kind and dedup key exists,
  the returning item is failed instead with the error
  ``superseded by queued item <id> with the same dedup key``; the queued twin,
  whose payload is newer, does the work. Release still returns True then (the
  lease was held and the write happened). Items without a dedup key are never
  superseded.
- **Recovery** takes expired items one at a time in *descending* id order, each
  seeing the previous one's effect: when two expired twins return together the
  newer one (newer payload) is requeued and the older one is superseded by it.
  The stall is counted in every case. An item whose ``stalls + 1`` reaches
  ``max_stalls`` is failed with ``stalled: lease expired <n> times (max stalls
  <max>)``, which wins over superseding. Each list of the
  :class:`~workqueue.domain.RecoveryResult` is in ascending id order.
- **Cancel** (docs/adr/0018) of a queued item finishes it ``cancelled`` with the
  reason in ``error``; of a running item, sets ``cancel_reason`` and nothing else
  (a second cancel finds it already requested and changes nothing). Every
  heartbeat of such an item extends the lease and answers ``CANCEL_REQUESTED``;
  ``mark_cancelled`` finishes it with ``error`` = ``cancel_reason``. The request is
  kept on the row however the item ends (a completion that wins the race ends it
  ``succeeded``, the request left as history). Recovery of an expired item whose
  cancel was requested cancels it, counting no stall; that wins over stalling and
  superseding. A release of such an item cancels it too.
- **Pauses** (docs/adr/0034) live in the state beside the items: a claim leaves
  out the paused kinds; a resume announces the kind as an enqueue does, so that
  idle workers of it wake.
- **Caps** (docs/adr/0035) are slots in the state: a claim leaves out the capped
  kinds with no free slot, and takes the first free slot with its item; every
  end of a run (``_end``) frees the slot its item held.
- **Due-ness** looks at the newest ``finished_at`` of the kind's finished items
  (any final status): due when ``now - newest >= interval``.
- **Purge** deletes the oldest ``finished_at`` first (ties by id) among items
  finished strictly before the cutoff.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import replace
from datetime import datetime, timedelta

from pydantic import JsonValue

from workqueue.adapters.memory.queue import InMemoryWorkQueue
from workqueue.adapters.memory.state import InMemoryState, StoredCap
from workqueue.domain import (
    FINISHED_STATUSES,
    RETURNING_ENDINGS,
    BulkAction,
    BulkBatch,
    CancelOutcome,
    CapSource,
    Clock,
    HeartbeatAnswer,
    KindCap,
    KindPause,
    Lease,
    PayloadDecoder,
    ProgressSnapshot,
    RecoveryResult,
    RunEnding,
    RunOutcome,
    WorkItem,
    WorkStatus,
    WorkStore,
    cap_stays,
    checked_cancel_reason,
    checked_cap,
    checked_pause,
    decoded,
    kind_name,
    next_claimable,
    next_run_at,
    progress_value,
    requeued_batch,
    stalled_error,
)

__all__ = ["InMemoryWorkStore"]


class InMemoryWorkStore(WorkStore):
    """A :class:`~workqueue.domain.WorkStore` over an :class:`InMemoryState`.

    It inherits the port's :meth:`~workqueue.domain.WorkStore.complete_and_claim`: a
    completion and then a claim, which on one event loop is as atomic as each.

    Each method runs without awaiting anything, so on one event loop it is atomic,
    as a transaction is on PostgreSQL.

    :param state: the shared in-memory rows.
    :param clock: stamps every timestamp and decides which leases have expired.
    """

    def __init__(self, state: InMemoryState, clock: Clock) -> None:
        self._state = state
        self._clock = clock

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        """Take the next claimable item of ``kinds`` (:func:`~workqueue.domain.next_claimable`).

        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        wanted = {kind_name(kind) for kind in kinds} - self._state.pauses.keys()
        wanted -= {kind for kind, slots in self._state.slots.items() if None not in slots}
        now = self._clock.now()
        item = next_claimable(self._state.items.values(), wanted, now)
        if item is None:
            return None
        slots = self._state.slots.get(item.kind)
        if slots is not None:
            slots[slots.index(None)] = item.id
        return self._state.write(
            replace(
                item,
                status=WorkStatus.RUNNING,
                attempt=item.attempt + 1,
                started_at=now,
                heartbeat_at=now,
                worker_id=worker_id,
                lease_expires_at=now + lease_duration,
            )
        )

    async def next_run_at(self, kinds: Collection[str]) -> datetime | None:
        """The earliest run_at after now of a queued item of ``kinds``
        (:func:`~workqueue.domain.next_run_at`).

        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        wanted = {kind_name(kind) for kind in kinds} - self._state.pauses.keys()
        return next_run_at(self._state.items.values(), wanted, self._clock.now())

    async def heartbeat(
        self, lease: Lease, *, progress: JsonValue | ProgressSnapshot, lease_duration: timedelta
    ) -> HeartbeatAnswer:
        """Extend a held lease to now + ``lease_duration`` and write ``progress``.

        :returns: LOST, changing nothing, when the lease is no longer held;
            CANCEL_REQUESTED when a cancel of the item was requested; else HELD.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        item = self._held(lease)
        if item is None:
            return HeartbeatAnswer.LOST
        now = self._clock.now()
        self._state.write(
            replace(
                item,
                heartbeat_at=now,
                lease_expires_at=now + lease_duration,
                progress=progress_value(progress),
            )
        )
        if item.cancel_reason is None:
            return HeartbeatAnswer.HELD
        return HeartbeatAnswer.CANCEL_REQUESTED

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        """End the run as ``outcome`` says (:meth:`RunOutcome.ends_as`) and write its progress.

        :returns: False, changing nothing, when the lease is no longer held.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        item = self._held(lease)
        if item is None:
            return False
        self._end(item, outcome)
        return True

    async def cancel(self, item_id: int, *, reason: str) -> CancelOutcome:
        """Cancel a queued item now, or record the request on a running one.

        :raises InvalidCancelReasonError: if no store can hold ``reason``.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        checked_cancel_reason(reason)
        self._state.check_available()
        item = self._state.items.get(item_id)
        if item is None:
            return CancelOutcome.UNKNOWN
        if item.status is WorkStatus.QUEUED:
            self._finish(item, WorkStatus.CANCELLED, error=reason)
            return CancelOutcome.CANCELLED
        if item.status is not WorkStatus.RUNNING:
            return CancelOutcome.FINISHED
        if item.cancel_reason is not None:
            return CancelOutcome.ALREADY_REQUESTED
        self._state.write(replace(item, cancel_reason=reason))
        return CancelOutcome.REQUESTED

    async def requeue_failed(
        self,
        kind: str,
        *,
        after_id: int,
        up_to_id: int,
        limit: int,
        decode: PayloadDecoder,
    ) -> BulkBatch:
        """Requeue one batch of ``kind``'s failed items through an in-memory queue on this state.

        Nothing is awaited between taking the items, enqueueing and marking them:
        no other coroutine sees the batch half done.

        :raises UnknownKindError: if ``decode`` knows no model for ``kind``.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        taken = self._bulk_batch(kind, BulkAction.REQUEUE_FAILED, after_id, up_to_id, limit)
        requests, invalid = decoded(taken, decode)
        queue = InMemoryWorkQueue(self._state, self._clock)
        results = []
        for item, request in requests:
            result = await queue.enqueue(request.payload, dedup_key=request.dedup_key)
            self._state.write(replace(item, requeued_as=result.id))
            results.append(result)
        return requeued_batch(taken, results, invalid)

    async def cancel_queued(
        self, kind: str, *, after_id: int, up_to_id: int, limit: int, reason: str
    ) -> BulkBatch:
        """Cancel one batch of ``kind``'s queued items, as :meth:`cancel` cancels each.

        :raises InvalidCancelReasonError: if no store can hold ``reason``.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        checked_cancel_reason(reason)
        self._state.check_available()
        taken = self._bulk_batch(kind, BulkAction.CANCEL_QUEUED, after_id, up_to_id, limit)
        for item in taken:
            self._finish(item, WorkStatus.CANCELLED, error=reason)
        return BulkBatch(taken=len(taken), done=len(taken), last_id=taken[-1].id if taken else None)

    def _bulk_batch(
        self, kind: str, action: BulkAction, after_id: int, up_to_id: int, limit: int
    ) -> list[WorkItem]:
        """The items one batch of ``action`` on ``kind`` takes, in id order."""
        taken = [
            item
            for item in self._state.items.values()
            if action.takes(item, kind) and after_id < item.id <= up_to_id
        ]
        return sorted(taken, key=lambda item: item.id)[: max(limit, 0)]

    async def pause_kind(self, kind: str, *, reason: str | None = None) -> KindPause:
        """Pause ``kind`` unless it is paused; return the pause in force.

        :raises InvalidPauseError: if no store can hold ``kind`` or ``reason``.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        reason = checked_pause(kind, reason)
        self._state.check_available()
        pause = KindPause(kind=kind, paused_at=self._clock.now(), reason=reason)
        return self._state.pauses.setdefault(kind, pause)

    async def resume_kind(self, kind: str) -> bool:
        """End the pause of ``kind`` and wake its idle workers; whether it was paused.

        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        if self._state.pauses.pop(kind, None) is None:
            return False
        self._state.announce_enqueued(kind)
        return True

    async def cap_kind(
        self, kind: str, max_running: int | None, *, source: CapSource = CapSource.OPERATOR
    ) -> KindCap | None:
        """Set or clear the cap of ``kind``; the cap in force afterwards.

        :raises InvalidCapError: if ``kind`` cannot be stored or ``max_running`` is
            out of range.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        checked_cap(kind, max_running)
        self._state.check_available()
        current = self._cap(kind) if kind in self._state.caps else None
        if cap_stays(current, max_running, source):
            return current
        if max_running is None:
            del self._state.caps[kind], self._state.slots[kind]
            self._state.announce_enqueued(kind)
            return None
        running = sorted(
            item.id
            for item in self._state.items.values()
            if item.kind == kind and item.status is WorkStatus.RUNNING
        )[:max_running]
        self._state.caps[kind] = StoredCap(max_running, source, self._clock.now())
        self._state.slots[kind] = [*running, *[None] * (max_running - len(running))]
        self._state.announce_enqueued(kind)
        return self._cap(kind)

    async def caps(self) -> list[KindCap]:
        """The caps in force, by kind.

        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        return [self._cap(kind) for kind in sorted(self._state.caps)]

    def _cap(self, kind: str) -> KindCap:
        cap = self._state.caps[kind]
        held = sum(holder is not None for holder in self._state.slots[kind])
        return KindCap(kind, cap.max_running, cap.source, cap.set_at, held)

    async def recover_expired(self, *, max_stalls: int) -> RecoveryResult:
        """Return every running item whose lease expired (``lease_expires_at < now``).

        :raises ValueError: if ``max_stalls`` is below 1.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        if max_stalls < 1:
            raise ValueError(f"max_stalls must be at least 1, not {max_stalls}")
        self._state.check_available()
        now = self._clock.now()
        expired = [
            item
            for item in self._state.items.values()
            if item.status is WorkStatus.RUNNING
            and item.lease_expires_at is not None
            and item.lease_expires_at < now
        ]
        result = RecoveryResult()
        for item in sorted(expired, key=lambda item: item.id, reverse=True):
            if item.cancel_reason is not None:
                self._end(item, RunOutcome.cancelled(item.progress))
                result.cancelled.append(item.id)
                continue
            stalled = replace(item, stalls=item.stalls + 1)
            if stalled.stalls >= max_stalls:
                error = stalled_error(stalled.stalls, max_stalls)
                self._end(stalled, RunOutcome.failed(error, item.progress))
                result.stalled.append(item.id)
            elif self._end(stalled, RunOutcome.released(item.progress)) is WorkStatus.QUEUED:
                result.requeued.append(item.id)
            else:
                result.superseded.append(item.id)
        for ids in (result.requeued, result.stalled, result.superseded, result.cancelled):
            ids.sort()
        return result

    async def purge_finished(self, *, finished_before: datetime, limit: int) -> int:
        """Delete at most ``limit`` finished items whose ``finished_at`` is before the cutoff.

        :returns: how many were deleted.
        :raises ValueError: if ``limit`` is below 1.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        if limit < 1:
            raise ValueError(f"purge limit must be at least 1, not {limit}")
        self._state.check_available()
        doomed = sorted(
            (
                item
                for item in self._state.items.values()
                if item.status in FINISHED_STATUSES
                and item.finished_at is not None
                and item.finished_at < finished_before
            ),
            key=lambda item: (item.finished_at, item.id),
        )[:limit]
        for item in doomed:
            del self._state.items[item.id]
        return len(doomed)

    async def get(self, item_id: int) -> WorkItem | None:
        """The item with this id, or None.

        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        return self._state.read(item_id)

    async def list_items(
        self,
        *,
        statuses: Collection[WorkStatus] | None = None,
        kinds: Collection[str] | None = None,
        worker_ids: Collection[str] | None = None,
        limit: int = 100,
        newest_first: bool = False,
    ) -> list[WorkItem]:
        """Items filtered by status, kind and worker, by id (oldest first unless
        ``newest_first``).

        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        wanted_statuses = None if statuses is None else {WorkStatus(s) for s in statuses}
        wanted_kinds = None if kinds is None else {kind_name(kind) for kind in kinds}
        wanted_workers = None if worker_ids is None else set(worker_ids)
        items = [
            item
            for item in self._state.snapshot()
            if (wanted_statuses is None or item.status in wanted_statuses)
            and (wanted_kinds is None or item.kind in wanted_kinds)
            and (wanted_workers is None or item.worker_id in wanted_workers)
        ]
        if newest_first:
            items.reverse()
        return items[: max(limit, 0)]

    async def count_by_kind_and_status(self) -> dict[tuple[str, WorkStatus], int]:
        """How many items each (kind, status) pair has; pairs with none are left out.

        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        return dict(Counter((item.kind, item.status) for item in self._state.items.values()))

    def _held(self, lease: Lease) -> WorkItem | None:
        # The fence of every write after a claim: id, attempt and still running.
        item = self._state.items.get(lease.item_id)
        if item is None or item.attempt != lease.attempt or item.status is not WorkStatus.RUNNING:
            return None
        return item

    def _end(self, item: WorkItem, outcome: RunOutcome) -> WorkStatus:
        """Write how ``item``'s run ended, with the outcome's progress; return its new status.

        The one way back to queued: a release, a retry or a snooze goes back (at the
        outcome's run_at, if any) unless ``ends_as`` says otherwise. A failure or a
        retry is appended to the item's failures; a snooze is counted.
        """
        ending = outcome.ending
        slots = self._state.slots.get(item.kind, [])
        if item.id in slots:
            slots[slots.index(item.id)] = None
        failure = outcome.failure(item.attempt, self._clock.now())
        failures = item.failures if failure is None else (*item.failures, failure)
        item = replace(
            item,
            progress=progress_value(outcome.progress),
            run_at=outcome.run_at or item.run_at,
            snoozes=item.snoozes + (1 if ending is RunEnding.SNOOZED else 0),
            failures=failures,
            # A running item has no result yet; only a success's outcome carries one.
            result=outcome.result,
        )
        # Only an ending back to queued asks for a twin (ends_as reads it for no other).
        twin = self._queued_twin(item) if ending in RETURNING_ENDINGS else None  # pragma: no mutate
        status, error = outcome.ends_as(cancel_reason=item.cancel_reason, queued_twin=twin)
        if status is WorkStatus.QUEUED:
            self._state.write(
                replace(item, status=status, error=error, lease_expires_at=None, worker_id=None)
            )
        else:
            self._finish(item, status, error=error)
        return status

    def _finish(self, item: WorkItem, status: WorkStatus, *, error: str | None) -> None:
        self._state.write(
            replace(
                item,
                status=status,
                error=error,
                finished_at=self._clock.now(),
                lease_expires_at=None,
            )
        )

    def _queued_twin(self, item: WorkItem) -> int | None:
        if item.dedup_key is None:
            return None
        for other in self._state.items.values():
            if (
                other.id != item.id
                and other.status is WorkStatus.QUEUED
                and other.kind == item.kind
                and other.dedup_key == item.dedup_key
            ):
                return other.id
        return None
