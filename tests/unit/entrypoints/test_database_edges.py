"""Choosing and reaching the database, with the driver replaced by a script: no server here."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from adapters.postgres import PostgresWorkNotifications
from entrypoints.worker import database
from entrypoints.worker.database import (
    DatabaseTarget,
    DatabaseUnreachableError,
    open_database,
    open_notifications,
    open_pool,
    open_work_queue,
    open_work_store,
)

DSN = "postgresql://app:n0t-for-logs@db:5432/queue"


class InstantClock:
    def __init__(self) -> None:
        self.slept: list[float] = []

    def now(self) -> datetime:
        return datetime(2026, 1, 1, tzinfo=UTC)

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


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
    assert not notifications.is_listening
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
