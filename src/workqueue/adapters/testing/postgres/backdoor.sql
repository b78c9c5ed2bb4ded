-- The statements of the contract kit's PostgreSQL back door (backdoor.py). They
-- share nothing with the adapters under test but the documented tables. JSON
-- travels as text both ways, past any codec a pool has registered.

-- name: insert_item
-- The one INSERT INTO work_items outside the WorkQueue: test support, which sets
-- up rows exactly as given (finished items, expired leases) that no API call
-- would make. The architecture test allows this file by name (ADR 0013).
-- $1 kind, $2 payload (JSON text), $3 status, ... $13 progress (JSON text or
-- null), $14 error, $15 priority, $16 run_at, $17 now: a queued item whose run_at
-- is after now is written `delayed`, as an enqueue writes it (docs/adr/0030).
INSERT INTO work_items (
    kind, payload, status, attempt, stalls, dedup_key, enqueued_at, started_at,
    heartbeat_at, lease_expires_at, finished_at, worker_id, progress, error,
    priority, run_at, delayed
)
VALUES ($1, $2::text::jsonb, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::text::jsonb, $14,
        $15, $16, $3 = 'queued' AND $16::timestamptz > $17::timestamptz)
RETURNING id;

-- name: read_item
SELECT id, kind, payload::text AS payload, status, attempt, stalls, dedup_key, enqueued_at,
       priority, run_at, started_at, heartbeat_at, lease_expires_at, finished_at, worker_id,
       progress::text AS progress, error, cancel_reason, failures::text AS failures, snoozes,
       result::text AS result, trace_context::text AS trace_context, requeued_as
FROM work_items
WHERE id = $1;

-- name: all_items
SELECT id, kind, payload::text AS payload, status, attempt, stalls, dedup_key, enqueued_at,
       priority, run_at, started_at, heartbeat_at, lease_expires_at, finished_at, worker_id,
       progress::text AS progress, error, cancel_reason, failures::text AS failures, snoozes,
       result::text AS result, trace_context::text AS trace_context, requeued_as
FROM work_items
ORDER BY id;

-- name: lock_item
-- The lock a claimer holds on a row in the middle of its claim; held until the
-- back door's transaction rolls back.
SELECT id FROM work_items WHERE id = $1 FOR UPDATE;

-- name: insert_refresh_token
INSERT INTO refresh_tokens (user_id, token_hash, created_at, expires_at, revoked_at)
VALUES ($1, $2, $3, $4, $5)
RETURNING id;

-- name: refresh_token_hashes
SELECT token_hash FROM refresh_tokens;
