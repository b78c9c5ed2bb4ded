-- The work queue's one table, its indexes and the documentation of every column.
--
-- Heartbeats rewrite heartbeat_at, lease_expires_at and progress every 2 s for
-- every running item. No index may include those columns (nor use them in a
-- predicate), so that a heartbeat is a HOT update: a new row version on the same
-- page and no index writes. fillfactor leaves the room on each page for that.

CREATE TABLE work_items (
    id bigint GENERATED ALWAYS AS IDENTITY,
    kind text NOT NULL,
    payload jsonb NOT NULL,
    status text NOT NULL,
    attempt integer NOT NULL DEFAULT 0,
    stalls integer NOT NULL DEFAULT 0,
    dedup_key text,
    enqueued_at timestamptz NOT NULL,
    started_at timestamptz,
    heartbeat_at timestamptz,
    lease_expires_at timestamptz,
    finished_at timestamptz,
    worker_id text,
    progress jsonb,
    error text,
    CONSTRAINT work_items_pkey PRIMARY KEY (id),
    CONSTRAINT work_items_status_check
        CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    CONSTRAINT work_items_attempt_check CHECK (attempt >= 0),
    CONSTRAINT work_items_stalls_check CHECK (stalls >= 0)
) WITH (
    -- 20 % of every page stays free for the new row versions of heartbeats (HOT).
    fillfactor = 80,
    -- Every item is updated several times and then deleted by retention: the
    -- table churns. Vacuum after 2 % dead rows (not the default 20 %) so the
    -- partial claim index does not fill with dead entries that every claim has
    -- to step over, and analyze as often so the planner sees the status mix.
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_analyze_scale_factor = 0.02,
    -- Vacuum at full speed: the table is hot and a slow vacuum falls behind.
    autovacuum_vacuum_cost_delay = 0
);

-- Claim: the oldest queued item of the worker's kinds. Partial, so finished rows
-- (the bulk of the table) are never in the way.
CREATE INDEX work_items_claim ON work_items (kind, id) WHERE status = 'queued';

-- Dedup: at no moment do two queued items share kind and dedup key. Enqueue's
-- INSERT ... ON CONFLICT names this index's columns and predicate.
CREATE UNIQUE INDEX work_items_queued_dedup_key ON work_items (kind, dedup_key)
    WHERE status = 'queued' AND dedup_key IS NOT NULL;

-- Lease recovery scans the running items (few: one per busy worker) and filters
-- the lease there; due-ness asks whether a kind has one. lease_expires_at is not
-- indexed, so heartbeats stay HOT.
CREATE INDEX work_items_running ON work_items (kind, id) WHERE status = 'running';

-- Due-ness: the newest finished item of a kind.
CREATE INDEX work_items_newest_finished ON work_items (kind, finished_at)
    WHERE status IN ('succeeded', 'failed');

-- Retention: the oldest finished items first, across kinds.
CREATE INDEX work_items_retention ON work_items (finished_at)
    WHERE status IN ('succeeded', 'failed');

COMMENT ON TABLE work_items IS
    'One row per unit of work, from enqueue to its final state. Inserted only by the WorkQueue (enqueue); updated by the WorkStore (claim, heartbeat, complete, fail, release, lease recovery); deleted only by retention.';
COMMENT ON COLUMN work_items.id IS
    'Identity; claim order (FIFO). Written by enqueue; with attempt it is the lease that fences every write after a claim.';
COMMENT ON COLUMN work_items.kind IS
    'Which handler runs the item (a kind enum value). Written by enqueue; read by claim, due-ness and the status view.';
COMMENT ON COLUMN work_items.payload IS
    'The payload model as JSON, validated before it is written. Written by enqueue; read by the executor, which validates it again.';
COMMENT ON COLUMN work_items.status IS
    'queued (written by enqueue, release and lease recovery; left by claim), running (written by claim; left by complete, fail, release or recovery), succeeded or failed (final; only retention removes them).';
COMMENT ON COLUMN work_items.attempt IS
    'How many times the item was claimed. Incremented by claim; every fenced write (heartbeat, complete, fail, release) matches it.';
COMMENT ON COLUMN work_items.stalls IS
    'How many leases of the item expired. Incremented by lease recovery, which fails the item when it reaches the stall limit.';
COMMENT ON COLUMN work_items.dedup_key IS
    'Optional key: an enqueue while a queued item of the same kind and key exists is absorbed by it. Written by enqueue; read by enqueue, release and lease recovery.';
COMMENT ON COLUMN work_items.enqueued_at IS
    'When the item was enqueued (the store''s clock). Written by enqueue; read by the status view.';
COMMENT ON COLUMN work_items.started_at IS
    'When the latest attempt was claimed (the store''s clock). Written by claim; read by the status view.';
COMMENT ON COLUMN work_items.heartbeat_at IS
    'When the latest attempt last proved it was alive. Written by claim and heartbeat; read by the status view. Not indexed, so heartbeats stay HOT.';
COMMENT ON COLUMN work_items.lease_expires_at IS
    'When the latest attempt''s lease runs out unless renewed. Written by claim and heartbeat; read by lease recovery. Not indexed, so heartbeats stay HOT.';
COMMENT ON COLUMN work_items.finished_at IS
    'When the item reached succeeded or failed. Written by complete, fail, release and lease recovery (when they finish it); read by due-ness and retention.';
COMMENT ON COLUMN work_items.worker_id IS
    'The worker that claimed the latest attempt. Written by claim; read by the status view and by people.';
COMMENT ON COLUMN work_items.progress IS
    'The latest JSON progress snapshot of the handler; kept across attempts. Written by heartbeat, complete, fail and release; read by the executor on the next attempt and by the status view. Not indexed, so heartbeats stay HOT.';
COMMENT ON COLUMN work_items.error IS
    'Why the item failed: the handler''s error, a stall, or being superseded by a queued twin. Written by fail, release and lease recovery; read by the status view.';

COMMENT ON INDEX work_items_claim IS
    'Claim: the oldest queued item of the given kinds. Partial on queued, so finished rows cost nothing.';
COMMENT ON INDEX work_items_queued_dedup_key IS
    'Dedup: no two queued items share kind and dedup key. Read by enqueue (ON CONFLICT), release and lease recovery.';
COMMENT ON INDEX work_items_running IS
    'Lease recovery (scan running items, filter the lease) and due-ness (is a kind running).';
COMMENT ON INDEX work_items_newest_finished IS
    'Due-ness: the newest finished item of a kind.';
COMMENT ON INDEX work_items_retention IS
    'Retention: the oldest finished items, deleted in bounded batches.';
