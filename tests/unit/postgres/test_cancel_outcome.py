"""The cancel statement's one row reads as what the cancel did."""

from __future__ import annotations

import pytest

from workqueue.adapters.postgres.store import cancel_outcome
from workqueue.domain import CancelOutcome


@pytest.mark.parametrize(
    ("changed", "status", "requested", "outcome"),
    [
        ("cancelled", "queued", False, CancelOutcome.CANCELLED),
        ("running", "running", False, CancelOutcome.REQUESTED),
        # a claim took the row first: the request was recorded on the running item
        ("running", "queued", False, CancelOutcome.REQUESTED),
        (None, None, None, CancelOutcome.UNKNOWN),
        (None, "running", True, CancelOutcome.ALREADY_REQUESTED),
        # finished while the cancel waited for the row's lock
        (None, "running", False, CancelOutcome.FINISHED),
        (None, "queued", False, CancelOutcome.FINISHED),
        (None, "succeeded", False, CancelOutcome.FINISHED),
        (None, "cancelled", True, CancelOutcome.FINISHED),
    ],
)
def test_the_row_says_what_the_cancel_did(
    changed: str | None, status: str | None, requested: bool | None, outcome: CancelOutcome
) -> None:
    assert cancel_outcome(changed, status, requested) is outcome
