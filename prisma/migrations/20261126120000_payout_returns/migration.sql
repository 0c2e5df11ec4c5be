-- A completed payout the receiving bank sends back (issue 34): the transaction status `returned`, and the return
-- itself, recorded once per transaction and once per (provider, bank return reference).
ALTER TYPE "transaction_status" ADD VALUE IF NOT EXISTS 'returned';

CREATE TABLE "transaction_payout_returns" (
    "id" UUID NOT NULL,
    "transaction_id" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "return_reference" TEXT NOT NULL,
    "payout_idempotency_key" TEXT,
    "payout_provider_reference" TEXT,
    "currency" TEXT NOT NULL,
    "amount" DECIMAL(24,6) NOT NULL,
    "reason_code" TEXT NOT NULL,
    "returned_at" TIMESTAMPTZ(3) NOT NULL,
    "resolution" TEXT,
    "resolution_reason" TEXT,
    "resolution_reference" TEXT,
    "resolved_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "transaction_payout_returns_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "transaction_payout_returns_amount_check" CHECK ("amount" > 0),
    CONSTRAINT "transaction_payout_returns_resolution_check" CHECK (
      ("resolution" IS NULL OR "resolution" IN ('repaid', 'refunded')) AND ("resolution" IS NULL) = ("resolved_at" IS NULL))
);

CREATE UNIQUE INDEX "transaction_payout_returns_transaction_id_key" ON "transaction_payout_returns"("transaction_id");
CREATE UNIQUE INDEX "transaction_payout_returns_provider_return_reference_key" ON "transaction_payout_returns"("provider", "return_reference");

ALTER TABLE "transaction_payout_returns" ADD CONSTRAINT "transaction_payout_returns_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "transactions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
