"""Reaching the database: bounded retries, one clear line, never the password."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

import pytest

from entrypoints.worker.database import (
    DatabaseTarget,
    DatabaseUnreachableError,
    open_pool,
    retry_delays,
)

SECRET = "n0t-for-logs"


class InstantClock:
    """A Clock whose sleeps return at once and are remembered."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    def now(self) -> datetime:
        return datetime(2026, 1, 1, tzinfo=UTC)

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


async def first_pool(target: DatabaseTarget, clock: InstantClock, attempts: int) -> None:
    opening = open_pool(target, clock=clock, min_size=1, max_size=1, attempts=attempts)
    try:
        await anext(opening)
    finally:
        await opening.aclose()


def test_the_target_repr_hides_the_dsn_and_shown_hides_the_password() -> None:
    target = DatabaseTarget(dsn=f"postgresql://app:{SECRET}@db:5432/queue")

    assert SECRET not in repr(target)
    assert target.shown == "postgresql://app:***@db:5432/queue"


def test_retry_delays_double_up_to_a_cap() -> None:
    assert retry_delays(1) == []
    assert retry_delays(6) == [0.5, 1.0, 2.0, 4.0, 4.0]


async def test_an_unreachable_database_is_given_up_after_the_configured_attempts() -> None:
    clock = InstantClock()
    # Port 1 on the loopback refuses at once: nothing listens there.
    target = DatabaseTarget(dsn=f"postgresql://app:{SECRET}@127.0.0.1:1/queue")

    with pytest.raises(DatabaseUnreachableError) as raised:
        await first_pool(target, clock, attempts=3)

    message = str(raised.value)
    assert message.startswith(
        "cannot reach the database postgresql://app:***@127.0.0.1:1/queue after 3 attempts: "
    )
    assert SECRET not in message
    assert "\n" not in message
    assert clock.slept == [0.5, 1.0]


async def test_a_database_that_refuses_us_is_not_retried(postgres_admin_url: str) -> None:
    clock = InstantClock()
    parts = urlsplit(postgres_admin_url)
    missing = urlunsplit((parts.scheme, parts.netloc, "/no_such_database_here", parts.query, ""))

    with pytest.raises(DatabaseUnreachableError, match="no_such_database_here"):
        await first_pool(DatabaseTarget(dsn=missing), clock, attempts=5)

    assert clock.slept == []


async def test_a_reachable_database_gives_a_pool_that_is_closed_afterwards(
    database_url: str,
) -> None:
    opening = open_pool(
        DatabaseTarget(dsn=database_url), clock=InstantClock(), min_size=1, max_size=2, attempts=1
    )
    pool = await anext(opening)
    assert await pool.fetchval("SELECT 41 + 1") == 42

    await opening.aclose()

    assert pool.is_closing()
