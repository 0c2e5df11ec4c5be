-- Security review (issue 16). Written by hand from `npm run db:new-migration` to keep existing data.

-- API keys: an optional label and when each key was last used (npm run partner:keys -- list).
ALTER TABLE "api_keys" ADD COLUMN "label" TEXT,
ADD COLUMN "last_used_at" TIMESTAMPTZ(3);

-- Hosted verification links: only the SHA-256 of the token is kept, with a version and an expiry. Links issued
-- before keep opening the page until they expire or are replaced (status change, or the next time the API shows
-- the customer, which issues a link of the new kind).
ALTER TABLE "customers" ADD COLUMN "verification_token_hash" TEXT,
ADD COLUMN "verification_link_version" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "verification_link_expires_at" TIMESTAMPTZ(3);

UPDATE "customers" SET "verification_token_hash" = encode(sha256(convert_to("verification_token", 'UTF8')), 'hex'),
"verification_link_expires_at" = now() + interval '7 days';

ALTER TABLE "customers" ALTER COLUMN "verification_token_hash" SET NOT NULL,
ALTER COLUMN "verification_link_expires_at" SET NOT NULL,
ALTER COLUMN "verification_link_version" DROP DEFAULT;

DROP INDEX "customers_verification_token_key";

ALTER TABLE "customers" DROP COLUMN "verification_token";

CREATE UNIQUE INDEX "customers_verification_token_hash_key" ON "customers"("verification_token_hash");

-- Customer events stored the link itself: drop it (events of new changes store a placeholder naming the version).
UPDATE "events" SET "resource" = jsonb_set("resource", '{verification,verification_link}', 'null'::jsonb)
WHERE "event" = 'customer' AND jsonb_typeof("resource"->'verification'->'verification_link') = 'string';

-- Webhook signing secrets are encrypted at rest. The key lives in the environment, so SQL cannot encrypt the
-- existing ones: they move to legacy_secret and the worker encrypts them at start-up (encryptLegacyWebhookSecrets).
ALTER TABLE "webhook_configs" RENAME COLUMN "secret" TO "legacy_secret";

ALTER TABLE "webhook_configs" ALTER COLUMN "legacy_secret" DROP NOT NULL,
ADD COLUMN "secret_ciphertext" TEXT,
ADD COLUMN "previous_secret_ciphertext" TEXT,
ADD COLUMN "previous_secret_expires_at" TIMESTAMPTZ(3);

ALTER TABLE "webhook_configs" ADD CONSTRAINT "webhook_configs_one_secret" CHECK (("secret_ciphertext" IS NULL) <> ("legacy_secret" IS NULL));

-- Stored responses of configuration creates carry the plaintext secret: drop them (a retry then answers 422
-- webhook_config_already_exists, never a second configuration). New stored responses are encrypted.
DELETE FROM "idempotency_keys" WHERE "method" = 'POST' AND "path" = '/v1/webhook-configs';

-- Rate-limit counters shared by every API process (the PostgreSQL store of rate-limiter-flexible, expire in epoch ms).
CREATE TABLE "rate_limits" (
    "key" VARCHAR(255) NOT NULL,
    "points" INTEGER NOT NULL DEFAULT 0,
    "expire" BIGINT,

    CONSTRAINT "rate_limits_pkey" PRIMARY KEY ("key")
);

CREATE INDEX "rate_limits_expire_idx" ON "rate_limits"("expire");
