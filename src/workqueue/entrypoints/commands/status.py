"""``workqueue status``: what the queue holds, read-only."""

from __future__ import annotations

from typing import TextIO

from workqueue.entrypoints.status_report import gather_status, render_json, render_text
from workqueue.entrypoints.worker.container import WorkerContainer, provide

__all__ = ["show_status"]


async def show_status(container: WorkerContainer, out: TextIO, *, as_json: bool = False) -> None:
    """Print counts per kind and status, the paused and the capped kinds, every running item,
    the oldest queued, recent failures.

    :raises SchemaNotCurrentError: if the database is not migrated.
    :raises DatabaseUnreachableError: if the database does not answer.
    :raises StoreUnavailableError: if it stops answering while being read.
    """
    # The kinds first: an application that cannot be loaded is said before any database.
    catalog = await provide(container.catalog)
    database = await provide(container.database)
    schema = await provide(container.schema)
    await schema.check_current()
    monitor = await provide(container.work_monitor)
    store = await provide(container.work_store)
    clock = await provide(container.clock)
    report = await gather_status(
        monitor, clock, store=store, kinds=catalog.kinds, database=database.shown
    )
    print(render_json(report) if as_json else render_text(report), file=out)
