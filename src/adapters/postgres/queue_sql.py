"""The statements that create work items, for :class:`PostgresWorkQueue` alone.

The WorkQueue is the only insert path (DESIGN.md). The statements live in
``sql/queue.sql``, which no other module loads, and this module is imported
only by ``adapters.postgres.queue``: the import-linter contract
``only-the-queue-loads-the-insert`` reports any other importer, and
tests/architecture scans src/ for an INSERT anywhere else.
"""

from __future__ import annotations

from adapters.postgres.sql import load_statements

__all__ = [
    "ENQUEUE",
    "ENQUEUE_IF_DUE",
    "ENQUEUE_ONE",
    "ENQUEUE_ONE_WITHOUT_KEY",
    "ENQUEUE_WITHOUT_KEYS",
    "LOCK_PERIODIC_KIND",
]

_STATEMENTS = load_statements("queue.sql")

ENQUEUE = _STATEMENTS["enqueue"]
"""Enqueue a batch in one round trip; see the comments in ``sql/queue.sql``."""

ENQUEUE_WITHOUT_KEYS = _STATEMENTS["enqueue_without_keys"]
"""Enqueue a batch none of whose requests has a dedup key: nothing to absorb."""

ENQUEUE_ONE = _STATEMENTS["enqueue_one"]
"""Enqueue one request: the batch statement's work without its batch machinery."""

ENQUEUE_ONE_WITHOUT_KEY = _STATEMENTS["enqueue_one_without_key"]
"""Enqueue one request without a dedup key: a plain insert and its notification."""

LOCK_PERIODIC_KIND = _STATEMENTS["lock_periodic_kind"]
"""Serialize the schedulers of one periodic kind until the transaction ends."""

ENQUEUE_IF_DUE = _STATEMENTS["enqueue_if_due"]
"""Insert a periodic kind's item if due; a statement of its own after LOCK_PERIODIC_KIND."""
