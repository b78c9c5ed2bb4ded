"""Fresh, migrated PostgreSQL databases for tests: one per test, made ahead of need.

Each test gets a database of its own, so tests see empty tables and fresh ids
and may run in parallel processes against one server. A copy costs a ``CREATE
DATABASE ... TEMPLATE`` of a database migrated once per session, not a run of
the migrations, and the next copy is made on a thread while a test runs.

The work runs on event loops of its own, in a thread of its own
(:func:`run_on_own_loop`), so none of it depends on the loop (or loop scope) of
the tests that use the databases. Nothing here imports pytest; the fixtures are
in :mod:`workqueue.adapters.testing.postgres.plugin`.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections import deque
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from workqueue.adapters.postgres import migrate

__all__ = [
    "MigratedDatabases",
    "create_database",
    "database_url_for",
    "drop_database",
    "run_on_own_loop",
    "unique_database_name",
]

T = TypeVar("T")

_DATABASE_NAME = re.compile(r"^[a-z0-9_]+$")


def database_url_for(url: str, database: str) -> str:
    """``url`` pointing at ``database`` instead, everything else kept (host, socket, user)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{database}", parts.query, parts.fragment))


def run_on_own_loop(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion on a fresh event loop in a thread of its own.

    Sync fixtures use it for database set-up, so whatever loop pytest-asyncio has
    (or has not) set for the test thread is left alone.
    """
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="postgres-fixture") as executor:
        return executor.submit(lambda: asyncio.run(make())).result()


async def _execute(url: str, *statements: str) -> None:
    connection = await asyncpg.connect(url)
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


def _checked_name(name: str) -> str:
    if not _DATABASE_NAME.match(name):
        raise ValueError(f"not a database name the kit makes: {name!r}")
    return name


def unique_database_name(prefix: str) -> str:
    """``prefix`` (lowercase letters, digits and _) and a random suffix."""
    return _checked_name(f"{prefix}_{uuid.uuid4().hex[:16]}")


def create_database(admin_url: str, name: str, *, template: str = "template0") -> str:
    """Create database ``name`` as a copy of ``template`` and return its URL.

    :raises ValueError: if a name is not lowercase letters, digits and _.
    """
    statement = f'CREATE DATABASE "{_checked_name(name)}" TEMPLATE "{_checked_name(template)}"'
    run_on_own_loop(lambda: _execute(admin_url, statement))
    return database_url_for(admin_url, name)


def drop_database(admin_url: str, name: str) -> None:
    """Drop database ``name``, disconnecting whoever is still on it.

    :raises ValueError: if the name is not lowercase letters, digits and _.
    """
    statement = f'DROP DATABASE IF EXISTS "{_checked_name(name)}" WITH (FORCE)'
    run_on_own_loop(lambda: _execute(admin_url, statement))


class MigratedDatabases:
    """Copies of one database migrated at start, for the tests of one session.

    :param admin_url: a maintenance database (``.../postgres``) on a server where
        the user may create databases.
    :param ahead: how many copies to keep made ahead of the tests.
    """

    def __init__(self, admin_url: str, *, ahead: int = 1) -> None:
        self._admin_url = admin_url
        self._template = unique_database_name("workqueue_template")
        template_url = create_database(admin_url, self._template)
        try:
            # migrate() closes its connection: CREATE DATABASE ... TEMPLATE needs the
            # template to have none open.
            run_on_own_loop(lambda: migrate(template_url))
        except BaseException:
            drop_database(admin_url, self._template)
            raise
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="database-supply")
        self._ready: deque[Future[str]] = deque()
        self._drops: list[Future[None]] = []
        self._shared: list[str] = []
        for _ in range(ahead):
            self._make_one()

    def _make_one(self) -> None:
        self._ready.append(
            self._executor.submit(
                create_database,
                self._admin_url,
                unique_database_name("workqueue_test"),
                template=self._template,
            )
        )

    def take(self) -> str:
        """The URL of a fresh migrated database nobody else has had; :meth:`give_back` it."""
        url = self._ready.popleft().result()
        self._make_one()
        return url

    def give_back(self, url: str) -> None:
        """Drop a database from :meth:`take`, in the background."""
        name = urlsplit(url).path.lstrip("/")
        self._drops.append(self._executor.submit(drop_database, self._admin_url, name))

    def shared(self, prefix: str = "workqueue_shared") -> str:
        """A migrated database that lives until :meth:`close` (for data wider than one test).

        :param prefix: lowercase letters, digits and _; names the database.
        """
        name = unique_database_name(prefix)
        self._shared.append(name)
        return create_database(self._admin_url, name, template=self._template)

    def close(self) -> None:
        """Drop every database made here, the template last, and wait for the drops."""
        for made in self._ready:
            self.give_back(made.result())
        self._executor.shutdown(wait=True)
        for drop in self._drops:
            drop.result()
        for name in [*self._shared, self._template]:
            drop_database(self._admin_url, name)
