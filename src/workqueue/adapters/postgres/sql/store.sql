-- Every statement of PostgresWorkStore. Every timestamp is a parameter from the
-- store's Clock (never now()), so tests control time on PostgreSQL too. Every
-- write after a claim is fenced by the lease: id, attempt and status 'running'.

-- name: claim
-- $1 kinds, $2 worker_id, $3 now, $4 lease_expires_at: the claim. $5 id, $6 attempt,
-- $7 progress: a lease to complete first, in the same statement and commit, or three
-- nulls (then nothing matches and nothing is completed). The one claim statement:
-- WorkStore.claim and complete_and_claim both run it.
-- The completion is fenced exactly as complete's. The claim takes the oldest queued
-- item of the kinds, whether or not the fence held; SKIP LOCKED: concurrent claimers
-- pass over each other's rows instead of waiting, and never get the same item. The
-- subquery reads the partial claim index only. The two updates touch different rows
-- (the completed one is running, the claimed one queued), so neither sees the
-- other's change. Always one row: completed, then the claimed item's columns, all
-- null when nothing was claimable.
WITH completed AS (
    UPDATE work_items
    SET status = 'succeeded', finished_at = $3, progress = $7, lease_expires_at = NULL,
        error = NULL
    WHERE id = $5 AND attempt = $6 AND status = 'running'
    RETURNING true
),
claimed AS (
    UPDATE work_items
    SET status = 'running',
        attempt = attempt + 1,
        started_at = $3,
        heartbeat_at = $3,
        worker_id = $2,
        lease_expires_at = $4
    WHERE id = (
        SELECT id
        FROM work_items
        WHERE status = 'queued' AND kind = ANY ($1::text[])
        ORDER BY id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
    )
    RETURNING id, kind, payload, status, attempt, stalls, dedup_key, enqueued_at, started_at,
              heartbeat_at, lease_expires_at, finished_at, worker_id, progress, error, cancel_reason
)
SELECT EXISTS (SELECT FROM completed) AS completed, claimed.*
FROM (VALUES (1)) AS one
LEFT JOIN claimed ON true;

-- name: complete_and_claim_many
-- $1 kinds, $2 worker_id, $3 now, $4 lease_expires_at: the claims, of at most $8
-- items. $5 ids, $6 attempts, $7 progress as JSON text (NULL for none), all as text
-- (see heartbeat_many): the leases to complete first, in the same statement and
-- commit. The claim statement above
-- for many completions at once: each completion fenced exactly as complete's,
-- then the oldest queued items of the kinds claimed, SKIP LOCKED, whether or not
-- the fences held. One row per claimed item (in no order: the caller sorts them
-- by id), or one row of nulls when nothing was claimable; each row carries the
-- ids of the completions whose lease was held.
WITH completed AS (
    UPDATE work_items AS item
    SET status = 'succeeded', finished_at = $3, progress = lease.progress::jsonb,
        lease_expires_at = NULL, error = NULL
    FROM unnest($5::text[], $6::text[], $7::text[]) AS lease(id, attempt, progress)
    WHERE item.id = lease.id::bigint AND item.attempt = lease.attempt::integer
      AND item.status = 'running'
    RETURNING item.id
),
next AS MATERIALIZED (
    SELECT id
    FROM work_items
    WHERE status = 'queued' AND kind = ANY ($1::text[])
    ORDER BY id
    LIMIT $8
    FOR UPDATE SKIP LOCKED
),
claimed AS (
    UPDATE work_items AS item
    SET status = 'running',
        attempt = item.attempt + 1,
        started_at = $3,
        heartbeat_at = $3,
        worker_id = $2,
        lease_expires_at = $4
    FROM next
    WHERE item.id = next.id
    RETURNING item.id, item.kind, item.payload, item.status, item.attempt, item.stalls,
              item.dedup_key, item.enqueued_at, item.started_at, item.heartbeat_at,
              item.lease_expires_at, item.finished_at, item.worker_id, item.progress,
              item.error, item.cancel_reason
)
SELECT ARRAY(SELECT id::text FROM completed) AS completed, claimed.*
FROM (VALUES (1)) AS one
LEFT JOIN claimed ON true;

-- name: heartbeat
-- $1 id, $2 attempt, $3 now, $4 lease_expires_at, $5 progress.
-- Touches no indexed column, so it is a HOT update.
-- Returns whether a cancel of the item was requested (docs/adr/0018); no row when
-- the lease was not held.
UPDATE work_items
SET heartbeat_at = $3, lease_expires_at = $4, progress = $5
WHERE id = $1 AND attempt = $2 AND status = 'running'
RETURNING cancel_reason IS NOT NULL;

-- name: heartbeat_many
-- $1 ids, $2 attempts, $3 now, $4 lease_expires_at, $5 progress as JSON text (NULL
-- for none), one element per lease; ids and attempts as text too: arrays of text
-- are the only ones asyncpg encodes without first asking the server about the
-- array type, once per connection (ADR 0023). The heartbeat above for each lease
-- at once, each fenced on its own: one row per lease still held, with its id and
-- whether a cancel of it was requested; a lease not held has no row and changes
-- nothing. HOT updates, as above.
UPDATE work_items AS item
SET heartbeat_at = $3, lease_expires_at = $4, progress = beat.progress::jsonb
FROM unnest($1::text[], $2::text[], $5::text[]) AS beat(id, attempt, progress)
WHERE item.id = beat.id::bigint AND item.attempt = beat.attempt::integer
  AND item.status = 'running'
RETURNING item.id, item.cancel_reason IS NOT NULL AS cancel_requested;

-- name: complete
-- $1 id, $2 attempt, $3 now, $4 progress. worker_id stays: the last holder.
UPDATE work_items
SET status = 'succeeded', finished_at = $3, progress = $4, lease_expires_at = NULL, error = NULL
WHERE id = $1 AND attempt = $2 AND status = 'running'
RETURNING true;

-- name: fail
-- $1 id, $2 attempt, $3 now, $4 progress, $5 error. worker_id stays: the last holder.
UPDATE work_items
SET status = 'failed', finished_at = $3, progress = $4, lease_expires_at = NULL, error = $5
WHERE id = $1 AND attempt = $2 AND status = 'running'
RETURNING true;

-- name: mark_cancelled
-- $1 id, $2 attempt, $3 now, $4 progress, $5 the reason when none was recorded.
-- The holder's write once its heartbeat answered that a cancel was requested.
UPDATE work_items
SET status = 'cancelled', finished_at = $3, progress = $4, lease_expires_at = NULL,
    error = coalesce(cancel_reason, $5)
WHERE id = $1 AND attempt = $2 AND status = 'running'
RETURNING true;

-- name: cancel
-- $1 id, $2 now, $3 reason. One row: the status the cancel wrote ('cancelled' for a
-- queued item, 'running' when it recorded the request on a running one; null when
-- it changed nothing), then the item's status and whether a cancel was requested,
-- as they were before (null when there is no such item).
-- A claim that locked the row first is waited for, and the update is then decided
-- on the claimed row (READ COMMITTED rechecks the WHERE and recomputes the SET on
-- it): the cancel either cancels the queued item or records the request on the
-- running one, never neither.
WITH changed AS (
    UPDATE work_items
    SET status = CASE WHEN status = 'queued' THEN 'cancelled' ELSE status END,
        error = CASE WHEN status = 'queued' THEN $3 ELSE error END,
        finished_at = CASE WHEN status = 'queued' THEN $2::timestamptz ELSE finished_at END,
        cancel_reason = CASE WHEN status = 'running' THEN $3 ELSE cancel_reason END
    WHERE id = $1 AND (status = 'queued' OR (status = 'running' AND cancel_reason IS NULL))
    RETURNING status
)
SELECT (SELECT status FROM changed) AS changed,
       w.status,
       w.cancel_reason IS NOT NULL AS requested
FROM (VALUES (1)) AS one
LEFT JOIN work_items AS w ON w.id = $1;

-- name: release
-- $1 id, $2 attempt, $3 now, $4 progress. Returns the queued twin's id, null when
-- the item went back to queued; no row when the lease was not held.
-- Back to queued without a stall, unless a cancel of it was requested (then it is
-- cancelled, docs/adr/0018) or a queued item with the same kind and dedup key
-- exists: then this one is failed as superseded (docs/adr/0004). Should
-- a twin be committed after this statement's snapshot, the requeue violates the
-- unique dedup index and the caller runs the statement again, which then sees it.
WITH held AS (
    SELECT h.id,
           h.cancel_reason,
           (SELECT q.id
            FROM work_items AS q
            WHERE q.status = 'queued' AND q.kind = h.kind AND q.dedup_key = h.dedup_key
              AND h.cancel_reason IS NULL
           ) AS twin_id
    FROM work_items AS h
    WHERE h.id = $1 AND h.attempt = $2 AND h.status = 'running'
    FOR UPDATE OF h
)
UPDATE work_items AS w
SET status = CASE WHEN held.cancel_reason IS NOT NULL THEN 'cancelled'
                  WHEN held.twin_id IS NULL THEN 'queued'
                  ELSE 'failed'
             END,
    progress = $4,
    lease_expires_at = NULL,
    worker_id = CASE WHEN held.twin_id IS NULL AND held.cancel_reason IS NULL THEN NULL
                     ELSE w.worker_id
                END,
    finished_at = CASE WHEN held.twin_id IS NULL AND held.cancel_reason IS NULL THEN NULL
                       ELSE $3::timestamptz
                  END,
    error = CASE WHEN held.cancel_reason IS NOT NULL THEN held.cancel_reason
                 WHEN held.twin_id IS NULL THEN NULL
                 ELSE 'superseded by queued item ' || held.twin_id || ' with the same dedup key'
            END
FROM held
WHERE w.id = held.id AND w.attempt = $2 AND w.status = 'running'
RETURNING held.twin_id;

-- name: recover_expired
-- $1 now, $2 max_stalls. One row per recovered item: its id and what happened.
-- Every running item whose lease expired (strictly: lease_expires_at < now) gets
-- one more stall and then, in this order of precedence:
--   'cancelled'  a cancel of it was requested: cancelled with its reason, and no
--                stall counted (docs/adr/0018);
--   'stalled'    the stalls reached max_stalls: failed, the error says so;
--   'superseded' a queued item has its kind and dedup key, or a newer expired twin
--                is being requeued by this same statement: failed (docs/adr/0004);
--   'requeued'   back to queued, lease and worker cleared.
-- SKIP LOCKED: items another recoverer (or a heartbeat) holds are left to the next
-- pass. A twin committed after the snapshot makes the requeue violate the unique
-- dedup index; the caller runs the statement again, which then sees it.
WITH expired AS (
    SELECT id, kind, dedup_key, cancel_reason, stalls + 1 AS stalls,
           cancel_reason IS NULL AS returns
    FROM work_items
    WHERE status = 'running' AND lease_expires_at < $1::timestamptz
    FOR UPDATE SKIP LOCKED
),
decided AS (
    SELECT e.id,
           e.stalls,
           e.returns,
           CASE WHEN NOT e.returns OR e.stalls >= $2::integer OR e.dedup_key IS NULL THEN NULL
                ELSE coalesce(
                    (SELECT q.id
                     FROM work_items AS q
                     WHERE q.status = 'queued' AND q.kind = e.kind AND q.dedup_key = e.dedup_key),
                    -- Of expired twins that return together, the newest (newest
                    -- payload) is requeued and supersedes the others.
                    nullif(max(e.id) FILTER (WHERE e.returns AND e.stalls < $2::integer)
                               OVER (PARTITION BY e.kind, e.dedup_key),
                           e.id))
           END AS twin_id
    FROM expired AS e
),
outcome AS (
    SELECT d.id, d.stalls, d.twin_id,
           CASE WHEN NOT d.returns THEN 'cancelled'
                WHEN d.stalls >= $2::integer THEN 'stalled'
                WHEN d.twin_id IS NOT NULL THEN 'superseded'
                ELSE 'requeued'
           END AS outcome
    FROM decided AS d
)
UPDATE work_items AS w
SET stalls = CASE WHEN o.outcome = 'cancelled' THEN w.stalls ELSE o.stalls END,
    status = CASE o.outcome WHEN 'requeued' THEN 'queued'
                            WHEN 'cancelled' THEN 'cancelled'
                            ELSE 'failed'
             END,
    lease_expires_at = NULL,
    worker_id = CASE WHEN o.outcome = 'requeued' THEN NULL ELSE w.worker_id END,
    finished_at = CASE WHEN o.outcome = 'requeued' THEN NULL ELSE $1::timestamptz END,
    error = CASE o.outcome
                WHEN 'cancelled' THEN w.cancel_reason
                WHEN 'stalled' THEN
                    'stalled: lease expired ' || o.stalls || ' times (max stalls ' || $2::integer || ')'
                WHEN 'superseded' THEN
                    'superseded by queued item ' || o.twin_id || ' with the same dedup key'
            END
FROM outcome AS o
WHERE w.id = o.id
RETURNING w.id, o.outcome;

-- name: is_due
-- $1 kind, $2 the latest finished_at that is long enough ago (now - interval).
-- Due when nothing of the kind is queued or running and its newest finished item
-- finished at least one interval ago, or none ever did. Each part reads one
-- partial index.
SELECT NOT EXISTS (SELECT 1 FROM work_items WHERE status = 'queued' AND kind = $1)
   AND NOT EXISTS (SELECT 1 FROM work_items WHERE status = 'running' AND kind = $1)
   AND coalesce(
           (SELECT max(finished_at)
            FROM work_items
            WHERE status NOT IN ('queued', 'running') AND kind = $1) <= $2,
           true);

-- name: purge_finished
-- $1 cutoff, $2 batch size. Oldest finished first; a bounded batch keeps each
-- transaction short. SKIP LOCKED: two purgers share the work instead of waiting.
WITH doomed AS (
    SELECT id
    FROM work_items
    WHERE status NOT IN ('queued', 'running') AND finished_at < $1
    ORDER BY finished_at, id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM work_items AS w USING doomed WHERE w.id = doomed.id RETURNING 1
)
SELECT count(*) FROM deleted;

-- name: get
SELECT id, kind, payload, status, attempt, stalls, dedup_key, enqueued_at, started_at,
       heartbeat_at, lease_expires_at, finished_at, worker_id, progress, error, cancel_reason
FROM work_items
WHERE id = $1;

-- name: list_items_oldest_first
-- $1 statuses or null for all, $2 kinds or null for all, $3 limit.
SELECT id, kind, payload, status, attempt, stalls, dedup_key, enqueued_at, started_at,
       heartbeat_at, lease_expires_at, finished_at, worker_id, progress, error, cancel_reason
FROM work_items
WHERE ($1::text[] IS NULL OR status = ANY ($1::text[]))
  AND ($2::text[] IS NULL OR kind = ANY ($2::text[]))
ORDER BY id
LIMIT $3;

-- name: list_items_newest_first
-- $1 statuses or null for all, $2 kinds or null for all, $3 limit.
SELECT id, kind, payload, status, attempt, stalls, dedup_key, enqueued_at, started_at,
       heartbeat_at, lease_expires_at, finished_at, worker_id, progress, error, cancel_reason
FROM work_items
WHERE ($1::text[] IS NULL OR status = ANY ($1::text[]))
  AND ($2::text[] IS NULL OR kind = ANY ($2::text[]))
ORDER BY id DESC
LIMIT $3;

-- name: count_by_kind_and_status
SELECT kind, status, count(*) AS items
FROM work_items
GROUP BY kind, status;
