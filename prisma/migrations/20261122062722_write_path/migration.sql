-- AlterTable
ALTER TABLE "idempotency_keys" ADD COLUMN     "owner_token" UUID;

-- CreateTable
CREATE TABLE "workflow_starts" (
    "id" UUID NOT NULL,
    "partner_id" UUID,
    "workflow_type" TEXT NOT NULL,
    "workflow_id" TEXT NOT NULL,
    "args" JSONB NOT NULL,
    "search_attributes" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,

    CONSTRAINT "workflow_starts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "workflow_starts_workflow_id_key" ON "workflow_starts"("workflow_id");

-- CreateIndex
CREATE INDEX "workflow_starts_started_at_created_at_idx" ON "workflow_starts"("started_at", "created_at");

