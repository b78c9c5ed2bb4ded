"""A lost database becomes StoreUnavailableError; a failed statement stays what it is."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from workqueue.adapters.postgres import is_connection_loss
from workqueue.adapters.postgres.unavailable import connection_loss_as_unavailable
from workqueue.domain import StoreUnavailableError


class TestConnectionLoss:
    @pytest.mark.parametrize(
        ("error", "lost"),
        [
            (ConnectionResetError("reset"), True),
            (asyncpg.PostgresConnectionError("gone"), True),
            (asyncpg.AdminShutdownError("shutdown"), True),
            (asyncpg.InterfaceError("connection is closed"), True),
            (asyncpg.ClientConfigurationError("bad option"), False),
            (asyncpg.UnsupportedServerFeatureError("no"), False),
            (asyncpg.InternalClientError("cannot switch to state 15"), True),
            (asyncpg.InternalClientError("another operation is in progress"), True),
            (asyncpg.InternalClientError("a bug"), False),
            (asyncpg.UniqueViolationError("duplicate"), False),
            (ValueError("a bug"), False),
        ],
        ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value),
    )
    def test_only_errors_that_mean_the_session_is_gone_count(
        self, error: Exception, lost: bool
    ) -> None:
        assert is_connection_loss(error) is lost


class TestLostConnections:
    def test_a_lost_connection_becomes_store_unavailable_naming_the_error(self) -> None:
        with pytest.raises(StoreUnavailableError) as raised, connection_loss_as_unavailable():
            raise ConnectionResetError("reset by peer")

        assert str(raised.value) == (
            "PostgreSQL is unavailable: ConnectionResetError: reset by peer"
        )
        assert isinstance(raised.value.__cause__, ConnectionResetError)

    def test_any_other_error_passes_through_unchanged(self) -> None:
        error = asyncpg.UniqueViolationError("duplicate key")

        with (
            pytest.raises(asyncpg.UniqueViolationError) as raised,
            connection_loss_as_unavailable(),
        ):
            raise error

        assert raised.value is error

    def test_a_cancellation_passes_through_unchanged(self) -> None:
        with pytest.raises(asyncio.CancelledError), connection_loss_as_unavailable():
            raise asyncio.CancelledError

    def test_a_block_that_raises_nothing_returns_what_it_computed(self) -> None:
        with connection_loss_as_unavailable() as entered:
            result = 1 + 1

        assert (entered, result) == (None, 2)
