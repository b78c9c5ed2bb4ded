"""``workqueue`` serving only the fault tests' chore kind (see fault_kinds.py).

Runs the production CLI (``workqueue.entrypoints.cli.main``) with a container whose
registry serves only :class:`~fault_kinds.Chore` and which schedules nothing, or,
with ``FAULT_CRON`` set, a chore on that cron expression (a fire time while one
runs is queued); every other provider, the pool and the worker loop included,
is production's.

Usage: ``python fault_worker_script.py worker``.
"""

from __future__ import annotations

import os
import sys

from dependency_injector import providers
from fault_kinds import Chore, ChoreHandler, FaultKind

from workqueue.domain import Overlap, WorkSchedule
from workqueue.entrypoints.cli import main
from workqueue.entrypoints.worker.container import WorkerContainer, build_container
from workqueue.entrypoints.worker.settings import WorkerSettings


def with_fault_kinds(settings: WorkerSettings) -> WorkerContainer:
    container = build_container(settings)
    container.kinds.override(providers.Object([FaultKind]))
    container.payload_types.override(providers.Object([Chore]))
    container.handlers.override(
        providers.List(
            providers.Singleton(ChoreHandler, container.pool, container.clock, settings.worker_id),
        )
    )
    container.schedules.override(providers.Object(fault_schedules()))
    return container


def fault_schedules() -> list[WorkSchedule]:
    cron = os.environ.get("FAULT_CRON")
    if cron is None:
        return []
    chore = Chore(naps=(0.05,))
    return [WorkSchedule(chore, cron=cron, overlap=Overlap.QUEUE)]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], container_factory=with_fault_kinds))
