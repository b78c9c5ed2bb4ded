"""The admin view draws the fleet's activity: throughput as stacked bars, depth as lines.

The minutes the store keeps are summed into the window's buckets (a minute each over
the last hour, a quarter hour each over the last day), and each chart is an inline
SVG the page shows as it is: numbers and times written for people, each bucket's
numbers on hover, every text escaped.
"""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from markupsafe import Markup

from workqueue.domain.activity import MinuteActivity
from workqueue.entrypoints.web.charts import (
    Bucket,
    ChartWindow,
    WindowShape,
    buckets,
    chart_window,
    depth_svg,
    nice_maximum,
    throughput_svg,
)
from workqueue.entrypoints.web.reads import BadQueryError

NOW = datetime(2026, 1, 1, 12, 7, 30, tzinfo=UTC)
SVG = "{http://www.w3.org/2000/svg}"
TIMES_OF_THE_HOUR = ["11:08 UTC", "11:23 UTC", "11:38 UTC", "11:53 UTC", "12:08 UTC"]
TIMES_OF_THE_DAY = ["12:15 UTC", "18:15 UTC", "00:15 UTC", "06:15 UTC", "12:15 UTC"]
HOSTILE = '<b>&"x"\'</b>'

Chart = Callable[..., Markup]


def at(hour: int, minute: int, *, second: int = 0, micro: int = 0) -> datetime:
    """A moment of the day the tests draw (2026-01-01, in UTC)."""
    return datetime(2026, 1, 1, hour, minute, second, micro, tzinfo=UTC)


def yesterday(hour: int, minute: int) -> datetime:
    return at(hour, minute) - timedelta(days=1)


def row(minute: datetime, **fields: int | None) -> MinuteActivity:
    return MinuteActivity(minute=minute, kind=None, **fields)  # type: ignore[arg-type]


def hour_of(*rows: MinuteActivity) -> list[Bucket]:
    return buckets(rows, end=NOW, window=ChartWindow.HOUR)


def day_of(*rows: MinuteActivity) -> list[Bucket]:
    return buckets(rows, end=NOW, window=ChartWindow.DAY)


def drawn(chart: Markup) -> ElementTree.Element:
    """The chart's root element: the markup is well-formed XML, or this fails."""
    root = ElementTree.fromstring(str(chart))
    assert root.tag == f"{SVG}svg"
    return root


def shapes(root: ElementTree.Element, tag: str, name: str) -> list[dict[str, str]]:
    """The attributes of every ``tag`` of class ``name``, in drawing order (class left out)."""
    return [
        {key: value for key, value in element.attrib.items() if key != "class"}
        for element in root.iter(f"{SVG}{tag}")
        if element.get("class") == name
    ]


def texts(root: ElementTree.Element, name: str) -> list[str]:
    return [
        element.text or "" for element in root.iter(f"{SVG}text") if element.get("class") == name
    ]


def hovers(root: ElementTree.Element) -> list[str]:
    """The hover text of each bucket drawn."""
    return [
        group.findtext(f"{SVG}title") or ""
        for group in root.iter(f"{SVG}g")
        if group.get("class") == "bucket"
    ]


def bars(root: ElementTree.Element) -> list[list[tuple[str, dict[str, str]]]]:
    """Each bucket's shapes, by class: its hover column first, then its bars bottom up."""
    return [
        [(rect.get("class", ""), dict(rect.attrib)) for rect in group.iter(f"{SVG}rect")]
        for group in root.iter(f"{SVG}g")
        if group.get("class") == "bucket"
    ]


def rect(x: str, y: str, width: str, height: str) -> dict[str, str]:
    return {"x": x, "y": y, "width": width, "height": height}


class TestChoosingAWindow:
    def test_no_window_asked_for_is_the_last_hour(self) -> None:
        assert chart_window(None) is ChartWindow.HOUR

    @pytest.mark.parametrize(
        ("text", "window"), [("hour", ChartWindow.HOUR), ("day", ChartWindow.DAY)]
    )
    def test_a_window_is_asked_for_by_name(self, text: str, window: ChartWindow) -> None:
        assert chart_window(text) is window

    @pytest.mark.parametrize("text", ["week", "", "Day", " hour", "60"])
    def test_any_other_window_is_a_bad_query_naming_the_ones_there_are(self, text: str) -> None:
        with pytest.raises(BadQueryError) as raised:
            chart_window(text)
        assert str(raised.value) == "window must be hour or day"

    def test_the_hour_is_60_buckets_of_a_minute_and_the_day_96_of_a_quarter_hour(self) -> None:
        assert ChartWindow.HOUR.value == WindowShape("hour", 60, timedelta(minutes=1), "minute")
        assert ChartWindow.DAY.value == WindowShape("day", 96, timedelta(minutes=15), "15 minutes")


class TestSummingTheMinutesIntoBuckets:
    def test_the_hour_is_the_60_minutes_up_to_the_one_that_holds_its_end(self) -> None:
        found = hour_of()

        assert len(found) == 60
        assert found[0] == Bucket(at(11, 8), at(11, 9))
        assert found[-1] == Bucket(at(12, 7), at(12, 8))
        assert all(later.start == earlier.end for earlier, later in itertools.pairwise(found))

    def test_the_day_is_the_96_quarter_hours_up_to_the_one_that_holds_its_end(self) -> None:
        found = day_of()

        assert len(found) == 96
        assert found[0] == Bucket(yesterday(12, 15), yesterday(12, 30))
        assert found[-1] == Bucket(at(12, 0), at(12, 15))

    @pytest.mark.parametrize(
        ("end", "last"),
        [
            (at(12, 7), at(12, 7)),
            (at(12, 7, second=59, micro=999999), at(12, 7)),
            (at(12, 8), at(12, 8)),
        ],
    )
    def test_an_hours_buckets_start_on_whole_minutes(self, end: datetime, last: datetime) -> None:
        assert buckets([], end=end, window=ChartWindow.HOUR)[-1].start == last

    @pytest.mark.parametrize(
        ("end", "last"),
        [
            (at(12, 0), at(12, 0)),
            (at(12, 14, second=59, micro=999999), at(12, 0)),
            (at(12, 15), at(12, 15)),
            (at(12, 44), at(12, 30)),
        ],
    )
    def test_a_days_buckets_start_on_whole_quarter_hours(
        self, end: datetime, last: datetime
    ) -> None:
        assert buckets([], end=end, window=ChartWindow.DAY)[-1].start == last

    def test_an_end_in_another_zone_still_has_buckets_in_utc(self) -> None:
        plus_two = timezone(timedelta(hours=2))
        end = datetime(2026, 1, 1, 14, 7, 30, tzinfo=plus_two)

        found = buckets([], end=end, window=ChartWindow.HOUR)

        assert found[-1] == Bucket(at(12, 7), at(12, 8))
        assert found[-1].start.utcoffset() == timedelta(0)
        assert found[-1].end.utcoffset() == timedelta(0)

    def test_an_end_without_a_zone_is_refused(self) -> None:
        with pytest.raises(ValueError) as raised:
            buckets([], end=datetime(2026, 1, 1, 12, 7), window=ChartWindow.HOUR)
        assert str(raised.value) == (
            "a chart's end needs a time with a zone, not datetime.datetime(2026, 1, 1, 12, 7)"
        )

    def test_the_items_that_ended_in_a_quarter_hour_are_summed(self) -> None:
        found = day_of(
            row(at(11, 45), succeeded=3, failed=1, retried=2),
            row(at(11, 52), succeeded=10, failed=20, retried=30),
            row(at(11, 59), succeeded=100),
            row(at(12, 0), succeeded=7),
        )

        assert found[-2] == Bucket(at(11, 45), at(12, 0), succeeded=113, failed=21, retried=32)
        assert found[-1] == Bucket(at(12, 0), at(12, 15), succeeded=7)

    def test_a_minute_is_its_own_bucket_over_the_hour(self) -> None:
        found = hour_of(
            row(at(12, 5), succeeded=4, failed=5, retried=6, queued=7, delayed=8, running=9)
        )

        assert found[57] == Bucket(at(12, 5), at(12, 6), 4, 5, 6, 7, 8, 9)
        assert [bucket for index, bucket in enumerate(found) if index != 57] == [
            Bucket(at(11, 8) + timedelta(minutes=index), at(11, 9) + timedelta(minutes=index))
            for index in range(60)
            if index != 57
        ]

    def test_a_minute_at_the_windows_start_is_in_and_one_a_microsecond_earlier_is_out(self) -> None:
        found = hour_of(
            row(at(11, 7, second=59, micro=999999), succeeded=1000),
            row(at(11, 8), succeeded=1),
            row(at(11, 8, second=30), failed=2),
        )

        assert found[0] == Bucket(at(11, 8), at(11, 9), succeeded=1, failed=2)
        assert sum(bucket.succeeded for bucket in found) == 1

    def test_a_minute_before_the_window_does_not_stop_the_counting_of_the_rest(self) -> None:
        found = day_of(row(at(9, 0), succeeded=5), row(at(12, 1), succeeded=1))

        assert found[-1].succeeded == 1

    def test_a_minute_after_the_last_bucket_is_left_out_and_one_just_before_its_end_is_in(
        self,
    ) -> None:
        found = hour_of(
            row(at(12, 7, second=59, micro=999999), retried=3),
            row(at(12, 8), retried=1000),
            row(at(13, 0), retried=1000),
        )

        assert found[-1] == Bucket(at(12, 7), at(12, 8), retried=3)
        assert sum(bucket.retried for bucket in found) == 3

    def test_a_minute_after_the_end_but_in_its_bucket_is_counted(self) -> None:
        found = day_of(row(at(12, 10), succeeded=2, queued=1))

        assert found[-1] == Bucket(at(12, 0), at(12, 15), succeeded=2, queued=1)

    def test_a_buckets_depth_is_the_last_sample_taken_in_it(self) -> None:
        found = day_of(
            row(at(12, 3), delayed=7),
            row(at(12, 1), queued=5, delayed=1, running=2),
            row(at(12, 2), queued=9, running=0),
            row(at(12, 4), succeeded=1),
        )

        assert found[-1] == Bucket(
            at(12, 0), at(12, 15), succeeded=1, queued=9, delayed=7, running=0
        )

    def test_a_bucket_without_a_sample_has_no_depth(self) -> None:
        found = day_of(row(at(12, 1), succeeded=2), row(at(11, 50), queued=0, delayed=0, running=0))

        assert (found[-1].queued, found[-1].delayed, found[-1].running) == (None, None, None)
        assert (found[-2].queued, found[-2].delayed, found[-2].running) == (0, 0, 0)


@pytest.mark.parametrize(
    ("peak", "maximum"),
    [
        (0, 1),
        (1, 1),
        (2, 2),
        (3, 5),
        (5, 5),
        (6, 10),
        (7, 10),
        (10, 10),
        (11, 20),
        (20, 20),
        (21, 50),
        (50, 50),
        (51, 100),
        (70, 100),
        (100, 100),
        (1234, 2000),
        (9999, 10000),
    ],
)
def test_the_y_axis_goes_up_to_the_least_1_2_or_5_times_a_power_of_ten_that_holds_the_peak(
    peak: int, maximum: int
) -> None:
    top = nice_maximum(peak)

    assert top == maximum
    assert type(top) is int


class TestTheThroughputChart:
    def test_its_title_and_label_say_each_total_over_the_window_with_separators(self) -> None:
        root = drawn(
            throughput_svg(
                hour_of(
                    row(at(11, 30), succeeded=1000, failed=2),
                    row(at(12, 0), succeeded=234, failed=3, retried=2),
                ),
                now=NOW,
            )
        )

        summary = "Items ended per minute over the last hour: 1,234 succeeded, 5 failed, 2 retried"
        assert root.findtext(f"{SVG}title") == summary
        assert root.get("aria-label") == summary
        assert root.get("data-total") == "1241"
        assert texts(root, "legend") == ["1,234 succeeded", "5 failed", "2 retried"]

    def test_the_day_says_its_buckets_are_quarter_hours(self) -> None:
        root = drawn(throughput_svg(day_of(row(at(12, 0), failed=1)), now=NOW))

        assert root.get("aria-label") == (
            "Items ended per 15 minutes over the last day: 0 succeeded, 1 failed, 0 retried"
        )

    def test_it_is_an_inline_svg_that_scales_to_the_page(self) -> None:
        root = drawn(throughput_svg(hour_of(), now=NOW))

        assert root.attrib == {
            "class": "chart throughput",
            "viewBox": "0 0 568 212",
            "width": "100%",
            "role": "img",
            "aria-label": "Items ended per minute over the last hour: nothing yet",
            "data-total": "0",
        }

    def test_a_bucket_is_a_stack_of_succeeded_failed_and_retried_bars(self) -> None:
        root = drawn(
            throughput_svg(hour_of(row(at(12, 5), succeeded=60, failed=30, retried=10)), now=NOW)
        )

        assert bars(root) == [
            [
                ("hit", {"class": "hit", **rect("504", "28", "8", "160")}),
                ("succeeded", {"class": "succeeded", **rect("504", "92", "7", "96")}),
                ("failed", {"class": "failed", **rect("504", "44", "7", "48")}),
                ("retried", {"class": "retried", **rect("504", "28", "7", "16")}),
            ]
        ]
        assert hovers(root) == ["12:05\u201312:06 UTC: 60 succeeded, 30 failed, 10 retried"]

    def test_a_series_with_no_items_in_a_bucket_has_no_bar_there(self) -> None:
        root = drawn(throughput_svg(hour_of(row(at(11, 8), failed=3, retried=2)), now=NOW))

        assert bars(root) == [
            [
                ("hit", {"class": "hit", **rect("48", "28", "8", "160")}),
                ("failed", {"class": "failed", **rect("48", "92", "7", "96")}),
                ("retried", {"class": "retried", **rect("48", "28", "7", "64")}),
            ]
        ]

    def test_a_day_draws_its_quarter_hours_narrower(self) -> None:
        root = drawn(throughput_svg(day_of(row(at(11, 50), succeeded=2)), now=NOW))

        assert bars(root) == [
            [
                ("hit", {"class": "hit", **rect("518", "28", "5", "160")}),
                ("succeeded", {"class": "succeeded", **rect("518", "28", "4", "160")}),
            ]
        ]
        assert hovers(root) == ["11:45\u201312:00 UTC: 2 succeeded, 0 failed, 0 retried"]

    def test_only_the_buckets_with_items_are_drawn_a_single_item_too(self) -> None:
        root = drawn(
            throughput_svg(
                hour_of(row(at(11, 9), succeeded=1), row(at(11, 11), retried=4)), now=NOW
            )
        )

        assert bars(root) == [
            [
                ("hit", {"class": "hit", **rect("56", "28", "8", "160")}),
                ("succeeded", {"class": "succeeded", **rect("56", "156", "7", "32")}),
            ],
            [
                ("hit", {"class": "hit", **rect("72", "28", "8", "160")}),
                ("retried", {"class": "retried", **rect("72", "60", "7", "128")}),
            ],
        ]

    def test_a_small_bar_beside_a_large_one_is_drawn_to_a_hundredth(self) -> None:
        root = drawn(
            throughput_svg(
                hour_of(row(at(11, 8), succeeded=15000), row(at(11, 9), failed=1)), now=NOW
            )
        )

        assert shapes(root, "rect", "failed")[1:] == [rect("56", "187.99", "7", "0.01")]
        assert shapes(root, "rect", "succeeded")[1:] == [rect("48", "68", "7", "120")]

    def test_the_bucket_now_is_in_is_counted_so_far(self) -> None:
        found = hour_of(row(at(12, 7), succeeded=1))

        so_far = drawn(throughput_svg(found, now=NOW))
        ended = drawn(throughput_svg(found, now=at(12, 8)))

        assert hovers(so_far) == ["12:07\u201312:08 UTC, so far: 1 succeeded, 0 failed, 0 retried"]
        assert hovers(ended) == ["12:07\u201312:08 UTC: 1 succeeded, 0 failed, 0 retried"]

    @pytest.mark.parametrize(
        ("peak", "lines", "numbers"),
        [
            (1, ["188", "28"], ["0", "1"]),
            (2, ["188", "108", "28"], ["0", "1", "2"]),
            (4, ["188", "28"], ["0", "5"]),
            (7, ["188", "108", "28"], ["0", "5", "10"]),
            (19, ["188", "108", "28"], ["0", "10", "20"]),
            (3000, ["188", "108", "28"], ["0", "2,500", "5,000"]),
            (12345, ["188", "108", "28"], ["0", "10,000", "20,000"]),
        ],
    )
    def test_the_y_axis_has_a_line_at_0_the_top_and_the_middle_unless_it_falls_between_two_counts(
        self, peak: int, lines: list[str], numbers: list[str]
    ) -> None:
        root = drawn(throughput_svg(hour_of(row(at(11, 30), succeeded=peak)), now=NOW))

        assert shapes(root, "line", "grid") == [
            {"x1": "48", "y1": y, "x2": "528", "y2": y} for y in lines
        ]
        assert texts(root, "number") == numbers
        assert shapes(root, "text", "number") == [
            {"x": "42", "y": str(int(y) + 4), "text-anchor": "end"} for y in lines
        ]

    def test_the_x_axis_says_the_time_in_utc_at_each_quarter_of_the_window(self) -> None:
        hour = drawn(throughput_svg(hour_of(), now=NOW))
        day = drawn(throughput_svg(day_of(), now=NOW))

        assert texts(hour, "time") == TIMES_OF_THE_HOUR
        assert texts(day, "time") == TIMES_OF_THE_DAY
        assert shapes(hour, "text", "time") == [
            {"x": x, "y": "204", "text-anchor": "middle"}
            for x in ("48", "168", "288", "408", "528")
        ]

    def test_the_legend_has_a_swatch_of_each_series_colour_before_its_total(self) -> None:
        root = drawn(throughput_svg(hour_of(), now=NOW))

        assert [shapes(root, "rect", name) for name in ("succeeded", "failed", "retried")] == [
            [rect("48", "6", "10", "10")],
            [rect("208", "6", "10", "10")],
            [rect("368", "6", "10", "10")],
        ]
        assert shapes(root, "text", "legend") == [
            {"x": x, "y": "16", "text-anchor": "start"} for x in ("62", "222", "382")
        ]

    def test_an_empty_window_draws_the_axes_and_says_nothing_yet(self) -> None:
        root = drawn(throughput_svg(day_of(), now=NOW))

        assert list(root.itertext()) == [
            "Items ended per 15 minutes over the last day: nothing yet",
            "0",
            "1",
            *TIMES_OF_THE_DAY,
            "0 succeeded",
            "0 failed",
            "0 retried",
            "nothing yet",
        ]
        assert shapes(root, "text", "nothing") == [
            {"x": "288", "y": "108", "text-anchor": "middle"}
        ]
        assert hovers(root) == []
        assert len(shapes(root, "line", "grid")) == 2

    def test_it_writes_nothing_but_its_title_axes_legend_and_hovers(self) -> None:
        root = drawn(throughput_svg(hour_of(row(at(12, 0), succeeded=2, failed=1)), now=NOW))

        assert list(root.itertext()) == [
            "Items ended per minute over the last hour: 2 succeeded, 1 failed, 0 retried",
            "0",
            "5",
            *TIMES_OF_THE_HOUR,
            "2 succeeded",
            "1 failed",
            "0 retried",
            "12:00\u201312:01 UTC: 2 succeeded, 1 failed, 0 retried",
        ]


class TestTheDepthChart:
    def test_its_title_label_and_legend_say_the_latest_sample_of_each(self) -> None:
        root = drawn(
            depth_svg(
                hour_of(
                    row(at(11, 30), queued=9000, delayed=4, running=2),
                    row(at(12, 0), queued=1234, running=3),
                    row(at(12, 5), succeeded=1),
                ),
                now=NOW,
            )
        )

        summary = "Queue depth over the last hour, latest: 1,234 queued, 4 delayed, 3 running"
        assert root.findtext(f"{SVG}title") == summary
        assert root.get("aria-label") == summary
        assert root.get("data-latest") == "1234,4,3"
        assert texts(root, "legend") == ["1,234 queued", "4 delayed", "3 running"]
        assert shapes(root, "rect", "queued") == [rect("48", "6", "10", "10")]
        assert shapes(root, "text", "legend")[2] == {"x": "382", "y": "16", "text-anchor": "start"}

    def test_a_series_never_sampled_has_no_latest_value(self) -> None:
        root = drawn(depth_svg(day_of(row(at(12, 0), queued=0)), now=NOW))

        assert root.get("aria-label") == (
            "Queue depth over the last day, latest: 0 queued, \u2013 delayed, \u2013 running"
        )
        assert root.get("data-latest") == "0,,"
        assert texts(root, "legend") == ["0 queued", "\u2013 delayed", "\u2013 running"]

    def test_it_is_an_inline_svg_that_scales_to_the_page(self) -> None:
        root = drawn(depth_svg(hour_of(), now=NOW))

        assert root.attrib == {
            "class": "chart depth",
            "viewBox": "0 0 568 212",
            "width": "100%",
            "role": "img",
            "aria-label": "Queue depth over the last hour: nothing yet",
            "data-latest": ",,",
        }

    def test_each_depth_is_a_line_through_the_middle_of_its_buckets(self) -> None:
        root = drawn(
            depth_svg(
                hour_of(
                    row(at(11, 8), queued=10, delayed=0, running=1),
                    row(at(11, 9), queued=5, delayed=2, running=1),
                    row(at(11, 10), queued=0, delayed=2, running=1),
                ),
                now=NOW,
            )
        )

        assert shapes(root, "polyline", "queued") == [{"points": "52,28 60,108 68,188"}]
        assert shapes(root, "polyline", "delayed") == [{"points": "52,188 60,156 68,156"}]
        assert shapes(root, "polyline", "running") == [{"points": "52,172 60,172 68,172"}]

    def test_a_line_has_a_gap_where_there_is_no_sample(self) -> None:
        root = drawn(
            depth_svg(
                day_of(
                    row(yesterday(12, 15), queued=1),
                    row(yesterday(12, 30), queued=2),
                    row(at(11, 30), queued=1),
                    row(at(11, 45), queued=2),
                    row(at(12, 0), queued=2),
                ),
                now=NOW,
            )
        )

        assert shapes(root, "polyline", "queued") == [
            {"points": "50.5,108 55.5,28"},
            {"points": "515.5,108 520.5,28 525.5,28"},
        ]
        assert shapes(root, "polyline", "delayed") == []

    def test_a_lone_sample_is_a_line_from_its_point_to_itself(self) -> None:
        root = drawn(
            depth_svg(hour_of(row(at(11, 30), running=1), row(at(11, 32), running=1)), now=NOW)
        )

        assert shapes(root, "polyline", "running") == [
            {"points": "228,28 228,28"},
            {"points": "244,28 244,28"},
        ]

    def test_each_sampled_bucket_says_its_depth_on_hover(self) -> None:
        root = drawn(
            depth_svg(
                hour_of(
                    row(at(11, 8), succeeded=1),
                    row(at(11, 9), running=2),
                    row(at(11, 10), succeeded=1),
                    row(at(12, 7), queued=1000, delayed=0, running=1),
                ),
                now=NOW,
            )
        )

        assert hovers(root) == [
            "11:09\u201311:10 UTC: \u2013 queued, \u2013 delayed, 2 running",
            "12:07\u201312:08 UTC, so far: 1,000 queued, 0 delayed, 1 running",
        ]
        assert bars(root) == [
            [("hit", {"class": "hit", **rect("56", "28", "8", "160")})],
            [("hit", {"class": "hit", **rect("520", "28", "8", "160")})],
        ]

    def test_its_y_axis_goes_up_to_the_round_maximum_of_every_sample(self) -> None:
        root = drawn(
            depth_svg(
                hour_of(row(at(11, 8), queued=3, delayed=70), row(at(11, 9), running=8)), now=NOW
            )
        )

        assert texts(root, "number") == ["0", "50", "100"]
        assert shapes(root, "polyline", "delayed") == [{"points": "52,76 52,76"}]

    def test_an_empty_window_draws_the_axes_and_says_nothing_yet(self) -> None:
        root = drawn(depth_svg(hour_of(row(at(12, 0), succeeded=5)), now=NOW))

        assert list(root.itertext()) == [
            "Queue depth over the last hour: nothing yet",
            "0",
            "1",
            *TIMES_OF_THE_HOUR,
            "\u2013 queued",
            "\u2013 delayed",
            "\u2013 running",
            "nothing yet",
        ]
        assert shapes(root, "text", "nothing") == [
            {"x": "288", "y": "108", "text-anchor": "middle"}
        ]
        assert root.find(f"{SVG}polyline") is None

    def test_it_writes_nothing_but_its_title_axes_legend_and_hovers(self) -> None:
        root = drawn(
            depth_svg(day_of(row(at(12, 0), queued=1, delayed=1, running=1)), now=at(13, 0))
        )

        assert list(root.itertext()) == [
            "Queue depth over the last day, latest: 1 queued, 1 delayed, 1 running",
            "0",
            "1",
            *TIMES_OF_THE_DAY,
            "1 queued",
            "1 delayed",
            "1 running",
            "12:00\u201312:15 UTC: 1 queued, 1 delayed, 1 running",
        ]


@pytest.mark.parametrize("chart", [throughput_svg, depth_svg])
class TestWhatAChartDraws:
    def test_no_buckets_are_no_window(self, chart: Chart) -> None:
        with pytest.raises(ValueError) as raised:
            chart([], now=NOW)
        assert (
            str(raised.value) == "a chart draws the buckets of a window, as buckets() returns them"
        )

    def test_part_of_a_window_is_no_window(self, chart: Chart) -> None:
        with pytest.raises(ValueError, match=r"as buckets\(\) returns them"):
            chart(hour_of()[1:], now=NOW)

    def test_as_many_buckets_as_a_window_of_another_length_are_no_window(
        self, chart: Chart
    ) -> None:
        quarters = [
            Bucket(
                at(0, 0) + timedelta(minutes=15 * index), at(0, 15) + timedelta(minutes=15 * index)
            )
            for index in range(60)
        ]
        with pytest.raises(ValueError, match="buckets"):
            chart(quarters, now=NOW)

    def test_a_window_whose_first_bucket_is_too_long_is_no_window(self, chart: Chart) -> None:
        found = hour_of()
        found[0] = replace(found[0], start=found[0].start - timedelta(minutes=1))
        with pytest.raises(ValueError, match="buckets"):
            chart(found, now=NOW)

    def test_both_windows_are_drawn(self, chart: Chart) -> None:
        assert drawn(chart(hour_of(), now=NOW)).get("viewBox") == "0 0 568 212"
        assert drawn(chart(day_of(), now=NOW)).get("viewBox") == "0 0 568 212"


class Hostile(int):
    """A count that writes itself as markup: the charts must show it as text."""

    def __format__(self, spec: str) -> str:
        return HOSTILE

    def __str__(self) -> str:
        return HOSTILE

    __repr__ = __str__


class TestEscaping:
    def test_a_throughput_chart_shows_markup_in_its_numbers_as_text(self) -> None:
        found = hour_of()
        found[-1] = replace(found[-1], succeeded=Hostile(1))
        chart = throughput_svg(found, now=NOW)

        assert "<b>" not in chart
        root = drawn(chart)
        assert hovers(root) == [
            f"12:07\u201312:08 UTC, so far: {HOSTILE} succeeded, 0 failed, 0 retried"
        ]

    def test_a_depth_chart_shows_markup_in_its_numbers_as_text(self) -> None:
        found = hour_of()
        found[-1] = replace(found[-1], queued=Hostile(1), delayed=Hostile(1), running=Hostile(1))
        chart = depth_svg(found, now=NOW)

        assert "<b>" not in chart
        root = drawn(chart)
        assert root.get("data-latest") == f"{HOSTILE},{HOSTILE},{HOSTILE}"
        assert root.get("aria-label") == (
            f"Queue depth over the last hour, latest: {HOSTILE} queued, {HOSTILE} delayed,"
            f" {HOSTILE} running"
        )
        assert root.findtext(f"{SVG}title") == root.get("aria-label")
        assert texts(root, "legend") == [
            f"{HOSTILE} queued",
            f"{HOSTILE} delayed",
            f"{HOSTILE} running",
        ]
