"""Handlers that say too much, on PostgreSQL: bounded by the settings, stored, and survived.

A handler may raise an exception whose message is megabytes long or holds a NUL
(PostgreSQL text cannot), or report a progress snapshot past the limit. The
limits come from ``WORKQUEUE_MAX_ERROR_LENGTH`` and ``WORKQUEUE_MAX_PROGRESS_BYTES``
through the production container; the item ends as the handler did, and the
worker runs the next one.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from dependency_injector import providers

from integration.worker_drain import first_run_of_items
from unit.bad_input.bad_payloads import Parcel, ParcelKind
from workqueue.adapters.postgres import PostgresWorkQueue
from workqueue.adapters.testing import FakeClock
from workqueue.application import TRUNCATION_MARKER, KindRegistry
from workqueue.application.worker import Worker
from workqueue.domain import WorkContext, WorkHandler, unstorable_character
from workqueue.entrypoints.worker.container import build_container, provide, shutdown_resources
from workqueue.entrypoints.worker.settings import WorkerSettings

MAX_ERROR_LENGTH = 1000
MAX_PROGRESS_BYTES = 2000
# Three bytes of UTF-8 each: a snapshot at the limit in bytes, not in characters.
WIDE = "\u20ac"
AT_THE_LIMIT = {"text": WIDE * ((MAX_PROGRESS_BYTES - len('{"text":""}')) // 3)}


class Mouthy(WorkHandler[Parcel]):
    """Does what the parcel's label says."""

    def __init__(self) -> None:
        self.refusals: list[str] = []

    async def handle(self, payload: Parcel, ctx: WorkContext) -> None:
        if payload.label == "rant":
            raise RuntimeError("disk\x00full \ud800 " + "and so on " * 200_000)
        if payload.label == "report":
            ctx.report_progress(AT_THE_LIMIT)
            try:
                ctx.report_progress({"text": WIDE * MAX_PROGRESS_BYTES})
            except ValueError as refused:
                self.refusals.append(str(refused))
        if payload.label == "overreport":
            ctx.report_progress({"text": "x" * MAX_PROGRESS_BYTES})


@pytest.fixture
async def worker(database_url: str) -> AsyncIterator[tuple[Worker, Mouthy]]:
    handler = Mouthy()
    container = build_container(
        WorkerSettings(
            database_url=database_url,
            worker_id="mouthy-worker",
            max_error_length=MAX_ERROR_LENGTH,
            max_progress_bytes=MAX_PROGRESS_BYTES,
        )
    )
    container.clock.override(providers.Object(FakeClock()))
    container.registry.override(providers.Object(KindRegistry(ParcelKind, [Parcel], [handler])))
    container.schedules.override(providers.Object([]))
    try:
        yield await provide(container.worker), handler
    finally:
        await shutdown_resources(container)


async def enqueue_labels(pool: asyncpg.Pool, *labels: str) -> list[int]:
    queue = PostgresWorkQueue(pool, FakeClock())
    return [(await queue.enqueue(Parcel(label=label))).id for label in labels]


async def items(pool: asyncpg.Pool) -> dict[int, dict[str, Any]]:
    rows = await pool.fetch(
        "SELECT id, status, error, progress::text AS progress FROM work_items ORDER BY id"
    )
    return {
        row["id"]: {
            **dict(row),
            "progress": None if row["progress"] is None else json.loads(row["progress"]),
        }
        for row in rows
    }


async def test_a_huge_error_holding_a_nul_is_stored_bounded_and_the_worker_carries_on(
    migrated_pool: asyncpg.Pool, worker: tuple[Worker, Mouthy], caplog: pytest.LogCaptureFixture
) -> None:
    rant, after = await enqueue_labels(migrated_pool, "rant", "calm")

    assert await first_run_of_items(worker[0], caplog) == [
        "ran 2 items in 0.000 s: 1 succeeded (bad_input_parcel), 1 failed (bad_input_parcel)"
    ]

    stored = await items(migrated_pool)
    assert stored[rant]["status"] == "failed"
    error = stored[rant]["error"]
    assert error.startswith("RuntimeError: disk\\x00full \\ud800 and so on")
    assert error.endswith(TRUNCATION_MARKER)
    assert len(error) == MAX_ERROR_LENGTH
    assert unstorable_character(error) is None
    assert stored[after]["status"] == "succeeded"


async def test_a_snapshot_at_the_byte_limit_is_kept_and_one_past_it_refused(
    migrated_pool: asyncpg.Pool, worker: tuple[Worker, Mouthy], caplog: pytest.LogCaptureFixture
) -> None:
    (report,) = await enqueue_labels(migrated_pool, "report")

    assert await first_run_of_items(worker[0], caplog) == [
        "ran 1 item in 0.000 s: 1 succeeded (bad_input_parcel)"
    ]

    stored = await items(migrated_pool)
    assert stored[report]["status"] == "succeeded"
    assert stored[report]["progress"] == AT_THE_LIMIT
    (refusal,) = worker[1].refusals
    assert f"the limit (max_progress_bytes) is {MAX_PROGRESS_BYTES}" in refusal


async def test_a_refused_snapshot_the_handler_does_not_catch_fails_only_its_own_item(
    migrated_pool: asyncpg.Pool, worker: tuple[Worker, Mouthy], caplog: pytest.LogCaptureFixture
) -> None:
    over, after = await enqueue_labels(migrated_pool, "overreport", "calm")

    assert await first_run_of_items(worker[0], caplog) == [
        "ran 2 items in 0.000 s: 1 succeeded (bad_input_parcel), 1 failed (bad_input_parcel)"
    ]

    stored = await items(migrated_pool)
    assert stored[over]["status"] == "failed"
    assert stored[over]["error"].startswith("ValueError: progress snapshot is ")
    assert f"the limit (max_progress_bytes) is {MAX_PROGRESS_BYTES}" in stored[over]["error"]
    assert stored[after]["status"] == "succeeded"
