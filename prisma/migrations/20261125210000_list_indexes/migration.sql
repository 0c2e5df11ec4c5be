-- Every list and filter of the API is an index range scan in keyset order after its equality filters, and the
-- retention purges find expired rows by date (test/list-plans.test.ts, docs/database.md). CONCURRENTLY lets a large
-- table keep taking writes while its index builds: the migration runner sends each statement on its own, outside a
-- transaction block, as CONCURRENTLY needs.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "transactions_partner_id_status_created_at_id_idx" ON "transactions"("partner_id", "status", "created_at", "id");
CREATE INDEX CONCURRENTLY IF NOT EXISTS "transactions_partner_id_type_created_at_id_idx" ON "transactions"("partner_id", "type", "created_at", "id");
CREATE INDEX CONCURRENTLY IF NOT EXISTS "transactions_customer_id_status_created_at_id_idx" ON "transactions"("customer_id", "status", "created_at", "id");
CREATE INDEX CONCURRENTLY IF NOT EXISTS "transactions_customer_id_type_created_at_id_idx" ON "transactions"("customer_id", "type", "created_at", "id");
CREATE INDEX CONCURRENTLY IF NOT EXISTS "events_partner_id_resource_id_created_at_id_idx" ON "events"("partner_id", "resource_id", "created_at", "id");
CREATE INDEX CONCURRENTLY IF NOT EXISTS "events_created_at_idx" ON "events"("created_at");
DROP INDEX CONCURRENTLY IF EXISTS "events_partner_id_resource_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "customers_partner_id_status_created_at_id_idx" ON "customers"("partner_id", "status", "created_at", "id");
CREATE INDEX CONCURRENTLY IF NOT EXISTS "wallets_customer_id_created_at_id_idx" ON "wallets"("customer_id", "created_at", "id");
DROP INDEX CONCURRENTLY IF EXISTS "wallets_customer_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "virtual_accounts_customer_id_created_at_id_idx" ON "virtual_accounts"("customer_id", "created_at", "id");
DROP INDEX CONCURRENTLY IF EXISTS "virtual_accounts_customer_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "wallet_transfers_partner_id_status_created_at_id_idx" ON "wallet_transfers"("partner_id", "status", "created_at", "id");
CREATE INDEX CONCURRENTLY IF NOT EXISTS "wallet_transfers_from_wallet_id_created_at_id_idx" ON "wallet_transfers"("from_wallet_id", "created_at", "id");
CREATE INDEX CONCURRENTLY IF NOT EXISTS "wallet_transfers_to_wallet_id_created_at_id_idx" ON "wallet_transfers"("to_wallet_id", "created_at", "id");
DROP INDEX CONCURRENTLY IF EXISTS "wallet_transfers_from_wallet_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_deliveries_event_id_created_at_id_idx" ON "webhook_deliveries"("event_id", "created_at", "id");
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_deliveries_created_at_idx" ON "webhook_deliveries"("created_at");
DROP INDEX CONCURRENTLY IF EXISTS "webhook_deliveries_event_id_created_at_idx";
