"""The admin view's latency beside a long history: ``python -m bench.web --database-url URL``.

Fills the (migrated) database at URL with 1,000,000 finished items (one in 50
failed, one in 500 stalled once, finished over 30 days), 100,000 queued, 10,000
delayed (queued to run tomorrow, at the highest priority) and 8 running items,
unless it holds them already, and two days of activity by minute of ten kinds
(what the workers keep for the charts, docs/adr/0040); starts a real ``workqueue
web`` process on it; then times sequential GETs of the overview, the running
list, ``/metrics``, the charts' data (the hour and the day) and the HTML page
(which draws the charts) over real HTTP, after a warm-up. Prints p50, p95
and the longest per route, and the time one full count of the finished items
takes (the read the view does at most every 10 s, in the background).

Targets (issues 17 and 30): the overview, the running list, ``/metrics`` and the
charts' data at most 100 ms at p95 on the 2-core machine. Not a test: nothing here is collected.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import asyncpg
import httpx

FINISHED, QUEUED, DELAYED, RUNNING = 1_000_000, 100_000, 10_000, 8
KINDS = ["import_feed", "send_mail", "token_cleanup", "work_item_retention"]
ROUTES = [
    "/api/overview",
    "/api/running",
    "/metrics",
    "/api/activity",
    "/api/activity?window=day",
    "/",
]
CHARTED_KINDS, CHARTED_DAYS = 10, 2
TARGET_MS = 100.0


async def chart(connection: asyncpg.Connection) -> None:
    """Two days of minutes of ten kinds, as the workers add them, unless they are there."""
    if await connection.fetchval("SELECT count(*) FROM work_activity"):
        return
    await connection.execute(
        """
        INSERT INTO work_activity (minute, kind, succeeded, failed, retried)
        SELECT date_trunc('minute', now()) - m * interval '1 minute', 'kind_' || k,
               3000 + k, m % 7, m % 3
        FROM generate_series(0, $1::integer * 1440 - 1) AS m,
             generate_series(1, $2::integer) AS k
        """,
        CHARTED_DAYS,
        CHARTED_KINDS,
    )
    await connection.execute(
        """
        INSERT INTO work_depth (minute, kind, queued, delayed, running)
        SELECT date_trunc('minute', now()) - m * interval '1 minute', k, 100000, 10000, 8
        FROM generate_series(0, $1::integer * 1440 - 1) AS m,
             unnest(ARRAY['', 'import_feed', 'send_mail']) AS k
        """,
        CHARTED_DAYS,
    )
    await connection.execute("VACUUM ANALYZE work_activity, work_depth")


async def fill(url: str) -> None:
    connection = await asyncpg.connect(url)
    try:
        await chart(connection)
        held = await connection.fetchval("SELECT count(*) FROM work_items")
        if held >= FINISHED + QUEUED + DELAYED:
            print("the database holds the rows already")
            return
        started = time.monotonic()
        await connection.execute(
            """
            INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at,
                                    started_at, heartbeat_at, finished_at, worker_id, progress,
                                    error)
            SELECT ($1::text[])[1 + n % 4], jsonb_build_object('n', n), CASE WHEN n % 50 = 0
                   THEN 'failed' ELSE 'succeeded' END, 1, CASE WHEN n % 500 = 0 THEN 1 ELSE 0 END,
                   t, t, t, t + interval '1 second', 'host:1:abc', '{"done": 10}',
                   CASE WHEN n % 50 = 0 THEN 'RuntimeError: boom ' || n END
            FROM generate_series(1, $2::integer) AS n,
                 LATERAL (SELECT now() - interval '30 days' + n * interval '2.5 seconds' AS t) AS m
            """,
            KINDS,
            FINISHED,
        )
        await connection.execute(
            """
            INSERT INTO work_items (kind, payload, status, enqueued_at)
            SELECT ($1::text[])[1 + n % 2], jsonb_build_object('n', n), 'queued',
                   now() - interval '1 hour' + n * interval '10 milliseconds'
            FROM generate_series(1, $2::integer) AS n
            """,
            KINDS,
            QUEUED,
        )
        await connection.execute(
            """
            INSERT INTO work_items (kind, payload, status, enqueued_at, priority, run_at,
                                    delayed)
            SELECT ($1::text[])[1 + n % 2], jsonb_build_object('n', n), 'queued', now(), 100,
                   now() + interval '1 day' + n * interval '1 second', true
            FROM generate_series(1, $2::integer) AS n
            """,
            KINDS,
            DELAYED,
        )
        await connection.execute(
            """
            INSERT INTO work_items (kind, payload, status, attempt, enqueued_at, started_at,
                                    heartbeat_at, lease_expires_at, worker_id, progress)
            SELECT 'import_feed', '{}', 'running', 1, now(), now(), now(),
                   now() + interval '60 seconds', 'worker-' || n, '{"pages": 3}'
            FROM generate_series(1, $1::integer) AS n
            """,
            RUNNING,
        )
        await connection.execute("VACUUM ANALYZE work_items")
        print(f"filled in {time.monotonic() - started:.1f} s")
    finally:
        await connection.close()


async def full_count_ms(url: str, times: int = 5) -> list[float]:
    from workqueue.adapters.postgres import PostgresWorkMonitor, close_pool, create_pool

    pool = await create_pool(url, min_size=1, max_size=1)
    try:
        monitor = PostgresWorkMonitor(pool)
        found = []
        for _ in range(times):
            started = time.perf_counter()
            await monitor.count_finished()
            found.append((time.perf_counter() - started) * 1000)
        return found
    finally:
        await close_pool(pool)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.web", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--database-url", required=True, help="a migrated database to fill")
    parser.add_argument("--requests", type=int, default=300, help="timed GETs per route")
    args = parser.parse_args()
    asyncio.run(fill(args.database_url))
    counts = asyncio.run(full_count_ms(args.database_url))

    port = free_port()
    env = {
        **os.environ,
        "WORKQUEUE_DATABASE_URL": args.database_url,
        "WORKQUEUE_LOG_LEVEL": "WARNING",
    }
    with tempfile.TemporaryFile() as log:
        web = subprocess.Popen(
            [sys.executable, "-m", "workqueue.entrypoints.cli", "web", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base, timeout=10) as client:
                deadline = time.monotonic() + 30
                while True:
                    try:
                        if client.get("/healthz").status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    if time.monotonic() > deadline:
                        raise SystemExit("workqueue web did not start")
                    time.sleep(0.1)
                for route in ROUTES:  # warm-up: connections, prepared statements
                    for _ in range(10):
                        client.get(route).raise_for_status()
                print(
                    f"\n{args.requests} sequential GETs per route over HTTP, "
                    f"{FINISHED:,} finished, {QUEUED:,} queued, {DELAYED:,} delayed, "
                    f"{RUNNING} running rows\n"
                )
                print("| route | p50 ms | p95 ms | max ms | target | met |")
                print("|---|---:|---:|---:|---|---|")
                for route in ROUTES:
                    times = []
                    for _ in range(args.requests):
                        started = time.perf_counter()
                        client.get(route).raise_for_status()
                        times.append((time.perf_counter() - started) * 1000)
                    p95 = percentile(times, 0.95)
                    judged = route != "/"
                    print(
                        f"| `{route}` | {statistics.median(times):.1f} | {p95:.1f} | "
                        f"{max(times):.1f} | {'≤ 100 ms p95' if judged else ''} | "
                        f"{('yes' if p95 <= TARGET_MS else '**no**') if judged else ''} |"
                    )
        finally:
            web.terminate()
            web.wait(timeout=10)
    print(
        f"\none full count of the finished items (every 10 s at most, in the background): "
        f"median {statistics.median(counts):.0f} ms, min {min(counts):.0f}, max {max(counts):.0f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
