// The database as code outside src/persistence sees it (docs/development.md "Reaching the database"): opaque handles
// (a branded type with no methods) that only persistence functions can use, the one way to open a transaction, and
// the error tests of the persistence layer. Prisma's and Kysely's own objects stay inside persistence
// (./internal/database.ts, which dependency-cruiser forbids elsewhere: `database-types-only-in-persistence`).
import * as internal from './internal/database';

export type {
  Database,
  DatabaseClient,
  DatabaseClientOptions,
  DatabaseTimeouts,
  DatabaseTransaction,
  DecimalText,
} from './internal/database';
export {
  closeDatabaseClient,
  connectionName,
  connectionSettings,
  DEAD_CLIENT_CHECK_MS,
  DEAD_PROCESS_LOCKS_RELEASED_MS,
  defaultDatabaseTimeouts,
  isDatabaseUnavailable,
  isMissingRow,
  isUniqueViolation,
  ownedBy,
  withDatabaseTransaction,
} from './internal/database';

/** The one way to open the database (see ./internal/database.ts): the client, as the opaque handle. */
export const createPrismaClient: (
  databaseUrl: string,
  options: internal.DatabaseClientOptions,
) => internal.DatabaseClient = internal.createPrismaClient;
