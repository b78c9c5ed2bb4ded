"""A real PostgreSQL for every test suite that needs one.

The server is found once per session, in this order:

1. ``WORKQUEUE_TEST_DATABASE_URL``, when set: a URL to a maintenance database
   (``postgresql://postgres@127.0.0.1:5432/postgres``) on a server where the user
   may create databases;
2. a testcontainers PostgreSQL, when a Docker engine answers;
3. an embedded PostgreSQL from the ``pgserver`` wheel, its data kept in
   ``/tmp/workqueue-test-pgserver`` (pgserver, run as root, opens up every parent
   directory of its data directory, so it must not live under a home directory).

When none of them works the PostgreSQL tests are skipped, except under
``CI=true``, where that is a failure.

Fixtures:

- ``postgres_admin_url`` (session): the URL of a maintenance database on that server.
- ``database_url`` (function): a URL to a fresh database of the test's own, with
  every migration applied; dropped after the test. Copied from a template that
  is migrated once per session, so it costs a ``CREATE DATABASE``, not a migration.
- ``empty_database_url`` (function): a fresh database with no migrations at all.
- ``migrated_pool`` (function): an asyncpg pool (JSON codecs registered) on
  ``database_url``, closed after the test.
- ``migrated_database_factory`` (session): call it for a migrated database that
  outlives one test (say, a module's large read-only data set); all are dropped
  when the session ends.
- ``run_in_fresh_loop`` (session): runs a coroutine function to completion on
  an event loop of its own, for sync fixtures of wider scope that set up data.

Every test that uses any of them is marked ``postgres``. The session fixtures are
synchronous and run their database work on a thread of their own, so they do not
depend on pytest-asyncio's loop scopes; pools live on the test's own loop.

Every other test that is neither ``e2e`` nor ``fault`` is failed once it has run
for 20 s: it has hung. If that failure is swallowed and the test still runs 20 s
later, the process exits with status 1, printing every thread's stack.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import gc
import os
import re
import signal
import sys
import uuid
import warnings
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
import pytest_asyncio
from hypothesis import Phase, settings

from adapters.postgres import close_pool, create_pool, migrate, redact_dsn

# Under mutmut (which sets MUTANT_UNDER_TEST for the whole run), property-based
# tests draw the same examples every time, so a mutant is killed or survives on
# every run alike and the mutation gate cannot flicker; and a failure is reported
# as found, not shrunk (shrinking a mutant's failure can take minutes).
settings.register_profile(
    "mutation",
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
if "MUTANT_UNDER_TEST" in os.environ:
    settings.load_profile("mutation")

DATABASE_URL_VARIABLE = "WORKQUEUE_TEST_DATABASE_URL"
PGSERVER_DATA_DIR = Path("/tmp/workqueue-test-pgserver")
CONTAINER_IMAGE = "postgres:16-alpine"

_DATABASE_NAME = re.compile(r"^[a-z0-9_]+$")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Server:
    """Where the session's PostgreSQL came from, for the summary line."""

    admin_url: str
    source: str


_server_used: list[_Server] = []


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


def create_database(admin_url: str, name: str, *, template: str = "template0") -> str:
    """Create database ``name`` as a copy of ``template`` and return its URL."""
    for database in (name, template):
        if not _DATABASE_NAME.match(database):
            raise ValueError(f"not a database name the fixtures make: {database!r}")
    run_on_own_loop(lambda: _execute(admin_url, f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
    return database_url_for(admin_url, name)


def drop_database(admin_url: str, name: str) -> None:
    """Drop database ``name``, disconnecting whoever is still on it."""
    if not _DATABASE_NAME.match(name):
        raise ValueError(f"not a database name the fixtures make: {name!r}")
    run_on_own_loop(lambda: _execute(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def _unique_name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def _no_postgres(reasons: list[str]) -> None:
    message = "no PostgreSQL for the tests: " + "; ".join(reasons)
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def _docker_answers(reasons: list[str]) -> bool:
    try:
        import docker
    except ImportError:
        reasons.append("docker-py is not installed")
        return False
    # docker-py leaves a socket in a reference cycle when no engine answers. Left
    # to the garbage collector, its ResourceWarning would surface in whichever
    # later test the collection happens to run in, and fail it under
    # filterwarnings=error: collect it here, while the warning is ignored.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            return _docker_pings(docker, reasons)
        finally:
            gc.collect()


def _docker_pings(docker: ModuleType, reasons: list[str]) -> bool:
    try:
        client = docker.from_env(timeout=3)
    except Exception as error:
        reasons.append(f"no Docker engine ({type(error).__name__})")
        return False
    try:
        client.ping()
    except Exception as error:
        reasons.append(f"the Docker engine does not answer ({type(error).__name__})")
        return False
    finally:
        client.close()
    return True


def _container_server(reasons: list[str]) -> Generator[_Server, None, None] | None:
    if not _docker_answers(reasons):
        return None

    def serve() -> Generator[_Server, None, None]:
        with warnings.catch_warnings():
            # testcontainers.postgres warns about its deprecated wait strategy on import.
            warnings.simplefilter("ignore")
            from testcontainers.postgres import PostgresContainer

        container = PostgresContainer(CONTAINER_IMAGE, driver=None)
        container.start()
        try:
            yield _Server(container.get_connection_url(), f"testcontainers ({CONTAINER_IMAGE})")
        finally:
            container.stop()

    return serve()


def _pgserver_server(reasons: list[str]) -> Generator[_Server, None, None] | None:
    try:
        with warnings.catch_warnings():
            # Without XDG_RUNTIME_DIR, platformdirs (via pgserver) warns on import.
            warnings.simplefilter("ignore")
            import pgserver

            server = pgserver.get_server(PGSERVER_DATA_DIR, cleanup_mode="stop")
    except Exception as error:
        reasons.append(f"pgserver failed in {PGSERVER_DATA_DIR} ({type(error).__name__}: {error})")
        return None

    def serve() -> Generator[_Server, None, None]:
        try:
            yield _Server(server.get_uri(), f"pgserver in {PGSERVER_DATA_DIR}")
        finally:
            # Stops the server unless another process still uses it.
            server.cleanup()

    return serve()


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    """A URL to a maintenance database on the session's PostgreSQL server."""
    url = os.environ.get(DATABASE_URL_VARIABLE)
    if url:
        _server_used.append(_Server(url, f"${DATABASE_URL_VARIABLE}"))
        yield url
        return
    reasons = [f"${DATABASE_URL_VARIABLE} is not set"]
    serving = _container_server(reasons) or _pgserver_server(reasons)
    if serving is None:
        _no_postgres(reasons)
        return
    with contextlib.closing(serving):
        server = next(serving)
        _server_used.append(server)
        yield server.admin_url


@pytest.fixture(scope="session")
def _migrated_template(postgres_admin_url: str) -> Iterator[str]:
    """The name of a database migrated once per session, the copy source of ``database_url``."""
    name = _unique_name("workqueue_template")
    url = create_database(postgres_admin_url, name)
    try:
        # migrate() closes its connection: CREATE DATABASE ... TEMPLATE needs the
        # template to have none open.
        run_on_own_loop(lambda: migrate(url))
        yield name
    finally:
        drop_database(postgres_admin_url, name)


class _DatabaseSupply:
    """Copies of the migrated template, made a few steps ahead of the tests on threads.

    A copy costs a ``CREATE DATABASE`` (a few hundred milliseconds with fsync on);
    making the next ones while a test runs, and dropping used ones behind it,
    keeps that off the tests' clock.
    """

    def __init__(self, admin_url: str, template: str, *, ahead: int = 1) -> None:
        self._admin_url = admin_url
        self._template = template
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="database-supply")
        self._ready: deque[Future[str]] = deque()
        self._drops: list[Future[None]] = []
        for _ in range(ahead):
            self._make_one()

    def _make_one(self) -> None:
        name = _unique_name("workqueue_test")
        self._ready.append(
            self._executor.submit(create_database, self._admin_url, name, template=self._template)
        )

    def take(self) -> str:
        """The URL of a fresh migrated database no other test has had."""
        url = self._ready.popleft().result()
        self._make_one()
        return url

    def give_back(self, url: str) -> None:
        """Drop a used database, in the background."""
        name = urlsplit(url).path.lstrip("/")
        self._drops.append(self._executor.submit(drop_database, self._admin_url, name))

    def close(self) -> None:
        """Drop the copies no test took, and wait for every drop."""
        for made in self._ready:
            self.give_back(made.result())
        self._executor.shutdown(wait=True)
        for drop in self._drops:
            drop.result()


@pytest.fixture(scope="session")
def _database_supply(postgres_admin_url: str, _migrated_template: str) -> Iterator[_DatabaseSupply]:
    supply = _DatabaseSupply(postgres_admin_url, _migrated_template)
    try:
        yield supply
    finally:
        supply.close()


@pytest.fixture
def database_url(_database_supply: _DatabaseSupply) -> Iterator[str]:
    """A fresh, migrated database of this test's own; dropped afterwards."""
    url = _database_supply.take()
    try:
        yield url
    finally:
        _database_supply.give_back(url)


class MigratedDatabaseFactory:
    """Makes migrated databases for fixtures wider than one test; drops them at session end."""

    def __init__(self, admin_url: str, template: str) -> None:
        self._admin_url = admin_url
        self._template = template
        self._made: list[str] = []

    def __call__(self, prefix: str = "workqueue_shared") -> str:
        """A new migrated database's URL; ``prefix`` (lowercase letters and _) names it."""
        name = _unique_name(prefix)
        self._made.append(name)
        return create_database(self._admin_url, name, template=self._template)

    def drop_all(self) -> None:
        for name in self._made:
            drop_database(self._admin_url, name)


@pytest.fixture(scope="session")
def migrated_database_factory(
    postgres_admin_url: str, _migrated_template: str
) -> Iterator[MigratedDatabaseFactory]:
    """Makes migrated databases that outlive one test (a module's shared, read-only data)."""
    factory = MigratedDatabaseFactory(postgres_admin_url, _migrated_template)
    try:
        yield factory
    finally:
        factory.drop_all()


@pytest.fixture
def empty_database_url(postgres_admin_url: str) -> Iterator[str]:
    """A fresh database with no migrations applied; dropped afterwards."""
    name = _unique_name("workqueue_empty")
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
    """:func:`run_on_own_loop`, for test modules (they cannot import this conftest)."""
    return run_on_own_loop


# The process's own exit, taken before any test can replace os._exit with a fake.
_exit_now = os._exit

# The slowest database-free test takes a few seconds; one that runs this long has hung.
HUNG_AFTER_SECONDS = 20.0


@pytest.fixture(autouse=True)
def _database_free_tests_fail_instead_of_hanging(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a database-free test that runs for :data:`HUNG_AFTER_SECONDS`, showing where it hung.

    A hang (a loop that never yields, a wait that nothing ends) would otherwise
    stall the whole run; the mutation run meets many of them on purpose. Tests on
    PostgreSQL, e2e and fault tests may legitimately take longer and are left alone.
    """
    if any(request.node.get_closest_marker(name) for name in ("postgres", "e2e", "fault")):
        yield
        return

    alarms = 0

    def hung(signum: int, frame: object) -> None:
        nonlocal alarms
        alarms += 1
        if alarms == 1:
            raise TimeoutError(f"this test ran for {HUNG_AFTER_SECONDS:.0f} s: it hung")
        # The error was swallowed (an event loop logs an exception raised in a callback;
        # a worker loop carries on after a failed step): end the run, showing where.
        capture = request.config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            capture.suspend_global_capture(in_=False)
        sys.stderr.write(f"\n{request.node.nodeid} still hung after the first alarm; exiting\n")
        faulthandler.dump_traceback(sys.stderr)
        _exit_now(1)

    previous = signal.signal(signal.SIGALRM, hung)
    # Repeating: a second alarm ends the process when the first one did not end the test.
    signal.setitimer(signal.ITIMER_REAL, HUNG_AFTER_SECONDS, HUNG_AFTER_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``postgres`` every test that reaches the server through a fixture."""
    for item in items:
        if "postgres_admin_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say which PostgreSQL the tests ran on (password hidden)."""
    for server in _server_used:
        terminalreporter.write_line(
            f"PostgreSQL for tests: {server.source}: {redact_dsn(server.admin_url)}"
        )
