"""The two maintenance handlers on the in-memory adapters and a FakeClock: what they delete,
in batches, resuming counts, and the settings they accept."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from pydantic import JsonValue

from workqueue.adapters.memory import (
    InMemoryRefreshTokenStore,
    InMemoryState,
    InMemoryWorkQueue,
    InMemoryWorkStore,
    StoredRefreshToken,
)
from workqueue.adapters.testing import FakeClock
from workqueue.application.context import ExecutionContext
from workqueue.domain import RunOutcome, TokenCleanup, WorkItemRetention, WorkPayload, WorkStatus
from workqueue.entrypoints.worker.handlers import TokenCleanupHandler, WorkItemRetentionHandler

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
        await store.finish(item.lease, RunOutcome.succeeded(None))
    else:
        await store.finish(item.lease, RunOutcome.failed("boom", None))
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


class CountingDeletes:
    """A token store and a work store in one: each delete deletes the next scripted count.

    It records the limit it was given and the progress the handler had reported by then.
    """

    def __init__(self, ctx: ExecutionContext, *batches: int) -> None:
        self.ctx = ctx
        self.batches = list(batches)
        self.calls: list[tuple[datetime, int, JsonValue]] = []

    def _next(self, cutoff: datetime, limit: int) -> int:
        self.calls.append((cutoff, limit, self.ctx.progress))
        return self.batches.pop(0)

    async def delete_expired_and_revoked(self, *, now: datetime, limit: int) -> int:
        return self._next(now, limit)

    async def purge_finished(self, *, finished_before: datetime, limit: int) -> int:
        return self._next(finished_before, limit)


def second_attempt(kind: str, progress: JsonValue = None) -> ExecutionContext:
    return ExecutionContext(item_id=1, attempt=2, kind=kind, progress=progress)


class TestTokenCleanupInBatches:
    async def test_it_deletes_a_thousand_at_a_time_reporting_the_count_before_each_batch(
        self,
    ) -> None:
        clock = FakeClock()
        ctx = second_attempt("token_cleanup", {"deleted": 5})
        tokens = CountingDeletes(ctx, 1000, 3)

        await TokenCleanupHandler(tokens, clock).handle(TokenCleanup(), ctx)  # type: ignore[arg-type]

        now = clock.now()
        assert tokens.calls == [(now, 1000, {"deleted": 5}), (now, 1000, {"deleted": 1005})]
        assert ctx.progress == {"deleted": 1008}

    def test_a_batch_of_one_is_allowed_and_none_is_refused(self) -> None:
        clock = FakeClock()
        TokenCleanupHandler(CountingDeletes(second_attempt("x")), clock, batch_size=1)  # type: ignore[arg-type]

        with pytest.raises(ValueError) as refused:
            TokenCleanupHandler(CountingDeletes(second_attempt("x")), clock, batch_size=0)  # type: ignore[arg-type]

        assert str(refused.value) == "batch_size must be at least 1"


class TestRetentionInBatches:
    async def test_it_purges_a_thousand_at_a_time_reporting_the_count_before_each_batch(
        self,
    ) -> None:
        clock = FakeClock()
        ctx = second_attempt("work_item_retention")
        store = CountingDeletes(ctx, 1000, 0)
        handler = WorkItemRetentionHandler(store, clock, timedelta(days=30))  # type: ignore[arg-type]

        await handler.handle(WorkItemRetention(), ctx)

        cutoff = clock.now() - timedelta(days=30)
        assert store.calls == [(cutoff, 1000, {"deleted": 0}), (cutoff, 1000, {"deleted": 1000})]
        assert ctx.progress == {"deleted": 1000}

    def test_the_smallest_settings_are_accepted(self) -> None:
        store = CountingDeletes(second_attempt("x"))
        for retention in (timedelta(0), timedelta(hours=1)):
            WorkItemRetentionHandler(store, FakeClock(), retention, batch_size=1)  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        ("retention", "batch_size", "message"),
        [
            (timedelta(seconds=-1), 10, "retention must not be negative"),
            (timedelta(days=1), 0, "batch_size must be at least 1"),
        ],
    )
    def test_impossible_settings_are_refused_saying_which(
        self, retention: timedelta, batch_size: int, message: str
    ) -> None:
        with pytest.raises(ValueError) as refused:
            WorkItemRetentionHandler(
                CountingDeletes(second_attempt("x")),  # type: ignore[arg-type]
                FakeClock(),
                retention,
                batch_size=batch_size,
            )

        assert str(refused.value) == message

    @pytest.mark.parametrize(
        ("days", "kept"),
        [(0, timedelta(0)), (0.5, timedelta(hours=12)), (None, timedelta(days=30))],
    )
    def test_a_payload_may_keep_less_even_nothing(
        self, days: float | None, kept: timedelta
    ) -> None:
        handler = WorkItemRetentionHandler(
            CountingDeletes(second_attempt("x")),  # type: ignore[arg-type]
            FakeClock(),
            timedelta(days=30),
        )

        assert handler.retention_for(WorkItemRetention(retention_days=days)) == kept


@pytest.mark.parametrize(
    ("progress", "resumed"),
    [
        ({"deleted": 0}, 0),
        ({"deleted": 1}, 1),
        ({"deleted": -4}, 0),
        ({"deleted": True}, 0),
        ({"deleted": 2.5}, 0),
        ({"deleted": "7"}, 0),
        ([7], 0),
        (None, 0),
    ],
)
async def test_only_a_count_an_earlier_attempt_reported_is_resumed(
    progress: JsonValue, resumed: int
) -> None:
    ctx = second_attempt("token_cleanup", progress)
    tokens = CountingDeletes(ctx, 0)

    await TokenCleanupHandler(tokens, FakeClock()).handle(TokenCleanup(), ctx)  # type: ignore[arg-type]

    assert ctx.progress == {"deleted": resumed}
