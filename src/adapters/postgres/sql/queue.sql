-- name: enqueue
-- The only INSERT INTO work_items there is; only queue_sql.py loads this file, and
-- only queue.py imports that (import-linter: only-the-queue-loads-the-insert).
--
-- One round trip for a whole batch: $1 kinds, $2 payloads (JSON text), $3 dedup
-- keys (null for none) are parallel arrays in request order; $4 is enqueued_at.
-- Each row of the result answers one request, by position: the item's id and
-- whether this request created it. An id is null only when the queued item that
-- absorbed the request left queued between the insert and the lookup (a claim
-- raced us): the caller enqueues those requests again.
WITH request AS (
    SELECT r.position, r.kind, r.payload::jsonb AS payload, r.dedup_key,
           -- A batch coalesces like separate enqueues: the first request of a kind
           -- and key speaks for the later ones. Without a key, each speaks for itself.
           CASE WHEN r.dedup_key IS NULL THEN r.position
                ELSE min(r.position) OVER (PARTITION BY r.kind, r.dedup_key)
           END AS first_position
    FROM unnest($1::text[], $2::text[], $3::text[])
         WITH ORDINALITY AS r (kind, payload, dedup_key, position)
),
candidate AS MATERIALIZED (
    -- Ids are drawn here, in request order, so that FIFO follows the batch and each
    -- inserted row can be matched back to its request by id.
    SELECT f.position, f.kind, f.payload, f.dedup_key,
           nextval(pg_get_serial_sequence('work_items', 'id')) AS id
    FROM (SELECT * FROM request WHERE position = first_position ORDER BY position OFFSET 0) AS f
),
inserted AS (
    INSERT INTO work_items (id, kind, payload, status, attempt, stalls, dedup_key, enqueued_at)
    OVERRIDING SYSTEM VALUE
    SELECT c.id, c.kind, c.payload, 'queued', 0, 0, c.dedup_key, $4::timestamptz
    FROM candidate AS c
    ORDER BY c.position
    -- A queued item with the same kind and key absorbs the enqueue: no row, no error.
    ON CONFLICT (kind, dedup_key) WHERE status = 'queued' AND dedup_key IS NOT NULL DO NOTHING
    RETURNING id, kind
),
notified AS (
    -- Wakes idle workers listening on 'workqueue' when this transaction commits;
    -- one notification per kind that got new work.
    SELECT count(pg_notify('workqueue', k.kind)) AS kinds
    FROM (SELECT DISTINCT kind FROM inserted) AS k
)
SELECT r.position,
       coalesce(i.id, absorber.id) AS id,
       i.id IS NOT NULL AND r.position = r.first_position AS created
FROM request AS r
JOIN candidate AS c ON c.position = r.first_position
LEFT JOIN inserted AS i ON i.id = c.id
LEFT JOIN work_items AS absorber
       ON i.id IS NULL
      AND absorber.status = 'queued'
      AND absorber.kind = c.kind
      AND absorber.dedup_key = c.dedup_key
CROSS JOIN notified
ORDER BY r.position;
