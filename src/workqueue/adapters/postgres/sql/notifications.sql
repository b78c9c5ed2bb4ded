-- name: ping
-- Proves the LISTEN connection still reaches the server; a dead peer that closed
-- no socket shows up only when something is sent.
SELECT 1;
