"""The lookup by dedup key of the contract kit, run against the PostgreSQL monitor.

Each test gets a database of its own (the kit plugin's ``database_url``), as in
test_postgres_contract.py.
"""

from __future__ import annotations

import asyncpg
import pytest

from workqueue.adapters.postgres import PostgresWorkMonitor
from workqueue.adapters.testing.contract.lookup import LookupContract
from workqueue.adapters.testing.contract.monitoring import MonitoringFixtures
from workqueue.adapters.testing.postgres import PostgresContractFixtures
from workqueue.domain import WorkMonitor


class PostgresMonitorFixtures(PostgresContractFixtures, MonitoringFixtures):
    """The kit's PostgreSQL fixtures, and the monitor on their pool."""

    @pytest.fixture
    def monitor(self, migrated_pool: asyncpg.Pool) -> WorkMonitor:
        return PostgresWorkMonitor(migrated_pool)


class TestPostgresLookup(LookupContract, PostgresMonitorFixtures):
    pass
