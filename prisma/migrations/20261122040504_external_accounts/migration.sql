-- CreateTable
CREATE TABLE "external_accounts" (
    "id" UUID NOT NULL,
    "partner_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "account_name" TEXT NOT NULL,
    "payment_rail" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "is_third_party" BOOLEAN NOT NULL,
    "details" JSONB NOT NULL,
    "account_identity" TEXT NOT NULL,
    "screening_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "external_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "external_accounts_partner_id_created_at_id_idx" ON "external_accounts"("partner_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "external_accounts_customer_id_created_at_id_idx" ON "external_accounts"("customer_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "external_accounts_customer_id_account_identity_key" ON "external_accounts"("customer_id", "account_identity");

-- AddForeignKey
ALTER TABLE "external_accounts" ADD CONSTRAINT "external_accounts_partner_id_fkey" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "external_accounts" ADD CONSTRAINT "external_accounts_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

