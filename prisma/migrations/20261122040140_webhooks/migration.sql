-- CreateTable
CREATE TABLE "webhook_configs" (
    "id" UUID NOT NULL,
    "partner_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "subscriptions" TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT false,
    "secret" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_configs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" UUID NOT NULL,
    "sequence" BIGSERIAL NOT NULL,
    "partner_id" UUID NOT NULL,
    "event_id" UUID NOT NULL,
    "config_id" UUID NOT NULL,
    "trigger" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "dispatched_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_delivery_attempts" (
    "id" UUID NOT NULL,
    "delivery_id" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "status_code" INTEGER,
    "latency_ms" INTEGER NOT NULL,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_delivery_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "webhook_configs_partner_id_key" ON "webhook_configs"("partner_id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_sequence_key" ON "webhook_deliveries"("sequence");

-- CreateIndex
CREATE INDEX "webhook_deliveries_event_id_created_at_idx" ON "webhook_deliveries"("event_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_delivery_attempts_delivery_id_attempt_key" ON "webhook_delivery_attempts"("delivery_id", "attempt");

-- CreateIndex
CREATE INDEX "events_partner_id_event_type_created_at_id_idx" ON "events"("partner_id", "event_type", "created_at", "id");

-- AddForeignKey
ALTER TABLE "webhook_configs" ADD CONSTRAINT "webhook_configs_partner_id_fkey" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_partner_id_fkey" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "events"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_config_id_fkey" FOREIGN KEY ("config_id") REFERENCES "webhook_configs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_delivery_attempts" ADD CONSTRAINT "webhook_delivery_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


-- Hand-written (Prisma cannot express these).

-- An event is delivered at most once to a configuration by the outbox (redeliveries are extra rows).
CREATE UNIQUE INDEX "webhook_deliveries_event_id_config_id_event_key" ON "webhook_deliveries"("event_id", "config_id") WHERE "trigger" = 'event';

-- The queue of the outbox relay: undispatched deliveries in order.
CREATE INDEX "webhook_deliveries_undispatched_idx" ON "webhook_deliveries"("sequence") WHERE "dispatched_at" IS NULL;

ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_trigger_check" CHECK ("trigger" IN ('event', 'redelivery'));
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_status_check" CHECK ("status" IN ('pending', 'succeeded', 'failed', 'cancelled'));
