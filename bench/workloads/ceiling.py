"""The ceiling: pgbench doing the least work per item that PostgreSQL must do.

``bench/pgbench_ceiling.sql`` enqueues, claims (``FOR UPDATE SKIP LOCKED``) and
completes one item per pgbench transaction, each statement its own transaction,
on a freshly migrated ``work_items`` (same indexes, same fillfactor) seeded with
finished rows. pgbench runs ``-c C -j C`` (C connections on C threads) in
prepared mode (``-M prepared``), as the adapter's statements are prepared too.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg

from bench.server import BenchServer, checkpoint_and_vacuum, pgbench_binary
from bench.statements import BENCH_SQL

__all__ = ["PGBENCH_SCRIPT", "PgbenchError", "pgbench_tps", "seed_finished"]

PGBENCH_SCRIPT = Path(__file__).parent.parent / "pgbench_ceiling.sql"

_TPS = re.compile(r"^tps = (?P<tps>[0-9.]+) \(without initial connection time\)$", re.MULTILINE)
_FAILED = re.compile(r"^number of failed transactions: (?P<failed>\d+)", re.MULTILINE)


class PgbenchError(RuntimeError):
    """pgbench failed, or its report did not say what the benchmark needs."""


async def seed_finished(dsn: str, rows: int, *, days_ago: float = 60.0) -> None:
    """Insert ``rows`` succeeded items that finished ``days_ago`` days ago (1 ms apart)."""
    connection = await asyncpg.connect(dsn)
    try:
        first = datetime.now(UTC) - timedelta(days=days_ago)
        await connection.execute(BENCH_SQL["seed_finished"], rows, first)
    finally:
        await connection.close()


async def pgbench_tps(
    server: BenchServer, *, clients: int, seconds: int, finished_rows: int, database: str
) -> float:
    """Items per second (pgbench tps) of the ceiling script at ``clients`` connections.

    :raises PgbenchError: if pgbench exits with an error or a transaction failed.
    """
    async with server.fresh_database(database) as dsn:
        await seed_finished(dsn, finished_rows)
        await checkpoint_and_vacuum(dsn)
        process = await asyncio.create_subprocess_exec(
            str(pgbench_binary()),
            "--no-vacuum",
            "--protocol=prepared",
            f"--file={PGBENCH_SCRIPT}",
            f"--client={clients}",
            f"--jobs={clients}",
            f"--time={seconds}",
            dsn,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
    report = out.decode()
    if process.returncode != 0:
        raise PgbenchError(f"pgbench exited with {process.returncode}: {err.decode().strip()}")
    failed = _FAILED.search(report)
    if failed is not None and int(failed["failed"]) > 0:
        raise PgbenchError(f"pgbench reported {failed['failed']} failed transactions")
    tps = _TPS.search(report)
    if tps is None:
        raise PgbenchError(f"pgbench printed no tps line:\n{report}")
    return float(tps["tps"])
