-- A webhook delivery keeps the W3C trace context of the change that queued it, so its POST joins that trace.
ALTER TABLE "webhook_deliveries" ADD COLUMN "trace_parent" TEXT;
-- The metrics gauges read the transactions waiting for an operator and the pending deliveries on every scrape: with
-- these partial indexes the read costs what those few rows cost, not the whole table (docs/observability.md).
CREATE INDEX CONCURRENTLY IF NOT EXISTS "transactions_in_error_updated_at_idx" ON "transactions"("updated_at") WHERE "status" = 'error';
CREATE INDEX CONCURRENTLY IF NOT EXISTS "webhook_deliveries_pending_created_at_idx" ON "webhook_deliveries"("created_at") WHERE "status" = 'pending';
