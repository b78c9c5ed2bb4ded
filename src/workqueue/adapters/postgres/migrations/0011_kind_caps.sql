-- A fleet-wide cap per kind (docs/adr/0035), beside the pauses (docs/adr/0034).
--
-- work_kind_controls: what an operator or a kind's policy says of a kind, one row
-- a kind: a pause (paused_at, reason) and a cap (max_running, cap_source,
-- cap_set_at). It is work_kind_pauses grown: every claim reads it once (the kinds a
-- plain claim passes over are those with a row), so a pause and a cap cost a claim
-- one small relation, not two. A row without a pause or a cap is deleted.
-- work_kind_pauses stays as a view of the paused rows, for the readers of pauses.
--
-- work_kind_slots: N rows for a kind capped at N. A slot is free exactly when its
-- item_id is null, a column of the slot row itself, so a claim that waits for a
-- slot another claim locked rechecks it on the newest version (READ COMMITTED):
-- two claims never take one slot. A claim of a capped kind locks free slots FOR
-- UPDATE SKIP LOCKED and writes each item's id into one, with the item's
-- `running`, in one statement; work_items.slot names the slot a running item
-- holds. The trigger below frees it, in the statement that ends the run however
-- it ends (a success, a failure, a retry, a release, lease recovery). item_id is
-- not indexed and the table leaves room on each page, so taking and freeing a
-- slot are HOT updates; its autovacuum runs often, as the rows change with every
-- run of a capped kind.
--
-- A role that runs workers needs SELECT, UPDATE on work_kind_slots and SELECT on
-- work_kind_controls; the role an operator pauses, resumes and caps with needs
-- INSERT, UPDATE and DELETE on both (README, "A least-privilege role").

ALTER TABLE work_kind_pauses RENAME TO work_kind_controls;
ALTER TABLE work_kind_controls RENAME CONSTRAINT work_kind_pauses_pkey TO work_kind_controls_pkey;
ALTER TABLE work_kind_controls ALTER COLUMN paused_at DROP NOT NULL;
ALTER TABLE work_kind_controls
    ADD COLUMN max_running integer,
    ADD COLUMN cap_source text,
    ADD COLUMN cap_set_at timestamptz,
    ADD CONSTRAINT work_kind_controls_cap CHECK (
        (max_running IS NULL AND cap_source IS NULL AND cap_set_at IS NULL)
        OR (max_running >= 1 AND cap_source IN ('policy', 'operator') AND cap_set_at IS NOT NULL)
    ),
    ADD CONSTRAINT work_kind_controls_pause CHECK (paused_at IS NOT NULL OR reason IS NULL);

CREATE VIEW work_kind_pauses AS
    SELECT kind, paused_at, reason FROM work_kind_controls WHERE paused_at IS NOT NULL;

-- The roles that could read work_kind_pauses before (the web view's, a worker's)
-- read the view as they read the table: the rename took their grants to
-- work_kind_controls; the view gets their SELECT too.
DO $$
DECLARE
    reader record;
BEGIN
    FOR reader IN
        SELECT DISTINCT grantee
        FROM information_schema.role_table_grants
        WHERE table_schema = current_schema() AND table_name = 'work_kind_controls'
          AND privilege_type = 'SELECT' AND grantee <> current_user
    LOOP
        EXECUTE format('GRANT SELECT ON work_kind_pauses TO %I', reader.grantee);
    END LOOP;
END
$$;

CREATE TABLE work_kind_slots (
    kind text NOT NULL,
    slot integer NOT NULL,
    item_id bigint,
    PRIMARY KEY (kind, slot)
) WITH (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);

ALTER TABLE work_items ADD COLUMN slot integer;

-- Frees the slot of an item whose run ended, at the end of the statement that
-- ended it: every way a run ends (a failure, a retry, a release, lease recovery)
-- but the completions of complete_and_claim_capped, which hand the slot on to the
-- next item or free it themselves and clear the row's slot (store.sql, end_runs):
-- it fires only for a row that still names a slot. Only a slot still held by that
-- item: the cap may have been changed or cleared since (its slots made anew).
CREATE FUNCTION work_items_free_slot() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE work_kind_slots SET item_id = NULL
    WHERE kind = NEW.kind AND slot = NEW.slot AND item_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER work_items_free_slot
    AFTER UPDATE OF status ON work_items
    FOR EACH ROW
    WHEN (OLD.status = 'running' AND NEW.status <> 'running' AND NEW.slot IS NOT NULL)
    EXECUTE FUNCTION work_items_free_slot();

-- The claims of a capped or paused kind's neighbours: the queued items of one kind
-- not waiting for their run_at, in claim order. A claim while some kind it serves
-- is capped probes this once per kind, so that no kind's backlog (a capped kind's
-- held over its cap, a paused kind's) lies in the way of another's. Its predicate
-- says `delayed IS NOT TRUE` where work_items_claim's says `NOT delayed` (the same
-- rows: delayed is never null), and the probes say it too, so that work_items_claim
-- cannot serve them: planned once for every kind, a probe would otherwise walk
-- work_items_claim, filtering by kind, past every other kind's queued items (it
-- did: 1.6-2.6 ms a probe beside 5,000 of another kind; bench/README.md).
CREATE INDEX work_items_claim_by_kind ON work_items (kind, priority DESC, id)
    WHERE status = 'queued' AND delayed IS NOT TRUE;

COMMENT ON TABLE work_kind_controls IS
    'What is said of a kind: paused (since when, why) and capped (at most max_running running, set by whom and when); docs/adr/0034, 0035.';
COMMENT ON VIEW work_kind_pauses IS
    'The paused kinds: since when and why (docs/adr/0034).';
COMMENT ON TABLE work_kind_slots IS
    'A capped kind''s slots: item_id is the running item holding it, null when free (docs/adr/0035).';
COMMENT ON COLUMN work_items.slot IS
    'The slot of work_kind_slots a running item of a capped kind holds; null for others (docs/adr/0035).';
COMMENT ON INDEX work_items_claim_by_kind IS
    'Claims while a served kind is capped: one kind''s queued items not waiting for their run_at, in claim order.';
