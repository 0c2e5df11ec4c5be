-- Currency and payment rail columns, and the chain of wallets and their transfers, become enums (the values of
-- src/domain/money.ts and src/domain/rails.ts), so the database refuses a currency or rail the code does not know. Rows
-- convert in place (USING), which rewrites each table and its indexes under an exclusive lock: on large tables run it
-- in a maintenance window. The partial index and the CHECK that compare sender_currency with text are dropped before
-- and made again after over the enum.
CREATE TYPE "currency" AS ENUM ('USD', 'EUR', 'BRL', 'MXN', 'ARS', 'USDC', 'USDT');
CREATE TYPE "payment_rail" AS ENUM ('pix', 'pix_account', 'spei', 'wire', 'ach', 'sepa', 'cvu', 'ethereum', 'solana');
CREATE TYPE "blockchain" AS ENUM ('ethereum', 'solana');

DROP INDEX IF EXISTS "virtual_accounts_one_eur_third_party_per_customer";
ALTER TABLE "virtual_accounts" DROP CONSTRAINT IF EXISTS "virtual_accounts_third_party_flag_eur_only";

ALTER TABLE "external_accounts" ALTER COLUMN "payment_rail" TYPE "payment_rail" USING "payment_rail"::"payment_rail";
ALTER TABLE "quotes"
  ALTER COLUMN "sender_currency" TYPE "currency" USING "sender_currency"::"currency",
  ALTER COLUMN "sender_payment_rail" TYPE "payment_rail" USING "sender_payment_rail"::"payment_rail",
  ALTER COLUMN "stablecoin_currency" TYPE "currency" USING "stablecoin_currency"::"currency",
  ALTER COLUMN "stablecoin_payment_rail" TYPE "payment_rail" USING "stablecoin_payment_rail"::"payment_rail",
  ALTER COLUMN "receiver_currency" TYPE "currency" USING "receiver_currency"::"currency",
  ALTER COLUMN "receiver_payment_rail" TYPE "payment_rail" USING "receiver_payment_rail"::"payment_rail";
ALTER TABLE "transactions"
  ALTER COLUMN "sender_currency" TYPE "currency" USING "sender_currency"::"currency",
  ALTER COLUMN "sender_payment_rail" TYPE "payment_rail" USING "sender_payment_rail"::"payment_rail",
  ALTER COLUMN "stablecoin_currency" TYPE "currency" USING "stablecoin_currency"::"currency",
  ALTER COLUMN "stablecoin_payment_rail" TYPE "payment_rail" USING "stablecoin_payment_rail"::"payment_rail",
  ALTER COLUMN "receiver_currency" TYPE "currency" USING "receiver_currency"::"currency",
  ALTER COLUMN "receiver_payment_rail" TYPE "payment_rail" USING "receiver_payment_rail"::"payment_rail";
ALTER TABLE "virtual_accounts"
  ALTER COLUMN "sender_currency" TYPE "currency" USING "sender_currency"::"currency",
  ALTER COLUMN "receiver_currency" TYPE "currency" USING "receiver_currency"::"currency";
ALTER TABLE "ledger_accounts" ALTER COLUMN "currency" TYPE "currency" USING "currency"::"currency";
ALTER TABLE "ledger_entries" ALTER COLUMN "currency" TYPE "currency" USING "currency"::"currency";
ALTER TABLE "transaction_deposits" ALTER COLUMN "currency" TYPE "currency" USING "currency"::"currency";
ALTER TABLE "transaction_payout_returns" ALTER COLUMN "currency" TYPE "currency" USING "currency"::"currency";
ALTER TABLE "sandbox_rail_operations" ALTER COLUMN "currency" TYPE "currency" USING "currency"::"currency";
ALTER TABLE "wallets" ALTER COLUMN "chain" TYPE "blockchain" USING "chain"::"blockchain";
ALTER TABLE "wallet_transfers"
  ALTER COLUMN "currency" TYPE "currency" USING "currency"::"currency",
  ALTER COLUMN "chain" TYPE "blockchain" USING "chain"::"blockchain";
ALTER TABLE "reconciliation_statement_lines" ALTER COLUMN "currency" TYPE "currency" USING "currency"::"currency";
ALTER TABLE "sandbox_statement_adjustments" ALTER COLUMN "currency" TYPE "currency" USING "currency"::"currency";
ALTER TABLE "chain_deposits" ALTER COLUMN "currency" TYPE "currency" USING "currency"::"currency";
ALTER TABLE "fx_executions"
  ALTER COLUMN "sold_currency" TYPE "currency" USING "sold_currency"::"currency",
  ALTER COLUMN "bought_currency" TYPE "currency" USING "bought_currency"::"currency";

ALTER TABLE "virtual_accounts" ADD CONSTRAINT "virtual_accounts_third_party_flag_eur_only"
  CHECK (("sender_currency" = 'EUR') = ("accepts_third_party_payments" IS NOT NULL));
CREATE UNIQUE INDEX "virtual_accounts_one_eur_third_party_per_customer"
  ON "virtual_accounts" ("customer_id")
  WHERE "sender_currency" = 'EUR' AND "accepts_third_party_payments" AND "status" NOT IN ('rejected', 'cancelled');
