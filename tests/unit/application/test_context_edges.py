"""The handler context's and the executor settings' edges: the smallest limits, exact sizes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from application import TRUNCATION_MARKER, ExecutionContext, ExecutorSettings, bound_error
from domain import WorkItem, WorkStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def claimed_item() -> WorkItem:
    return WorkItem(
        id=12,
        kind="alpha",
        payload={},
        status=WorkStatus.RUNNING,
        attempt=3,
        stalls=1,
        dedup_key=None,
        enqueued_at=T0,
        started_at=T0,
        heartbeat_at=T0,
        lease_expires_at=T0,
        finished_at=None,
        worker_id="worker-1",
        progress={"rows": 5},
        error=None,
    )


def test_the_context_of_a_claimed_item_is_that_items() -> None:
    ctx = ExecutionContext.for_item(claimed_item(), max_progress_bytes=100)

    assert (ctx.item_id, ctx.attempt, ctx.kind, ctx.progress) == (12, 3, "alpha", {"rows": 5})
    assert repr(ctx) == "ExecutionContext(item_id=12, attempt=3, kind='alpha')"


def test_a_limit_of_one_byte_is_a_limit_and_zero_is_refused() -> None:
    ctx = ExecutionContext(item_id=1, attempt=1, kind="alpha", max_progress_bytes=1)
    ctx.report_progress(7)
    assert ctx.progress == 7
    with pytest.raises(ValueError, match="max_progress_bytes must be positive, not 0"):
        ExecutionContext(item_id=1, attempt=1, kind="alpha", max_progress_bytes=0)


def test_the_size_counted_is_that_of_compact_json() -> None:
    # {"a":[1,2]} is 11 bytes; with spaces after separators it would be 14.
    ctx = ExecutionContext(item_id=1, attempt=1, kind="alpha", max_progress_bytes=11)

    ctx.report_progress({"a": [1, 2]})

    assert ctx.progress == {"a": [1, 2]}


def test_a_nul_character_in_a_snapshot_is_refused_saying_why() -> None:
    ctx = ExecutionContext(item_id=1, attempt=1, kind="alpha")

    with pytest.raises(ValueError) as refused:
        ctx.report_progress({"name": "a\x00b"})

    assert str(refused.value) == (
        "progress snapshot contains a NUL character, which the store cannot hold"
    )


def test_executor_settings_accept_a_one_byte_progress_limit() -> None:
    assert ExecutorSettings(max_progress_bytes=1).max_progress_bytes == 1


def test_an_error_exactly_at_the_limit_is_kept_whole() -> None:
    assert bound_error("x" * 20, 20) == "x" * 20


def test_a_limit_no_longer_than_the_marker_cuts_without_the_marker() -> None:
    limit = len(TRUNCATION_MARKER)

    assert bound_error("x" * 40, limit) == "x" * limit
    assert bound_error("x" * 40, limit + 1) == "x" + TRUNCATION_MARKER
