-- Sandbox only: a customer's `simulate` (screening_review: its screening at verification is a potential match).
ALTER TABLE "customers" ADD COLUMN "sandbox_simulation" TEXT;
