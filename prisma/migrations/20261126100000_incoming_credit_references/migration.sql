-- Every incoming credit names who reported it and that reporter's own id of it, unique together, so a credit a bank
-- reports twice is recorded once. Deposits recorded before carry their own id as the reference (each was one report).
-- A deposit return that ran out of attempts is `return_failed` until an operator retries it. A leg whose outcome an
-- operator recorded keeps their reason.
ALTER TYPE "transaction_deposit_status" ADD VALUE IF NOT EXISTS 'return_failed';

ALTER TABLE "transaction_deposits" ADD COLUMN "provider" TEXT, ADD COLUMN "provider_reference" TEXT;
UPDATE "transaction_deposits" SET "provider" = 'sandbox', "provider_reference" = 'deposit:' || "id"::text;
ALTER TABLE "transaction_deposits" ALTER COLUMN "provider" SET NOT NULL, ALTER COLUMN "provider_reference" SET NOT NULL;
CREATE UNIQUE INDEX "transaction_deposits_provider_provider_reference_key" ON "transaction_deposits"("provider", "provider_reference");

ALTER TABLE "transaction_legs" ADD COLUMN "operator_reason" TEXT;
