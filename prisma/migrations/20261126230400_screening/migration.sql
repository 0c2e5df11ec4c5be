-- Sanctions screening (docs/screening.md): each load of a list is a version row (a loaded one carries its parsed
-- entries, which every process reads), each screening a row with its report, and external accounts can be under review.
ALTER TYPE "external_account_status" ADD VALUE 'under_review';

CREATE TABLE "screening_list_versions" (
    "id" UUID NOT NULL,
    "source" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "checksum" TEXT NOT NULL,
    "entry_count" INTEGER NOT NULL,
    "published_at" TEXT,
    "status" TEXT NOT NULL,
    "detail" TEXT,
    "entries" JSONB,
    "loaded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "screening_list_versions_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "screening_list_versions_source_status_loaded_at_idx" ON "screening_list_versions"("source", "status", "loaded_at");

CREATE TABLE "screenings" (
    "id" UUID NOT NULL,
    "partner_id" UUID NOT NULL,
    "subject_type" TEXT NOT NULL,
    "subject_id" UUID NOT NULL,
    "resource_id" UUID NOT NULL,
    "trigger" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "list_versions" TEXT[],
    "matches" JSONB NOT NULL DEFAULT '[]',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "screenings_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "screenings_resource_id_created_at_idx" ON "screenings"("resource_id", "created_at");
CREATE INDEX "screenings_subject_id_created_at_idx" ON "screenings"("subject_id", "created_at");
