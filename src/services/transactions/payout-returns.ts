// A completed payout the receiving bank returned (a SEPA or ACH return, days later). A production rail integration
// calls receivePayoutReturn with what the bank reported; the sandbox endpoint does the same through
// receiveSandboxPayoutReturn. Recorded once per (provider, bank return reference): a repeat answers the first.
// The recording is one database transaction (writeThenStart): the return row, the posting that brings the money back
// into clearing, completed -> returned with its event, and the start of the workflow that waits for an operator.
import { amountTextProblem, Money } from '../../domain/money';
import { ledgerReference, settlementEntries } from '../../domain/ledger';
import { amountsOf, type PayoutReturnReason, payoutReturnRefusal } from '../../domain/transactions';
import { isUuid } from '../../domain/uuid';
import { DomainError } from '../../domain/errors';
import { postLedgerEntries } from '../../persistence/ledger';
import {
  findPayoutReturnByReference,
  findTransactionIdByPayoutReference,
  insertPayoutReturn,
  payoutProviderReferenceOf,
  type PayoutReturnRow,
} from '../../persistence/payout-returns';
import { lockTransactionRow, readTransactionRow, type TransactionRow } from '../../persistence/transactions';
import { toPayoutReturn } from '../../presenters/payout-returns';
import { type PayoutReturnReport, recordSandboxPayoutReturn } from '../../providers/fiat-rails';
import type { PayoutReturnResource, SandboxPayoutReturnRequest } from '../../schemas/payout-returns';
import type { ApiServices } from '../../app-services';
import { changeTransactionStatus } from './status';
import { workflowIds } from '../../temporal/workflow-ids';
import { workflowStart, writeThenStart, type WriteServices } from '../../temporal/write-then-start';
import { payoutReturnWorkflow } from '../../../workflows/payout-return';
import { findTransactionOrThrow } from './find';

const PAYOUT_KEY_SUFFIX = ':stablecoin_to_fiat';

/** The return already recorded under this report's reference: the same return again (a replay), or a conflict. */
function replayOf(existing: PayoutReturnRow, transactionId: string, report: PayoutReturnReport): PayoutReturnResource {
  const same =
    existing.transactionId === transactionId &&
    existing.currency === report.amount.currency &&
    Money.of(existing.currency, existing.amount).equals(report.amount);
  if (!same) {
    throw new DomainError(
      'payout_return_reference_conflict',
      `Return reference ${report.returnReference} was recorded already, for ${existing.amount} ${existing.currency} of transaction ${existing.transactionId}.`,
    );
  }
  return toPayoutReturn(existing);
}

/** The refusal of the rule (domain/transactions.ts payoutReturnRefusal) as the API's error. */
function refuseUnlessReturnable(row: TransactionRow, amount: Money): void {
  const refusal = payoutReturnRefusal(row, amountsOf(row).receiver, amount);
  if (refusal) throw new DomainError(refusal.code, refusal.message);
}

/**
 * Records the return of `row`'s payout: checks (completed, has a payout, not more than paid out), then in one
 * database transaction under the transaction's row lock the return, its posting `transaction:<id>:payout_returned`
 * (settlement -> fiat_clearing), completed -> returned with its event (payout.returned, payin.returned for fiat to
 * fiat) and the start of payout-return-<id>. A report already recorded answers the first (replay).
 */
export async function recordPayoutReturn(
  services: WriteServices,
  row: TransactionRow,
  report: PayoutReturnReport,
  beforeWrite: () => Promise<void> = async () => undefined,
): Promise<PayoutReturnResource> {
  const existing = await findPayoutReturnByReference(services.prisma, report.provider, report.returnReference);
  if (existing) return replayOf(existing, row.id, report);
  refuseUnlessReturnable(row, report.amount);
  await beforeWrite();
  return writeThenStart(services, async (tx, start) => {
    const locked = await lockTransactionRow(tx, row.id);
    if (!locked) throw DomainError.notFound('transaction', row.id);
    // Under the lock: a concurrent report of the same return (or another) may have committed meanwhile.
    const raced = await findPayoutReturnByReference(tx, report.provider, report.returnReference);
    if (raced) return replayOf(raced, row.id, report);
    refuseUnlessReturnable(locked, report.amount);
    const recorded = await insertPayoutReturn(tx, {
      transactionId: locked.id,
      provider: report.provider,
      returnReference: report.returnReference,
      payoutIdempotencyKey: report.payoutIdempotencyKey,
      payoutProviderReference: report.payoutProviderReference,
      currency: report.amount.currency,
      amount: report.amount.toString(),
      reasonCode: report.reasonCode,
      returnedAt: report.returnedAt,
    });
    if (!recorded) {
      // The transaction has a return already (one per transaction): a completed repay's payout returned again.
      throw new DomainError(
        'payout_return_not_allowed',
        `Transaction ${locked.id} was returned before; a second return is not handled by the service.`,
      );
    }
    await postLedgerEntries(tx, {
      reference: ledgerReference(locked.id, 'payout_returned'),
      description: `Payout of transaction ${locked.id} returned by the bank (${report.reasonCode}, ${report.returnReference})`,
      entries: settlementEntries.payoutReturned(report.amount),
    });
    await changeTransactionStatus(tx, locked, 'returned', { failureReason: 'payout_returned' });
    await start(
      workflowStart(payoutReturnWorkflow, {
        workflowId: workflowIds.payoutReturn(locked.id),
        args: [
          {
            transactionId: locked.id,
            partnerId: locked.partnerId,
            customerId: locked.customerId,
            type: locked.type,
            refundable: locked.type === 'payout' && locked.walletId !== null,
          },
        ],
        searchAttributes: {
          PartnerId: locked.partnerId,
          CustomerId: locked.customerId,
          ResourceId: locked.id,
          ResourceStatus: 'returned',
        },
      }),
    );
    return toPayoutReturn(recorded);
  });
}

/**
 * Production: a return reported by a rail integration, matched to its transaction by the payout's idempotency key
 * (`<transactionId>:stablecoin_to_fiat`) or the payout's provider reference (any partner's). Null when it names no
 * payout of the service (the integration keeps it for manual handling).
 */
export async function receivePayoutReturn(
  services: WriteServices,
  report: PayoutReturnReport,
): Promise<PayoutReturnResource | null> {
  const key = report.payoutIdempotencyKey;
  const byKey =
    key?.endsWith(PAYOUT_KEY_SUFFIX) && isUuid(key.slice(0, -PAYOUT_KEY_SUFFIX.length))
      ? key.slice(0, -PAYOUT_KEY_SUFFIX.length)
      : null;
  const transactionId =
    byKey ??
    (report.payoutProviderReference
      ? await findTransactionIdByPayoutReference(services.prisma, report.payoutProviderReference)
      : null);
  const row = transactionId ? await readTransactionRow(services.prisma, transactionId) : null;
  if (!row || row.receiverCurrency !== report.amount.currency) return null;
  return recordPayoutReturn(services, row, report);
}

/** The sandbox endpoint: the amount's decimals, then the simulated bank's log, then the recording. */
export async function receiveSandboxPayoutReturn(
  services: ApiServices,
  partnerId: string,
  transactionId: string,
  body: SandboxPayoutReturnRequest,
): Promise<PayoutReturnResource> {
  const row = await findTransactionOrThrow(services.prisma, partnerId, transactionId);
  const currency = row.receiverCurrency;
  const problem = amountTextProblem(body.amount, currency);
  if (problem) throw new DomainError('amount_too_precise', `amount: ${problem}.`);
  const amount = Money.parse(currency, body.amount);
  return recordPayoutReturn(
    services,
    row,
    {
      provider: 'sandbox',
      payoutIdempotencyKey: `${row.id}${PAYOUT_KEY_SUFFIX}`,
      payoutProviderReference: await payoutProviderReferenceOf(services.prisma, row.id),
      amount,
      reasonCode: body.reason_code as PayoutReturnReason,
      returnReference: body.return_reference ?? `SANDBOX-RETURN-${row.id}`,
      returnedAt: new Date(),
    },
    // Only a return the service takes is one the simulated bank made: a refused report leaves its log unchanged.
    () => recordSandboxPayoutReturn(services.prisma, row.id, amount),
  );
}
