-- Refresh tokens: what the token_cleanup maintenance kind deletes.

CREATE TABLE refresh_tokens (
    id bigint GENERATED ALWAYS AS IDENTITY,
    user_id bigint NOT NULL,
    token_hash text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    CONSTRAINT refresh_tokens_pkey PRIMARY KEY (id),
    CONSTRAINT refresh_tokens_token_hash_key UNIQUE (token_hash)
);

-- Cleanup deletes tokens that expired, oldest first, in bounded batches.
CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at);

-- Cleanup also deletes revoked tokens; partial, because most tokens are not.
CREATE INDEX refresh_tokens_revoked ON refresh_tokens (id) WHERE revoked_at IS NOT NULL;

COMMENT ON TABLE refresh_tokens IS
    'Refresh tokens issued to users. Written by the authentication service; expired and revoked ones are deleted by token cleanup (the token_cleanup kind).';
COMMENT ON COLUMN refresh_tokens.id IS
    'Identity. Written on insert; read by token cleanup to delete in batches.';
COMMENT ON COLUMN refresh_tokens.user_id IS
    'The user the token was issued to. Written on insert; read by the authentication service.';
COMMENT ON COLUMN refresh_tokens.token_hash IS
    'A hash of the token, never the token itself; unique. Written on insert; read by the authentication service to look a token up.';
COMMENT ON COLUMN refresh_tokens.created_at IS
    'When the token was issued. Written on insert; read by people.';
COMMENT ON COLUMN refresh_tokens.expires_at IS
    'When the token stops being valid. Written on insert; read by the authentication service and by token cleanup.';
COMMENT ON COLUMN refresh_tokens.revoked_at IS
    'When the token was revoked, or null. Written by the authentication service; read by it and by token cleanup.';

COMMENT ON INDEX refresh_tokens_expiry IS
    'Token cleanup: tokens that expired.';
COMMENT ON INDEX refresh_tokens_revoked IS
    'Token cleanup: tokens that were revoked.';
