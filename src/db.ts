import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from '@prisma/client';

export { Prisma, PrismaClient };

/** The one way to open the database: the Prisma client on the pg driver adapter (no native engine). */
export function createPrismaClient(databaseUrl: string, options: { poolSize?: number } = {}): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: options.poolSize ?? 10 }) });
}

/** A client or an interactive transaction: persistence helpers accept either. */
export type Db = PrismaClient | Prisma.TransactionClient;
