"""The sizes of one benchmark run: the issue's figures, or a smaller smoke run."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

__all__ = ["BenchSettings", "full_settings", "quick_settings"]


@dataclass(frozen=True, slots=True)
class BenchSettings:
    """Every size and duration the workloads use.

    :param runs: how many times each workload runs (a median needs three).
    :param log_level: the level the queue logs at, as a deployment would set
        ``WORKQUEUE_LOG_LEVEL``; lines go to ``log_path`` through the worker's own
        text formatter.
    :param event_loop: ``uvloop`` (what ``workqueue worker`` runs on) or ``asyncio``,
        for the worker processes and the producers alike.
    """

    runs: int = 3
    log_level: str = "INFO"
    event_loop: str = "uvloop"
    log_path: Path = Path("bench/results/bench.log")
    # W1 and W2: enqueue throughput.
    single_enqueues: int = 2_000
    batch_enqueues: int = 20_000
    batch_size: int = 1_000
    # P1-P3 and the pool pair: enqueues one at a time, per side. Fewer left the
    # same loop on both sides of a pair up to 5 % apart over five runs; at 6,000,
    # within 2 %.
    producer_enqueues: int = 6_000
    # W3: drain, against the pgbench ceiling on a table of this many finished rows.
    drain_items: int = 5_000
    finished_rows: int = 10_000
    concurrencies: tuple[int, ...] = (4, 1)
    pgbench_seconds: int = 8
    # W4: enqueue-to-handler-start latency through LISTEN/NOTIFY.
    latency_enqueues: int = 100
    latency_warmup: int = 5
    latency_gap: float = 0.02
    # W5: the claim + complete cycle next to a small and a large history.
    growth_rows: tuple[int, int] = (10_000, 1_000_000)
    growth_cycles: int = 2_000
    # Waiting: the claim + complete cycle beside this many items waiting for their
    # run_at (due tomorrow, at the highest priority), against none.
    waiting_rows: int = 1_000_000
    # Retention: claims during a purge of this many finished rows.
    purge_rows: int = 1_000_000
    # Heartbeats: items long enough to heartbeat many times, on packed pages.
    busy_items: int = 8
    busy_seconds: float = 2.0
    busy_workers: int = 4
    busy_heartbeat_interval: float = 0.02
    busy_neighbours: int = 40
    # C1-C2 (``--only churn``, not in a full run: 20 minutes a run): a steady
    # producer at churn_rate jobs/s and one worker at churn_lanes lanes for
    # churn_seconds; in C2 a transaction sits idle from churn_hold_at for
    # churn_hold_seconds.
    churn_seconds: float = 600.0
    churn_rate: int = 1_500
    churn_lanes: int = 64
    churn_hold_at: float = 240.0
    churn_hold_seconds: float = 120.0


def full_settings() -> BenchSettings:
    """The issue's sizes."""
    return BenchSettings()


def quick_settings() -> BenchSettings:
    """A smoke run of every workload in about a minute; its figures mean little."""
    return replace(
        BenchSettings(),
        runs=1,
        single_enqueues=300,
        producer_enqueues=300,
        batch_enqueues=3_000,
        drain_items=600,
        finished_rows=2_000,
        pgbench_seconds=2,
        latency_enqueues=20,
        latency_warmup=2,
        growth_rows=(2_000, 100_000),
        growth_cycles=300,
        waiting_rows=100_000,
        purge_rows=100_000,
        busy_items=4,
        busy_seconds=0.5,
        churn_seconds=60.0,
        churn_hold_at=20.0,
        churn_hold_seconds=20.0,
    )
