"""The in-memory adapter: honest fakes of the ports, kept equal to PostgreSQL by the contract kit.

Build every fake on one :class:`InMemoryState` (and one clock) so they share rows,
as the PostgreSQL adapters share a database.
"""

from __future__ import annotations

from adapters.memory.monitor import InMemoryWorkMonitor
from adapters.memory.notifications import InMemoryWorkNotifications
from adapters.memory.queue import InMemoryWorkQueue
from adapters.memory.state import InMemoryState, StoredRefreshToken
from adapters.memory.store import InMemoryWorkStore, stalled_error, superseded_error
from adapters.memory.tokens import InMemoryRefreshTokenStore

__all__ = [
    "InMemoryRefreshTokenStore",
    "InMemoryState",
    "InMemoryWorkMonitor",
    "InMemoryWorkNotifications",
    "InMemoryWorkQueue",
    "InMemoryWorkStore",
    "StoredRefreshToken",
    "stalled_error",
    "superseded_error",
]
