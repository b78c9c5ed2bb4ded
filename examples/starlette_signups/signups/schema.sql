-- The example's own tables, beside workqueue's in the same database. Run once at
-- start-up (IF NOT EXISTS); a real application has migrations of its own.
CREATE TABLE IF NOT EXISTS plans (
    name text PRIMARY KEY,
    seats_left integer NOT NULL CHECK (seats_left >= 0)
);
CREATE TABLE IF NOT EXISTS accounts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email text NOT NULL UNIQUE,
    plan text NOT NULL REFERENCES plans (name),
    welcomed_at timestamptz
);
