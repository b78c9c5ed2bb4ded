"""The kit for stores on an :class:`~workqueue.adapters.memory.InMemoryState`: back door and
fixtures.

A store that keeps its rows in an ``InMemoryState`` (ours, a subclass of it, or
a wrapper around it) runs the whole kit with::

    class TestMyStore(WorkQueueContractSuite, MemoryContractFixtures):
        def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
            return MyStore(InMemoryWorkStore(state, clock))
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from pydantic import JsonValue

from workqueue.adapters.memory import (
    InMemoryRefreshTokenStore,
    InMemoryState,
    InMemoryWorkQueue,
    InMemoryWorkStore,
    StoredRefreshToken,
)
from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.fixtures import (
    ContractFixtures,
    QueueFactory,
    StoreFactory,
)
from workqueue.adapters.testing.contract.state_machine import StoreSubject
from workqueue.domain import (
    Clock,
    RefreshTokenStore,
    WorkItem,
    WorkQueue,
    WorkStatus,
    WorkStore,
    kind_name,
)

__all__ = ["MemoryBackdoor", "MemoryContractFixtures", "open_memory_subject"]


class MemoryBackdoor:
    """Writes and reads the shared state's rows directly, bypassing queue and store."""

    def __init__(self, state: InMemoryState, clock: Clock) -> None:
        self._state = state
        self._clock = clock

    async def insert_item(
        self,
        *,
        kind: str,
        payload: dict[str, Any] | None = None,
        status: WorkStatus = WorkStatus.QUEUED,
        attempt: int = 0,
        stalls: int = 0,
        dedup_key: str | None = None,
        enqueued_at: datetime | None = None,
        priority: int = 0,
        run_at: datetime | None = None,
        started_at: datetime | None = None,
        heartbeat_at: datetime | None = None,
        lease_expires_at: datetime | None = None,
        finished_at: datetime | None = None,
        worker_id: str | None = None,
        progress: JsonValue = None,
        error: str | None = None,
    ) -> int:
        enqueued = self._clock.now() if enqueued_at is None else enqueued_at
        item = WorkItem(
            id=self._state.next_item_id(),
            kind=kind_name(kind),
            payload={} if payload is None else payload,
            status=WorkStatus(status),
            attempt=attempt,
            stalls=stalls,
            dedup_key=dedup_key,
            enqueued_at=enqueued,
            priority=priority,
            run_at=enqueued if run_at is None else run_at,
            started_at=started_at,
            heartbeat_at=heartbeat_at,
            lease_expires_at=lease_expires_at,
            finished_at=finished_at,
            worker_id=worker_id,
            progress=progress,
            error=error,
        )
        return self._state.write(item).id

    async def read_item(self, item_id: int) -> WorkItem | None:
        return self._state.read(item_id)

    async def all_items(self) -> list[WorkItem]:
        return self._state.snapshot()

    async def insert_refresh_token(
        self,
        *,
        user_id: int,
        token_hash: str,
        created_at: datetime,
        expires_at: datetime,
        revoked_at: datetime | None = None,
    ) -> int:
        if token_hash in await self.refresh_token_hashes():
            raise ValueError(f"refresh token hash {token_hash!r} exists (token_hash is unique)")
        token = StoredRefreshToken(
            id=self._state.next_token_id(),
            user_id=user_id,
            token_hash=token_hash,
            created_at=created_at,
            expires_at=expires_at,
            revoked_at=revoked_at,
        )
        self._state.refresh_tokens[token.id] = token
        return token.id

    async def refresh_token_hashes(self) -> set[str]:
        return {token.token_hash for token in self._state.refresh_tokens.values()}


class MemoryContractFixtures(ContractFixtures):
    """Every fixture of the kit on one fresh :class:`InMemoryState` and one FakeClock per test.

    Override :meth:`make_store` (and :meth:`make_queue`) to put a store of your
    own under the kit; every store and queue the kit asks for is made by them.
    """

    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        """The store under test on ``state``; ours unless overridden."""
        return InMemoryWorkStore(state, clock)

    def make_queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        """The queue under test on ``state``; ours unless overridden."""
        return InMemoryWorkQueue(state, clock)

    @pytest.fixture
    def state(self) -> InMemoryState:
        """The rows every store, queue and the back door of one test share."""
        return InMemoryState()

    @pytest.fixture
    def clock(self) -> FakeClock:
        return FakeClock()

    @pytest.fixture
    def queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        return self.make_queue(state, clock)

    @pytest.fixture
    def store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return self.make_store(state, clock)

    @pytest.fixture
    def token_store(self, state: InMemoryState) -> RefreshTokenStore:
        return InMemoryRefreshTokenStore(state)

    @pytest.fixture
    def store_factory(self, state: InMemoryState, clock: FakeClock) -> StoreFactory:
        async def another_store() -> WorkStore:
            return self.make_store(state, clock)

        return another_store

    @pytest.fixture
    def queue_factory(self, state: InMemoryState, clock: FakeClock) -> QueueFactory:
        async def another_queue() -> WorkQueue:
            return self.make_queue(state, clock)

        return another_queue

    @pytest.fixture
    def backdoor(self, state: InMemoryState, clock: FakeClock) -> Backdoor:
        return MemoryBackdoor(state, clock)


async def open_memory_subject() -> StoreSubject:
    """A fresh, empty in-memory store for one example of :func:`store_state_machine`."""
    state, clock = InMemoryState(), FakeClock()

    async def read_items() -> list[WorkItem]:
        return state.snapshot()

    return StoreSubject(
        clock=clock,
        queue=InMemoryWorkQueue(state, clock),
        store=InMemoryWorkStore(state, clock),
        read_items=read_items,
    )
