"""The counters one worker process keeps of what its executors and recovery did."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

__all__ = ["HEARTBEAT_BUCKETS", "PER_KIND_COUNTERS", "WorkerMetrics"]

HEARTBEAT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
"""Upper bounds, in seconds, of the heartbeat latency histogram's buckets.

A heartbeat is one short statement: a millisecond on a quiet database, tens under
load; anything near a second is worth an alert long before a lease (60 s) is at risk.
"""

PER_KIND_COUNTERS = {
    "claimed": "Items this worker claimed.",
    "succeeded": "Items this worker completed as succeeded.",
    "failed": "Items this worker failed.",
    "retried": "Failures this worker sent back to queued to run again (attempts left).",
    "snoozed": "Items this worker sent back to queued on their handler's request.",
    "cancelled": "Items this worker ended cancelled, as requested while it ran them.",
    "released": "Items this worker put back in queued without a stall.",
    "leases_lost": "Leases found no longer held: a heartbeat or outcome matched no row.",
}
"""Each counter labelled by kind, ``workqueue_worker_<name>_total``, and what it counts."""

RECOVERED_HELP = "Expired leases this worker's recovery passes ended, by what became of the item."
HEARTBEAT_HELP = "How long each heartbeat statement took, answered or not."


class WorkerMetrics:
    """A worker's counters, on a registry of their own (never the global one).

    Every counter is per kind except ``recovered``, which is per outcome of the
    recovery pass (``requeued``, ``stalled``, ``superseded``, ``cancelled``): a pass recovers
    other workers' items, whose kinds it does not read.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        per_kind = {
            name: Counter(f"workqueue_worker_{name}", text, ["kind"], registry=self.registry)
            for name, text in PER_KIND_COUNTERS.items()
        }
        self.claimed = per_kind["claimed"]
        self.succeeded = per_kind["succeeded"]
        self.failed = per_kind["failed"]
        self.retried = per_kind["retried"]
        self.snoozed = per_kind["snoozed"]
        self.cancelled = per_kind["cancelled"]
        self.released = per_kind["released"]
        self.leases_lost = per_kind["leases_lost"]
        self.recovered = Counter(
            "workqueue_worker_recovered", RECOVERED_HELP, ["outcome"], registry=self.registry
        )
        self.heartbeat_seconds = Histogram(
            "workqueue_worker_heartbeat_seconds",
            HEARTBEAT_HELP,
            buckets=HEARTBEAT_BUCKETS,
            registry=self.registry,
        )

    def text(self) -> bytes:
        """Every counter in the Prometheus text format."""
        return generate_latest(self.registry)
