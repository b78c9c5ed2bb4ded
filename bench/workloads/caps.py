"""K1-K2: what a fleet-wide cap per kind costs the claims (issue 28, docs/adr/0035).

While a kind a worker serves is capped, its claims run the dearer per-kind statement
(``complete_and_claim_capped``: the slots of the capped kinds, a probe per kind).

- **K1, a cap that never binds**: ``drain_items`` no-op items drained by one worker
  process at N = 10 in a fresh database, uncapped; then the same in a fresh database
  whose no-op kind was capped at 1,000 before the workers started. Target: the capped
  drain at least 0.9x the uncapped one.
- **K2, an uncapped kind beside a capped one**: the same no-op items alone, against
  the same items enqueued after a backlog of as many ``bench_busy`` items (older
  ids, so they sit ahead in the claim index) of a kind capped at 2, in a fresh
  database each. Both slots of the capped kind are held before the go (the bench
  claims two of its items under an hour's lease, as another machine's workers
  would hold them), so the cap binds the whole time. One worker process at N = 10
  serves both kinds: each of its claims passes over the capped kind, and all ten
  lanes drain no-op items, as in the leg alone. The clock stops at the last no-op
  item's ``finished_at``. Target: the no-op drain beside the capped kind at least
  0.9x the drain alone.

Each run takes two turns of each pair, the side that goes first alternating (uncapped,
capped, then capped, uncapped), each leg a fresh database; a run reports the median
of its turns' rates and ratios, and the JSON has every leg. As in L2
(:mod:`bench.workloads.lanes`), the worker process is built and listening before the
clock starts, and the clock runs from the go to the last ``finished_at``.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg

from bench.figures import Figure, Target, WorkloadReport
from bench.kinds import BenchKind, BusyJob, NoopJob
from bench.server import BenchServer, checkpoint_and_vacuum
from bench.settings import BenchSettings
from bench.statements import BENCH_SQL
from bench.workloads.ceiling import seed_finished
from bench.workloads.lanes import enqueue_in_batches
from bench.workloads.worker_process import WorkerProcess, WorkerProcessSpec, spawn_context
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import (
    PostgresWorkStore,
    close_pool,
    create_pool,
)
from workqueue.domain import WorkPayload

__all__ = ["caps"]

_LANES = 10
_TURNS = 2
_K1_CAP = 1_000
_K2_CAP = 2
# The capped kind's items never run in the timed leg (its slots are held from the
# start); should one be claimed, it would take a lane for this long.
_K2_BUSY_SECONDS = 1.0
_POLL = 0.02
_DRAIN_TIMEOUT = 300.0


@dataclass(frozen=True, slots=True)
class _Leg:
    """One timed drain in a fresh database.

    :param backlog: enqueued first (older ids), not timed.
    :param timed: enqueued after the backlog; the clock stops at the last of them.
    :param caps: the caps set (``PostgresWorkStore.cap_kind``) before the workers start.
    :param held: how many items of each kind the bench claims (an hour's lease) before
        the workers start: running elsewhere, they hold a capped kind's slots.
    """

    name: str
    timed: Sequence[WorkPayload]
    backlog: Sequence[WorkPayload] = ()
    caps: Mapping[str, int] = field(default_factory=dict)
    held: Mapping[str, int] = field(default_factory=dict)


async def caps(server: BenchServer, settings: BenchSettings) -> WorkloadReport:
    """K1-K2 (see the module), ``settings.runs`` times."""
    report = WorkloadReport(
        "K",
        [
            Figure("k1_uncapped", f"K1 no-op drain, 1 process N={_LANES}, uncapped", "jobs/s"),
            Figure("k1_capped", f"K1 the same, the kind capped at {_K1_CAP:,}", "jobs/s"),
            Figure("k1_ratio", "K1 capped / uncapped", "x", target=Target(0.9, True)),
            Figure("k2_alone", f"K2 no-op drain alone, 1 process N={_LANES}", "jobs/s"),
            Figure(
                "k2_beside",
                f"K2 the same beside a kind capped at {_K2_CAP}, its backlog ahead",
                "jobs/s",
            ),
            Figure("k2_ratio", "K2 beside / alone", "x", target=Target(0.9, True)),
        ],
    )
    noops: list[WorkPayload] = [NoopJob(seq=n) for n in range(settings.drain_items)]
    busy: list[WorkPayload] = [BusyJob(seconds=_K2_BUSY_SECONDS)] * settings.drain_items
    for run in range(1, settings.runs + 1):
        k1 = await _pairs(
            server,
            settings,
            base=_Leg(f"bench_k1_uncapped_run{run}", noops),
            other=_Leg(f"bench_k1_capped_run{run}", noops, caps={BenchKind.NOOP: _K1_CAP}),
        )
        k2 = await _pairs(
            server,
            settings,
            base=_Leg(f"bench_k2_alone_run{run}", noops),
            other=_Leg(
                f"bench_k2_beside_run{run}",
                noops,
                backlog=busy,
                caps={BenchKind.BUSY: _K2_CAP},
                held={BenchKind.BUSY: _K2_CAP},
            ),
        )
        for prefix, (base, other), pair in (
            ("k1", ("uncapped", "capped"), k1),
            ("k2", ("alone", "beside"), k2),
        ):
            report.figure(f"{prefix}_{base}").values.append(pair["base_jobs_per_s"])
            report.figure(f"{prefix}_{other}").values.append(pair["other_jobs_per_s"])
            report.figure(f"{prefix}_ratio").values.append(pair["ratio"])
        report.runs.append({"run": run, "k1": k1, "k2": k2})
    return report


async def _pairs(
    server: BenchServer, settings: BenchSettings, *, base: _Leg, other: _Leg
) -> dict[str, Any]:
    """``_TURNS`` turns of ``base`` and ``other``, who goes first alternating; the medians."""
    turns: list[dict[str, Any]] = []
    for turn in range(_TURNS):
        order = (base, other) if turn % 2 == 0 else (other, base)
        done: dict[str, dict[str, Any]] = {}
        for leg in order:
            done[leg.name] = await _drain(server, settings, leg, f"{leg.name}_turn{turn}")
        first, second = done[base.name], done[other.name]
        turns.append(
            {
                "base": first,
                "other": second,
                "ratio": second["jobs_per_s"] / first["jobs_per_s"],
                "first": order[0].name,
            }
        )
    return {
        "base_jobs_per_s": statistics.median(t["base"]["jobs_per_s"] for t in turns),
        "other_jobs_per_s": statistics.median(t["other"]["jobs_per_s"] for t in turns),
        "ratio": statistics.median(t["ratio"] for t in turns),
        "turns": turns,
    }


async def _drain(
    server: BenchServer, settings: BenchSettings, leg: _Leg, database: str
) -> dict[str, Any]:
    timed_kind = str(leg.timed[0].kind)
    async with server.fresh_database(database) as dsn:
        await seed_finished(dsn, settings.finished_rows)
        await _cap(dsn, leg.caps)
        await enqueue_in_batches(dsn, [*leg.backlog, *leg.timed], settings.batch_size)
        await _hold(dsn, leg.held)
        with tempfile.TemporaryDirectory(prefix="bench-cpu-") as cpu_dir:
            cpu_path = Path(cpu_dir) / "worker.cpu"
            worker = WorkerProcess(
                spawn_context(),
                WorkerProcessSpec(
                    dsn=dsn,
                    worker_id=database,
                    log_level=settings.log_level,
                    event_loop=settings.event_loop,
                    log_path=str(settings.log_path),
                    concurrency=_LANES,
                    cpu_path=str(cpu_path),
                ),
            )
            result = await _timed(dsn, worker, timed_kind, [str(kind) for kind in leg.caps])
            cpu = float(cpu_path.read_text())
    items = result["items"]
    return {
        **result,
        "caps": {str(kind): cap for kind, cap in leg.caps.items()},
        "backlog": len(leg.backlog),
        "lost": len(leg.timed) - items,
        "cpu_seconds": cpu,
        "cpu_ms_per_item": 1000.0 * cpu / items if items else 0.0,
    }


async def _timed(dsn: str, worker: WorkerProcess, kind: str, capped: list[str]) -> dict[str, Any]:
    worker.start()
    try:
        await worker.ready()
        await checkpoint_and_vacuum(dsn)
        connection = await asyncpg.connect(dsn)
        try:
            started = datetime.now(UTC)
            worker.go()
            await _until_drained(connection, kind)
            # Before the stop releases what the worker still holds: how the capped
            # kinds stood when the timed kind was done (K2: two running, the rest queued).
            capped_at_end = {
                name: {
                    row["status"]: row["items"]
                    for row in await connection.fetch(BENCH_SQL["kind_statuses"], name)
                }
                for name in capped
            }
            row = await connection.fetchrow(BENCH_SQL["kind_finished"], kind, started)
            assert row is not None  # an aggregate without GROUP BY answers one row
        finally:
            await connection.close()
    finally:
        await worker.stop()
    items: int = row["finished"]
    seconds = row["last"].timestamp() - started.timestamp()
    return {
        "items": items,
        "seconds": seconds,
        "jobs_per_s": items / seconds,
        "capped_at_end": capped_at_end,
    }


async def _cap(dsn: str, caps: Mapping[str, int]) -> None:
    """Cap each kind as an operator would (``workqueue cap KIND N``), through the store."""
    if not caps:
        return
    pool = await create_pool(dsn, min_size=1, max_size=2)
    try:
        store = PostgresWorkStore(pool, SystemClock())
        try:
            for kind, max_running in caps.items():
                await store.cap_kind(kind, max_running)
        finally:
            await store.close()
    finally:
        await close_pool(pool)


async def _hold(dsn: str, held: Mapping[str, int]) -> None:
    """Claim ``held[kind]`` items of each kind under an hour's lease, as a worker elsewhere."""
    if not held:
        return
    pool = await create_pool(dsn, min_size=1, max_size=2)
    try:
        store = PostgresWorkStore(pool, SystemClock())
        try:
            for kind, count in held.items():
                for _ in range(count):
                    item = await store.claim(
                        [kind], worker_id="bench-elsewhere", lease_duration=timedelta(hours=1)
                    )
                    assert item is not None, f"nothing of {kind} to hold"
        finally:
            await store.close()
    finally:
        await close_pool(pool)


async def _until_drained(connection: asyncpg.Connection, kind: str) -> None:
    deadline = time.monotonic() + _DRAIN_TIMEOUT
    while await connection.fetchval(BENCH_SQL["kind_unfinished"], kind):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{kind} items still queued or running after {_DRAIN_TIMEOUT} s")
        await asyncio.sleep(_POLL)
