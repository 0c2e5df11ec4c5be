-- The bank credits as camt.054 notified them (the payer account, for refunds by pain.001) and what the bank
-- reported that the service could not take (listed for operators). Both append-only for the service roles, like the ledger.
CREATE TABLE "bank_credits" (
    "bank" TEXT NOT NULL,
    "entry_reference" TEXT NOT NULL,
    "account" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "amount" DECIMAL(24,6) NOT NULL,
    "currency" TEXT NOT NULL,
    "booking_date" DATE NOT NULL,
    "remittance" TEXT,
    "debtor_name" TEXT,
    "debtor_account" JSONB,
    "debtor_agent" JSONB,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bank_credits_pkey" PRIMARY KEY ("bank","entry_reference")
);

CREATE TABLE "bank_unmatched_entries" (
    "id" UUID NOT NULL,
    "bank" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "entry_reference" TEXT NOT NULL,
    "account" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "direction" TEXT NOT NULL,
    "amount" DECIMAL(24,6) NOT NULL,
    "currency" TEXT NOT NULL,
    "booking_date" DATE NOT NULL,
    "remittance" TEXT,
    "counterparty" TEXT,
    "detail" TEXT NOT NULL,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bank_unmatched_entries_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "bank_unmatched_entries_bank_source_entry_reference_key" ON "bank_unmatched_entries"("bank", "source", "entry_reference");
CREATE INDEX "bank_unmatched_entries_recorded_at_idx" ON "bank_unmatched_entries"("recorded_at");

-- The worker reads the bank reports and sends refunds, the API has nothing to do with either.
REVOKE UPDATE, DELETE ON bank_credits, bank_unmatched_entries FROM payments_worker;
REVOKE ALL ON bank_credits, bank_unmatched_entries FROM payments_api;
