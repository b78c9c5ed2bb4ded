"""OpenTelemetryTracing: the spans of enqueues and attempts, on opentelemetry-api.

Names and attributes follow OpenTelemetry's messaging conventions, the queue being
the messaging system ``workqueue`` and an item's kind its destination
(docs/adr/0038):

- an enqueue is a PRODUCER span ``enqueue <kind>`` (a batch of several kinds:
  ``enqueue``), current while its statements are sent; its context is what the
  items created carry (:attr:`~workqueue.domain.WorkItem.trace_context`);
- each attempt of an item is a CONSUMER span ``process <kind>``, a child of the
  enqueue's span and linked to it, current while the handler runs, so that spans
  the handler makes are its children.

Nothing is recorded until the application configures a tracer provider: a span
that does not record is dropped at once, and no context is written then. The
attributes are set only on a span that records (a sampler sees each span's name,
kind, parent and links), so that a process without a provider pays one
non-recording span of the API per enqueue and per attempt, and nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import Token
from types import TracebackType
from typing import Self

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode, TracerProvider

from workqueue._version import __version__
from workqueue.domain import (
    NO_SPAN,
    EnqueueResult,
    EnqueueSpan,
    RunSpan,
    TraceContext,
    WorkItem,
)

__all__ = ["ERROR_OUTCOMES", "SYSTEM", "OpenTelemetryTracing"]

SYSTEM = "workqueue"
"""``messaging.system`` of every span."""

ERROR_OUTCOMES = frozenset({"failed", "retried", "lease_lost", "abandoned"})
"""The outcomes of an attempt whose span ends in error: the handler raised (the item
failed, or will be retried), or the attempt's end could not be written."""


_SENDING = {
    "messaging.system": SYSTEM,
    "messaging.operation.type": "send",
    "messaging.operation.name": "enqueue",
}
"""The attributes of every enqueue span."""


class OpenTelemetryTracing:
    """A :class:`~workqueue.domain.Tracing` on OpenTelemetry's API.

    :param tracer_provider: where the spans go; not given, the global one
        (``opentelemetry.trace.set_tracer_provider``), also one set later.
    """

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        self._tracer = trace.get_tracer("workqueue", __version__, tracer_provider)

    def enqueue(self, kind: str) -> EnqueueSpan:
        span = self._tracer.start_span(f"enqueue {kind}", kind=SpanKind.PRODUCER)
        if not span.is_recording():
            return NO_SPAN
        span.set_attributes(_SENDING)
        span.set_attribute("messaging.destination.name", kind)
        return _EnqueueSpan(span)

    def enqueue_many(self, kinds: Sequence[str]) -> EnqueueSpan:
        span = self._tracer.start_span("enqueue", kind=SpanKind.PRODUCER)
        if not span.is_recording():
            return NO_SPAN
        span.set_attributes(_SENDING)
        span.set_attribute("messaging.batch.message_count", len(kinds))
        distinct = set(kinds)
        if len(distinct) == 1:
            (kind,) = distinct
            span.update_name(f"enqueue {kind}")
            span.set_attribute("messaging.destination.name", kind)
        return _BatchSpan(span)

    def run(self, item: WorkItem, worker_id: str) -> RunSpan:
        enqueued = None if item.trace_context is None else propagate.extract(item.trace_context)
        links = (
            () if enqueued is None else [Link(trace.get_current_span(enqueued).get_span_context())]
        )
        span = self._tracer.start_span(
            f"process {item.kind}", context=enqueued, kind=SpanKind.CONSUMER, links=links
        )
        if not span.is_recording():
            return NO_SPAN
        span.set_attributes(
            {
                "messaging.system": SYSTEM,
                "messaging.operation.type": "process",
                "messaging.operation.name": "process",
                "messaging.destination.name": item.kind,
                "messaging.message.id": str(item.id),
                "workqueue.item.id": item.id,
                "workqueue.item.attempt": item.attempt,
                "workqueue.worker.id": worker_id,
            }
        )
        return _RunSpan(span)


class _CurrentSpan:
    """A recording span, current from ``__enter__`` to ``__exit__``, ended there.

    An exception leaving it is recorded on the span, which then ends in error; a
    cancellation (the worker stopping) only ends it.
    """

    _token: Token[Context]  # set on entering, reset on leaving

    def __init__(self, span: Span) -> None:
        self._span = span

    def __enter__(self) -> Self:
        self._token = otel_context.attach(trace.set_span_in_context(self._span))
        return self

    def __exit__(
        self,
        error_type: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(error, Exception):
            self._span.record_exception(error)
            self._span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
        self._span.end()
        otel_context.detach(self._token)


class _EnqueueSpan(_CurrentSpan):
    """The span of one enqueue, and the context its item carries."""

    def __init__(self, span: Span) -> None:
        super().__init__(span)
        carrier: TraceContext = {}
        propagate.inject(carrier, context=trace.set_span_in_context(span))
        self.context: TraceContext | None = carrier

    def enqueued(self, results: Sequence[EnqueueResult]) -> None:
        (result,) = results
        self._span.set_attribute("messaging.message.id", str(result.id))
        self._span.set_attribute("workqueue.item.id", result.id)
        self._span.set_attribute("workqueue.item.created", result.created)


class _BatchSpan(_EnqueueSpan):
    """The span of a batch, and the context every item it creates carries."""

    def enqueued(self, results: Sequence[EnqueueResult]) -> None:
        self._span.set_attribute("workqueue.item.ids", [result.id for result in results])
        self._span.set_attribute(
            "workqueue.items.created", sum(result.created for result in results)
        )


class _RunSpan(_CurrentSpan):
    """The span of one attempt of an item."""

    def raised(self, error: BaseException) -> None:
        self._span.record_exception(error)
        self._span.set_attribute("error.type", type(error).__qualname__)

    def ended(self, outcome: str, error: str | None) -> None:
        self._span.set_attribute("workqueue.outcome", outcome)
        if outcome in ERROR_OUTCOMES:
            self._span.set_status(Status(StatusCode.ERROR, error))
