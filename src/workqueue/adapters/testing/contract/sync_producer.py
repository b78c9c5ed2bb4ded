"""A sync producer seen through the async WorkQueue port, so the kit can hold it to the contract.

A sync producer (``PsycopgWorkQueue``, or any other) has ``enqueue`` and
``enqueue_many`` with the WorkQueue's meaning, only not awaitable.
:class:`SyncProducerAsWorkQueue` runs each call in a thread of its own and awaits
it, so the kit's async contract tests run against it unchanged::

    @pytest.fixture
    def queue(self, sync_connection, clock):
        return SyncProducerAsWorkQueue(PsycopgWorkQueue(sync_connection, clock))

Nothing else changes: the calls, their results and their errors are the sync
producer's own. A thread per call, not a pool of them: a call may wait for another
transaction for as long as a test lets it, and any number may wait at once
(:func:`in_a_thread`, for a fixture's other sync calls, does the same).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from workqueue.domain import (
    DEFAULT_PRIORITY,
    EnqueueRequest,
    EnqueueResult,
    WorkPayload,
    WorkSchedule,
)

__all__ = ["SyncProducer", "SyncProducerAsWorkQueue", "in_a_thread"]

T = TypeVar("T")


async def in_a_thread(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` run in a new thread; its result or its error.

    If the awaiting task is cancelled, the thread still runs to its end (a sync
    call cannot be interrupted), and its outcome is dropped.
    """
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if outcome.done():
            return
        if error is None:
            outcome.set_result(result)  # type: ignore[arg-type]
        else:
            outcome.set_exception(error)

    def run() -> None:
        report: tuple[T | None, BaseException | None]
        try:
            result = function(*args, **kwargs)
        except BaseException as error:  # handed to the awaiting task
            report = (None, error)
        else:
            report = (result, None)
        # The loop may be gone by now (the awaiting test ended): nobody to tell.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, *report)

    name = getattr(function, "__name__", "call")
    threading.Thread(target=run, name=f"sync-producer-{name}", daemon=True).start()
    return await outcome


class SyncProducer(Protocol):
    """What a sync producer offers: the WorkQueue's two enqueues, not awaitable."""

    def enqueue(
        self,
        payload: WorkPayload,
        *,
        dedup_key: str | None = None,
        priority: int = DEFAULT_PRIORITY,
        run_at: datetime | None = None,
        delay: timedelta | None = None,
    ) -> EnqueueResult:
        """As :meth:`workqueue.domain.WorkQueue.enqueue`."""
        ...

    def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """As :meth:`workqueue.domain.WorkQueue.enqueue_many`."""
        ...


class SyncProducerAsWorkQueue:
    """A :class:`~workqueue.domain.WorkQueue` whose enqueues run ``producer``'s in a thread.

    :param producer: the sync producer under test.
    """

    def __init__(self, producer: SyncProducer) -> None:
        self.producer = producer

    async def enqueue(
        self,
        payload: WorkPayload,
        *,
        dedup_key: str | None = None,
        priority: int = DEFAULT_PRIORITY,
        run_at: datetime | None = None,
        delay: timedelta | None = None,
    ) -> EnqueueResult:
        """``producer.enqueue``, in a thread; its result or its error."""
        return await in_a_thread(
            self.producer.enqueue,
            payload,
            dedup_key=dedup_key,
            priority=priority,
            run_at=run_at,
            delay=delay,
        )

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """``producer.enqueue_many``, in a thread; its result or its error."""
        return await in_a_thread(self.producer.enqueue_many, requests)

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        """Not a producer's: periodic kinds are enqueued by a worker's scheduler.

        :raises NotImplementedError: always.
        """
        raise NotImplementedError(
            "a sync producer has no enqueue_if_due: a worker's scheduler enqueues periodic kinds"
        )
