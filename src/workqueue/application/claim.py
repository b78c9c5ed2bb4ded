"""Claims: one claimed item's lease, and the claimer that takes items and holds one ahead.

A :class:`Claim` is the one place a claimed item's lease is kept track of: until
when it is secured (:attr:`Claim.secured_until`, moved on by each heartbeat that
renews it) and, once it is lost, why (:attr:`Claim.lost`). The heartbeat writes
both, and whether a cancel of the item was requested
(:attr:`Claim.cancel_requested`); the handler's supervision and the outcome write
read them.

A :class:`Claimer` takes the items one executor runs: one at a time, or the next
one along with a completion, which it then *holds* until the executor's next run
takes it (or the executor hands it back).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from pydantic import JsonValue

from workqueue.application.completions import Completions, SoloCompletions
from workqueue.application.renewals import Renewals
from workqueue.domain import Clock, KindPolicy, ProgressSnapshot, WorkItem, WorkStore

__all__ = ["Claim", "Claimer"]


class Claim:
    """One claimed item on its way to an outcome, and the state of its lease.

    :param claimed_at: when the claim was sent, on the executor's clock. The lease
        is taken as secured from then on, so never later than the store's own expiry.
    """

    __slots__ = (
        "cancel_requested",
        "claimed_at",
        "item",
        "log_extra",
        "lost",
        "policy",
        "secured_until",
    )

    policy: KindPolicy
    """The item's kind's policy: set when the item is dispatched to its handler."""

    def __init__(self, item: WorkItem, claimed_at: datetime, lease_duration: timedelta) -> None:
        self.item = item
        self.claimed_at = claimed_at
        self.secured_until = claimed_at + lease_duration
        """The instant the lease last secured runs out unless renewed, on the clock."""
        self.lost: str | None = None
        """Why the lease was lost, or None while it is held."""
        self.cancel_requested = False
        """Whether a heartbeat answered that a cancel of the item was requested."""
        self.log_extra: dict[str, Any] = {
            "item_id": item.id,
            "kind": item.kind,
            "attempt": item.attempt,
        }


class Claimer:
    """Claims the items of ``kinds`` for one executor, and holds one claimed ahead.

    :param store: where items are claimed.
    :param clock: what each claim's lease is measured on.
    :param kinds: the kind names to claim.
    :param worker_id: stamped on every claimed item.
    :param lease_duration: what each claim secures its item for.
    :param completions: how a completion claims the next item; not given, each on
        its own through ``store`` (:class:`~workqueue.application.completions.SoloCompletions`).
        The lanes of one process share
        :class:`~workqueue.application.completions.SharedCompletions`, made with the same kinds,
        worker id and lease duration.
    :param renewals: the leases the process's watchdog renewed while the event loop was
        blocked (docs/adr/0036): a claim that was in flight meanwhile is secured until
        the later of its own lease and that renewal.
    """

    __slots__ = (
        "_clock",
        "_completions",
        "_held",
        "_kinds",
        "_lease_duration",
        "_renewals",
        "_store",
        "_worker_id",
    )

    def __init__(
        self,
        store: WorkStore,
        clock: Clock,
        kinds: Collection[str],
        *,
        worker_id: str,
        lease_duration: timedelta,
        completions: Completions | None = None,
        renewals: Renewals | None = None,
    ) -> None:
        self._store = store
        self._renewals = renewals
        if completions is None:
            completions = SoloCompletions(
                store, kinds=kinds, worker_id=worker_id, lease_duration=lease_duration
            )
        self._completions = completions
        self._clock = clock
        self._kinds = kinds
        self._worker_id = worker_id
        self._lease_duration = lease_duration
        self._held: Claim | None = None

    @property
    def held(self) -> Claim | None:
        """The item held for the next run, if any (it stays held)."""
        return self._held

    def take_held(self) -> Claim | None:
        """The item held, if any, which is then no longer held."""
        held = self._held
        self._held = None
        return held

    async def claim(self) -> Claim | None:
        """Claim the next claimable item of the kinds, in claim order; None when there is none.

        :raises StoreUnavailableError: if the store cannot be reached (nothing was claimed).
        """
        claimed_at = self._clock.now()
        item = await self._store.claim(
            self._kinds, worker_id=self._worker_id, lease_duration=self._lease_duration
        )
        return None if item is None else self._claim_of(item, claimed_at)

    async def next_run_at(self) -> datetime | None:
        """When the next queued item of the kinds that is not yet due becomes claimable.

        :raises StoreUnavailableError: if the store cannot be reached.
        """
        return await self._store.next_run_at(self._kinds)

    async def complete_and_claim(
        self, claim: Claim, progress: JsonValue | ProgressSnapshot
    ) -> bool:
        """Complete ``claim`` and claim the next item in one store call, holding that item.

        Returns whether the completion found the lease held. The item claimed along,
        if any, is held whatever the completion found (the store claims it either way).

        :raises StoreUnavailableError: if the store cannot be reached.
        """
        claimed_at = self._clock.now()
        lease = claim.item.lease
        completed, following = await self._completions.complete_and_claim(lease, progress)
        if following is not None:
            self._held = self._claim_of(following, claimed_at)
        return completed

    def _claim_of(self, item: WorkItem, claimed_at: datetime) -> Claim:
        claim = Claim(item, claimed_at, self._lease_duration)
        if self._renewals is not None:
            claim.secured_until = self._renewals.secured_until(item.lease, claim.secured_until)
        return claim
