-- The live event stream (GET /v1/events/stream) reads a partner's events after a sequence number.
CREATE INDEX "events_partner_id_sequence_idx" ON "events"("partner_id", "sequence");
