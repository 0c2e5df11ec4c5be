-- Least privilege (docs/operations.md "Database roles"): the migrations run as the owner of the schema, the API
-- connects as payments_api and the worker as payments_worker, roles created before the first migration
-- (scripts/lib/database.ts ensureServiceRoles, or by an administrator in production). They
-- read and write rows, nothing more: no DDL, no TRUNCATE, no triggers, and the books stay append-only.
GRANT USAGE ON SCHEMA public TO payments_api, payments_worker;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO payments_api, payments_worker;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO payments_api, payments_worker;
-- Tables of later migrations (run by the same owner) get the same rows-only grants.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO payments_api, payments_worker;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO payments_api, payments_worker;

-- The migrations' own table: readiness reads it (src/persistence/health.ts), nobody but the owner writes it.
REVOKE INSERT, UPDATE, DELETE ON _prisma_migrations FROM payments_api, payments_worker;

-- Ledger entries are never rewritten: a correction is a new, reversing entry.
REVOKE UPDATE, DELETE ON ledger_entries FROM payments_api, payments_worker;

-- Events are never rewritten either. Only the worker's retention purge (maintenance) removes them, and only once
-- older than a day (EVENT_RETENTION_DAYS is at least 1). The purge locks the rows it removes (FOR UPDATE), which
-- PostgreSQL allows only with an UPDATE privilege: the worker keeps one on a single column, and the policy below
-- refuses every row an UPDATE would write (WITH CHECK false) while letting it lock old rows.
REVOKE UPDATE, DELETE ON events FROM payments_api, payments_worker;
GRANT DELETE ON events TO payments_worker;
GRANT UPDATE (id) ON events TO payments_worker;
ALTER TABLE events ENABLE ROW LEVEL SECURITY;
CREATE POLICY events_read ON events FOR SELECT USING (true);
CREATE POLICY events_append ON events FOR INSERT WITH CHECK (true);
CREATE POLICY events_purge ON events FOR DELETE TO payments_worker USING (created_at < now() - interval '1 day');
CREATE POLICY events_lock_for_purge ON events FOR UPDATE TO payments_worker
  USING (created_at < now() - interval '1 day') WITH CHECK (false);
