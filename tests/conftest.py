"""A real PostgreSQL for every test suite that needs one, and a guard against hung tests.

The database fixtures (``postgres_admin_url``, ``database_url``, ``migrated_pool``,
``empty_database_url``, ``migrated_database_factory``, ``run_in_fresh_loop``) are
the contract kit's own, from :mod:`workqueue.adapters.testing.postgres.plugin`,
as a third party would use them. The plugin finds the server once per session:
``WORKQUEUE_TEST_DATABASE_URL``, else a testcontainers PostgreSQL when a Docker
engine answers, else an embedded one from ``pgserver`` (data in
``/tmp/workqueue-test-pgserver``); when none works the PostgreSQL tests are
skipped, except under ``CI=true``, where that is a failure. This conftest adds
``pgbouncer``, a real PgBouncer before that server.

Every test that uses any of the database fixtures is marked ``postgres``.

Every other test that is neither ``e2e`` nor ``fault`` is failed once it has run
for 20 s: it has hung. If that failure is swallowed and the test still runs 20 s
later, the process exits with status 1, printing every thread's stack (the kit's
:func:`~workqueue.adapters.testing.contract.fail_if_hung`).

Under ``scripts/mutation --full`` the first test to fail under each mutant is noted
for the mutation gate's record (:func:`pytest_runtest_logreport`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import Phase, settings

from workqueue.adapters.testing.contract import fail_if_hung
from workqueue.adapters.testing.postgres.pgbouncer import (
    PgBouncer,
    find_pgbouncer,
    pgbouncer_unavailable,
)

pytest_plugins = ["workqueue.adapters.testing.postgres.plugin"]

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


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Under ``scripts/mutation --full``, note the test that killed the mutant under test.

    mutmut runs a mutant's tests until one fails; the first to fail is written to a
    file named after the mutant in the directory WORKQUEUE_MUTATION_KILLERS names.
    The gate's record keeps it, and the gate judges that mutant again only when its
    killer may run differently (docs/adr/0006-mutation-testing.md).
    """
    killers = os.environ.get("WORKQUEUE_MUTATION_KILLERS")
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    if killers and report.failed and "__mutmut_" in mutant:
        note = Path(killers) / mutant
        if not note.exists():
            note.write_text(report.nodeid, encoding="utf-8")


# Server connections the test PgBouncer opens per database and user.
PGBOUNCER_POOL_SIZE = 5


@pytest.fixture
def pgbouncer(postgres_admin_url: str) -> Iterator[PgBouncer]:
    """A PgBouncer in transaction mode before the session's server, stopped after the test.

    ``pgbouncer.url_for(database_url)`` is a test database's URL through it.
    Skipped, saying why in one line, when none can run here (pgbouncer not
    installed, the server out of its reach); under ``CI=true`` that is a failure.
    """
    reason = pgbouncer_unavailable(postgres_admin_url)
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"no PgBouncer for the tests: {reason}", pytrace=False)
        pytest.skip(f"no PgBouncer for the tests: {reason}")
    executable = find_pgbouncer()
    assert executable is not None
    bouncer = PgBouncer(executable, postgres_admin_url, pool_size=PGBOUNCER_POOL_SIZE)
    try:
        yield bouncer
    finally:
        bouncer.stop()


# The slowest database-free test takes a few seconds; one that runs this long has hung.
HUNG_AFTER_SECONDS = 20.0


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """The CLI configures the root logger; put it back so no test leaks its level or handlers.

    Every test, not only the CLI's own: a test elsewhere that runs ``main`` left the
    root at INFO, and a later test counting its log records read the worker's too.
    """
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


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
