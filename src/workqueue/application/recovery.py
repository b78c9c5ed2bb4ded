"""Lease recovery: items whose worker died, paused or lost the store go back to queued.

A running item whose lease expired has no worker heartbeating it. Recovery puts it
back in queued with one more stall; the item that reaches the stall limit is failed
as stalled instead, so an item that kills every worker that claims it stops being
claimed. The store does the work in one statement; this service owns the limit and
says what happened.
"""

from __future__ import annotations

import logging

from workqueue.domain import RecoveryResult, WorkStore

__all__ = ["DEFAULT_MAX_STALLS", "LeaseRecovery"]

logger = logging.getLogger("workqueue.recovery")

DEFAULT_MAX_STALLS = 3
"""The stall that fails an item: its third expired lease."""


class LeaseRecovery:
    """Recovers expired leases, one pass per :meth:`run_once`.

    :param store: the store whose running items are checked.
    :param max_stalls: the stall count at which an item is failed rather than requeued.
    :raises ValueError: if ``max_stalls`` is less than 1.
    """

    __slots__ = ("_max_stalls", "_store")

    def __init__(self, store: WorkStore, *, max_stalls: int = DEFAULT_MAX_STALLS) -> None:
        if max_stalls < 1:
            raise ValueError(f"max_stalls must be at least 1, not {max_stalls!r}")
        self._store = store
        self._max_stalls = max_stalls

    @property
    def max_stalls(self) -> int:
        """The stall count at which an item is failed rather than requeued."""
        return self._max_stalls

    async def run_once(self) -> RecoveryResult:
        """Requeue, or fail as stalled, every running item whose lease has expired.

        Logs each group of items that was recovered, failed as stalled, failed as
        superseded by a queued twin, or cancelled (a cancel was requested); logs
        nothing when there were none.

        :raises StoreUnavailableError: if the store cannot be reached (nothing changed).
        """
        result = await self._store.recover_expired(max_stalls=self._max_stalls)
        if result.requeued:
            logger.warning(
                "requeued %d item(s) whose lease expired: %s",
                len(result.requeued),
                _ids(result.requeued),
                extra={"item_ids": result.requeued},
            )
        if result.stalled:
            logger.error(
                "failed %d item(s) that stalled %d times: %s",
                len(result.stalled),
                self._max_stalls,
                _ids(result.stalled),
                extra={"item_ids": result.stalled},
            )
        if result.superseded:
            logger.warning(
                "failed %d stalled item(s) superseded by a queued item with the same dedup key: %s",
                len(result.superseded),
                _ids(result.superseded),
                extra={"item_ids": result.superseded},
            )
        if result.cancelled:
            logger.warning(
                "cancelled %d item(s) whose cancel was requested and whose lease expired: %s",
                len(result.cancelled),
                _ids(result.cancelled),
                extra={"item_ids": result.cancelled},
            )
        return result


def _ids(item_ids: list[int]) -> str:
    return ", ".join(str(item_id) for item_id in item_ids)
