"""The statements that create work items, for the two WorkQueues alone.

The WorkQueue is the only insert path (DESIGN.md). The statements live in
``sql/queue.sql``; this module is the one place that loads that file, and it is
imported only by :mod:`workqueue.adapters.postgres.queue` (asyncpg) and
:mod:`workqueue.adapters.psycopg.queue` (psycopg): the import-linter contract
``only-the-queue-loads-the-insert`` reports any other importer, and
tests/architecture scans src/ for an INSERT anywhere else and for any other
module naming ``queue.sql``.

Both queues look statements up by name, as the store does in ``store.sql``::

    STATEMENTS["enqueue_one"]

The names, the parameters each takes and what is made of their rows are in
:mod:`workqueue.adapters.postgres.enqueue_plan`, shared by both queues.
"""

from __future__ import annotations

from workqueue.adapters.postgres.sql import StatementFile, load_statements

__all__ = ["STATEMENTS"]

STATEMENTS: StatementFile = load_statements("queue.sql")
"""The named statements of ``sql/queue.sql``."""
