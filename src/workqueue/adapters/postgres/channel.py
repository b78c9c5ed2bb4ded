"""The NOTIFY channel of the queue, named once.

Every enqueue that creates an item notifies this channel in its transaction, the
kind as the payload; :class:`~workqueue.adapters.postgres.PostgresWorkNotifications`
listens on it. The statements of ``sql/queue.sql`` take the name as a parameter,
so both queues (asyncpg and psycopg) and the listener read it from here.
"""

from __future__ import annotations

__all__ = ["CHANNEL"]

CHANNEL = "workqueue"
"""The channel enqueue notifies (see ``sql/queue.sql``); the payload is the kind."""
