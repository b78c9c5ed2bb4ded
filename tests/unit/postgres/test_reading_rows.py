"""A work_items row reads as the WorkItem it holds."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from workqueue.adapters.postgres.columns import ITEM_COLUMNS
from workqueue.adapters.postgres.rows import (
    kind_cap_from_caps_row,
    kind_cap_from_row,
    kind_pause_from_row,
    work_item_from_row,
)
from workqueue.domain import CapSource, Failure, KindCap, KindPause, WorkItem, WorkStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_row_reads_as_the_work_item_it_holds() -> None:
    row: dict[str, Any] = {
        "id": 4,
        "kind": "token_cleanup",
        "payload": {"a": 1},
        "status": "running",
        "attempt": 2,
        "stalls": 1,
        "dedup_key": "periodic",
        "enqueued_at": T0,
        "priority": -3,
        "run_at": T0.replace(second=30),
        "started_at": T0.replace(minute=1),
        "heartbeat_at": T0.replace(minute=2),
        "lease_expires_at": T0.replace(minute=3),
        "finished_at": None,
        "worker_id": "w-1",
        "progress": {"deleted": 3},
        "error": None,
        "cancel_reason": "not needed any more",
        "failures": [{"attempt": 1, "at": "2026-01-01T00:00:10+00:00", "error": "OSError: down"}],
        "snoozes": 2,
        "result": None,
        "trace_context": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
        "requeued_as": None,
    }

    item = work_item_from_row(row)  # type: ignore[arg-type]

    assert item == WorkItem(
        id=4,
        kind="token_cleanup",
        payload={"a": 1},
        status=WorkStatus.RUNNING,
        attempt=2,
        stalls=1,
        dedup_key="periodic",
        enqueued_at=T0,
        priority=-3,
        run_at=T0.replace(second=30),
        started_at=T0.replace(minute=1),
        heartbeat_at=T0.replace(minute=2),
        lease_expires_at=T0.replace(minute=3),
        finished_at=None,
        worker_id="w-1",
        progress={"deleted": 3},
        error=None,
        cancel_reason="not needed any more",
        failures=(Failure(1, T0.replace(second=10), "OSError: down"),),
        snoozes=2,
        result=None,
        trace_context={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
    )
    assert isinstance(item.status, WorkStatus)


def test_a_row_with_a_status_that_is_not_one_is_refused_naming_it() -> None:
    row: dict[str, Any] = dict.fromkeys(ITEM_COLUMNS) | {"status": "paused"}

    with pytest.raises(ValueError, match=r"^'paused' is not a valid WorkStatus$"):
        work_item_from_row(row)  # type: ignore[arg-type]


def test_a_finished_row_keeps_its_finish_and_its_error() -> None:
    row: dict[str, Any] = {
        "id": 5,
        "kind": "token_cleanup",
        "payload": {},
        "status": "failed",
        "attempt": 1,
        "stalls": 0,
        "dedup_key": None,
        "enqueued_at": T0,
        "priority": 0,
        "run_at": T0,
        "started_at": T0,
        "heartbeat_at": T0,
        "lease_expires_at": None,
        "finished_at": T0.replace(minute=9),
        "worker_id": "w-1",
        "progress": None,
        "error": "RuntimeError: no",
        "cancel_reason": None,
        "failures": [
            {"attempt": 1, "at": "2026-01-01T00:09:00+00:00", "error": "RuntimeError: no"}
        ],
        "snoozes": 0,
        "result": None,
        "trace_context": None,
        "requeued_as": 12,
    }

    item = work_item_from_row(row)  # type: ignore[arg-type]

    assert (item.status, item.finished_at, item.error, item.requeued_as) == (
        WorkStatus.FAILED,
        T0.replace(minute=9),
        "RuntimeError: no",
        12,
    )
    assert item.failures == (Failure(1, T0.replace(minute=9), "RuntimeError: no"),)


def test_a_succeeded_row_keeps_its_result() -> None:
    row: dict[str, Any] = dict.fromkeys(ITEM_COLUMNS) | {
        "status": "succeeded",
        "failures": [],
        "result": {"pages": 12},
    }

    item = work_item_from_row(row)  # type: ignore[arg-type]

    assert (item.result, item.failures) == ({"pages": 12}, ())


@pytest.mark.parametrize("reason", ["the partner's API is down", None], ids=["why", "no reason"])
def test_a_work_kind_pauses_row_reads_as_the_pause_it_holds(reason: str | None) -> None:
    row = {"kind": "crawl_page", "paused_at": T0.replace(minute=7), "reason": reason}

    pause = kind_pause_from_row(row)  # type: ignore[arg-type]

    assert pause == KindPause(kind="crawl_page", paused_at=T0.replace(minute=7), reason=reason)


@pytest.mark.parametrize(
    ("source", "expected"),
    [("policy", CapSource.POLICY), ("operator", CapSource.OPERATOR)],
)
def test_a_work_kind_controls_row_with_a_cap_reads_as_the_cap_it_holds(
    source: str, expected: CapSource
) -> None:
    row = {"max_running": 3, "cap_source": source, "cap_set_at": T0.replace(minute=9)}

    cap = kind_cap_from_row("crawl_page", row)  # type: ignore[arg-type]

    assert cap == KindCap("crawl_page", 3, expected, T0.replace(minute=9), 0)


def test_a_work_kind_controls_row_without_a_cap_reads_as_none() -> None:
    row = {"max_running": None, "cap_source": None, "cap_set_at": None}

    assert kind_cap_from_row("crawl_page", row) is None  # type: ignore[arg-type]


def test_a_row_of_the_caps_statement_reads_as_the_cap_and_its_held_slots() -> None:
    row = {
        "kind": "crawl_page",
        "max_running": 5,
        "cap_source": "operator",
        "cap_set_at": T0.replace(minute=11),
        "running": 2,
    }

    cap = kind_cap_from_caps_row(row)  # type: ignore[arg-type]

    assert cap == KindCap("crawl_page", 5, CapSource.OPERATOR, T0.replace(minute=11), 2)
