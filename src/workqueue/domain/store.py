"""The WorkStore port: everything done to items after they are enqueued."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeAlias

from pydantic import JsonValue

from workqueue.domain.bulk import BulkBatch, PayloadDecoder
from workqueue.domain.cancel import CancelOutcome, HeartbeatAnswer
from workqueue.domain.caps import CapSource, KindCap
from workqueue.domain.items import Lease, WorkItem
from workqueue.domain.pauses import KindPause
from workqueue.domain.progress import ProgressSnapshot
from workqueue.domain.run_outcome import RunOutcome
from workqueue.domain.status import WorkStatus

__all__ = ["LeaseProgress", "RecoveryResult", "WorkStore"]

LeaseProgress: TypeAlias = tuple[Lease, JsonValue | ProgressSnapshot]
"""A lease and the progress to write under it: one element of the calls on many leases
(:meth:`WorkStore.heartbeat_many`, :meth:`WorkStore.complete_and_claim_many`)."""


@dataclass(frozen=True, slots=True)
class RecoveryResult:
    """What one lease-recovery pass did, by item id.

    - ``requeued``: expired leases put back in queued with one more stall;
    - ``stalled``: expired leases that reached the stall limit, now failed;
    - ``superseded``: expired leases whose return to queued would have made a second
      queued item with the same kind and dedup key; failed instead, leaving the
      queued twin to do the work (see docs/adr on dedup);
    - ``cancelled``: expired leases of items whose cancel was requested: cancelled,
      with no stall counted (docs/adr/0018).
    """

    requeued: list[int] = field(default_factory=list)
    stalled: list[int] = field(default_factory=list)
    superseded: list[int] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.requeued) + len(self.stalled) + len(self.superseded) + len(self.cancelled)


class WorkStore(ABC):
    """Claims, the fenced writes of a run (heartbeat, finish), recovery, purge, listing. No insert.

    Every store subclasses this port: it implements the abstract methods and may
    override :meth:`complete_and_claim`, whose default is the two calls it stands for.

    Every timestamp comes from the store's Clock. Every write after a claim is
    fenced by the lease (id, attempt) and ``status = 'running'``: it returns False
    and changes nothing when the lease is no longer held.

    The writes take ``progress`` as a JSON value or as a
    :class:`~workqueue.domain.ProgressSnapshot`, whose JSON was encoded once for all the
    writes of it (the executor passes those); a store writes the same value either
    way (:func:`~workqueue.domain.progress_value`).

    :raises StoreUnavailableError: from any method, when the store cannot be reached.
    """

    @abstractmethod
    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        """Take the next claimable item of one of ``kinds``, in claim order.

        Claimable: queued and due (``run_at`` at or before now); the order: the
        highest priority first, then the oldest id (:mod:`workqueue.domain.claim_order`).
        Sets it running, increments attempt, stamps started_at, heartbeat_at,
        worker_id and lease_expires_at = now + lease_duration. Returns the claimed
        item, or None when nothing of those kinds is claimable. Concurrent claimers
        never get the same item.
        """
        ...

    @abstractmethod
    async def next_run_at(self, kinds: Collection[str]) -> datetime | None:
        """When the next queued item of ``kinds`` that is not yet due becomes claimable.

        The earliest ``run_at`` after now among the queued items of those kinds, or
        None when none waits: an idle worker sleeps until then at most
        (:func:`~workqueue.domain.next_run_at`).
        """
        ...

    @abstractmethod
    async def heartbeat(
        self, lease: Lease, *, progress: JsonValue | ProgressSnapshot, lease_duration: timedelta
    ) -> HeartbeatAnswer:
        """Extend the lease to now + lease_duration and write the progress snapshot.

        Returns :attr:`~workqueue.domain.HeartbeatAnswer.LOST` (falsy), changing nothing, when
        no running item matches the lease;
        :attr:`~workqueue.domain.HeartbeatAnswer.CANCEL_REQUESTED`
        when it does and a cancel of the item was requested (the lease is extended
        all the same, so that the holder can write ``cancelled``); else ``HELD``.
        """
        ...

    async def heartbeat_many(
        self,
        beats: Sequence[LeaseProgress],
        *,
        lease_duration: timedelta,
    ) -> list[HeartbeatAnswer]:
        """:meth:`heartbeat` each of ``beats``, a lease and its progress: one answer each, in order.

        Each lease is fenced and answered on its own, exactly as if each were
        heartbeated in turn: one that is no longer held is LOST and changes nothing,
        whatever the others are. A worker running several items at once uses this
        to renew all its leases in one store call per heartbeat interval.

        This default does just that, one :meth:`heartbeat` per lease; a store that
        inherits it needs nothing more. A store may override it to do all of them
        in one step (the PostgreSQL store does it in one statement).
        """
        return [
            await self.heartbeat(lease, progress=progress, lease_duration=lease_duration)
            for lease, progress in beats
        ]

    @abstractmethod
    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        """End the run of the item ``lease`` holds as ``outcome`` says, and write its progress.

        The one fenced write of every way a run ends (:class:`~workqueue.domain.RunOutcome`):
        what the row then holds is :meth:`~workqueue.domain.RunOutcome.ends_as`. Every
        ending but a release back to queued stamps ``finished_at`` and keeps
        ``worker_id`` (the last holder); every ending clears ``lease_expires_at``. A
        release back to queued clears ``worker_id`` and ``finished_at`` and keeps
        ``attempt``, ``stalls`` and ``started_at``; when a queued item with the same
        kind and dedup key exists, the released item is failed as superseded instead
        (docs/adr/0004), and when a cancel of it was requested, it is cancelled.

        :returns: False, changing nothing, when the lease is no longer held.
        """
        ...

    async def complete_and_claim(
        self,
        lease: Lease,
        *,
        progress: JsonValue | ProgressSnapshot,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> tuple[bool, WorkItem | None]:
        """Finish this lease as succeeded, then :meth:`claim` the next item of ``kinds``.

        Returns what each of the two returns. The claim happens whether or not the
        completion found its lease held, exactly as if the two were called in turn;
        a worker that runs item after item uses this to save a round trip per item.

        This default does just that, two calls; a store that inherits it needs
        nothing more. A store may override it to do both in one step (the
        PostgreSQL store does it in one statement), keeping the fence of
        :meth:`finish` and the order and kinds of :meth:`claim`.
        """
        completed = await self.finish(lease, RunOutcome.succeeded(progress))
        claimed = await self.claim(kinds, worker_id=worker_id, lease_duration=lease_duration)
        return completed, claimed

    async def complete_and_claim_many(
        self,
        completions: Sequence[LeaseProgress],
        *,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> list[tuple[bool, WorkItem | None]]:
        """:meth:`complete_and_claim` each of ``completions``, a lease and its progress.

        One answer per completion, in order: whether its lease was held, and the
        item claimed along with it (None once nothing of ``kinds`` is queued). Each
        completion is fenced on its own; the claims take the oldest queued items,
        the oldest for the first completion, exactly as if each were called in
        turn. A worker whose lanes finish items together uses this to complete
        and claim for all of them in one step.

        This default does just that, one :meth:`complete_and_claim` per
        completion; a store that inherits it needs nothing more. A store may
        override it to do all of them in one step (the PostgreSQL store does it
        in one statement).
        """
        return [
            await self.complete_and_claim(
                lease,
                progress=progress,
                kinds=kinds,
                worker_id=worker_id,
                lease_duration=lease_duration,
            )
            for lease, progress in completions
        ]

    @abstractmethod
    async def cancel(self, item_id: int, *, reason: str) -> CancelOutcome:
        """Cancel the item: at once when queued, by its holder when running.

        A queued item becomes ``cancelled``, ``error`` = ``reason``, ``finished_at``
        stamped, and no claim gets it any more. A running item keeps running, its
        ``cancel_reason`` set to ``reason``: its holder's heartbeats answer
        :attr:`~workqueue.domain.HeartbeatAnswer.CANCEL_REQUESTED` from then on, and lease
        recovery ends it ``cancelled``. A finished or unknown item is not changed.
        Atomic against claims and fenced writes: a cancel racing a claim either
        cancels the queued item or records the request on the running one.
        """
        ...

    @abstractmethod
    async def pause_kind(self, kind: str, *, reason: str | None = None) -> KindPause:
        """Pause ``kind``: from now on no claim takes an item of it, until :meth:`resume_kind`.

        Its running items run on and finish as usual; enqueues still add items,
        which wait in ``queued``. The pause is stored: it holds for every worker,
        those started later too, across restarts (docs/adr/0034). Pausing a paused
        kind changes nothing.

        :returns: the pause in force: this one, or the earlier one still holding.
        :raises InvalidPauseError: if ``kind`` is blank or no store can hold it or
            ``reason`` (:func:`~workqueue.domain.checked_pause`).
        """
        ...

    @abstractmethod
    async def resume_kind(self, kind: str) -> bool:
        """End the pause of ``kind``: claims take its items again, in claim order.

        Idle workers that serve the kind are woken as an enqueue wakes them.

        :returns: whether ``kind`` was paused.
        """
        ...

    @abstractmethod
    async def cap_kind(
        self, kind: str, max_running: int | None, *, source: CapSource = CapSource.OPERATOR
    ) -> KindCap | None:
        """Cap ``kind`` at ``max_running`` items running at once across every worker, or
        clear its cap (None): docs/adr/0035, :mod:`workqueue.domain.caps`.

        A claim of a capped kind takes one of its free slots with the item, and the
        slot is free again as the run ends, however it ends; items over the cap stay
        queued in claim order. Setting a cap counts the kind's running items against
        it (the oldest first). A cap from a policy (``source`` POLICY) never changes
        an operator's; setting the cap in force again changes nothing.

        :returns: the cap in force afterwards, or None when the kind has none.
        :raises InvalidCapError: if ``kind`` is blank or cannot be stored, or
            ``max_running`` is out of range (:func:`~workqueue.domain.checked_cap`).
        """
        ...

    @abstractmethod
    async def requeue_failed(
        self,
        kind: str,
        *,
        after_id: int,
        up_to_id: int,
        limit: int,
        decode: PayloadDecoder,
    ) -> BulkBatch:
        """Requeue one batch of ``kind``'s failed items, as one step (docs/adr/0041).

        It takes, in id order, at most ``limit`` failed items of ``kind`` with ids
        above ``after_id`` and at most ``up_to_id`` that no bulk requeue requeued
        yet, passing over items another call holds. For each it enqueues, through the
        store's own :class:`~workqueue.domain.WorkQueue`, a new item with its kind,
        payload (through ``decode``) and dedup key, as a single requeue would, and
        writes the new item's id, or the absorbing twin's, to its ``requeued_as``.
        An item whose payload ``decode`` refuses stays as it was, its id in
        ``invalid``. The enqueues and the marks are one transaction: a failed item
        is requeued once, however many calls race for it.

        :raises UnknownKindError: if ``decode`` knows no model for ``kind``; nothing
            is written.
        """
        ...

    @abstractmethod
    async def cancel_queued(
        self, kind: str, *, after_id: int, up_to_id: int, limit: int, reason: str
    ) -> BulkBatch:
        """Cancel one batch of ``kind``'s queued items (delayed ones too), as one step.

        It takes, in id order, at most ``limit`` queued items of ``kind`` with ids
        above ``after_id`` and at most ``up_to_id``, passing over items another call
        or a claim holds, and ends each ``cancelled`` as :meth:`cancel` ends a queued
        item (``error`` = ``reason``, ``finished_at`` stamped).

        :raises InvalidCancelReasonError: if no store can hold ``reason``.
        """
        ...

    @abstractmethod
    async def caps(self) -> list[KindCap]:
        """The caps in force, by kind, each with how many of its slots are held now."""
        ...

    @abstractmethod
    async def recover_expired(self, *, max_stalls: int) -> RecoveryResult:
        """Return every running item whose lease has expired to queued, with stalls + 1.

        An item whose stalls reach ``max_stalls`` is failed with an error saying it
        stalled, instead of being queued again. An item whose cancel was requested is
        cancelled instead (``error`` = its ``cancel_reason``), with no stall counted.
        """
        ...

    @abstractmethod
    async def purge_finished(self, *, finished_before: datetime, limit: int) -> int:
        """Delete at most ``limit`` finished items (any final status) finished before the cutoff.

        Returns how many were deleted; queued and running items are never touched.
        Callers loop until a batch deletes fewer than ``limit``.
        """
        ...

    @abstractmethod
    async def get(self, item_id: int) -> WorkItem | None:
        """The item with this id, or None."""
        ...

    @abstractmethod
    async def list_items(
        self,
        *,
        statuses: Collection[WorkStatus] | None = None,
        kinds: Collection[str] | None = None,
        worker_ids: Collection[str] | None = None,
        limit: int = 100,
        newest_first: bool = False,
    ) -> list[WorkItem]:
        """Items filtered by status, kind and worker, by id (oldest first unless newest_first).

        ``worker_ids`` keeps the items whose ``worker_id`` (the holder of a running
        item, the last holder of a finished one) is one of them; an item never claimed,
        or released back to queued, has none and is left out by it. Every store
        defaults to at most 100 items, oldest first.
        """
        ...

    @abstractmethod
    async def count_by_kind_and_status(self) -> dict[tuple[str, WorkStatus], int]:
        """How many items each (kind, status) pair has; pairs with none are left out."""
        ...
