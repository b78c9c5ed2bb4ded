"""A cancelled or released run carries no failure, whatever text it holds: only a failure
or a retry adds one to the item's failures."""

from __future__ import annotations

from datetime import UTC, datetime

from workqueue.domain import Failure, RunOutcome

AT = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_cancelled_run_holds_the_reason_but_adds_no_failure() -> None:
    outcome = RunOutcome.cancelled()

    assert outcome.error is not None
    assert outcome.failure(2, AT) is None


def test_a_released_or_snoozed_run_adds_no_failure() -> None:
    assert RunOutcome.released().failure(2, AT) is None
    assert RunOutcome.snoozed(AT).failure(2, AT) is None


def test_a_failure_and_a_retry_each_add_one() -> None:
    assert RunOutcome.failed("boom").failure(2, AT) == Failure(2, AT, "boom")
    assert RunOutcome.retried("later", AT).failure(3, AT) == Failure(3, AT, "later")
