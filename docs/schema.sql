-- The workqueue schema as PostgreSQL reports it after every migration.
-- Generated from the catalog by workqueue.adapters.postgres.schema; do not edit by hand:
--   python -m workqueue.adapters.postgres.schema --database-url URL --write docs/schema.sql
-- tests/integration/test_schema_doc.py fails when this file is stale.
-- Migrations applied: 0001_work_items, 0002_refresh_tokens, 0003_claim_in_fifo_order, 0004_monitoring_indexes, 0005_cancelled_items, 0006_delays_and_priorities, 0007_retries_snoozes_and_results, 0008_cron_schedules, 0009_kind_pauses, 0010_trace_context, 0011_kind_caps, 0012_activity_by_minute, 0013_items_by_dedup_key, 0014_requeued_as.

CREATE TABLE refresh_tokens (
    id bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
    user_id bigint NOT NULL,
    token_hash text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    CONSTRAINT refresh_tokens_pkey PRIMARY KEY (id),
    CONSTRAINT refresh_tokens_token_hash_key UNIQUE (token_hash)
);
COMMENT ON TABLE refresh_tokens IS 'Refresh tokens issued to users. Written by the authentication service; expired and revoked ones are deleted by token cleanup (the token_cleanup kind).';
COMMENT ON COLUMN refresh_tokens.id IS 'Identity. Written on insert; read by token cleanup to delete in batches.';
COMMENT ON COLUMN refresh_tokens.user_id IS 'The user the token was issued to. Written on insert; read by the authentication service.';
COMMENT ON COLUMN refresh_tokens.token_hash IS 'A hash of the token, never the token itself; unique. Written on insert; read by the authentication service to look a token up.';
COMMENT ON COLUMN refresh_tokens.created_at IS 'When the token was issued. Written on insert; read by people.';
COMMENT ON COLUMN refresh_tokens.expires_at IS 'When the token stops being valid. Written on insert; read by the authentication service and by token cleanup.';
COMMENT ON COLUMN refresh_tokens.revoked_at IS 'When the token was revoked, or null. Written by the authentication service; read by it and by token cleanup.';
CREATE INDEX refresh_tokens_expiry ON public.refresh_tokens USING btree (expires_at);
COMMENT ON INDEX refresh_tokens_expiry IS 'Token cleanup: tokens that expired.';
CREATE INDEX refresh_tokens_revoked ON public.refresh_tokens USING btree (id) WHERE (revoked_at IS NOT NULL);
COMMENT ON INDEX refresh_tokens_revoked IS 'Token cleanup: tokens that were revoked.';

CREATE TABLE work_activity (
    minute timestamp with time zone NOT NULL,
    kind text NOT NULL,
    succeeded bigint NOT NULL DEFAULT 0,
    failed bigint NOT NULL DEFAULT 0,
    retried bigint NOT NULL DEFAULT 0,
    CONSTRAINT work_activity_pkey PRIMARY KEY (minute, kind)
);
COMMENT ON TABLE work_activity IS 'Items ended per minute and kind, as the workers counted them (docs/adr/0040).';

CREATE TABLE work_depth (
    minute timestamp with time zone NOT NULL,
    kind text NOT NULL,
    queued bigint NOT NULL,
    delayed bigint NOT NULL,
    running bigint NOT NULL,
    CONSTRAINT work_depth_pkey PRIMARY KEY (minute, kind)
);
COMMENT ON TABLE work_depth IS 'Queued, delayed and running items per kind, sampled once a minute (docs/adr/0040).';

CREATE TABLE work_items (
    id bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
    kind text NOT NULL,
    payload jsonb NOT NULL,
    status text NOT NULL,
    attempt integer NOT NULL DEFAULT 0,
    stalls integer NOT NULL DEFAULT 0,
    dedup_key text,
    enqueued_at timestamp with time zone NOT NULL,
    started_at timestamp with time zone,
    heartbeat_at timestamp with time zone,
    lease_expires_at timestamp with time zone,
    finished_at timestamp with time zone,
    worker_id text,
    progress jsonb,
    error text,
    cancel_reason text,
    priority smallint NOT NULL DEFAULT 0,
    run_at timestamp with time zone NOT NULL,
    delayed boolean NOT NULL DEFAULT false,
    failures jsonb NOT NULL DEFAULT '[]'::jsonb,
    snoozes integer NOT NULL DEFAULT 0,
    result jsonb,
    trace_context jsonb,
    slot integer,
    requeued_as bigint,
    CONSTRAINT work_items_attempt_check CHECK ((attempt >= 0)),
    CONSTRAINT work_items_failures_array CHECK ((jsonb_typeof(failures) = 'array'::text)),
    CONSTRAINT work_items_pkey PRIMARY KEY (id),
    CONSTRAINT work_items_priority_range CHECK (((priority >= '-100'::integer) AND (priority <= 100))),
    CONSTRAINT work_items_snoozes_counted CHECK ((snoozes >= 0)),
    CONSTRAINT work_items_stalls_check CHECK ((stalls >= 0)),
    CONSTRAINT work_items_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'running'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text])))
) WITH (fillfactor=80, autovacuum_vacuum_scale_factor=0.02, autovacuum_analyze_scale_factor=0.02, autovacuum_vacuum_cost_delay=0);
COMMENT ON TABLE work_items IS 'One row per unit of work, from enqueue to its final state. Inserted only by the WorkQueue (enqueue); updated by the WorkStore (claim, heartbeat, complete, fail, release, lease recovery); deleted only by retention.';
COMMENT ON COLUMN work_items.id IS 'Identity; claim order (FIFO). Written by enqueue; with attempt it is the lease that fences every write after a claim.';
COMMENT ON COLUMN work_items.kind IS 'Which handler runs the item (a kind enum value). Written by enqueue; read by claim, due-ness and the status view.';
COMMENT ON COLUMN work_items.payload IS 'The payload model as JSON, validated before it is written. Written by enqueue; read by the executor, which validates it again.';
COMMENT ON COLUMN work_items.status IS 'queued (written by enqueue, release and lease recovery; left by claim or cancel), running (written by claim; left by complete, fail, cancelled, release or recovery), succeeded, failed or cancelled (final; only retention removes them).';
COMMENT ON COLUMN work_items.attempt IS 'How many times the item was claimed. Incremented by claim; every fenced write (heartbeat, complete, fail, release) matches it.';
COMMENT ON COLUMN work_items.stalls IS 'How many leases of the item expired. Incremented by lease recovery, which fails the item when it reaches the stall limit.';
COMMENT ON COLUMN work_items.dedup_key IS 'Optional key: an enqueue while a queued item of the same kind and key exists is absorbed by it. Written by enqueue; read by enqueue, release and lease recovery.';
COMMENT ON COLUMN work_items.enqueued_at IS 'When the item was enqueued (the store''s clock). Written by enqueue; read by the status view.';
COMMENT ON COLUMN work_items.started_at IS 'When the latest attempt was claimed (the store''s clock). Written by claim; read by the status view.';
COMMENT ON COLUMN work_items.heartbeat_at IS 'When the latest attempt last proved it was alive. Written by claim and heartbeat; read by the status view. Not indexed, so heartbeats stay HOT.';
COMMENT ON COLUMN work_items.lease_expires_at IS 'When the latest attempt''s lease runs out unless renewed. Written by claim and heartbeat; read by lease recovery. Not indexed, so heartbeats stay HOT.';
COMMENT ON COLUMN work_items.finished_at IS 'When the item reached a final status (succeeded, failed or cancelled). Written by complete, fail, cancel, release and lease recovery (when they finish it); read by due-ness and retention.';
COMMENT ON COLUMN work_items.worker_id IS 'The worker that claimed the latest attempt. Written by claim; read by the status view and by people.';
COMMENT ON COLUMN work_items.progress IS 'The latest JSON progress snapshot of the handler; kept across attempts. Written by heartbeat, complete, fail and release; read by the executor on the next attempt and by the status view. Not indexed, so heartbeats stay HOT.';
COMMENT ON COLUMN work_items.error IS 'Why the item failed or was cancelled: the handler''s error, a stall, being superseded by a queued twin, or the cancel''s reason. Written by fail, cancel, release and lease recovery; read by the status view.';
COMMENT ON COLUMN work_items.cancel_reason IS 'A cancel requested while the item was running: its reason; null when none was. Written by cancel; returned by every heartbeat (so the holder learns of it) and read by lease recovery, which ends such an item cancelled. Not indexed, so heartbeats stay HOT.';
COMMENT ON COLUMN work_items.priority IS 'From -100 to 100, given at enqueue (default 0); a claim takes the highest first, then the oldest id.';
COMMENT ON COLUMN work_items.run_at IS 'When the item becomes claimable: given at enqueue as a time or a delay, else the enqueue time.';
COMMENT ON COLUMN work_items.delayed IS 'True while a queued item is kept out of the claim index: written by an enqueue whose run_at is still to come, cleared by the first claim that finds it due.';
COMMENT ON COLUMN work_items.failures IS 'Every failure of the handler, in order: [{attempt, at, error}]; its length is what a retry policy counts.';
COMMENT ON COLUMN work_items.snoozes IS 'How many times the handler asked to run again later (bounded by the kind''s max_snoozes).';
COMMENT ON COLUMN work_items.result IS 'What the handler returned when it succeeded (JSON), or null.';
COMMENT ON COLUMN work_items.trace_context IS 'The trace context of the enqueue (W3C traceparent, tracestate), or null (docs/adr/0038).';
COMMENT ON COLUMN work_items.slot IS 'The slot of work_kind_slots a running item of a capped kind holds; null for others (docs/adr/0035).';
COMMENT ON COLUMN work_items.requeued_as IS 'The item a bulk requeue enqueued for this failed one, or the queued twin that absorbed it; null until then (docs/adr/0041). Written by a bulk requeue in the transaction of its enqueue; read by the next one, which passes over the item, and by the admin view.';
CREATE INDEX work_items_by_dedup_key ON public.work_items USING btree (dedup_key, id DESC) WHERE (dedup_key IS NOT NULL);
COMMENT ON INDEX work_items_by_dedup_key IS 'Admin view: the items of every kind and status with a dedup key, newest first (partial on a key, so items without one cost nothing).';
CREATE INDEX work_items_claim ON public.work_items USING btree (priority DESC, id) WHERE ((status = 'queued'::text) AND (NOT delayed));
COMMENT ON INDEX work_items_claim IS 'Claim: the queued items not waiting for their run_at, in claim order (priority DESC, id), for any set of kinds.';
CREATE INDEX work_items_claim_by_kind ON public.work_items USING btree (kind, priority DESC, id) WHERE ((status = 'queued'::text) AND (delayed IS NOT TRUE));
COMMENT ON INDEX work_items_claim_by_kind IS 'Claims while a served kind is capped: one kind''s queued items not waiting for their run_at, in claim order.';
CREATE INDEX work_items_delayed ON public.work_items USING btree (kind, run_at) WHERE ((status = 'queued'::text) AND delayed);
COMMENT ON INDEX work_items_delayed IS 'Queued items waiting for their run_at, by kind: when the next of some kinds becomes due.';
CREATE INDEX work_items_due ON public.work_items USING btree (run_at) WHERE ((status = 'queued'::text) AND delayed);
COMMENT ON INDEX work_items_due IS 'Queued items waiting for their run_at, by run_at: what a claim finds due, of any kind.';
CREATE INDEX work_items_finished_by_kind ON public.work_items USING btree (kind, status) WHERE (status <> ALL (ARRAY['queued'::text, 'running'::text]));
COMMENT ON INDEX work_items_finished_by_kind IS 'Admin view and metrics: how many finished items each kind has in each final status (index-only).';
CREATE INDEX work_items_newest_finished ON public.work_items USING btree (kind, finished_at) WHERE (status <> ALL (ARRAY['queued'::text, 'running'::text]));
COMMENT ON INDEX work_items_newest_finished IS 'Due-ness: the newest finished item of a kind (any final status).';
CREATE INDEX work_items_queued_by_kind ON public.work_items USING btree (kind, id) WHERE (status = 'queued'::text);
COMMENT ON INDEX work_items_queued_by_kind IS 'Due-ness (is an item of a kind queued), and the admin view: counts, oldest and pages of queued items.';
CREATE UNIQUE INDEX work_items_queued_dedup_key ON public.work_items USING btree (kind, dedup_key) WHERE ((status = 'queued'::text) AND (dedup_key IS NOT NULL));
COMMENT ON INDEX work_items_queued_dedup_key IS 'Dedup: no two queued items share kind and dedup key. Read by enqueue (ON CONFLICT), release and lease recovery.';
CREATE INDEX work_items_retention ON public.work_items USING btree (finished_at) WHERE (status <> ALL (ARRAY['queued'::text, 'running'::text]));
COMMENT ON INDEX work_items_retention IS 'Retention: the oldest finished items (any final status), deleted in bounded batches.';
CREATE INDEX work_items_running ON public.work_items USING btree (kind, id) WHERE (status = 'running'::text);
COMMENT ON INDEX work_items_running IS 'Lease recovery (scan running items, filter the lease) and due-ness (is a kind running).';
CREATE INDEX work_items_stalled ON public.work_items USING btree (kind) WHERE (stalls > 0);
COMMENT ON INDEX work_items_stalled IS 'Metrics: the stalls counted on items seen lately (partial on stalls > 0, so it stays small).';
CREATE INDEX work_items_to_requeue ON public.work_items USING btree (kind, id) WHERE ((status = 'failed'::text) AND (requeued_as IS NULL));
COMMENT ON INDEX work_items_to_requeue IS 'Bulk requeue: a kind''s failed items not requeued yet, in id order (read in batches, counted before).';
CREATE INDEX work_items_unsuccessful ON public.work_items USING btree (finished_at, id) WHERE (status <> ALL (ARRAY['queued'::text, 'running'::text, 'succeeded'::text]));
COMMENT ON INDEX work_items_unsuccessful IS 'Admin view and metrics: the latest items that ended without success, and how many did since a moment.';
CREATE STATISTICS public.work_items_status_and_kind (mcv) ON kind, status FROM work_items;
CREATE OR REPLACE FUNCTION public.work_items_free_slot()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    UPDATE work_kind_slots SET item_id = NULL
    WHERE kind = NEW.kind AND slot = NEW.slot AND item_id = NEW.id;
    RETURN NULL;
END
$function$;
CREATE TRIGGER work_items_free_slot AFTER UPDATE OF status ON public.work_items FOR EACH ROW WHEN (((old.status = 'running'::text) AND (new.status <> 'running'::text) AND (new.slot IS NOT NULL))) EXECUTE FUNCTION work_items_free_slot();
CREATE OR REPLACE FUNCTION public.work_items_run_at_from_enqueued_at()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    NEW.run_at := NEW.enqueued_at;
    RETURN NEW;
END
$function$;
CREATE TRIGGER work_items_run_at_defaults_to_enqueued_at BEFORE INSERT ON public.work_items FOR EACH ROW WHEN ((new.run_at IS NULL)) EXECUTE FUNCTION work_items_run_at_from_enqueued_at();

CREATE TABLE work_kind_controls (
    kind text NOT NULL,
    paused_at timestamp with time zone,
    reason text,
    max_running integer,
    cap_source text,
    cap_set_at timestamp with time zone,
    CONSTRAINT work_kind_controls_cap CHECK ((((max_running IS NULL) AND (cap_source IS NULL) AND (cap_set_at IS NULL)) OR ((max_running >= 1) AND (cap_source = ANY (ARRAY['policy'::text, 'operator'::text])) AND (cap_set_at IS NOT NULL)))),
    CONSTRAINT work_kind_controls_pause CHECK (((paused_at IS NOT NULL) OR (reason IS NULL))),
    CONSTRAINT work_kind_controls_pkey PRIMARY KEY (kind)
);
COMMENT ON TABLE work_kind_controls IS 'What is said of a kind: paused (since when, why) and capped (at most max_running running, set by whom and when); docs/adr/0034, 0035.';

CREATE TABLE work_kind_slots (
    kind text NOT NULL,
    slot integer NOT NULL,
    item_id bigint,
    CONSTRAINT work_kind_slots_pkey PRIMARY KEY (kind, slot)
) WITH (fillfactor=50, autovacuum_vacuum_scale_factor=0, autovacuum_vacuum_threshold=1000);
COMMENT ON TABLE work_kind_slots IS 'A capped kind''s slots: item_id is the running item holding it, null when free (docs/adr/0035).';

CREATE TABLE work_schedules (
    kind text NOT NULL,
    fired_at timestamp with time zone NOT NULL,
    CONSTRAINT work_schedules_pkey PRIMARY KEY (kind)
);
COMMENT ON TABLE work_schedules IS 'The newest fire time each cron-scheduled kind had its turn at (docs/adr/0032).';

CREATE TABLE workqueue_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT workqueue_migrations_pkey PRIMARY KEY (version)
);
COMMENT ON TABLE workqueue_migrations IS 'The migrations applied to this database, one row each. Written by the migrator, under its advisory lock; read by the migrator and by the startup schema check.';
COMMENT ON COLUMN workqueue_migrations.version IS 'The number that orders the migration files (0001_...). Written by the migrator; read to decide what is pending.';
COMMENT ON COLUMN workqueue_migrations.name IS 'The migration file''s name without .sql. Written by the migrator; read by the schema check and by people.';
COMMENT ON COLUMN workqueue_migrations.applied_at IS 'When the migration was applied (database time: bookkeeping, not queue time). Written by the migrator; read by people.';
