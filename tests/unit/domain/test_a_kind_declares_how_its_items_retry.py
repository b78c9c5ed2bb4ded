"""A kind's retry policy: how many attempts, how long between them, and what cannot hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from workqueue.domain import (
    DEFAULT_POLICY,
    Backoff,
    InvalidPolicyError,
    InvalidRunAtError,
    KindPolicy,
    Snooze,
    WorkQueueError,
)

T0 = datetime(2026, 12, 3, 12, tzinfo=UTC)
NO_JITTER = 0.0
FULL_JITTER = 1.0


def seconds(delay: timedelta) -> float:
    return delay.total_seconds()


class TestTheDefaultPolicy:
    def test_a_failure_fails_the_item_as_in_part_one(self) -> None:
        assert DEFAULT_POLICY.max_attempts == 1
        assert DEFAULT_POLICY.retry_at(1, T0, NO_JITTER) is None

    def test_an_item_may_snooze_a_hundred_times(self) -> None:
        assert DEFAULT_POLICY.max_snoozes == 100

    def test_its_backoff_starts_at_five_seconds_doubles_and_stops_at_an_hour(self) -> None:
        backoff = DEFAULT_POLICY.backoff
        assert backoff == Backoff()
        assert (backoff.initial, backoff.multiplier, backoff.cap, backoff.jitter) == (
            timedelta(seconds=5),
            2.0,
            timedelta(hours=1),
            0.25,
        )


class TestRetries:
    def test_a_failure_with_attempts_left_runs_again_after_the_backoff(self) -> None:
        policy = KindPolicy(max_attempts=3, backoff=Backoff(initial=timedelta(seconds=10)))

        assert policy.retry_at(1, T0, NO_JITTER) == T0 + timedelta(seconds=10)
        assert policy.retry_at(2, T0, NO_JITTER) == T0 + timedelta(seconds=20)

    def test_the_last_attempt_fails_the_item(self) -> None:
        policy = KindPolicy(max_attempts=3)

        assert policy.retry_at(3, T0, NO_JITTER) is None
        assert policy.retry_at(4, T0, NO_JITTER) is None


class TestTheBackoff:
    def test_each_delay_grows_by_the_multiplier(self) -> None:
        backoff = Backoff(initial=timedelta(seconds=2), multiplier=3, jitter=0)

        assert [seconds(backoff.delay(n, NO_JITTER)) for n in (1, 2, 3, 4)] == [2, 6, 18, 54]

    def test_no_delay_exceeds_the_cap(self) -> None:
        backoff = Backoff(initial=timedelta(seconds=1), cap=timedelta(seconds=100), jitter=0)

        assert [seconds(backoff.delay(n, NO_JITTER)) for n in (7, 8, 9)] == [64, 100, 100]

    def test_a_delay_after_countless_failures_is_the_cap(self) -> None:
        backoff = Backoff(multiplier=10, cap=timedelta(days=1), jitter=0)

        assert backoff.delay(10_000, NO_JITTER) == timedelta(days=1)

    def test_a_multiplier_of_one_keeps_every_delay_the_same(self) -> None:
        backoff = Backoff(initial=timedelta(seconds=7), multiplier=1, jitter=0)

        assert {seconds(backoff.delay(n, NO_JITTER)) for n in range(1, 50)} == {7}

    def test_the_jitter_takes_off_at_most_its_share_of_the_delay(self) -> None:
        backoff = Backoff(initial=timedelta(seconds=8), jitter=0.25)

        assert backoff.delay(1, NO_JITTER) == timedelta(seconds=8)
        assert backoff.delay(1, 0.5) == timedelta(seconds=7)
        assert backoff.delay(1, FULL_JITTER) == timedelta(seconds=6)

    def test_the_jitter_applies_to_the_capped_delay(self) -> None:
        backoff = Backoff(initial=timedelta(seconds=8), cap=timedelta(seconds=10), jitter=0.5)

        assert backoff.delay(3, FULL_JITTER) == timedelta(seconds=5)


def refused(build: Any, **fields: Any) -> str:
    with pytest.raises(InvalidPolicyError) as raised:
        build(**fields)
    message = str(raised.value)
    assert "\n" not in message
    return message


class TestAPolicyThatCannotHoldIsRefusedWhereItIsWritten:
    @pytest.mark.parametrize("attempts", [0, -1])
    def test_fewer_than_one_attempt(self, attempts: int) -> None:
        assert refused(KindPolicy, max_attempts=attempts) == (
            f"max_attempts must be at least 1, not {attempts}"
        )

    @pytest.mark.parametrize(("value", "shown"), [(2.0, "float"), (True, "bool"), ("3", "str")])
    def test_attempts_that_are_not_an_integer(self, value: object, shown: str) -> None:
        assert refused(KindPolicy, max_attempts=value) == (
            f"max_attempts must be an integer, not {shown}"
        )

    def test_a_negative_snooze_count(self) -> None:
        assert refused(KindPolicy, max_snoozes=-1) == "max_snoozes must be at least 0, not -1"

    def test_no_snoozes_at_all_is_a_policy(self) -> None:
        assert KindPolicy(max_snoozes=0).max_snoozes == 0

    def test_a_backoff_that_is_not_one(self) -> None:
        assert refused(KindPolicy, backoff=timedelta(seconds=1)) == (
            "backoff must be a Backoff, not timedelta"
        )

    @pytest.mark.parametrize("delay", [timedelta(0), timedelta(seconds=-1)])
    def test_an_initial_delay_that_is_not_positive(self, delay: timedelta) -> None:
        assert refused(Backoff, initial=delay) == (
            f"backoff initial must be a positive timedelta, not {delay!r}"
        )

    def test_an_initial_delay_that_is_not_a_timedelta(self) -> None:
        assert refused(Backoff, initial=5) == "backoff initial must be a positive timedelta, not 5"

    def test_a_cap_that_is_not_positive(self) -> None:
        assert refused(Backoff, cap=timedelta(0)) == (
            "backoff cap must be a positive timedelta, not datetime.timedelta(0)"
        )

    def test_a_cap_below_the_initial_delay(self) -> None:
        assert refused(Backoff, initial=timedelta(minutes=2), cap=timedelta(minutes=1)) == (
            "backoff cap must be at least its initial delay (0:02:00), not 0:01:00"
        )

    def test_a_cap_equal_to_the_initial_delay_keeps_every_delay_the_same(self) -> None:
        backoff = Backoff(initial=timedelta(minutes=1), cap=timedelta(minutes=1), jitter=0)

        assert backoff.delay(5, NO_JITTER) == timedelta(minutes=1)

    @pytest.mark.parametrize("multiplier", [0.5, 0, -2])
    def test_a_multiplier_below_one(self, multiplier: float) -> None:
        assert refused(Backoff, multiplier=multiplier) == (
            f"backoff multiplier must be at least 1, not {multiplier!r}"
        )

    def test_a_multiplier_that_is_not_a_number(self) -> None:
        assert refused(Backoff, multiplier=True) == "backoff multiplier must be a number, not bool"
        assert refused(Backoff, multiplier="2") == "backoff multiplier must be a number, not str"

    def test_a_multiplier_that_is_not_a_number_at_all(self) -> None:
        assert refused(Backoff, multiplier=float("nan")) == (
            "backoff multiplier must be at least 1, not nan"
        )

    @pytest.mark.parametrize("jitter", [-0.1, 1.5, float("nan")])
    def test_a_jitter_outside_zero_to_one(self, jitter: float) -> None:
        assert refused(Backoff, jitter=jitter) == (
            f"backoff jitter must be from 0 to 1, not {jitter!r}"
        )

    @pytest.mark.parametrize("jitter", [0, 1])
    def test_a_jitter_of_zero_or_one_is_a_policy(self, jitter: float) -> None:
        assert Backoff(jitter=jitter).jitter == jitter

    def test_a_jitter_that_is_not_a_number(self) -> None:
        assert refused(Backoff, jitter=None) == "backoff jitter must be a number, not NoneType"

    def test_the_error_is_a_value_error_of_the_queue(self) -> None:
        with pytest.raises(ValueError) as raised:
            KindPolicy(max_attempts=0)
        assert isinstance(raised.value, WorkQueueError)


class TestASnooze:
    def test_carries_its_delay(self) -> None:
        assert Snooze(timedelta(minutes=3)).delay == timedelta(minutes=3)

    def test_of_no_time_runs_again_at_once(self) -> None:
        assert Snooze(timedelta(0)).delay == timedelta(0)

    def test_says_how_long_it_waits(self) -> None:
        assert str(Snooze(timedelta(seconds=90))) == "snooze for 0:01:30"

    def test_of_a_negative_delay_is_refused(self) -> None:
        with pytest.raises(InvalidRunAtError) as raised:
            Snooze(timedelta(seconds=-1))
        assert str(raised.value) == "delay must not be negative, not -1 seconds"

    def test_is_a_request_and_no_error_of_the_queue(self) -> None:
        assert not isinstance(Snooze(timedelta(0)), WorkQueueError)
