"""Fixtures of the fault tests: a database with side tables, and a fleet of workers.

The PostgreSQL fixtures (``database_url``) come from the contract kit's plugin,
which tests/conftest.py loads; the database-restart test brings a server of its
own (restartable_postgres.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fault_database import install_side_tables
from fault_figures import FaultSize, fault_size
from fault_fleet import Fleet


@pytest.fixture
def size() -> FaultSize:
    return fault_size()


@pytest.fixture
async def fault_database(database_url: str) -> str:
    """A fresh migrated database with the fault side tables and the write audit."""
    await install_side_tables(database_url)
    return database_url


@pytest.fixture
def fleet(fault_database: str, tmp_path: Path) -> Iterator[Fleet]:
    """Workers on ``fault_database``; whichever still runs after the test is killed."""
    workers = Fleet(fault_database, tmp_path)
    try:
        yield workers
    finally:
        workers.close()
