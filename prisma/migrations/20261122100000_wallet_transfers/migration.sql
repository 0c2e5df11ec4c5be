-- Wallet transfers (README "Wallet transfers").
CREATE TABLE "wallet_transfers" (
    "id" UUID NOT NULL,
    "partner_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "from_wallet_id" UUID NOT NULL,
    "to_wallet_id" UUID,
    "to_address" TEXT NOT NULL,
    "chain" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" DECIMAL(24,6) NOT NULL,
    "network_fee" DECIMAL(24,6) NOT NULL,
    "status" TEXT NOT NULL,
    "tx_hash" TEXT,
    "failure_reason" TEXT,
    "sandbox_simulation" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "wallet_transfers_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "wallet_transfers_amount_positive" CHECK ("amount" > 0 AND "network_fee" >= 0)
);

CREATE INDEX "wallet_transfers_partner_id_created_at_id_idx" ON "wallet_transfers"("partner_id", "created_at", "id");

CREATE INDEX "wallet_transfers_from_wallet_id_idx" ON "wallet_transfers"("from_wallet_id");

ALTER TABLE "wallet_transfers" ADD CONSTRAINT "wallet_transfers_partner_id_fkey" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "wallet_transfers" ADD CONSTRAINT "wallet_transfers_from_wallet_id_fkey" FOREIGN KEY ("from_wallet_id") REFERENCES "wallets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

ALTER TABLE "wallet_transfers" ADD CONSTRAINT "wallet_transfers_to_wallet_id_fkey" FOREIGN KEY ("to_wallet_id") REFERENCES "wallets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Cancelled virtual accounts, like rejected ones, no longer hold the customer's one EUR third-party account.
DROP INDEX "virtual_accounts_one_eur_third_party_per_customer";

CREATE UNIQUE INDEX "virtual_accounts_one_eur_third_party_per_customer"
  ON "virtual_accounts" ("customer_id")
  WHERE "sender_currency" = 'EUR' AND "accepts_third_party_payments" AND "status" NOT IN ('rejected', 'cancelled');
