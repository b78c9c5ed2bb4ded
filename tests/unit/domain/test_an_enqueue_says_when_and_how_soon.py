"""An enqueue's priority and time: checked before anything is written, then made the item's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from workqueue.domain import (
    DEFAULT_PRIORITY,
    MAX_PRIORITY,
    MIN_PRIORITY,
    InvalidPriorityError,
    InvalidRunAtError,
    WorkQueueError,
    check_aware,
    check_delay,
    check_priority,
    check_when,
    run_at_of,
)

T0 = datetime(2026, 12, 3, 12, tzinfo=UTC)


class TestPriority:
    def test_the_range_is_django_tasks_with_zero_by_default(self) -> None:
        assert (MIN_PRIORITY, DEFAULT_PRIORITY, MAX_PRIORITY) == (-100, 0, 100)

    @pytest.mark.parametrize("priority", [-100, -1, 0, 1, 100])
    def test_an_integer_in_range_is_kept(self, priority: int) -> None:
        assert check_priority(priority) == priority

    @pytest.mark.parametrize(
        ("priority", "shown"), [(-101, "-101"), (101, "101"), (10**6, "1000000")]
    )
    def test_an_integer_out_of_range_is_refused_naming_the_range(
        self, priority: int, shown: str
    ) -> None:
        with pytest.raises(InvalidPriorityError) as raised:
            check_priority(priority)

        assert str(raised.value) == f"priority must be from -100 to 100, not {shown}"
        assert isinstance(raised.value, WorkQueueError)
        assert isinstance(raised.value, ValueError)

    @pytest.mark.parametrize(
        ("priority", "name"), [(True, "bool"), (1.0, "float"), ("5", "str"), (None, "NoneType")]
    )
    def test_anything_but_an_integer_is_refused_naming_its_type(
        self, priority: object, name: str
    ) -> None:
        with pytest.raises(
            InvalidPriorityError, match=f"^priority must be an integer, not {name}$"
        ):
            check_priority(priority)  # type: ignore[arg-type]


class TestWhen:
    def test_neither_time_nor_delay_is_at_once(self) -> None:
        assert check_when(None, None) is None
        assert run_at_of(None, T0) == T0

    def test_a_time_with_its_zone_is_kept_and_is_the_run_at(self) -> None:
        paris = datetime(2026, 12, 24, 18, tzinfo=timezone(timedelta(hours=1)))

        assert check_when(paris, None) is paris
        assert run_at_of(paris, T0) is paris

    def test_a_delay_counts_from_the_enqueue(self) -> None:
        assert check_when(None, timedelta(minutes=5)) == timedelta(minutes=5)
        assert run_at_of(timedelta(minutes=5), T0) == T0 + timedelta(minutes=5)
        assert check_when(None, timedelta(0)) == timedelta(0)

    def test_both_are_refused(self) -> None:
        with pytest.raises(InvalidRunAtError, match=r"^give run_at or delay, not both$"):
            check_when(T0, timedelta(seconds=1))

    def test_a_naive_time_is_refused_showing_it(self) -> None:
        with pytest.raises(
            InvalidRunAtError,
            match=r"^run_at must have a time zone, not the naive time 2026-12-03T12:00:00$",
        ):
            check_aware(datetime(2026, 12, 3, 12))

    def test_a_time_that_is_not_a_datetime_is_refused(self) -> None:
        with pytest.raises(InvalidRunAtError, match=r"^run_at must be a datetime, not str$"):
            check_when("2026-12-03", None)  # type: ignore[arg-type]

    def test_a_negative_delay_is_refused_in_seconds(self) -> None:
        with pytest.raises(
            InvalidRunAtError, match=r"^delay must not be negative, not -1.5 seconds$"
        ):
            check_delay(timedelta(seconds=-1.5))

    def test_a_delay_that_is_not_a_timedelta_is_refused(self) -> None:
        with pytest.raises(InvalidRunAtError, match=r"^delay must be a timedelta, not int$"):
            check_when(None, 30)  # type: ignore[arg-type]
