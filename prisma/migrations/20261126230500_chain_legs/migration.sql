-- The settlement legs' coin on chain (issue 36): each leg keeps the transaction that moved its coin and its block,
-- and each EVM send says what it is, so the reconciliation's chain check can count the service's own sends.
ALTER TABLE "transaction_legs" ADD COLUMN "chain_tx_hash" TEXT,
ADD COLUMN "chain_block_number" BIGINT;

ALTER TABLE "evm_sends" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'transfer';

-- Sends made before the column: ether top-ups carry no token, and the sandbox faucet's mints end in :faucet
UPDATE "evm_sends" SET "kind" = 'gas' WHERE "token" IS NULL;
UPDATE "evm_sends" SET "kind" = 'mint' WHERE "idempotency_key" LIKE '%:faucet';
