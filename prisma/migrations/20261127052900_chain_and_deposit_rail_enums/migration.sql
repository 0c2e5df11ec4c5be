-- The last text columns holding values of a known list become enums, so the database refuses a value the code does
-- not know: the chain of the EVM sender nonces and sends and of the chain watcher cursor, blocks, deposits and
-- payout claims (blockchain), the rail of a virtual account bank identifier (the new deposit_rail: sepa, ach, wire and
-- swift, where swift is no payment rail), the leg an FX execution settled (transaction_leg_kind) and the currency of
-- a bank credit (currency). Rows convert in place (USING), which rewrites each table and its indexes under an
-- exclusive lock: on large tables run it in a maintenance window. A row naming a chain outside blockchain (only an
-- old test run could have written one) fails the conversion: delete it first.
CREATE TYPE "deposit_rail" AS ENUM ('sepa', 'ach', 'wire', 'swift');

ALTER TABLE "evm_nonces" ALTER COLUMN "chain" TYPE "blockchain" USING "chain"::"blockchain";
ALTER TABLE "evm_sends" ALTER COLUMN "chain" TYPE "blockchain" USING "chain"::"blockchain";
ALTER TABLE "chain_cursors" ALTER COLUMN "chain" TYPE "blockchain" USING "chain"::"blockchain";
ALTER TABLE "chain_blocks" ALTER COLUMN "chain" TYPE "blockchain" USING "chain"::"blockchain";
ALTER TABLE "chain_deposits" ALTER COLUMN "chain" TYPE "blockchain" USING "chain"::"blockchain";
ALTER TABLE "payout_chain_claims" ALTER COLUMN "chain" TYPE "blockchain" USING "chain"::"blockchain";
ALTER TABLE "virtual_account_deposits" ALTER COLUMN "rail" TYPE "deposit_rail" USING "rail"::"deposit_rail";
ALTER TABLE "fx_executions" ALTER COLUMN "step" TYPE "transaction_leg_kind" USING "step"::"transaction_leg_kind";
ALTER TABLE "bank_credits" ALTER COLUMN "currency" TYPE "currency" USING "currency"::"currency";
