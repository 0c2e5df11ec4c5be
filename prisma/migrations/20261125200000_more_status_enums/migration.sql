-- The remaining status, type and kind columns become enums (customers, verification steps, webhook deliveries,
-- virtual accounts, transaction deposits and legs), so the database refuses a value the code does not know. Rows convert
-- in place (USING). The CHECK constraints listing the same values go, and the partial indexes and the deposit amount rule
-- that compare these columns with text are dropped before and made again after over the enums.
CREATE TYPE "customer_type" AS ENUM ('individual', 'business');
CREATE TYPE "customer_status" AS ENUM ('pending', 'under_review', 'approved', 'partially_rejected', 'rejected');
CREATE TYPE "verification_step_state" AS ENUM ('pending', 'under_review', 'approved', 'partially_rejected', 'rejected');
CREATE TYPE "webhook_delivery_trigger" AS ENUM ('event', 'redelivery');
CREATE TYPE "webhook_delivery_status" AS ENUM ('pending', 'succeeded', 'failed', 'cancelled');
CREATE TYPE "virtual_account_status" AS ENUM ('under_review', 'approved', 'rejected', 'cancelled');
CREATE TYPE "transaction_deposit_status" AS ENUM ('accepted', 'returning', 'returned');
CREATE TYPE "transaction_leg_kind" AS ENUM ('fiat_to_stablecoin', 'stablecoin_to_fiat', 'sell_back', 'refund');
CREATE TYPE "transaction_leg_status" AS ENUM ('processing', 'completed', 'rejected');

ALTER TABLE "webhook_deliveries" DROP CONSTRAINT IF EXISTS "webhook_deliveries_trigger_check";
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT IF EXISTS "webhook_deliveries_status_check";
ALTER TABLE "transaction_deposits" DROP CONSTRAINT IF EXISTS "transaction_deposits_status_check";
DROP INDEX IF EXISTS "webhook_deliveries_event_id_config_id_event_key";
DROP INDEX IF EXISTS "transaction_deposits_one_accepted";
DROP INDEX IF EXISTS "virtual_accounts_one_eur_third_party_per_customer";

ALTER TABLE "customers"
  ALTER COLUMN "type" TYPE "customer_type" USING "type"::"customer_type",
  ALTER COLUMN "status" TYPE "customer_status" USING "status"::"customer_status";
ALTER TABLE "verification_steps" ALTER COLUMN "state" TYPE "verification_step_state" USING "state"::"verification_step_state";
ALTER TABLE "webhook_deliveries"
  ALTER COLUMN "trigger" TYPE "webhook_delivery_trigger" USING "trigger"::"webhook_delivery_trigger",
  ALTER COLUMN "status" TYPE "webhook_delivery_status" USING "status"::"webhook_delivery_status";
ALTER TABLE "virtual_accounts" ALTER COLUMN "status" TYPE "virtual_account_status" USING "status"::"virtual_account_status";
ALTER TABLE "transaction_deposits"
  ALTER COLUMN "status" TYPE "transaction_deposit_status" USING "status"::"transaction_deposit_status";
ALTER TABLE "transaction_legs"
  ALTER COLUMN "kind" TYPE "transaction_leg_kind" USING "kind"::"transaction_leg_kind",
  ALTER COLUMN "status" TYPE "transaction_leg_status" USING "status"::"transaction_leg_status";

ALTER TABLE "transaction_deposits" ADD CONSTRAINT "transaction_deposits_amount_check" CHECK ("amount" > 0);
CREATE UNIQUE INDEX "webhook_deliveries_event_id_config_id_event_key" ON "webhook_deliveries"("event_id", "config_id") WHERE "trigger" = 'event';
CREATE UNIQUE INDEX "transaction_deposits_one_accepted" ON "transaction_deposits"("transaction_id") WHERE "status" = 'accepted';
CREATE UNIQUE INDEX "virtual_accounts_one_eur_third_party_per_customer"
  ON "virtual_accounts" ("customer_id")
  WHERE "sender_currency" = 'EUR' AND "accepts_third_party_payments" AND "status" NOT IN ('rejected', 'cancelled');
