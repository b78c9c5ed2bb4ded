"""An enqueue records a producer span, and the items it creates carry that span's context.

On the in-memory queue, which keeps what the PostgreSQL queues write to
``work_items.trace_context`` (docs/adr/0038). Nothing is recorded, and no context
kept, without a configured tracer provider.
"""

from __future__ import annotations

import sys

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from recorded_spans import RecordedSpans, context_of, traceparent
from workqueue.adapters.memory import InMemoryState, InMemoryWorkQueue
from workqueue.adapters.otel import OpenTelemetryTracing
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob
from workqueue.adapters.tracing import default_tracing
from workqueue.domain import (
    NO_SPAN,
    NO_TRACING,
    EnqueueRequest,
    EnqueueResult,
    Tracing,
    WorkItem,
)


class World:
    def __init__(self, tracing: Tracing | None) -> None:
        self.state = InMemoryState()
        self.queue = InMemoryWorkQueue(self.state, FakeClock(), tracing)

    def item(self, item_id: int) -> WorkItem:
        return self.state.items[item_id]


class TestOneEnqueue:
    async def test_inside_a_parent_span_it_is_a_producer_span_under_it_naming_kind_and_item(
        self, spans: RecordedSpans
    ) -> None:
        world = World(spans.tracing)

        with spans.tracer.start_as_current_span("request"):
            result = await world.queue.enqueue(AlphaJob())

        enqueue, request = spans.ended()
        assert (enqueue.name, enqueue.kind) == ("enqueue contract_alpha", SpanKind.PRODUCER)
        assert enqueue.parent == context_of(request)
        assert dict(enqueue.attributes or {}) == {
            "messaging.system": "workqueue",
            "messaging.operation.type": "send",
            "messaging.operation.name": "enqueue",
            "messaging.destination.name": "contract_alpha",
            "messaging.message.id": str(result.id),
            "workqueue.item.id": result.id,
            "workqueue.item.created": True,
        }
        assert enqueue.status.status_code is StatusCode.UNSET

    async def test_the_item_carries_the_context_of_the_enqueue_span(
        self, spans: RecordedSpans
    ) -> None:
        world = World(spans.tracing)

        result = await world.queue.enqueue(AlphaJob())

        assert world.item(result.id).trace_context == {
            "traceparent": traceparent(spans.one("enqueue contract_alpha"))
        }

    async def test_the_context_carries_the_trace_state_too(self, spans: RecordedSpans) -> None:
        world = World(spans.tracing)
        parent = trace.SpanContext(
            trace_id=0x0AF7651916CD43DD8448EB211C80319C,
            span_id=0xB7AD6B7169203331,
            is_remote=True,
            trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
            trace_state=trace.TraceState([("vendor", "value")]),
        )

        with trace.use_span(trace.NonRecordingSpan(parent)):
            result = await world.queue.enqueue(AlphaJob())

        context = world.item(result.id).trace_context
        assert context is not None
        assert context["traceparent"].startswith("00-0af7651916cd43dd8448eb211c80319c-")
        assert context["tracestate"] == "vendor=value"

    async def test_an_absorbed_enqueue_says_so_and_the_item_keeps_its_first_context(
        self, spans: RecordedSpans
    ) -> None:
        world = World(spans.tracing)

        first = await world.queue.enqueue(AlphaJob(), dedup_key="k")
        second = await world.queue.enqueue(AlphaJob(), dedup_key="k")

        creating, absorbed = spans.named("enqueue contract_alpha")
        assert second == EnqueueResult(id=first.id, created=False)
        assert (absorbed.attributes or {})["workqueue.item.created"] is False
        assert (absorbed.attributes or {})["workqueue.item.id"] == first.id
        assert world.item(first.id).trace_context == {"traceparent": traceparent(creating)}

    async def test_the_enqueue_span_is_current_while_it_enqueues(
        self, spans: RecordedSpans
    ) -> None:
        with spans.tracing.enqueue("contract_alpha") as span:
            current = trace.get_current_span()
            span.enqueued([EnqueueResult(id=1, created=True)])

        assert current.get_span_context() == context_of(spans.one("enqueue contract_alpha"))
        assert trace.get_current_span() is trace.INVALID_SPAN

    def test_an_enqueue_that_fails_records_the_error_on_its_span(
        self, spans: RecordedSpans
    ) -> None:
        with pytest.raises(OSError, match="down"), spans.tracing.enqueue("contract_alpha"):
            raise OSError("the database is down")

        span = spans.one("enqueue contract_alpha")
        assert (span.status.status_code, span.status.description) == (
            StatusCode.ERROR,
            "OSError: the database is down",
        )
        (event,) = span.events
        assert event.name == "exception"
        assert (event.attributes or {})["exception.type"] == "OSError"


class TestABatch:
    async def test_a_batch_is_one_producer_span_under_the_parent_naming_its_one_kind(
        self, spans: RecordedSpans
    ) -> None:
        world = World(spans.tracing)

        with spans.tracer.start_as_current_span("request"):
            results = await world.queue.enqueue_many(
                [
                    EnqueueRequest(AlphaJob(), "k"),
                    EnqueueRequest(AlphaJob()),
                    EnqueueRequest(AlphaJob(), "k"),
                ]
            )

        batch, request = spans.ended()
        assert (batch.name, batch.kind) == ("enqueue contract_alpha", SpanKind.PRODUCER)
        assert batch.parent == context_of(request)
        assert dict(batch.attributes or {}) == {
            "messaging.system": "workqueue",
            "messaging.operation.type": "send",
            "messaging.operation.name": "enqueue",
            "messaging.batch.message_count": 3,
            "messaging.destination.name": "contract_alpha",
            "workqueue.item.ids": tuple(result.id for result in results),
            "workqueue.items.created": 2,
        }

    async def test_every_item_of_a_batch_carries_the_batch_span_context(
        self, spans: RecordedSpans
    ) -> None:
        world = World(spans.tracing)

        results = await world.queue.enqueue_many(
            [EnqueueRequest(AlphaJob()), EnqueueRequest(BetaJob(label="b"))]
        )

        wanted = {"traceparent": traceparent(spans.one("enqueue"))}
        assert [world.item(result.id).trace_context for result in results] == [wanted, wanted]

    async def test_a_batch_of_several_kinds_names_none(self, spans: RecordedSpans) -> None:
        world = World(spans.tracing)

        await world.queue.enqueue_many(
            [EnqueueRequest(AlphaJob()), EnqueueRequest(BetaJob(label="b"))]
        )

        batch = spans.one("enqueue")
        assert "messaging.destination.name" not in (batch.attributes or {})
        assert (batch.attributes or {})["messaging.batch.message_count"] == 2


class TestNothingRecorded:
    async def test_without_a_configured_provider_nothing_is_recorded_nor_kept(self) -> None:
        # The global provider is never set in the tests: the API's no-op one answers.
        world = World(OpenTelemetryTracing())

        single = await world.queue.enqueue(AlphaJob())
        batch = await world.queue.enqueue_many([EnqueueRequest(AlphaJob())])

        assert world.item(single.id).trace_context is None
        assert world.item(batch[0].id).trace_context is None

    def test_a_span_that_does_not_record_is_the_no_op_span(self) -> None:
        tracing = OpenTelemetryTracing(trace.NoOpTracerProvider())

        assert tracing.enqueue("contract_alpha") is NO_SPAN
        assert tracing.enqueue_many(["contract_alpha"]) is NO_SPAN

    async def test_no_tracing_keeps_no_context(self) -> None:
        world = World(NO_TRACING)

        result = await world.queue.enqueue(AlphaJob())

        assert world.item(result.id).trace_context is None

    def test_the_no_op_span_records_nothing_and_lets_errors_through(self) -> None:
        span = NO_TRACING.enqueue("contract_alpha")

        assert span is NO_SPAN
        assert NO_TRACING.enqueue_many(["contract_alpha"]) is NO_SPAN
        assert span.context is None

        def enqueue_in_it() -> None:
            with span as entered:
                assert entered is span
                entered.enqueued([EnqueueResult(id=1, created=True)])
                raise OSError("down")

        with pytest.raises(OSError, match="down"):
            enqueue_in_it()


class TestTheDefault:
    def test_with_opentelemetry_installed_it_is_opentelemetrys(self) -> None:
        assert isinstance(default_tracing(), OpenTelemetryTracing)

    def test_without_opentelemetry_it_records_nothing(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # A None in sys.modules makes its import fail, as a missing package's does.
        monkeypatch.setitem(sys.modules, "workqueue.adapters.otel", None)

        assert default_tracing() is NO_TRACING

    def test_a_queue_given_no_tracing_takes_the_default(self) -> None:
        world = World(None)

        assert isinstance(world.queue._tracing, OpenTelemetryTracing)
