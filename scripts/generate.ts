// `prisma generate` without a database: the schema needs DATABASE_URL to parse, not to connect.
import { generatePrismaClient } from './lib/database';

generatePrismaClient().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
