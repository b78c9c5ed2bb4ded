"""``/metrics``: the queue as Prometheus gauges, read from the table at scrape time.

A scrape reads a :class:`QueueSample` through the monitor (the overview with its
paused kinds, the running items, the last hour's failures and stalls), then a
:class:`QueueCollector` over that sample writes the text format. The collector
lives for one scrape, in a registry of its own, so no state is kept between
scrapes but the finished counts of :class:`~workqueue.entrypoints.web.overview.OverviewReader`.

When the database cannot be reached the scrape still answers, with
``workqueue_database_up 0`` and nothing else, so an alert can tell "the queue is
empty" from "the queue cannot be seen".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from workqueue.domain import WorkItem, WorkMonitor, WorkStatus
from workqueue.entrypoints.web.documents import seconds_between
from workqueue.entrypoints.web.overview import Overview, OverviewReader

__all__ = [
    "RECENT",
    "UNAVAILABLE",
    "QueueCollector",
    "QueueSample",
    "metrics_text",
    "read_sample",
]

RECENT = timedelta(hours=1)
"""The window of the ``*_last_hour`` gauges."""


@dataclass(frozen=True, slots=True)
class QueueSample:
    """What one scrape read; ``overview`` is None when the database could not be read."""

    overview: Overview | None
    running: list[WorkItem]
    failures: dict[tuple[str, WorkStatus], int]
    stalls: dict[str, int]


UNAVAILABLE = QueueSample(overview=None, running=[], failures={}, stalls={})
"""The sample of a scrape that could not read the table."""


async def read_sample(reader: OverviewReader, monitor: WorkMonitor) -> QueueSample:
    """Read one scrape's sample.

    :raises StoreUnavailableError: if the monitor cannot be reached.
    """
    overview = await reader.read()
    since = overview.now - RECENT
    return QueueSample(
        overview=overview,
        running=await monitor.running(),
        failures=await monitor.count_unsuccessful_since(since),
        stalls=await monitor.stalls_since(since),
    )


def _oldest_heartbeat_ages(running: list[WorkItem], now: datetime) -> dict[str, float]:
    ages: dict[str, float] = {}
    for item in running:
        if item.heartbeat_at is not None:
            age = seconds_between(item.heartbeat_at, now)
            ages[item.kind] = max(age, ages.get(item.kind, age))
    return ages


class QueueCollector(Collector):
    """The gauges of one :class:`QueueSample`."""

    def __init__(self, sample: QueueSample) -> None:
        self._sample = sample

    def collect(self) -> Iterator[Metric]:
        """Yield every gauge; with no overview, only ``workqueue_database_up 0``."""
        overview = self._sample.overview
        yield GaugeMetricFamily(
            "workqueue_database_up",
            "1 when the last scrape read the work_items table, 0 when it could not.",
            value=0 if overview is None else 1,
        )
        if overview is not None:
            yield from self._queue_gauges(overview)

    def _queue_gauges(self, overview: Overview) -> Iterator[Metric]:
        sample = self._sample
        items = GaugeMetricFamily(
            "workqueue_items",
            "Items in work_items by kind and status. Finished statuses are counted "
            "at most every few seconds (workqueue_finished_counts_age_seconds).",
            labels=["kind", "status"],
        )
        oldest = GaugeMetricFamily(
            "workqueue_oldest_queued_age_seconds",
            "Seconds the next item a claim takes of each kind has been queued (0: none queued).",
            labels=["kind"],
        )
        heartbeats = GaugeMetricFamily(
            "workqueue_oldest_heartbeat_age_seconds",
            "Seconds since the stalest heartbeat among the running items of each kind "
            "(0: none running).",
            labels=["kind"],
        )
        stalls = GaugeMetricFamily(
            "workqueue_stalls_last_hour",
            "Stalls (expired leases) counted on items of each kind that finished, or "
            "last heartbeated, in the last hour.",
            labels=["kind"],
        )
        failures = GaugeMetricFamily(
            "workqueue_failures_last_hour",
            "Items of each kind that ended unsuccessfully (status failed, or another "
            "unsuccessful final status) in the last hour.",
            labels=["kind", "status"],
        )
        paused = GaugeMetricFamily(
            "workqueue_kind_paused",
            "1 when the kind is paused (workqueue pause, or the view's Pause): no worker "
            "claims its items until it is resumed; 0 when it is not.",
            labels=["kind"],
        )
        paused_since = GaugeMetricFamily(
            "workqueue_kind_paused_since_seconds",
            "When each paused kind was paused, in seconds since the Unix epoch.",
            labels=["kind"],
        )
        caps = GaugeMetricFamily(
            "workqueue_kind_max_running",
            "The cap of each capped kind (workqueue cap, or its policy): at most this many "
            "of its items run at once across every worker.",
            labels=["kind"],
        )
        pauses = {pause.kind: pause for pause in overview.pauses}
        ages = _oldest_heartbeat_ages(sample.running, overview.now)
        for kind, by_status in overview.counts.items():
            for status, count in by_status.items():
                items.add_metric([kind, status.value], count)
            queued_at = overview.oldest_queued.get(kind)
            oldest.add_metric(
                [kind], 0 if queued_at is None else seconds_between(queued_at, overview.now)
            )
            heartbeats.add_metric([kind], ages.get(kind, 0))
            stalls.add_metric([kind], sample.stalls.get(kind, 0))
            paused.add_metric([kind], 1 if kind in pauses else 0)
        for (kind, status), count in sorted(sample.failures.items()):
            failures.add_metric([kind, status.value], count)
        for kind, pause in pauses.items():
            paused_since.add_metric([kind], pause.paused_at.timestamp())
        for cap in overview.caps:
            caps.add_metric([cap.kind], cap.max_running)
        yield items
        yield oldest
        yield heartbeats
        yield stalls
        yield failures
        yield paused
        yield paused_since
        yield caps
        yield GaugeMetricFamily(
            "workqueue_finished_counts_age_seconds",
            "Seconds since the finished items in workqueue_items were counted.",
            value=seconds_between(overview.finished_counted_at, overview.now),
        )


def metrics_text(sample: QueueSample) -> bytes:
    """``sample`` in the Prometheus text exposition format."""
    registry = CollectorRegistry()
    registry.register(QueueCollector(sample))
    return generate_latest(registry)
