"""The whole contract kit, run against the PostgreSQL adapter on a real server.

Each test gets a database of its own (the kit plugin's ``database_url``, on the
server tests/conftest.py finds), so the kit's tests see empty tables and fresh ids.
"""

from __future__ import annotations

from collections.abc import Iterator

import asyncpg
import pytest

from workqueue.adapters.postgres import PostgresActivityLog, PostgresWorkMonitor
from workqueue.adapters.testing.contract import WorkQueueContractSuite, store_state_machine
from workqueue.adapters.testing.contract.activity import ActivityContract, ActivityFixtures
from workqueue.adapters.testing.contract.bulk import BulkScopeContract
from workqueue.adapters.testing.contract.lookup import LookupContract
from workqueue.adapters.testing.contract.monitoring import MonitoringContract, MonitoringFixtures
from workqueue.adapters.testing.postgres import PostgresContractFixtures, PostgresSubjects
from workqueue.domain import ActivityLog, WorkMonitor


class PostgresFixtures(PostgresContractFixtures):
    """Every adapter on one fresh database and one FakeClock per test (the kit's fixtures)."""


class TestPostgresAdapter(WorkQueueContractSuite, PostgresFixtures):
    pass


_subjects = PostgresSubjects()


class TestPostgresStoreAgainstTheModel(
    store_state_machine(_subjects.open, _subjects.close).TestCase  # type: ignore[name-defined,misc]
):
    @pytest.fixture(autouse=True)
    def _database(self, database_url: str) -> Iterator[None]:
        _subjects.database_url = database_url
        yield
        _subjects.database_url = None


class PostgresMonitorFixtures(PostgresFixtures, MonitoringFixtures):
    @pytest.fixture
    def monitor(self, migrated_pool: asyncpg.Pool) -> WorkMonitor:
        return PostgresWorkMonitor(migrated_pool)


class TestPostgresMonitor(MonitoringContract, PostgresMonitorFixtures):
    pass


class TestPostgresLookup(LookupContract, PostgresMonitorFixtures):
    pass


class TestPostgresBulkScope(BulkScopeContract, PostgresMonitorFixtures):
    pass


class PostgresActivityFixtures(PostgresFixtures, ActivityFixtures):
    @pytest.fixture
    def activity_log(self, migrated_pool: asyncpg.Pool) -> ActivityLog:
        return PostgresActivityLog(migrated_pool)


class TestPostgresActivity(ActivityContract, PostgresActivityFixtures):
    pass
