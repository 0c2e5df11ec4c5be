import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from '@prisma/client';

export { Prisma, PrismaClient };

/** The one way to open the database: the Prisma client on the pg driver adapter (no native engine). */
export function createPrismaClient(databaseUrl: string, options: { poolSize?: number } = {}): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: options.poolSize ?? 10 }) });
}

/** A client or an interactive transaction: persistence helpers accept either. */
export type Db = PrismaClient | Prisma.TransactionClient;

/**
 * True when a write failed on a unique index (Prisma P2002), optionally one whose name contains
 * `constraint` (the driver adapter reports it in the error's meta).
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  return (
    error instanceof Prisma.PrismaClientKnownRequestError &&
    error.code === 'P2002' &&
    (constraint === undefined || JSON.stringify(error.meta ?? {}).includes(constraint))
  );
}
