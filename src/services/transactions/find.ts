// A partner's transaction by id (404 for others' and malformed ids): what every command on a transaction reads first.
import { ownedOrNotFound } from '../owned';
import type { Database, DatabaseClient } from '../../persistence/database';
import { readTransactionRow } from '../../persistence/transactions';
import type { TransactionRow } from '../../persistence/transactions';

/** A transaction of this partner, or 404 (also for malformed ids and other partners' transactions). */
export async function findTransactionOrThrow(
  db: DatabaseClient,
  partnerId: string,
  id: string,
): Promise<TransactionRow> {
  return ownedOrNotFound('transaction', readTransactionRow, db, partnerId, id);
}
