-- CreateTable
CREATE TABLE "wallets" (
    "id" UUID NOT NULL,
    "partner_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "chain" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "key_reference" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "wallets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_accounts" (
    "id" UUID NOT NULL,
    "wallet_id" UUID,
    "system_code" TEXT,
    "currency" TEXT NOT NULL,
    "balance" DECIMAL(38,18) NOT NULL DEFAULT 0,
    "allow_negative" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ledger_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_transactions" (
    "id" UUID NOT NULL,
    "reference" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_transactions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_entries" (
    "id" UUID NOT NULL,
    "transaction_id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" DECIMAL(38,18) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "virtual_accounts" (
    "id" UUID NOT NULL,
    "partner_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "wallet_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "sender_currency" TEXT NOT NULL,
    "receiver_currency" TEXT NOT NULL,
    "accepts_third_party_payments" BOOLEAN,
    "deposit_addresses" JSONB NOT NULL DEFAULT '{}',
    "review_reminders" INTEGER NOT NULL DEFAULT 0,
    "decided_at" TIMESTAMPTZ(3),
    "rejection_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "virtual_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "virtual_account_deposits" (
    "id" UUID NOT NULL,
    "virtual_account_id" UUID NOT NULL,
    "rail" TEXT NOT NULL,
    "identifier" TEXT NOT NULL,
    "bank_code" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "virtual_account_deposits_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "wallets_partner_id_created_at_id_idx" ON "wallets"("partner_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "wallets_customer_id_idx" ON "wallets"("customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "wallets_chain_address_key" ON "wallets"("chain", "address");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_accounts_wallet_id_currency_key" ON "ledger_accounts"("wallet_id", "currency");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_accounts_system_code_currency_key" ON "ledger_accounts"("system_code", "currency");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_transactions_reference_key" ON "ledger_transactions"("reference");

-- CreateIndex
CREATE INDEX "ledger_entries_account_id_created_at_idx" ON "ledger_entries"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "ledger_entries_transaction_id_idx" ON "ledger_entries"("transaction_id");

-- CreateIndex
CREATE INDEX "virtual_accounts_partner_id_created_at_id_idx" ON "virtual_accounts"("partner_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "virtual_accounts_customer_id_idx" ON "virtual_accounts"("customer_id");

-- CreateIndex
CREATE INDEX "virtual_account_deposits_virtual_account_id_idx" ON "virtual_account_deposits"("virtual_account_id");

-- CreateIndex
CREATE UNIQUE INDEX "virtual_account_deposits_rail_identifier_key" ON "virtual_account_deposits"("rail", "identifier");

-- AddForeignKey
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "ledger_transactions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "ledger_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "virtual_accounts" ADD CONSTRAINT "virtual_accounts_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "virtual_accounts" ADD CONSTRAINT "virtual_accounts_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "virtual_account_deposits" ADD CONSTRAINT "virtual_account_deposits_virtual_account_id_fkey" FOREIGN KEY ("virtual_account_id") REFERENCES "virtual_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


-- ---- Hand-written: invariants Prisma cannot express (keep when regenerating this migration) ----

-- One EUR virtual account accepting third-party payments per customer (SPEC 8), also under
-- concurrent requests. Rejected accounts do not count: the customer may ask again.
CREATE UNIQUE INDEX "virtual_accounts_one_eur_third_party_per_customer"
  ON "virtual_accounts" ("customer_id")
  WHERE "sender_currency" = 'EUR' AND "accepts_third_party_payments" AND "status" <> 'rejected';

-- The flag exists for EUR accounts only.
ALTER TABLE "virtual_accounts" ADD CONSTRAINT "virtual_accounts_third_party_flag_eur_only"
  CHECK (("sender_currency" = 'EUR') = ("accepts_third_party_payments" IS NOT NULL));

-- A ledger account belongs to a wallet or is a named system account, never both or neither.
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_wallet_xor_system"
  CHECK (("wallet_id" IS NULL) <> ("system_code" IS NULL));

-- Last line of defence against overdrafts: wallet balances never go below zero.
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_no_overdraft"
  CHECK ("allow_negative" OR "balance" >= 0);

-- An entry moves money: zero-amount entries are refused.
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_amount_not_zero" CHECK ("amount" <> 0);
