-- Retries, snoozes and results (docs/adr/0031). Each column has a constant
-- default, which PostgreSQL stores once in the catalog rather than writing every
-- row: the migration does not rewrite the table.
--
-- failures: every failure of the item's handler, in order, as a JSON array of
-- {"attempt": n, "at": "<ISO 8601 time>", "error": "..."}, the one that failed the
-- item too; appended by the write that ends the run (store.sql, end_runs) and by
-- lease recovery when an item stalls out. Its length is what a retry policy counts.
-- snoozes: how many times the handler asked to run again later.
-- result: what the handler returned when it succeeded (JSON), or null.

ALTER TABLE work_items
    ADD COLUMN failures jsonb NOT NULL DEFAULT '[]'
        CONSTRAINT work_items_failures_array CHECK (jsonb_typeof(failures) = 'array'),
    ADD COLUMN snoozes integer NOT NULL DEFAULT 0
        CONSTRAINT work_items_snoozes_counted CHECK (snoozes >= 0),
    ADD COLUMN result jsonb;

COMMENT ON COLUMN work_items.failures IS
    'Every failure of the handler, in order: [{attempt, at, error}]; its length is what a retry policy counts.';
COMMENT ON COLUMN work_items.snoozes IS
    'How many times the handler asked to run again later (bounded by the kind''s max_snoozes).';
COMMENT ON COLUMN work_items.result IS
    'What the handler returned when it succeeded (JSON), or null.';
