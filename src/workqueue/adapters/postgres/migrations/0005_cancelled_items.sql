-- Cancel and requeue (docs/adr/0018): the final status `cancelled`, and the
-- cancel request recorded on a running item's row.
--
-- An operator's cancel of a queued item makes it `cancelled` at once. A running
-- item cannot be stopped from outside: the request is written to cancel_reason,
-- and the holder's next heartbeat (which returns it) cancels the handler and
-- writes `cancelled`, fenced by its lease. A holder that died leaves it to lease
-- recovery, which ends it `cancelled` too. cancel_reason is not indexed, so
-- heartbeats stay HOT.

ALTER TABLE work_items ADD COLUMN cancel_reason text;

ALTER TABLE work_items DROP CONSTRAINT work_items_status_check;
ALTER TABLE work_items ADD CONSTRAINT work_items_status_check
    CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled'));

-- Due-ness and retention count every final status as finished: the predicates
-- name the statuses an item is NOT in, as those of 0004 do.
DROP INDEX work_items_newest_finished;
CREATE INDEX work_items_newest_finished ON work_items (kind, finished_at)
    WHERE status NOT IN ('queued', 'running');

DROP INDEX work_items_retention;
CREATE INDEX work_items_retention ON work_items (finished_at)
    WHERE status NOT IN ('queued', 'running');

COMMENT ON COLUMN work_items.status IS
    'queued (written by enqueue, release and lease recovery; left by claim or cancel), running (written by claim; left by complete, fail, cancelled, release or recovery), succeeded, failed or cancelled (final; only retention removes them).';
COMMENT ON COLUMN work_items.finished_at IS
    'When the item reached a final status (succeeded, failed or cancelled). Written by complete, fail, cancel, release and lease recovery (when they finish it); read by due-ness and retention.';
COMMENT ON COLUMN work_items.error IS
    'Why the item failed or was cancelled: the handler''s error, a stall, being superseded by a queued twin, or the cancel''s reason. Written by fail, cancel, release and lease recovery; read by the status view.';
COMMENT ON COLUMN work_items.cancel_reason IS
    'A cancel requested while the item was running: its reason; null when none was. Written by cancel; returned by every heartbeat (so the holder learns of it) and read by lease recovery, which ends such an item cancelled. Not indexed, so heartbeats stay HOT.';
COMMENT ON INDEX work_items_newest_finished IS
    'Due-ness: the newest finished item of a kind (any final status).';
COMMENT ON INDEX work_items_retention IS
    'Retention: the oldest finished items (any final status), deleted in bounded batches.';
