"""The benchmark's one command: ``python -m bench.run [--quick] [--database-url URL]``.

Starts one PostgreSQL (embedded by default), runs the ceiling and W1-W5, the
producers' P1-P4, the heartbeat and purge phases, L1-L4 and K1-K2, each run on a fresh
database, prints a markdown table of medians with min-max, and writes the same
figures as JSON to ``bench/results/``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from bench.assembly import EVENT_LOOPS, configure_bench_logging, run_on
from bench.figures import WorkloadReport
from bench.report import Machine, markdown, write_json
from bench.server import DEFAULT_DATA_PARENT, BenchServer, started_server
from bench.settings import BenchSettings, full_settings, quick_settings
from bench.workloads.caps import caps
from bench.workloads.churn import churn
from bench.workloads.drain import drain
from bench.workloads.enqueue import batch_enqueue, single_enqueue
from bench.workloads.growth import growth
from bench.workloads.heartbeats import heartbeats
from bench.workloads.lanes import lanes
from bench.workloads.latency import latency
from bench.workloads.producers import producers
from bench.workloads.waiting import waiting

__all__ = ["WORKLOADS", "main"]

Workload = Callable[[BenchServer, BenchSettings], Awaitable[WorkloadReport]]

WORKLOADS: dict[str, Workload] = {
    "w3": drain,
    "w1": single_enqueue,
    "w2": batch_enqueue,
    "producers": producers,
    "w4": latency,
    "w5": growth,
    "waiting": waiting,
    "hot": heartbeats,
    "lanes": lanes,
    "caps": caps,
}
"""Every workload by its command-line name, in the order a full run takes them.

``w3`` includes the pgbench ceiling; ``w5`` includes the retention purge.
"""

OPT_IN: dict[str, Workload] = {"churn": churn}
"""Workloads only ``--only`` runs: C1-C2 take 20 minutes a run (``--only churn --runs 1``)."""


RESULTS = Path(__file__).parent / "results"


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/bench", description="Benchmark workqueue against a pgbench ceiling."
    )
    parser.add_argument(
        "--database-url",
        help="a maintenance database on the server to use (default: an embedded "
        "PostgreSQL from pgserver, data under /tmp, removed afterwards)",
    )
    parser.add_argument(
        "--data-parent",
        type=Path,
        default=DEFAULT_DATA_PARENT,
        help="where the embedded server keeps its data (default /tmp; /dev/shm takes "
        "the disk and its fsyncs out of the figures)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: small sizes, one run each"
    )
    parser.add_argument("--runs", type=int, help="runs of each workload (default 3; quick: 1)")
    parser.add_argument(
        "--log-level",
        default="INFO",
        help="the queue's log level, as WORKQUEUE_LOG_LEVEL (default INFO, the production default)",
    )
    parser.add_argument(
        "--loop",
        choices=EVENT_LOOPS,
        default="uvloop",
        help="the event loop of the workers and producers (default uvloop, as `workqueue "
        "worker` runs)",
    )
    parser.add_argument(
        "--only",
        help="comma-separated workloads to run, of: " + ", ".join([*WORKLOADS, *OPT_IN]),
    )
    return parser.parse_args(argv)


async def _bench(arguments: argparse.Namespace) -> int:
    started = datetime.now(UTC)
    stamp = f"{started:%Y%m%d-%H%M%S}"
    settings = quick_settings() if arguments.quick else full_settings()
    settings = replace(
        settings,
        runs=arguments.runs or settings.runs,
        log_level=arguments.log_level.upper(),
        event_loop=arguments.loop,
        log_path=RESULTS / f"bench-{stamp}.log",
    )
    chosen = list(WORKLOADS) if not arguments.only else arguments.only.split(",")
    known = WORKLOADS | OPT_IN
    unknown = [name for name in chosen if name not in known]
    if unknown:
        print(f"unknown workload(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    configure_bench_logging(settings.log_level, settings.log_path)
    machine = Machine.here()
    clock_started = time.perf_counter()
    reports: list[WorkloadReport] = []
    async with started_server(arguments.database_url, data_parent=arguments.data_parent) as server:
        for name in chosen:
            phase_started = time.perf_counter()
            print(f"running {name} ...", file=sys.stderr, flush=True)
            reports.append(await known[name](server, settings))
            print(
                f"  {name} took {time.perf_counter() - phase_started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
        seconds = time.perf_counter() - clock_started
        table = markdown(
            reports,
            started=started,
            seconds=seconds,
            machine=machine,
            server=server,
            settings=settings,
        )
        json_path = RESULTS / f"bench-{stamp}.json"
        write_json(
            json_path,
            reports,
            started=started,
            seconds=seconds,
            machine=machine,
            server=server,
            settings=settings,
        )
    print(table)
    print(f"\nJSON: {json_path}\nlog:  {settings.log_path}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns the exit status."""
    arguments = _arguments(argv)
    return run_on(arguments.loop, _bench(arguments))


if __name__ == "__main__":
    sys.exit(main())
