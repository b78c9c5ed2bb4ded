-- Catalog queries behind docs/schema.sql. They read the schema as PostgreSQL
-- reports it (not as the migrations wrote it) and order everything by name or
-- position, so the text is the same on every server version we run on.

-- name: migrations_applied
SELECT name FROM workqueue_migrations ORDER BY version;

-- name: tables
SELECT c.oid,
       quote_ident(c.relname) AS name,
       coalesce(c.reloptions, '{}') AS options,
       quote_literal(obj_description(c.oid, 'pg_class')) AS comment
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
ORDER BY c.relname;

-- name: columns
-- $1 the table's oid.
SELECT quote_ident(a.attname) AS name,
       format_type(a.atttypid, a.atttypmod) AS type,
       a.attnotnull AS not_null,
       pg_get_expr(d.adbin, d.adrelid) AS default_value,
       a.attidentity::text AS identity,
       quote_literal(col_description(a.attrelid, a.attnum)) AS comment
FROM pg_attribute AS a
LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum;

-- name: constraints
-- $1 the table's oid. NOT NULL shows on the columns (newer servers also list it
-- here, as contype 'n', which would make the text depend on the version).
SELECT quote_ident(conname) AS name, pg_get_constraintdef(oid) AS definition
FROM pg_constraint
WHERE conrelid = $1 AND contype <> 'n'
ORDER BY conname;

-- name: indexes
-- $1 the table's oid. Indexes that back a constraint are shown by the constraint.
SELECT quote_ident(i.relname) AS name,
       pg_get_indexdef(i.oid) AS definition,
       quote_literal(obj_description(i.oid, 'pg_class')) AS comment
FROM pg_index AS x
JOIN pg_class AS i ON i.oid = x.indexrelid
WHERE x.indrelid = $1
  AND NOT EXISTS (
      SELECT 1 FROM pg_constraint AS c
      WHERE c.conrelid = x.indrelid AND c.conindid = x.indexrelid
  )
ORDER BY i.relname;

-- name: triggers
-- $1 the table's oid. The triggers of our own making (not those behind constraints),
-- with their functions' source.
SELECT pg_get_triggerdef(t.oid) AS definition,
       pg_get_functiondef(t.tgfoid) AS function
FROM pg_trigger AS t
WHERE t.tgrelid = $1 AND NOT t.tgisinternal
ORDER BY t.tgname;

-- name: statistics
-- $1 the table's oid. Extended statistics the planner is told to gather.
SELECT pg_get_statisticsobjdef(s.oid) AS definition
FROM pg_statistic_ext AS s
WHERE s.stxrelid = $1
ORDER BY s.stxname;
