"""Rows the worker cannot or must not run, written behind the queue's back.

- A row whose payload no longer validates (the model changed under it, or someone
  wrote it by hand) fails with a message that names the kind and the field, and
  the worker goes on to the next item.
- A row of a kind this worker has no handler for is never claimed by it, and
  ``workqueue status`` still shows it.

The worker is the production one, built by the production container on a real
database; only its kinds (the test's Parcel) and its clock (a FakeClock) are
swapped in.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any
from unittest import mock

import asyncpg
import pytest
from dependency_injector import providers

from integration.worker_drain import first_run_of_items
from unit.bad_input.bad_payloads import Parcel, ParcelKind
from workqueue.adapters.testing import FakeClock
from workqueue.application import KindRegistry
from workqueue.application.worker import Worker
from workqueue.domain import WorkContext, WorkHandler
from workqueue.entrypoints.cli import main
from workqueue.entrypoints.worker.container import build_container, provide, shutdown_resources
from workqueue.entrypoints.worker.settings import WorkerSettings

# Written as a person or an older release might have: no queue code involved.
_BACKDOOR_INSERT = """
INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at)
VALUES ($1, $2::text::jsonb, 'queued', 0, 0, $3)
RETURNING id
"""
_ITEM = "SELECT kind, status, attempt, stalls, worker_id, error FROM work_items WHERE id = $1"


class ParcelHandler(WorkHandler[Parcel]):
    def __init__(self) -> None:
        self.handled: list[Parcel] = []

    async def handle(self, payload: Parcel, ctx: WorkContext) -> None:
        self.handled.append(payload)


@pytest.fixture
async def worker_on(database_url: str) -> AsyncIterator[tuple[Worker, ParcelHandler]]:
    """The production worker serving Parcel on ``database_url``, with a FakeClock."""
    handler = ParcelHandler()
    container = build_container(
        WorkerSettings(database_url=database_url, worker_id="bad-input-worker")
    )
    container.clock.override(providers.Object(FakeClock()))
    container.registry.override(providers.Object(KindRegistry(ParcelKind, [Parcel], [handler])))
    container.schedules.override(providers.Object([]))
    try:
        yield await provide(container.worker), handler
    finally:
        await shutdown_resources(container)


async def insert_behind_the_queue(url: str, kind: str, payload: dict[str, Any]) -> int:
    connection = await asyncpg.connect(url)
    try:
        item_id: int = await connection.fetchval(
            _BACKDOOR_INSERT, kind, json.dumps(payload), datetime.now(UTC)
        )
    finally:
        await connection.close()
    return item_id


async def read_item(url: str, item_id: int) -> dict[str, Any]:
    connection = await asyncpg.connect(url)
    try:
        row = await connection.fetchrow(_ITEM, item_id)
    finally:
        await connection.close()
    assert row is not None
    return dict(row)


@pytest.mark.parametrize(
    ("payload", "field", "reason"),
    [
        ({"count": "many"}, "count", "valid integer"),
        ({"label": 7}, "label", "valid string"),
        ({"size": "huge"}, "size", "'small' or 'large'"),
        ({"dimensions": {"width": "wide"}}, "dimensions.width", "valid integer"),
        ({"colour": "red"}, "colour", "Extra inputs are not permitted"),
    ],
)
async def test_a_row_whose_payload_no_longer_validates_fails_naming_kind_and_field(
    database_url: str,
    worker_on: tuple[Worker, ParcelHandler],
    payload: dict[str, Any],
    field: str,
    reason: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    worker, handler = worker_on
    bad = await insert_behind_the_queue(database_url, "bad_input_parcel", payload)
    good = await insert_behind_the_queue(database_url, "bad_input_parcel", {"label": "fine"})

    assert await first_run_of_items(worker, caplog) == [
        "ran 2 items in 0.000 s: 1 succeeded (bad_input_parcel), 1 failed (bad_input_parcel)"
    ]

    failed = await read_item(database_url, bad)
    assert (failed["status"], failed["attempt"], failed["stalls"]) == ("failed", 1, 0)
    assert failed["error"].startswith(f"invalid payload for kind 'bad_input_parcel': {field}: ")
    assert reason in failed["error"]
    assert "\n" not in failed["error"]
    assert (await read_item(database_url, good))["status"] == "succeeded"
    assert handler.handled == [Parcel(label="fine")]


async def test_rows_of_a_kind_this_worker_does_not_handle_are_never_claimed(
    database_url: str, worker_on: tuple[Worker, ParcelHandler], caplog: pytest.LogCaptureFixture
) -> None:
    worker, handler = worker_on
    foreign = await insert_behind_the_queue(database_url, "legacy_report", {"month": "2025-12"})
    ours = await insert_behind_the_queue(database_url, "bad_input_parcel", {})

    # The run ends when a claim finds nothing more: the foreign row is not claimable.
    assert await first_run_of_items(worker, caplog) == [
        "ran 1 item in 0.000 s: 1 succeeded (bad_input_parcel)"
    ]

    left = await read_item(database_url, foreign)
    assert (left["status"], left["attempt"], left["worker_id"]) == ("queued", 0, None)
    assert (await read_item(database_url, ours))["status"] == "succeeded"
    assert handler.handled == [Parcel()]


@pytest.fixture
def cli_environment(database_url: str) -> Iterator[str]:
    """The CLI's environment pointing at ``database_url`` (tests/conftest.py puts the root
    logger back after every test)."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("WORKQUEUE_")}
    with mock.patch.dict(os.environ, {**kept, "WORKQUEUE_DATABASE_URL": database_url}, clear=True):
        yield database_url


def test_rows_of_a_kind_no_worker_handles_are_shown_by_status(cli_environment: str) -> None:
    foreign = asyncio.run(
        insert_behind_the_queue(cli_environment, "legacy_report", {"month": "2025-12"})
    )
    text, document = io.StringIO(), io.StringIO()

    assert main(["status"], out=text) == 0
    assert main(["status", "--json"], out=document) == 0

    counts = json.loads(document.getvalue())["counts"]
    assert counts["legacy_report"] == {
        "queued": 1,
        "running": 0,
        "succeeded": 0,
        "failed": 0,
        "cancelled": 0,
    }
    assert [item["id"] for item in json.loads(document.getvalue())["active"]] == [foreign]
    lines = text.getvalue().splitlines()
    assert ["legacy_report", "1", "0", "0", "0", "0"] in [line.split() for line in lines]
    assert f"  #{foreign} legacy_report queued attempt=0 stalls=0" in lines
