"""The completions of a process's lanes that finish items together, in one store call.

At ``WORKQUEUE_CONCURRENCY`` above 1, lanes running short items finish them in
step: each completes its item and claims the next
(:meth:`~domain.WorkStore.complete_and_claim`) at the same moment. A
:class:`SharedCompletions` sends the completions asked for in one turn of the
event loop as one :meth:`~domain.WorkStore.complete_and_claim_many`: one
statement and one commit for all of them, each completion still fenced by its own
lease, each lane handed the next item in the order it asked.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import timedelta

from pydantic import JsonValue

from application.coalescer import Coalescer
from domain import Lease, ProgressSnapshot, WorkItem, WorkStore

__all__ = ["SharedCompletions"]

logger = logging.getLogger("workqueue.executor")

_Completion = tuple[Lease, JsonValue | ProgressSnapshot]
_Answer = tuple[bool, WorkItem | None]


class SharedCompletions:
    """Completes and claims for the lanes of one process, one store call per turn of the loop.

    An item claimed for a lane that stopped waiting for it (its run was cancelled
    meanwhile) is released at once, without a stall, so that no claim outlives
    its lane.

    :param store: where the items are completed and claimed.
    :param kinds: the kind names the lanes claim.
    :param worker_id: stamped on every claimed item.
    :param lease_duration: what each claim secures its item for.
    """

    __slots__ = ("_calls", "_kinds", "_lease_duration", "_store", "_worker_id")

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
        self._calls: Coalescer[_Completion, _Answer] = Coalescer(
            self._complete_and_claim_many,
            what=f"{type(store).__name__}.complete_and_claim_many",
            left=self._release_claimed,
        )

    async def complete_and_claim(
        self, lease: Lease, progress: JsonValue | ProgressSnapshot
    ) -> tuple[bool, WorkItem | None]:
        """Complete ``lease`` and claim the next item, with the other lanes' completions.

        :returns: whether the completion found its lease held, and the item claimed.
        :raises StoreUnavailableError: if the store cannot be reached.
        """
        return await self._calls((lease, progress))

    async def _complete_and_claim_many(self, completions: list[_Completion]) -> list[_Answer]:
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
            await self._store.release(item.lease, progress=item.progress)
        except Exception as error:
            logger.warning(
                "could not release %s item %d, claimed for a lane that stopped: %s; "
                "lease recovery will requeue it",
                item.kind,
                item.id,
                error,
                extra={"item_id": item.id, "kind": item.kind, "attempt": item.attempt},
            )
