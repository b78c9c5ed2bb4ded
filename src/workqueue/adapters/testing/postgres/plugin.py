"""pytest fixtures for tests on a real PostgreSQL: a fresh migrated database per test.

Load it from the root ``conftest.py`` (or with ``-p``)::

    pytest_plugins = ["workqueue.adapters.testing.postgres.plugin"]

It finds the server once per session
(:func:`~workqueue.adapters.testing.postgres.server.postgres_for_tests`): the
one named by ``WORKQUEUE_TEST_DATABASE_URL``, a maintenance database on a
server where the user may create databases::

    export WORKQUEUE_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres

else a testcontainers PostgreSQL when a Docker engine answers, else an embedded
one from the ``pgserver`` wheel (data in ``/tmp/workqueue-test-pgserver``).
When none works the tests that need a server are skipped, saying why; with
``CI=true`` they fail instead, so a CI run never passes without them. The end
of the run says which server the tests ran on. A project may find its server
some other way by overriding ``postgres_admin_url`` in its conftest.

Fixtures:

- ``postgres_admin_url`` (session): a URL to a maintenance database on the server.
- ``migrated_databases`` (session): the :class:`MigratedDatabases` behind the rest.
- ``database_url``: a fresh database of the test's own with every migration
  applied; dropped after the test.
- ``migrated_pool``: an asyncpg pool (the adapter's JSON codecs registered) on
  ``database_url``, on the test's loop; closed after the test.
- ``empty_database_url``: a fresh database with no migrations at all.
- ``migrated_database_factory`` (session): call it for a migrated database that
  outlives one test (a module's read-only data set); dropped at session end.
- ``run_in_fresh_loop`` (session): :func:`run_on_own_loop`, for sync fixtures of
  wider scope that set up data.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, TypeVar

import asyncpg
import pytest
import pytest_asyncio

from workqueue.adapters.postgres import close_pool, create_pool, redact_dsn
from workqueue.adapters.testing.postgres.databases import (
    MigratedDatabases,
    create_database,
    drop_database,
    run_on_own_loop,
    unique_database_name,
)
from workqueue.adapters.testing.postgres.server import FoundServer, postgres_for_tests

__all__ = [
    "database_url",
    "empty_database_url",
    "migrated_database_factory",
    "migrated_databases",
    "migrated_pool",
    "postgres_admin_url",
    "run_in_fresh_loop",
]

T = TypeVar("T")


_FOUND = pytest.StashKey[FoundServer]()


@pytest.fixture(scope="session")
def postgres_admin_url(pytestconfig: pytest.Config) -> Iterator[str]:
    """A URL to a maintenance database on the session's server, found as the module says."""
    with postgres_for_tests() as server:
        pytestconfig.stash[_FOUND] = server
        yield server.admin_url


@pytest.fixture(scope="session")
def migrated_databases(postgres_admin_url: str) -> Iterator[MigratedDatabases]:
    """Migrated copies for the session's tests; all dropped when it ends."""
    databases = MigratedDatabases(postgres_admin_url)
    try:
        yield databases
    finally:
        databases.close()


@pytest.fixture
def database_url(migrated_databases: MigratedDatabases) -> Iterator[str]:
    """A fresh, migrated database of this test's own; dropped afterwards."""
    url = migrated_databases.take()
    try:
        yield url
    finally:
        migrated_databases.give_back(url)


@pytest.fixture(scope="session")
def migrated_database_factory(migrated_databases: MigratedDatabases) -> Callable[..., str]:
    """Makes migrated databases that outlive one test: ``factory(prefix="...")`` gives a URL."""
    return migrated_databases.shared


@pytest.fixture
def empty_database_url(postgres_admin_url: str) -> Iterator[str]:
    """A fresh database with no migrations applied; dropped afterwards."""
    name = unique_database_name("workqueue_empty")
    url = create_database(postgres_admin_url, name)
    try:
        yield url
    finally:
        drop_database(postgres_admin_url, name)


@pytest_asyncio.fixture
async def migrated_pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    """A small pool on ``database_url``, on the test's loop; closed after the test."""
    pool = await create_pool(database_url, min_size=1, max_size=4)
    try:
        yield pool
    finally:
        await close_pool(pool)


@pytest.fixture(scope="session")
def run_in_fresh_loop() -> Callable[[Callable[[], Coroutine[Any, Any, T]]], T]:
    """:func:`run_on_own_loop`, for test modules that cannot import it from a conftest."""
    return run_on_own_loop


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say which PostgreSQL the tests ran on (password hidden), when any did."""
    server = terminalreporter.config.stash.get(_FOUND, None)
    if server is not None:
        terminalreporter.write_line(
            f"PostgreSQL for tests: {server.source}: {redact_dsn(server.admin_url)}"
        )
