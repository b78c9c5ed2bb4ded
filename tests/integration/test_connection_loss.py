"""Which errors mean a lost database, and which are the statement's own fault."""

from __future__ import annotations

import asyncpg
import pytest

from workqueue.adapters.postgres import is_connection_loss
from workqueue.adapters.postgres.unavailable import connection_loss_as_unavailable
from workqueue.domain import StoreUnavailableError

LOST = {
    "refused": ConnectionRefusedError("connection refused"),
    "timeout": TimeoutError(),
    "closed": asyncpg.ConnectionDoesNotExistError(
        "connection was closed in the middle of operation"
    ),
    "interface": asyncpg.InterfaceError("connection is closed"),
    "admin shutdown": asyncpg.AdminShutdownError(
        "terminating connection due to administrator command"
    ),
    "starting up": asyncpg.CannotConnectNowError("the database system is starting up"),
    "full": asyncpg.TooManyConnectionsError("sorry, too many clients already"),
    "stuck after restart": asyncpg.InternalClientError(
        "cannot switch to state 12; another operation (2) is in progress"
    ),
}
NOT_LOST = {
    "unique": asyncpg.UniqueViolationError("duplicate key value"),
    "syntax": asyncpg.PostgresSyntaxError("syntax error"),
    "bad argument": asyncpg.DataError("invalid input for query argument"),
    "configuration": asyncpg.ClientConfigurationError("bad option"),
    "other internal": asyncpg.InternalClientError("unexpected"),
    "value": ValueError("not a database error at all"),
}


@pytest.mark.parametrize("error", LOST.values(), ids=LOST.keys())
def test_errors_that_mean_the_database_is_gone_are_connection_losses(error: Exception) -> None:
    assert is_connection_loss(error)


@pytest.mark.parametrize("error", NOT_LOST.values(), ids=NOT_LOST.keys())
def test_errors_of_the_statement_itself_are_not_connection_losses(error: Exception) -> None:
    assert not is_connection_loss(error)


def test_a_connection_loss_is_raised_as_store_unavailable_with_its_cause() -> None:
    lost = asyncpg.ConnectionDoesNotExistError("gone")

    with pytest.raises(StoreUnavailableError) as raised, connection_loss_as_unavailable():
        raise lost

    assert raised.value.__cause__ is lost


def test_any_other_error_passes_through_unchanged() -> None:
    with pytest.raises(asyncpg.UniqueViolationError), connection_loss_as_unavailable():
        raise asyncpg.UniqueViolationError("duplicate key value")
