-- The indexes of the admin view, the metrics and `workqueue status` (docs/adr/0020).
--
-- Each read of the WorkMonitor port runs on an index, so the page answers as fast
-- beside a million finished items as beside none. The live reads (queued and
-- running items and their counts, the oldest queued item) already have theirs:
-- work_items_claim, work_items_queued_by_kind and work_items_running. What the
-- finished items need is added here.
--
-- The predicates name the statuses an item is NOT in, so a final status added
-- later (cancelled) is counted and listed without another migration. None of the
-- three holds a column a heartbeat writes (heartbeat_at, lease_expires_at,
-- progress), so heartbeats stay HOT; each costs an index entry only when an item
-- finishes (the first), ends without success (the second) or stalls (the third).

-- Counts of finished items per kind and status, read from the index alone.
CREATE INDEX work_items_finished_by_kind ON work_items (kind, status)
    WHERE status NOT IN ('queued', 'running');

-- The latest unsuccessful items first, and how many ended so since a moment.
CREATE INDEX work_items_unsuccessful ON work_items (finished_at, id)
    WHERE status NOT IN ('queued', 'running', 'succeeded');

-- The items that stalled at least once: few, whatever the history.
CREATE INDEX work_items_stalled ON work_items (kind) WHERE stalls > 0;

COMMENT ON INDEX work_items_finished_by_kind IS
    'Admin view and metrics: how many finished items each kind has in each final status (index-only).';
COMMENT ON INDEX work_items_unsuccessful IS
    'Admin view and metrics: the latest items that ended without success, and how many did since a moment.';
COMMENT ON INDEX work_items_stalled IS
    'Metrics: the stalls counted on items seen lately (partial on stalls > 0, so it stays small).';
