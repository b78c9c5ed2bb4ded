"""On PostgreSQL, every producer stores its enqueue span's context in
``work_items.trace_context``, and a worker's attempts run in spans started from it
(docs/adr/0038). Spans are recorded by the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from enum import StrEnum
from typing import Any

import asyncpg
import psycopg
import pytest
from opentelemetry.trace import SpanKind, StatusCode
from psycopg_pool import ConnectionPool

from recorded_spans import RecordedSpans, context_of, ids, traceparent
from workqueue.adapters.otel import OpenTelemetryTracing
from workqueue.adapters.postgres import PostgresWorkQueue, PostgresWorkStore
from workqueue.adapters.psycopg import PsycopgWorkQueue
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind, GammaJob
from workqueue.application import ExecutionStatus, ExecutorSettings, KindRegistry, WorkExecutor
from workqueue.domain import (
    Backoff,
    EnqueueRequest,
    KindPolicy,
    WorkContext,
    WorkHandler,
    WorkPayload,
)

pytestmark = pytest.mark.postgres


async def stored_contexts(pool: asyncpg.Pool) -> dict[int, Any]:
    rows = await pool.fetch("SELECT id, trace_context FROM work_items ORDER BY id")
    return {row["id"]: row["trace_context"] for row in rows}


def carried(spans: RecordedSpans, name: str) -> list[dict[str, str]]:
    """The context each span called ``name`` gave its items, in the order they ended."""
    return [{"traceparent": traceparent(span)} for span in spans.named(name)]


class TestTheAsyncQueue:
    async def test_each_kind_of_enqueue_stores_its_span_context_with_its_items(
        self, migrated_pool: asyncpg.Pool
    ) -> None:
        spans = RecordedSpans()
        queue = PostgresWorkQueue(migrated_pool, FakeClock(), spans.tracing)

        with spans.tracer.start_as_current_span("request"):
            plain = await queue.enqueue(AlphaJob())
            keyed = await queue.enqueue(BetaJob(), dedup_key="k")
            keyless = await queue.enqueue_many([EnqueueRequest(GammaJob())])
            with_keys = await queue.enqueue_many([EnqueueRequest(GammaJob(), "g")])
        await queue.close()

        single_alpha, single_beta = carried(spans, f"enqueue {ContractKind.ALPHA}") + carried(
            spans, f"enqueue {ContractKind.BETA}"
        )
        batch_keyless, batch_keyed = carried(spans, f"enqueue {ContractKind.GAMMA}")
        assert await stored_contexts(migrated_pool) == {
            plain.id: single_alpha,
            keyed.id: single_beta,
            keyless[0].id: batch_keyless,
            with_keys[0].id: batch_keyed,
        }
        request = context_of(spans.one("request"))
        assert {ids(span.parent) for span in spans.ended() if span.name != "request"} == {
            ids(request)
        }

    async def test_on_the_callers_connection_the_context_commits_with_the_item(
        self, migrated_pool: asyncpg.Pool
    ) -> None:
        spans = RecordedSpans()
        async with migrated_pool.acquire() as connection, connection.transaction():
            queue = PostgresWorkQueue(connection, FakeClock(), spans.tracing)
            result = await queue.enqueue(AlphaJob())

        assert await stored_contexts(migrated_pool) == {
            result.id: carried(spans, f"enqueue {ContractKind.ALPHA}")[0]
        }

    async def test_without_a_configured_provider_nothing_is_stored(
        self, migrated_pool: asyncpg.Pool
    ) -> None:
        queue = PostgresWorkQueue(migrated_pool, FakeClock(), OpenTelemetryTracing())

        single = await queue.enqueue(AlphaJob())
        batch = await queue.enqueue_many([EnqueueRequest(BetaJob())])
        await queue.close()

        assert await stored_contexts(migrated_pool) == {single.id: None, batch[0].id: None}

    async def test_a_claim_reads_the_context_back(self, migrated_pool: asyncpg.Pool) -> None:
        spans = RecordedSpans()
        clock = FakeClock()
        queue = PostgresWorkQueue(migrated_pool, clock, spans.tracing)
        store = PostgresWorkStore(migrated_pool, clock)

        await queue.enqueue(AlphaJob())
        item = await store.claim(
            {ContractKind.ALPHA}, worker_id="w", lease_duration=timedelta(seconds=60)
        )
        await queue.close()
        await store.close()

        assert item is not None
        assert item.trace_context == carried(spans, f"enqueue {ContractKind.ALPHA}")[0]


class TestTheSyncQueue:
    async def test_in_the_callers_transaction_a_single_and_a_batch_store_their_contexts(
        self, migrated_pool: asyncpg.Pool, database_url: str
    ) -> None:
        spans = RecordedSpans()

        def produce() -> list[int]:
            with psycopg.connect(database_url) as connection, connection.transaction():
                queue = PsycopgWorkQueue(connection, FakeClock(), spans.tracing)
                with spans.tracer.start_as_current_span("request"):
                    single = queue.enqueue(AlphaJob())
                    keyed = queue.enqueue(AlphaJob(), dedup_key="k")
                    batch = queue.enqueue_many([EnqueueRequest(BetaJob())])
            return [single.id, keyed.id, batch[0].id]

        single, keyed, batch = await asyncio.to_thread(produce)

        alpha_plain, alpha_keyed = carried(spans, f"enqueue {ContractKind.ALPHA}")
        assert await stored_contexts(migrated_pool) == {
            single: alpha_plain,
            keyed: alpha_keyed,
            batch: carried(spans, f"enqueue {ContractKind.BETA}")[0],
        }
        request = context_of(spans.one("request"))
        assert [span.kind for span in spans.ended() if span.name != "request"] == [
            SpanKind.PRODUCER
        ] * 3
        assert {ids(span.parent) for span in spans.ended() if span.name != "request"} == {
            ids(request)
        }

    async def test_on_a_pool_each_enqueue_stores_its_context(
        self, migrated_pool: asyncpg.Pool, database_url: str
    ) -> None:
        spans = RecordedSpans()

        def produce() -> list[int]:
            with ConnectionPool(database_url, min_size=1, max_size=1, open=True) as pool:
                queue = PsycopgWorkQueue(pool, FakeClock(), spans.tracing)
                return [
                    queue.enqueue(AlphaJob()).id,
                    queue.enqueue_many([EnqueueRequest(AlphaJob(), "k")])[0].id,
                ]

        single, batch = await asyncio.to_thread(produce)

        first, second = carried(spans, f"enqueue {ContractKind.ALPHA}")
        assert await stored_contexts(migrated_pool) == {single: first, batch: second}


class Flaky(StrEnum):
    FLAKY = "flaky"


class FlakyJob(WorkPayload):
    kind = Flaky.FLAKY


class FlakyHandler(WorkHandler[FlakyJob]):
    """Fails its first attempt, succeeds on the next."""

    policy = KindPolicy(max_attempts=2, backoff=Backoff(initial=timedelta(seconds=5), jitter=0))

    def __init__(self) -> None:
        self.calls = 0

    async def handle(self, payload: FlakyJob, ctx: WorkContext) -> None:
        self.calls += 1
        if self.calls == 1:
            raise OSError("the partner is down")


async def test_an_item_that_fails_once_runs_twice_in_spans_under_its_enqueue(
    migrated_pool: asyncpg.Pool,
) -> None:
    spans = RecordedSpans()
    clock = FakeClock()
    queue = PostgresWorkQueue(migrated_pool, clock, spans.tracing)
    store = PostgresWorkStore(migrated_pool, clock)
    executor = WorkExecutor(
        store,
        KindRegistry(Flaky, [FlakyJob], [FlakyHandler()]),
        clock,
        worker_id="worker-9",
        settings=ExecutorSettings(),
        tracing=spans.tracing,
    )
    with spans.tracer.start_as_current_span("request"):
        result = await queue.enqueue(FlakyJob())

    first = await executor.run_next()
    await clock.advance(5)
    second = await executor.run_next()
    await queue.close()
    await store.close()

    assert (first and first.status, second and second.status) == (
        ExecutionStatus.RETRIED,
        ExecutionStatus.SUCCEEDED,
    )
    enqueue = context_of(spans.one("enqueue flaky"))
    runs = spans.named("process flaky")
    assert [ids(run.parent) for run in runs] == [ids(enqueue)] * 2
    assert [[ids(link.context) for link in run.links] for run in runs] == [[ids(enqueue)]] * 2
    assert [
        (
            (run.attributes or {})["workqueue.item.id"],
            (run.attributes or {})["workqueue.item.attempt"],
            (run.attributes or {})["workqueue.outcome"],
            (run.attributes or {})["workqueue.worker.id"],
            run.status.status_code,
        )
        for run in runs
    ] == [
        (result.id, 1, "retried", "worker-9", StatusCode.ERROR),
        (result.id, 2, "succeeded", "worker-9", StatusCode.UNSET),
    ]
