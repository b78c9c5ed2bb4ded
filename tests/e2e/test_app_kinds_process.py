"""An application's own kinds, served by the stock ``workqueue worker --app``: a real process on
a real PostgreSQL, the application package outside src/ (examples/app_kinds/reports)."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from e2e_support import Spawner, eventually, run_cli, work_items, worker_env

from workqueue.domain import WorkKind, kind_name

pytestmark = pytest.mark.e2e

APP_DIR = Path(__file__).parents[2] / "examples" / "app_kinds"
APP = "reports.work"
# The console script pip installed: the stock command, not a test's wrapper.
WORKQUEUE = str(Path(sys.executable).with_name("workqueue"))
BUILT_IN = sorted(kind_name(kind) for kind in WorkKind)


async def test_one_worker_runs_the_applications_kind_beside_both_built_in_ones(
    database_url: str, spawn: Spawner
) -> None:
    env = worker_env(database_url)
    worker = spawn([WORKQUEUE, "worker", "--app", APP], env, cwd=APP_DIR)

    def every_item_succeeded(count: int) -> Callable[[], Awaitable[bool]]:
        async def check() -> bool:
            items = await work_items(database_url)
            return len(items) == count and all(item["status"] == "succeeded" for item in items)

        return check

    # At start-up the application's schedule is due beside the two built-in ones.
    await eventually(
        every_item_succeeded(1 + len(BUILT_IN)),
        within=30,
        what="the three periodic items succeeded",
        context=worker.output,
    )
    enqueued = run_cli(
        [WORKQUEUE, "enqueue", "build_report", "--payload", '{"pages": 4}', "--app", APP],
        env,
        cwd=APP_DIR,
    )
    assert enqueued.returncode == 0, enqueued.stderr
    assert enqueued.stdout.startswith("created item ")
    await eventually(
        every_item_succeeded(2 + len(BUILT_IN)),
        within=30,
        what="the enqueued report succeeded",
        context=worker.output,
    )

    items = await work_items(database_url)
    assert sorted(item["kind"] for item in items) == sorted(["build_report"] * 2 + BUILT_IN)
    # The scheduled report and the enqueued one, each with the progress its handler reported.
    reports = [item["progress"] for item in items if item["kind"] == "build_report"]
    assert reports == [{"pages": 1}, {"pages": 4}]
    assert len({item["worker_id"] for item in items}) == 1

    status = run_cli([WORKQUEUE, "status", "--json", "--app", APP], env, cwd=APP_DIR)
    assert status.returncode == 0, status.stderr
    counts = json.loads(status.stdout)["counts"]
    assert sorted(counts) == sorted(["build_report", *BUILT_IN])
    assert counts["build_report"]["succeeded"] == 2

    worker.send(signal.SIGTERM)
    assert await worker.exit_status() == 0, worker.output()


def test_enqueue_validates_the_applications_payload_before_any_database(tmp_path: Path) -> None:
    # A port nothing listens on: reaching it would be a connection error, not this one.
    env = worker_env("postgresql://nobody@127.0.0.1:1/none", WORKQUEUE_CONNECT_ATTEMPTS="1")

    run = run_cli(
        [WORKQUEUE, "enqueue", "build_report", "--payload", '{"pages": "many"}', "--app", APP],
        env,
        cwd=APP_DIR,
    )

    assert run.returncode == 2
    assert run.stderr == (
        "workqueue: invalid payload for kind 'build_report': "
        "pages: Input should be a valid integer, unable to parse string as an integer\n"
    )
