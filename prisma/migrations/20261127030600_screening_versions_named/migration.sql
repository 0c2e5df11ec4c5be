-- Pruning old list versions keeps those a screening's report names: found through this index (screenings grow with
-- every payout, customer and account screened).
CREATE INDEX "screenings_list_versions_idx" ON "screenings" USING GIN ("list_versions");
