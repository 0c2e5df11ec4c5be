// A partner's balance transactions and fee balance: reads of the ledger scoped to the partner.
import type { Database, DatabaseClient } from '../persistence/database';
import { listBalanceTransactions, partnerFeeBalances } from '../persistence/balance-transactions';
import { paginate } from '../domain/pages';
import type { z } from 'zod';
import { type BalanceSourceType, referencePrefixOf } from '../domain/reconciliation';
import { Money } from '../domain/money';
import { toBalanceTransaction } from '../presenters/balance-transactions';
import type { listBalanceTransactionsQuerySchema } from '../schemas/balance-transactions';
import { findWalletOrThrow } from './wallets';

export async function balanceTransactionsPage(
  db: DatabaseClient,
  partnerId: string,
  query: z.output<typeof listBalanceTransactionsQuerySchema>,
) {
  const walletId =
    query.wallet_id === undefined ? undefined : (await findWalletOrThrow(db, partnerId, query.wallet_id)).id;
  const { rows, cursor } = await paginate(query, (keyset) =>
    listBalanceTransactions(
      db,
      {
        partnerId,
        walletId,
        currency: query.currency,
        referencePrefix: query.source_type && referencePrefixOf[query.source_type as BalanceSourceType],
      },
      keyset,
    ),
  );
  return { items: rows.map(toBalanceTransaction), cursor };
}

export async function partnerBalance(db: DatabaseClient, partnerId: string) {
  const fees = await partnerFeeBalances(db, partnerId);
  return {
    partner_fees: fees.map(({ currency, amount }) => ({
      currency,
      amount: Money.of(currency, amount.toString()).toString(),
    })),
  };
}
