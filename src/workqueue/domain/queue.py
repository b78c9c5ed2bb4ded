"""The WorkQueue port: the only way work items come into being."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from workqueue.domain.payload import WorkPayload
from workqueue.domain.schedule import WorkSchedule
from workqueue.domain.timing import DEFAULT_PRIORITY

__all__ = ["EnqueueRequest", "EnqueueResult", "WorkQueue"]


@dataclass(frozen=True, slots=True)
class EnqueueResult:
    """What an enqueue did: the id of the queued item, and whether it is new.

    ``created`` is False when a queued item of the same kind and dedup key already
    existed and absorbed the enqueue; ``id`` is then that item's id.
    """

    id: int
    created: bool

    @property
    def absorbed(self) -> bool:
        """True when an existing queued item absorbed this enqueue."""
        return not self.created


@dataclass(frozen=True, slots=True)
class EnqueueRequest:
    """One entry of a batch enqueue: what :meth:`WorkQueue.enqueue` takes, as one value."""

    payload: WorkPayload
    dedup_key: str | None = None
    priority: int = DEFAULT_PRIORITY
    run_at: datetime | None = None
    delay: timedelta | None = None


class WorkQueue(Protocol):
    """Puts work into the queue. THE ONLY insert path into ``work_items``."""

    async def enqueue(
        self,
        payload: WorkPayload,
        *,
        dedup_key: str | None = None,
        priority: int = DEFAULT_PRIORITY,
        run_at: datetime | None = None,
        delay: timedelta | None = None,
    ) -> EnqueueResult:
        """Insert a queued item (attempt 0, stalls 0) for ``payload``.

        With ``dedup_key``, an enqueue while a queued item of the same kind and key
        exists is absorbed: nothing is inserted and that item's id is returned (the
        item keeps its own priority and run_at). Running and finished items absorb
        nothing.

        ``priority`` (-100..100, larger runs sooner) and ``run_at`` (a time with a time
        zone) or ``delay`` (from now) time the item's claims (``domain/timing.py``):
        it is not claimable before its run_at, which is now when neither is given.

        :raises InvalidPayloadError: if the payload does not validate against its model.
        :raises InvalidDedupKeyError: if the dedup key is empty or too long.
        :raises InvalidPriorityError: if the priority is not an integer from -100 to 100.
        :raises InvalidRunAtError: if run_at has no time zone, delay is negative, or
            both are given.
        :raises StoreUnavailableError: if the store cannot be reached.
        """
        ...

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """Enqueue every request in one round trip, in order, with enqueue's semantics.

        Requests of one batch with the same kind and dedup key coalesce: later ones
        are absorbed by the first. Every request is checked before anything is
        written, so a bad one leaves the whole batch unwritten.
        """
        ...

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        """Atomically enqueue ``schedule``'s payload with its dedup key, if its kind is due.

        Due as in DESIGN.md semantics 7: no item of the kind is queued or running,
        and its newest finished item finished at least ``schedule.interval`` ago, or
        none exists. The due check and the insert are one atomic step against
        concurrent schedulers *and* concurrent claimers: a kind found due is never
        enqueued a second time because the first item was claimed before this
        insert landed (see docs/adr/0005).

        :returns: what the enqueue did (a due kind has no queued item to absorb it,
            so the item is new), or None when the kind is not due; nothing is
            written then.
        :raises InvalidPayloadError: if the payload does not validate against its model.
        :raises StoreUnavailableError: if the store cannot be reached.
        """
        ...
