-- Every statement of PostgresWorkStore. Every timestamp is a parameter from the
-- store's Clock (never now()), so tests control time on PostgreSQL too. Every
-- write after a claim is fenced by the lease: id, attempt and status 'running'.
-- What several statements share is a fragment, written once ({{name}}, see sql.py).

-- fragment: served_kinds
-- The kinds $1 this worker serves, less those paused or capped (a row of
-- work_kind_controls, docs/adr/0034, 0035): what a plain claim may take; a claim
-- of a capped kind is complete_and_claim_capped's. An array computed once a
-- statement, from a table of a handful of rows; a pause or cap committed before
-- the statement began holds for it.
ARRAY(SELECT unnest($1::text[]) EXCEPT SELECT kind FROM work_kind_controls)

-- fragment: unpaused_kinds
-- The kinds $1 this worker serves, less those paused (docs/adr/0034).
ARRAY(SELECT unnest($1::text[])
      EXCEPT SELECT kind FROM work_kind_controls WHERE paused_at IS NOT NULL)

-- fragment: capped_kinds
-- The kinds $1 this worker serves that are capped and not paused (docs/adr/0035).
SELECT kind
FROM work_kind_controls
WHERE kind = ANY ($1::text[]) AND paused_at IS NULL AND max_running IS NOT NULL

-- fragment: ready_items
-- The claim order (domain/claim_order.py) over the queued items of the kinds
-- this worker serves and may claim (served_kinds) that are not waiting for
-- their run_at: the highest priority
-- first, then the oldest id. The partial claim index (work_items_claim) yields
-- them in this order. The statement that includes it says how many to take
-- (LIMIT) and locks them FOR UPDATE SKIP LOCKED: concurrent claimers pass over
-- each other's rows instead of waiting, and never get the same item.
SELECT id, priority
FROM work_items
WHERE status = 'queued' AND NOT delayed AND kind = ANY ({{served_kinds}})
ORDER BY priority DESC, id

-- fragment: due_items
-- The queued items that waited for their run_at and whose run_at has come ($3
-- now), of any kind, those that waited longest first, at most 1000 a statement,
-- locked FOR UPDATE SKIP LOCKED: one descent of work_items_due, which finds
-- nothing at once while the items only wait. Every claim statement's `due`.
SELECT id, priority, kind
FROM work_items
WHERE status = 'queued' AND delayed AND run_at <= $3::timestamptz
ORDER BY run_at
LIMIT 1000
FOR UPDATE SKIP LOCKED

-- fragment: claimable
-- The next claimable items, as the CTEs `due` and `candidate`, after the
-- statement's own `ready` (ready_items with its LIMIT). due: due_items.
-- candidate: ready, and the due items of the kinds $1. The
-- statement takes the first of them in claim order as `next`, and says in
-- `undelay` whether due items are left that it did not claim (of every kind):
-- the store then runs `undelay`, which clears their flag so that the next
-- claims, anyone's, find them in the claim index. It is a statement of its own,
-- run only then, because an UPDATE in the claim costs every claim its set-up
-- (about a tenth of a claim), due items or not (bench/README.md). While more
-- than 1000 items are due and still flagged, a claim orders among the 1000 that
-- waited longest (docs/adr/0030); the claims after it take the rest. One probe
-- for every kind, rather than one per kind served: a claim's cost then rose by
-- a tenth, not by half (bench/README.md).
due AS MATERIALIZED (
    {{due_items}}
),
candidate AS (
    SELECT id, priority FROM ready
    UNION ALL
    SELECT id, priority FROM due WHERE kind = ANY ({{served_kinds}})
)

-- fragment: queued_twin
-- The queued item with the kind and dedup key of the work item aliased `r`, if any:
-- what supersedes `r` should it go back to queued (docs/adr/0004). Each statement
-- that can release (finish, recovery) gives it to end_runs as `twin_id`.
(SELECT q.id
 FROM work_items AS q
 WHERE q.status = 'queued' AND q.kind = r.kind AND q.dedup_key = r.dedup_key)

-- fragment: end_runs
-- The one write of every way a run ends (RunOutcome, domain/run_outcome.py), and
-- the one way back to queued. The statement that includes it first defines
-- `ended`: one row per lease to end, (id, attempt, ending, progress, error,
-- stalls, ended_at, twin_id, run_at, result), where ending is 'succeeded',
-- 'failed', 'retried', 'snoozed', 'cancelled' or 'released', error is a failure's
-- error (a retry's too; a cancel's reason when none was recorded), stalls the
-- stall count to write (null: unchanged), twin_id the queued twin that supersedes
-- an item going back to queued (queued_twin; null for the other endings and where
-- the statement cannot send one back, as the claims' completions), run_at when a
-- retried or snoozed item runs again (null: unchanged) and result a success's
-- result. Each lease is fenced on its own; a lease no longer held changes nothing
-- and has no row in `finished` (id, status, twin_id, ending, kind, slot).
--   slot: the slot of a capped kind (docs/adr/0035) the item holds, as `ended` read
--   it, when the statement frees or hands on that slot itself (only
--   complete_and_claim_capped does; null in every other): the row's slot is then
--   cleared. A slot the row still names when its run ends is freed by the trigger
--   work_items_free_slot, at the end of the statement.
--   succeeded: that status, its result. failed: that status and error.
--   cancelled: cancelled with the recorded request's reason, else the given one.
--   released, retried, snoozed: back to queued, lease and worker cleared, at the
--   given run_at if any (waiting for it, `delayed`, while it is to come), unless
--   a cancel of it was requested (cancelled with that reason, docs/adr/0018) or it
--   has a queued twin (failed as superseded by it, docs/adr/0004). A twin
--   committed after the statement's snapshot makes the requeue violate the unique
--   dedup index: the caller runs the statement again, which then sees it. A
--   retried item keeps its error; a snoozed one counts the snooze.
--   failed, retried: the failure is appended to `failures` (attempt, time, error:
--   docs/adr/0031), whatever the row then holds.
-- The cancel request is read from the row being updated (`w`), which PostgreSQL
-- rechecks should a cancel have written it meanwhile; a twin's kind and dedup key
-- never change, so reading them from the snapshot is as good.
finished AS (
    UPDATE work_items AS w
    SET status = CASE WHEN e.ending NOT IN ('released', 'retried', 'snoozed') THEN e.ending
                      WHEN w.cancel_reason IS NOT NULL THEN 'cancelled'
                      WHEN e.twin_id IS NOT NULL THEN 'failed'
                      ELSE 'queued'
                 END,
        stalls = coalesce(e.stalls, w.stalls),
        progress = e.progress,
        lease_expires_at = NULL,
        worker_id = CASE WHEN e.ending IN ('released', 'retried', 'snoozed')
                              AND w.cancel_reason IS NULL AND e.twin_id IS NULL THEN NULL
                         ELSE w.worker_id
                    END,
        finished_at = CASE WHEN e.ending IN ('released', 'retried', 'snoozed')
                                AND w.cancel_reason IS NULL AND e.twin_id IS NULL THEN NULL
                           ELSE e.ended_at
                      END,
        error = CASE WHEN e.ending = 'succeeded' THEN NULL
                     WHEN e.ending = 'failed' THEN e.error
                     WHEN w.cancel_reason IS NOT NULL THEN w.cancel_reason
                     WHEN e.ending = 'cancelled' THEN e.error
                     WHEN e.twin_id IS NOT NULL THEN
                         'superseded by queued item ' || e.twin_id || ' with the same dedup key'
                     WHEN e.ending = 'retried' THEN e.error
                END,
        run_at = coalesce(e.run_at, w.run_at),
        delayed = coalesce(e.run_at > e.ended_at, w.delayed),
        snoozes = w.snoozes + CASE WHEN e.ending = 'snoozed' THEN 1 ELSE 0 END,
        failures = CASE WHEN e.ending IN ('failed', 'retried') THEN
                            w.failures || jsonb_build_array(jsonb_build_object(
                                'attempt', w.attempt, 'at', e.ended_at, 'error', e.error))
                        ELSE w.failures
                   END,
        result = CASE WHEN e.ending = 'succeeded' THEN e.result ELSE w.result END,
        slot = CASE WHEN w.slot = e.slot THEN NULL ELSE w.slot END
    FROM ended AS e
    WHERE w.id = e.id AND w.attempt = e.attempt AND w.status = 'running'
    RETURNING w.id, w.status, e.twin_id, e.ending, w.kind, e.slot
)

-- name: finish
-- $1 id, $2 attempt, $3 now, $4 ending, $5 progress, $6 error, $7 run_at, $8
-- result: one run ends for good, as succeeded, failed or cancelled (see end_runs).
-- One row when the lease was held: the item's new status; no row when it was not.
-- An ending that returns the item to queued runs finish_to_queued instead: each
-- statement then plans the same for every call, and PostgreSQL keeps one plan of
-- it (a generic plan) instead of planning it again on every call, which it did
-- while one statement held both and a call's ending decided whether the twin was
-- looked up (the plan of a call cost more than running it; bench/README.md).
WITH ended AS (
    SELECT $1::bigint AS id, $2::integer AS attempt, $4::text AS ending,
           $5::jsonb AS progress, $6::text AS error, NULL::integer AS stalls,
           $3::timestamptz AS ended_at, NULL::bigint AS twin_id,
           $7::timestamptz AS run_at, $8::jsonb AS result,
           NULL::integer AS slot
),
{{end_runs}}
SELECT status, twin_id FROM finished;

-- name: finish_to_queued
-- $1 id, $2 attempt, $3 now, $4 ending ('released', 'retried' or 'snoozed'), $5
-- progress, $6 error, $7 run_at, $8 result: one run ends and its item returns to
-- queued (see end_runs). One row when the lease was held: the item's new status,
-- and the queued twin that superseded its return to queued; no row when it was not.
WITH ended AS (
    SELECT r.id, r.attempt, $4::text AS ending, $5::jsonb AS progress, $6::text AS error,
           NULL::integer AS stalls, $3::timestamptz AS ended_at,
           {{queued_twin}} AS twin_id,
           $7::timestamptz AS run_at, $8::jsonb AS result,
           NULL::integer AS slot
    FROM work_items AS r
    WHERE r.id = $1::bigint AND r.attempt = $2::integer
),
{{end_runs}}
SELECT status, twin_id FROM finished;

-- name: claim
-- $1 kinds, $2 worker_id, $3 now, $4 lease_expires_at: the claim. $5 id, $6 attempt,
-- $7 progress: a lease to end as succeeded first, in the same statement and commit,
-- or three nulls (then nothing matches and nothing is ended). WorkStore.claim and
-- complete_and_claim both run it. The claim takes the next claimable item whether
-- or not the fence held. The two updates touch different rows (the ended one is
-- running, the claimed one queued), so neither sees the other's change. Always
-- one row: completed, then the claimed item's columns, all null when nothing was
-- claimable.
WITH ended AS (
    SELECT $5::bigint AS id, $6::integer AS attempt, 'succeeded'::text AS ending,
           $7::jsonb AS progress, NULL::text AS error, NULL::integer AS stalls,
           $3::timestamptz AS ended_at, NULL::bigint AS twin_id,
           NULL::timestamptz AS run_at, NULL::jsonb AS result,
           NULL::integer AS slot
),
{{end_runs}},
ready AS MATERIALIZED (
    {{ready_items}}
    LIMIT 1
    FOR UPDATE SKIP LOCKED
),
{{claimable}},
next AS MATERIALIZED (
    SELECT id FROM candidate ORDER BY priority DESC, id LIMIT 1
),
claimed AS (
    UPDATE work_items
    SET status = 'running',
        delayed = false,
        attempt = attempt + 1,
        started_at = $3,
        heartbeat_at = $3,
        worker_id = $2,
        lease_expires_at = $4,
        slot = NULL
    WHERE id = (SELECT id FROM next)
    RETURNING {{item_columns}}
)
SELECT EXISTS (SELECT FROM finished) AS completed,
       EXISTS (SELECT FROM due WHERE id NOT IN (SELECT id FROM next)) AS undelay,
       EXISTS ({{capped_kinds}}) AS capped,
       claimed.*
FROM (VALUES (1)) AS one
LEFT JOIN claimed ON true;

-- fragment: leases_succeeded
-- complete_and_claim_many's `ended` (see end_runs): the leases $5 ids, $6 attempts,
-- $7 progress, each to end as succeeded.
SELECT lease.id::bigint AS id, lease.attempt::integer AS attempt,
       'succeeded'::text AS ending, lease.progress::jsonb AS progress,
       NULL::text AS error, NULL::integer AS stalls, $3::timestamptz AS ended_at,
       NULL::bigint AS twin_id, NULL::timestamptz AS run_at, NULL::jsonb AS result,
       NULL::integer AS slot
FROM unnest($5::text[], $6::text[], $7::text[]) AS lease(id, attempt, progress)

-- fragment: claimed_next
-- The items of `next` made running under the leases of $2 worker_id, $3 now, $4
-- lease_expires_at, holding no slot: the claims of complete_and_claim_many and
-- complete_and_claim_beside_capped, returned whole.
UPDATE work_items AS item
SET status = 'running',
    delayed = false,
    attempt = item.attempt + 1,
    started_at = $3,
    heartbeat_at = $3,
    worker_id = $2,
    lease_expires_at = $4,
    slot = NULL
FROM next
WHERE item.id = next.id
RETURNING {{item_columns:item}}

-- fragment: capped_room
-- Work a capped claim could take now: a kind of $1 capped and not paused
-- (capped_kinds) with a free slot and a queued item not waiting for its run_at
-- (`delayed IS NOT TRUE`: work_items_claim_by_kind's predicate, as in the capped
-- statement's probes). Read without locks: a slot another claim takes meanwhile
-- only sends the store to the capped statement once for nothing.
SELECT
FROM ({{capped_kinds}}) AS c
WHERE EXISTS (SELECT FROM work_kind_slots AS s WHERE s.kind = c.kind AND s.item_id IS NULL)
  AND EXISTS (SELECT FROM work_items AS w
              WHERE w.status = 'queued' AND w.delayed IS NOT TRUE AND w.kind = c.kind)

-- name: complete_and_claim_many
-- $1 kinds, $2 worker_id, $3 now, $4 lease_expires_at: the claims, of at most $8
-- items, a number the store writes in for $8 (PostgresWorkStore): given as a
-- parameter, a LIMIT is unknown to the plan PostgreSQL would keep for every call
-- (it takes it for a tenth of the queued items), so that plan looked dearer than
-- one made for each call, and the statement was planned again on every call, at
-- more than its run's cost (bench/README.md). Written in, each batch size is
-- planned once a connection. $5 ids, $6 attempts, $7 progress as JSON text (NULL
-- for none), all as text (see heartbeat_many): the leases to end as succeeded
-- first, in the same statement and commit. The claim statement above for many leases at once: each
-- fenced on its own, then the next claimable items claimed whether or not the
-- fences held. One row per claimed item (in no order: the caller sorts them by
-- id), or one row of nulls when nothing was claimable; each row carries the ids
-- of the leases that were held.
WITH ended AS (
    {{leases_succeeded}}
),
{{end_runs}},
ready AS MATERIALIZED (
    {{ready_items}}
    LIMIT $8
    FOR UPDATE SKIP LOCKED
),
{{claimable}},
next AS MATERIALIZED (
    SELECT id FROM candidate ORDER BY priority DESC, id LIMIT $8
),
claimed AS (
    {{claimed_next}}
)
SELECT ARRAY(SELECT id::text FROM finished) AS completed,
       EXISTS (SELECT FROM due WHERE id NOT IN (SELECT id FROM next)) AS undelay,
       EXISTS ({{capped_kinds}}) AS capped,
       claimed.*
FROM (VALUES (1)) AS one
LEFT JOIN claimed ON true;

-- name: complete_and_claim_beside_capped
-- complete_and_claim_many while the kinds of $1 that are capped have no work a
-- capped claim could take (docs/adr/0035: their slots are full, or none of their
-- items is queued), with the same parameters and row; plus `room`, whether one
-- now has (capped_room), or a lease of a capped kind was ended (its slot is freed
-- by the trigger as the statement ends, after its snapshot): the store then goes
-- back to complete_and_claim_capped, at once for what this one did not claim.
-- (Asking for those leases inside capped_room, as an OR beside the free slot, cost
-- the drain beside a full capped kind a third of its rate; as a second EXISTS of
-- its own, nothing measurable: bench/README.md, "Caps".)
-- Its `ready` probes each kind it claims on work_items_claim_by_kind, as the
-- capped statement does, so that a capped kind's backlog (a cap exists to hold
-- one) does not lie in the way of the others' items; it passes over capped kinds
-- (served_kinds) and writes no slot. So a worker serving a capped kind whose
-- slots other workers hold pays a probe per kind and two probes of the capped
-- kind, not the capped statement's slots and sorts.
WITH ended AS (
    {{leases_succeeded}}
),
{{end_runs}},
ready AS MATERIALIZED (
    SELECT w.id, w.priority
    FROM unnest({{served_kinds}}) AS k (kind)
    CROSS JOIN LATERAL (
        SELECT id, priority
        FROM work_items
        WHERE status = 'queued' AND delayed IS NOT TRUE AND kind = k.kind
        ORDER BY priority DESC, id
        LIMIT $8
        FOR UPDATE SKIP LOCKED
    ) AS w
),
{{claimable}},
next AS MATERIALIZED (
    SELECT id FROM candidate ORDER BY priority DESC, id LIMIT $8
),
claimed AS (
    {{claimed_next}}
)
SELECT ARRAY(SELECT id::text FROM finished) AS completed,
       EXISTS (SELECT FROM due WHERE id NOT IN (SELECT id FROM next)) AS undelay,
       EXISTS ({{capped_kinds}}) AS capped,
       EXISTS ({{capped_room}})
       OR EXISTS (SELECT FROM finished AS f WHERE f.kind IN ({{capped_kinds}})) AS room,
       claimed.*
FROM (VALUES (1)) AS one
LEFT JOIN claimed ON true;

-- name: complete_and_claim_capped
-- complete_and_claim_many while some kind of $1 is capped (docs/adr/0035), with the
-- same parameters and row, and $8 written in the same way; `capped` says whether
-- a kind of $1 is still capped (the store goes back to the plain statements when
-- none is), and `room` whether a capped kind had an open slot and a claimable item
-- (when none had, the store runs complete_and_claim_beside_capped until one has).
-- The store runs it only then: its slots and its probes per kind cost a claim
-- more than the plain statement's one scan (bench/README.md).
--   handed: the slots of the leases this statement completes (`ended` reads each
--   one's slot; end_runs clears it on the row, so the trigger leaves it to this
--   statement). open: the slots this claim may fill, per capped kind: those handed
--   on, and free ones locked FOR UPDATE SKIP LOCKED (claimers pass over each
--   other's, as over each other's items), no more than $8 with those handed on.
--   kinds: the kinds served and not paused, a capped one only with an open slot,
--   with how many it may take (room; null for an uncapped kind).
--   ready: per kind, its first queued items in claim order, at most its room: one
--   probe of work_items_claim_by_kind a kind (`delayed IS NOT TRUE` names that
--   index's predicate: see migration 0011), so no kind's backlog lies in the way of
--   another's. With the due
--   items (claimable's `due`) of those kinds, the first $8 in claim order, at most
--   its room of a capped kind, are `next`.
--   taken: each item of a capped kind in `next` writes its id into one of its kind's
--   open slots, those handed on first; a slot handed on that no item takes (or of a
--   kind no longer capped, or paused) is freed. Each only if the slot is still as
--   `open` saw it (free, or held by the completed lease): rechecked on the newest
--   version should anything have changed it meanwhile (a cap changed). claimed:
--   the items of `next`, those of a capped kind only with a slot taken, each
--   recording its slot.
WITH ended AS (
    SELECT lease.id::bigint AS id, lease.attempt::integer AS attempt,
           'succeeded'::text AS ending, lease.progress::jsonb AS progress,
           NULL::text AS error, NULL::integer AS stalls, $3::timestamptz AS ended_at,
           NULL::bigint AS twin_id, NULL::timestamptz AS run_at, NULL::jsonb AS result,
           held.slot
    FROM unnest($5::text[], $6::text[], $7::text[]) AS lease(id, attempt, progress)
    LEFT JOIN work_items AS held
        ON held.id = lease.id::bigint AND held.attempt = lease.attempt::integer
       AND held.status = 'running'
),
{{end_runs}},
capped AS MATERIALIZED (
    {{capped_kinds}}
),
handed AS MATERIALIZED (
    SELECT kind, slot, id AS holder
    FROM finished
    WHERE slot IS NOT NULL
),
open AS MATERIALIZED (
    SELECT c.kind, s.slot, NULL::bigint AS holder
    FROM capped AS c
    CROSS JOIN LATERAL (
        SELECT slot
        FROM work_kind_slots
        WHERE kind = c.kind AND item_id IS NULL
        LIMIT greatest(0, $8 - (SELECT count(*) FROM handed AS h WHERE h.kind = c.kind))
        FOR UPDATE SKIP LOCKED
    ) AS s
    UNION ALL
    SELECT h.kind, h.slot, h.holder
    FROM handed AS h
    WHERE h.kind IN (SELECT kind FROM capped)
),
kinds AS MATERIALIZED (
    SELECT k.kind, r.room
    FROM unnest({{unpaused_kinds}}) AS k (kind)
    LEFT JOIN (SELECT kind, count(*) AS room FROM open GROUP BY kind) AS r ON r.kind = k.kind
    WHERE r.room IS NOT NULL OR k.kind NOT IN (SELECT kind FROM capped)
),
ready AS MATERIALIZED (
    SELECT w.id, w.priority, w.kind
    FROM kinds AS k
    CROSS JOIN LATERAL (
        SELECT id, priority, kind
        FROM work_items
        WHERE status = 'queued' AND delayed IS NOT TRUE AND kind = k.kind
        ORDER BY priority DESC, id
        LIMIT least(k.room, $8)
        FOR UPDATE SKIP LOCKED
    ) AS w
),
due AS MATERIALIZED (
    {{due_items}}
),
candidate AS (
    SELECT c.id, c.priority, c.kind, k.room,
           row_number() OVER (PARTITION BY c.kind ORDER BY c.priority DESC, c.id) AS place
    FROM (SELECT id, priority, kind FROM ready
          UNION ALL
          SELECT id, priority, kind FROM due) AS c
    JOIN kinds AS k ON k.kind = c.kind
),
next AS MATERIALIZED (
    SELECT id, kind, room IS NOT NULL AS capped,
           row_number() OVER (PARTITION BY kind ORDER BY priority DESC, id) AS place
    FROM (SELECT id, kind, priority, room
          FROM candidate
          WHERE room IS NULL OR place <= room
          ORDER BY priority DESC, id
          LIMIT $8) AS first
),
taken AS (
    UPDATE work_kind_slots AS s
    SET item_id = p.id
    FROM (SELECT n.id, o.kind, o.slot, o.holder
          FROM (SELECT kind, slot, holder,
                       row_number() OVER (PARTITION BY kind ORDER BY holder NULLS LAST, slot)
                           AS place
                FROM open) AS o
          LEFT JOIN next AS n ON n.capped AND n.kind = o.kind AND n.place = o.place
          WHERE n.id IS NOT NULL OR o.holder IS NOT NULL
          UNION ALL
          SELECT NULL, h.kind, h.slot, h.holder
          FROM handed AS h
          WHERE h.kind NOT IN (SELECT kind FROM capped)) AS p
    WHERE s.kind = p.kind AND s.slot = p.slot AND s.item_id IS NOT DISTINCT FROM p.holder
    RETURNING s.item_id, s.slot
),
claimed AS (
    UPDATE work_items AS item
    SET status = 'running',
        delayed = false,
        attempt = item.attempt + 1,
        started_at = $3,
        heartbeat_at = $3,
        worker_id = $2,
        lease_expires_at = $4,
        slot = t.slot
    FROM next
    LEFT JOIN taken AS t ON t.item_id = next.id
    WHERE item.id = next.id AND (NOT next.capped OR t.item_id IS NOT NULL)
    RETURNING {{item_columns:item}}
)
SELECT ARRAY(SELECT id::text FROM finished) AS completed,
       EXISTS (SELECT FROM due WHERE id NOT IN (SELECT id FROM next)) AS undelay,
       EXISTS (SELECT FROM capped) AS capped,
       EXISTS (SELECT FROM (SELECT kind FROM ready UNION ALL SELECT kind FROM due) AS c
               WHERE c.kind IN (SELECT kind FROM open)) AS room,
       claimed.*
FROM (VALUES (1)) AS one
LEFT JOIN claimed ON true;

-- name: undelay
-- $1 now. Moves the queued items whose run_at has come out of the waiting items
-- (work_items_due) into the claim index (work_items_claim), at most 1000 at a time,
-- those that waited longest first; run after a claim whose `undelay` said some
-- were left (see claimable). Claims order them rightly either way: a claim finds
-- the due items that still wait through `due`. This only spares the claims after
-- it from locking them again; SKIP LOCKED leaves those a claim holds to the next.
UPDATE work_items
SET delayed = false
WHERE id IN (SELECT id
             FROM work_items
             WHERE status = 'queued' AND delayed AND run_at <= $1::timestamptz
             ORDER BY run_at
             LIMIT 1000
             FOR UPDATE SKIP LOCKED);

-- name: next_run_at
-- $1 kinds, $2 now: the earliest run_at after now among the queued items of the
-- kinds that wait for it, or null (WorkStore.next_run_at); paused kinds are left
-- out. One probe of work_items_delayed per kind.
SELECT min(w.run_at) AS run_at
FROM unnest({{unpaused_kinds}}) AS k (kind)
CROSS JOIN LATERAL (
    SELECT run_at
    FROM work_items
    WHERE status = 'queued' AND delayed AND kind = k.kind AND run_at > $2::timestamptz
    ORDER BY run_at
    LIMIT 1
) AS w;

-- name: heartbeat
-- $1 id, $2 attempt, $3 now, $4 lease_expires_at, $5 progress.
-- Touches no indexed column, so it is a HOT update.
-- Returns whether a cancel of the item was requested (docs/adr/0018); no row when
-- the lease was not held.
UPDATE work_items
SET heartbeat_at = $3, lease_expires_at = $4, progress = $5
WHERE id = $1 AND attempt = $2 AND status = 'running'
RETURNING cancel_reason IS NOT NULL;

-- name: heartbeat_many
-- $1 ids, $2 attempts, $3 now, $4 lease_expires_at, $5 progress as JSON text (NULL
-- for none), one element per lease; ids and attempts as text too: arrays of text
-- are the only ones asyncpg encodes without first asking the server about the
-- array type, once per connection (ADR 0023). The heartbeat above for each lease
-- at once, each fenced on its own: one row per lease still held, with its id and
-- whether a cancel of it was requested; a lease not held has no row and changes
-- nothing. HOT updates, as above.
UPDATE work_items AS item
SET heartbeat_at = $3, lease_expires_at = $4, progress = beat.progress::jsonb
FROM unnest($1::text[], $2::text[], $5::text[]) AS beat(id, attempt, progress)
WHERE item.id = beat.id::bigint AND item.attempt = beat.attempt::integer
  AND item.status = 'running'
RETURNING item.id, item.cancel_reason IS NOT NULL AS cancel_requested;

-- name: cancel
-- $1 id, $2 now, $3 reason. One row: the status the cancel wrote ('cancelled' for a
-- queued item, 'running' when it recorded the request on a running one; null when
-- it changed nothing), then the item's status and whether a cancel was requested,
-- as they were before (null when there is no such item).
-- A claim that locked the row first is waited for, and the update is then decided
-- on the claimed row (READ COMMITTED rechecks the WHERE and recomputes the SET on
-- it): the cancel either cancels the queued item or records the request on the
-- running one, never neither.
WITH changed AS (
    UPDATE work_items
    SET status = CASE WHEN status = 'queued' THEN 'cancelled' ELSE status END,
        error = CASE WHEN status = 'queued' THEN $3 ELSE error END,
        finished_at = CASE WHEN status = 'queued' THEN $2::timestamptz ELSE finished_at END,
        cancel_reason = CASE WHEN status = 'running' THEN $3 ELSE cancel_reason END
    WHERE id = $1 AND (status = 'queued' OR (status = 'running' AND cancel_reason IS NULL))
    RETURNING status
)
SELECT (SELECT status FROM changed) AS changed,
       w.status,
       w.cancel_reason IS NOT NULL AS requested
FROM (VALUES (1)) AS one
LEFT JOIN work_items AS w ON w.id = $1;

-- name: take_failed
-- The first statement of a bulk requeue's batch (docs/adr/0041), in the
-- transaction that enqueues the new items and marks the old ones (mark_requeued):
-- $1 kind, $2 after_id, $3 up_to_id, $4 limit. The kind's failed items not
-- requeued yet with ids in (after_id, up_to_id], oldest first, locked until the
-- transaction ends; rows another batch holds are passed over, as that batch
-- requeues them (a range of work_items_to_requeue, written as cancel_queued's is).
SELECT {{item_columns}}
FROM work_items
WHERE status = 'failed' AND requeued_as IS NULL AND (kind, id) > ($1, $2) AND (kind, id) <= ($1, $3)
ORDER BY kind, id
LIMIT $4
FOR UPDATE SKIP LOCKED;

-- name: mark_requeued
-- A bulk requeue's batch, after its enqueue: $1 the failed items' ids, $2 the
-- ids of the items that requeued them (parallel arrays). The rows are locked
-- by take_failed in the same transaction.
UPDATE work_items AS w
SET requeued_as = m.requeued_as
FROM unnest($1::bigint[], $2::bigint[]) AS m (id, requeued_as)
WHERE w.id = m.id;

-- name: cancel_queued
-- One batch of a bulk cancel (docs/adr/0041): $1 kind, $2 after_id, $3 up_to_id,
-- $4 limit, $5 now, $6 reason. The kind's queued items with ids in (after_id,
-- up_to_id], oldest first, ended as cancel ends a queued item; rows a claim or
-- another batch holds are passed over (work_items_queued_by_kind). One row: how
-- many it cancelled and the highest id among them. The kind's ids are written as
-- a range of the index's (kind, id) entries: as `kind = $1 AND id > $2`,
-- PostgreSQL walks the primary key from the oldest id through the whole finished
-- history to the first queued item (as monitor.sql's queued says).
WITH taken AS (
    SELECT id
    FROM work_items
    WHERE status = 'queued' AND (kind, id) > ($1, $2) AND (kind, id) <= ($1, $3)
    ORDER BY kind, id
    LIMIT $4
    FOR UPDATE SKIP LOCKED
),
cancelled AS (
    UPDATE work_items AS w
    SET status = 'cancelled', error = $6, finished_at = $5::timestamptz
    FROM taken
    WHERE w.id = taken.id
    RETURNING w.id
)
SELECT count(*) AS taken, max(id) AS last_id FROM cancelled;

-- name: pause_kind
-- $1 kind, $2 now, $3 reason or null: pauses the kind unless it is paused. One
-- row: the pause in force, this one or the earlier one. The update of a kind
-- paused already leaves its pause as it was, and returns it even when that pause
-- was committed after this statement began (DO NOTHING would return nothing); a
-- capped kind's row gains the pause.
INSERT INTO work_kind_controls AS c (kind, paused_at, reason)
VALUES ($1, $2, $3)
ON CONFLICT (kind) DO UPDATE
SET paused_at = coalesce(c.paused_at, excluded.paused_at),
    reason = CASE WHEN c.paused_at IS NULL THEN excluded.reason ELSE c.reason END
RETURNING kind, paused_at, reason;

-- name: resume_kind
-- $1 kind, $2 the channel enqueues notify: ends the kind's pause and, in the same
-- commit, wakes its idle workers as an enqueue does. One row: whether it was
-- paused. The row of a kind not capped goes; a capped kind's keeps its cap.
WITH dropped AS (
    DELETE FROM work_kind_controls
    WHERE kind = $1 AND paused_at IS NOT NULL AND max_running IS NULL
    RETURNING kind
),
kept AS (
    UPDATE work_kind_controls
    SET paused_at = NULL, reason = NULL
    WHERE kind = $1 AND paused_at IS NOT NULL AND max_running IS NOT NULL
    RETURNING kind
)
SELECT count(pg_notify($2, kind)) > 0 AS resumed
FROM (SELECT kind FROM dropped UNION ALL SELECT kind FROM kept) AS resumed;

-- name: lock_controls
-- $1 kind: the kind's row of work_kind_controls, made if it has none (with neither
-- a pause nor a cap: the transaction deletes it again should it set none, see
-- drop_empty_controls) and locked until the transaction ends, so that the changes
-- of one kind's cap follow one another. One row: its cap, if any.
WITH made AS (
    INSERT INTO work_kind_controls (kind) VALUES ($1) ON CONFLICT (kind) DO NOTHING
)
SELECT max_running, cap_source, cap_set_at, NULL::integer AS running
FROM work_kind_controls
WHERE kind = $1
FOR UPDATE;

-- name: set_cap
-- $1 kind, $2 max_running or null, $3 cap_source or null, $4 now or null: the
-- kind's cap, on its locked row (lock_controls).
UPDATE work_kind_controls
SET max_running = $2, cap_source = $3, cap_set_at = $4
WHERE kind = $1;

-- name: drop_slots
-- $1 kind: every slot of the kind, free or held. Waits for the claims that hold
-- one locked; claims that come later pass over them until this commits.
DELETE FROM work_kind_slots WHERE kind = $1;

-- name: make_slots
-- $1 kind, $2 max_running: the kind's slots, 1 to $2; its running items, the oldest
-- first, hold the first of them (only those still running when their row is
-- updated: one whose run ended meanwhile leaves its slot free).
WITH running AS (
    SELECT id, row_number() OVER (ORDER BY id) AS slot
    FROM work_items
    WHERE kind = $1 AND status = 'running'
    ORDER BY id
    LIMIT $2
),
held AS (
    UPDATE work_items AS w
    SET slot = r.slot
    FROM running AS r
    WHERE w.id = r.id AND w.status = 'running'
    RETURNING w.id, w.slot
)
INSERT INTO work_kind_slots (kind, slot, item_id)
SELECT $1, s.slot, held.id
FROM generate_series(1, $2::integer) AS s (slot)
LEFT JOIN held ON held.slot = s.slot;

-- name: drop_empty_controls
-- $1 kind: deletes the kind's row if it holds neither a pause nor a cap.
DELETE FROM work_kind_controls
WHERE kind = $1 AND paused_at IS NULL AND max_running IS NULL;

-- name: wake_kind
-- $1 kind, $2 the channel enqueues notify: wakes the kind's idle workers, as an
-- enqueue does (a changed cap may give their claims room).
SELECT pg_notify($2, $1);

-- name: caps
-- The caps in force, by kind, each with how many of its slots are held.
SELECT c.kind, c.max_running, c.cap_source, c.cap_set_at,
       (SELECT count(*) FROM work_kind_slots AS s
        WHERE s.kind = c.kind AND s.item_id IS NOT NULL)::integer AS running
FROM work_kind_controls AS c
WHERE c.max_running IS NOT NULL
ORDER BY c.kind;

-- name: recover_expired
-- $1 now, $2 max_stalls. One row per recovered item: its id, how its run ended
-- and its new status. Every running item whose lease expired (strictly:
-- lease_expires_at < now) ends as its holder would have ended it (end_runs):
--   cancelled  a cancel of it was requested: cancelled with its reason, and no
--              stall counted (docs/adr/0018);
--   failed     one more stall reaches max_stalls: the error says it stalled;
--   released   with one more stall: back to queued, or superseded by a queued
--              twin (docs/adr/0004), or by a newer expired twin released in this
--              same pass (of twins released together, the newest returns: its
--              payload is the newest).
-- SKIP LOCKED: items another recoverer (or a heartbeat) holds are left to the next
-- pass.
WITH expired AS (
    SELECT id, attempt, kind, dedup_key, progress, stalls + 1 AS stalls,
           CASE WHEN cancel_reason IS NOT NULL THEN 'cancelled'
                WHEN stalls + 1 >= $2::integer THEN 'failed'
                ELSE 'released'
           END AS ending
    FROM work_items
    WHERE status = 'running' AND lease_expires_at < $1::timestamptz
    FOR UPDATE SKIP LOCKED
),
ended AS (
    SELECT r.id, r.attempt, r.ending, r.progress,
           CASE WHEN r.ending = 'failed' THEN
               'stalled: lease expired ' || r.stalls || ' times (max stalls ' || $2::integer || ')'
           END AS error,
           CASE WHEN r.ending <> 'cancelled' THEN r.stalls END AS stalls,
           $1::timestamptz AS ended_at,
           CASE WHEN r.ending = 'released' AND r.dedup_key IS NOT NULL THEN
               coalesce({{queued_twin}},
                        nullif(max(r.id) FILTER (WHERE r.ending = 'released')
                                   OVER (PARTITION BY r.kind, r.dedup_key),
                               r.id))
           END AS twin_id,
           NULL::timestamptz AS run_at, NULL::jsonb AS result,
           NULL::integer AS slot
    FROM expired AS r
),
{{end_runs}}
SELECT id, ending, status FROM finished;

-- name: purge_finished
-- $1 cutoff, $2 batch size. Oldest finished first; a bounded batch keeps each
-- transaction short. SKIP LOCKED: two purgers share the work instead of waiting.
WITH doomed AS (
    SELECT id
    FROM work_items
    WHERE status NOT IN ('queued', 'running') AND finished_at < $1
    ORDER BY finished_at, id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM work_items AS w USING doomed WHERE w.id = doomed.id RETURNING 1
)
SELECT count(*) FROM deleted;

-- name: get
SELECT {{item_columns}}
FROM work_items
WHERE id = $1;

-- name: list_items_oldest_first
-- $1 statuses or null for all, $2 kinds or null for all, $3 limit, $4 worker ids
-- or null for all.
SELECT {{item_columns}}
FROM work_items
WHERE ($1::text[] IS NULL OR status = ANY ($1::text[]))
  AND ($2::text[] IS NULL OR kind = ANY ($2::text[]))
  AND ($4::text[] IS NULL OR worker_id = ANY ($4::text[]))
ORDER BY id
LIMIT $3;

-- name: list_items_newest_first
-- $1 statuses or null for all, $2 kinds or null for all, $3 limit, $4 worker ids
-- or null for all.
SELECT {{item_columns}}
FROM work_items
WHERE ($1::text[] IS NULL OR status = ANY ($1::text[]))
  AND ($2::text[] IS NULL OR kind = ANY ($2::text[]))
  AND ($4::text[] IS NULL OR worker_id = ANY ($4::text[]))
ORDER BY id DESC
LIMIT $3;

-- name: count_by_kind_and_status
SELECT kind, status, count(*) AS items
FROM work_items
GROUP BY kind, status;
