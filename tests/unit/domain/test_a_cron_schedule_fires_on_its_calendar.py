"""A cron schedule fires on its calendar, read in its time zone; a bad one says what is wrong."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from workqueue.domain import (
    CRON_ALIASES,
    CronCalendar,
    InvalidDedupKeyError,
    InvalidScheduleError,
    Overlap,
    TokenCleanup,
    WorkQueueError,
    WorkSchedule,
)


def utc(*fields: int) -> datetime:
    return datetime(*fields, tzinfo=UTC)


class TestTheLatestFire:
    def test_is_the_fire_time_itself_at_that_very_moment(self) -> None:
        assert CronCalendar("0 3 * * *").latest_fire(utc(2026, 5, 1, 3, 0)) == utc(2026, 5, 1, 3)

    def test_is_the_one_before_a_moment_earlier(self) -> None:
        moment = utc(2026, 5, 1, 3, 0) - timedelta(microseconds=1)
        assert CronCalendar("0 3 * * *").latest_fire(moment) == utc(2026, 4, 30, 3)

    def test_counts_whole_seconds_of_a_six_field_expression(self) -> None:
        moment = utc(2026, 5, 1, 3, 0, 7) + timedelta(microseconds=999_999)
        assert CronCalendar("* * * * * *").latest_fire(moment) == utc(2026, 5, 1, 3, 0, 7)

    def test_is_read_in_the_calendar_s_time_zone_and_given_in_utc(self) -> None:
        calendar = CronCalendar("0 9 * * *", "America/New_York")
        fire = calendar.latest_fire(utc(2026, 7, 1, 23, 0))
        assert fire == utc(2026, 7, 1, 13, 0)
        assert fire.tzinfo is UTC

    def test_takes_the_first_of_a_time_the_clocks_pass_twice(self) -> None:
        calendar = CronCalendar("30 2 * * *", "Europe/Paris")
        # 25 October 2026: 02:30 CEST is 00:30 UTC, 02:30 CET an hour later.
        assert calendar.latest_fire(utc(2026, 10, 25, 1, 45)) == utc(2026, 10, 25, 0, 30)

    def test_near_a_change_of_the_clocks_is_never_a_fire_time_still_to_come(self) -> None:
        # A second added on the wall clock at 02:59:59 CEST would be 03:00 CET, an
        # hour later: the next fire time must not be taken for the latest.
        calendar = CronCalendar("0 * * * *", "Europe/Paris")
        moment = utc(2026, 10, 25, 0, 59, 59)
        assert calendar.latest_fire(moment) == utc(2026, 10, 25, 0, 0)


class TestTheNextFire:
    def test_is_strictly_after_now(self) -> None:
        calendar = CronCalendar("0 3 * * *")
        assert calendar.next_fire(utc(2026, 5, 1, 3, 0)) == utc(2026, 5, 2, 3, 0)

    def test_is_read_in_the_calendar_s_time_zone_and_given_in_utc(self) -> None:
        fire = CronCalendar("0 9 * * *", "Asia/Tokyo").next_fire(utc(2026, 7, 1, 23, 0))
        assert fire == utc(2026, 7, 2, 0, 0)
        assert fire.tzinfo is UTC

    def test_of_a_time_the_clocks_skip_is_when_they_pass_it(self) -> None:
        calendar = CronCalendar("30 2 * * *", "Europe/Paris")
        # 29 March 2026: 02:00 CET jumps to 03:00 CEST (01:00 UTC).
        assert calendar.next_fire(utc(2026, 3, 28, 12, 0)) == utc(2026, 3, 29, 1, 0)


class TestExpressions:
    @pytest.mark.parametrize("alias", sorted(CRON_ALIASES))
    def test_every_alias_reads_as_its_five_fields(self, alias: str) -> None:
        moment = utc(2026, 5, 6, 7, 8)
        assert CronCalendar(alias).latest_fire(moment) == CronCalendar(
            CRON_ALIASES[alias]
        ).latest_fire(moment)

    def test_an_alias_may_be_written_in_capitals_and_spaced(self) -> None:
        assert CronCalendar(" @DAILY ").latest_fire(utc(2026, 5, 6, 7)) == utc(2026, 5, 6)

    def test_names_last_days_and_nth_weekdays_are_read(self) -> None:
        assert CronCalendar("0 9 * * MON").next_fire(utc(2026, 5, 6)) == utc(2026, 5, 11, 9)
        assert CronCalendar("0 0 L * *").next_fire(utc(2026, 2, 1)) == utc(2026, 2, 28)
        assert CronCalendar("0 0 * * 1#2").next_fire(utc(2026, 5, 1)) == utc(2026, 5, 11)

    @pytest.mark.parametrize(
        ("expression", "reason"),
        [
            ("61 * * * *", "Bad minute"),
            ("0 0 30 2 *", "Bad day-of-month"),
            ("* * *", "Wrong number of fields"),
            ("@sometimes", "Wrong number of fields"),
        ],
    )
    def test_one_that_cannot_be_read_is_refused_with_the_reason(
        self, expression: str, reason: str
    ) -> None:
        with pytest.raises(InvalidScheduleError) as raised:
            CronCalendar(expression)
        assert str(raised.value) == f"cron expression {expression!r} cannot be read: {reason}"

    @pytest.mark.parametrize("zone", ["Mars/Olympus", "", "../etc/passwd", "Europe/"])
    def test_an_unknown_time_zone_is_refused(self, zone: str) -> None:
        with pytest.raises(InvalidScheduleError) as raised:
            CronCalendar("0 3 * * *", zone)
        assert str(raised.value) == f"unknown time zone {zone!r}"

    def test_an_expression_that_is_not_text_is_refused(self) -> None:
        with pytest.raises(InvalidScheduleError) as raised:
            CronCalendar(5)  # type: ignore[arg-type]
        assert str(raised.value) == "cron expression must be text, not int"

    def test_both_day_fields_restricted_fire_on_a_day_matching_either(self) -> None:
        # 2026-01-02 is a Friday among the first seven days; 2026-01-12 a Monday.
        calendar = CronCalendar("0 0 1-7 * MON")
        assert calendar.next_fire(utc(2026, 1, 1, 12)) == utc(2026, 1, 2)
        assert calendar.next_fire(utc(2026, 1, 7, 12)) == utc(2026, 1, 12)

    def test_a_time_zone_that_is_not_a_string_is_refused(self) -> None:
        with pytest.raises(InvalidScheduleError, match="time zone must be an IANA name, not 1"):
            CronCalendar("0 3 * * *", 1)  # type: ignore[arg-type]


class TestASchedule:
    def test_a_moment_in_another_zone_is_the_same_moment(self) -> None:
        calendar = CronCalendar("0 * * * *", "Europe/Paris")
        in_paris = datetime(2026, 10, 25, 2, 59, 59, tzinfo=ZoneInfo("Europe/Paris"))
        assert calendar.latest_fire(in_paris) == calendar.latest_fire(in_paris.astimezone(UTC))

    def test_on_a_calendar_keys_each_fire_time_s_item(self) -> None:
        schedule = WorkSchedule(TokenCleanup(), cron="0 3 * * *", dedup_key="nightly")
        assert schedule.fire_dedup_key(utc(2026, 5, 1, 3)) == "nightly@2026-05-01T03:00:00+00:00"
        assert (schedule.calendar.expression, schedule.calendar.timezone) == ("0 3 * * *", "UTC")
        assert schedule.overlap is Overlap.SKIP

    @pytest.mark.parametrize(
        ("fields", "message"),
        [
            ({}, "give exactly one of interval and cron"),
            (
                {"interval": timedelta(hours=1), "cron": "@daily"},
                "give exactly one of interval and cron",
            ),
            ({"interval": timedelta(0)}, "interval must be a positive timedelta, not "),
            ({"interval": 5}, "interval must be a positive timedelta, not 5"),
            (
                {"interval": timedelta(hours=1), "timezone": "Europe/Paris"},
                "timezone and overlap are for cron schedules",
            ),
            (
                {"interval": timedelta(hours=1), "overlap": Overlap.QUEUE},
                "timezone and overlap are for cron schedules",
            ),
            ({"cron": "0 3 * *"}, "cron expression '0 3 * *' cannot be read"),
            ({"cron": "@daily", "timezone": "Nowhere/Land"}, "unknown time zone 'Nowhere/Land'"),
            ({"cron": "@daily", "overlap": "sometimes"}, "overlap must be one of skip, queue"),
        ],
    )
    def test_that_cannot_hold_is_refused_naming_its_kind(
        self, fields: dict[str, object], message: str
    ) -> None:
        with pytest.raises(InvalidScheduleError) as raised:
            WorkSchedule(TokenCleanup(), **fields)  # type: ignore[arg-type]
        assert str(raised.value).startswith(f"schedule of 'token_cleanup': {message}")
        assert isinstance(raised.value, WorkQueueError)
        assert isinstance(raised.value, ValueError)

    def test_on_an_interval_has_no_calendar(self) -> None:
        schedule = WorkSchedule(TokenCleanup(), interval=timedelta(hours=1))
        with pytest.raises(InvalidScheduleError, match="'token_cleanup' has no cron expression"):
            schedule.calendar  # noqa: B018

    def test_whose_fire_time_keys_would_be_too_long_is_refused(self) -> None:
        with pytest.raises(InvalidDedupKeyError, match="dedup key is 201 characters long"):
            WorkSchedule(TokenCleanup(), cron="@daily", dedup_key="k" * 175)

    def test_with_a_fire_time_key_at_the_limit_is_accepted(self) -> None:
        schedule = WorkSchedule(TokenCleanup(), cron="@daily", dedup_key="k" * 174)
        assert len(schedule.fire_dedup_key(utc(2026, 1, 1))) == 200
