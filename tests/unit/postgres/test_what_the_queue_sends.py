"""What the PostgreSQL queue sends for a request or a batch, checked before any round trip.

These read the queue's private checks directly: what they build is only ever
seen by PostgreSQL, so the database-free tests cannot reach it otherwise.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from workqueue.adapters.postgres.enqueue_plan import (
    CheckedBatch,
    CheckedRequest,
    check_batch,
    check_request,
)
from workqueue.adapters.postgres.pool import _dump_json
from workqueue.adapters.testing import FakeClock
from workqueue.domain import (
    EnqueueRequest,
    InvalidDedupKeyError,
    InvalidPayloadError,
    InvalidPriorityError,
    InvalidRunAtError,
    TokenCleanup,
    WorkItemRetention,
)

T0 = datetime(2026, 12, 3, 12, tzinfo=UTC)
CLOCK = FakeClock(T0)


class TestWhatTheQueueSends:
    def test_a_request_is_sent_as_its_kind_compact_json_and_dedup_key(self) -> None:
        request = EnqueueRequest(WorkItemRetention(retention_days=7), "nightly")

        assert check_request(request) == CheckedRequest(
            kind="work_item_retention",
            payload_json='{"retention_days":7.0}',
            dedup_key="nightly",
            priority=0,
            when=None,
        )

    def test_a_request_is_sent_with_its_priority_and_run_at(self) -> None:
        paris = timezone(timedelta(hours=1))
        at = datetime(2026, 12, 4, 9, tzinfo=paris)

        assert check_request(
            EnqueueRequest(TokenCleanup(), priority=-100, run_at=at)
        ) == CheckedRequest("token_cleanup", "{}", None, -100, at)
        assert check_request(
            EnqueueRequest(TokenCleanup(), priority=100, delay=timedelta(minutes=5))
        ) == CheckedRequest("token_cleanup", "{}", None, 100, timedelta(minutes=5))

    def test_a_request_with_an_unusable_priority_or_run_at_is_refused_before_sending(
        self,
    ) -> None:
        with pytest.raises(
            InvalidPriorityError, match=r"^priority must be from -100 to 100, not 101$"
        ):
            check_request(EnqueueRequest(TokenCleanup(), priority=101))
        with pytest.raises(InvalidRunAtError, match=r"^run_at must have a time zone"):
            check_request(EnqueueRequest(TokenCleanup(), run_at=datetime(2026, 12, 4)))
        with pytest.raises(InvalidRunAtError, match=r"^delay must not be negative"):
            check_request(EnqueueRequest(TokenCleanup(), delay=timedelta(seconds=-1)))

    def test_a_request_with_an_unusable_dedup_key_is_refused_before_sending(self) -> None:
        with pytest.raises(InvalidDedupKeyError):
            check_request(EnqueueRequest(TokenCleanup(), ""))

    def test_a_batch_is_sent_as_lists_of_kinds_stored_payloads_and_keys_in_order(self) -> None:
        requests = [
            EnqueueRequest(WorkItemRetention(retention_days=7), "nightly"),
            EnqueueRequest(TokenCleanup()),
            EnqueueRequest(WorkItemRetention(retention_days=1.5), priority=3, delay=timedelta(1)),
        ]

        assert check_batch(requests) == CheckedBatch(
            kinds=["work_item_retention", "token_cleanup", "work_item_retention"],
            payloads=[{"retention_days": 7.0}, {}, {"retention_days": 1.5}],
            dedup_keys=["nightly", None, None],
            priorities=[0, 0, 3],
            whens=[None, None, timedelta(days=1)],
        )

    def test_a_batch_with_an_unusable_dedup_key_is_refused(self) -> None:
        requests = [EnqueueRequest(TokenCleanup()), EnqueueRequest(TokenCleanup(), " ")]

        with pytest.raises(InvalidDedupKeyError, match=r"^dedup key must not be empty or blank$"):
            check_batch(requests)

    def test_a_batch_is_refused_for_the_first_bad_request_whatever_is_bad_in_it(self) -> None:
        mistyped = WorkItemRetention.model_construct(retention_days="a week")
        late_priority = [
            EnqueueRequest(TokenCleanup()),
            EnqueueRequest(TokenCleanup(), priority=-101),
        ]
        payload_first = [EnqueueRequest(mistyped), EnqueueRequest(TokenCleanup(), priority=-101)]
        priority_first = [EnqueueRequest(TokenCleanup(), priority=-101), EnqueueRequest(mistyped)]
        naive_first = [
            EnqueueRequest(TokenCleanup(), run_at=datetime(2026, 1, 1)),
            EnqueueRequest(TokenCleanup(), priority=500),
        ]

        with pytest.raises(InvalidPriorityError, match=r"not -101$"):
            check_batch(late_priority)
        with pytest.raises(InvalidPayloadError, match="retention_days"):
            check_batch(payload_first)
        with pytest.raises(InvalidPriorityError, match=r"not -101$"):
            check_batch(priority_first)
        with pytest.raises(InvalidRunAtError, match="time zone"):
            check_batch(naive_first)

    def test_a_bad_payload_before_a_bad_key_is_what_a_batch_is_refused_for(self) -> None:
        mistyped = WorkItemRetention.model_construct(retention_days="a week")
        requests = [EnqueueRequest(mistyped), EnqueueRequest(TokenCleanup(), "")]

        with pytest.raises(InvalidPayloadError, match="retention_days"):
            check_batch(requests)

    def test_json_parameters_are_sent_compact(self) -> None:
        assert _dump_json({"deleted": [1, 2], "note": "é"}) == '{"deleted":[1,2],"note":"\\u00e9"}'
