"""Which :class:`~workqueue.domain.Tracing` a producer or worker given none uses
(docs/adr/0038)."""

from __future__ import annotations

from workqueue.domain import NO_TRACING, Tracing

__all__ = ["default_tracing"]


def default_tracing() -> Tracing:
    """OpenTelemetry's, when it is installed (the ``otel`` extra); else :data:`NO_TRACING`.

    With OpenTelemetry installed it records only once the application configures a
    tracer provider (also one configured later); until then it costs a non-recording
    span per enqueue and per attempt, and stores nothing with the items.
    """
    try:
        from workqueue.adapters.otel import OpenTelemetryTracing
    except ImportError:
        return NO_TRACING
    return OpenTelemetryTracing()
