"""``workqueue schedules``: every periodic kind, when it runs, its last run and its next.

The built-in kinds' schedules and the application's (``--app``), in the order
the worker checks them. The text form is one block per schedule; ``--json``
prints one JSON document, for scripts (:mod:`workqueue.entrypoints.schedule_report`).
Read-only.
"""

from __future__ import annotations

import json
from typing import TextIO

from workqueue.entrypoints.schedule_report import render_schedules, schedule_document
from workqueue.entrypoints.worker.container import WorkerContainer, provide

__all__ = ["list_schedules"]

_DOCUMENT_JSON = json.JSONEncoder(indent=2, ensure_ascii=False)


async def list_schedules(container: WorkerContainer, out: TextIO, *, as_json: bool) -> None:
    """Print every schedule the worker would run, with its last and next run.

    :raises SchemaNotCurrentError: if the database is not migrated.
    :raises DatabaseUnreachableError: if the database does not answer.
    :raises StoreUnavailableError: if it stops answering while being read.
    """
    # The schedules first: an application that cannot be loaded, or a schedule
    # that cannot hold, is said before any database is reached.
    schedules = await provide(container.schedules)
    schema = await provide(container.schema)
    await schema.check_current()
    monitor = await provide(container.work_monitor)
    clock = await provide(container.clock)
    turns = await monitor.schedule_turns([schedule.kind for schedule in schedules])
    now = clock.now()
    if as_json:
        documents = [schedule_document(s, turns[s.kind], now) for s in schedules]
        print(_DOCUMENT_JSON.encode({"schedules": documents}), file=out)
    else:
        print(render_schedules(schedules, turns, now), file=out)
