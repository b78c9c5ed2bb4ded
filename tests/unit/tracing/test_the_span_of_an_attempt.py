"""The span of one attempt, as the OpenTelemetry adapter opens and ends it (docs/adr/0038)."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode

from recorded_spans import RecordedSpans, context_of, ids, traceparent
from work_items import running_item
from workqueue._version import __version__
from workqueue.adapters.otel import OpenTelemetryTracing
from workqueue.adapters.otel.tracing import ERROR_OUTCOMES
from workqueue.application import ExecutionStatus
from workqueue.domain import NO_SPAN, NO_TRACING, WorkItem


def item(trace_context: dict[str, str] | None = None, attempt: int = 3) -> WorkItem:
    return running_item(
        id=12, kind="send_receipt", attempt=attempt, worker_id="w", trace_context=trace_context
    )


class TestItsPlaceInTheTrace:
    def test_it_is_a_child_of_the_enqueue_and_linked_to_it(self, spans: RecordedSpans) -> None:
        with spans.tracer.start_as_current_span("enqueued") as enqueued:
            pass
        carried = {"traceparent": traceparent(spans.one("enqueued"))}

        with spans.tracing.run(item(carried), "w-1"):
            pass

        run = spans.one("process send_receipt")
        assert ids(run.parent) == ids(enqueued.get_span_context())
        assert [ids(link.context) for link in run.links] == [ids(enqueued.get_span_context())]

    def test_without_a_context_it_starts_where_the_worker_is(self, spans: RecordedSpans) -> None:
        with spans.tracer.start_as_current_span("worker"), spans.tracing.run(item(), "w-1"):
            pass

        run = spans.one("process send_receipt")
        assert ids(run.parent) == ids(context_of(spans.one("worker")))
        assert run.links == ()

    def test_it_is_current_while_it_runs_and_no_longer_after(self, spans: RecordedSpans) -> None:
        with spans.tracing.run(item(), "w-1") as span:
            current = trace.get_current_span().get_span_context()
            span.ended("succeeded", None)

        assert ids(current) == ids(context_of(spans.one("process send_receipt")))
        assert trace.get_current_span() is trace.INVALID_SPAN


class TestHowItEnds:
    @pytest.mark.parametrize("outcome", [status.value for status in ExecutionStatus])
    def test_the_outcome_is_an_attribute_and_only_a_failure_is_an_error(
        self, spans: RecordedSpans, outcome: str
    ) -> None:
        with spans.tracing.run(item(), "w-1") as span:
            span.ended(outcome, "why")

        run = spans.one("process send_receipt")
        assert (run.attributes or {})["workqueue.outcome"] == outcome
        failed = outcome in {"failed", "retried", "lease_lost", "abandoned"}
        assert run.status.status_code is (StatusCode.ERROR if failed else StatusCode.UNSET)
        assert run.status.description == ("why" if failed else None)

    def test_the_error_outcomes_are_those_where_the_attempt_failed(self) -> None:
        assert {"failed", "retried", "lease_lost", "abandoned"} == ERROR_OUTCOMES

    def test_what_the_handler_raised_is_an_exception_event(self, spans: RecordedSpans) -> None:
        with spans.tracing.run(item(), "w-1") as span:
            span.raised(KeyError("missing"))

        run = spans.one("process send_receipt")
        (event,) = run.events
        assert (event.name, (event.attributes or {})["exception.type"]) == ("exception", "KeyError")
        assert (run.attributes or {})["error.type"] == "KeyError"

    def test_an_exception_leaving_it_is_recorded_as_its_error(self, spans: RecordedSpans) -> None:
        with pytest.raises(RuntimeError), spans.tracing.run(item(), "w-1"):
            raise RuntimeError("the store broke")

        run = spans.one("process send_receipt")
        assert (run.status.status_code, run.status.description) == (
            StatusCode.ERROR,
            "RuntimeError: the store broke",
        )
        assert [event.name for event in run.events] == ["exception"]

    def test_a_cancellation_leaving_it_only_ends_it(self, spans: RecordedSpans) -> None:
        with pytest.raises(KeyboardInterrupt), spans.tracing.run(item(), "w-1"):
            raise KeyboardInterrupt

        run = spans.one("process send_receipt")
        assert (run.status.status_code, run.events) == (StatusCode.UNSET, ())
        assert trace.get_current_span() is trace.INVALID_SPAN


class TestNothingRecorded:
    def test_without_a_configured_provider_it_is_the_no_op_span(self) -> None:
        carried = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}

        assert OpenTelemetryTracing().run(item(), "w-1") is NO_SPAN
        assert OpenTelemetryTracing().run(item(carried), "w-1") is NO_SPAN

    def test_the_no_op_span_records_nothing_and_lets_errors_through(self) -> None:
        span = NO_TRACING.run(item(), "w-1")

        assert span is NO_SPAN

        def run_in_it() -> None:
            with span as entered:
                assert entered is span
                entered.raised(OSError("down"))
                entered.ended("failed", "down")
                raise OSError("down")

        with pytest.raises(OSError, match="down"):
            run_in_it()


def test_every_span_names_the_queue_and_its_version_as_its_scope(spans: RecordedSpans) -> None:
    with spans.tracing.enqueue("send_receipt"), spans.tracing.run(item(), "w-1"):
        pass

    assert {
        (span.instrumentation_scope.name, span.instrumentation_scope.version)
        for span in spans.ended()
        if span.instrumentation_scope is not None
    } == {("workqueue", __version__)}
    assert len(spans.ended()) == 2
