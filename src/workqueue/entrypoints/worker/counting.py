"""Whether a worker counts what it does: its metrics, and the store that counts into them.

Both are None-or-plain when ``WORKQUEUE_METRICS_PORT`` is unset, and then nothing of
the ``web`` extra (prometheus-client) is imported: a worker without the extra runs
as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workqueue.domain import Lease, WorkStore
from workqueue.entrypoints.worker.settings import SettingsError, env_name

if TYPE_CHECKING:
    from workqueue.adapters.prometheus import WorkerMetrics

__all__ = ["counted_store", "worker_metrics"]

_PORT_SETTING = env_name("metrics_port")


def worker_metrics(port: int | None) -> WorkerMetrics | None:
    """A worker's counters when it serves them on ``port``; None when ``port`` is None.

    :raises SettingsError: if the port is set but the ``web`` extra is not installed.
    """
    if port is None:
        return None
    try:
        from workqueue.adapters.prometheus import WorkerMetrics
    except ImportError as error:
        raise SettingsError(
            f"{_PORT_SETTING} needs the web extra (pip install 'workqueue-pg[web]'): {error}"
        ) from None
    return WorkerMetrics()


def counted_store(
    store: WorkStore,
    metrics: WorkerMetrics | None,
    claimed_kinds: dict[Lease, str] | None = None,
) -> WorkStore:
    """``store`` itself, or ``store`` counted into ``metrics`` when there are any.

    Stores given one ``claimed_kinds`` map share what each claimed (see
    :class:`~workqueue.adapters.prometheus.CountingWorkStore`).
    """
    if metrics is None:
        return store
    from workqueue.adapters.prometheus import CountingWorkStore

    return CountingWorkStore(store, metrics, claimed_kinds=claimed_kinds)
