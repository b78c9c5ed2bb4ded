"""PostgresWorkStore: claims, fenced writes, recovery, due-ness and purge on PostgreSQL.

It keeps every choice the in-memory store documents (``workqueue.adapters.memory.store``),
and the contract kit checks both: strict lease expiry (``lease_expires_at <
now``), which columns release, recovery and finishing clear or keep, the error
texts of stalled and superseded items, newest-twin-wins on recovery, and
oldest-first purge.

Two mechanisms are PostgreSQL's own:

- **Claim** is one ``UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED)``:
  concurrent claimers never wait for each other and never get the same item.
- **Dedup on return** (docs/adr/0004) is decided inside the one statement
  fragment every end of a run goes through (``end_runs``: finish, the claims'
  completions, recovery). A queued twin committed by an enqueue after the statement's
  snapshot makes the requeue violate the unique dedup index; the statement then
  rolls back whole and runs again, and the second run sees the twin and
  supersedes. So no moment shows two queued twins, and nothing is half-done.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from datetime import datetime, timedelta
from typing import TypeVar

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from pydantic import JsonValue

from workqueue.adapters.postgres.channel import CHANNEL
from workqueue.adapters.postgres.claim_path import ClaimPath, path_after
from workqueue.adapters.postgres.held import HeldConnection
from workqueue.adapters.postgres.pool import lease_columns
from workqueue.adapters.postgres.queue import PostgresWorkQueue
from workqueue.adapters.postgres.rows import (
    kind_cap_from_caps_row,
    kind_cap_from_row,
    kind_pause_from_row,
    work_item_from_row,
)
from workqueue.adapters.postgres.sql import load_statements
from workqueue.adapters.postgres.unavailable import connection_loss_as_unavailable
from workqueue.domain import (
    LARGEST_ITEM_ID,
    RETURNING_ENDINGS,
    BulkBatch,
    CancelOutcome,
    CapSource,
    Clock,
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
    StoreUnavailableError,
    WorkItem,
    WorkStatus,
    WorkStore,
    cap_stays,
    checked_cancel_reason,
    checked_cap,
    checked_pause,
    claim_order,
    decoded,
    kind_name,
    requeued_batch,
)

__all__ = ["PostgresWorkStore", "cancel_outcome", "item_id_bound", "recovered_list"]

_SQL = load_statements("store.sql")
# A run that ends for good, and one whose item returns to queued (store.sql, finish).
_FINISH = _SQL["finish"]
_FINISH_TO_QUEUED = _SQL["finish_to_queued"]
# The claim statements of ClaimPath with each count of leases
# written in for $8, made at its first use (a str.replace of the 5 kB text took 9
# µs a call): see _complete_and_claim.
_COMPLETE_AND_CLAIM: dict[tuple[str, int], str] = {}
_DEDUP_INDEX = "work_items_queued_dedup_key"
# A statement is run again after a race it cannot avoid: a release or recovery
# after an enqueue committed a twin under it, a claim after PostgreSQL ended it to
# break a deadlock. More than a few in a row means something else is wrong.
_MAX_RERUNS = 5

logger = logging.getLogger("workqueue.postgres")

T = TypeVar("T")


def item_id_bound(item_id: int) -> int:
    """``item_id`` as a bound of a range of ids: within a bigint, as every id is."""
    return max(min(item_id, LARGEST_ITEM_ID), -LARGEST_ITEM_ID)


# The heartbeat statement's answer: no row (lease lost), or whether a cancel was requested.
_HEARTBEAT_ANSWERS = {
    None: HeartbeatAnswer.LOST,
    False: HeartbeatAnswer.HELD,
    True: HeartbeatAnswer.CANCEL_REQUESTED,
}


def cancel_outcome(
    changed: str | None, status: str | None, requested: bool | None
) -> CancelOutcome:
    """What the cancel statement did, from its one row.

    ``changed`` is the status it wrote (None when it wrote nothing); ``status`` and
    ``requested`` are the item's as they were before (None when there is no item).
    A running item it did not change either had its cancel requested already or
    finished meanwhile (a write that took the row's lock first).
    """
    if changed == WorkStatus.CANCELLED:
        return CancelOutcome.CANCELLED
    if changed == WorkStatus.RUNNING:
        return CancelOutcome.REQUESTED
    if status is None:
        return CancelOutcome.UNKNOWN
    if status == WorkStatus.RUNNING and requested:
        return CancelOutcome.ALREADY_REQUESTED
    return CancelOutcome.FINISHED


def recovered_list(result: RecoveryResult, ending: str, status: str) -> list[int]:
    """The list of ``result`` a recovered item belongs in: how its run ended, and its status."""
    if ending == RunEnding.CANCELLED:
        return result.cancelled
    if ending == RunEnding.FAILED:
        return result.stalled
    if status == WorkStatus.QUEUED:
        return result.requeued
    return result.superseded


class PostgresWorkStore(WorkStore):  # pragma: no mutate block
    """A :class:`~workqueue.domain.WorkStore` on the ``work_items`` table.

    Its statements go one after another on one connection borrowed from ``pool``
    while they keep coming (:class:`~workqueue.adapters.postgres.held.HeldConnection`), and
    through the pool when that one is busy.

    :param pool: connections to a migrated database (see :func:`create_pool`).
    :param clock: stamps every timestamp and decides which leases have expired.
    """

    def __init__(self, pool: asyncpg.Pool, clock: Clock) -> None:
        self._pool = pool
        self._connection = HeldConnection(pool)
        self._clock = clock
        self._siblings: list[PostgresWorkStore] = []
        # The statement its next claim runs, from what the last one said (claim_path,
        # docs/adr/0035). The first claim runs the capped one, so that a capped kind
        # is never passed over out of claim order for not being known yet.
        self._path = ClaimPath.CAPPED

    @staticmethod
    def _complete_and_claim(name: str, count: int) -> str:
        """The statement ``name`` for ``count`` leases: the count written in for $8, a
        statement per count, each planned once a connection (store.sql; docs/adr/0039)."""
        statement = _COMPLETE_AND_CLAIM.get((name, count))
        if statement is None:
            statement = _SQL[name].replace("$8", str(count))
            _COMPLETE_AND_CLAIM[name, count] = statement
        return statement

    def sibling(self) -> PostgresWorkStore:
        """A store on the same pool and clock that keeps a connection of its own.

        One per lane of a worker (docs/adr/0019): each lane's statements then go
        one after another on its own kept connection instead of meeting another
        lane's busy and going through the pool. :meth:`close` closes it too.
        """
        sibling = PostgresWorkStore(self._pool, self._clock)
        self._siblings.append(sibling)
        return sibling

    async def close(self) -> None:
        """Give the connection this store keeps between statements back to the pool.

        Call it before closing the pool, or the pool waits up to
        :data:`~workqueue.adapters.postgres.held.IDLE_CHECK_SECONDS` for it. The store still
        works afterwards, through the pool. Its siblings are closed too.
        """
        await self._connection.close()
        for sibling in self._siblings:
            await sibling.close()

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        """Take the next claimable item of ``kinds`` in claim order, or return None.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        names = [kind_name(kind) for kind in kinds]
        if not names:
            return None
        # No lease to complete: the statement's completion matches nothing.
        _, claimed = await self._claim(names, worker_id, lease_duration, None, None, None)
        return claimed

    async def next_run_at(self, kinds: Collection[str]) -> datetime | None:
        """The earliest run_at after now of a queued item of ``kinds``, or None.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        names = [kind_name(kind) for kind in kinds]
        with connection_loss_as_unavailable():
            run_at: datetime | None = await self._connection.fetchval(
                _SQL["next_run_at"], names, self._clock.now()
            )
        return run_at

    async def heartbeat(
        self, lease: Lease, *, progress: JsonValue | ProgressSnapshot, lease_duration: timedelta
    ) -> HeartbeatAnswer:
        """Extend a held lease to now + ``lease_duration`` and write ``progress``.

        :returns: LOST, changing nothing, when the lease is no longer held;
            CANCEL_REQUESTED when a cancel of the item was requested; else HELD.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        now = self._clock.now()
        with connection_loss_as_unavailable():
            requested = await self._connection.fetchval(
                _SQL["heartbeat"],
                lease.item_id,
                lease.attempt,
                now,
                now + lease_duration,
                progress,
            )
        return _HEARTBEAT_ANSWERS[requested]

    async def heartbeat_many(
        self,
        beats: Sequence[LeaseProgress],
        *,
        lease_duration: timedelta,
    ) -> list[HeartbeatAnswer]:
        """:meth:`heartbeat` every lease of ``beats`` in one statement, each fenced on its own.

        :returns: one answer per lease, in order.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        if not beats:
            return []
        ids, attempts, progress = lease_columns(beats)
        now = self._clock.now()
        with connection_loss_as_unavailable():
            rows = await self._connection.fetch(
                _SQL["heartbeat_many"], ids, attempts, now, now + lease_duration, progress
            )
        requested = {row["id"]: row["cancel_requested"] for row in rows}
        return [_HEARTBEAT_ANSWERS[requested.get(lease.item_id)] for lease, _ in beats]

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        """End the run as ``outcome`` says, in one fenced statement (``end_runs``).

        :returns: False, changing nothing, when the lease is no longer held.
        :raises StoreUnavailableError: if the database cannot be reached.
        """

        async def finish_once() -> bool:
            row = await self._connection.fetchrow(
                _FINISH_TO_QUEUED if outcome.ending in RETURNING_ENDINGS else _FINISH,
                lease.item_id,
                lease.attempt,
                self._clock.now(),
                outcome.ending.value,
                outcome.progress,
                outcome.error,
                outcome.run_at,
                outcome.result,
            )
            return row is not None

        return await _rerun_on_dedup_race(finish_once)

    async def complete_and_claim(
        self,
        lease: Lease,
        *,
        progress: JsonValue | ProgressSnapshot,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> tuple[bool, WorkItem | None]:
        """Complete this lease and claim the next item, in one statement and one commit.

        :returns: whether the completion found its lease held, and the claimed item
            or None.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        names = [kind_name(kind) for kind in kinds]
        if not names:
            return await self.finish(lease, RunOutcome.succeeded(progress)), None
        return await self._claim(
            names, worker_id, lease_duration, lease.item_id, lease.attempt, progress
        )

    async def complete_and_claim_many(
        self,
        completions: Sequence[LeaseProgress],
        *,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> list[tuple[bool, WorkItem | None]]:
        """Complete these leases and claim as many next items, in one statement and one commit.

        :returns: per completion, in order, whether its lease was held and the item
            claimed along with it (the first in claim order for the first), or None.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        if not completions:
            return []
        ids, attempts, progress = lease_columns(completions)
        names = [kind_name(kind) for kind in kinds]
        held, items = await self._claims(
            names, worker_id, lease_duration, ids, attempts, progress, len(completions)
        )
        claimed: list[WorkItem | None] = [*sorted(items, key=claim_order)]
        claimed += [None] * (len(completions) - len(claimed))
        return [
            (lease.item_id in held, following)
            for (lease, _), following in zip(completions, claimed, strict=True)
        ]

    async def _claim(
        self,
        names: list[str],
        worker_id: str,
        lease_duration: timedelta,
        item_id: int | None,
        attempt: int | None,
        progress: JsonValue | ProgressSnapshot,
    ) -> tuple[bool, WorkItem | None]:
        """Run the claim statement: complete the lease given, if any, and claim."""
        if self._path is not ClaimPath.PLAIN:
            lease = [] if item_id is None else [(Lease(item_id, attempt or 0), progress)]
            held, items = await self._claims(
                names, worker_id, lease_duration, *lease_columns(lease), 1
            )
            return item_id in held, items[0] if items else None
        now = self._clock.now()
        row = await _rerun_on_deadlock(
            lambda: self._connection.fetchrow(
                _SQL["claim"],
                names,
                worker_id,
                now,
                now + lease_duration,
                item_id,
                attempt,
                progress,
            )
        )
        assert row is not None  # the statement always returns its one row
        if row["undelay"]:
            await self._undelay(now)
        self._path = path_after(ClaimPath.PLAIN, capped=bool(row["capped"]), room=None)
        if row["id"] is None and self._path is ClaimPath.CAPPED:
            _, items = await self._claims(names, worker_id, lease_duration, [], [], [], 1)
            return bool(row["completed"]), items[0] if items else None
        claimed = None if row["id"] is None else work_item_from_row(row)
        return bool(row["completed"]), claimed

    async def _claims(
        self,
        names: list[str],
        worker_id: str,
        lease_duration: timedelta,
        ids: list[str],
        attempts: list[str],
        progress: list[str | None],
        count: int,
    ) -> tuple[set[int], list[WorkItem]]:
        """Complete the leases given and claim at most ``count`` items: the ids of the
        leases that were held, and the items claimed, in no order.

        The statement of the store's :class:`ClaimPath`; should the plain or the
        beside statement send it to the capped one having claimed fewer than
        ``count``, the capped one claims the rest at once (docs/adr/0035).
        """
        path = self._path
        now = self._clock.now()
        rows = await self._run_claims(
            path.value, names, worker_id, now, lease_duration, ids, attempts, progress, count
        )
        held = {int(item_id) for item_id in rows[0]["completed"]}
        items = [work_item_from_row(row) for row in rows if row["id"] is not None]
        after = path_after(path, capped=bool(rows[0]["capped"]), room=rows[0].get("room"))
        if after is ClaimPath.CAPPED and path is not ClaimPath.CAPPED and len(items) < count:
            rows = await self._run_claims(
                ClaimPath.CAPPED.value,
                names,
                worker_id,
                now,
                lease_duration,
                [],
                [],
                [],
                count - len(items),
            )
            items += [work_item_from_row(row) for row in rows if row["id"] is not None]
            after = path_after(
                ClaimPath.CAPPED, capped=bool(rows[0]["capped"]), room=rows[0]["room"]
            )
        self._path = after
        return held, items

    async def _run_claims(
        self,
        name: str,
        names: list[str],
        worker_id: str,
        now: datetime,
        lease_duration: timedelta,
        ids: list[str],
        attempts: list[str],
        progress: list[str | None],
        count: int,
    ) -> list[asyncpg.Record]:
        """Run the claim statement ``name`` for ``count`` (and ``undelay`` if it says so)."""
        statement = self._complete_and_claim(name, count)
        rows = await _rerun_on_deadlock(
            lambda: self._connection.fetch(
                statement,
                names,
                worker_id,
                now,
                now + lease_duration,
                ids,
                attempts,
                progress,
            )
        )
        if rows[0]["undelay"]:
            await self._undelay(now)
        return rows

    async def _undelay(self, now: datetime) -> None:
        """Move the due items a claim left waiting into the claim index (``undelay``).

        Best effort: should the store not answer, the next claim that finds them
        due asks again (until then claims find them through their due probe).
        """
        try:
            with connection_loss_as_unavailable():
                await self._connection.fetch(_SQL["undelay"], now)
        except StoreUnavailableError:
            return  # the claim stands; the next claim that finds them due asks again

    async def cancel(self, item_id: int, *, reason: str) -> CancelOutcome:
        """Cancel a queued item now, or record the request on a running one.

        :raises InvalidCancelReasonError: if no store can hold ``reason``.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        checked_cancel_reason(reason)
        if item_id > LARGEST_ITEM_ID:
            return CancelOutcome.UNKNOWN  # beyond a bigint: no item has it
        with connection_loss_as_unavailable():
            row = await self._connection.fetchrow(
                _SQL["cancel"], item_id, self._clock.now(), reason
            )
        assert row is not None  # the statement always returns its one row
        return cancel_outcome(row["changed"], row["status"], row["requested"])

    async def requeue_failed(
        self,
        kind: str,
        *,
        after_id: int,
        up_to_id: int,
        limit: int,
        decode: PayloadDecoder,
    ) -> BulkBatch:
        """Requeue one batch of ``kind``'s failed items in one transaction (docs/adr/0041).

        It locks the batch's rows (``take_failed``), enqueues their new items
        through a :class:`~workqueue.adapters.postgres.queue.PostgresWorkQueue` on the
        same connection (the one insert path, and its dedup), and marks the rows
        (``mark_requeued``); it commits all of it or nothing.

        :raises UnknownKindError: if ``decode`` knows no model for ``kind``.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        with connection_loss_as_unavailable():
            async with self._pool.acquire() as connection, connection.transaction():
                rows = await connection.fetch(
                    _SQL["take_failed"],
                    kind,
                    item_id_bound(after_id),
                    item_id_bound(up_to_id),
                    max(limit, 0),
                )
                taken = [work_item_from_row(row) for row in rows]
                requests, invalid = decoded(taken, decode)
                queue = PostgresWorkQueue(connection, self._clock)
                results = await queue.enqueue_many([request for _, request in requests])
                await connection.execute(
                    _SQL["mark_requeued"],
                    [item.id for item, _ in requests],
                    [result.id for result in results],
                )
        return requeued_batch(taken, results, invalid)

    async def cancel_queued(
        self, kind: str, *, after_id: int, up_to_id: int, limit: int, reason: str
    ) -> BulkBatch:
        """Cancel one batch of ``kind``'s queued items in one statement (``cancel_queued``).

        :raises InvalidCancelReasonError: if no store can hold ``reason``.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        checked_cancel_reason(reason)
        with connection_loss_as_unavailable():
            row = await self._connection.fetchrow(
                _SQL["cancel_queued"],
                kind,
                item_id_bound(after_id),
                item_id_bound(up_to_id),
                max(limit, 0),
                self._clock.now(),
                reason,
            )
        assert row is not None  # the statement always returns its one row
        return BulkBatch(taken=row["taken"], done=row["taken"], last_id=row["last_id"])

    async def pause_kind(self, kind: str, *, reason: str | None = None) -> KindPause:
        """Pause ``kind`` unless it is paused (a row of ``work_kind_pauses``); the pause in force.

        :raises InvalidPauseError: if no store can hold ``kind`` or ``reason``.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        reason = checked_pause(kind, reason)
        with connection_loss_as_unavailable():
            row = await self._connection.fetchrow(
                _SQL["pause_kind"], kind, self._clock.now(), reason
            )
        assert row is not None  # the statement always returns its one row
        return kind_pause_from_row(row)

    async def resume_kind(self, kind: str) -> bool:
        """End the pause of ``kind`` and notify its idle workers; whether it was paused.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        with connection_loss_as_unavailable():
            resumed = await self._connection.fetchval(_SQL["resume_kind"], kind, CHANNEL)
        return bool(resumed)

    async def cap_kind(
        self, kind: str, max_running: int | None, *, source: CapSource = CapSource.OPERATOR
    ) -> KindCap | None:
        """Set or clear the cap of ``kind`` (work_kind_controls, work_kind_slots); the cap
        in force afterwards.

        One transaction: the kind's row locked, its cap written, its slots made anew
        with its running items in the first of them; idle workers of the kind are
        woken, as their claims may have room now.

        :raises InvalidCapError: if ``kind`` cannot be stored or ``max_running`` is
            out of range.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        checked_cap(kind, max_running)
        with connection_loss_as_unavailable():
            current = await self._cap_in_force(self._connection, kind)
        if cap_stays(current, max_running, source):
            # Read only: a worker whose policy's cap is in force starts without the
            # grants that writing a cap needs (README, "A least-privilege role").
            return current

        async def cap_once() -> KindCap | None:
            async with self._pool.acquire() as connection, connection.transaction():
                return await self._write_cap(connection, kind, max_running, source)

        # A claim that hands on a slot of the kind while the slots are made anew can
        # deadlock with it (each waits for a row the other holds): run it again.
        return await _rerun_on_deadlock(cap_once)

    async def _write_cap(
        self,
        connection: PoolConnectionProxy,
        kind: str,
        max_running: int | None,
        source: CapSource,
    ) -> KindCap | None:
        """cap_kind's transaction on ``connection``: the cap in force afterwards."""
        row = await connection.fetchrow(_SQL["lock_controls"], kind)
        current = None if row is None else kind_cap_from_row(kind, row)
        if not cap_stays(current, max_running, source):
            await connection.execute(
                _SQL["set_cap"],
                kind,
                max_running,
                None if max_running is None else source.value,
                None if max_running is None else self._clock.now(),
            )
            await connection.execute(_SQL["drop_slots"], kind)
            if max_running is not None:
                await connection.execute(_SQL["make_slots"], kind, max_running)
            await connection.execute(_SQL["wake_kind"], kind, CHANNEL)
        await connection.execute(_SQL["drop_empty_controls"], kind)
        return await self._cap_in_force(connection, kind)

    @staticmethod
    async def _cap_in_force(
        connection: PoolConnectionProxy | HeldConnection, kind: str
    ) -> KindCap | None:
        rows = await connection.fetch(_SQL["caps"])
        return next((cap for cap in map(kind_cap_from_caps_row, rows) if cap.kind == kind), None)

    async def caps(self) -> list[KindCap]:
        """The caps in force, by kind, each with how many of its slots are held.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        with connection_loss_as_unavailable():
            rows = await self._connection.fetch(_SQL["caps"])
        return [kind_cap_from_caps_row(row) for row in rows]

    async def recover_expired(self, *, max_stalls: int) -> RecoveryResult:
        """Return every running item whose lease expired (``lease_expires_at < now``).

        :raises ValueError: if ``max_stalls`` is below 1.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        if max_stalls < 1:
            raise ValueError(f"max_stalls must be at least 1, not {max_stalls}")

        async def recover_once() -> list[asyncpg.Record]:
            return await self._connection.fetch(
                _SQL["recover_expired"], self._clock.now(), max_stalls
            )

        rows = await _rerun_on_dedup_race(recover_once)
        result = RecoveryResult()
        for row in sorted(rows, key=lambda row: row["id"]):
            recovered_list(result, row["ending"], row["status"]).append(row["id"])
        return result

    async def purge_finished(self, *, finished_before: datetime, limit: int) -> int:
        """Delete at most ``limit`` finished items whose ``finished_at`` is before the cutoff.

        :returns: how many were deleted.
        :raises ValueError: if ``limit`` is below 1.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        if limit < 1:
            raise ValueError(f"purge limit must be at least 1, not {limit}")
        with connection_loss_as_unavailable():
            deleted = await self._connection.fetchval(
                _SQL["purge_finished"], finished_before, limit
            )
        return int(deleted)

    async def get(self, item_id: int) -> WorkItem | None:
        """The item with this id, or None.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        if item_id > LARGEST_ITEM_ID:
            return None  # beyond a bigint: no item has it
        with connection_loss_as_unavailable():
            row = await self._connection.fetchrow(_SQL["get"], item_id)
        return None if row is None else work_item_from_row(row)

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

        :raises ValueError: if a status is not a :class:`~workqueue.domain.WorkStatus` value.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        status_names = None if statuses is None else [WorkStatus(s).value for s in statuses]
        kind_names = None if kinds is None else [kind_name(kind) for kind in kinds]
        workers = None if worker_ids is None else list(worker_ids)
        statement = _SQL["list_items_newest_first" if newest_first else "list_items_oldest_first"]
        with connection_loss_as_unavailable():
            rows = await self._connection.fetch(
                statement, status_names, kind_names, max(limit, 0), workers
            )
        return [work_item_from_row(row) for row in rows]

    async def count_by_kind_and_status(self) -> dict[tuple[str, WorkStatus], int]:
        """How many items each (kind, status) pair has; pairs with none are left out.

        :raises StoreUnavailableError: if the database cannot be reached.
        """
        with connection_loss_as_unavailable():
            rows = await self._connection.fetch(_SQL["count_by_kind_and_status"])
        return {(row["kind"], WorkStatus(row["status"])): row["items"] for row in rows}


async def _rerun_on_deadlock(
    statement: Callable[[], Awaitable[T]],
) -> T:  # pragma: no mutate block
    """Run a claim ``statement``, again if PostgreSQL ended it to break a deadlock.

    A claim that also completes a lease can deadlock with another worker's: each
    statement's claim may keep a lock on a row it passed over (one a concurrent
    claim had just taken, which no longer matched once re-read), and each one's
    completion waits for a row the other so holds. PostgreSQL aborts one of them
    whole (nothing of it is written), so it is simply run again.

    :raises asyncpg.DeadlockDetectedError: if that happens more than
        :data:`_MAX_RERUNS` times in a row.
    :raises StoreUnavailableError: if the database cannot be reached.
    """
    return await _rerun(statement, lambda error: isinstance(error, asyncpg.DeadlockDetectedError))


async def _rerun_on_dedup_race(
    statement: Callable[[], Awaitable[T]],
) -> T:  # pragma: no mutate block
    """Run ``statement``, again if an enqueue committed a queued twin under it.

    :raises asyncpg.UniqueViolationError: if that happens more than
        :data:`_MAX_RERUNS` times in a row.
    :raises StoreUnavailableError: if the database cannot be reached.
    """
    return await _rerun(
        statement,
        lambda error: (
            isinstance(error, asyncpg.UniqueViolationError)
            and error.constraint_name == _DEDUP_INDEX
        ),
    )


async def _rerun(
    statement: Callable[[], Awaitable[T]], again: Callable[[asyncpg.PostgresError], bool]
) -> T:  # pragma: no mutate block
    """Run ``statement``, again after each error ``again`` accepts, :data:`_MAX_RERUNS` at most.

    :raises StoreUnavailableError: if the database cannot be reached.
    """
    reruns = 0
    while True:
        try:
            with connection_loss_as_unavailable():
                return await statement()
        except asyncpg.PostgresError as error:
            reruns += 1
            if not again(error) or reruns > _MAX_RERUNS:
                raise
            logger.info("a statement was ended by %s; running it again", type(error).__name__)
