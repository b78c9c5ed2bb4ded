-- name: enqueue
-- This file holds the only INSERTs INTO work_items there are (this one and
-- enqueue_without_keys, enqueue_one and enqueue_one_without_key, enqueue_if_due
-- below); only queue_sql.py loads it, and only the two WorkQueues import that,
-- adapters/postgres/queue.py (asyncpg) and adapters/psycopg/queue.py (psycopg)
-- (import-linter: only-the-queue-loads-the-insert). Both send these statements
-- as written, with PostgreSQL's own $n placeholders, and the same parameters
-- (adapters/postgres/enqueue_plan.py).
--
-- Every statement here that inserts takes its parameters in one order, built in
-- one place (enqueue_plan.py, `_insert`): $1 the kind(s), $2 the payload(s), $3
-- enqueued_at, $4 the channel to notify (its name is written once, in
-- adapters/postgres/channel.py), then what the statement alone needs. A
-- producer's enqueues also take, last, the trace context of the span that
-- enqueues (JSON text of its propagation headers, or null when no span was
-- recorded: docs/adr/0038), written to every item the statement creates.
--
-- An item's priority and run_at come with it (docs/adr/0030); an item whose run_at
-- is still to come ($3 enqueued_at is now) is written `delayed`, out of the claim
-- index until a claim finds it due. Every created item notifies, a delayed one too:
-- an idle worker that wakes for it learns when it becomes due (next_run_at).
--
-- One round trip for a whole batch: $1 kinds, $2 payloads and $5 dedup keys (null
-- for none) are parallel JSON arrays, each sent as text, in request order; so are
-- $6 priorities and $7 run_ats (null for at once), each of them null when every
-- request has the default (0, at once). JSON text rather than
-- text[] arrays: one text per parameter to encode and parse instead of one per
-- request, and no array type for asyncpg to look up (a query of its own, ~12 ms)
-- on every new connection.
-- Each row of the result answers one request, by position: the item's id and
-- whether this request created it. An id is null only when the queued item that
-- absorbed the request left queued between the insert and the lookup (a claim
-- raced us, or a twin committed by another transaction while this one waited for
-- it): the caller enqueues those requests again.
-- $8 the trace context.
WITH request AS (
    SELECT r.position, r.kind, r.payload, r.dedup_key,
           coalesce(r.priority::smallint, 0) AS priority,
           coalesce(r.run_at::timestamptz, $3::timestamptz) AS run_at,
           -- A batch coalesces like separate enqueues: the first request of a kind
           -- and key speaks for the later ones. Without a key, each speaks for itself.
           CASE WHEN r.dedup_key IS NULL THEN r.position
                ELSE min(r.position) OVER (PARTITION BY r.kind, r.dedup_key)
           END AS first_position
    -- Cast here, past the pool's jsonb codec; a JSON null key is an SQL null.
    -- ROWS FROM pads a null array's column with nulls.
    FROM ROWS FROM (jsonb_array_elements_text($1::text::jsonb),
                    jsonb_array_elements($2::text::jsonb),
                    jsonb_array_elements_text($5::text::jsonb),
                    jsonb_array_elements_text($6::text::jsonb),
                    jsonb_array_elements_text($7::text::jsonb))
         WITH ORDINALITY AS r (kind, payload, dedup_key, priority, run_at, position)
),
candidate AS MATERIALIZED (
    -- Ids are drawn here, in request order, so that FIFO follows the batch and each
    -- inserted row can be matched back to its request by id.
    SELECT f.position, f.kind, f.payload, f.dedup_key, f.priority, f.run_at,
           nextval((SELECT pg_get_serial_sequence('work_items', 'id')::regclass)) AS id
    FROM (SELECT * FROM request WHERE position = first_position ORDER BY position OFFSET 0) AS f
),
inserted AS (
    INSERT INTO work_items (id, kind, payload, status, attempt, stalls, dedup_key, enqueued_at,
                            priority, run_at, delayed, trace_context)
    OVERRIDING SYSTEM VALUE
    SELECT c.id, c.kind, c.payload, 'queued', 0, 0, c.dedup_key, $3::timestamptz,
           c.priority, c.run_at, c.run_at > $3::timestamptz, $8::text::jsonb
    FROM candidate AS c
    -- Inserted in one order for every batch, by kind and key, not in request order
    -- (the ids above keep that): an insert whose twin is uncommitted in another
    -- transaction waits for it while holding the keys inserted before, so two
    -- batches taking keys in opposite orders would deadlock. In one order, a batch
    -- waits before it holds any key the other still needs (docs/adr/0014).
    ORDER BY c.kind, c.dedup_key, c.position
    -- A queued item with the same kind and key absorbs the enqueue: no row, no error.
    ON CONFLICT (kind, dedup_key) WHERE status = 'queued' AND dedup_key IS NOT NULL DO NOTHING
    RETURNING id, kind
),
notified AS (
    -- Wakes idle workers listening on the channel when this transaction commits
    -- (nobody, if it rolls back); one notification per kind that got new work.
    SELECT count(pg_notify($4, k.kind)) AS kinds
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

-- name: enqueue_without_keys
-- The batch statement for a batch in which no request has a dedup key (the usual
-- batch): nothing can be absorbed, so it needs none of enqueue's window, id
-- drawing, conflict handling or joins back, and it answers with one JSON array of
-- ids (as text, like the parameters) instead of a row per request. $1 kinds, $2
-- payloads (JSON arrays as in enqueue), parallel in request order; $3 enqueued_at;
-- $4 the channel to notify; $5 the batch's kinds once each (a JSON array); $6
-- priorities and $7 run_ats as in enqueue (null when every request has the default);
-- $8 the trace context.
-- Returns the new ids in ascending
-- order: rows are inserted in request order, each drawing its id from the identity
-- sequence as it is inserted, so the n-th smallest id is the n-th request's (other
-- sessions' enqueues may leave gaps between them, never change their order).
WITH inserted AS (
    INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at,
                            priority, run_at, delayed, trace_context)
    SELECT r.kind, r.payload, 'queued', 0, 0, $3::timestamptz,
           coalesce(r.priority::smallint, 0), coalesce(r.run_at::timestamptz, $3::timestamptz),
           coalesce(r.run_at::timestamptz > $3::timestamptz, false), $8::text::jsonb
    FROM ROWS FROM (jsonb_array_elements_text($1::text::jsonb),
                    jsonb_array_elements($2::text::jsonb),
                    jsonb_array_elements_text($6::text::jsonb),
                    jsonb_array_elements_text($7::text::jsonb))
         WITH ORDINALITY AS r (kind, payload, priority, run_at, position)
    ORDER BY r.position
    RETURNING id
),
notified AS (
    -- As in enqueue: one notification per kind that got new work, sent at commit.
    -- Every request creates, so those are the batch's kinds, which the caller
    -- knows: no need to gather them again from the inserted rows.
    SELECT count(pg_notify($4, k.kind)) AS kinds
    FROM jsonb_array_elements_text($5::text::jsonb) AS k (kind)
)
SELECT coalesce((SELECT json_agg(id ORDER BY id) FROM inserted), '[]')::text AS ids
FROM notified;

-- name: enqueue_one
-- The same insert, absorb and notify as enqueue, for a single request: what a
-- single enqueue sends. It needs none of the batch's unnest, window and id
-- drawing, so it costs the server about a quarter less than the batch statement
-- with one element, on the path producers take most.
-- $1 kind, $2 payload (JSON text; cast here, past the pool's jsonb codec), $3
-- enqueued_at, $4 the channel to notify, $5 dedup key or null, $6 priority, $7
-- run_at (now for at once), $8 the trace context. One row: the item's
-- id and whether this request created it. The id is null only when the queued
-- item that absorbed the request left queued between the insert and the lookup (a
-- claim raced us), or was committed by another transaction while this statement
-- waited for it (its snapshot predates that commit): the caller enqueues again.
WITH inserted AS (
    INSERT INTO work_items (kind, payload, status, attempt, stalls, dedup_key, enqueued_at,
                            priority, run_at, delayed, trace_context)
    VALUES ($1, $2::text::jsonb, 'queued', 0, 0, $5, $3::timestamptz,
            $6, $7::timestamptz, $7::timestamptz > $3::timestamptz, $8::text::jsonb)
    ON CONFLICT (kind, dedup_key) WHERE status = 'queued' AND dedup_key IS NOT NULL DO NOTHING
    RETURNING id, kind
),
notified AS (
    -- As in enqueue: wakes idle workers listening on the channel at commit.
    SELECT count(pg_notify($4, kind)) AS kinds FROM inserted
)
SELECT coalesce(i.id, absorber.id) AS id, i.id IS NOT NULL AS created
FROM notified
LEFT JOIN inserted AS i ON true
LEFT JOIN work_items AS absorber
       ON i.id IS NULL
      AND absorber.status = 'queued'
      AND absorber.kind = $1
      AND absorber.dedup_key = $5;

-- name: enqueue_one_without_key
-- A single enqueue without a dedup key, the usual one: nothing can absorb it, so
-- it is a plain insert and its notification, with none of enqueue_one's conflict
-- arbiter and lookup of an absorbing twin (about a third less server time per
-- call). $1 kind, $2 payload (JSON text; cast here, past the pool's jsonb codec),
-- $3 enqueued_at, $4 the channel to notify, $5 priority, $6 run_at (now for at
-- once), $7 the trace context. One row: the new item's id, and the notification's void.
--
-- The notification is sent from RETURNING, for the one row inserted, as in
-- enqueue it wakes idle workers listening on the channel at commit. A CTE around
-- the insert with a lateral pg_notify means the same and costs the server about a
-- tenth more per call (pgbench, -M prepared, 200 per transaction): the CTE's rows
-- are stored and scanned again. With RETURNING the server does what a bare INSERT
-- does, plus the call.
INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at,
                        priority, run_at, delayed, trace_context)
VALUES ($1, $2::text::jsonb, 'queued', 0, 0, $3::timestamptz,
        $5, $6::timestamptz, $6::timestamptz > $3::timestamptz, $7::text::jsonb)
RETURNING id, pg_notify($4, kind);

-- name: lock_periodic_kind
-- The first statement of enqueue_if_due's transaction: one scheduler at a time
-- per periodic kind, held until commit or rollback (a scheduler that dies
-- releases it with its connection). $1 is the kind.
--
-- Two-key form: the first key is a fixed namespace, 2003923044 ("wqpd", workqueue
-- periodic due, read as a big-endian integer), the second the kind's hashtext.
-- Two kinds that hash alike only take turns; the two-key space never meets the
-- migrator's one-key lock.
--
-- The lock alone is not enough: enqueue_if_due must be a NEW statement after it,
-- so that under READ COMMITTED its snapshot is taken once the lock is granted and
-- shows every item the previous holder committed, also one a claimer has already
-- taken (running) or finished. A due check in the same statement as the lock
-- would use a snapshot from before the wait and miss exactly that item.
SELECT pg_advisory_xact_lock(2003923044, hashtext($1));

-- name: enqueue_if_due
-- Insert a queued item only if its periodic kind is due (DESIGN.md semantics 7),
-- under lock_periodic_kind in the same transaction (see there for why).
-- $1 kind, $2 payload (JSON text), $3 enqueued_at (now), $4 the channel to
-- notify, $5 dedup key, $6 the latest finish that is long enough ago (now -
-- interval). Returns the new item's
-- id, or no row when the kind is not due. Each NOT EXISTS reads one partial
-- index: work_items_queued_by_kind, work_items_running, work_items_newest_finished.
-- The payload arrives as text and is cast here, past the pool's jsonb codec, which
-- would otherwise store the JSON text as one JSON string.
WITH inserted AS (
    -- A periodic item runs at once, at the default priority, with no trace context
    -- (a scheduler records no enqueue span: docs/adr/0038).
    INSERT INTO work_items (kind, payload, status, attempt, stalls, dedup_key, enqueued_at,
                            priority, run_at, delayed)
    SELECT $1, $2::text::jsonb, 'queued', 0, 0, $5, $3::timestamptz, 0, $3::timestamptz, false
    WHERE NOT EXISTS (SELECT 1 FROM work_items WHERE status = 'queued' AND kind = $1)
      AND NOT EXISTS (SELECT 1 FROM work_items WHERE status = 'running' AND kind = $1)
      AND NOT EXISTS (SELECT 1
                      FROM work_items
                      WHERE status NOT IN ('queued', 'running') AND kind = $1
                        AND finished_at > $6::timestamptz)
    -- A plain enqueue takes no periodic lock: a queued twin it committed after this
    -- statement's snapshot means the kind is not due after all, so nothing is
    -- written and no row is returned.
    ON CONFLICT (kind, dedup_key) WHERE status = 'queued' AND dedup_key IS NOT NULL DO NOTHING
    RETURNING id, kind
)
SELECT i.id
FROM inserted AS i
-- Wakes idle workers listening on the channel when this transaction commits, as
-- enqueue does for a created item.
CROSS JOIN LATERAL (SELECT pg_notify($4, i.kind)) AS notified;

-- name: enqueue_if_fired
-- A cron schedule's turn at fire time $6 (docs/adr/0032): the kind takes it if
-- its newest turn (work_schedules) was at an earlier fire time, and then, unless
-- $7 (skip while busy) finds an item of the kind queued or running, its item is
-- inserted with dedup key $5 (the schedule's key and the fire time).
-- $1 kind, $2 payload (JSON text), $3 enqueued_at (now), $4 the channel to
-- notify. One statement, no advisory lock: of schedulers that take one turn
-- together, the first to write the kind's row goes through; the others wait for
-- its row lock, find the fire time taken once it commits (ON CONFLICT reads the
-- newest row version) and write nothing. A turn at a fire time is taken once,
-- item or not: a skipped fire time is not tried again.
-- Returns the new item's id, or no row when no item was inserted.
WITH fired AS (
    INSERT INTO work_schedules AS s (kind, fired_at)
    VALUES ($1, $6::timestamptz)
    ON CONFLICT (kind) DO UPDATE SET fired_at = excluded.fired_at
    WHERE s.fired_at < excluded.fired_at
    RETURNING kind
),
inserted AS (
    -- A periodic item runs at once, at the default priority, with no trace context
    -- (a scheduler records no enqueue span: docs/adr/0038).
    INSERT INTO work_items (kind, payload, status, attempt, stalls, dedup_key, enqueued_at,
                            priority, run_at, delayed)
    SELECT f.kind, $2::text::jsonb, 'queued', 0, 0, $5, $3::timestamptz, 0, $3::timestamptz,
           false
    FROM fired AS f
    WHERE NOT $7::boolean
       OR (NOT EXISTS (SELECT 1 FROM work_items WHERE status = 'queued' AND kind = $1)
           AND NOT EXISTS (SELECT 1 FROM work_items WHERE status = 'running' AND kind = $1))
    ON CONFLICT (kind, dedup_key) WHERE status = 'queued' AND dedup_key IS NOT NULL DO NOTHING
    RETURNING id, kind
)
SELECT i.id
FROM inserted AS i
-- Wakes idle workers listening on the channel when this transaction commits.
CROSS JOIN LATERAL (SELECT pg_notify($4, i.kind)) AS notified;
