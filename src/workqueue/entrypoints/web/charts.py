"""The admin view's two pictures of the fleet's activity, drawn on the server as inline SVG.

Throughput (items succeeded, failed and retried, as stacked bars) and queue depth
(queued, delayed and running, as lines) over the last hour or the last day, from
the minutes of :class:`~workqueue.domain.activity.MinuteActivity` the store keeps
(docs/adr/0040). Pure functions of their arguments: no I/O and no clock, the
window's end and "now" are the caller's, so a page draws the same picture on a
FakeClock every time.

- :func:`chart_window` reads the ``window`` query parameter: a
  :class:`ChartWindow`, the last hour in 60 buckets of a minute or the last day in
  96 buckets of a quarter hour.
- :func:`buckets` sums the rows into the window's buckets, aligned in UTC, the
  bucket holding ``end`` last; a bucket's depth is the last sample taken in it.
- :func:`throughput_svg` and :func:`depth_svg` draw the buckets as a
  self-contained ``<svg>`` (no script, no library): a y axis up to a round maximum
  (:func:`nice_maximum`), times in UTC below, a legend with each series' total or
  latest value, and each bucket's time and numbers on hover. Colours are the
  page's CSS classes (``static/web.css``). Every text is escaped, the root's
  ``data-`` attribute says what was drawn so a browser test sees the picture change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum

from markupsafe import Markup

from workqueue.domain.activity import MinuteActivity
from workqueue.entrypoints.web.readable import NO_VALUE, thousands
from workqueue.entrypoints.web.reads import BadQueryError

__all__ = [
    "Bucket",
    "ChartWindow",
    "WindowShape",
    "buckets",
    "chart_window",
    "depth_svg",
    "nice_maximum",
    "throughput_svg",
]


@dataclass(frozen=True, slots=True)
class WindowShape:
    """What a :class:`ChartWindow` is: ``count`` buckets of ``step`` each.

    :param text: its name in the query (``window=day``) and in the picture's title.
    :param per: the length of one bucket as the title says it (``per 15 minutes``).
    """

    text: str
    count: int
    step: timedelta
    per: str


class ChartWindow(Enum):
    """The stretch of time a chart shows, ending at the bucket that holds its end."""

    _value_: WindowShape

    HOUR = WindowShape("hour", 60, timedelta(minutes=1), "minute")
    DAY = WindowShape("day", 96, timedelta(minutes=15), "15 minutes")


@dataclass(frozen=True, slots=True)
class Bucket:
    """The activity from ``start`` (included) to ``end`` (excluded).

    The counts are the items that ended in it; the depth is the last sample taken
    in it of each of ``queued``, ``delayed`` and ``running`` (None: no sample).
    """

    start: datetime
    end: datetime
    succeeded: int = 0
    failed: int = 0
    retried: int = 0
    queued: int | None = None
    delayed: int | None = None
    running: int | None = None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""Buckets are aligned on whole steps from here: whole minutes and quarter hours in UTC."""

_ENDED = ("succeeded", "failed", "retried")
_DEPTH = ("queued", "delayed", "running")
"""The series, bottom to top of a bar and in the legend; each is its CSS class."""

# The picture, in the viewBox's units: the plot, a legend above it and the times below.
_LEFT = 48
_TOP = 28
_PLOT_WIDTH = 480  # a whole number of units per bucket in both windows (8 and 5)
_PLOT_HEIGHT = 160
_BOTTOM = _TOP + _PLOT_HEIGHT
_WIDTH = _LEFT + _PLOT_WIDTH + 40  # room for half of the last time's label
_HEIGHT = _BOTTOM + 24
_GAP = 1  # between two bars
_TICKS = 4  # times written below: at the start, every quarter of the window and the end
_TIME_BASELINE = _BOTTOM + 16
_NUMBER_SHIFT = 4  # a y label's baseline below its grid line, to centre it on the line
_NUMBER_GAP = 6  # between a y label and the plot
_LEGEND_BASELINE = 16
_LEGEND_STEP = 160
_SWATCH = 10

_SVG = Markup(
    '<svg xmlns="http://www.w3.org/2000/svg" class="chart {name}" viewBox="0 0 {width} {height}"'
    ' width="100%" role="img" aria-label="{label}" data-{key}="{value}">'
    "<title>{label}</title>{body}</svg>"
)
_GRID = Markup('<line class="grid" x1="{x1}" y1="{y}" x2="{x2}" y2="{y}"/>')
_TEXT = Markup('<text class="{name}" x="{x}" y="{y}" text-anchor="{anchor}">{text}</text>')
_RECT = Markup('<rect class="{name}" x="{x}" y="{y}" width="{width}" height="{height}"/>')
_POLYLINE = Markup('<polyline class="{name}" points="{points}"/>')
_BUCKET = Markup('<g class="bucket"><title>{title}</title>{shapes}</g>')
_NOTHING = "nothing yet"


def chart_window(text: str | None) -> ChartWindow:
    """The window the ``window`` query parameter names: ``hour`` (also when None) or ``day``.

    :raises BadQueryError: if it names neither.
    """
    if text is None:
        return ChartWindow.HOUR
    for window in ChartWindow:
        if window.value.text == text:
            return window
    names = " or ".join(window.value.text for window in ChartWindow)
    raise BadQueryError(f"window must be {names}")


def _minute(row: MinuteActivity) -> datetime:
    return row.minute


def buckets(rows: Iterable[MinuteActivity], *, end: datetime, window: ChartWindow) -> list[Bucket]:
    """The window's buckets, oldest first, the one that holds ``end`` last.

    Each holds the sum of the ended items of the rows in it, and the last sample of
    each depth taken in it (rows in any order). Rows outside the buckets are ignored;
    one after ``end`` but in its bucket (a worker's clock a little ahead) is counted.

    :raises ValueError: if ``end`` is naive.
    """
    if end.utcoffset() is None:
        raise ValueError(f"a chart's end needs a time with a zone, not {end!r}")
    shape = window.value
    last = _EPOCH + (end - _EPOCH) // shape.step * shape.step  # the start of end's bucket
    first = last - shape.step * (shape.count - 1)
    ended = [[0, 0, 0] for _ in range(shape.count)]
    depth: list[list[int | None]] = [[None, None, None] for _ in range(shape.count)]
    for row in sorted(rows, key=_minute):
        index = (row.minute - first) // shape.step
        if not 0 <= index < shape.count:
            continue
        for position, count in enumerate((row.succeeded, row.failed, row.retried)):
            ended[index][position] += count
        for position, sample in enumerate((row.queued, row.delayed, row.running)):
            if sample is not None:
                depth[index][position] = sample
    return [
        Bucket(
            first + shape.step * index,
            first + shape.step * (index + 1),
            *ended[index],
            *depth[index],
        )
        for index in range(shape.count)
    ]


def nice_maximum(peak: int) -> int:
    """The top of a y axis for values up to ``peak``: a round number, 1, 2 or 5 times 10**n.

    The least such number from ``peak`` on; 1 when ``peak`` is 0.
    """
    magnitude: int = 10 ** (len(str(peak)) - 1)
    for step in (1, 2, 5):
        if step * magnitude >= peak:
            return step * magnitude
    return 10 * magnitude


def _shape_of(found: Sequence[Bucket]) -> WindowShape:
    for window in ChartWindow:
        shape = window.value
        if len(found) == shape.count and found[0].end - found[0].start == shape.step:
            return shape
    raise ValueError("a chart draws the buckets of a window, as buckets() returns them")


def _ended(bucket: Bucket) -> tuple[int, int, int]:
    return (bucket.succeeded, bucket.failed, bucket.retried)


def _depth(bucket: Bucket) -> tuple[int | None, int | None, int | None]:
    return (bucket.queued, bucket.delayed, bucket.running)


def _number(value: float) -> str:
    """A coordinate, to a hundredth of a unit, without trailing zeros."""
    return f"{round(value, 2):g}"


def _count(value: int | None) -> str:
    return NO_VALUE if value is None else thousands(value)


def _listing(values: Sequence[int | None], names: Sequence[str]) -> str:
    """``1,234 succeeded, 5 failed, 2 retried``: each value, then its series' name."""
    return ", ".join(f"{_count(values[index])} {name}" for index, name in enumerate(names))


def _when(bucket: Bucket, now: datetime) -> str:
    """A bucket's time for its hover (``12:00-12:15 UTC``, with an en dash), and ``so far``
    while ``now`` is in it."""
    so_far = ", so far" if bucket.end > now else ""
    return f"{bucket.start:%H:%M}\u2013{bucket.end:%H:%M} UTC{so_far}"


def _y(value: float, maximum: int) -> float:
    return _BOTTOM - value * _PLOT_HEIGHT / maximum


def _axes(found: Sequence[Bucket], maximum: int) -> list[Markup]:
    """The grid lines and their numbers (0, the middle when whole, the top) and the times."""
    parts = []
    middle = [maximum // 2] if maximum % 2 == 0 else []
    for value in [0, *middle, maximum]:
        y = _number(_y(value, maximum))
        parts.append(_GRID.format(x1=_LEFT, x2=_LEFT + _PLOT_WIDTH, y=y))
        label_y = _number(_y(value, maximum) + _NUMBER_SHIFT)
        x_label = _LEFT - _NUMBER_GAP
        parts.append(
            _TEXT.format(name="number", x=x_label, y=label_y, anchor="end", text=thousands(value))
        )
    start, span = found[0].start, found[-1].end - found[0].start
    for tick in range(_TICKS + 1):
        moment = start + span * tick / _TICKS
        x = _number(_LEFT + _PLOT_WIDTH * tick / _TICKS)
        text = f"{moment:%H:%M} UTC"
        parts.append(_TEXT.format(name="time", x=x, y=_TIME_BASELINE, anchor="middle", text=text))
    return parts


def _legend(names: Sequence[str], values: Sequence[int | None]) -> list[Markup]:
    """A swatch of each series' colour and its value (a total, or the latest sample)."""
    parts = []
    for index, name in enumerate(names):
        x = _LEFT + index * _LEGEND_STEP
        y = _LEGEND_BASELINE - _SWATCH
        parts.append(_RECT.format(name=name, x=x, y=y, width=_SWATCH, height=_SWATCH))
        text = f"{_count(values[index])} {name}"
        x_text = x + _SWATCH + 4
        parts.append(
            _TEXT.format(name="legend", x=x_text, y=_LEGEND_BASELINE, anchor="start", text=text)
        )
    return parts


def _nothing_yet() -> Markup:
    x, y = _LEFT + _PLOT_WIDTH // 2, _TOP + _PLOT_HEIGHT // 2
    return _TEXT.format(name="nothing", x=x, y=y, anchor="middle", text=_NOTHING)


def _hit(index: int, slot: float) -> Markup:
    """The bucket's whole column, transparent, so its hover shows wherever the pointer is."""
    x = _number(_LEFT + index * slot)
    return _RECT.format(name="hit", x=x, y=_TOP, width=_number(slot), height=_PLOT_HEIGHT)


def _svg(name: str, label: str, key: str, value: str, parts: Iterable[Markup]) -> Markup:
    body = Markup("").join(parts)
    return _SVG.format(
        name=name, width=_WIDTH, height=_HEIGHT, label=label, key=key, value=value, body=body
    )


def throughput_svg(buckets: Sequence[Bucket], *, now: datetime) -> Markup:
    """The items that ended in each bucket as a stacked bar: succeeded, failed, retried.

    The title and legend give each series' total over the window, the root's
    ``data-total`` the sum of all three; a bar's hover its bucket's time and counts.

    :param buckets: a window's buckets, as :func:`buckets` returns them.
    :param now: the view's clock: the bucket it is in is said to be counted "so far".
    :raises ValueError: if ``buckets`` are not a whole window's.
    """
    shape = _shape_of(buckets)
    totals = [sum(_ended(bucket)[position] for bucket in buckets) for position in range(3)]
    total = sum(totals)
    maximum = nice_maximum(max(sum(_ended(bucket)) for bucket in buckets))
    slot = _PLOT_WIDTH / shape.count
    parts = [*_axes(buckets, maximum), *_legend(_ENDED, totals)]
    for index, bucket in enumerate(buckets):
        if sum(_ended(bucket)) == 0:
            continue
        shapes = [_hit(index, slot)]
        below = 0
        for position, name in enumerate(_ENDED):
            count = _ended(bucket)[position]
            if count:
                top = _y(below + count, maximum)
                height = _number(_y(below, maximum) - top)
                x, width = _number(_LEFT + index * slot), _number(slot - _GAP)
                shapes.append(
                    _RECT.format(name=name, x=x, y=_number(top), width=width, height=height)
                )
                below += count
        title = f"{_when(bucket, now)}: {_listing(_ended(bucket), _ENDED)}"
        parts.append(_BUCKET.format(title=title, shapes=Markup("").join(shapes)))
    if total:
        summary = _listing(totals, _ENDED)
    else:
        summary = _NOTHING
        parts.append(_nothing_yet())
    label = f"Items ended per {shape.per} over the last {shape.text}: {summary}"
    return _svg("throughput", label, "total", str(total), parts)


def _latest(values: Sequence[int | None]) -> int | None:
    """The last sample of ``values``; None when there is none."""
    return next((value for value in reversed(values) if value is not None), None)


def _runs(values: Sequence[int | None]) -> list[list[tuple[int, int]]]:
    """The samples of ``values`` with their bucket's index, split where one is missing."""
    runs: list[list[tuple[int, int]]] = []
    for index, value in enumerate(values):
        if value is None:
            continue
        if runs and runs[-1][-1][0] == index - 1:
            runs[-1].append((index, value))
        else:
            runs.append([(index, value)])
    return runs


def _polyline(name: str, run: Sequence[tuple[int, int]], slot: float, maximum: int) -> Markup:
    """One run of samples as a line through the middle of their buckets.

    A lone sample is a line from its point to itself, which the round line caps of
    the CSS draw as a dot.
    """
    points = " ".join(
        f"{_number(_LEFT + (index + 0.5) * slot)},{_number(_y(value, maximum))}"
        for index, value in run
    )
    if len(run) == 1:
        points = f"{points} {points}"
    return _POLYLINE.format(name=name, points=points)


def depth_svg(buckets: Sequence[Bucket], *, now: datetime) -> Markup:
    """How many items were queued, delayed and running, as a line each.

    A line has a gap over the buckets without a sample. The title and legend give
    each one's latest sample in the window, the root's ``data-latest`` the three
    (``queued,delayed,running``, empty where there is none); a bucket's hover its
    time and samples.

    :param buckets: a window's buckets, as :func:`buckets` returns them.
    :param now: the view's clock: the bucket it is in is said to be sampled "so far".
    :raises ValueError: if ``buckets`` are not a whole window's.
    """
    shape = _shape_of(buckets)
    series = [[_depth(bucket)[position] for bucket in buckets] for position in range(3)]
    latest = [_latest(values) for values in series]
    samples = [value for values in series for value in values if value is not None]
    maximum = nice_maximum(max(samples)) if samples else 1
    slot = _PLOT_WIDTH / shape.count
    parts = [*_axes(buckets, maximum), *_legend(_DEPTH, latest)]
    for position, name in enumerate(_DEPTH):
        parts.extend(_polyline(name, run, slot, maximum) for run in _runs(series[position]))
    for index, bucket in enumerate(buckets):
        if _depth(bucket) == (None, None, None):
            continue
        title = f"{_when(bucket, now)}: {_listing(_depth(bucket), _DEPTH)}"
        parts.append(_BUCKET.format(title=title, shapes=_hit(index, slot)))
    if samples:
        summary = f", latest: {_listing(latest, _DEPTH)}"
    else:
        summary = f": {_NOTHING}"
        parts.append(_nothing_yet())
    label = f"Queue depth over the last {shape.text}{summary}"
    value = ",".join("" if sample is None else str(sample) for sample in latest)
    return _svg("depth", label, "latest", value, parts)
