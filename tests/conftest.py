"""A real PostgreSQL for every test suite that needs one, and a guard against hung tests.

The database fixtures (``database_url``, ``migrated_pool``, ``empty_database_url``,
``migrated_database_factory``, ``run_in_fresh_loop``) are the contract kit's own,
from :mod:`adapters.testing.postgres.plugin`, as a third party would use them.
This conftest only finds the server for them (``postgres_admin_url``), once per
session, in this order:

1. ``WORKQUEUE_TEST_DATABASE_URL``, when set: a URL to a maintenance database
   (``postgresql://postgres@127.0.0.1:5432/postgres``) on a server where the user
   may create databases;
2. a testcontainers PostgreSQL, when a Docker engine answers;
3. an embedded PostgreSQL from the ``pgserver`` wheel, its data kept in
   ``/tmp/workqueue-test-pgserver`` (pgserver, run as root, opens up every parent
   directory of its data directory, so it must not live under a home directory).

When none of them works the PostgreSQL tests are skipped, except under
``CI=true``, where that is a failure.

Every test that uses any of the database fixtures is marked ``postgres``.

Every other test that is neither ``e2e`` nor ``fault`` is failed once it has run
for 20 s: it has hung. If that failure is swallowed and the test still runs 20 s
later, the process exits with status 1, printing every thread's stack (the kit's
:func:`~adapters.testing.contract.fail_if_hung`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import warnings
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import Phase, settings

from adapters.postgres import redact_dsn
from adapters.testing.contract import fail_if_hung
from adapters.testing.postgres import DATABASE_URL_VARIABLE, no_postgres
from adapters.testing.postgres.pgbouncer import PgBouncer, find_pgbouncer, reaches_over_tcp

pytest_plugins = ["adapters.testing.postgres.plugin"]

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

PGSERVER_DATA_DIR = Path("/tmp/workqueue-test-pgserver")
CONTAINER_IMAGE = "postgres:16-alpine"


@dataclass(frozen=True, slots=True)
class _Server:
    """Where the session's PostgreSQL came from, for the summary line."""

    admin_url: str
    source: str


_server_used: list[_Server] = []


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
    """A URL to a maintenance database on the session's PostgreSQL server.

    Overrides the kit plugin's, which knows only ``WORKQUEUE_TEST_DATABASE_URL``.
    """
    url = os.environ.get(DATABASE_URL_VARIABLE)
    if url:
        _server_used.append(_Server(url, f"${DATABASE_URL_VARIABLE}"))
        yield url
        return
    reasons = [f"${DATABASE_URL_VARIABLE} is not set"]
    serving = _container_server(reasons) or _pgserver_server(reasons)
    if serving is None:
        no_postgres(reasons)
    with contextlib.closing(serving):
        server = next(serving)
        _server_used.append(server)
        yield server.admin_url


# Server connections the test PgBouncer opens per database and user.
PGBOUNCER_POOL_SIZE = 5


@pytest.fixture
def pgbouncer(postgres_admin_url: str) -> Iterator[PgBouncer]:
    """A PgBouncer in transaction mode before the session's server, stopped after the test.

    ``pgbouncer.url_for(database_url)`` is a test database's URL through it.
    Skipped when pgbouncer is not installed, except under ``CI=true``.
    """
    executable = find_pgbouncer()
    message = None
    if executable is None:
        message = "pgbouncer is not installed (apt-get install pgbouncer)"
    elif os.geteuid() == 0 and not reaches_over_tcp(postgres_admin_url):
        message = "pgbouncer runs as nobody here, who cannot reach the test server's socket"
    if message is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    assert executable is not None
    bouncer = PgBouncer(executable, postgres_admin_url, pool_size=PGBOUNCER_POOL_SIZE)
    try:
        yield bouncer
    finally:
        bouncer.stop()


# The slowest database-free test takes a few seconds; one that runs this long has hung.
HUNG_AFTER_SECONDS = 20.0


@pytest.fixture(autouse=True)
def _database_free_tests_fail_instead_of_hanging(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a database-free test that runs for :data:`HUNG_AFTER_SECONDS`, showing where it hung.

    A hang (a loop that never yields, a wait that nothing ends) would otherwise
    stall the whole run; the mutation run meets many of them on purpose. Tests on
    PostgreSQL, e2e and fault tests may legitimately take longer and are left
    alone here (the contract kit's own guard, with a longer limit, watches its
    tests on PostgreSQL).
    """
    if any(request.node.get_closest_marker(name) for name in ("postgres", "e2e", "fault")):
        yield
        return
    with fail_if_hung(HUNG_AFTER_SECONDS, request.node.nodeid, config=request.config):
        yield


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
