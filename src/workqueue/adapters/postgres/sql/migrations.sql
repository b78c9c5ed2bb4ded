-- name: lock
-- One migrator at a time per database: a second worker starting together waits
-- here, then finds the migrations applied. Transaction-level, so a migrator that
-- dies releases it with its connection. The key is fixed ("wqmigrat" read as a
-- big-endian integer) so no other application's advisory lock collides with it.
SELECT pg_advisory_xact_lock(8606780662356271476);

-- name: create_bookkeeping
CREATE TABLE workqueue_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT workqueue_migrations_pkey PRIMARY KEY (version)
);
COMMENT ON TABLE workqueue_migrations IS
    'The migrations applied to this database, one row each. Written by the migrator, under its advisory lock; read by the migrator and by the startup schema check.';
COMMENT ON COLUMN workqueue_migrations.version IS
    'The number that orders the migration files (0001_...). Written by the migrator; read to decide what is pending.';
COMMENT ON COLUMN workqueue_migrations.name IS
    'The migration file''s name without .sql. Written by the migrator; read by the schema check and by people.';
COMMENT ON COLUMN workqueue_migrations.applied_at IS
    'When the migration was applied (database time: bookkeeping, not queue time). Written by the migrator; read by people.';

-- name: bookkeeping_exists
SELECT to_regclass('workqueue_migrations') IS NOT NULL;

-- name: applied
SELECT version, name FROM workqueue_migrations ORDER BY version;

-- name: record
INSERT INTO workqueue_migrations (version, name) VALUES ($1, $2);
