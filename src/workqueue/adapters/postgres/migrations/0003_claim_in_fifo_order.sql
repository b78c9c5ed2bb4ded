-- The claim reads the queued ids in order, whichever kinds the worker serves.
--
-- A claim asks for the lowest queued id among several kinds (kind = ANY ($1)). An
-- index on (kind, id) yields ids in order within one kind only, so once many items
-- were queued the planner preferred walking the primary key in id order, filtering
-- on status: past every finished row, since finished items have the lowest ids.
-- A claim then cost time in proportion to the history (about 100 ms beside 200,000
-- finished rows, where it should cost a tenth of a millisecond). An index of the
-- queued ids alone is in claim order for any set of kinds, and stays as small as
-- the backlog.
--
-- The (kind, id) index stays, renamed for what it still serves: due-ness asks
-- whether an item of one kind is queued, and a claim for a kind that has few
-- queued items among many of other kinds reads it rather than step over them.
-- Neither index holds a column a heartbeat writes, so heartbeats stay HOT.

ALTER INDEX work_items_claim RENAME TO work_items_queued_by_kind;

CREATE INDEX work_items_claim ON work_items (id) WHERE status = 'queued';

COMMENT ON INDEX work_items_claim IS
    'Claim: the queued ids in FIFO order, for any set of kinds. Partial on queued, so finished rows cost nothing.';
COMMENT ON INDEX work_items_queued_by_kind IS
    'Due-ness (is an item of a kind queued), and claims of a kind that is rare in the backlog.';
