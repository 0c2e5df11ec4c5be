// Activities of a payout returned after completion (workflows/payout-return.ts). Exactly once in effect, like the
// settlement's: each is keyed by transaction and step; provider calls carry `<id>:repay:<n>` or
// `<id>:payout_return_refund` (asking twice makes one operation, and the same key asks what became of a call whose
// answer was lost); postings carry `transaction:<id>:repaid` (one repay completes at most: the return is resolved
// with it) or `transaction:<id>:payout_return_refund` and are
// written with the status change and its event in one database transaction, under the transaction's row lock.
import { ApplicationFailure } from '@temporalio/activity';
import { Money, currencyOf } from '../src/domain/money';
import type { Blockchain, FiatRail } from '../src/domain/rails';
import { ledgerReference, settlementEntries } from '../src/domain/ledger';
import type { FailureReason, TransactionStatus } from '../src/domain/transactions';
import { type DatabaseTransaction, withDatabaseTransaction } from '../src/persistence/database';
import { postLedgerEntries } from '../src/persistence/ledger';
import {
  findPayoutReturnOfTransaction,
  findRepayDestination,
  lockPayoutReturnOfTransaction,
  markPayoutReturnResolved,
  type PayoutReturnRow,
} from '../src/persistence/payout-returns';
import { lockTransactionRow, readTransactionRow, type TransactionRow } from '../src/persistence/transactions';
import { observeTransactionStatus } from '../src/observability/observe';
import { changeTransactionStatus } from '../src/services/transactions/status';
import type { RailOutcome } from '../src/providers/fiat-rails';
import { lookUpOperation, type OperationLookup } from '../src/providers/unavailable';
import { payoutReturnRefusals, RESOURCE_NOT_FOUND } from '../src/temporal/failure-types';
import type { ActivityServices } from './services';

const repayKey = (transactionId: string, round: number) => `${transactionId}:repay:${round}`;
const refundKey = (transactionId: string) => `${transactionId}:payout_return_refund`;

function notFound(what: string, id: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`${what} ${id} does not exist`, RESOURCE_NOT_FOUND);
}

/** The status change with its event (src/services/transactions/status.ts) and its metrics, in `tx`, under the lock. */
async function moveTo(
  tx: DatabaseTransaction,
  row: TransactionRow,
  to: TransactionStatus,
  failureReason: FailureReason | null,
): Promise<void> {
  await observeTransactionStatus(tx, await changeTransactionStatus(tx, row, to, { failureReason }));
}

export function createPayoutReturnActivities(services: ActivityServices) {
  const { prisma, fiatRails: rails, rateProvider } = services;

  async function transactionAndReturn(transactionId: string): Promise<{ row: TransactionRow; ret: PayoutReturnRow }> {
    const row = await readTransactionRow(prisma, transactionId);
    if (!row) throw notFound('transaction', transactionId);
    const ret = await findPayoutReturnOfTransaction(prisma, transactionId);
    if (!ret) throw notFound('payout return of transaction', transactionId);
    return { row, ret };
  }

  const returnedOf = (ret: PayoutReturnRow) => Money.of(currencyOf(ret.currency), ret.amount);

  /** Where a repay goes: the account given (checked), or the one the payout was paid to (or its pix key). */
  async function destinationOf(row: TransactionRow, externalAccountId: string | null): Promise<object> {
    if (!externalAccountId) return (row.externalAccount?.details ?? row.receiverDetails ?? {}) as object;
    const account = await findRepayDestination(prisma, externalAccountId);
    const refusal = !account
      ? `external account ${externalAccountId} does not exist`
      : account.customerId !== row.customerId
        ? `external account ${externalAccountId} is not the customer's`
        : account.status !== 'approved'
          ? `external account ${externalAccountId} is ${account.status}`
          : account.paymentRail !== row.receiverPaymentRail
            ? `external account ${externalAccountId} is on ${account.paymentRail}, the payout on ${row.receiverPaymentRail}`
            : null;
    if (refusal) throw ApplicationFailure.nonRetryable(refusal, payoutReturnRefusals.destinationRefused);
    return account!.details as object;
  }

  /** A repay's request to the rail: the returned fiat is the service's already, so nothing is sold (from = amount). */
  async function repayRequest(transactionId: string, round: number, externalAccountId: string | null) {
    const { row, ret } = await transactionAndReturn(transactionId);
    const amount = returnedOf(ret);
    return {
      idempotencyKey: repayKey(transactionId, round),
      simulate: null,
      round,
      from: amount,
      amount,
      rail: row.receiverPaymentRail as FiatRail,
      destination: await destinationOf(row, externalAccountId),
    };
  }

  return {
    /** The update's check of a repay to another account: the customer's, approved, on the payout's rail. */
    async checkRepayDestination(transactionId: string, externalAccountId: string): Promise<void> {
      const row = await readTransactionRow(prisma, transactionId);
      if (!row) throw notFound('transaction', transactionId);
      await destinationOf(row, externalAccountId);
    },

    /** Repay, outside: the returned amount paid out again under `<id>:repay:<round>`. */
    async repayReturnedPayout(
      transactionId: string,
      round: number,
      externalAccountId: string | null,
    ): Promise<RailOutcome> {
      return rails.payOut(await repayRequest(transactionId, round, externalAccountId));
    },

    /** What the rail knows of a repay whose answer was lost (reads only: the workflow decides). */
    async lookUpRepay(
      transactionId: string,
      round: number,
      externalAccountId: string | null,
    ): Promise<OperationLookup<RailOutcome>> {
      const request = await repayRequest(transactionId, round, externalAccountId);
      return (await lookUpOperation(() => rails.lookUp('payout', request))) as OperationLookup<RailOutcome>;
    },

    /**
     * Repay, ledger and status: clearing -> settlement (`transaction:<id>:repaid`), the return resolved,
     * returned -> completed (event payout.completed, or payin.completed for fiat to fiat), in one database
     * transaction; done already (a retry): nothing.
     */
    async completeRepay(transactionId: string, round: number, providerReference: string, reason: string) {
      await withDatabaseTransaction(prisma, async (tx) => {
        const row = await lockTransactionRow(tx, transactionId);
        if (!row) throw notFound('transaction', transactionId);
        const ret = await lockPayoutReturnOfTransaction(tx, transactionId);
        if (!ret) throw notFound('payout return of transaction', transactionId);
        if (ret.resolution !== null) return;
        await postLedgerEntries(tx, {
          reference: ledgerReference(transactionId, 'repaid'),
          description: `Returned payout of transaction ${transactionId} paid out again (${providerReference})`,
          entries: settlementEntries.paidOut(returnedOf(ret)),
        });
        await markPayoutReturnResolved(tx, ret.id, { resolution: 'repaid', reason, reference: providerReference });
        await moveTo(tx, row, 'completed', null);
      });
    },

    /**
     * A refund's price: the returned fiat in the payout's stablecoin at the exchange's rate of the moment (rounded
     * down). Asked once: the workflow keeps the answer, so a retried conversion asks for the same amount.
     */
    async priceReturnRefund(transactionId: string): Promise<{ stablecoin: string }> {
      const { row, ret } = await transactionAndReturn(transactionId);
      const rate = await rateProvider.exchangeRate(currencyOf(ret.currency), currencyOf(row.senderCurrency));
      return {
        stablecoin: returnedOf(ret).convert(rate, currencyOf(row.senderCurrency), 'down').toString(),
      };
    },

    /** Refund, outside: the exchange converts the returned fiat into the stablecoin, delivered to the wallet. */
    async convertReturnedPayout(transactionId: string, stablecoin: string): Promise<{ providerReference: string }> {
      const { row, ret } = await transactionAndReturn(transactionId);
      const outcome = await rails.convertToStablecoin({
        idempotencyKey: refundKey(transactionId),
        simulate: null,
        round: 0,
        from: returnedOf(ret),
        to: Money.parse(currencyOf(row.senderCurrency), stablecoin),
        chain: row.senderPaymentRail as Blockchain,
        walletAddress: row.wallet?.address ?? '',
      });
      return { providerReference: outcome.providerReference };
    },

    /** What the exchange knows of a refund's conversion whose answer was lost. */
    async lookUpReturnRefund(transactionId: string): Promise<OperationLookup<{ providerReference: string }>> {
      const found = await lookUpOperation(() =>
        rails.lookUp('conversion', { idempotencyKey: refundKey(transactionId), simulate: null, round: 0 }),
      );
      return found.state === 'executed'
        ? { state: 'executed', outcome: { providerReference: found.outcome.providerReference } }
        : found;
    },

    /**
     * Refund, ledger and status: clearing -> fx -> the wallet (`transaction:<id>:payout_return_refund`), the return
     * resolved, returned -> refunded (event payout.refunded, failure_reason payout_returned), in one database
     * transaction; done already (a retry): nothing.
     */
    async finishReturnRefund(transactionId: string, providerReference: string, stablecoin: string, reason: string) {
      await withDatabaseTransaction(prisma, async (tx) => {
        const row = await lockTransactionRow(tx, transactionId);
        if (!row) throw notFound('transaction', transactionId);
        const ret = await lockPayoutReturnOfTransaction(tx, transactionId);
        if (!ret) throw notFound('payout return of transaction', transactionId);
        if (ret.resolution !== null) return;
        if (!row.walletId) {
          throw ApplicationFailure.nonRetryable(
            `transaction ${transactionId} has no wallet to refund to`,
            payoutReturnRefusals.refundNotSupported,
          );
        }
        await postLedgerEntries(tx, {
          reference: ledgerReference(transactionId, 'payout_return_refund'),
          description: `Returned payout of transaction ${transactionId} converted back to wallet ${row.walletId} (${providerReference})`,
          entries: settlementEntries.payoutReturnRefunded({
            walletId: row.walletId,
            returned: returnedOf(ret),
            stablecoin: Money.parse(currencyOf(row.senderCurrency), stablecoin),
          }),
        });
        await markPayoutReturnResolved(tx, ret.id, { resolution: 'refunded', reason, reference: providerReference });
        await moveTo(tx, row, 'refunded', 'payout_returned');
      });
    },
  };
}
