// A partner's transaction by id (404 for others' and malformed ids): what every command on a transaction reads first.
import { ownedOrNotFound } from '../owned';
import type { Database, DatabaseClient } from '../../persistence/database';
import { listTransactionRows, readTransactionRow, type TransactionRow } from '../../persistence/transactions';
import { paginate, type PageRequest } from '../../domain/pages';
import { ownedCustomerFilter } from '../customers';

/** A transaction of this partner, or 404 (also for malformed ids and other partners' transactions). */
export async function findTransactionOrThrow(
  db: DatabaseClient,
  partnerId: string,
  id: string,
): Promise<TransactionRow> {
  return ownedOrNotFound('transaction', readTransactionRow, db, partnerId, id);
}

/** A page of the partner's transactions, of one of its customers when `customerId` is given (404 if not its). */
export async function listTransactions(
  db: DatabaseClient,
  partnerId: string,
  page: PageRequest,
  filter: Omit<Parameters<typeof listTransactionRows>[1], 'partnerId' | 'customerId'> & { customerId?: string },
) {
  const { customerId, ...rest } = filter;
  const byCustomer = await ownedCustomerFilter(db, partnerId, customerId);
  return paginate(page, (keyset) => listTransactionRows(db, { partnerId, ...byCustomer, ...rest }, keyset));
}
