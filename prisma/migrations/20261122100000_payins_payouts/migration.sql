-- Pay-ins and payouts share the transactions table: a payout to a pix key given in the request keeps
-- the rail object of the key on the transaction, and a pay-in from a virtual-account deposit names its account.
ALTER TABLE "transactions" ADD COLUMN "receiver_details" JSONB;
ALTER TABLE "transactions" ADD COLUMN "virtual_account_id" UUID;

-- CreateIndex
CREATE INDEX "transactions_virtual_account_id_idx" ON "transactions"("virtual_account_id");

-- AddForeignKey
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_virtual_account_id_fkey" FOREIGN KEY ("virtual_account_id") REFERENCES "virtual_accounts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "transactions" ADD CONSTRAINT "transactions_type_check" CHECK ("type" IN ('fiat_to_fiat', 'payin', 'payout'));
