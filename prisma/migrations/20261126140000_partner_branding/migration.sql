-- The brand of a partner on the hosted verification page (issue 42): display name, accent colour and logo.
-- The bytes of the logo live in the row (bytea, at most 256 KiB): it is small, read with the partner, backed up and
-- deleted with it, and must never leave our domain, while the document store is for the KYC files of customers and their
-- retention. The checks repeat the validation of the API so no other writer can store a colour that breaks out of CSS.
ALTER TABLE "partners"
    ADD COLUMN "brand_display_name" TEXT,
    ADD COLUMN "brand_accent_color" TEXT,
    ADD COLUMN "brand_logo" BYTEA,
    ADD COLUMN "brand_logo_content_type" TEXT,
    ADD COLUMN "brand_updated_at" TIMESTAMPTZ(3),
    ADD CONSTRAINT "partners_brand_accent_color_hex" CHECK ("brand_accent_color" ~ '^#[0-9a-f]{6}$'),
    ADD CONSTRAINT "partners_brand_display_name_length" CHECK (char_length("brand_display_name") BETWEEN 1 AND 80),
    ADD CONSTRAINT "partners_brand_logo_size" CHECK (octet_length("brand_logo") <= 262144),
    ADD CONSTRAINT "partners_brand_logo_type" CHECK (
        ("brand_logo" IS NULL) = ("brand_logo_content_type" IS NULL)
        AND "brand_logo_content_type" IN ('image/png', 'image/jpeg', 'image/webp')
    );
