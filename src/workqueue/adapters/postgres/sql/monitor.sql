-- The WorkMonitor's reads (adapters/postgres/monitor.py): read-only, each on an
-- index (tests/integration/test_monitor_indexes.py), so a role with nothing but
-- SELECT on work_items can run them.

-- fragment: queued_kinds
-- A skip scan of work_items_queued_by_kind: each step finds the next kind with a
-- queued item and that kind's lowest queued id, its first entry in the index. It
-- reads a few index pages per kind, not every queued item. The kind of a step is
-- not known when the statement is planned: asked for a kind's lowest queued id in
-- a subquery (`WHERE kind = kinds.kind ORDER BY id LIMIT 1`), PostgreSQL walks the
-- primary key from the oldest id, through every finished row, expecting a queued
-- one of the kind soon.
kinds AS (
    (SELECT kind, id FROM work_items WHERE status = 'queued' ORDER BY kind, id LIMIT 1)
    UNION ALL
    SELECT next.kind, next.id
    FROM kinds
    CROSS JOIN LATERAL (
        SELECT w.kind, w.id
        FROM work_items AS w
        WHERE w.status = 'queued' AND w.kind > kinds.kind
        ORDER BY w.kind, w.id
        LIMIT 1
    ) AS next
)

-- name: count_live
-- One index-only count per live status, each on its partial index: a single
-- `status IN (...)` would read the table instead.
SELECT kind, 'queued' AS status, count(*) AS items
FROM work_items
WHERE status = 'queued'
GROUP BY kind
UNION ALL
SELECT kind, 'running' AS status, count(*) AS items
FROM work_items
WHERE status = 'running'
GROUP BY kind;

-- name: count_finished
-- Every final status, whichever exist: the predicate of work_items_finished_by_kind.
SELECT kind, status, count(*) AS items
FROM work_items
WHERE status NOT IN ('queued', 'running')
GROUP BY kind, status;

-- name: oldest_queued
-- Each kind with a queued item and its lowest queued id (queued_kinds), then that
-- item's row by its key.
WITH RECURSIVE {{queued_kinds}}
SELECT kinds.kind, w.enqueued_at
FROM kinds
JOIN work_items AS w ON w.id = kinds.id;

-- name: running
SELECT {{item_columns}}
FROM work_items
WHERE status = 'running'
ORDER BY id;

-- name: queued
-- $1 the last id of the previous page (0 for the first), $2 limit. Keyset paging
-- on work_items_queued_by_kind, with no index of the queued ids of its own (one
-- more index for every enqueue to write): the skip scan of oldest_queued finds
-- each kind with a queued item, each kind gives its next $2 ids after $1, and the
-- page is the lowest $2 of them. It reads at most $2 entries per kind, so a page
-- deep in the backlog costs what the first one does. Each queued item, waiting
-- ones included, in id order. A kind's ids after $1 are written as a range of the
-- index, from (kind, $1) up to the kind's last entry: as `kind = kinds.kind AND
-- id > $1`, PostgreSQL walks the primary key instead (see queued_kinds), and with
-- the equality beside the row comparison it starts at the kind's first entry.
WITH RECURSIVE {{queued_kinds}}
SELECT page.*
FROM kinds
CROSS JOIN LATERAL (
    SELECT {{item_columns}}
    FROM work_items
    WHERE status = 'queued' AND (kind, id) > (kinds.kind, $1) AND kind <= kinds.kind
    ORDER BY kind, id
    LIMIT $2
) AS page
ORDER BY page.id
LIMIT $2;

-- name: queued_of_kind
-- $1 kind, $2 the last id of the previous page (0 for the first), $3 limit; on
-- work_items_queued_by_kind.
SELECT {{item_columns}}
FROM work_items
WHERE status = 'queued' AND kind = $1 AND id > $2
ORDER BY id
LIMIT $3;

-- name: recent_unsuccessful
-- $1 limit. Read backwards from work_items_unsuccessful.
SELECT {{item_columns}}
FROM work_items
WHERE status NOT IN ('queued', 'running', 'succeeded')
ORDER BY finished_at DESC, id DESC
LIMIT $1;

-- name: count_unsuccessful_since
-- $1 the moment. A range of work_items_unsuccessful.
SELECT kind, status, count(*) AS items
FROM work_items
WHERE status NOT IN ('queued', 'running', 'succeeded') AND finished_at >= $1
GROUP BY kind, status;

-- name: stalls_since
-- $1 the moment. An item is last seen when it finished, else at its latest
-- heartbeat; work_items_stalled holds only the items that ever stalled.
SELECT kind, sum(stalls)::bigint AS stalls
FROM work_items
WHERE stalls > 0 AND coalesce(finished_at, heartbeat_at) >= $1
GROUP BY kind;

-- name: item
SELECT {{item_columns}}
FROM work_items
WHERE id = $1;

-- name: items_by_dedup_key
-- $1 the dedup key, $2 limit. Items of every kind and status with exactly this
-- key, newest first: a range of work_items_by_dedup_key (migration 0013), read
-- from its start, however many items have no key.
SELECT {{item_columns}}
FROM work_items
WHERE dedup_key = $1
ORDER BY id DESC
LIMIT $2;

-- name: bulk_scope_requeue_failed
-- What a bulk requeue of kind $1 would take: its failed items not requeued yet,
-- how many and the highest id (index-only on work_items_to_requeue).
SELECT count(*) AS count, max(id) AS up_to_id
FROM work_items
WHERE kind = $1 AND status = 'failed' AND requeued_as IS NULL;

-- name: bulk_scope_cancel_queued
-- What a bulk cancel of kind $1 would take: its queued items, how many and the
-- highest id (index-only on work_items_queued_by_kind).
SELECT count(*) AS count, max(id) AS up_to_id
FROM work_items
WHERE kind = $1 AND status = 'queued';

-- name: schedule_turns
-- $1 the periodic kinds (text[]). Per kind, the fire time its calendar last took
-- a turn at (work_schedules; null for none) and its newest item: the newest of
-- its newest queued, newest running and last finished item, each a descent of
-- its index (work_items_queued_by_kind, work_items_running,
-- work_items_newest_finished), however long the kind's history. The last finish
-- is read as its time alone, which work_items_newest_finished holds (an
-- index-only read), then its row by kind and that time: asked for the row at
-- once, PostgreSQL may walk work_items_retention backwards instead, through the
-- finished rows of every other kind.
SELECT k.kind AS periodic_kind, s.fired_at, {{item_columns:w}}
FROM unnest($1::text[]) AS k(kind)
LEFT JOIN work_schedules AS s ON s.kind = k.kind
LEFT JOIN LATERAL (
    SELECT f.finished_at
    FROM work_items AS f
    WHERE f.status NOT IN ('queued', 'running') AND f.kind = k.kind
    ORDER BY f.finished_at DESC
    LIMIT 1
) AS last_finish ON true
LEFT JOIN LATERAL (
    SELECT max(c.id) AS id
    FROM ((SELECT id FROM work_items
           WHERE status = 'queued' AND kind = k.kind ORDER BY id DESC LIMIT 1)
          UNION ALL
          (SELECT id FROM work_items
           WHERE status = 'running' AND kind = k.kind ORDER BY id DESC LIMIT 1)
          UNION ALL
          (SELECT id FROM work_items
           WHERE status NOT IN ('queued', 'running') AND kind = k.kind
             AND finished_at = last_finish.finished_at
           ORDER BY id DESC LIMIT 1)) AS c
) AS newest ON true
LEFT JOIN work_items AS w ON w.id = newest.id
ORDER BY k.kind;

-- name: paused_kinds
-- The paused kinds (work_kind_pauses), by kind.
SELECT kind, paused_at, reason FROM work_kind_pauses ORDER BY kind;
