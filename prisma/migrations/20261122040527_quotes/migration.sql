-- CreateTable
CREATE TABLE "quotes" (
    "id" UUID NOT NULL,
    "partner_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "sender_currency" TEXT NOT NULL,
    "sender_payment_rail" TEXT NOT NULL,
    "stablecoin_currency" TEXT,
    "stablecoin_payment_rail" TEXT,
    "receiver_currency" TEXT NOT NULL,
    "receiver_payment_rail" TEXT NOT NULL,
    "fixed_side" TEXT,
    "sender_amount" DECIMAL(24,6),
    "stablecoin_amount" DECIMAL(24,6),
    "receiver_amount" DECIMAL(24,6),
    "rates" DECIMAL(24,8)[],
    "service_fee_bps" INTEGER NOT NULL,
    "partner_fee_bps" INTEGER,
    "partner_flat_fee" DECIMAL(24,6),
    "network_fee" DECIMAL(24,6) NOT NULL,
    "service_fee_amount" DECIMAL(24,6),
    "partner_fee_amount" DECIMAL(24,6),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_by" TEXT,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "quotes_pkey" PRIMARY KEY ("id")
);

-- AddForeignKey
ALTER TABLE "quotes" ADD CONSTRAINT "quotes_partner_id_fkey" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


-- Invariants the quote workflow relies on (hand-added: Prisma cannot express CHECK constraints).
ALTER TABLE "quotes"
  ADD CONSTRAINT "quotes_type_check" CHECK ("type" IN ('payin', 'payout', 'fiat_to_fiat')),
  ADD CONSTRAINT "quotes_status_check" CHECK ("status" IN ('active', 'expired', 'used')),
  ADD CONSTRAINT "quotes_used_check" CHECK (("status" = 'used') = ("used_by" IS NOT NULL AND "used_at" IS NOT NULL)),
  ADD CONSTRAINT "quotes_lifetime_check" CHECK ("expires_at" = "created_at" + INTERVAL '5 minutes'),
  ADD CONSTRAINT "quotes_fixed_side_check" CHECK (
    ("fixed_side" IS NULL AND "sender_amount" IS NULL AND "receiver_amount" IS NULL)
    OR ("fixed_side" IN ('sender', 'receiver') AND "sender_amount" > 0 AND "receiver_amount" > 0)
  ),
  ADD CONSTRAINT "quotes_stablecoin_check" CHECK (("type" = 'fiat_to_fiat') = ("stablecoin_currency" IS NOT NULL)),
  ADD CONSTRAINT "quotes_rates_check" CHECK (cardinality("rates") = CASE WHEN "type" = 'fiat_to_fiat' THEN 2 ELSE 1 END);
