-- Cron schedules (docs/adr/0032): the newest fire time each periodic kind on a
-- calendar had its turn at. A scheduler that finds a fire time due takes the turn
-- by raising fired_at to it, in the statement that enqueues the item
-- (queue.sql, enqueue_if_fired): of schedulers that find one fire time due
-- together, the row lock lets one through. The turns live here rather than in
-- work_items, whose finished rows retention deletes: a monthly schedule must not
-- run again because last month's item was purged.
--
-- A role that runs workers needs SELECT, INSERT and UPDATE on it (README,
-- "A least-privilege role"); the web view reads it.

CREATE TABLE work_schedules (
    kind text PRIMARY KEY,
    fired_at timestamptz NOT NULL
);

COMMENT ON TABLE work_schedules IS
    'The newest fire time each cron-scheduled kind had its turn at (docs/adr/0032).';
