-- Tracing (docs/adr/0038): the context of the span that enqueued an item, as its
-- propagation headers (a JSON object: traceparent, tracestate), so that each attempt
-- of the item runs in a span started from it. Null when the enqueue recorded no span
-- (no OpenTelemetry, or no tracer provider configured): then nothing is written and
-- the claims read a null. A column of its own rather than a key of the payload: the
-- payload is the handler's, validated by its model; the context is the queue's.
-- Adding a nullable column without a default rewrites nothing.

ALTER TABLE work_items ADD COLUMN trace_context jsonb;

COMMENT ON COLUMN work_items.trace_context IS
    'The trace context of the enqueue (W3C traceparent, tracestate), or null (docs/adr/0038).';
