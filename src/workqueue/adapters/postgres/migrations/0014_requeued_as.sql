-- Bulk requeue of a kind's failed items (issue 30, docs/adr/0041).
--
-- requeued_as is written on a failed item by the bulk requeue that enqueued a new
-- item for it (the new item's id, or the queued twin's that absorbed it), in the
-- transaction that enqueues: a second bulk requeue, pressed twice or by another
-- operator at once, passes over it. Nullable, with no default: adding it rewrites
-- no row.
--
-- work_items_to_requeue holds a kind's failed items no bulk requeue took yet, in
-- id order: what a bulk requeue reads in batches, and what its confirmation counts
-- (index-only). An item enters it as it fails (an update that writes a new index
-- entry anyway: status is indexed) and leaves it when requeued or purged; claims,
-- heartbeats and successes never write an entry.

ALTER TABLE work_items ADD COLUMN requeued_as bigint;

CREATE INDEX work_items_to_requeue ON work_items (kind, id)
    WHERE status = 'failed' AND requeued_as IS NULL;

COMMENT ON COLUMN work_items.requeued_as IS
    'The item a bulk requeue enqueued for this failed one, or the queued twin that absorbed it; null until then (docs/adr/0041). Written by a bulk requeue in the transaction of its enqueue; read by the next one, which passes over the item, and by the admin view.';

COMMENT ON INDEX work_items_to_requeue IS
    'Bulk requeue: a kind''s failed items not requeued yet, in id order (read in batches, counted before).';
