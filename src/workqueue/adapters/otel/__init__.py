"""Tracing with OpenTelemetry (the ``otel`` extra): see :mod:`.tracing` and docs/adr/0038."""

from __future__ import annotations

from workqueue.adapters.otel.tracing import OpenTelemetryTracing

__all__ = ["OpenTelemetryTracing"]
