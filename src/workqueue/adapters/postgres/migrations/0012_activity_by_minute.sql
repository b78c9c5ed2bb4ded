-- The fleet's activity by minute (docs/adr/0040): what the admin view's charts
-- draw. Workers add the items their lanes ran, by minute and kind, once a cycle
-- (work_activity: one upsert per worker a poll interval, never one per item, so
-- claims and completions cost what they did); once a minute one worker samples
-- the depth of each kind (work_depth; kind '' holds the minute's totals, and
-- marks the minute as sampled even when no item was there) and deletes the
-- minutes older than two days from both. The charts read at most a day of
-- minutes on the primary keys, however many items finished in it.
--
-- A role that runs workers needs SELECT, INSERT, UPDATE and DELETE on both; the
-- web view reads them (README, "A least-privilege role").

CREATE TABLE work_activity (
    minute timestamptz NOT NULL,
    kind text NOT NULL,
    succeeded bigint NOT NULL DEFAULT 0,
    failed bigint NOT NULL DEFAULT 0,
    retried bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (minute, kind)
);

COMMENT ON TABLE work_activity IS
    'Items ended per minute and kind, as the workers counted them (docs/adr/0040).';

CREATE TABLE work_depth (
    minute timestamptz NOT NULL,
    kind text NOT NULL,
    queued bigint NOT NULL,
    delayed bigint NOT NULL,
    running bigint NOT NULL,
    PRIMARY KEY (minute, kind)
);

COMMENT ON TABLE work_depth IS
    'Queued, delayed and running items per kind, sampled once a minute (docs/adr/0040).';
