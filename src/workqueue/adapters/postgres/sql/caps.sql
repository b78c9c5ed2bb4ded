-- name: capped_kinds
-- The caps in force, by kind (docs/adr/0035), each with how many items of the kind
-- run now, for the monitor: counted from work_items (work_items_running), which the
-- view's role reads already, not from the slots.
SELECT c.kind, c.max_running, c.cap_source, c.cap_set_at,
       (SELECT count(*) FROM work_items AS w
        WHERE w.status = 'running' AND w.kind = c.kind)::integer AS running
FROM work_kind_controls AS c
WHERE c.max_running IS NOT NULL
ORDER BY c.kind;
