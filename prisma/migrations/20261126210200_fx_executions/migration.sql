-- Each leg's execution at a liquidity provider's firm quote, and what it gained or lost against the partner's locked
-- rate (booked to fx_gain_loss in the same database transaction).
CREATE TABLE "fx_executions" (
    "transaction_id" UUID NOT NULL,
    "step" TEXT NOT NULL,
    "quote_id" TEXT NOT NULL,
    "sold_currency" TEXT NOT NULL,
    "sold_amount" DECIMAL(24,6) NOT NULL,
    "bought_currency" TEXT NOT NULL,
    "at_locked_rate" DECIMAL(24,6) NOT NULL,
    "executed_amount" DECIMAL(24,6) NOT NULL,
    "price" DECIMAL(30,12) NOT NULL,
    "result" DECIMAL(24,6) NOT NULL,
    "executed_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "fx_executions_pkey" PRIMARY KEY ("transaction_id", "step")
);
CREATE INDEX "fx_executions_executed_at_idx" ON "fx_executions"("executed_at");
