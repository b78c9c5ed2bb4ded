"""Waiting: the claim path beside a million items waiting for their run_at.

Each run seeds two fresh databases, the same way, with 10,000 finished rows; one
of them also gets ``waiting_rows`` items of the claimed kind that wait for their
run_at, due tomorrow, at the highest priority: ahead of every claimable item in
claim order, and never claimable during the run. Then ``growth_cycles`` items are
enqueued in each and that many claim + complete cycles timed through the store,
the databases taking turns as W5's do. The figure is the mean cycle time with the
waiting items over the one without (issue 26: at most 1.2).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg

from bench.figures import Figure, Target, WorkloadReport
from bench.server import BenchServer
from bench.settings import BenchSettings
from bench.statements import BENCH_SQL
from bench.workloads.ceiling import seed_finished
from bench.workloads.growth import mean_cycles

__all__ = ["waiting"]

_WAITING_LIMIT = 1.2
_FINISHED = 10_000


async def seed_waiting(dsn: str, rows: int) -> None:
    """Insert ``rows`` items of the bench kind that become claimable tomorrow."""
    connection = await asyncpg.connect(dsn)
    try:
        tomorrow = datetime.now(UTC) + timedelta(days=1)
        await connection.execute(BENCH_SQL["seed_waiting"], rows, tomorrow)
    finally:
        await connection.close()


async def waiting(server: BenchServer, settings: BenchSettings) -> WorkloadReport:
    """The claim + complete cycle with and without the waiting items, and their ratio."""
    rows = settings.waiting_rows
    report = WorkloadReport(
        "Waiting",
        [
            Figure("waiting_none", "claim + complete, nothing waiting", "µs"),
            Figure("waiting_many", f"claim + complete, {rows:,} waiting ahead", "µs"),
            Figure(
                "waiting_ratio",
                f"ratio {rows:,} waiting / none",
                "x",
                target=Target(_WAITING_LIMIT, False),
            ),
        ],
    )
    for run in range(1, settings.runs + 1):
        async with (
            server.fresh_database(f"bench_waiting_none_run{run}") as none_dsn,
            server.fresh_database(f"bench_waiting_many_run{run}") as many_dsn,
        ):
            await seed_finished(none_dsn, _FINISHED)
            await seed_finished(many_dsn, _FINISHED)
            await seed_waiting(many_dsn, rows)
            none_cycle, many_cycle = await mean_cycles(
                (none_dsn, many_dsn), settings.growth_cycles, settings.batch_size
            )
        report.figure("waiting_none").values.append(none_cycle * 1e6)
        report.figure("waiting_many").values.append(many_cycle * 1e6)
        report.figure("waiting_ratio").values.append(many_cycle / none_cycle)
        report.runs.append(
            {"run": run, "cycle_seconds_none": none_cycle, "cycle_seconds_many": many_cycle}
        )
    return report
