"""The worker's loop watchdog, wired: its guard renews through a store of its own.

See :mod:`workqueue.application.watchdog` and docs/adr/0036. The guard's store
is opened only when a handler first blocks the loop for a heartbeat interval: a
pool of one connection on the worker's database (through the same pooler, and
with the same transaction-pooling choice), used from the watchdog's thread and
closed when the worker stops.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial

from workqueue.adapters.postgres import PostgresWorkStore
from workqueue.application.execution import ExecutorSettings
from workqueue.application.executor import WorkExecutor
from workqueue.application.renewals import Renewals
from workqueue.application.watchdog import BlockedLoopGuard, LoopWatchdog, pulse_period
from workqueue.domain import Clock, WorkStore
from workqueue.entrypoints.worker.database import DatabaseTarget, open_pool

__all__ = ["loop_watchdog", "watchdog_store"]


async def _watchdog_store(
    database: DatabaseTarget, clock: Clock, *, transaction_pooling: bool
) -> AsyncIterator[WorkStore]:  # pragma: no mutate block
    pools = asynccontextmanager(open_pool)(
        database,
        clock=clock,
        min_size=1,
        max_size=1,
        attempts=1,
        transaction_pooling=transaction_pooling,
    )
    async with pools as pool:
        store = PostgresWorkStore(pool, clock)
        try:
            yield store
        finally:
            await store.close()


watchdog_store = asynccontextmanager(_watchdog_store)
"""``watchdog_store(database, clock, *, transaction_pooling)``: a store on a pool of one
connection of its own to ``database``, tried once; closed on the way out."""


def loop_watchdog(
    executors: Sequence[WorkExecutor],
    renewals: Renewals,
    clock: Clock,
    *,
    open_store: partial[AbstractAsyncContextManager[WorkStore]],
    worker_id: str,
    settings: ExecutorSettings,
) -> LoopWatchdog:
    """The watchdog of a worker's ``executors`` (one per lane), renewing through
    ``open_store``'s store."""
    guard = BlockedLoopGuard(
        executors,
        renewals,
        clock,
        worker_id=worker_id,
        heartbeat_interval=settings.heartbeat_interval,
        lease_duration=settings.lease_duration,
        open_store=open_store,
    )
    # A look that takes a heartbeat interval has missed its purpose: stopping waits no longer.
    return LoopWatchdog(
        guard,
        period=pulse_period(settings.heartbeat_interval),
        stop_grace=settings.heartbeat_interval.total_seconds(),
    )
