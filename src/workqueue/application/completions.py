"""How an executor completes an item and claims the next: on its own, or with the other lanes.

An executor that finishes an item completes it and claims the next one in one
store call (:meth:`~workqueue.domain.WorkStore.complete_and_claim`). Its :class:`Completions`
make that call. There are two:

- :class:`SoloCompletions`, for a worker of one executor: each completion is its
  own :meth:`~workqueue.domain.WorkStore.complete_and_claim`.
- :class:`SharedCompletions`, for the lanes of one process
  (``WORKQUEUE_CONCURRENCY`` above 1), which finish short items in step: the
  completions asked for in one turn of the event loop go out as one
  :meth:`~workqueue.domain.WorkStore.complete_and_claim_many`, one statement and one commit
  for all of them, each completion still fenced by its own lease, each lane handed
  the next item in the order it asked.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Collection
from datetime import timedelta

from pydantic import JsonValue

from workqueue.application.coalescer import Coalescer
from workqueue.domain import Lease, LeaseProgress, ProgressSnapshot, RunOutcome, WorkItem, WorkStore

__all__ = ["Completions", "SharedCompletions", "SoloCompletions"]

logger = logging.getLogger("workqueue.executor")

_Answer = tuple[bool, WorkItem | None]


class Completions(ABC):
    """The store calls that complete an executor's items and claim the next ones.

    :param store: where the items are completed and claimed.
    :param kinds: the kind names the executors claim.
    :param worker_id: stamped on every claimed item.
    :param lease_duration: what each claim secures its item for.
    """

    def __init__(
        self,
        store: WorkStore,
        *,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> None:
        self._store = store
        self._kinds = kinds
        self._worker_id = worker_id
        self._lease_duration = lease_duration

    @abstractmethod
    async def complete_and_claim(
        self, lease: Lease, progress: JsonValue | ProgressSnapshot
    ) -> tuple[bool, WorkItem | None]:
        """Complete ``lease`` with ``progress`` and claim the next item of the kinds.

        :returns: whether the completion found its lease held, and the item claimed
            (None when nothing was claimable).
        :raises StoreUnavailableError: if the store cannot be reached.
        """


class SoloCompletions(Completions):
    """Each completion, and the claim along with it, in a store call of its own."""

    async def complete_and_claim(
        self, lease: Lease, progress: JsonValue | ProgressSnapshot
    ) -> tuple[bool, WorkItem | None]:
        return await self._store.complete_and_claim(
            lease,
            progress=progress,
            kinds=self._kinds,
            worker_id=self._worker_id,
            lease_duration=self._lease_duration,
        )


class SharedCompletions(Completions):
    """Completes and claims for the lanes of one process, one store call per turn of the loop.

    An item claimed for a lane that stopped waiting for it (its run was cancelled
    meanwhile) is released at once, without a stall, so that no claim outlives
    its lane.
    """

    def __init__(
        self,
        store: WorkStore,
        *,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> None:
        super().__init__(store, kinds=kinds, worker_id=worker_id, lease_duration=lease_duration)
        self._calls: Coalescer[LeaseProgress, _Answer] = Coalescer(
            self._complete_and_claim_many,
            what=f"{type(store).__name__}.complete_and_claim_many",
            left=self._release_claimed,
        )

    async def complete_and_claim(
        self, lease: Lease, progress: JsonValue | ProgressSnapshot
    ) -> tuple[bool, WorkItem | None]:
        # With the other lanes' completions of this turn of the loop.
        return await self._calls((lease, progress))

    async def _complete_and_claim_many(self, completions: list[LeaseProgress]) -> list[_Answer]:
        return await self._store.complete_and_claim_many(
            completions,
            kinds=self._kinds,
            worker_id=self._worker_id,
            lease_duration=self._lease_duration,
        )

    async def _release_claimed(self, answer: _Answer) -> None:
        _, item = answer
        if item is None:
            return
        try:
            await self._store.finish(item.lease, RunOutcome.released(item.progress))
        except Exception as error:
            logger.warning(
                "could not release %s item %d, claimed for a lane that stopped: %s; "
                "lease recovery will requeue it",
                item.kind,
                item.id,
                error,
                extra={"item_id": item.id, "kind": item.kind, "attempt": item.attempt},
            )
