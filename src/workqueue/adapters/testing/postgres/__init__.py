"""The contract kit's PostgreSQL side: a back door over the documented tables, fresh databases.

For any store over ``work_items`` and ``refresh_tokens`` as DESIGN.md lays them
out, ours or another's:

- :class:`PostgresBackdoor`: the kit's back door as plain SQL of its own;
- :class:`PostgresContractFixtures`: every fixture of the kit, each test on a
  fresh migrated database of its own;
- :mod:`workqueue.adapters.testing.postgres.plugin`: the pytest fixtures that make those
  databases (``database_url``, ``migrated_pool``, ...), on the server named by
  ``WORKQUEUE_TEST_DATABASE_URL``, else a testcontainers or an embedded one
  (:func:`postgres_for_tests`); load it with
  ``pytest_plugins = ["workqueue.adapters.testing.postgres.plugin"]``;
- :class:`MigratedDatabases` and :func:`run_on_own_loop`, the machinery under
  the fixtures, for a project that wires its own;
- :class:`~workqueue.adapters.testing.postgres.pgbouncer.PgBouncer`: a real PgBouncer in
  transaction mode before the test server (``workqueue.adapters.testing.postgres.pgbouncer``).

This package imports asyncpg, pytest and Hypothesis.
"""

from __future__ import annotations

from workqueue.adapters.testing.postgres.backdoor import PostgresBackdoor
from workqueue.adapters.testing.postgres.databases import (
    MigratedDatabases,
    create_database,
    database_url_for,
    drop_database,
    run_on_own_loop,
    unique_database_name,
)
from workqueue.adapters.testing.postgres.fixtures import PostgresContractFixtures, PostgresSubjects
from workqueue.adapters.testing.postgres.server import (
    DATABASE_URL_VARIABLE,
    FoundServer,
    no_postgres,
    postgres_for_tests,
)

__all__ = [
    "DATABASE_URL_VARIABLE",
    "FoundServer",
    "MigratedDatabases",
    "PostgresBackdoor",
    "PostgresContractFixtures",
    "PostgresSubjects",
    "create_database",
    "database_url_for",
    "drop_database",
    "no_postgres",
    "postgres_for_tests",
    "run_on_own_loop",
    "unique_database_name",
]
