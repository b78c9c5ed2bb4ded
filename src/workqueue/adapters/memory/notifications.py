"""InMemoryWorkNotifications: wakes an idle worker when the in-memory queue creates work."""

from __future__ import annotations

import asyncio
from collections.abc import Collection

from workqueue.adapters.memory.state import InMemoryState
from workqueue.domain import kind_name

__all__ = ["InMemoryWorkNotifications"]


class InMemoryWorkNotifications:
    """A :class:`~workqueue.domain.WorkNotifications` fed by the queues on one
    :class:`InMemoryState`.

    Only a created item notifies: an absorbed enqueue adds no work, and items that
    release or recovery put back in queued are found by the next poll, as with
    PostgreSQL.

    :param state: the state whose queues' enqueues wake the waiters.
    """

    def __init__(self, state: InMemoryState) -> None:
        self._state = state

    async def wait_for_work(self, kinds: Collection[str]) -> None:
        """Return once a queue on the state has created an item of one of ``kinds``.

        Enqueues made before the call do not count. Cancelling the wait is safe.

        :raises asyncio.CancelledError: when the waiting task is cancelled.
        """
        wanted = {kind_name(kind) for kind in kinds}
        arrived: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def on_enqueued(kind: str) -> None:
            if kind in wanted and not arrived.done():
                arrived.set_result(None)

        self._state.subscribe_to_enqueues(on_enqueued)
        try:
            await arrived
        finally:
            self._state.unsubscribe_from_enqueues(on_enqueued)
