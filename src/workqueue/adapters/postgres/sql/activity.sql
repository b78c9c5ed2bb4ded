-- The ActivityLog's statements (adapters/postgres/activity.py, docs/adr/0040):
-- the fleet's activity by minute, which the admin view's charts draw.

-- name: add_counts
-- $1 minutes, $2 kinds, $3 succeeded, $4 failed, $5 retried: counts to add, one
-- per minute and kind (summed here should one come twice: an upsert may touch a
-- row once a statement). Taken in the order of the key, so two workers adding to
-- the same rows lock them in one order and never deadlock.
INSERT INTO work_activity AS a (minute, kind, succeeded, failed, retried)
SELECT minute, kind, sum(succeeded), sum(failed), sum(retried)
FROM unnest($1::timestamptz[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[])
    AS c (minute, kind, succeeded, failed, retried)
GROUP BY minute, kind
ORDER BY minute, kind
ON CONFLICT (minute, kind) DO UPDATE
SET succeeded = a.succeeded + EXCLUDED.succeeded,
    failed = a.failed + EXCLUDED.failed,
    retried = a.retried + EXCLUDED.retried;

-- name: sample_depth
-- $1 the minute, $2 the oldest minute to keep. Unless the minute has a sample
-- (its row of kind '', the totals), counts the queued items of each kind, those
-- of them waiting for their run_at (delayed) and the running ones, each an
-- index-only count of its partial index (work_items_queued_by_kind,
-- work_items_delayed, work_items_running), and keeps them with the totals; the
-- NOT EXISTS is a one-time filter, so a minute already sampled counts nothing.
-- Two workers sampling one minute at once: the second's rows conflict with the
-- first's and are dropped, and only the first, whose totals row went in,
-- forgets the minutes before $2. With no item at all, the totals are zeros (the
-- empty grouping set of the ROLLUP still makes its row). One row: whether this statement took the sample.
WITH sampled AS (
    INSERT INTO work_depth (minute, kind, queued, delayed, running)
    SELECT $1::timestamptz, coalesce(kind, ''), coalesce(sum(queued) - sum(delayed), 0),
           coalesce(sum(delayed), 0), coalesce(sum(running), 0)
    FROM (
        SELECT kind, count(*) AS queued, 0 AS delayed, 0 AS running
        FROM work_items
        WHERE status = 'queued'
        GROUP BY kind
        UNION ALL
        SELECT kind, 0, count(*), 0
        FROM work_items
        WHERE status = 'queued' AND delayed
        GROUP BY kind
        UNION ALL
        SELECT kind, 0, 0, count(*)
        FROM work_items
        WHERE status = 'running'
        GROUP BY kind
    ) AS counts
    WHERE NOT EXISTS (SELECT FROM work_depth WHERE minute = $1::timestamptz)
    GROUP BY ROLLUP (kind)
    ON CONFLICT (minute, kind) DO NOTHING
    RETURNING kind
),
took AS (
    SELECT EXISTS (SELECT FROM sampled WHERE kind = '') AS took
),
forgot_activity AS (
    DELETE FROM work_activity
    WHERE minute < $2::timestamptz AND (SELECT took FROM took)
),
forgot_depth AS (
    DELETE FROM work_depth
    WHERE minute < $2::timestamptz AND (SELECT took FROM took)
)
SELECT took FROM took;

-- name: activity
-- $1 since, $2 a kind, or NULL for every kind summed. Each minute from $1 on with
-- items ended or a depth sample, oldest first: the ended items of the kind (or
-- all), and the minute's sample, a kind's being 0 where it had no row in a minute
-- that was sampled. Both read their primary key from $1 on.
WITH ended AS (
    SELECT minute, sum(succeeded)::bigint AS succeeded, sum(failed)::bigint AS failed,
           sum(retried)::bigint AS retried
    FROM work_activity
    WHERE minute >= $1::timestamptz AND ($2::text IS NULL OR kind = $2::text)
    GROUP BY minute
),
depth AS (
    SELECT total.minute,
           CASE WHEN $2::text IS NULL THEN total.queued ELSE coalesce(own.queued, 0) END
               AS queued,
           CASE WHEN $2::text IS NULL THEN total.delayed ELSE coalesce(own.delayed, 0) END
               AS delayed,
           CASE WHEN $2::text IS NULL THEN total.running ELSE coalesce(own.running, 0) END
               AS running
    FROM work_depth AS total
    LEFT JOIN work_depth AS own
        ON own.minute = total.minute AND own.kind = $2::text AND own.minute >= $1::timestamptz
    WHERE total.minute >= $1::timestamptz AND total.kind = ''
)
SELECT minute,
       coalesce(ended.succeeded, 0) AS succeeded,
       coalesce(ended.failed, 0) AS failed,
       coalesce(ended.retried, 0) AS retried,
       depth.queued,
       depth.delayed,
       depth.running
FROM ended
FULL JOIN depth USING (minute)
ORDER BY minute;
