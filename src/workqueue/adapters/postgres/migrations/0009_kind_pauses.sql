-- Paused kinds (docs/adr/0034): a kind with a row here is claimed by no worker
-- until the row is deleted. Every claim statement reads the table (store.sql,
-- served_kinds), so a pause holds for every worker at once, those started later
-- too, and outlives restarts of workers and of the database. Its own table, not a
-- flag on work_items: a pause is of a kind, whether it has items or not, and the
-- claims read a handful of rows instead of filtering the queue.
--
-- A role that runs workers needs SELECT on it; the role an operator pauses and
-- resumes with needs INSERT and DELETE too (README, "A least-privilege role"); the
-- web view reads it.

CREATE TABLE work_kind_pauses (
    kind text PRIMARY KEY,
    paused_at timestamptz NOT NULL,
    reason text
);

COMMENT ON TABLE work_kind_pauses IS
    'The kinds no worker claims until they are resumed: since when and why (docs/adr/0034).';
