"""A worker process with ``WORKQUEUE_METRICS_PORT``: its own counters and health, over HTTP."""

from __future__ import annotations

import signal
import socket

import httpx
import pytest
from e2e_support import Spawner, cli_argv, eventually, free_port, work_items, worker_env

pytestmark = pytest.mark.e2e


async def test_a_worker_serves_what_it_ran_and_its_health_until_sigterm(
    database_url: str, spawn: Spawner
) -> None:
    port = free_port()
    worker = spawn(cli_argv("worker"), worker_env(database_url, WORKQUEUE_METRICS_PORT=str(port)))
    await worker.wait_for_output(f"serving the worker's metrics on http://127.0.0.1:{port}/metrics")

    async def both_periodic_kinds_succeeded() -> bool:
        items = await work_items(database_url)
        return sorted(i["status"] for i in items) == ["succeeded", "succeeded"]

    await eventually(
        both_periodic_kinds_succeeded, within=20, what="two succeeded items", context=worker.output
    )
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        metrics = (await client.get("/metrics")).text
        health = await client.get("/healthz")

    for kind in ("token_cleanup", "work_item_retention"):
        assert f'workqueue_worker_claimed_total{{kind="{kind}"}} 1.0' in metrics, metrics
        assert f'workqueue_worker_succeeded_total{{kind="{kind}"}} 1.0' in metrics, metrics
    assert "workqueue_worker_heartbeat_seconds_count" in metrics
    assert (health.status_code, health.json()["status"]) == (200, "ok")

    worker.send(signal.SIGTERM)
    assert await worker.exit_status() == 0, worker.output()
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/healthz")


async def test_a_metrics_port_that_is_taken_ends_the_worker_with_one_line(
    database_url: str, spawn: Spawner
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = worker_env(database_url, WORKQUEUE_METRICS_PORT=str(port))
        worker = spawn(cli_argv("worker"), env)

        status = await worker.exit_status(within=30)

    assert status == 1
    assert worker.output().strip().splitlines()[-1] == (
        f"workqueue: cannot listen on 127.0.0.1:{port}: [Errno 98] Address already in use"
    )
