"""Spans recorded by OpenTelemetry's SDK in memory, for the tests of tracing (docs/adr/0038)."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanContext, Tracer

from workqueue.adapters.otel import OpenTelemetryTracing


class RecordedSpans:
    """A tracer provider of its own (the global one stays unset) whose ended spans are kept.

    ``tracing`` is the queue's tracing on it; ``tracer`` makes a test's own spans.
    """

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracing = OpenTelemetryTracing(self.provider)
        self.tracer: Tracer = self.provider.get_tracer("tests")

    def ended(self) -> list[ReadableSpan]:
        """Every span ended so far, in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        """The ended spans called ``name``, in the order they ended."""
        return [span for span in self.ended() if span.name == name]

    def one(self, name: str) -> ReadableSpan:
        """The one ended span called ``name``."""
        (span,) = self.named(name)
        return span


def context_of(span: ReadableSpan) -> SpanContext:
    """``span``'s context (an ended span always has one)."""
    context = span.get_span_context()
    assert context is not None
    return context


def ids(context: SpanContext | None) -> tuple[int, int] | None:
    """A span context's trace and span ids: what names the span, wherever the context was
    read (one extracted from headers is remote, the span's own is not)."""
    return None if context is None else (context.trace_id, context.span_id)


def traceparent(span: ReadableSpan) -> str:
    """The W3C ``traceparent`` header naming ``span``, with its flags."""
    context = context_of(span)
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"
