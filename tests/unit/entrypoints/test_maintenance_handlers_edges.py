"""The maintenance handlers at their edges: the smallest settings, resumed counts, each batch."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from pydantic import JsonValue

from adapters.testing import FakeClock
from application.context import ExecutionContext
from domain import TokenCleanup, WorkItemRetention
from entrypoints.worker.handlers import TokenCleanupHandler, WorkItemRetentionHandler


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


def context(kind: str, progress: JsonValue = None) -> ExecutionContext:
    return ExecutionContext(item_id=1, attempt=2, kind=kind, progress=progress)


class TestTokenCleanup:
    async def test_it_deletes_a_thousand_at_a_time_reporting_the_count_before_each_batch(
        self,
    ) -> None:
        clock = FakeClock()
        ctx = context("token_cleanup", {"deleted": 5})
        tokens = CountingDeletes(ctx, 1000, 3)

        await TokenCleanupHandler(tokens, clock).handle(TokenCleanup(), ctx)  # type: ignore[arg-type]

        now = clock.now()
        assert tokens.calls == [(now, 1000, {"deleted": 5}), (now, 1000, {"deleted": 1005})]
        assert ctx.progress == {"deleted": 1008}

    def test_a_batch_of_one_is_allowed_and_none_is_refused(self) -> None:
        clock = FakeClock()
        TokenCleanupHandler(CountingDeletes(context("x")), clock, batch_size=1)  # type: ignore[arg-type]

        with pytest.raises(ValueError) as refused:
            TokenCleanupHandler(CountingDeletes(context("x")), clock, batch_size=0)  # type: ignore[arg-type]

        assert str(refused.value) == "batch_size must be at least 1"


class TestRetention:
    async def test_it_purges_a_thousand_at_a_time_reporting_the_count_before_each_batch(
        self,
    ) -> None:
        clock = FakeClock()
        ctx = context("work_item_retention")
        store = CountingDeletes(ctx, 1000, 0)
        handler = WorkItemRetentionHandler(store, clock, timedelta(days=30))  # type: ignore[arg-type]

        await handler.handle(WorkItemRetention(), ctx)

        cutoff = clock.now() - timedelta(days=30)
        assert store.calls == [(cutoff, 1000, {"deleted": 0}), (cutoff, 1000, {"deleted": 1000})]
        assert ctx.progress == {"deleted": 1000}

    def test_the_smallest_settings_are_accepted(self) -> None:
        store = CountingDeletes(context("x"))
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
                CountingDeletes(context("x")),  # type: ignore[arg-type]
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
            CountingDeletes(context("x")),  # type: ignore[arg-type]
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
    ctx = context("token_cleanup", progress)
    tokens = CountingDeletes(ctx, 0)

    await TokenCleanupHandler(tokens, FakeClock()).handle(TokenCleanup(), ctx)  # type: ignore[arg-type]

    assert ctx.progress == {"deleted": resumed}
