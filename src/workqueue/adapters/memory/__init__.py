"""The in-memory adapter: honest fakes of the ports, kept equal to PostgreSQL by the contract kit.

Build every fake on one :class:`InMemoryState` (and one clock) so they share rows,
as the PostgreSQL adapters share a database.
"""

from __future__ import annotations

from workqueue.adapters.memory.activity import InMemoryActivityLog
from workqueue.adapters.memory.monitor import InMemoryWorkMonitor
from workqueue.adapters.memory.notifications import InMemoryWorkNotifications
from workqueue.adapters.memory.queue import InMemoryWorkQueue
from workqueue.adapters.memory.state import InMemoryState, StoredRefreshToken
from workqueue.adapters.memory.store import InMemoryWorkStore
from workqueue.adapters.memory.tokens import InMemoryRefreshTokenStore

__all__ = [
    "InMemoryActivityLog",
    "InMemoryRefreshTokenStore",
    "InMemoryState",
    "InMemoryWorkMonitor",
    "InMemoryWorkNotifications",
    "InMemoryWorkQueue",
    "InMemoryWorkStore",
    "StoredRefreshToken",
]
