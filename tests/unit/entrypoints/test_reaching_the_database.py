"""Choosing and reaching the database: the URL or the embedded server, bounded retries, one
clear line, never the password. The driver is replaced by a script: no server here."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from pydantic import SecretStr

from workqueue.adapters.postgres import PostgresWorkNotifications, PostgresWorkStore
from workqueue.entrypoints.worker import database
from workqueue.entrypoints.worker.database import (
    DatabaseTarget,
    DatabaseUnreachableError,
    open_database,
    open_notifications,
    open_pool,
    open_work_queue,
    open_work_store,
    retry_delays,
)
from workqueue.entrypoints.worker.watchdog import watchdog_store

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


DSN = "postgresql://app:n0t-for-logs@db:5432/queue"


class FakePool:
    def __init__(self) -> None:
        self.closed = False

    async def close(self) -> None:
        self.closed = True


class ScriptedDriver:
    """create_pool answering with the scripted errors, then with a pool."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.pool = FakePool()

    async def create_pool(self, dsn: str, **kwargs: Any) -> FakePool:
        self.calls.append((dsn, kwargs))
        if self.errors:
            raise self.errors.pop(0)
        return self.pool


@pytest.fixture
def driver(monkeypatch: pytest.MonkeyPatch) -> ScriptedDriver:
    scripted = ScriptedDriver()
    monkeypatch.setattr(database, "create_pool", scripted.create_pool)
    return scripted


def pool_from(attempts: int, clock: InstantClock | None = None) -> AsyncIterator[Any]:
    return open_pool(
        DatabaseTarget(dsn=DSN),
        clock=clock or InstantClock(),
        min_size=2,
        max_size=7,
        attempts=attempts,
    )


async def test_the_pool_is_opened_as_configured_and_closed_at_the_end(
    driver: ScriptedDriver,
) -> None:
    opening = pool_from(attempts=3)

    assert await anext(opening) is driver.pool
    assert driver.calls == [(DSN, {"min_size": 2, "max_size": 7, "timeout": 5.0})]
    assert not driver.pool.closed
    with pytest.raises(StopAsyncIteration):
        await anext(opening)
    assert driver.pool.closed


async def test_a_refused_connection_is_retried_and_then_the_pool_opens(
    driver: ScriptedDriver,
) -> None:
    driver.errors = [ConnectionRefusedError("refused"), TimeoutError()]
    clock = InstantClock()
    opening = pool_from(attempts=3, clock=clock)

    assert await anext(opening) is driver.pool
    assert (len(driver.calls), clock.slept) == (3, [0.5, 1.0])
    await opening.aclose()


async def test_the_last_attempt_failing_gives_one_line_naming_the_attempts_and_the_error(
    driver: ScriptedDriver,
) -> None:
    driver.errors = [ConnectionRefusedError("refused"), ConnectionRefusedError("still\nrefused")]
    opening = pool_from(attempts=2)

    with pytest.raises(DatabaseUnreachableError) as raised:
        await anext(opening)

    assert len(driver.calls) == 2
    assert str(raised.value) == (
        "cannot reach the database postgresql://app:***@db:5432/queue after 2 attempts: "
        "ConnectionRefusedError: still refused"
    )


async def test_a_single_attempt_says_no_count(driver: ScriptedDriver) -> None:
    driver.errors = [ConnectionRefusedError("refused")]
    opening = pool_from(attempts=1)

    with pytest.raises(DatabaseUnreachableError) as raised:
        await anext(opening)

    assert str(raised.value) == (
        "cannot reach the database postgresql://app:***@db:5432/queue: "
        "ConnectionRefusedError: refused"
    )


async def test_an_error_that_retrying_cannot_fix_ends_the_attempts_at_once(
    driver: ScriptedDriver,
) -> None:
    driver.errors = [ValueError("bad option")]
    clock = InstantClock()
    opening = pool_from(attempts=5, clock=clock)

    with pytest.raises(DatabaseUnreachableError, match=r"queue: ValueError: bad option$"):
        await anext(opening)

    assert (len(driver.calls), clock.slept) == (1, [])


async def test_a_configured_url_is_the_database_and_nothing_is_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_server(data_dir: Path) -> None:
        raise AssertionError("no embedded server for a configured URL")

    monkeypatch.setattr(database, "start_embedded_postgres", no_server)
    opening = open_database(SecretStr(DSN), Path("/unused"))

    target = await anext(opening)

    assert (target.dsn, target.embedded_data_dir) == (DSN, None)
    with pytest.raises(StopAsyncIteration):
        await anext(opening)


async def test_without_a_url_the_embedded_server_is_started_announced_and_stopped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)

    class Server:
        dsn = "postgresql://postgres:@/postgres?host=/srv/pgdata"
        data_dir = Path("/srv/pgdata")
        stopped = False

        def stop(self) -> None:
            self.stopped = True

    server = Server()
    started: list[Path] = []

    def start(data_dir: Path) -> Server:
        started.append(data_dir)
        return server

    monkeypatch.setattr(database, "start_embedded_postgres", start)
    opening = open_database(None, Path("/srv/pgdata"))

    target = await anext(opening)

    assert started == [Path("/srv/pgdata")]
    assert (target.dsn, target.embedded_data_dir) == (server.dsn, server.data_dir)
    (line,) = [r for r in caplog.records if r.name == "workqueue.cli.database"]
    assert line.getMessage() == "starting the embedded PostgreSQL in /srv/pgdata"
    assert getattr(line, "embedded_data_dir", None) == "/srv/pgdata"
    assert not server.stopped
    with pytest.raises(StopAsyncIteration):
        await anext(opening)
    assert server.stopped


async def test_notifications_listen_on_the_database_and_stop_at_the_end() -> None:
    opening = open_notifications(DatabaseTarget(dsn=DSN))

    notifications = await anext(opening)

    assert isinstance(notifications, PostgresWorkNotifications)
    # Nothing listens yet: the first wait for work starts the listener.
    assert "workqueue-listen" not in {task.get_name() for task in asyncio.all_tasks()}
    with pytest.raises(StopAsyncIteration):
        await anext(opening)


@pytest.mark.parametrize(
    ("opener", "adapter"),
    [(open_work_store, "PostgresWorkStore"), (open_work_queue, "PostgresWorkQueue")],
    ids=["store", "queue"],
)
async def test_the_store_and_the_queue_are_built_on_the_pool_and_closed_when_the_run_ends(
    monkeypatch: pytest.MonkeyPatch, opener: Any, adapter: str
) -> None:
    made: list[tuple[object, object]] = []
    closed: list[object] = []

    class Recording:
        def __init__(self, pool: object, clock: object) -> None:
            made.append((pool, clock))

        async def close(self) -> None:
            closed.append(self)

    monkeypatch.setattr(database, adapter, Recording)
    pool, clock = FakePool(), InstantClock()
    opening = opener(pool, clock)

    built = await anext(opening)

    assert made == [(pool, clock)]
    assert closed == []
    with pytest.raises(StopAsyncIteration):
        await anext(opening)
    assert closed == [built]


async def test_each_retry_is_announced_with_its_number_and_the_wait(
    driver: ScriptedDriver, caplog: pytest.LogCaptureFixture
) -> None:
    driver.errors = [ConnectionRefusedError("refused"), TimeoutError()]
    opening = pool_from(attempts=3)

    with caplog.at_level(logging.WARNING, logger="workqueue.cli.database"):
        await anext(opening)

    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "WARNING",
            "cannot reach the database postgresql://app:***@db:5432/queue "
            "(ConnectionRefusedError: refused); retrying (2/3) in 0.5 s",
        ),
        (
            "WARNING",
            "cannot reach the database postgresql://app:***@db:5432/queue "
            "(TimeoutError); retrying (3/3) in 1.0 s",
        ),
    ]
    assert [(r.__dict__["attempt"], r.__dict__["attempts"]) for r in caplog.records] == [
        (2, 3),
        (3, 3),
    ]
    await opening.aclose()


class SleepingClock(InstantClock):
    """A clock whose sleeps never end (until cancelled); ``asleep`` is set by the first."""

    def __init__(self) -> None:
        super().__init__()
        self.asleep = asyncio.Event()

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.asleep.set()
        await asyncio.Event().wait()


async def test_cancelled_between_attempts_it_stops_trying_with_an_error_of_its_own(
    driver: ScriptedDriver,
) -> None:
    driver.errors = [ConnectionRefusedError("refused")] * 5
    clock = SleepingClock()
    opening = asyncio.ensure_future(anext(pool_from(attempts=5, clock=clock)))
    await clock.asleep.wait()

    opening.cancel()
    with pytest.raises(DatabaseUnreachableError) as raised:
        await opening

    assert str(raised.value) == (
        "connecting to the database postgresql://app:***@db:5432/queue was interrupted"
    )
    assert len(driver.calls) == 1


class TestThroughATransactionPooler:
    async def test_a_pooled_database_gets_a_pool_without_a_statement_cache(
        self, driver: ScriptedDriver
    ) -> None:
        opening = open_pool(
            DatabaseTarget(dsn=DSN),
            clock=InstantClock(),
            min_size=1,
            max_size=3,
            attempts=1,
            transaction_pooling=True,
        )

        assert await anext(opening) is driver.pool
        assert driver.calls == [
            (DSN, {"min_size": 1, "max_size": 3, "timeout": 5.0, "statement_cache_size": 0})
        ]
        await opening.aclose()

    async def test_notifications_listen_on_the_direct_url_when_one_is_given(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        listened: list[str] = []
        monkeypatch.setattr(
            database, "PostgresWorkNotifications", lambda dsn: listened.append(dsn) or _Closable()
        )
        direct = "postgresql://app:pw@db-direct:5432/queue"

        for pooling in (True, False):
            opening = open_notifications(
                DatabaseTarget(dsn=DSN), listen_url=SecretStr(direct), transaction_pooling=pooling
            )
            await anext(opening)
            await opening.aclose()

        assert listened == [direct, direct]

    async def test_without_a_direct_url_a_pooled_worker_polls_and_says_so(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.cli.database")
        opening = open_notifications(DatabaseTarget(dsn=DSN), transaction_pooling=True)

        assert await anext(opening) is None
        assert [r.getMessage() for r in caplog.records] == [
            "no LISTEN through a transaction pooler: set WORKQUEUE_LISTEN_DATABASE_URL "
            "to be woken early; polling"
        ]
        with pytest.raises(StopAsyncIteration):
            await anext(opening)


class _Closable:
    async def aclose(self) -> None:
        return None


class TestTheWatchdogsOwnStore:
    """The loop watchdog renews through a pool of one connection of its own, tried once."""

    @pytest.mark.parametrize(
        ("transaction_pooling", "options"),
        [
            (False, {"min_size": 1, "max_size": 1, "timeout": 5.0}),
            (True, {"min_size": 1, "max_size": 1, "statement_cache_size": 0, "timeout": 5.0}),
        ],
    )
    async def test_it_opens_one_connection_as_the_worker_would_and_closes_it(
        self, driver: ScriptedDriver, transaction_pooling: bool, options: dict[str, object]
    ) -> None:
        opening = watchdog_store(
            DatabaseTarget(dsn=DSN), InstantClock(), transaction_pooling=transaction_pooling
        )
        async with opening as store:
            assert isinstance(store, PostgresWorkStore)
            assert driver.calls == [(DSN, options)]
            assert not driver.pool.closed
        assert driver.pool.closed

    async def test_an_unreachable_database_is_tried_once(self, driver: ScriptedDriver) -> None:
        driver.errors = [ConnectionRefusedError("refused"), ConnectionRefusedError("refused")]
        clock = InstantClock()
        with pytest.raises(DatabaseUnreachableError, match=r"queue: ConnectionRefusedError"):
            async with watchdog_store(DatabaseTarget(dsn=DSN), clock, transaction_pooling=False):
                pass
        assert (len(driver.calls), clock.slept) == (1, [])
