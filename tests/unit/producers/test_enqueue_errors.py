"""Both queues report a lost database and a refused statement alike, whatever the driver.

A lost connection is a StoreUnavailableError, a statement the server refused an
EnqueueFailedError carrying its SQLSTATE, in the same words from asyncpg and
psycopg; the client's own errors pass unchanged.
"""

from __future__ import annotations

import asyncpg
import psycopg
import psycopg.errors
import psycopg_pool
import pytest

from workqueue.adapters.postgres import unavailable as asyncpg_errors
from workqueue.adapters.postgres.failures import refused, unavailable
from workqueue.adapters.psycopg import enqueue_error as psycopg_enqueue_error
from workqueue.adapters.psycopg import is_connection_loss as psycopg_connection_loss
from workqueue.domain import EnqueueFailedError, StoreUnavailableError


def server_error(sqlstate: str, message: str) -> psycopg.Error:
    error: psycopg.Error = psycopg.errors.lookup(sqlstate)(message)
    return error


class TestTheWordsOfAnError:
    def test_a_lost_database_is_unavailable_naming_the_error(self) -> None:
        error = unavailable(ConnectionResetError("reset by peer"))

        assert isinstance(error, StoreUnavailableError)
        assert str(error) == "PostgreSQL is unavailable: ConnectionResetError: reset by peer"

    def test_a_refused_statement_names_the_error_and_its_sqlstate(self) -> None:
        error = refused(ValueError("no such table"), "42P01")

        assert isinstance(error, EnqueueFailedError)
        assert error.sqlstate == "42P01"
        assert str(error) == (
            "PostgreSQL refused the enqueue: ValueError: no such table (SQLSTATE 42P01)"
        )

    def test_a_refusal_without_a_sqlstate_says_none(self) -> None:
        error = refused(ValueError("odd"), None)

        assert error.sqlstate is None
        assert str(error) == "PostgreSQL refused the enqueue: ValueError: odd"


class TestAsyncpgErrors:
    def test_a_lost_connection_is_unavailable(self) -> None:
        error = asyncpg_errors.enqueue_error(asyncpg.ConnectionDoesNotExistError("gone"))

        assert isinstance(error, StoreUnavailableError)
        assert str(error) == "PostgreSQL is unavailable: ConnectionDoesNotExistError: gone"

    def test_a_serialization_failure_is_a_refusal_with_its_sqlstate(self) -> None:
        error = asyncpg_errors.enqueue_error(asyncpg.SerializationError("could not serialize"))

        assert isinstance(error, EnqueueFailedError)
        assert error.sqlstate == "40001"
        assert str(error) == (
            "PostgreSQL refused the enqueue: SerializationError: could not serialize "
            "(SQLSTATE 40001)"
        )

    @pytest.mark.parametrize(
        "error",
        [asyncpg.ClientConfigurationError("bad option"), ValueError("mine")],
        ids=["client misuse", "not asyncpg's"],
    )
    def test_an_error_of_the_clients_own_passes_unchanged(self, error: Exception) -> None:
        assert asyncpg_errors.enqueue_error(error) is None


class TestPsycopgErrors:
    @pytest.mark.parametrize(
        "error",
        [
            ConnectionRefusedError("refused"),
            psycopg.OperationalError("the connection is closed"),
            psycopg_pool.PoolTimeout("couldn't get a connection after 30.00 sec"),
            psycopg_pool.PoolClosed("the pool is closed"),
            server_error("08006", "connection failure"),
            server_error("08P01", "protocol violation"),
            server_error("57P01", "terminating connection due to administrator command"),
            server_error("57P02", "crash shutdown"),
            server_error("57P03", "the database system is starting up"),
            server_error("57P05", "idle session timeout"),
            server_error("25P03", "idle-in-transaction timeout"),
            server_error("53300", "sorry, too many clients already"),
        ],
        ids=lambda error: getattr(error, "sqlstate", None) or type(error).__name__,
    )
    def test_a_lost_or_refused_session_is_a_connection_loss(self, error: Exception) -> None:
        assert psycopg_connection_loss(error)
        translated = psycopg_enqueue_error(error)
        assert isinstance(translated, StoreUnavailableError)
        assert str(translated) == f"PostgreSQL is unavailable: {type(error).__name__}: {error}"

    @pytest.mark.parametrize(
        ("sqlstate", "message"),
        [
            ("40001", "could not serialize access due to concurrent update"),
            ("40P01", "deadlock detected"),
            ("55P03", "canceling statement due to lock timeout"),
            ("25P02", "current transaction is aborted"),
            ("42P01", 'relation "work_items" does not exist'),
            ("57014", "canceling statement due to statement timeout"),
            ("57000", "operator intervention"),
            ("09000", "triggered action exception"),
            ("53100", "disk full"),
        ],
    )
    def test_a_refused_statement_is_a_refusal_with_its_sqlstate(
        self, sqlstate: str, message: str
    ) -> None:
        error = server_error(sqlstate, message)

        assert not psycopg_connection_loss(error)
        translated = psycopg_enqueue_error(error)
        assert isinstance(translated, EnqueueFailedError)
        assert translated.sqlstate == sqlstate
        assert str(translated) == (
            f"PostgreSQL refused the enqueue: {type(error).__name__}: {message} "
            f"(SQLSTATE {sqlstate})"
        )

    @pytest.mark.parametrize(
        "error",
        [
            psycopg.InterfaceError("the cursor is closed"),
            psycopg.ProgrammingError("the query has 2 placeholders but 3 parameters were passed"),
            ValueError("mine"),
        ],
        ids=["interface", "programming", "not psycopg's"],
    )
    def test_an_error_of_the_clients_own_passes_unchanged(self, error: Exception) -> None:
        assert not psycopg_connection_loss(error)
        assert psycopg_enqueue_error(error) is None
