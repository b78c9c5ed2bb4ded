"""The Tracing port: the spans of an enqueue and of each attempt of an item (docs/adr/0038).

A producer opens an :class:`EnqueueSpan` around what it sends, and stores the span's
:attr:`~EnqueueSpan.context` (the W3C trace context, ``traceparent`` and
``tracestate``, as text headers) with the items it creates; an executor runs each
attempt of an item in a :class:`RunSpan` started from that stored context. Both are
context managers: an exception leaving one is recorded on its span.

:data:`NO_TRACING`, the default, records nothing and costs a method call: its spans
are one shared object whose context is None, so nothing is stored with the items.
The OpenTelemetry adapter (``workqueue.adapters.otel``) is the one that records.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Protocol, Self

from workqueue.domain.items import TraceContext, WorkItem
from workqueue.domain.queue import EnqueueResult

__all__ = [
    "NO_SPAN",
    "NO_TRACING",
    "EnqueueSpan",
    "NoTracing",
    "RunSpan",
    "Span",
    "TraceContext",
    "Tracing",
]


class Span(Protocol):
    """What every span is: a context manager that records an exception leaving it."""

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        error_type: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...


class EnqueueSpan(Span, Protocol):
    """The span of one enqueue (or one batch), open while its statements are sent."""

    @property
    def context(self) -> TraceContext | None:
        """The context to store with the items created, or None when nothing is recorded."""
        ...

    def enqueued(self, results: Sequence[EnqueueResult]) -> None:
        """What the enqueue did: the ids of the items, created or absorbing."""
        ...


class RunSpan(Span, Protocol):
    """The span of one attempt of an item, open from its claim to its recorded outcome."""

    def raised(self, error: BaseException) -> None:
        """The handler raised ``error`` (or the payload did not decode)."""
        ...

    def ended(self, outcome: str, error: str | None) -> None:
        """How the attempt ended (an ``ExecutionStatus`` value) and the error text written."""
        ...


class Tracing(Protocol):
    """Opens the spans of enqueues and runs."""

    def enqueue(self, kind: str) -> EnqueueSpan:
        """The span of one enqueue of an item of ``kind``."""
        ...

    def enqueue_many(self, kinds: Sequence[str]) -> EnqueueSpan:
        """The span of a batch enqueue, one kind per request."""
        ...

    def run(self, item: WorkItem, worker_id: str) -> RunSpan:
        """The span of the attempt ``item.attempt`` of ``item``, run by ``worker_id``."""
        ...


class _NoSpan:
    """A span that records nothing: both kinds of span, one object for all."""

    context: TraceContext | None = None

    def enqueued(self, results: Sequence[EnqueueResult]) -> None:
        """Records nothing."""

    def raised(self, error: BaseException) -> None:
        """Records nothing."""

    def ended(self, outcome: str, error: str | None) -> None:
        """Records nothing."""

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(
        self,
        error_type: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Records nothing, and lets any exception through."""


NO_SPAN = _NoSpan()
"""The span :class:`NoTracing` opens: it records nothing, and its context is None."""


class NoTracing:
    """A :class:`Tracing` that records nothing: every span is :data:`NO_SPAN`."""

    def enqueue(self, kind: str) -> EnqueueSpan:
        return NO_SPAN

    def enqueue_many(self, kinds: Sequence[str]) -> EnqueueSpan:
        return NO_SPAN

    def run(self, item: WorkItem, worker_id: str) -> RunSpan:
        return NO_SPAN


NO_TRACING = NoTracing()
"""The tracing of a producer or executor given none that can record."""
