"""What a producer enqueuing inside the caller's transaction needs from its fixtures.

A producer that works on the caller's connection (``PostgresWorkQueue`` on an
asyncpg connection, ``PsycopgWorkQueue`` on a psycopg one) is held to two more
contracts: :class:`~workqueue.adapters.testing.contract.transactions.CallerTransactionContract`
(the item commits, rolls back and fails with the caller's transaction) and
:class:`~workqueue.adapters.testing.contract.transactions.DedupAcrossTransactionsContract`
(a twin uncommitted in another transaction is waited for). Their fixtures, on
top of :class:`~workqueue.adapters.testing.contract.ContractFixtures`' ``clock``,
``store`` and ``backdoor``, are declared here::

    class MyTransactionFixtures(CallerTransactionFixtures, MyFixtures):
        @pytest.fixture
        def caller_transactions(self, ...) -> CallerTransactionFactory:
            ...

    class TestMyProducerInTransactions(
        CallerTransactionContract, DedupAcrossTransactionsContract, MyTransactionFixtures
    ):
        pass
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Protocol

import pytest

from workqueue.domain import WorkNotifications, WorkQueue

__all__ = [
    "CallerTransaction",
    "CallerTransactionFactory",
    "CallerTransactionFixtures",
    "Isolation",
    "LockWaits",
]


class Isolation(StrEnum):
    """The isolation level of a caller's transaction, as PostgreSQL names it."""

    READ_COMMITTED = "read committed"
    REPEATABLE_READ = "repeatable read"
    SERIALIZABLE = "serializable"


class CallerTransaction(Protocol):
    """One transaction of the caller's, on a connection of its own, and a queue inside it.

    The transaction is open from the start (its snapshot is taken by its first
    statement, as PostgreSQL does). Every method but the queue's enqueues is the
    caller's own doing; none raises for what PostgreSQL answers, except as said.
    """

    @property
    def queue(self) -> WorkQueue:
        """The producer under test, enqueuing inside this transaction."""
        ...

    async def commit(self) -> None:
        """Commit the transaction (an aborted one rolls back, as PostgreSQL does)."""
        ...

    async def rollback(self) -> None:
        """Roll the transaction back."""
        ...

    async def savepoint(self) -> None:
        """Take a savepoint the caller can roll back to."""
        ...

    async def rollback_to_savepoint(self) -> None:
        """Roll back to the savepoint taken last; the transaction is usable again."""
        ...

    async def fail_a_statement(self) -> None:
        """Run a statement of the caller's that fails (the error is swallowed).

        PostgreSQL then holds the transaction aborted until it is rolled back.
        """
        ...

    async def caller_statement_runs(self) -> bool:
        """Whether a statement of the caller's still runs, i.e. the transaction is not aborted."""
        ...

    async def limit_lock_waits(self, seconds: float) -> None:
        """Give up any later lock wait of this transaction after ``seconds`` (lock_timeout)."""
        ...


CallerTransactionFactory = Callable[..., Awaitable[CallerTransaction]]
"""Opens one more caller's transaction, each on its own connection to the same data.

Called with no argument for READ COMMITTED, or ``isolation=Isolation.X``. The
fixture ends whatever is still open when the test ends.
"""

LockWaits = Callable[[int], Awaitable[None]]
"""Returns once at least that many transactions on the data wait for a lock.

:raises AssertionError: if that does not happen within a few seconds.
"""


def _missing(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"the transaction contracts need the {name!r} fixture: override it in your fixtures class"
    )


class CallerTransactionFixtures:
    """Base class for the fixtures of the transaction contracts; override every one."""

    @pytest.fixture
    def caller_transactions(self) -> CallerTransactionFactory:
        """Opens caller's transactions with the producer under test inside (see the type)."""
        raise _missing("caller_transactions")

    @pytest.fixture
    def notifications(self) -> WorkNotifications:
        """A listener for work on the same data, already listening when handed out."""
        raise _missing("notifications")

    @pytest.fixture
    def lock_waits(self) -> LockWaits:
        """Waits until a number of transactions wait for a lock (see the type)."""
        raise _missing("lock_waits")
