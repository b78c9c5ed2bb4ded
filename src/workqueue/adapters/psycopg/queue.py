"""PsycopgWorkQueue: enqueues from sync code, on the caller's psycopg connection or a pool."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

import psycopg
from psycopg.rows import TupleRow, tuple_row
from psycopg_pool import ConnectionPool

from workqueue.adapters.postgres.enqueue_plan import (
    Plan,
    Rows,
    Statement,
    batch_enqueue,
    check_batch,
    check_enqueue,
    context_text,
    inserted,
    plain_insert,
    single_enqueue,
)
from workqueue.adapters.postgres.queue_sql import STATEMENTS
from workqueue.adapters.psycopg.unavailable import enqueue_error
from workqueue.adapters.tracing import default_tracing
from workqueue.domain import (
    DEFAULT_PRIORITY,
    Clock,
    EnqueueRequest,
    EnqueueResult,
    Tracing,
    WorkPayload,
)

__all__ = ["PsycopgWorkQueue"]

T = TypeVar("T")


class PsycopgWorkQueue:  # pragma: no mutate block
    """Enqueues into ``work_items`` from sync code: :class:`~workqueue.domain.WorkQueue`'s
    ``enqueue`` and ``enqueue_many``, with the same meaning, checks and errors.

    On the caller's connection, every statement runs on it, inside whatever
    transaction is open there, and nothing is committed or rolled back: the item
    commits with the caller's writes, or not at all, and so does its
    notification. A connection in autocommit mode outside a transaction (Django's,
    outside ``transaction.atomic()``) commits each enqueue at once; one that is
    not in autocommit mode opens a transaction as psycopg always does, for the
    caller to commit::

        with transaction.atomic():  # Django
            PsycopgWorkQueue(connection.connection, clock).enqueue(payload)

        with session.begin():  # SQLAlchemy
            raw = session.connection().connection.driver_connection
            PsycopgWorkQueue(raw, clock).enqueue(payload)

    On a pool, each call takes a connection for one transaction of its own,
    committed before it returns::

        queue = PsycopgWorkQueue(ConnectionPool(conninfo), clock)

    The statements are those of ``adapters/postgres/sql/queue.sql``, sent as they
    are written, with PostgreSQL's own ``$1, $2, ...`` placeholders, through a
    :class:`psycopg.RawCursor` (docs/adr/0015). A twin still uncommitted in another
    transaction makes an enqueue wait for it, as in the async queue
    (docs/adr/0014).

    :param target: a ``psycopg.Connection`` to a migrated database, or a
        ``psycopg_pool.ConnectionPool`` of them. Its adapters and row factory do not
        matter: JSON travels as text and rows are read as tuples.
    :param clock: stamps ``enqueued_at``.
    :param tracing: records each enqueue's span and stores its context with the items
        (docs/adr/0038); not given, OpenTelemetry's when it is installed.
    :raises TypeError: if ``target`` is neither a psycopg connection nor a pool.
    """

    def __init__(
        self,
        target: psycopg.Connection[Any] | ConnectionPool[Any],
        clock: Clock,
        tracing: Tracing | None = None,
    ) -> None:
        self._pool: ConnectionPool[Any] | None = None
        self._connection: psycopg.Connection[Any] | None = None
        # On the caller's connection, one cursor for every call: a new one costs as
        # much client time as the statement (its adapters are set up afresh).
        self._cursor: psycopg.RawCursor[TupleRow] | None = None
        if isinstance(target, ConnectionPool):
            self._pool = target
        elif isinstance(target, psycopg.Connection):
            self._connection = target
        else:
            raise TypeError(
                "PsycopgWorkQueue needs a psycopg Connection or ConnectionPool, "
                f"not {type(target).__qualname__}"
            )
        self._clock = clock
        self._tracing = default_tracing() if tracing is None else tracing

    def enqueue(
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
        :raises StoreUnavailableError: if the database cannot be reached (or the
            pool has no connection to give in time).
        :raises EnqueueFailedError: if the database refused the statement (its
            ``sqlstate`` says why; on the caller's connection, the caller's
            transaction is left aborted, as PostgreSQL leaves it), or after
            :data:`~workqueue.adapters.postgres.enqueue_plan.MAX_DEDUP_PASSES` races with a twin.
        """
        request = check_enqueue(payload, dedup_key, priority, run_at, delay)
        with self._tracing.enqueue(request.kind) as span:
            context = context_text(span.context)
            if request.dedup_key is None and self._connection is not None:
                # The usual enqueue on the caller's connection is one statement, sent
                # without a plan to drive around it: inside a transaction, where a row
                # costs the server least, that was 2 % of the call (P3, bench/README.md).
                statement = plain_insert(request, self._clock, context)
                result = inserted(self._fetch_on_connection(statement))
            else:
                result = self._run(single_enqueue(request, self._clock, context))
            span.enqueued((result,))
        return result

    def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """Enqueue every request, in order, in one statement.

        A later request with the same kind and dedup key as an earlier one in the
        batch is absorbed by it. Every request is checked before anything is sent;
        an empty batch sends nothing.

        :raises InvalidDedupKeyError: if any dedup key is unusable; nothing is sent.
        :raises InvalidPriorityError: if any priority is unusable; nothing is sent.
        :raises InvalidRunAtError: if any run_at or delay is unusable; nothing is sent.
        :raises InvalidPayloadError: if any payload is invalid; nothing is sent.
        :raises StoreUnavailableError: if the database cannot be reached.
        :raises EnqueueFailedError: as :meth:`enqueue` does.
        """
        batch = check_batch(requests)
        with self._tracing.enqueue_many(batch.kinds) as span:
            results = self._run(batch_enqueue(batch, self._clock, context_text(span.context)))
            span.enqueued(results)
        return results

    def _run(self, plan: Plan[T]) -> T:
        try:
            first = next(plan)
        except StopIteration as done:
            # Nothing to send (an empty batch): no connection is taken.
            nothing: T = done.value
            return nothing
        try:
            if self._connection is not None:
                return self._drive(plan, first, self._connection_cursor())
            assert self._pool is not None
            with self._pool.connection() as connection:
                return self._drive_committed(plan, first, connection)
        except (psycopg.Error, OSError) as error:
            self._raise_translated(error)
            raise

    def _fetch_on_connection(self, statement: Statement) -> Rows:
        """Send ``statement`` on the caller's connection; its rows."""
        try:
            cursor = self._connection_cursor()
            cursor.execute(STATEMENTS[statement.name], statement.arguments)
            rows: list[TupleRow] = cursor.fetchall()
            return rows
        except (psycopg.Error, OSError) as error:
            self._raise_translated(error)
            raise

    @staticmethod
    def _raise_translated(error: psycopg.Error | OSError) -> None:
        """Raise our error for ``error``, if it has one; else return, for the caller to re-raise."""
        translated = enqueue_error(error)
        if translated is not None:
            raise translated from error

    def _connection_cursor(self) -> psycopg.RawCursor[TupleRow]:
        """The cursor every call on the caller's connection sends through."""
        assert self._connection is not None
        if self._cursor is None or self._cursor.closed:
            self._cursor = psycopg.RawCursor(self._connection, row_factory=tuple_row)
        return self._cursor

    @staticmethod
    def _drive_committed(plan: Plan[T], first: Statement, connection: psycopg.Connection[Any]) -> T:
        """Run ``plan`` on a pool's connection, each statement committed as it ends.

        In autocommit mode a statement is one round trip; otherwise psycopg would
        send a BEGIN before it and the pool a COMMIT after it. The pool's connection is
        idle when handed out, so the mode can be switched for the call and back.
        """
        with psycopg.RawCursor(connection, row_factory=tuple_row) as cursor:
            if connection.autocommit:
                return PsycopgWorkQueue._drive(plan, first, cursor)
            connection.autocommit = True
            try:
                return PsycopgWorkQueue._drive(plan, first, cursor)
            finally:
                # A broken connection is in no state to switch; the pool discards it.
                if connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
                    connection.autocommit = False

    @staticmethod
    def _drive(plan: Plan[T], first: Statement, cursor: psycopg.RawCursor[TupleRow]) -> T:
        """Send ``first`` and each later statement of ``plan`` through ``cursor``; the result."""
        statement = first
        while True:
            cursor.execute(STATEMENTS[statement.name], statement.arguments)
            rows: list[TupleRow] = cursor.fetchall()
            answer: Rows = rows
            try:
                statement = plan.send(answer)
            except StopIteration as done:
                result: T = done.value
                return result
