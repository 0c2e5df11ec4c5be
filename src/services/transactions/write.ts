// The one writer of new transactions (every type, with or without a quote): the row, its created event and the
// start of its settlement workflow in one database transaction (writeThenStart), the quote used once and given back
// when the write fails.
import { randomBytes } from 'node:crypto';
import { type DatabaseTransaction, isUniqueViolation } from '../../persistence/database';
import { Currency, Money } from '../../domain/money';
import type { QuoteAmounts, QuoteTerms, QuoteType } from '../../domain/quotes';
import type { PaymentRail } from '../../domain/rails';
import { depositReferenceFrom, eventGroupOf, TransactionType } from '../../domain/transactions';
import { recordEvent } from '../../persistence/events';
import { DomainError } from '../../domain/errors';
import { LedgerError } from '../../domain/ledger';
import { insertTransaction, type NewTransactionRow, readTransactionRow } from '../../persistence/transactions';
import { toTransaction } from '../../presenters/transactions';
import type { TransactionRow } from '../../persistence/transactions';
import type { SenderDepositInstructions } from '../../providers/transaction-deposits';
import { consumeQuote, releaseQuote } from '../quotes';
import type { TransactionResource } from '../../schemas/transactions';
import type { ApiServices } from '../../app-services';
import { workflowIds } from '../../temporal/workflow-ids';
import { workflowStart, writeThenStart } from '../../temporal/write-then-start';
import { SettlementInput, settlementWorkflow } from '../../../workflows/settlement';

/** Columns of a new transaction that its type decides; the writer adds ids, status, deposit details and times. */
type TransactionColumns = Omit<
  NewTransactionRow,
  | 'id'
  | 'partnerId'
  | 'customerId'
  | 'type'
  | 'status'
  | 'depositReference'
  | 'depositInstructions'
  | 'depositDeadline'
  | 'createdAt'
>;

export interface NewTransaction {
  id: string;
  /** The creation time, from which the deposit deadline was counted. */
  createdAt: Date;
  partnerId: string;
  customerId: string;
  type: TransactionType;
  columns: TransactionColumns;
  senderRail: PaymentRail;
  /** Where and by when the sender pays; null when the transaction is created funded. */
  deposit: {
    deadline: Date;
    instructionsFor(reference: string): SenderDepositInstructions | Promise<SenderDepositInstructions>;
  } | null;
  /** Created `processing`: the workflow skips the wait for a deposit. */
  funded?: SettlementInput['funded'];
  /** In the same database transaction, after the row: what a transaction created funded posts. */
  afterInsert?: (tx: DatabaseTransaction, row: TransactionRow) => Promise<void>;
}

export const newDepositReference = () => depositReferenceFrom(randomBytes(10));

/**
 * The one writer of new transactions: the row, its `<group>.created` event and the start of its
 * settlement workflow in one database transaction (writeThenStart); a deposit reference already taken
 * (1 in 2^50 per pair) draws another. `reference` and `instructions` were drawn by the caller (so a
 * rail that cannot take deposits refuses before anything is used).
 */
export async function writeNewTransaction(
  services: ApiServices,
  t: NewTransaction,
  drawn: { reference: string; instructions: SenderDepositInstructions } | null,
  attempt = 0,
): Promise<TransactionResource> {
  const status = t.funded ? 'processing' : 'awaiting_deposit';
  try {
    return await writeThenStart(services, async (tx, start) => {
      await insertTransaction(tx, {
        ...t.columns,
        id: t.id,
        partnerId: t.partnerId,
        customerId: t.customerId,
        type: t.type,
        status,
        depositReference: drawn?.reference ?? null,
        depositInstructions: drawn?.instructions ?? null,
        depositDeadline: t.deposit?.deadline ?? null,
        createdAt: t.createdAt,
      });
      const created = (await readTransactionRow(tx, t.id))!;
      await t.afterInsert?.(tx, created);
      const resource = toTransaction(created);
      await recordEvent(tx, {
        partnerId: t.partnerId,
        type: `${eventGroupOf(t.type)}.created`,
        resourceId: t.id,
        resourceStatus: status,
        resource,
      });
      await start(
        workflowStart(settlementWorkflow, {
          workflowId: workflowIds.transaction(t.id),
          args: [
            {
              transactionId: t.id,
              partnerId: t.partnerId,
              customerId: t.customerId,
              senderRail: t.senderRail,
              type: t.type,
              ...(t.funded ? { funded: t.funded } : {}),
              searchAttributesAtStart: true,
            },
          ],
          searchAttributes: {
            PartnerId: t.partnerId,
            CustomerId: t.customerId,
            ResourceId: t.id,
            ResourceStatus: status,
          },
        }),
      );
      return resource;
    });
  } catch (error) {
    if (drawn && t.deposit && attempt < 3 && isUniqueViolation(error, 'deposit_reference')) {
      const reference = newDepositReference();
      return writeNewTransaction(
        services,
        t,
        { reference, instructions: await t.deposit.instructionsFor(reference) },
        attempt + 1,
      );
    }
    throw error;
  }
}

/**
 * Uses the quote (once), then writes the transaction; a failed write gives the quote back
 * (releaseQuote), so every refusal leaves the quote usable.
 */
export async function writeWithQuote(services: ApiServices, quoteId: string, quoteType: QuoteType, t: NewTransaction) {
  // Asked before the quote is used: a rail that cannot take deposits (503) refuses with the quote intact.
  const reference = t.deposit ? newDepositReference() : null;
  const drawn = t.deposit && reference ? { reference, instructions: await t.deposit.instructionsFor(reference) } : null;
  await consumeQuote(services, t.partnerId, quoteId, quoteType, t.id);
  try {
    return await writeNewTransaction(services, t, drawn);
  } catch (error) {
    // Nothing was written: give the quote back so that the partner can use it again.
    await releaseQuote(services, quoteId, t.id).catch((releaseError: unknown) =>
      services.logger.error(
        { err: releaseError, quote_id: quoteId },
        'could not release the quote after a failed write',
      ),
    );
    if (error instanceof LedgerError && error.code === 'insufficient_funds')
      throw insufficientFunds(t.columns.walletId as string);
    throw error;
  }
}

export function insufficientFunds(walletId: string, detail = ''): DomainError {
  return new DomainError('insufficient_funds', `Wallet ${walletId} holds less than the payout sends${detail}.`);
}

/** The amounts columns every type stores (fees in the sender currency). */
export function amountColumns(
  amounts: QuoteAmounts,
  terms: QuoteTerms,
  stablecoin: { currency: Currency; paymentRail: PaymentRail; amount: Money },
) {
  return {
    senderCurrency: amounts.sender.currency,
    senderPaymentRail: terms.sender.paymentRail,
    senderAmount: amounts.sender.toString(),
    stablecoinCurrency: stablecoin.currency,
    stablecoinPaymentRail: stablecoin.paymentRail,
    stablecoinAmount: stablecoin.amount.toString(),
    receiverCurrency: amounts.receiver.currency,
    receiverPaymentRail: terms.receiver.paymentRail,
    receiverAmount: amounts.receiver.toString(),
    rates: terms.rates.map((rate) => rate.toFixed()),
    serviceFee: amounts.fees.service.toString(),
    partnerFee: amounts.fees.partner.toString(),
    networkFee: amounts.fees.network.toString(),
  };
}
