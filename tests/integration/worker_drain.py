"""Run a production worker on a real database until its first run of items ends."""

from __future__ import annotations

import asyncio
import logging

import pytest

from workqueue.application import Worker

WORKER_LOG = "workqueue.worker"
SAFETY_NET = 30.0


def count_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The worker's count lines (``ran 2 items in ...``), in order."""
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == WORKER_LOG and record.getMessage().startswith("ran ")
    ]


class _CountLineSeen(logging.Handler):
    """Sets ``seen`` at the worker's first count line."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("ran "):
            self.seen.set()


async def first_run_of_items(worker: Worker, caplog: pytest.LogCaptureFixture) -> list[str]:
    """Run ``worker`` until it writes its first count line, then stop it; its count lines.

    A run of items ends once a claim finds nothing more that the worker may run, and
    its count line says how many items it ran and how each ended.
    """
    caplog.set_level(logging.INFO, logger=WORKER_LOG)
    watch = _CountLineSeen()
    logger = logging.getLogger(WORKER_LOG)
    logger.addHandler(watch)
    task = asyncio.create_task(worker.run())
    seen = asyncio.create_task(watch.seen.wait())
    try:
        async with asyncio.timeout(SAFETY_NET):
            await asyncio.wait([task, seen], return_when=asyncio.FIRST_COMPLETED)
    finally:
        logger.removeHandler(watch)
        seen.cancel()
        worker.stop()
        await task
    return count_lines(caplog)
