-- The chain watcher (issue 36, part B): its cursor and the block hashes it saw per chain, the ERC-20 transfers to the
-- service's addresses it read (credited once deep enough, once per chain, transaction and log), and payout hashes
-- accepted before they were deep enough (settled by the watcher or refused after their bound).
-- CreateEnum
CREATE TYPE "ChainDepositStatus" AS ENUM ('seen', 'credited');

-- CreateEnum
CREATE TYPE "PayoutChainClaimStatus" AS ENUM ('pending', 'settled', 'refused');

-- CreateTable
CREATE TABLE "chain_cursors" (
    "chain" TEXT NOT NULL,
    "next_block" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "chain_cursors_pkey" PRIMARY KEY ("chain")
);

-- CreateTable
CREATE TABLE "chain_blocks" (
    "chain" TEXT NOT NULL,
    "number" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,

    CONSTRAINT "chain_blocks_pkey" PRIMARY KEY ("chain","number")
);

-- CreateTable
CREATE TABLE "chain_deposits" (
    "id" UUID NOT NULL,
    "chain" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "block_number" BIGINT NOT NULL,
    "block_hash" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "token_address" TEXT NOT NULL,
    "from_address" TEXT NOT NULL,
    "to_address" TEXT NOT NULL,
    "amount" DECIMAL(24,6) NOT NULL,
    "status" "ChainDepositStatus" NOT NULL,
    "credited_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chain_deposits_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payout_chain_claims" (
    "transaction_id" UUID NOT NULL,
    "chain" TEXT NOT NULL,
    "tx_hash" TEXT NOT NULL,
    "status" "PayoutChainClaimStatus" NOT NULL,
    "refusal" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "payout_chain_claims_pkey" PRIMARY KEY ("transaction_id")
);

-- CreateIndex
CREATE INDEX "chain_deposits_chain_status_block_number_idx" ON "chain_deposits"("chain", "status", "block_number");

-- CreateIndex
CREATE UNIQUE INDEX "chain_deposits_chain_tx_hash_log_index_key" ON "chain_deposits"("chain", "tx_hash", "log_index");

-- CreateIndex
CREATE INDEX "payout_chain_claims_status_created_at_idx" ON "payout_chain_claims"("status", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "payout_chain_claims_chain_tx_hash_key" ON "payout_chain_claims"("chain", "tx_hash");

