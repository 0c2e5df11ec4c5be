-- AlterTable
ALTER TABLE "customer_documents" ADD COLUMN     "uploaded_via" TEXT NOT NULL DEFAULT 'api';

-- Hand-added: Prisma cannot express CHECK constraints. Uploads through the hosted page are capped per customer
-- (HOSTED_UPLOADS_PER_CUSTOMER), so each document records where it came from.
ALTER TABLE "customer_documents" ADD CONSTRAINT "customer_documents_uploaded_via_check" CHECK ("uploaded_via" IN ('api', 'hosted_page'));
