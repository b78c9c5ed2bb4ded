"""Telling a lost database from a failed statement.

Callers of the stores retry :class:`~workqueue.domain.StoreUnavailableError` at their next
tick and let every other error surface, so the adapter must translate exactly
the errors that mean "PostgreSQL could not be reached or went away", and no
others: a bug in a statement must not pass for an outage.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import TracebackType

import asyncpg

from workqueue.adapters.postgres.failures import refused, unavailable
from workqueue.domain import WorkQueueError

__all__ = ["connection_loss_as_unavailable", "enqueue_error", "is_connection_loss"]

# Server-side errors that end or refuse the session rather than the statement:
# class 08 (connection exceptions, incl. ConnectionDoesNotExistError), shutdowns,
# a server still starting up, idle-session timeouts, and a full server.
_LOST_ON_THE_SERVER: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.CannotConnectNowError,
    asyncpg.IdleSessionTimeoutError,
    asyncpg.IdleInTransactionSessionTimeoutError,
    asyncpg.TooManyConnectionsError,
)

# InterfaceError subclasses that describe a misuse, not a lost connection.
_MISUSE: tuple[type[BaseException], ...] = (
    asyncpg.ClientConfigurationError,
    asyncpg.UnsupportedClientFeatureError,
    asyncpg.UnsupportedServerFeatureError,
)

# A connection broken by a server restart can surface as an InternalClientError
# whose protocol state machine is stuck, instead of as a connection error.
_STUCK_PROTOCOL_MESSAGES = ("another operation is in progress", "cannot switch to state")


def is_connection_loss(error: BaseException) -> bool:
    """True when ``error`` means the database was unreachable or the connection died.

    That is: socket errors and timeouts (:class:`OSError`), asyncpg's
    ``InterfaceError`` (connection closed, pool closing, operation in progress)
    except its configuration and feature subclasses, the server errors that end
    or refuse a session, and an ``InternalClientError`` left by a connection that
    broke mid-operation.
    """
    if isinstance(error, (OSError, *_LOST_ON_THE_SERVER)):
        return True
    if isinstance(error, asyncpg.InterfaceError):
        return not isinstance(error, _MISUSE)
    if isinstance(error, asyncpg.InternalClientError):
        return any(message in str(error) for message in _STUCK_PROTOCOL_MESSAGES)
    return False


class _ConnectionLossAsUnavailable:
    """What :func:`connection_loss_as_unavailable` returns: no state, so one serves all."""

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # Only an Exception: a cancellation or an exit passes through as it is.
        if isinstance(error, Exception) and is_connection_loss(error):
            raise unavailable(error) from error


_AS_UNAVAILABLE = _ConnectionLossAsUnavailable()


def connection_loss_as_unavailable() -> AbstractContextManager[None]:
    """Re-raise a connection loss in the block as :class:`~workqueue.domain.StoreUnavailableError`.

    Other errors pass through unchanged. (A class rather than ``@contextmanager``:
    every store statement runs in one, and a generator per statement costs more.)

    :raises StoreUnavailableError: chained to the original error, when
        :func:`is_connection_loss` says the connection was lost.
    """
    return _AS_UNAVAILABLE


def enqueue_error(error: BaseException) -> WorkQueueError | None:
    """What an enqueue reports for ``error``, raised by asyncpg; None to let it pass.

    A connection loss (:func:`is_connection_loss`) is a
    :class:`~workqueue.domain.StoreUnavailableError`; any other error the server answered
    with (a serialization failure, a deadlock, a lock timeout, a transaction
    already aborted, a missing table) is an :class:`~workqueue.domain.EnqueueFailedError`
    carrying its SQLSTATE. Errors of the client's own pass unchanged.
    """
    if is_connection_loss(error):
        return unavailable(error)
    if isinstance(error, asyncpg.PostgresError):
        return refused(error, error.sqlstate)
    return None
