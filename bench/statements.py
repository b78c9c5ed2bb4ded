"""The benchmark's named SQL, read from ``bench/sql/bench.sql`` like the adapter reads its own."""

from __future__ import annotations

from pathlib import Path

from workqueue.adapters.postgres.sql import StatementFile, parse_statements

__all__ = ["BENCH_SQL"]

_FILE = Path(__file__).with_name("sql") / "bench.sql"

BENCH_SQL: StatementFile = parse_statements(_FILE.name, _FILE.read_text(encoding="utf-8"))
"""Setup and measurement statements: seeding, counting, VACUUM, statistics."""
