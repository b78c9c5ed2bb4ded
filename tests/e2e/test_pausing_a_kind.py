"""An operator pauses a kind across worker restarts, then resumes it: real processes, real
PostgreSQL (issue 28: nothing of a paused kind is claimed for the whole pause; a resume is
heard at once)."""

from __future__ import annotations

import asyncio
import json
import signal
import time

import pytest
from e2e_support import Spawner, eventually, run_cli, script_argv, work_items, worker_env

pytestmark = pytest.mark.e2e

NAP = "e2e_nap"


async def statuses(database_url: str) -> list[str]:
    return [item["status"] for item in await work_items(database_url)]


def enqueue_nap(env: dict[str, str], seconds: float) -> None:
    done = run_cli(script_argv("enqueue", NAP, "--payload", json.dumps({"seconds": seconds})), env)
    assert done.returncode == 0, done.stderr


async def test_a_paused_kind_waits_across_a_restart_and_runs_as_soon_as_it_is_resumed(
    database_url: str, spawn: Spawner
) -> None:
    env = worker_env(database_url)
    first = spawn(script_argv("worker"), env)
    enqueue_nap(env, 1.5)
    await eventually(
        lambda: _is(database_url, ["running"]),
        within=15,
        what="a running nap",
        context=first.output,
    )

    paused = run_cli(script_argv("pause", NAP, "--reason", "partner down"), env)
    assert paused.returncode == 0, paused.stderr
    assert "e2e_nap is paused since" in paused.stdout
    enqueue_nap(env, 0.1)  # enqueued during the pause, while a worker polls
    # The running item finishes; the queued one is not claimed for several poll cycles.
    await eventually(
        lambda: _is(database_url, ["succeeded", "queued"]),
        within=15,
        what="the running nap finished",
        context=first.output,
    )
    await asyncio.sleep(1.0)
    assert await statuses(database_url) == ["succeeded", "queued"]

    first.send(signal.SIGTERM)
    assert await first.exit_status() == 0, first.output()
    enqueue_nap(env, 0.1)
    # A worker started during the pause obeys it; it polls only every 30 s, so only
    # the resume's notification can wake it in time.
    second = spawn(script_argv("worker"), {**env, "WORKQUEUE_POLL_INTERVAL": "30"})
    await second.wait_for_output("worker started")
    await asyncio.sleep(1.0)
    assert await statuses(database_url) == ["succeeded", "queued", "queued"]
    status = run_cli(script_argv("status", "--json"), env)
    assert status.returncode == 0, status.stderr
    assert [(p["kind"], p["reason"]) for p in json.loads(status.stdout)["paused"]] == [
        (NAP, "partner down")
    ]

    resumed_at = time.monotonic()
    resumed = run_cli(script_argv("resume", NAP), env)
    assert (resumed.returncode, resumed.stdout) == (
        0,
        "resumed e2e_nap: workers claim its items again\n",
    )
    await eventually(
        lambda: _is(database_url, ["succeeded"] * 3),
        within=10,
        what="both waiting naps run after the resume",
        context=second.output,
    )
    assert time.monotonic() - resumed_at < 10  # far below the 30 s poll interval

    second.send(signal.SIGTERM)
    assert await second.exit_status() == 0, second.output()


async def _is(database_url: str, expected: list[str]) -> bool:
    return await statuses(database_url) == expected
