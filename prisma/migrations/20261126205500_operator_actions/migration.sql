-- The audit trail of operators' decisions (docs/operations.md "Audit trail"): one row per update an operator sent
-- to a workflow (who, when, on what, the reason), written by the workflow's activity once the update is accepted.
-- Append-only for the services (the owner alone may change it), like the ledger.
CREATE TABLE "operator_actions" (
    "id" UUID NOT NULL,
    "workflow_id" TEXT NOT NULL,
    "update_id" TEXT NOT NULL,
    "resource_type" TEXT NOT NULL,
    "resource_id" UUID NOT NULL,
    "action" TEXT NOT NULL,
    "operator" TEXT NOT NULL,
    "reason" TEXT,
    "details" JSONB NOT NULL DEFAULT '{}',
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "operator_actions_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "operator_actions_workflow_id_update_id_key" ON "operator_actions"("workflow_id", "update_id");
CREATE INDEX "operator_actions_resource_id_recorded_at_idx" ON "operator_actions"("resource_id", "recorded_at");
CREATE INDEX "operator_actions_operator_recorded_at_idx" ON "operator_actions"("operator", "recorded_at");

REVOKE UPDATE, DELETE ON operator_actions FROM payments_api, payments_worker;
