-- name: delete_expired_and_revoked
-- $1 now, $2 batch size. Expired means expires_at < now (at the instant it expires
-- a token is still kept); revoked means revoked_at is set, whenever that was.
-- Lowest id first; SKIP LOCKED so two cleanups share the work instead of waiting.
WITH doomed AS (
    SELECT id
    FROM refresh_tokens
    WHERE revoked_at IS NOT NULL OR expires_at < $1
    ORDER BY id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM refresh_tokens AS t USING doomed WHERE t.id = doomed.id RETURNING 1
)
SELECT count(*) FROM deleted;
