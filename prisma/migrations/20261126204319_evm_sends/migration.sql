-- CreateTable
CREATE TABLE "evm_nonces" (
    "chain" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "next_nonce" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "evm_nonces_pkey" PRIMARY KEY ("chain","address")
);

-- CreateTable
CREATE TABLE "evm_sends" (
    "idempotency_key" TEXT NOT NULL,
    "chain" TEXT NOT NULL,
    "from_address" TEXT NOT NULL,
    "nonce" BIGINT NOT NULL,
    "to_address" TEXT NOT NULL,
    "token" TEXT,
    "amount" TEXT NOT NULL,
    "tx_hash" TEXT,
    "raw_transaction" TEXT,
    "max_fee_per_gas" TEXT,
    "replaced_hashes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "status" TEXT NOT NULL DEFAULT 'reserved',
    "block_number" BIGINT,
    "broadcasts" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "evm_sends_pkey" PRIMARY KEY ("idempotency_key")
);

-- CreateIndex
CREATE INDEX "evm_sends_tx_hash_idx" ON "evm_sends"("tx_hash");

-- CreateIndex
CREATE UNIQUE INDEX "evm_sends_chain_from_address_nonce_key" ON "evm_sends"("chain", "from_address", "nonce");

