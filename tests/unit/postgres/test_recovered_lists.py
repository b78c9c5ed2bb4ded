"""The recovery statement's rows (how each run ended, the new status) sort into RecoveryResult."""

from __future__ import annotations

import pytest

from workqueue.adapters.postgres.store import recovered_list
from workqueue.domain import RecoveryResult


@pytest.mark.parametrize(
    ("ending", "status", "listed"),
    [
        ("cancelled", "cancelled", "cancelled"),
        ("failed", "failed", "stalled"),
        ("released", "queued", "requeued"),
        ("released", "failed", "superseded"),
    ],
)
def test_each_recovered_item_is_listed_by_how_its_run_ended(
    ending: str, status: str, listed: str
) -> None:
    result = RecoveryResult()

    recovered_list(result, ending, status).append(4)

    assert getattr(result, listed) == [4]
    assert result.total == 1
