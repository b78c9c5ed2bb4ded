-- The ceiling: the least work PostgreSQL must do per item, driven by pgbench.
-- One INSERT, one FOR UPDATE SKIP LOCKED claim, one completion, each its own
-- transaction (autocommit), on the migrated work_items table with its indexes.
-- A pgbench "transaction" is one pass of this script: one item enqueued,
-- claimed and completed. The claim returns 0 when SKIP LOCKED found nothing
-- free (another client holds every queued row); the completion then matches no
-- row, as a fenced write with a lost lease would.
INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at)
VALUES ('bench_noop', '{}', 'queued', 0, 0, now());
WITH claimed AS (
    UPDATE work_items
    SET status = 'running', attempt = attempt + 1, started_at = now(), heartbeat_at = now(),
        worker_id = 'pgbench', lease_expires_at = now() + interval '60 seconds'
    WHERE id = (
        SELECT id FROM work_items
        WHERE status = 'queued' AND kind = ANY ('{bench_noop}'::text[])
        ORDER BY id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
    )
    RETURNING id, attempt
)
SELECT coalesce(max(id), 0) AS item_id, coalesce(max(attempt), 0) AS item_attempt FROM claimed
\gset
UPDATE work_items
SET status = 'succeeded', finished_at = now(), lease_expires_at = NULL
WHERE id = :item_id AND attempt = :item_attempt AND status = 'running';
