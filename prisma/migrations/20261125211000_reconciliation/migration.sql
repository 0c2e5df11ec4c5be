-- AlterTable
ALTER TABLE "ledger_entries" ADD COLUMN "balance_after" DECIMAL(38,18),
ADD COLUMN "partner_id" UUID;

-- CreateTable
CREATE TABLE "reconciliation_reports" (
    "id" UUID NOT NULL,
    "status" TEXT NOT NULL,
    "partner_ids" UUID[],
    "checks" JSONB NOT NULL DEFAULT '{}',
    "discrepancy_count" INTEGER NOT NULL DEFAULT 0,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "reconciliation_reports_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reconciliation_discrepancies" (
    "id" UUID NOT NULL,
    "report_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "subject_type" TEXT NOT NULL,
    "subject_id" TEXT NOT NULL,
    "detail" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reconciliation_discrepancies_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "reconciliation_reports_started_at_idx" ON "reconciliation_reports"("started_at");

-- CreateIndex
CREATE UNIQUE INDEX "reconciliation_discrepancies_report_id_kind_subject_id_key" ON "reconciliation_discrepancies"("report_id", "kind", "subject_id");

-- AddForeignKey
ALTER TABLE "reconciliation_discrepancies" ADD CONSTRAINT "reconciliation_discrepancies_report_id_fkey" FOREIGN KEY ("report_id") REFERENCES "reconciliation_reports"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Hand-added: the partner of each existing entry (a wallet of the partner, or its fee account partner_fees:<id>)
UPDATE "ledger_entries" e SET "partner_id" = w."partner_id"
FROM "ledger_accounts" a JOIN "wallets" w ON w."id" = a."wallet_id"
WHERE a."id" = e."account_id";
UPDATE "ledger_entries" e SET "partner_id" = substr(a."system_code", 14)::uuid
FROM "ledger_accounts" a
WHERE a."id" = e."account_id" AND a."system_code" ~ '^partner_fees:[0-9a-f-]{36}$';

-- Hand-added: the balance after each existing entry of an account that keeps a running balance, in the order the
-- entries were written (created_at, then id: entries written before this column had no finer order)
UPDATE "ledger_entries" e SET "balance_after" = r."running"
FROM (
  SELECT x."id", sum(x."amount") OVER (PARTITION BY x."account_id" ORDER BY x."created_at", x."id") AS "running"
  FROM "ledger_entries" x JOIN "ledger_accounts" a ON a."id" = x."account_id"
  WHERE a."balance" IS NOT NULL
) r
WHERE r."id" = e."id";

-- Hand-added: balance transactions of a partner, newest first (a keyset range scan), only for the rows that have one
CREATE INDEX "ledger_entries_partner_id_created_at_id_idx" ON "ledger_entries"("partner_id", "created_at", "id")
  WHERE "partner_id" IS NOT NULL;
CREATE INDEX "ledger_entries_partner_id_currency_created_at_id_idx"
  ON "ledger_entries"("partner_id", "currency", "created_at", "id") WHERE "partner_id" IS NOT NULL;
-- Hand-added: balance transactions of one wallet account, and a fee account sum, in keyset order
CREATE INDEX "ledger_entries_account_id_created_at_id_idx" ON "ledger_entries"("account_id", "created_at", "id");
