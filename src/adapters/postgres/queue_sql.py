"""The statement that creates work items, for :class:`PostgresWorkQueue` alone.

The WorkQueue is the only insert path (DESIGN.md). The statement lives in
``sql/queue.sql``, which no other module loads, and this module is imported
only by ``adapters.postgres.queue``: the import-linter contract
``only-the-queue-loads-the-insert`` reports any other importer, and
tests/architecture scans src/ for an INSERT anywhere else.
"""

from __future__ import annotations

from adapters.postgres.sql import load_statements

__all__ = ["ENQUEUE"]

ENQUEUE = load_statements("queue.sql")["enqueue"]
"""Enqueue a batch in one round trip; see the comments in ``sql/queue.sql``."""
