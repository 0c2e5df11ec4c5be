-- The live event stream reads events in the order their transactions became visible, not the order their sequence
-- numbers were taken: a transaction that took sequence 9 may commit after the one that took 10. Each event keeps
-- the id of the transaction that wrote it, and the stream reads only transactions older than every one still running
-- (pg_snapshot_xmin), in (transaction_xid, sequence) order, so an event can neither be skipped nor sent twice.
-- The constant default fills the existing rows without rewriting the table, and new rows take their own transaction id.
ALTER TABLE "events" ADD COLUMN "transaction_xid" xid8 NOT NULL DEFAULT '0';
ALTER TABLE "events" ALTER COLUMN "transaction_xid" SET DEFAULT pg_current_xact_id();
DROP INDEX "events_partner_id_sequence_idx";
CREATE INDEX "events_partner_id_transaction_xid_sequence_idx" ON "events"("partner_id", "transaction_xid", "sequence");
