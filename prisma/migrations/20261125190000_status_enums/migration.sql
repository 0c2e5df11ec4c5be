-- Status and type columns of transactions, quotes, wallet transfers and external accounts become enums (their values
-- are those of src/domain), so the database refuses a value the code does not know, and the CHECK constraints listing the same
-- values go. Existing rows convert in place (USING). The quotes constraints that compare these columns with text
-- are dropped before and added again after, as the same rules over the enums.
CREATE TYPE "transaction_type" AS ENUM ('fiat_to_fiat', 'payin', 'payout');
CREATE TYPE "transaction_status" AS ENUM ('awaiting_deposit', 'processing', 'completed', 'cancelled', 'failed', 'refunded', 'error');
CREATE TYPE "quote_type" AS ENUM ('payin', 'payout', 'fiat_to_fiat');
CREATE TYPE "quote_status" AS ENUM ('active', 'expired', 'used');
CREATE TYPE "wallet_transfer_status" AS ENUM ('pending', 'processing', 'completed', 'failed');
CREATE TYPE "external_account_status" AS ENUM ('approved', 'rejected');

ALTER TABLE "transactions" DROP CONSTRAINT IF EXISTS "transactions_status_check";
ALTER TABLE "transactions" DROP CONSTRAINT IF EXISTS "transactions_type_check";
ALTER TABLE "quotes" DROP CONSTRAINT IF EXISTS "quotes_type_check";
ALTER TABLE "quotes" DROP CONSTRAINT IF EXISTS "quotes_status_check";
ALTER TABLE "quotes" DROP CONSTRAINT IF EXISTS "quotes_used_check";
ALTER TABLE "quotes" DROP CONSTRAINT IF EXISTS "quotes_stablecoin_check";
ALTER TABLE "quotes" DROP CONSTRAINT IF EXISTS "quotes_rates_check";
ALTER TABLE "wallet_transfers" DROP CONSTRAINT IF EXISTS "wallet_transfers_status_check";
ALTER TABLE "external_accounts" DROP CONSTRAINT IF EXISTS "external_accounts_status_check";

ALTER TABLE "transactions"
  ALTER COLUMN "type" TYPE "transaction_type" USING "type"::"transaction_type",
  ALTER COLUMN "status" TYPE "transaction_status" USING "status"::"transaction_status";
ALTER TABLE "quotes"
  ALTER COLUMN "type" TYPE "quote_type" USING "type"::"quote_type",
  ALTER COLUMN "status" TYPE "quote_status" USING "status"::"quote_status";
ALTER TABLE "wallet_transfers"
  ALTER COLUMN "status" TYPE "wallet_transfer_status" USING "status"::"wallet_transfer_status";
ALTER TABLE "external_accounts"
  ALTER COLUMN "status" TYPE "external_account_status" USING "status"::"external_account_status";

ALTER TABLE "quotes"
  ADD CONSTRAINT "quotes_used_check" CHECK (("status" = 'used') = ("used_by" IS NOT NULL AND "used_at" IS NOT NULL)),
  ADD CONSTRAINT "quotes_stablecoin_check" CHECK (("type" = 'fiat_to_fiat') = ("stablecoin_currency" IS NOT NULL)),
  ADD CONSTRAINT "quotes_rates_check" CHECK (cardinality("rates") = CASE WHEN "type" = 'fiat_to_fiat' THEN 2 ELSE 1 END);
