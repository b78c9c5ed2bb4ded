"""What the PostgreSQL queue sends for a request or a batch, checked before any round trip.

These read the queue's private checks directly: what they build is only ever
seen by PostgreSQL, so the database-free tests cannot reach it otherwise.
"""

from __future__ import annotations

import pytest

from workqueue.adapters.postgres.enqueue_plan import (
    CheckedBatch,
    CheckedRequest,
    check_batch,
    check_request,
)
from workqueue.adapters.postgres.pool import _dump_json
from workqueue.domain import (
    EnqueueRequest,
    InvalidDedupKeyError,
    InvalidPayloadError,
    TokenCleanup,
    WorkItemRetention,
)


class TestWhatTheQueueSends:
    def test_a_request_is_sent_as_its_kind_compact_json_and_dedup_key(self) -> None:
        request = EnqueueRequest(WorkItemRetention(retention_days=7), "nightly")

        assert check_request(request) == CheckedRequest(
            kind="work_item_retention",
            payload_json='{"retention_days":7.0}',
            dedup_key="nightly",
        )

    def test_a_request_with_an_unusable_dedup_key_is_refused_before_sending(self) -> None:
        with pytest.raises(InvalidDedupKeyError):
            check_request(EnqueueRequest(TokenCleanup(), ""))

    def test_a_batch_is_sent_as_lists_of_kinds_stored_payloads_and_keys_in_order(self) -> None:
        requests = [
            EnqueueRequest(WorkItemRetention(retention_days=7), "nightly"),
            EnqueueRequest(TokenCleanup()),
            EnqueueRequest(WorkItemRetention(retention_days=1.5)),
        ]

        assert check_batch(requests) == CheckedBatch(
            kinds=["work_item_retention", "token_cleanup", "work_item_retention"],
            payloads=[{"retention_days": 7.0}, {}, {"retention_days": 1.5}],
            dedup_keys=["nightly", None, None],
        )

    def test_a_batch_with_an_unusable_dedup_key_is_refused(self) -> None:
        requests = [EnqueueRequest(TokenCleanup()), EnqueueRequest(TokenCleanup(), " ")]

        with pytest.raises(InvalidDedupKeyError, match=r"^dedup key must not be empty or blank$"):
            check_batch(requests)

    def test_a_bad_payload_before_a_bad_key_is_what_a_batch_is_refused_for(self) -> None:
        mistyped = WorkItemRetention.model_construct(retention_days="a week")
        requests = [EnqueueRequest(mistyped), EnqueueRequest(TokenCleanup(), "")]

        with pytest.raises(InvalidPayloadError, match="retention_days"):
            check_batch(requests)

    def test_json_parameters_are_sent_compact(self) -> None:
        assert _dump_json({"deleted": [1, 2], "note": "é"}) == '{"deleted":[1,2],"note":"\\u00e9"}'
