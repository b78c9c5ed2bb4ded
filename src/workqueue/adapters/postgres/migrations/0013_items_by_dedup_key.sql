-- Looking items up by dedup key (issue 30): the admin view's find box and
-- /api/items?dedup_key= list the items of any kind and status whose key is the
-- one typed, newest first (WorkMonitor.items_by_dedup_key).
--
-- work_items_queued_dedup_key holds only queued items, led by kind; this one
-- holds every item with a key, whatever its status, so a key's history is one
-- range of it read from its newest id. Partial on dedup_key IS NOT NULL: an
-- enqueue without a key writes no entry, and most items have none. Neither
-- column changes after the insert, so a claim, a heartbeat or a finish never
-- writes an entry (heartbeats stay HOT); retention's deletes remove its entries.

CREATE INDEX work_items_by_dedup_key ON work_items (dedup_key, id DESC)
    WHERE dedup_key IS NOT NULL;

COMMENT ON INDEX work_items_by_dedup_key IS
    'Admin view: the items of every kind and status with a dedup key, newest first (partial on a key, so items without one cost nothing).';
