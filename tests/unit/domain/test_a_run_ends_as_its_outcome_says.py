"""Every way a run ends is one RunOutcome, and what the row then holds is decided once."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from workqueue.domain import (
    DEFAULT_CANCEL_REASON,
    RETURNING_ENDINGS,
    ProgressSnapshot,
    RunEnding,
    RunOutcome,
    WorkStatus,
    snoozed_out_error,
    stalled_error,
    superseded_error,
)

REASON = "stop it"
LATER = datetime(2026, 12, 3, 13, tzinfo=UTC)


class TestEachConstructorSaysOneWay:
    def test_a_success_carries_its_progress_and_no_error(self) -> None:
        assert RunOutcome.succeeded({"done": 3}) == RunOutcome(RunEnding.SUCCEEDED, {"done": 3})

    def test_a_failure_carries_its_error(self) -> None:
        assert RunOutcome.failed("ValueError: no", {"done": 1}) == RunOutcome(
            RunEnding.FAILED, {"done": 1}, "ValueError: no"
        )

    def test_a_cancel_carries_the_reason_written_when_none_was_recorded(self) -> None:
        assert RunOutcome.cancelled({"done": 2}) == RunOutcome(
            RunEnding.CANCELLED, {"done": 2}, DEFAULT_CANCEL_REASON
        )

    def test_a_retry_carries_its_error_and_when_it_runs_again(self) -> None:
        assert RunOutcome.retried("OSError: down", LATER, {"done": 5}) == RunOutcome(
            RunEnding.RETRIED, {"done": 5}, "OSError: down", LATER
        )

    def test_a_snooze_carries_when_it_runs_again_and_no_error(self) -> None:
        assert RunOutcome.snoozed(LATER, {"done": 6}) == RunOutcome(
            RunEnding.SNOOZED, {"done": 6}, None, LATER
        )

    def test_only_a_retry_or_a_snooze_says_when_to_run_again(self) -> None:
        assert RunOutcome.failed("boom").run_at is None
        assert RunOutcome.released().run_at is None

    def test_a_release_carries_only_its_progress(self) -> None:
        assert RunOutcome.released({"done": 4}) == RunOutcome(RunEnding.RELEASED, {"done": 4})

    @pytest.mark.parametrize(
        "outcome",
        [
            RunOutcome.succeeded(),
            RunOutcome.failed("boom"),
            RunOutcome.cancelled(),
            RunOutcome.released(),
            RunOutcome.retried("boom", LATER),
            RunOutcome.snoozed(LATER),
        ],
    )
    def test_no_progress_is_progress_none(self, outcome: RunOutcome) -> None:
        assert outcome.progress is None

    def test_progress_may_be_a_snapshot_encoded_once(self) -> None:
        snapshot = ProgressSnapshot.of_value({"rows": 9})

        assert RunOutcome.succeeded(snapshot).progress is snapshot


class TestWhatTheRowThenHolds:
    @pytest.mark.parametrize("reason", [None, REASON])
    @pytest.mark.parametrize("twin", [None, 7])
    def test_a_success_succeeds_whatever_was_requested(
        self, reason: str | None, twin: int | None
    ) -> None:
        ends = RunOutcome.succeeded().ends_as(cancel_reason=reason, queued_twin=twin)

        assert ends == (WorkStatus.SUCCEEDED, None)

    @pytest.mark.parametrize("reason", [None, REASON])
    def test_a_failure_fails_with_its_error_whatever_was_requested(
        self, reason: str | None
    ) -> None:
        ends = RunOutcome.failed("boom").ends_as(cancel_reason=reason, queued_twin=None)

        assert ends == (WorkStatus.FAILED, "boom")

    def test_a_cancel_ends_with_the_recorded_reason(self) -> None:
        ends = RunOutcome.cancelled().ends_as(cancel_reason=REASON, queued_twin=None)

        assert ends == (WorkStatus.CANCELLED, REASON)

    def test_a_cancel_without_a_recorded_reason_ends_with_the_default_one(self) -> None:
        ends = RunOutcome.cancelled().ends_as(cancel_reason=None, queued_twin=None)

        assert ends == (WorkStatus.CANCELLED, DEFAULT_CANCEL_REASON)

    def test_a_release_goes_back_to_queued(self) -> None:
        ends = RunOutcome.released().ends_as(cancel_reason=None, queued_twin=None)

        assert ends == (WorkStatus.QUEUED, None)

    def test_a_release_with_a_queued_twin_fails_superseded_by_it(self) -> None:
        ends = RunOutcome.released().ends_as(cancel_reason=None, queued_twin=7)

        assert ends == (WorkStatus.FAILED, "superseded by queued item 7 with the same dedup key")

    @pytest.mark.parametrize("twin", [None, 7])
    def test_a_release_after_a_cancel_request_ends_cancelled_with_its_reason(
        self, twin: int | None
    ) -> None:
        ends = RunOutcome.released().ends_as(cancel_reason=REASON, queued_twin=twin)

        assert ends == (WorkStatus.CANCELLED, REASON)


class TestARetryOrASnoozeGoesBackAsAReleaseDoes:
    def test_the_endings_back_to_queued_are_release_retry_and_snooze(self) -> None:
        assert {RunEnding.RELEASED, RunEnding.RETRIED, RunEnding.SNOOZED} == RETURNING_ENDINGS

    def test_a_retry_goes_back_to_queued_keeping_its_error(self) -> None:
        ends = RunOutcome.retried("OSError: down", LATER).ends_as(
            cancel_reason=None, queued_twin=None
        )

        assert ends == (WorkStatus.QUEUED, "OSError: down")

    def test_a_snooze_goes_back_to_queued_without_an_error(self) -> None:
        ends = RunOutcome.snoozed(LATER).ends_as(cancel_reason=None, queued_twin=None)

        assert ends == (WorkStatus.QUEUED, None)

    @pytest.mark.parametrize(
        "outcome", [RunOutcome.retried("boom", LATER), RunOutcome.snoozed(LATER)]
    )
    def test_a_queued_twin_supersedes_it(self, outcome: RunOutcome) -> None:
        ends = outcome.ends_as(cancel_reason=None, queued_twin=7)

        assert ends == (WorkStatus.FAILED, "superseded by queued item 7 with the same dedup key")

    @pytest.mark.parametrize("twin", [None, 7])
    @pytest.mark.parametrize(
        "outcome", [RunOutcome.retried("boom", LATER), RunOutcome.snoozed(LATER)]
    )
    def test_a_requested_cancel_wins(self, outcome: RunOutcome, twin: int | None) -> None:
        ends = outcome.ends_as(cancel_reason=REASON, queued_twin=twin)

        assert ends == (WorkStatus.CANCELLED, REASON)


def test_the_errors_of_stalled_snoozed_out_and_superseded_items_say_why() -> None:
    assert stalled_error(3, 3) == "stalled: lease expired 3 times (max stalls 3)"
    assert snoozed_out_error(101, 100) == "snoozed 101 times (max snoozes 100)"
    assert superseded_error(12) == "superseded by queued item 12 with the same dedup key"
