"""InMemoryState: the in-memory stand-in for the database that the fakes share.

A queue, a store, a token store and notifications built on one state see each
other's writes, as adapters on one PostgreSQL database do. The state is plain
Python, with no event loop of its own, so a single one can serve tests that run
on different loops.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass, replace
from datetime import datetime

from workqueue.domain import CapSource, KindPause, StoreUnavailableError, WorkItem

__all__ = ["InMemoryState", "StoredCap", "StoredRefreshToken"]


@dataclass(frozen=True, slots=True)
class StoredRefreshToken:
    """One row of ``refresh_tokens``."""

    id: int
    user_id: int
    token_hash: str
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class StoredCap:
    """One capped kind's cap: how many may run, who set it and when."""

    max_running: int
    source: CapSource
    set_at: datetime


def _detached(item: WorkItem) -> WorkItem:
    # WorkItem is frozen, but its payload and progress are mutable JSON; copying
    # them keeps callers from editing stored rows through a returned item.
    return replace(item, payload=deepcopy(item.payload), progress=deepcopy(item.progress))


class InMemoryState:
    """The rows of ``work_items`` and ``refresh_tokens``, and their id sequences.

    Fields are public so a test's back door can set up and read state without the
    API under test; the adapters go through the methods.

    - ``items``: work items by id, in id order (ids only grow, like an identity column).
    - ``refresh_tokens``: refresh tokens by id.
    - ``fires``: ``work_schedules``: the newest fire time each cron kind had its turn
      at, by kind.
    - ``pauses``: ``work_kind_pauses``: the paused kinds, by kind.
    - ``caps``: the capped kinds, by kind (docs/adr/0035), and ``slots``:
      ``work_kind_slots``: each capped kind's slots, in slot order, each the id of
      the running item that holds it or None when free.
    - ``activity``: ``work_activity``: the items ended, by minute and kind, as
      (succeeded, failed, retried); ``depth``: ``work_depth``: each sampled minute's
      (queued, delayed, running) by kind, ``""`` holding the totals (docs/adr/0040).
    - ``unavailable``: while True, every adapter call on this state raises
      :class:`~workqueue.domain.StoreUnavailableError` before touching anything, as if the
      database were down. Tests of the callers' retry paths set it.
    """

    def __init__(self) -> None:
        self.items: dict[int, WorkItem] = {}
        self.refresh_tokens: dict[int, StoredRefreshToken] = {}
        self.fires: dict[str, datetime] = {}
        self.pauses: dict[str, KindPause] = {}
        self.caps: dict[str, StoredCap] = {}
        self.slots: dict[str, list[int | None]] = {}
        self.activity: dict[tuple[datetime, str], tuple[int, int, int]] = {}
        self.depth: dict[datetime, dict[str, tuple[int, int, int]]] = {}
        self.unavailable = False
        self._item_ids = itertools.count(1)
        self._token_ids = itertools.count(1)
        self._enqueue_listeners: list[Callable[[str], None]] = []

    def check_available(self) -> None:
        """Fail like a lost connection while :attr:`unavailable` is set.

        :raises StoreUnavailableError: if :attr:`unavailable` is True.
        """
        if self.unavailable:
            raise StoreUnavailableError("the in-memory store is marked unavailable")

    def next_item_id(self) -> int:
        """The next work item id; never handed out twice."""
        return next(self._item_ids)

    def next_token_id(self) -> int:
        """The next refresh token id; never handed out twice."""
        return next(self._token_ids)

    def read(self, item_id: int) -> WorkItem | None:
        """A detached copy of the item with this id, or None."""
        item = self.items.get(item_id)
        return None if item is None else _detached(item)

    def write(self, item: WorkItem) -> WorkItem:
        """Store a detached copy of ``item`` under its id; return another copy for the caller."""
        self.items[item.id] = _detached(item)
        return _detached(item)

    def snapshot(self) -> list[WorkItem]:
        """Detached copies of every work item, by id."""
        return [_detached(item) for item in self.items.values()]

    def subscribe_to_enqueues(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(kind)`` whenever a queue on this state creates an item."""
        self._enqueue_listeners.append(listener)

    def unsubscribe_from_enqueues(self, listener: Callable[[str], None]) -> None:
        """Stop calling ``listener``; a listener that is not subscribed is ignored."""
        if listener in self._enqueue_listeners:
            self._enqueue_listeners.remove(listener)

    def announce_enqueued(self, kind: str) -> None:
        """Tell every enqueue listener that an item of ``kind`` was created."""
        for listener in list(self._enqueue_listeners):
            listener(kind)
