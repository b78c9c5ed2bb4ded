"""Telling a lost database from a refused statement, for psycopg's errors.

The same split as :mod:`workqueue.adapters.postgres.unavailable` makes for asyncpg, in the
same words (:mod:`workqueue.adapters.postgres.failures`): a lost connection is a
:class:`~workqueue.domain.StoreUnavailableError`, a statement the server refused is an
:class:`~workqueue.domain.EnqueueFailedError` with its SQLSTATE, and the client's own
errors (a misuse) pass unchanged.
"""

from __future__ import annotations

import psycopg

from workqueue.adapters.postgres.failures import refused, unavailable
from workqueue.domain import WorkQueueError

__all__ = ["enqueue_error", "is_connection_loss"]

# Server errors that end or refuse the session rather than the statement (class 08,
# connection exceptions, is matched by its prefix): shutdowns, a server still
# starting up, idle-session timeouts, and a full server. As in asyncpg's list.
_LOST_ON_THE_SERVER = frozenset({"57P01", "57P02", "57P03", "57P05", "25P03", "53300"})


def is_connection_loss(error: BaseException) -> bool:
    """True when ``error`` means the database was unreachable or the connection died.

    That is: socket errors (:class:`OSError`); a psycopg ``OperationalError`` of the
    client's own, with no SQLSTATE (connection failed or closed, a pool that timed
    out or was closed); and the server errors whose SQLSTATE ends or refuses the
    session (class ``08``, ``57P01``-``57P03``, ``57P05``, ``25P03``, ``53300``).
    """
    if isinstance(error, OSError):
        return True
    if not isinstance(error, psycopg.Error):
        return False
    sqlstate = error.sqlstate
    if sqlstate is None:
        return isinstance(error, psycopg.OperationalError)
    return sqlstate.startswith("08") or sqlstate in _LOST_ON_THE_SERVER


def enqueue_error(error: BaseException) -> WorkQueueError | None:
    """What an enqueue reports for ``error``, raised by psycopg; None to let it pass.

    A connection loss (:func:`is_connection_loss`) is a
    :class:`~workqueue.domain.StoreUnavailableError`; any other error the server answered
    with, that is one with a SQLSTATE, is an :class:`~workqueue.domain.EnqueueFailedError`
    carrying it. Errors of the client's own pass unchanged.
    """
    if is_connection_loss(error):
        return unavailable(error)
    if isinstance(error, psycopg.Error) and error.sqlstate is not None:
        return refused(error, error.sqlstate)
    return None
