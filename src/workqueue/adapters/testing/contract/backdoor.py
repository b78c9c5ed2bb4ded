"""The Backdoor protocol: how the kit sets up and reads state without the API under test."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import JsonValue

from workqueue.domain import WorkItem, WorkStatus

__all__ = ["Backdoor", "RowLockingBackdoor"]


class Backdoor(Protocol):
    """Direct access to the rows behind a store, written once per adapter.

    A PostgreSQL back door runs plain SQL on ``work_items`` and ``refresh_tokens``;
    the in-memory one edits the shared state. Neither may go through the queue or
    store under test, so a contract test that arranges state with it, or checks
    state with it, does not depend on the code it is checking.
    """

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
        """Insert a row exactly as given and return its new id (ids keep growing).

        Defaults make a fresh queued item: payload ``{}``, attempt 0, stalls 0,
        ``enqueued_at`` the clock's now when None, priority 0, and ``run_at`` its
        ``enqueued_at`` when None. No field is checked or derived (a store may keep
        columns of its own beside them, derived as its enqueue would).
        """
        ...

    async def read_item(self, item_id: int) -> WorkItem | None:
        """The row with this id, or None."""
        ...

    async def all_items(self) -> list[WorkItem]:
        """Every row, by id."""
        ...

    async def insert_refresh_token(
        self,
        *,
        user_id: int,
        token_hash: str,
        created_at: datetime,
        expires_at: datetime,
        revoked_at: datetime | None = None,
    ) -> int:
        """Insert a refresh token and return its id."""
        ...

    async def refresh_token_hashes(self) -> set[str]:
        """The ``token_hash`` of every refresh token left."""
        ...


@runtime_checkable
class RowLockingBackdoor(Protocol):
    """A back door that can also hold a row lock, for stores whose claims take row locks.

    The kit's PostgreSQL back door is one. With it, the claim contract checks
    deterministically that a claim passes over a row another transaction holds
    locked (``FOR UPDATE SKIP LOCKED``) instead of waiting for it or taking it;
    a back door without ``lock_item`` has that test skipped, with the reason.
    """

    def lock_item(self, item_id: int) -> AbstractAsyncContextManager[None]:
        """Hold a lock on the item's row in a transaction of its own until the block exits.

        It is the lock a claimer holds in the middle of its claim (``SELECT ...
        FOR UPDATE``); the row is not changed, and the transaction rolls back.
        """
        ...
