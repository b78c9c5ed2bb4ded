"""The reports application's work: one kind, its payload, its handler, its schedule.

Nothing here edits workqueue; the stock command serves it beside the built-in kinds::

    cd examples/app_kinds
    workqueue worker --app reports.work
    workqueue enqueue build_report --payload '{"pages": 5}' --app reports.work
"""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

from workqueue import (
    WorkContext,
    WorkerResources,
    WorkHandler,
    WorkPayload,
    WorkQueueApp,
    WorkSchedule,
)

__all__ = ["BuildReport", "BuildReportHandler", "ReportKind", "app"]


class ReportKind(StrEnum):
    BUILD_REPORT = "build_report"


class BuildReport(WorkPayload):
    """Build a report of ``pages`` pages."""

    kind = ReportKind.BUILD_REPORT

    pages: int = 3


class BuildReportHandler(WorkHandler[BuildReport]):
    """Builds one page at a time on the worker's pool, reporting the pages done."""

    def __init__(self, resources: WorkerResources) -> None:
        self._pool = resources.pool

    async def handle(self, payload: BuildReport, ctx: WorkContext) -> None:
        progress = ctx.progress
        done = progress.get("pages", 0) if isinstance(progress, dict) else 0
        pages = done if isinstance(done, int) else 0
        while pages < payload.pages:
            async with self._pool.acquire() as connection:
                await connection.fetchval("SELECT count(*) FROM work_items")
            pages += 1
            ctx.report_progress({"pages": pages})


app = WorkQueueApp(
    kinds=[ReportKind],
    payloads=[BuildReport],
    handlers=[BuildReportHandler],
    schedules=[WorkSchedule(BuildReport(pages=1), interval=timedelta(hours=1))],
)
