"""PostgresWorkQueue: the one way work items come into being on PostgreSQL, from asyncpg."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar, cast

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from workqueue.adapters.postgres.enqueue_plan import (
    Plan,
    Rows,
    Statement,
    batch_enqueue,
    check_batch,
    check_enqueue,
    context_text,
    due_enqueue,
    fired_enqueue,
    single_enqueue,
)
from workqueue.adapters.postgres.held import HeldConnection
from workqueue.adapters.postgres.queue_sql import STATEMENTS
from workqueue.adapters.postgres.unavailable import enqueue_error
from workqueue.adapters.tracing import default_tracing
from workqueue.domain import (
    DEFAULT_PRIORITY,
    Clock,
    EnqueueRequest,
    EnqueueResult,
    InsideTransactionError,
    Overlap,
    Tracing,
    WorkPayload,
    WorkSchedule,
)

__all__ = ["PostgresWorkQueue"]

T = TypeVar("T")

Fetch = Callable[..., Awaitable[list[asyncpg.Record]]]


class _Statements(Protocol):
    """Where the queue's statements go: a kept pool connection, or the caller's connection."""

    async def fetch(self, query: str, *args: Any) -> list[asyncpg.Record]: ...


class PostgresWorkQueue:  # pragma: no mutate block
    """A :class:`~workqueue.domain.WorkQueue` on the ``work_items`` table, over asyncpg.

    Give it a pool, and each enqueue is a transaction of its own::

        queue = PostgresWorkQueue(pool, clock)

    Or give it the caller's connection, and every statement runs on that
    connection, inside whatever transaction the caller has open there: the item
    commits or rolls back with the caller's own writes, and so does its
    notification (PostgreSQL delivers a ``NOTIFY`` at commit, so no worker wakes for
    an item that was rolled back)::

        async with pool.acquire() as connection, connection.transaction():
            await connection.execute("INSERT INTO orders ...")
            await PostgresWorkQueue(connection, clock).enqueue(SendReceipt(order=7))

    Dedup rests on a partial unique index over ``(kind, dedup_key)`` for queued
    items: an insert that would make a second queued twin does nothing
    (``ON CONFLICT DO NOTHING``) and the queued twin's id is returned instead. A
    twin still uncommitted in another transaction makes the enqueue wait for that
    transaction: it is absorbed if the other commits, and creates if it rolls back
    (docs/adr/0014). Ids grow with every request but have gaps: an absorbed
    request has drawn one too, as a rolled-back insert would.

    :meth:`enqueue_if_due` serializes the schedulers of one periodic kind with a
    transaction-level advisory lock and checks due-ness in a statement of its own
    after it (docs/adr/0005). It runs a READ COMMITTED transaction of its own, so
    on a connection that is inside the caller's transaction it is refused.

    :param target: an ``asyncpg`` pool of connections to a migrated database (see
        :func:`create_pool`), or one connection (also one acquired from a pool). The
        queue needs none of the pool's JSON codecs: JSON travels as text.
    :param clock: stamps ``enqueued_at``.
    :param tracing: records each enqueue's span and stores its context with the items
        (docs/adr/0038); not given, OpenTelemetry's when it is installed.
    :raises TypeError: if ``target`` is neither an asyncpg pool nor a connection.
    """

    def __init__(
        self,
        target: asyncpg.Pool | asyncpg.Connection | PoolConnectionProxy,
        clock: Clock,
        tracing: Tracing | None = None,
    ) -> None:
        self._pool: asyncpg.Pool | None = None
        self._connection: asyncpg.Connection | PoolConnectionProxy | None = None
        self._statements: _Statements
        if isinstance(target, asyncpg.Pool):
            self._pool = target
            # Enqueues one after another (a producer's loop) share one kept
            # connection; concurrent ones (a web process) go through the pool.
            self._held: HeldConnection | None = HeldConnection(target)
            self._statements = self._held
        elif isinstance(target, asyncpg.Connection | PoolConnectionProxy):
            self._connection = target
            self._held = None
            self._statements = target
        else:
            raise TypeError(
                "PostgresWorkQueue needs an asyncpg Pool or Connection, "
                f"not {type(target).__qualname__}"
            )
        self._clock = clock
        self._tracing = default_tracing() if tracing is None else tracing

    async def close(self) -> None:
        """Give the connection this queue keeps between enqueues back to the pool.

        Call it before closing the pool, or the pool waits up to
        :data:`~workqueue.adapters.postgres.held.IDLE_CHECK_SECONDS` for it. The queue still
        works afterwards, through the pool. On the caller's connection it does
        nothing: the connection is the caller's to close.
        """
        if self._held is not None:
            await self._held.close()

    async def enqueue(
        self,
        payload: WorkPayload,
        *,
        dedup_key: str | None = None,
        priority: int = DEFAULT_PRIORITY,
        run_at: datetime | None = None,
        delay: timedelta | None = None,
    ) -> EnqueueResult:
        """Insert a queued item for ``payload``, or return the queued item that absorbs it.

        ``priority`` and ``run_at`` or ``delay`` as :meth:`~workqueue.domain.WorkQueue.enqueue`
        takes them.

        :raises InvalidDedupKeyError: if ``dedup_key`` is empty, blank, too long or not
            text; nothing is sent.
        :raises InvalidPriorityError: if ``priority`` is not an integer from -100 to 100;
            nothing is sent.
        :raises InvalidRunAtError: if ``run_at`` has no time zone, ``delay`` is negative,
            or both are given; nothing is sent.
        :raises InvalidPayloadError: if ``payload`` does not validate against its
            model; nothing is sent.
        :raises StoreUnavailableError: if the database cannot be reached.
        :raises EnqueueFailedError: if the database refused the statement (its
            ``sqlstate`` says why; on the caller's connection, the caller's
            transaction is left aborted, as PostgreSQL leaves it), or after
            :data:`~workqueue.adapters.postgres.enqueue_plan.MAX_DEDUP_PASSES` races with a twin.
        """
        request = check_enqueue(payload, dedup_key, priority, run_at, delay)
        with self._tracing.enqueue(request.kind) as span:
            plan = single_enqueue(request, self._clock, context_text(span.context))
            result = await self._drive(plan, self._statements.fetch)
            span.enqueued((result,))
        return result

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """Enqueue every request, in order, in one statement.

        A later request with the same kind and dedup key as an earlier one in the
        batch is absorbed by it. Every request is checked before anything is sent.

        :raises InvalidDedupKeyError: if any dedup key is unusable; nothing is sent.
        :raises InvalidPriorityError: if any priority is unusable; nothing is sent.
        :raises InvalidRunAtError: if any run_at or delay is unusable; nothing is sent.
        :raises InvalidPayloadError: if any payload is invalid; nothing is sent.
        :raises StoreUnavailableError: if the database cannot be reached.
        :raises EnqueueFailedError: as :meth:`enqueue` does.
        """
        batch = check_batch(requests)
        with self._tracing.enqueue_many(batch.kinds) as span:
            plan = batch_enqueue(batch, self._clock, context_text(span.context))
            results = await self._drive(plan, self._statements.fetch)
            span.enqueued(results)
        return results

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        """Enqueue ``schedule``'s payload with its dedup key if its kind is due, else return None.

        One READ COMMITTED transaction of its own (on the pool, or on the given
        connection when it is not inside a transaction): take the kind's advisory
        lock, then, in a new statement (a fresh snapshot taken after the lock is
        granted), insert only if nothing of the kind is queued or running and
        nothing finished less than ``schedule.interval`` ago. The payload is checked
        first.

        :raises InvalidPayloadError: if the payload does not validate against its
            model; nothing is sent.
        :raises InsideTransactionError: on a connection inside the caller's
            transaction, whose snapshot and end are not this method's to choose
            (docs/adr/0014); nothing is sent.
        :raises StoreUnavailableError: if the database cannot be reached.
        :raises EnqueueFailedError: if the database refused a statement.
        """
        plan = self._due_plan(schedule)
        if self._connection is not None:
            if self._connection.is_in_transaction():
                raise InsideTransactionError(
                    "enqueue_if_due needs a transaction of its own, and this connection is "
                    "inside one: call it on a PostgresWorkQueue over a pool (docs/adr/0014)"
                )
            return await self._drive_in_transaction(plan, self._connection)
        assert self._pool is not None
        try:
            async with self._pool.acquire() as connection:
                return await self._drive_in_transaction(plan, connection)
        except Exception as error:
            self._raise_translated(error)
            raise

    def _due_plan(self, schedule: WorkSchedule) -> Plan[EnqueueResult | None]:
        """The plan of ``enqueue_if_due`` for an interval schedule, or a calendar's."""
        if schedule.interval is not None:
            request = check_enqueue(schedule.payload, schedule.dedup_key)
            return due_enqueue(request, schedule.interval, self._clock)
        fire = schedule.calendar.latest_fire(self._clock.now())
        request = check_enqueue(schedule.payload, schedule.fire_dedup_key(fire))
        return fired_enqueue(request, fire, schedule.overlap is Overlap.SKIP, self._clock)

    async def _drive_in_transaction(
        self, plan: Plan[T], connection: asyncpg.Connection | PoolConnectionProxy
    ) -> T:
        """Run ``plan`` in a READ COMMITTED transaction of its own on ``connection``."""
        try:
            # Explicit: the fresh snapshot per statement is what makes the periodic
            # lock work; REPEATABLE READ would keep the snapshot of the lock statement.
            async with connection.transaction(isolation="read_committed"):
                return await self._drive(plan, connection.fetch)
        except Exception as error:
            self._raise_translated(error)
            raise

    async def _drive(self, plan: Plan[T], fetch: Fetch) -> T:
        """Send each statement of ``plan`` through ``fetch`` and return the plan's result.

        :raises StoreUnavailableError: if the connection is lost.
        :raises EnqueueFailedError: if the server refuses a statement, or the plan
            gives up.
        """
        rows: Rows | None = None
        while True:
            try:
                statement: Statement = next(plan) if rows is None else plan.send(rows)
            except StopIteration as done:
                result: T = done.value
                return result
            try:
                # A Record is a sequence of its columns, as a plan reads each row.
                rows = cast(Rows, await fetch(STATEMENTS[statement.name], *statement.arguments))
            except Exception as error:
                self._raise_translated(error)
                raise

    @staticmethod
    def _raise_translated(error: Exception) -> None:
        """Raise what an enqueue reports for ``error`` (see :func:`enqueue_error`), if anything."""
        translated = enqueue_error(error)
        if translated is not None:
            raise translated from error
