"""A work_items row read on a psycopg connection (a tuple, in column order) is its WorkItem."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from workqueue.adapters.postgres.columns import ITEM_COLUMNS
from workqueue.adapters.psycopg import item_from_row
from workqueue.domain import Failure, WorkItem, WorkStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)

VALUES: dict[str, Any] = {
    "id": 4,
    "kind": "django.mail",
    "payload": {"task": "a.b", "args": [], "kwargs": {}},
    "status": "failed",
    "attempt": 2,
    "stalls": 1,
    "dedup_key": None,
    "enqueued_at": T0,
    "priority": -3,
    "run_at": T0.replace(second=30),
    "started_at": T0.replace(minute=1),
    "heartbeat_at": T0.replace(minute=2),
    "lease_expires_at": None,
    "finished_at": T0.replace(minute=4),
    "worker_id": "w-1",
    "progress": None,
    "error": "TaskRaised: builtins.OSError\nT",
    "cancel_reason": None,
    "failures": [
        {"attempt": 1, "at": "2026-01-01T00:00:10+00:00", "error": "first"},
        {"attempt": "2", "at": "2026-01-01T00:04:00+00:00", "error": "second"},
    ],
    "snoozes": 0,
    "result": None,
    "trace_context": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
    "requeued_as": 12,
}


def test_a_row_in_column_order_reads_as_the_work_item_it_holds() -> None:
    item = item_from_row(tuple(VALUES[column] for column in ITEM_COLUMNS))

    assert item == WorkItem(
        **(
            VALUES
            | {
                "status": WorkStatus.FAILED,
                "failures": (
                    Failure(1, T0.replace(second=10), "first"),
                    Failure(2, T0.replace(minute=4), "second"),
                ),
            }
        )
    )
    assert isinstance(item.status, WorkStatus)
    assert all(isinstance(failure.attempt, int) for failure in item.failures)


def test_a_row_with_a_column_too_few_or_too_many_is_refused() -> None:
    row = tuple(VALUES[column] for column in ITEM_COLUMNS)
    with pytest.raises(ValueError, match="zip"):
        item_from_row(row[:-1])
    with pytest.raises(ValueError, match="zip"):
        item_from_row((*row, None))


def test_a_row_with_a_status_that_is_not_one_is_refused_naming_it() -> None:
    row = tuple((VALUES | {"status": "paused"})[column] for column in ITEM_COLUMNS)
    with pytest.raises(ValueError, match=r"^'paused' is not a valid WorkStatus$"):
        item_from_row(row)
