"""Time the pieces of a worker's per-item path, apart from the database.

``python -m bench.pieces [--loop asyncio|uvloop] [--log-level INFO] [--items N]``

- **executor**: :meth:`WorkExecutor.run_next`, alone and with ``claim_next`` (the
  worker loop's combined complete-and-claim path), around a store that answers at once
  with prebuilt items, so what is timed is the executor, its lease keeper and its
  log line: CPU microseconds per item, alone and as the worker loop calls it.
- **checks**: what an enqueue does to a payload before anything is sent
  (:func:`workqueue.domain.payload_check.checked_payload_text`: the check and the JSON text), per
  item.
- **round trips** (with ``--dsn``): a claim and a completion through
  :class:`~workqueue.adapters.postgres.PostgresWorkStore` on a real server, and the combined
  ``complete_and_claim``: client CPU and wall microseconds per item.

Nothing here is a target; it says where the time of W1-W3 goes.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Collection, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from bench.assembly import EVENT_LOOPS, bench_registry, configure_bench_logging, run_on
from bench.kinds import BenchKind, NoopJob
from workqueue.adapters.clock import SystemClock
from workqueue.application import KindRegistry, WorkExecutor
from workqueue.domain import Lease, RunOutcome, WorkItem, WorkStatus
from workqueue.domain.payload_check import checked_payload_text

__all__ = ["main"]

_NOW = datetime(2026, 1, 1, tzinfo=UTC)


class InstantStore:
    """A store whose claims hand out prebuilt running items and whose writes always hold."""

    def __init__(self, items: int) -> None:
        self._items = [
            WorkItem(
                id=n,
                kind=BenchKind.NOOP.value,
                payload={"seq": n},
                status=WorkStatus.RUNNING,
                attempt=1,
                stalls=0,
                dedup_key=None,
                enqueued_at=_NOW,
                priority=0,
                run_at=_NOW,
                started_at=_NOW,
                heartbeat_at=_NOW,
                lease_expires_at=_NOW + timedelta(seconds=60),
                finished_at=None,
                worker_id="pieces",
                progress=None,
                error=None,
            )
            for n in range(items, 0, -1)
        ]

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        return self._items.pop() if self._items else None

    async def complete(self, lease: Lease, *, progress: JsonValue) -> bool:
        return True

    async def complete_and_claim(
        self,
        lease: Lease,
        *,
        progress: JsonValue,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> tuple[bool, WorkItem | None]:
        return True, (self._items.pop() if self._items else None)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"the instant store does not {name}")


def _per_item(items: int, started: tuple[float, float]) -> str:
    cpu = (time.process_time() - started[0]) / items * 1e6
    wall = (time.perf_counter() - started[1]) / items * 1e6
    return f"{cpu:7.1f} µs CPU, {wall:7.1f} µs wall per item"


def _start() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


async def _executor(items: int) -> None:
    registry: KindRegistry[BenchKind] = bench_registry()
    store = InstantStore(items)
    executor = WorkExecutor(store, registry, SystemClock(), worker_id="pieces")  # type: ignore[arg-type]
    started = _start()
    while await executor.run_next() is not None:
        pass
    print(f"run_next:                  {_per_item(items, started)}")

    store = InstantStore(items)
    executor = WorkExecutor(store, registry, SystemClock(), worker_id="pieces")  # type: ignore[arg-type]
    started = _start()
    while await executor.run_next(claim_next=True) is not None:
        pass
    print(f"run_next(claim_next=True): {_per_item(items, started)}")


def _checks(items: int) -> None:
    payloads = [NoopJob(seq=n) for n in range(items)]
    started = _start()
    for payload in payloads:
        checked_payload_text(payload)
    print(f"payload check + JSON:       {_per_item(items, started)}")


async def _round_trips(dsn: str, items: int) -> None:
    from workqueue.adapters.postgres import (
        PostgresWorkQueue,
        PostgresWorkStore,
        close_pool,
        create_pool,
    )
    from workqueue.domain import EnqueueRequest

    pool = await create_pool(dsn, min_size=1, max_size=1)
    try:
        clock = SystemClock()
        queue = PostgresWorkQueue(pool, clock)
        store = PostgresWorkStore(pool, clock)
        lease = timedelta(seconds=60)
        kinds = [BenchKind.NOOP.value]
        for combined in (False, True):
            await queue.enqueue_many([EnqueueRequest(NoopJob(seq=n)) for n in range(items)])
            started = _start()
            item = await store.claim(kinds, worker_id="pieces", lease_duration=lease)
            done = 0
            while item is not None:
                done += 1
                if combined:
                    _, item = await store.complete_and_claim(
                        item.lease,
                        progress=None,
                        kinds=kinds,
                        worker_id="pieces",
                        lease_duration=lease,
                    )
                else:
                    await store.finish(item.lease, RunOutcome.succeeded(None))
                    item = await store.claim(kinds, worker_id="pieces", lease_duration=lease)
            name = "complete_and_claim" if combined else "claim, then complete"
            print(f"{name + ':':27}{_per_item(done, started)}")
    finally:
        await close_pool(pool)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.pieces")
    parser.add_argument("--loop", choices=EVENT_LOOPS, default="uvloop")
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--dsn", help="a migrated database to time the round trips on")
    arguments = parser.parse_args(argv)
    configure_bench_logging(arguments.log_level.upper(), Path("/dev/null"))
    print(f"loop {arguments.loop}, log level {arguments.log_level.upper()}")
    run_on(arguments.loop, _executor(arguments.items))
    _checks(arguments.items)
    if arguments.dsn:
        run_on(arguments.loop, _round_trips(arguments.dsn, min(arguments.items, 5_000)))


if __name__ == "__main__":
    main()
