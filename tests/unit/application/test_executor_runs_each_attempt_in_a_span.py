"""Each attempt of an item runs in a consumer span, a child of the span that enqueued the
item and linked to it, saying which attempt, who ran it and how it ended (docs/adr/0038)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode
from service_bench import Bench, start

from recorded_spans import RecordedSpans, context_of, ids
from workqueue.adapters.memory import InMemoryWorkQueue
from workqueue.application import ExecutionStatus
from workqueue.application.verdict import handler_error
from workqueue.domain import Backoff, KindPolicy, Snooze, WorkContext

TWO_TRIES = KindPolicy(max_attempts=2, backoff=Backoff(initial=timedelta(seconds=10), jitter=0))


def traced(bench: Bench, spans: RecordedSpans) -> Bench:
    """``bench`` with a queue whose enqueues ``spans`` records."""
    bench.queue = InMemoryWorkQueue(bench.state, bench.clock, spans.tracing)
    return bench


def attributes(span: ReadableSpan) -> dict[str, object]:
    return dict(span.attributes or {})


class TestAnItemThatFailsOnceAndSucceedsOnRetry:
    async def test_each_attempt_is_a_consumer_span_under_the_enqueue_and_linked_to_it(
        self, bench: Bench, spans: RecordedSpans
    ) -> None:
        traced(bench, spans).with_policy(TWO_TRIES)
        with spans.tracer.start_as_current_span("request"):
            item_id = await bench.enqueue("a")
        bench.script.fail_with("a", OSError("the partner is down"))
        executor = bench.executor(tracing=spans.tracing, worker_id="worker-7")

        first = await executor.run_next()
        bench.script.on("a", lambda ctx: asyncio.sleep(0))
        await bench.clock.advance(10)
        second = await executor.run_next()

        assert (first and first.status, second and second.status) == (
            ExecutionStatus.RETRIED,
            ExecutionStatus.SUCCEEDED,
        )
        enqueue = spans.one("enqueue alpha")
        request = spans.one("request")
        runs = spans.named("process alpha")
        assert [run.kind for run in runs] == [SpanKind.CONSUMER, SpanKind.CONSUMER]
        enqueued = ids(context_of(enqueue))
        assert [ids(run.parent) for run in runs] == [enqueued, enqueued]
        assert [[ids(link.context) for link in run.links] for run in runs] == [
            [enqueued],
            [enqueued],
        ]
        assert {context_of(span).trace_id for span in (request, enqueue, *runs)} == {
            context_of(request).trace_id
        }
        assert [attributes(run) for run in runs] == [
            {
                "messaging.system": "workqueue",
                "messaging.operation.type": "process",
                "messaging.operation.name": "process",
                "messaging.destination.name": "alpha",
                "messaging.message.id": str(item_id),
                "workqueue.item.id": item_id,
                "workqueue.item.attempt": attempt,
                "workqueue.worker.id": "worker-7",
                **extra,
            }
            for attempt, extra in (
                (1, {"workqueue.outcome": "retried", "error.type": "OSError"}),
                (2, {"workqueue.outcome": "succeeded"}),
            )
        ]

    async def test_the_failed_attempt_records_the_exception_and_ends_in_error(
        self, bench: Bench, spans: RecordedSpans
    ) -> None:
        traced(bench, spans).with_policy(TWO_TRIES)
        await bench.enqueue("a")
        bench.script.fail_with("a", OSError("the partner is down"))
        executor = bench.executor(tracing=spans.tracing)

        await executor.run_next()
        bench.script.on("a", lambda ctx: asyncio.sleep(0))
        await bench.clock.advance(10)
        await executor.run_next()

        failed, succeeded = spans.named("process alpha")
        (event,) = failed.events
        assert (event.name, dict(event.attributes or {})["exception.message"]) == (
            "exception",
            "the partner is down",
        )
        assert (failed.status.status_code, failed.status.description) == (
            StatusCode.ERROR,
            "OSError: the partner is down",
        )
        assert (succeeded.status.status_code, succeeded.events) == (StatusCode.UNSET, ())


class TestOtherEnds:
    async def test_the_last_failure_fails_the_item_in_error(
        self, bench: Bench, spans: RecordedSpans
    ) -> None:
        await traced(bench, spans).enqueue("a")
        bench.script.fail_with("a", ValueError("bad"))

        await bench.executor(tracing=spans.tracing).run_next()

        run = spans.one("process alpha")
        assert attributes(run)["workqueue.outcome"] == "failed"
        assert run.status.status_code is StatusCode.ERROR

    async def test_a_snooze_is_no_error(self, bench: Bench, spans: RecordedSpans) -> None:
        await traced(bench, spans).enqueue("a")

        async def snooze(ctx: WorkContext) -> None:
            raise Snooze(timedelta(minutes=1))

        bench.script.on("a", snooze)

        await bench.executor(tracing=spans.tracing).run_next()

        run = spans.one("process alpha")
        assert attributes(run)["workqueue.outcome"] == "snoozed"
        assert (run.status.status_code, run.events) == (StatusCode.UNSET, ())

    async def test_a_payload_that_does_not_decode_records_why(
        self, bench: Bench, spans: RecordedSpans
    ) -> None:
        item_id = await traced(bench, spans).enqueue("a")
        bench.corrupt_payload(item_id, {"label": 7})

        await bench.executor(tracing=spans.tracing).run_next()

        run = spans.one("process alpha")
        assert attributes(run)["workqueue.outcome"] == "failed"
        assert attributes(run)["error.type"] == "InvalidPayloadError"
        assert run.status.status_code is StatusCode.ERROR

    async def test_a_stopped_worker_releases_its_item_without_an_error(
        self, bench: Bench, spans: RecordedSpans
    ) -> None:
        await traced(bench, spans).enqueue("a")
        bench.script.block("a")
        executor = bench.executor(tracing=spans.tracing)
        run = start(bench, executor)
        await bench.clock.settle()

        executor.stop()
        outcome = await run

        assert outcome is not None
        assert outcome.status is ExecutionStatus.RELEASED
        span = spans.one("process alpha")
        assert attributes(span)["workqueue.outcome"] == "released"
        assert (span.status.status_code, span.events) == (StatusCode.UNSET, ())

    async def test_a_cancelled_run_ends_its_span_without_an_error(
        self, bench: Bench, spans: RecordedSpans
    ) -> None:
        await traced(bench, spans).enqueue("a")
        bench.script.block("a")
        run = start(bench, bench.executor(tracing=spans.tracing))
        await bench.clock.settle()

        run.cancel()
        await asyncio.gather(run, return_exceptions=True)

        span = spans.one("process alpha")
        assert (span.status.status_code, span.events) == (StatusCode.UNSET, ())
        assert span.end_time is not None


class TestTheHandlersOwnSpans:
    async def test_a_span_the_handler_makes_is_a_child_of_its_attempt(
        self, bench: Bench, spans: RecordedSpans
    ) -> None:
        await traced(bench, spans).enqueue("a")

        async def work(ctx: WorkContext) -> None:
            with spans.tracer.start_as_current_span("charge the card"):
                await asyncio.sleep(0)

        bench.script.on("a", work)

        await bench.executor(tracing=spans.tracing).run_next()

        assert ids(spans.one("charge the card").parent) == ids(
            context_of(spans.one("process alpha"))
        )
        assert trace.get_current_span() is trace.INVALID_SPAN


class TestAnItemEnqueuedUntraced:
    async def test_its_attempt_is_a_root_span_without_links(
        self, bench: Bench, spans: RecordedSpans
    ) -> None:
        await bench.enqueue("a")  # the bench's own queue records nothing

        await bench.executor(tracing=spans.tracing).run_next()

        run = spans.one("process alpha")
        assert (run.parent, run.links) == (None, ())


class TestTheHandlersError:
    async def test_is_what_it_raised(self) -> None:
        error = OSError("down")

        async def fail() -> None:
            raise error

        task = asyncio.create_task(fail())
        await asyncio.gather(task, return_exceptions=True)

        assert handler_error(task) is error  # type: ignore[arg-type]

    async def test_is_none_when_it_returned_snoozed_was_cancelled_or_still_runs(self) -> None:
        async def snooze() -> None:
            raise Snooze(timedelta(seconds=1))

        returned = asyncio.create_task(asyncio.sleep(0))
        snoozed = asyncio.create_task(snooze())
        cancelled = asyncio.create_task(asyncio.sleep(60))
        running = asyncio.create_task(asyncio.sleep(60))
        await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.gather(returned, snoozed, cancelled, return_exceptions=True)

        tasks = (returned, snoozed, cancelled, running)
        assert [handler_error(task) for task in tasks] == [None] * 4  # type: ignore[arg-type]
        running.cancel()
