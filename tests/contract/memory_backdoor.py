"""The in-memory back door: the contract kit's Backdoor over an InMemoryState."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import JsonValue

from adapters.memory import InMemoryState, StoredRefreshToken
from adapters.testing import FakeClock
from domain import WorkItem, WorkStatus, kind_name

__all__ = ["MemoryBackdoor"]


class MemoryBackdoor:
    """Writes and reads the shared state's rows directly, bypassing queue and store."""

    def __init__(self, state: InMemoryState, clock: FakeClock) -> None:
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
        started_at: datetime | None = None,
        heartbeat_at: datetime | None = None,
        lease_expires_at: datetime | None = None,
        finished_at: datetime | None = None,
        worker_id: str | None = None,
        progress: JsonValue = None,
        error: str | None = None,
    ) -> int:
        item = WorkItem(
            id=self._state.next_item_id(),
            kind=kind_name(kind),
            payload={} if payload is None else payload,
            status=WorkStatus(status),
            attempt=attempt,
            stalls=stalls,
            dedup_key=dedup_key,
            enqueued_at=self._clock.now() if enqueued_at is None else enqueued_at,
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
