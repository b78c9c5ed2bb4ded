"""PgQueuer 1.6 draining no-op jobs, for L4 beside workqueue's L2 (bench/workloads/lanes.py).

Runs in a virtualenv of its own (PgQueuer is no dependency of workqueue)::

    python -m venv .venv-pgqueuer && .venv-pgqueuer/bin/pip install pgqueuer==1.6.0 uvloop
    .venv-pgqueuer/bin/python bench/pgqueuer_drain.py DSN ITEMS

Installs PgQueuer's schema in the (fresh) database ``DSN``, enqueues ``ITEMS``
no-op jobs in batches of 1,000, and drains them with one ``QueueManager`` in its
default mode (no concurrency limit, batches of 10), on uvloop; prints one JSON
line: items, seconds (from the start of the run until the drain ends), jobs/s.
Imports nothing of workqueue.
"""

from __future__ import annotations

import json
import sys
import time

import asyncpg
import uvloop
from pgqueuer import AsyncpgDriver, Job, Queries, QueueManager
from pgqueuer.types import QueueExecutionMode


async def main(dsn: str, items: int) -> None:
    connection = await asyncpg.connect(dsn)
    try:
        queries = Queries(AsyncpgDriver(connection))
        await queries.install()
        for start in range(0, items, 1000):
            count = min(1000, items - start)
            await queries.enqueue(["bench_noop"] * count, [None] * count, [0] * count)
    finally:
        await connection.close()
    connection = await asyncpg.connect(dsn)
    try:
        manager = QueueManager(Queries(AsyncpgDriver(connection)))

        @manager.entrypoint("bench_noop")
        async def noop(job: Job) -> None:
            return None

        started = time.perf_counter()
        await manager.run(mode=QueueExecutionMode.drain)
        seconds = time.perf_counter() - started
    finally:
        await connection.close()
    print(json.dumps({"items": items, "seconds": seconds, "jobs_per_s": items / seconds}))


if __name__ == "__main__":
    uvloop.run(main(sys.argv[1], int(sys.argv[2])))
