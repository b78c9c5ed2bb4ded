"""A worker's own counters, in the Prometheus client's registry (the ``web`` extra).

:class:`WorkerMetrics` holds the counters; :class:`CountingWorkStore` wraps the
worker's :class:`~workqueue.domain.WorkStore` and counts what each call did, so that no part
of the application knows it is being counted.
"""

from __future__ import annotations

from workqueue.adapters.prometheus.counting_store import CountingWorkStore
from workqueue.adapters.prometheus.worker_metrics import WorkerMetrics

__all__ = ["CountingWorkStore", "WorkerMetrics"]
