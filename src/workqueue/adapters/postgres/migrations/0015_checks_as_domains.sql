-- The table's checks as domains of its columns (docs/adr/0042).
--
-- PostgreSQL 15 reads a table's CHECK constraints back from their stored text and
-- plans them at the start of every statement that updates the table, once for each
-- UPDATE in it, whatever columns the statement changes: with the six of
-- work_items, a fifth of a claim's instructions and two fifths of a heartbeat's
-- (bench/README.md, "Where a claim statement's instructions go"). A domain's check
-- is kept planned in each backend's type cache and is evaluated only for a column a
-- statement assigns. The rules stay the same; a bad value is refused as before
-- (check_violation, naming the domain).
--
-- Changing the columns' types rewrites the table and every index of it, under an
-- exclusive lock: no worker claims meanwhile (the README's upgrade notes). The
-- indexes keep their definitions. The trigger work_items_free_slot reads status in
-- its WHEN, which PostgreSQL refuses to keep across the change: it is dropped and
-- made again as it was.

CREATE DOMAIN wq_status AS text
    CHECK (VALUE IN ('queued', 'running', 'succeeded', 'failed', 'cancelled'));
CREATE DOMAIN wq_count AS integer CHECK (VALUE >= 0);
CREATE DOMAIN wq_priority AS smallint CHECK (VALUE BETWEEN -100 AND 100);
CREATE DOMAIN wq_failures AS jsonb CHECK (jsonb_typeof(VALUE) = 'array');

COMMENT ON DOMAIN wq_status IS
    'An item''s status: queued, running, succeeded, failed or cancelled.';
COMMENT ON DOMAIN wq_count IS
    'A count of an item''s runs: attempt, stalls, snoozes; never negative.';
COMMENT ON DOMAIN wq_priority IS
    'An item''s priority: -100 to 100, larger first.';
COMMENT ON DOMAIN wq_failures IS
    'An item''s failures: a JSON array, one entry per failed attempt.';

DROP TRIGGER work_items_free_slot ON work_items;

ALTER TABLE work_items
    DROP CONSTRAINT work_items_status_check,
    DROP CONSTRAINT work_items_attempt_check,
    DROP CONSTRAINT work_items_stalls_check,
    DROP CONSTRAINT work_items_snoozes_counted,
    DROP CONSTRAINT work_items_priority_range,
    DROP CONSTRAINT work_items_failures_array;

ALTER TABLE work_items
    ALTER COLUMN status TYPE wq_status,
    ALTER COLUMN attempt TYPE wq_count,
    ALTER COLUMN stalls TYPE wq_count,
    ALTER COLUMN snoozes TYPE wq_count,
    ALTER COLUMN priority TYPE wq_priority,
    ALTER COLUMN failures TYPE wq_failures;

CREATE TRIGGER work_items_free_slot
    AFTER UPDATE OF status ON work_items
    FOR EACH ROW
    WHEN (OLD.status = 'running' AND NEW.status <> 'running' AND NEW.slot IS NOT NULL)
    EXECUTE FUNCTION work_items_free_slot();
