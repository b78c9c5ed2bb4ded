-- The benchmark's own statements: setup and measurement, never the queue's work.
-- Seeding inserts finished rows directly, which only the WorkQueue may do in src/;
-- here it is table setup, as a restored backup would be.

-- name: seed_finished
-- $1 how many rows, $2 the finished_at of the first (each next one 1 ms later).
-- Rows look like items that ran and succeeded, so they sit in the finished
-- indexes (due-ness, retention) exactly as real history would.
INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at, started_at,
                        heartbeat_at, finished_at, worker_id)
SELECT 'bench_noop', '{}'::jsonb, 'succeeded', 1, 0, t, t, t, t, 'bench-seed'
FROM (SELECT $2::timestamptz + g * interval '1 millisecond' AS t
      FROM generate_series(1, $1::integer) AS g) AS stamps;

-- name: seed_waiting
-- $1 how many rows, $2 their run_at, the time they become claimable. Rows look
-- like items enqueued with that run_at at the highest priority: queued and
-- delayed, so they sit in the waiting index (work_items_delayed) as an enqueue
-- leaves them (docs/adr/0030).
INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at, priority, run_at,
                        delayed)
SELECT 'bench_noop', '{}'::jsonb, 'queued', 0, 0, $2::timestamptz - interval '1 day', 100,
       $2::timestamptz, true
FROM generate_series(1, $1::integer);

-- name: unfinished
-- How many items are still queued or running; two partial indexes answer it.
SELECT count(*) FROM work_items WHERE status IN ('queued', 'running');

-- name: last_finished_at
SELECT max(finished_at) FROM work_items WHERE status IN ('succeeded', 'failed');

-- name: finished_count
SELECT count(*) FROM work_items WHERE status IN ('succeeded', 'failed');

-- name: kind_unfinished
-- How many items of kind $1 are still queued or running (the caps workload times
-- one kind's drain beside another's backlog).
SELECT count(*) FROM work_items WHERE kind = $1 AND status IN ('queued', 'running');

-- name: kind_finished
-- How many items of kind $1 finished at or after $2, and when the last of them did.
SELECT count(*) AS finished, max(finished_at) AS last
FROM work_items
WHERE kind = $1 AND status IN ('succeeded', 'failed') AND finished_at >= $2::timestamptz;

-- name: kind_statuses
-- The items of kind $1 by status.
SELECT status, count(*) AS items FROM work_items WHERE kind = $1 GROUP BY status ORDER BY status;

-- name: table_updates
-- The cumulative update counters of work_items: every update, and the HOT ones.
SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'work_items';

-- name: vacuum_analyze
VACUUM ANALYZE work_items;

-- name: checkpoint
CHECKPOINT;

-- name: server_settings
SELECT version() AS version,
       current_setting('fsync') AS fsync,
       current_setting('synchronous_commit') AS synchronous_commit,
       current_setting('shared_buffers') AS shared_buffers;

-- name: clear_statistics_snapshot
-- Statistics read in a session are cached until cleared; read them afresh.
SELECT pg_stat_clear_snapshot();

-- name: bare_insert
-- The producer benchmark's baseline (bench/workloads/producers.py): the row an
-- enqueue without a dedup key writes, as a plain psycopg INSERT would write it,
-- returning its id like an enqueue does. No notification, no checks: what the
-- driver alone costs, with psycopg's own placeholders: the baseline is plain psycopg.
INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at)
VALUES (%s, %s::jsonb, 'queued', 0, 0, %s)
RETURNING id;
