"""The contract kit fails each store in tests/contract/broken_stores, in the tests aimed at it.

Each broken store has one bug (see broken_stores/stores.py). The kit runs on
them in a pytest process of its own, as a third party's run would, and each
must fail in the tests named here (it may fail in more). The in-memory ones run
the whole suite; the PostgreSQL ones run only the tests named here, to spare
the time (each check class says which contracts it composes).
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

import pytest

BROKEN_STORES = Path(__file__).with_name("broken_stores")
ROOT = Path(__file__).resolve().parents[2]

LEASE_TESTS = {
    "test_a_claim_leases_for_the_duration_it_is_given[17s]",
    "test_a_claim_leases_for_the_duration_it_is_given[95s]",
    "test_a_heartbeat_extends_the_lease_by_the_duration_it_is_given[17s]",
    "test_complete_and_claim_leases_the_next_item_for_the_duration_it_is_given[95s]",
}
IN_MEMORY: dict[str, set[str]] = {
    "TestRequeuesWithoutMarking": {
        "test_a_bulk_requeue_enqueues_each_failed_item_of_the_kind_again_and_marks_it",
        "test_pressed_twice_a_bulk_requeue_requeues_each_failed_item_once",
        "test_two_bulk_requeues_at_once_requeue_each_failed_item_exactly_once",
    },
    "TestBulkIgnoresUpToId": {
        "test_items_that_failed_after_the_count_was_read_are_left_for_the_next_requeue",
        "test_a_requeue_batch_takes_at_most_its_limit_after_the_id_it_is_given_in_id_order",
        "test_items_enqueued_after_the_count_was_read_are_not_cancelled",
        "test_a_cancel_batch_takes_at_most_its_limit_after_the_id_it_is_given_in_id_order",
    },
    "TestIgnoresLeaseDuration": LEASE_TESTS,
    "TestDropsProgressOnReads": {
        "test_get_returns_every_column_of_the_stored_item",
        "test_get_returns_the_progress_a_heartbeat_wrote",
        "test_list_items_returns_every_column_of_the_stored_items[oldest first]",
        "test_list_items_returns_every_column_of_the_stored_items[newest first]",
    },
    "TestReleaseForgetsStalls": {
        "test_a_release_keeps_the_stalls_an_item_already_has[1]",
        "test_stalls_before_a_release_still_count_towards_the_limit",
    },
    "TestClaimsInTwoSteps": {
        "test_claimers_released_together_each_get_a_different_item",
        "test_concurrent_claimers_each_get_a_different_item",
    },
    "TestCronTurnsFromItems": {
        "test_turns_outlive_the_items_retention_deletes",
    },
    "TestCronInUtc": {
        "test_a_daily_run_at_half_past_two_runs_once_on_each_day_the_clocks_change",
    },
    "TestCronTurnsOnTheWallClock": {
        "test_an_hourly_schedule_runs_23_and_25_times_on_the_days_the_clocks_change",
    },
    "TestCronTurnInTwoSteps": {
        "test_schedulers_that_find_a_fire_time_due_together_make_one_item",
    },
    "TestCronCatchesUp": {
        "test_fire_times_missed_while_nobody_asked_make_one_item",
    },
    "TestCronOverlapsAlways": {
        "test_a_fire_time_while_an_item_of_the_kind_runs_is_skipped_for_good",
        "test_a_fire_time_while_an_item_of_the_kind_is_queued_is_skipped",
    },
    "TestEnqueueIfDueInTwoSteps": {
        "test_concurrent_schedulers_racing_claimers_create_one_item_per_due_round",
    },
    "TestDueBySuccessesAlone": {
        "test_a_failure_counts_as_a_finish_until_an_interval_has_passed",
        "test_the_newest_finish_decides_whether_it_succeeded_or_failed",
        "test_cancelled_items_are_finished_for_due_ness_and_retention",
    },
    "TestDueByTheNewestFinishAlone": {
        "test_a_running_item_makes_it_not_due_however_old_the_last_finish",
    },
    "TestRecoveryRequeuesCancelRequested": {
        "test_a_dead_holders_item_ends_cancelled_by_recovery_without_a_stall",
        "test_recovery_cancels_rather_than_stalls_an_item_at_the_stall_limit",
    },
    "TestHeartbeatNeverAnswersCancel": {
        "test_the_holders_heartbeats_answer_that_a_cancel_was_requested",
    },
    "TestHeartbeatManyAnswersAsOne": {
        "test_a_lease_no_longer_held_is_lost_and_changes_nothing_beside_held_ones",
        "test_a_lease_of_an_unknown_item_is_lost",
        "test_the_answers_come_in_the_order_of_the_leases",
    },
    "TestHeartbeatManyFencedByTheBatch": {
        "test_each_lease_is_fenced_by_its_own_attempt_not_by_the_batchs",
    },
    "TestHeartbeatManyLeasesFor60s": {
        "test_heartbeat_many_extends_each_lease_by_the_duration_it_is_given[17s]",
        "test_heartbeat_many_extends_each_lease_by_the_duration_it_is_given[95s]",
    },
    "TestCompletionIgnoresTheStatus": {
        "test_a_finished_item_never_changes_again[complete_and_claim_many-fail]",
        "test_a_finished_item_never_changes_again[complete_and_claim_many-mark_cancelled]",
    },
    "TestCountsFinishedWithoutCancelled": {
        "test_finished_counts_are_every_final_status_per_kind",
    },
    "TestSamplesEveryCall": {
        "test_a_minute_is_sampled_once_and_the_first_sample_stays",
        "test_of_many_workers_sampling_one_minute_at_once_one_takes_the_sample",
    },
    "TestCountsTheLastAddOnly": {
        "test_counts_from_several_workers_add_up_per_minute_and_kind",
        "test_a_count_is_kept_under_the_minute_its_time_falls_in",
    },
    "TestClaimsPausedKinds": {
        "test_a_paused_kind_is_passed_over_and_other_kinds_are_claimed",
        "test_items_enqueued_before_and_during_the_pause_wait_then_run_in_claim_order",
        "test_an_item_that_becomes_due_during_the_pause_waits_for_the_resume",
        "test_a_completion_still_ends_its_run_but_claims_nothing_paused",
        "test_completions_of_many_leases_claim_nothing_paused",
        "test_a_resume_says_whether_the_kind_was_paused",
        "test_a_paused_kind_is_claimed_by_no_one_whatever_its_free_slots",
    },
    "TestPauseReplacesThePause": {
        "test_pausing_a_paused_kind_keeps_the_pause_in_force",
    },
    "TestIgnoresTheCap": {
        "test_a_kind_at_its_cap_is_passed_over_and_other_kinds_are_claimed_in_order",
        "test_items_over_the_cap_stay_queued_and_run_later_in_claim_order",
        "test_a_completion_beside_a_kind_at_its_cap_claims_another_kind",
        "test_completions_of_many_leases_claim_no_more_than_the_free_slots",
        "test_claimers_released_together_over_a_capped_backlog_claim_at_most_the_cap",
        "test_workers_draining_a_capped_kind_never_run_more_than_the_cap_at_once",
    },
    "TestChecksTheCapBeforeClaiming": {
        "test_claimers_released_together_over_a_capped_backlog_claim_at_most_the_cap",
        "test_workers_draining_a_capped_kind_never_run_more_than_the_cap_at_once",
    },
    "TestRecoveryKeepsTheSlot": {
        "test_lease_recovery_frees_the_slot_of_a_dead_workers_item",
        "test_a_recovery_that_fails_an_item_at_the_stall_limit_frees_its_slot",
        "test_a_recovery_that_cancels_a_requested_item_frees_its_slot",
        "test_a_recovery_that_supersedes_an_item_by_its_queued_twin_frees_its_slot",
    },
    "TestFreesTheSlotOnlyOnSuccess": {
        "test_every_end_of_a_run_frees_its_slot[cancelled]",
        "test_every_end_of_a_run_frees_its_slot[failed]",
        "test_every_end_of_a_run_frees_its_slot[released]",
        "test_every_end_of_a_run_frees_its_slot[retried]",
        "test_every_end_of_a_run_frees_its_slot[snoozed]",
        "test_a_cancel_request_keeps_the_slot_until_the_holder_ends_the_run",
    },
    "TestCompletionFreesTheSlotTooLate": {
        "test_a_completion_hands_its_slot_to_the_next_item_of_its_kind",
        "test_completions_of_many_leases_hand_over_their_slots",
    },
    "TestPolicyCapReplacesTheOperators": {
        "test_a_policy_never_changes_an_operators_cap",
        "test_an_operator_setting_a_policys_count_takes_the_cap_over",
    },
    "TestCancelsRunningItemsAtOnce": {
        "test_a_running_item_keeps_running_with_the_request_recorded",
    },
    "TestCancelsInTwoSteps": {
        "test_a_cancel_racing_a_claim_has_exactly_one_outcome",
    },
    "TestClaimsWaitingItemsEarly": {
        "test_an_item_with_a_delay_is_not_claimed_before_its_run_at",
        "test_many_waiting_items_of_the_highest_priority_do_not_hold_up_a_claimable_one",
    },
    "TestIgnoresPriority": {
        "test_a_claim_takes_the_highest_priority_first_then_the_oldest",
        "test_an_item_that_becomes_due_is_ordered_by_its_priority_among_the_rest",
    },
    "TestNextRunAtOfEveryKind": {
        "test_next_run_at_is_the_earliest_run_at_still_to_come_of_the_kinds",
    },
    "TestRetryLeavesTheItemRunning": {
        "test_a_retry_goes_back_to_queued_with_its_error_until_its_run_at",
        "test_the_old_lease_of_a_retried_item_writes_nothing",
    },
    "TestRetryRunsAtOnce": {
        "test_a_retry_goes_back_to_queued_with_its_error_until_its_run_at",
        "test_a_retried_item_is_claimed_again_once_its_run_at_comes",
    },
    "TestKeepsOnlyTheLastFailure": {
        "test_every_failure_is_kept_in_order_with_its_attempt_and_time",
    },
    "TestSnoozeCountsAFailure": {
        "test_a_snooze_goes_back_to_queued_counted_and_without_a_failure",
    },
    "TestStallSpendsARetry": {
        "test_a_stall_is_no_failure_but_a_stall_out_is",
    },
}
ON_POSTGRES: dict[str, set[str]] = {
    "TestTakesFailedWithoutLocking": {
        "test_two_bulk_requeues_at_once_requeue_each_failed_item_exactly_once",
    },
    "TestRetryLeftInTheClaimIndex": {
        "test_a_retry_goes_back_to_queued_with_its_error_until_its_run_at",
        "test_a_retried_item_is_claimed_again_once_its_run_at_comes",
        "test_a_snooze_goes_back_to_queued_counted_and_without_a_failure",
    },
    "TestNewestFirstIgnoresFilters": {
        "test_list_items_filters_by_status_and_kind_in_either_order[newest first]",
        "test_the_limit_applies_after_the_filters_in_either_order[newest first]",
    },
    "TestListsEveryWorkersItems": {
        "test_list_items_filters_by_the_worker_holding_or_last_holding_each_item[oldest first]",
        "test_list_items_filters_by_the_worker_holding_or_last_holding_each_item[newest first]",
    },
    "TestClaimsWithoutSkipLocked": {
        "test_a_claim_passes_over_an_item_another_transaction_holds_locked",
        "test_claimers_released_together_each_get_a_different_item",
        "test_its_claim_passes_over_an_item_another_transaction_holds_locked",
        "test_workers_released_together_each_claim_a_different_next_item",
    },
    "TestTakesSlotsWithoutLockingThem": {
        "test_claimers_released_together_over_a_capped_backlog_claim_at_most_the_cap",
    },
    "TestClaimsWaitingForLocks": {
        "test_a_claim_passes_over_an_item_another_transaction_holds_locked",
        "test_its_claim_passes_over_an_item_another_transaction_holds_locked",
    },
    "TestEnqueueIfDueWithoutTheLock": {
        "test_concurrent_schedulers_racing_claimers_create_one_item_per_due_round",
    },
    "TestEnqueueIfDueLockedInTheInsert": {
        "test_concurrent_schedulers_racing_claimers_create_one_item_per_due_round",
    },
    "TestCancelsAfterReadingTheStatus": {
        "test_a_cancel_racing_a_claim_has_exactly_one_outcome",
    },
    "TestHeartbeatManyFencedByIdAlone": {
        "test_a_lease_no_longer_held_is_lost_and_changes_nothing_beside_held_ones",
    },
    "TestNeverClaimsWaitingItems": {
        "test_an_item_with_a_delay_is_not_claimed_before_its_run_at",
        "test_concurrent_claimers_share_items_that_become_due_together",
    },
    "TestHeartbeatManyFencedByTheBatchOnPostgres": {
        "test_each_lease_is_fenced_by_its_own_attempt_not_by_the_batchs",
    },
    "TestCompletionIgnoresTheStatusOnPostgres": {
        "test_a_finished_item_never_changes_again[complete_and_claim_many-fail]",
        "test_a_finished_item_never_changes_again[complete_and_claim_many-mark_cancelled]",
    },
    "TestClaimsPausedKindsOnPostgres": {
        "test_a_paused_kind_is_passed_over_and_other_kinds_are_claimed",
        "test_items_enqueued_before_and_during_the_pause_wait_then_run_in_claim_order",
        "test_an_item_that_becomes_due_during_the_pause_waits_for_the_resume",
        "test_a_completion_still_ends_its_run_but_claims_nothing_paused",
        "test_a_resume_says_whether_the_kind_was_paused",
    },
    "TestClaimsManyInFifoOrder": {
        "test_complete_and_claim_many_claims_in_priority_order_among_due_items",
        "test_complete_and_claim_many_hands_the_next_items_out_in_claim_order",
    },
}


class Outcomes:
    """What one pytest run of a check module reported, by test class."""

    def __init__(self, junit: Path, output: str) -> None:
        self.output = output
        self.failed: dict[str, set[str]] = defaultdict(set)
        self.errors: dict[str, set[str]] = defaultdict(set)
        self.ran: dict[str, set[str]] = defaultdict(set)
        for case in ElementTree.parse(junit).iter("testcase"):
            test_class = case.get("classname", "").rpartition(".")[2]
            name = case.get("name", "")
            self.ran[test_class].add(name)
            if case.find("failure") is not None:
                self.failed[test_class].add(name)
            if case.find("error") is not None:
                self.errors[test_class].add(name)


def run_check(module: str, tmp_path: Path, *arguments: str, env: dict[str, str]) -> Outcomes:
    junit = tmp_path / f"{module}.xml"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(BROKEN_STORES / f"{module}.py"),
            "-p",
            "no:cacheprovider",
            "-q",
            f"--junitxml={junit}",
            *arguments,
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 1, _what_went_wrong(result.stdout) + result.stderr[-3000:]
    return Outcomes(junit, result.stdout)


def _what_went_wrong(output: str) -> str:
    """The end of the check's output, or the whole of an internal error of pytest's
    (its first lines name the test whose report could not be made)."""
    internal = output.find("INTERNALERROR>")
    return output[internal : internal + 30_000] if internal >= 0 else output[-3000:]


@pytest.fixture(scope="module")
def in_memory(tmp_path_factory: pytest.TempPathFactory) -> Outcomes:
    return run_check("check_memory", tmp_path_factory.mktemp("memory"), env={})


@pytest.fixture(scope="module")
def on_postgres(tmp_path_factory: pytest.TempPathFactory, postgres_admin_url: str) -> Outcomes:
    names = sorted({name.partition("[")[0] for names in ON_POSTGRES.values() for name in names})
    return run_check(
        "check_postgres",
        tmp_path_factory.mktemp("postgres"),
        "-k",
        " or ".join(names),
        env={"WORKQUEUE_TEST_DATABASE_URL": postgres_admin_url},
    )


def check(outcomes: Outcomes, test_class: str, expected: set[str]) -> None:
    assert outcomes.ran[test_class], f"{test_class} did not run:\n{outcomes.output[-3000:]}"
    assert not outcomes.errors[test_class], (test_class, outcomes.errors[test_class])
    missed = expected - outcomes.failed[test_class]
    assert not missed, f"{test_class} passed what it should fail: {sorted(missed)}"


@pytest.mark.parametrize("test_class", sorted(IN_MEMORY))
def test_the_kit_fails_each_broken_in_memory_store(in_memory: Outcomes, test_class: str) -> None:
    check(in_memory, test_class, IN_MEMORY[test_class])


def test_the_kit_passes_nothing_else_of_the_broken_in_memory_stores(in_memory: Outcomes) -> None:
    # Every test class in check_memory.py is a broken store and is listed above.
    assert set(in_memory.ran) == set(IN_MEMORY)


@pytest.mark.parametrize("test_class", sorted(ON_POSTGRES))
def test_the_kit_fails_each_broken_postgres_store(on_postgres: Outcomes, test_class: str) -> None:
    check(on_postgres, test_class, ON_POSTGRES[test_class])
