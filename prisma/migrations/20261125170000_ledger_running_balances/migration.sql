-- AlterTable
ALTER TABLE "ledger_accounts" ALTER COLUMN "balance" DROP NOT NULL;

-- Hand-added: an account that may go negative keeps no running balance (src/ledger.ts): its balance is the sum of its
-- entries, and no posting locks or updates its row. An account that may not keeps one.
UPDATE "ledger_accounts" SET "balance" = NULL WHERE "allow_negative";
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_running_balance"
  CHECK (("balance" IS NULL) = "allow_negative");

-- Hand-added: wallet-transfer holds per source wallet (wallet_transfer_holds:<walletId>) instead of one account for
-- the service. The hold of every transfer still open moves from the shared account to its source wallet's, as one
-- balanced posting per transfer (reference wallet-transfer:<id>:hold-moved), so its delivery or return finds it there.
INSERT INTO "ledger_accounts" ("id", "system_code", "currency", "balance", "allow_negative", "updated_at")
SELECT gen_random_uuid(), 'wallet_transfer_holds:' || t."from_wallet_id", t."currency", 0, false, now()
FROM "wallet_transfers" t
WHERE t."status" IN ('pending', 'processing')
GROUP BY t."from_wallet_id", t."currency"
ON CONFLICT ("system_code", "currency") DO NOTHING;

WITH "open_holds" AS (
  SELECT gen_random_uuid() AS "posting_id", t."id" AS "transfer_id", t."currency",
    t."amount" + t."network_fee" AS "total", shared."id" AS "shared_id", own."id" AS "own_id"
  FROM "wallet_transfers" t
  JOIN "ledger_transactions" hold ON hold."reference" = 'wallet-transfer:' || t."id" || ':hold'
  JOIN "ledger_accounts" shared ON shared."system_code" = 'wallet_transfer_holds' AND shared."currency" = t."currency"
  JOIN "ledger_accounts" own
    ON own."system_code" = 'wallet_transfer_holds:' || t."from_wallet_id" AND own."currency" = t."currency"
  WHERE t."status" IN ('pending', 'processing')
), "postings" AS (
  INSERT INTO "ledger_transactions" ("id", "reference", "description")
  SELECT "posting_id", 'wallet-transfer:' || "transfer_id" || ':hold-moved',
    'wallet transfer ' || "transfer_id" || ': hold moved to the source wallet''s hold account'
  FROM "open_holds"
)
INSERT INTO "ledger_entries" ("id", "transaction_id", "account_id", "currency", "amount")
SELECT gen_random_uuid(), "posting_id", "shared_id", "currency", -"total" FROM "open_holds"
UNION ALL
SELECT gen_random_uuid(), "posting_id", "own_id", "currency", "total" FROM "open_holds";

-- The running balances of the hold accounts, from their entries.
UPDATE "ledger_accounts" a
SET "balance" = COALESCE((SELECT sum(e."amount") FROM "ledger_entries" e WHERE e."account_id" = a."id"), 0),
  "updated_at" = now()
WHERE starts_with(a."system_code", 'wallet_transfer_holds');
