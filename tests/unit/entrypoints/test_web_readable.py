"""The pages write for people: counts with separators, moments relative to the view's clock
with the exact time on hover, colour only on counts that are there, progress as a bar."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from markupsafe import Markup
from pydantic import JsonValue

from workqueue.entrypoints.web.readable import (
    ProgressBar,
    count_class,
    due,
    filled,
    number,
    progress_bar,
    progress_rest,
    relative_time,
    thousands,
    when,
)
from workqueue.entrypoints.web.templating import environment

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1,000"),
        (20000, "20,000"),
        (1234567, "1,234,567"),
        (-4500, "-4,500"),
    ],
)
def test_a_count_has_a_comma_between_each_group_of_three_digits(count: int, text: str) -> None:
    assert thousands(count) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(1234, "1,234"), (1234.0, "1,234"), (1234.5, "1,234.5"), (0.25, "0.25"), (-2.0, "-2")],
)
def test_a_number_keeps_its_fraction_only_when_it_has_one(value: float, text: str) -> None:
    assert number(value) == text


@pytest.mark.parametrize(
    ("offset", "text"),
    [
        (0, "now"),
        (0.999, "now"),
        (-0.999, "now"),
        (1, "in 1 s"),
        (-1, "1 s ago"),
        (-4.7, "4 s ago"),
        (59.9, "in 59 s"),
        (60, "in 1 min"),
        (-119, "1 min ago"),
        (180, "in 3 min"),
        (3599, "in 59 min"),
        (3600, "in 1 h"),
        (-7199, "1 h ago"),
        (86399, "in 23 h"),
        (86400, "in 1 d"),
        (-86400 * 3 - 5, "3 d ago"),
    ],
)
def test_a_moment_is_said_from_now_in_its_largest_whole_unit(offset: float, text: str) -> None:
    assert relative_time(NOW + timedelta(seconds=offset), NOW) == text


class TestWhen:
    def test_a_moment_is_a_time_element_with_the_exact_time_on_hover(self) -> None:
        shown = when("2026-01-01T11:59:56.250000Z", NOW)

        assert isinstance(shown, Markup)
        assert shown == (
            '<time datetime="2026-01-01T11:59:56.250000Z" '
            'title="2026-01-01T11:59:56.250000Z">3 s ago</time>'
        )

    def test_a_moment_ahead_is_said_as_in(self) -> None:
        assert when("2026-01-01T12:03:00Z", NOW) == (
            '<time datetime="2026-01-01T12:03:00Z" title="2026-01-01T12:03:00Z">in 3 min</time>'
        )

    def test_no_moment_is_a_dash(self) -> None:
        assert when(None, NOW) == "\u2013"


class TestDue:
    def test_an_item_waiting_for_its_run_at_says_when(self) -> None:
        assert due("2026-01-01T12:00:05Z", NOW) == (
            '<time datetime="2026-01-01T12:00:05Z" title="2026-01-01T12:00:05Z">in 5 s</time>'
        )

    @pytest.mark.parametrize("run_at", ["2026-01-01T12:00:00Z", "2026-01-01T11:00:00Z"])
    def test_an_item_whose_run_at_has_come_is_due_now(self, run_at: str) -> None:
        assert due(run_at, NOW) == "now"


class TestCountClass:
    @pytest.mark.parametrize("status", ["queued", "running", "failed", "cancelled", "succeeded"])
    def test_a_zero_is_muted_whatever_its_status(self, status: str) -> None:
        assert count_class(status, 0) == "zero"

    @pytest.mark.parametrize(("status", "count"), [("failed", 1), ("running", 20000)])
    def test_a_count_that_is_there_has_its_status_colour(self, status: str, count: int) -> None:
        assert count_class(status, count) == f"status-{status}"


class TestProgressBar:
    @pytest.mark.parametrize(
        ("progress", "bar"),
        [
            ({"done": 1234, "total": 20000}, ProgressBar(1234, 20000, 6, "1,234 / 20,000")),
            ({"done": 0, "total": 1, "stage": "fetch"}, ProgressBar(0, 1, 0, "0 / 1")),
            ({"done": 2.5, "total": 10.0}, ProgressBar(2.5, 10.0, 25, "2.5 / 10")),
            ({"done": 30, "total": 20}, ProgressBar(30, 20, 100, "30 / 20")),
        ],
    )
    def test_numeric_done_and_a_total_above_zero_draw_a_bar(
        self, progress: JsonValue, bar: ProgressBar
    ) -> None:
        assert progress_bar(progress) == bar

    @pytest.mark.parametrize(
        "progress",
        [
            None,
            [1, 2],
            "half",
            12,
            {"done": 3},
            {"total": 3},
            {"done": "3", "total": 10},
            {"done": 3, "total": "10"},
            {"done": True, "total": 10},
            {"done": 3, "total": True},
            {"done": 3, "total": 0},
            {"done": 3, "total": -10},
            {"done": float("nan"), "total": 10},
            {"done": 3, "total": float("inf")},
            {"pages_done": 3, "pages_total": 10},
        ],
    )
    def test_any_other_report_draws_none(self, progress: JsonValue) -> None:
        assert progress_bar(progress) is None

    def test_the_bar_is_filled_by_the_share_done_rounded_down(self) -> None:
        assert filled(1234, 20000) == 6
        assert filled(199, 200) == 99
        assert filled(1, 3) == 33
        assert filled(20000, 20000) == 100

    def test_a_bar_past_its_total_is_full_and_one_below_zero_empty(self) -> None:
        assert filled(30, 20) == 100
        assert filled(-5, 20) == 0

    def test_the_bar_says_both_numbers_with_separators(self) -> None:
        assert progress_bar({"done": 1234, "total": 20000}) == ProgressBar(
            1234, 20000, 6, "1,234 / 20,000"
        )
        assert progress_bar({"done": 2.5, "total": 10.0}) == ProgressBar(2.5, 10.0, 25, "2.5 / 10")

    def test_the_rest_of_the_report_is_its_other_keys(self) -> None:
        report: dict[str, JsonValue] = {"done": 1, "total": 2, "stage": "fetch", "host": "a"}
        assert progress_rest(report) == {"stage": "fetch", "host": "a"}
        assert progress_rest({"done": 1, "total": 2}) == {}


class TestTheFilters:
    def render(self, source: str, **values: object) -> str:
        return environment().from_string(source).render(now=NOW, **values)

    def test_the_templates_have_every_filter(self) -> None:
        assert self.render("{{ 20000|thousands }}") == "20,000"
        assert self.render("{{ '2026-01-01T11:59:00Z'|when(now) }}") == (
            '<time datetime="2026-01-01T11:59:00Z" title="2026-01-01T11:59:00Z">1 min ago</time>'
        )
        assert self.render("{{ '2026-01-01T11:59:00Z'|due(now) }}") == "now"
        assert self.render("{{ 'failed'|count_class(0) }}") == "zero"
        assert self.render("{{ ({'done': 1, 'total': 4}|progress_bar).percent }}") == "25"
        assert (
            self.render("{{ {'done': 1, 'total': 4, 'x': 1}|progress_rest }}") == "{&#39;x&#39;: 1}"
        )
