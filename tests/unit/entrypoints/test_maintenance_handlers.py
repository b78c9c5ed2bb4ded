"""The two maintenance handlers, on the in-memory adapters and a FakeClock."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import JsonValue

from adapters.memory import (
    InMemoryRefreshTokenStore,
    InMemoryState,
    InMemoryWorkQueue,
    InMemoryWorkStore,
    StoredRefreshToken,
)
from adapters.testing import FakeClock
from application.context import ExecutionContext
from domain import TokenCleanup, WorkItemRetention, WorkPayload, WorkStatus
from entrypoints.worker.handlers import TokenCleanupHandler, WorkItemRetentionHandler

LEASE = timedelta(seconds=60)


def context(kind: str, progress: JsonValue = None) -> ExecutionContext:
    return ExecutionContext(item_id=1, attempt=1, kind=kind, progress=progress)


def add_token(
    state: InMemoryState,
    clock: FakeClock,
    *,
    expires_in: timedelta,
    revoked: bool = False,
) -> int:
    token_id = state.next_token_id()
    state.refresh_tokens[token_id] = StoredRefreshToken(
        id=token_id,
        user_id=7,
        token_hash=f"hash-{token_id}",
        created_at=clock.now(),
        expires_at=clock.now() + expires_in,
        revoked_at=clock.now() if revoked else None,
    )
    return token_id


async def finish(
    queue: InMemoryWorkQueue, store: InMemoryWorkStore, payload: WorkPayload, *, succeed: bool
) -> int:
    result = await queue.enqueue(payload)
    item = await store.claim([payload.kind_name()], worker_id="w", lease_duration=LEASE)
    assert item is not None
    assert item.id == result.id
    if succeed:
        await store.complete(item.lease, progress=None)
    else:
        await store.fail(item.lease, error="boom", progress=None)
    return result.id


class TestTokenCleanup:
    async def test_it_deletes_expired_and_revoked_tokens_and_keeps_live_ones(self) -> None:
        state, clock = InMemoryState(), FakeClock()
        expired = [add_token(state, clock, expires_in=timedelta(hours=-1)) for _ in range(3)]
        revoked = [add_token(state, clock, expires_in=timedelta(days=1), revoked=True)]
        live = [add_token(state, clock, expires_in=timedelta(days=1)) for _ in range(2)]
        handler = TokenCleanupHandler(InMemoryRefreshTokenStore(state), clock, batch_size=2)
        ctx = context("token_cleanup")

        await handler.handle(TokenCleanup(), ctx)

        assert sorted(state.refresh_tokens) == live
        assert not set(expired + revoked) & set(state.refresh_tokens)
        assert ctx.progress == {"deleted": 4}

    async def test_a_second_run_converges_and_deletes_nothing(self) -> None:
        state, clock = InMemoryState(), FakeClock()
        for _ in range(5):
            add_token(state, clock, expires_in=timedelta(seconds=-1))
        add_token(state, clock, expires_in=timedelta(days=1))
        handler = TokenCleanupHandler(InMemoryRefreshTokenStore(state), clock, batch_size=2)
        await handler.handle(TokenCleanup(), context("token_cleanup"))
        remaining = dict(state.refresh_tokens)

        second = context("token_cleanup")
        await handler.handle(TokenCleanup(), second)

        assert state.refresh_tokens == remaining
        assert len(remaining) == 1
        assert second.progress == {"deleted": 0}

    async def test_a_token_expiring_exactly_now_is_kept_for_the_next_run(self) -> None:
        state, clock = InMemoryState(), FakeClock()
        token = add_token(state, clock, expires_in=timedelta(0))
        handler = TokenCleanupHandler(InMemoryRefreshTokenStore(state), clock)

        await handler.handle(TokenCleanup(), context("token_cleanup"))

        assert token in state.refresh_tokens

    async def test_a_reclaimed_item_counts_on_from_what_its_earlier_attempt_reported(self) -> None:
        state, clock = InMemoryState(), FakeClock()
        add_token(state, clock, expires_in=timedelta(hours=-1))
        handler = TokenCleanupHandler(InMemoryRefreshTokenStore(state), clock)
        ctx = context("token_cleanup", progress={"deleted": 40})

        await handler.handle(TokenCleanup(), ctx)

        assert ctx.progress == {"deleted": 41}

    def test_a_batch_size_below_one_is_refused(self) -> None:
        with pytest.raises(ValueError, match="batch_size"):
            TokenCleanupHandler(
                InMemoryRefreshTokenStore(InMemoryState()), FakeClock(), batch_size=0
            )


class TestWorkItemRetention:
    async def test_it_deletes_finished_items_older_than_the_retention_period(self) -> None:
        state, clock = InMemoryState(), FakeClock()
        queue, store = InMemoryWorkQueue(state, clock), InMemoryWorkStore(state, clock)
        old = [
            await finish(queue, store, TokenCleanup(), succeed=True),
            await finish(queue, store, TokenCleanup(), succeed=False),
            await finish(queue, store, TokenCleanup(), succeed=True),
        ]
        await clock.advance(timedelta(days=20).total_seconds())
        recent = await finish(queue, store, TokenCleanup(), succeed=True)
        queued = (await queue.enqueue(TokenCleanup())).id
        await clock.advance(timedelta(days=15).total_seconds())
        handler = WorkItemRetentionHandler(store, clock, timedelta(days=30), batch_size=2)
        ctx = context("work_item_retention")

        await handler.handle(WorkItemRetention(), ctx)

        assert sorted(state.items) == [recent, queued]
        assert not set(old) & set(state.items)
        assert ctx.progress == {"deleted": 3}

    async def test_a_second_run_converges_and_deletes_nothing(self) -> None:
        state, clock = InMemoryState(), FakeClock()
        queue, store = InMemoryWorkQueue(state, clock), InMemoryWorkStore(state, clock)
        for _ in range(5):
            await finish(queue, store, TokenCleanup(), succeed=True)
        await clock.advance(timedelta(days=2).total_seconds())
        kept = await finish(queue, store, TokenCleanup(), succeed=True)
        handler = WorkItemRetentionHandler(store, clock, timedelta(days=1), batch_size=2)
        await handler.handle(WorkItemRetention(), context("work_item_retention"))
        remaining = state.snapshot()

        second = context("work_item_retention")
        await handler.handle(WorkItemRetention(), second)

        assert state.snapshot() == remaining
        assert [item.id for item in remaining] == [kept]
        assert second.progress == {"deleted": 0}

    async def test_queued_and_running_items_are_never_touched(self) -> None:
        state, clock = InMemoryState(), FakeClock()
        queue, store = InMemoryWorkQueue(state, clock), InMemoryWorkStore(state, clock)
        running = (await queue.enqueue(TokenCleanup())).id
        await store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
        queued = (await queue.enqueue(TokenCleanup())).id
        await clock.advance(timedelta(days=365).total_seconds())
        handler = WorkItemRetentionHandler(store, clock, timedelta(days=1))

        await handler.handle(WorkItemRetention(), context("work_item_retention"))

        statuses = {item.id: item.status for item in state.snapshot()}
        assert statuses == {running: WorkStatus.RUNNING, queued: WorkStatus.QUEUED}

    async def test_the_payload_retention_days_overrides_the_configured_period(self) -> None:
        state, clock = InMemoryState(), FakeClock()
        queue, store = InMemoryWorkQueue(state, clock), InMemoryWorkStore(state, clock)
        three_days_old = await finish(queue, store, TokenCleanup(), succeed=True)
        await clock.advance(timedelta(days=2).total_seconds())
        one_day_old = await finish(queue, store, TokenCleanup(), succeed=True)
        await clock.advance(timedelta(days=1).total_seconds())
        handler = WorkItemRetentionHandler(store, clock, timedelta(days=30))

        await handler.handle(WorkItemRetention(retention_days=2), context("work_item_retention"))

        assert three_days_old not in state.items
        assert one_day_old in state.items

    async def test_a_negative_retention_days_fails_the_run_and_deletes_nothing(self) -> None:
        state, clock = InMemoryState(), FakeClock()
        queue, store = InMemoryWorkQueue(state, clock), InMemoryWorkStore(state, clock)
        item = await finish(queue, store, TokenCleanup(), succeed=True)
        handler = WorkItemRetentionHandler(store, clock, timedelta(days=30))

        with pytest.raises(ValueError, match="retention_days must not be negative"):
            await handler.handle(
                WorkItemRetention(retention_days=-1), context("work_item_retention")
            )

        assert item in state.items
