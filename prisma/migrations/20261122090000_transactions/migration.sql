-- CreateTable
CREATE TABLE "transactions" (
    "id" UUID NOT NULL,
    "partner_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "quote_id" UUID,
    "wallet_id" UUID,
    "external_account_id" UUID,
    "sender_name" TEXT,
    "sender_document_type" TEXT,
    "sender_document_number" TEXT,
    "sender_currency" TEXT NOT NULL,
    "sender_payment_rail" TEXT NOT NULL,
    "sender_amount" DECIMAL(24,6) NOT NULL,
    "stablecoin_currency" TEXT,
    "stablecoin_payment_rail" TEXT,
    "stablecoin_amount" DECIMAL(24,6),
    "receiver_currency" TEXT NOT NULL,
    "receiver_payment_rail" TEXT NOT NULL,
    "receiver_amount" DECIMAL(24,6) NOT NULL,
    "rates" DECIMAL(24,8)[],
    "service_fee" DECIMAL(24,6) NOT NULL,
    "partner_fee" DECIMAL(24,6) NOT NULL,
    "network_fee" DECIMAL(24,6) NOT NULL,
    "deposit_reference" TEXT,
    "deposit_instructions" JSONB,
    "deposit_deadline" TIMESTAMPTZ(3),
    "failure_reason" TEXT,
    "sandbox_simulation" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "transaction_deposits" (
    "id" UUID NOT NULL,
    "transaction_id" UUID NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" DECIMAL(24,6) NOT NULL,
    "sender_name" TEXT,
    "reference" TEXT,
    "status" TEXT NOT NULL,
    "return_reason" TEXT,
    "received_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "transaction_deposits_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "transaction_legs" (
    "id" UUID NOT NULL,
    "transaction_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "provider_reference" TEXT,
    "failure_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "transaction_legs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sandbox_rail_operations" (
    "idempotency_key" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" DECIMAL(24,6) NOT NULL,
    "outcome" TEXT NOT NULL,
    "requests" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sandbox_rail_operations_pkey" PRIMARY KEY ("idempotency_key")
);

-- CreateIndex
CREATE UNIQUE INDEX "transactions_quote_id_key" ON "transactions"("quote_id");

-- CreateIndex
CREATE UNIQUE INDEX "transactions_deposit_reference_key" ON "transactions"("deposit_reference");

-- CreateIndex
CREATE INDEX "transactions_partner_id_created_at_id_idx" ON "transactions"("partner_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "transactions_customer_id_created_at_id_idx" ON "transactions"("customer_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "transaction_deposits_transaction_id_received_at_idx" ON "transaction_deposits"("transaction_id", "received_at");

-- CreateIndex
CREATE UNIQUE INDEX "transaction_legs_transaction_id_kind_key" ON "transaction_legs"("transaction_id", "kind");

-- AddForeignKey
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_partner_id_fkey" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_quote_id_fkey" FOREIGN KEY ("quote_id") REFERENCES "quotes"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_external_account_id_fkey" FOREIGN KEY ("external_account_id") REFERENCES "external_accounts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transaction_deposits" ADD CONSTRAINT "transaction_deposits_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "transactions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "transaction_legs" ADD CONSTRAINT "transaction_legs_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "transactions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


-- Statuses and amounts the code relies on, enforced by the database too.
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_status_check" CHECK ("status" IN ('awaiting_deposit', 'processing', 'completed', 'cancelled', 'failed', 'refunded', 'error'));

ALTER TABLE "transactions" ADD CONSTRAINT "transactions_amounts_check" CHECK ("sender_amount" > 0 AND "receiver_amount" > 0 AND ("stablecoin_amount" IS NULL OR "stablecoin_amount" > 0) AND "service_fee" >= 0 AND "partner_fee" >= 0 AND "network_fee" >= 0);

ALTER TABLE "transaction_deposits" ADD CONSTRAINT "transaction_deposits_status_check" CHECK ("status" IN ('accepted', 'returning', 'returned') AND "amount" > 0);

-- One accepted deposit per transaction: a second one can never fund it twice.
CREATE UNIQUE INDEX "transaction_deposits_one_accepted" ON "transaction_deposits"("transaction_id") WHERE "status" = 'accepted';
