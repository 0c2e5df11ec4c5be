-- CreateTable
CREATE TABLE "reconciliation_statement_lines" (
    "report_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "provider_reference" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" DECIMAL(24,6) NOT NULL,
    "value_date" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "reconciliation_statement_lines_pkey" PRIMARY KEY ("report_id","idempotency_key")
);

-- CreateTable
CREATE TABLE "sandbox_statement_adjustments" (
    "idempotency_key" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "kind" TEXT,
    "currency" TEXT,
    "amount" DECIMAL(24,6),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sandbox_statement_adjustments_pkey" PRIMARY KEY ("idempotency_key")
);

-- Hand-added: what each adjustment needs
ALTER TABLE "sandbox_statement_adjustments" ADD CONSTRAINT "sandbox_statement_adjustments_action_check" CHECK (
  ("action" = 'drop' AND "amount" IS NULL)
  OR ("action" = 'amount' AND "amount" IS NOT NULL)
  OR ("action" = 'extra' AND "amount" IS NOT NULL AND "kind" IS NOT NULL AND "currency" IS NOT NULL));
