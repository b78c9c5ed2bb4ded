-- Delays and priorities (docs/adr/0030): an item may wait for its run_at, and a
-- claim takes the highest priority first, then FIFO by id.
--
-- A waiting item is `queued` like any other (a queued twin absorbs, a cancel
-- finishes it); only a claim passes it over until its run_at has come. The claim
-- must not pay for the items that wait (a million of them at the top priority,
-- due tomorrow, cost a claim nothing), so they are kept out of the claim index by
-- a column of their own, `delayed`: true from an enqueue whose run_at was still to
-- come until the first claim that finds it due, which claims it or clears the
-- flag (store.sql, fragment claimable). Only queued items' `delayed` is read (every
-- index on it is partial on queued), so a cancel leaves it as it was. No heartbeat
-- writes it, nor priority or run_at: heartbeats stay HOT.

ALTER TABLE work_items
    ADD COLUMN priority smallint NOT NULL DEFAULT 0
        CONSTRAINT work_items_priority_range CHECK (priority BETWEEN -100 AND 100),
    ADD COLUMN run_at timestamptz,
    ADD COLUMN delayed boolean NOT NULL DEFAULT false;

UPDATE work_items SET run_at = enqueued_at;
ALTER TABLE work_items ALTER COLUMN run_at SET NOT NULL;

-- Every enqueue writes run_at. A row inserted by other means (a bulk load, a test's
-- own SQL) that leaves it out runs at once: its run_at is its enqueued_at. The
-- trigger's WHEN is checked in the executor, so an enqueue that writes run_at
-- calls no function.
CREATE FUNCTION work_items_run_at_from_enqueued_at() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.run_at := NEW.enqueued_at;
    RETURN NEW;
END
$$;
CREATE TRIGGER work_items_run_at_defaults_to_enqueued_at
    BEFORE INSERT ON work_items
    FOR EACH ROW WHEN (NEW.run_at IS NULL)
    EXECUTE FUNCTION work_items_run_at_from_enqueued_at();

-- The claim order: queued items not waiting for their run_at, the highest
-- priority first, then the oldest id, for any set of kinds. It replaces the index
-- of the queued ids that claims read until now: the admin view's pages of queued
-- items, which also read it, page each kind on work_items_queued_by_kind instead
-- (monitor.sql, queued), and every enqueue writes one index fewer.
DROP INDEX work_items_claim;
CREATE INDEX work_items_claim ON work_items (priority DESC, id)
    WHERE status = 'queued' AND NOT delayed;

-- The items waiting for their run_at: by run_at, what a claim finds due (of any
-- kind, in one descent); by kind and run_at, when the next of an idle worker's
-- kinds becomes due (next_run_at).
CREATE INDEX work_items_due ON work_items (run_at)
    WHERE status = 'queued' AND delayed;
CREATE INDEX work_items_delayed ON work_items (kind, run_at)
    WHERE status = 'queued' AND delayed;

-- Which kinds are queued, and which finished, are far from independent of each
-- other (a million items of one kind waiting, none of another), and the planner
-- takes them to be unless told: it then expected to find a queued item of a kind
-- with none soon in a sequential scan, and read the whole table to be sure. With
-- their joint frequencies it probes the index.
CREATE STATISTICS work_items_status_and_kind (mcv) ON status, kind FROM work_items;

COMMENT ON INDEX work_items_queued_by_kind IS
    'Due-ness (is an item of a kind queued), and the admin view: counts, oldest and pages of queued items.';
COMMENT ON INDEX work_items_claim IS
    'Claim: the queued items not waiting for their run_at, in claim order (priority DESC, id), for any set of kinds.';
COMMENT ON INDEX work_items_due IS
    'Queued items waiting for their run_at, by run_at: what a claim finds due, of any kind.';
COMMENT ON INDEX work_items_delayed IS
    'Queued items waiting for their run_at, by kind: when the next of some kinds becomes due.';
COMMENT ON COLUMN work_items.priority IS
    'From -100 to 100, given at enqueue (default 0); a claim takes the highest first, then the oldest id.';
COMMENT ON COLUMN work_items.run_at IS
    'When the item becomes claimable: given at enqueue as a time or a delay, else the enqueue time.';
COMMENT ON COLUMN work_items.delayed IS
    'True while a queued item is kept out of the claim index: written by an enqueue whose run_at is still to come, cleared by the first claim that finds it due.';
