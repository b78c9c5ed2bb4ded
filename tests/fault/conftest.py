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
def lanes(request: pytest.FixtureRequest) -> int:
    """Executors per worker process (``WORKQUEUE_CONCURRENCY``): 1 unless a test parametrizes it.

    ``@pytest.mark.parametrize("lanes", LANES, indirect=True)`` runs a test with one
    executor per process and with several: the semantics hold per item, whatever
    shares its process.
    """
    lanes: int = getattr(request, "param", 1)
    return lanes


@pytest.fixture
def fleet(fault_database: str, tmp_path: Path, lanes: int) -> Iterator[Fleet]:
    """Workers of ``lanes`` executors on ``fault_database``; any still running is killed."""
    workers = Fleet(fault_database, tmp_path, WORKQUEUE_CONCURRENCY=str(lanes))
    try:
        yield workers
    finally:
        workers.close()
