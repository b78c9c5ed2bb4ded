"""The context a handler is given: who its item is, and the progress it may report."""

from __future__ import annotations

import math
from typing import Any

import pytest

from application import ExecutionContext


def context(*, progress: Any = None, limit: int = 1000) -> ExecutionContext:
    return ExecutionContext(
        item_id=7, attempt=2, kind="alpha", progress=progress, max_progress_bytes=limit
    )


def test_a_context_starts_from_the_progress_an_earlier_attempt_left() -> None:
    ctx = context(progress={"rows": 10})

    assert (ctx.item_id, ctx.attempt, ctx.kind, ctx.progress) == (7, 2, "alpha", {"rows": 10})


def test_a_reported_snapshot_is_kept_as_the_store_will_read_it_back() -> None:
    snapshot: dict[Any, Any] = {"rows": [1, 2], 3: "three"}
    ctx = context()

    ctx.report_progress(snapshot)
    snapshot["rows"].append(99)

    assert ctx.progress == {"rows": [1, 2], "3": "three"}


def test_a_snapshot_exactly_at_the_limit_is_accepted_and_one_byte_more_is_not() -> None:
    ctx = context(limit=10)
    at_limit = "é" * 4  # '"' + 8 bytes of UTF-8 + '"'

    ctx.report_progress(at_limit)
    with pytest.raises(
        ValueError, match=r"11 bytes of JSON; the limit \(max_progress_bytes\) is 10"
    ):
        ctx.report_progress(at_limit + "x")

    assert ctx.progress == at_limit


@pytest.mark.parametrize(
    "snapshot",
    [math.nan, {"ratio": math.inf}, {"seen": {1, 2}}, object()],
    ids=["nan", "infinity", "set", "object"],
)
def test_a_snapshot_that_is_not_json_is_refused_and_the_previous_one_stays(snapshot: Any) -> None:
    ctx = context(progress={"kept": True})

    with pytest.raises(ValueError, match="progress snapshot is not JSON"):
        ctx.report_progress(snapshot)

    assert ctx.progress == {"kept": True}


def test_a_snapshot_that_contains_itself_is_refused() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)

    with pytest.raises(ValueError, match="not JSON"):
        context().report_progress(cycle)


def test_a_nul_character_is_refused_because_the_store_cannot_hold_it() -> None:
    with pytest.raises(ValueError, match="NUL"):
        context().report_progress({"name": "a\x00b"})


def test_text_that_merely_spells_an_escaped_nul_is_accepted() -> None:
    ctx = context()

    ctx.report_progress({"name": "\\u0000"})

    assert ctx.progress == {"name": "\\u0000"}


def test_a_context_needs_a_positive_progress_limit() -> None:
    with pytest.raises(ValueError, match="max_progress_bytes"):
        context(limit=0)
