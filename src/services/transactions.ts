// Transactions: the commands of their routes. Creating a fiat-to-fiat transaction checks every
// precondition first, then uses the quote (consumeQuote), then writes the transaction with its
// payin.created event and starts its settlement workflow (writeThenStart); when the write fails
// after the quote was used, the quote is given back (releaseQuote). Cancelling and deposits go
// through the settlement workflow's updates, which decide atomically (a cancel racing a deposit has
// one outcome). Reads are plain queries.
import { randomBytes } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { isUniqueViolation, type Db } from '../db';
import { isUuid } from '../domain/ids';
import { idOfThisRequest } from '../request-context';
import { amountTextProblem, Currency, Money } from '../domain/money';
import type { FixedAmount, QuoteAmounts } from '../domain/quotes';
import type { Blockchain, FiatRail } from '../domain/rails';
import {
  depositDeadlineOf,
  depositReferenceFrom,
  normaliseDepositReference,
  SandboxSimulation,
} from '../domain/transactions';
import { recordEvent } from '../events';
import { ApiError } from '../http/errors';
import { toDeposit, toTransaction, TransactionRow, withReceiverAccount } from '../presenters/transactions';
import type { IncomingDeposit } from '../providers/transaction-deposits';
import { amountsOf as quoteAmountsOf, termsOf } from '../presenters/quotes';
import { requireApprovedCustomer } from './customers';
import { findExternalAccountOrThrow } from './external-accounts';
import { consumeQuote, findQuoteOrThrow, priceWithinRanges, releaseQuote } from './quotes';
import { findWalletOrThrow } from './wallets';
import type { CreateFiatToFiatRequest, DepositResource, TransactionResource } from '../schemas/transactions';
import type { ApiServices } from '../app-services';
import { withTemporalDeadline } from '../temporal/calls';
import { updateRefusal } from '../temporal/errors';
import { workflowIds } from '../temporal/workflow-ids';
import { workflowStart, writeThenStart } from '../temporal/write-then-start';
import type { DepositInput } from '../../activities/transactions';
import {
  cancelTransactionUpdate,
  depositReturnWorkflow,
  receiveDepositUpdate,
  settlementRefusals,
  settlementWorkflow,
} from '../../workflows/settlement';

/** A transaction of this partner, or 404 (also for malformed ids and other partners' transactions). */
export async function findTransactionOrThrow(db: Db, partnerId: string, id: string): Promise<TransactionRow> {
  const row = isUuid(id)
    ? await db.transaction.findFirst({ where: { id, partnerId }, include: withReceiverAccount })
    : null;
  if (!row) throw ApiError.notFound('transaction', id);
  return row;
}

function mismatch(message: string): ApiError {
  return new ApiError('quote_currency_mismatch', message);
}

/** The amounts of the transaction: the quote's, or for a rate-only quote the ones the request's amount gives. */
function amountsFor(
  services: Pick<ApiServices, 'config'>,
  quote: Parameters<typeof termsOf>[0],
  request: CreateFiatToFiatRequest,
): QuoteAmounts {
  const locked = quoteAmountsOf(quote);
  const given = request.sender.amount !== undefined ? 'sender' : request.receiver.amount !== undefined ? 'receiver' : null;
  if (locked) {
    if (given) {
      throw ApiError.invalidParam(`${given}.amount`, 'the quote already fixes the amounts; leave the amount out');
    }
    return locked;
  }
  if (!given) {
    throw ApiError.validation([
      {
        code: 'missing_param',
        param: 'sender.amount',
        message: 'the quote is rate-only: give sender.amount or receiver.amount',
      },
    ]);
  }
  const terms = termsOf(quote);
  const currency = (given === 'sender' ? terms.sender.currency : terms.receiver.currency) as Currency;
  const text = (given === 'sender' ? request.sender.amount : request.receiver.amount) as string;
  const problem = amountTextProblem(text, currency);
  if (problem) throw ApiError.invalidParam(`${given}.amount`, problem);
  const fixed: FixedAmount = { side: given, amount: Money.parse(currency, text) };
  return priceWithinRanges(terms, fixed, services.config.amountRanges);
}

/**
 * POST /v1/fiat-to-fiat. Every refusal leaves nothing behind and the quote usable: the checks all
 * come before the quote is used, and a failed write gives the quote back.
 */
export async function createFiatToFiat(
  services: ApiServices,
  partnerId: string,
  request: CreateFiatToFiatRequest,
): Promise<TransactionResource> {
  const { prisma } = services;
  const quote = await findQuoteOrThrow(prisma, partnerId, request.quote_id);
  if (quote.type !== 'fiat_to_fiat') {
    throw ApiError.invalidParam('quote_id', `is a ${quote.type} quote; this operation needs a fiat_to_fiat quote`);
  }
  // The quote's consumer: a retry with the same Idempotency-Key is the same consumer (src/request-context.ts), so a
  // quote that the first attempt used after all (its update delivered once the worker was back) is still its own.
  const id = idOfThisRequest('transaction');
  if (quote.status === 'used' && quote.usedBy !== id) {
    throw new ApiError('quote_already_used', `Quote ${quote.id} was already used; request a new quote.`);
  }
  if (quote.status === 'expired' || Date.now() >= quote.expiresAt.getTime()) {
    throw new ApiError('quote_expired', `Quote ${quote.id} expired at ${quote.expiresAt.toISOString()}; request a new quote.`);
  }
  const terms = termsOf(quote);
  const customer = await requireApprovedCustomer(prisma, partnerId, request.customer_id);

  const wallet = await findWalletOrThrow(prisma, partnerId, request.wallet_id);
  if (wallet.customerId !== customer.id) {
    throw new ApiError('customer_mismatch', `Wallet ${wallet.id} belongs to another customer than ${customer.id}.`);
  }
  const stablecoin = terms.stablecoin as { currency: Currency; paymentRail: Blockchain };
  if (wallet.chain !== stablecoin.paymentRail) {
    throw mismatch(
      `Wallet ${wallet.id} is on ${wallet.chain}; the quote carries ${stablecoin.currency} on ${stablecoin.paymentRail}.`,
    );
  }

  const account = await findExternalAccountOrThrow(prisma, partnerId, request.receiver.external_account_id);
  if (account.customerId !== customer.id) {
    throw new ApiError('customer_mismatch', `External account ${account.id} belongs to another customer than ${customer.id}.`);
  }
  if (account.paymentRail !== terms.receiver.paymentRail) {
    throw mismatch(
      `External account ${account.id} is on ${account.paymentRail}; the quote pays ${terms.receiver.currency} on ` +
        `${terms.receiver.paymentRail}.`,
    );
  }
  if (account.status === 'rejected') {
    throw new ApiError('external_account_rejected', `External account ${account.id} was rejected and cannot receive payouts.`);
  }
  const amounts = amountsFor(services, quote, request);

  const createdAt = new Date();
  const senderRail = terms.sender.paymentRail as FiatRail;
  const depositDeadline = depositDeadlineOf(createdAt, senderRail);
  const instructionsFor = (reference: string) =>
    services.depositProvider.instructionsFor({ rail: senderRail, amount: amounts.sender, reference, deadline: depositDeadline });
  // Asked before the quote is used: a rail that cannot take deposits (503) refuses with the quote intact.
  let reference = depositReferenceFrom(randomBytes(10));
  let instructions = instructionsFor(reference);

  await consumeQuote(services, partnerId, quote.id, 'fiat_to_fiat', id);
  try {
    return await writeTransaction();
  } catch (error) {
    // Nothing was written: give the quote back so that the partner can use it again.
    await releaseQuote(services, quote.id, id).catch((releaseError: unknown) =>
      services.logger.error({ err: releaseError, quote_id: quote.id }, 'could not release the quote after a failed write'),
    );
    throw error;
  }

  async function writeTransaction(attempt = 0): Promise<TransactionResource> {
    try {
      return await writeThenStart(services, async (tx, start) => {
        const row = await tx.transaction.create({
          data: {
            id,
            partnerId,
            customerId: customer.id,
            type: 'fiat_to_fiat',
            status: 'awaiting_deposit',
            quoteId: quote.id,
            walletId: wallet.id,
            externalAccountId: account.id,
            senderName: request.sender.name,
            senderDocumentType: request.sender.document.type,
            senderDocumentNumber: request.sender.document.number,
            senderCurrency: amounts.sender.currency,
            senderPaymentRail: senderRail,
            senderAmount: amounts.sender.toString(),
            stablecoinCurrency: stablecoin.currency,
            stablecoinPaymentRail: stablecoin.paymentRail,
            stablecoinAmount: (amounts.stablecoin as Money).toString(),
            receiverCurrency: amounts.receiver.currency,
            receiverPaymentRail: terms.receiver.paymentRail,
            receiverAmount: amounts.receiver.toString(),
            rates: terms.rates.map((rate) => rate.toFixed()),
            serviceFee: amounts.fees.service.toString(),
            partnerFee: amounts.fees.partner.toString(),
            networkFee: amounts.fees.network.toString(),
            depositReference: reference,
            depositInstructions: instructions as object,
            depositDeadline,
            createdAt,
          },
          include: withReceiverAccount,
        });
        const resource = toTransaction(row);
        await recordEvent(tx, {
          partnerId,
          type: 'payin.created',
          resourceId: id,
          resourceStatus: row.status,
          resource,
        });
        await start(
          workflowStart(settlementWorkflow, {
            workflowId: workflowIds.transaction(id),
            args: [{ transactionId: id, partnerId, customerId: customer.id, senderRail }],
            searchAttributes: { PartnerId: partnerId, CustomerId: customer.id, ResourceId: id, ResourceStatus: row.status },
          }),
        );
        return resource;
      });
    } catch (error) {
      // A deposit reference already taken (1 in 2^50 per pair): draw another.
      if (attempt < 3 && isUniqueViolation(error, 'deposit_reference')) {
        reference = depositReferenceFrom(randomBytes(10));
        instructions = instructionsFor(reference);
        return writeTransaction(attempt + 1);
      }
      throw error;
    }
  }
}

/** Fiat to fiat is a pay-in to partners (SPEC 6), so its refusal is payin_cannot_be_cancelled. */
function cannotBeCancelled(id: string, status: string): ApiError {
  return new ApiError(
    'payin_cannot_be_cancelled',
    `Transaction ${id} is ${status}; only a transaction awaiting its deposit can be cancelled.`,
  );
}

/** PUT /v1/transactions/{id} {"status": "cancelled"}: only in awaiting_deposit, decided by the workflow. */
export async function cancelTransaction(
  services: ApiServices,
  partnerId: string,
  transactionId: string,
): Promise<TransactionResource> {
  const row = await findTransactionOrThrow(services.prisma, partnerId, transactionId);
  if (row.status !== 'awaiting_deposit') throw cannotBeCancelled(row.id, row.status);
  try {
    return await withTemporalDeadline(services, () =>
      services.temporal.workflow.getHandle(workflowIds.transaction(row.id)).executeUpdate(cancelTransactionUpdate),
    );
  } catch (error) {
    // A deposit or the deadline came first (or the workflow has completed since): the table says which.
    const refused =
      error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === settlementRefusals.notAwaitingDeposit;
    if (!refused) throw error;
    const current = await findTransactionOrThrow(services.prisma, partnerId, transactionId);
    throw cannotBeCancelled(row.id, current.status === 'awaiting_deposit' ? 'past its deposit deadline' : current.status);
  }
}

export interface DepositReport {
  amount: Money;
  senderName: string | null;
  reference: string | null;
  receivedAt: Date;
  simulate: SandboxSimulation | null;
}

/**
 * A deposit for a transaction (the sandbox endpoint, or a production integration through
 * receiveDepositByReference). A transaction awaiting its deposit takes it through its workflow's
 * receiveDeposit update (the workflow decides, atomically with a cancel or the deadline); any other
 * deposit is recorded and sent back by a deposit-return workflow, and the transaction is unchanged.
 */
export async function receiveDeposit(
  services: ApiServices,
  row: TransactionRow,
  report: DepositReport,
): Promise<DepositResource> {
  // The workflow update's id: a retry with the same Idempotency-Key gets the first attempt's outcome from Temporal.
  const depositId = idOfThisRequest('deposit');
  if (row.status === 'awaiting_deposit') {
    const input: DepositInput = {
      depositId,
      amount: report.amount.toString(),
      senderName: report.senderName,
      reference: report.reference,
      receivedAt: report.receivedAt.toISOString(),
      simulate: report.simulate,
    };
    try {
      const receipt = await withTemporalDeadline(services, () =>
        services.temporal.workflow
          .getHandle(workflowIds.transaction(row.id))
          .executeUpdate(receiveDepositUpdate, { args: [input], updateId: depositId }),
      );
      return receipt.deposit;
    } catch (error) {
      // Cancelled, expired or funded meanwhile (or the workflow already completed): a late deposit.
      const late = error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === settlementRefusals.notAwaitingDeposit;
      if (!late) throw error;
    }
  }
  // A retry whose first attempt's update was taken after all (the transaction has moved on since): that deposit.
  const taken = await services.prisma.transactionDeposit.findUnique({ where: { id: depositId } });
  if (taken?.transactionId === row.id) return toDeposit(taken);
  return writeThenStart(services, async (tx, start) => {
    const deposit = await tx.transactionDeposit.create({
      data: {
        id: depositId,
        transactionId: row.id,
        currency: report.amount.currency,
        amount: report.amount.toString(),
        senderName: report.senderName,
        reference: report.reference,
        status: 'returning',
        returnReason: 'not_awaiting_deposit',
        receivedAt: report.receivedAt,
      },
    });
    await start(
      workflowStart(depositReturnWorkflow, {
        workflowId: workflowIds.depositReturn(depositId),
        args: [{ depositId, transactionId: row.id, partnerId: row.partnerId }],
        searchAttributes: { PartnerId: row.partnerId, ResourceId: row.id, ResourceStatus: 'returning' },
      }),
    );
    return toDeposit(deposit);
  });
}

/** The sandbox deposit endpoint: checks the amount's decimals and the reference, then receiveDeposit. */
export async function receiveSandboxDeposit(
  services: ApiServices,
  partnerId: string,
  transactionId: string,
  body: { amount: string; sender_name?: string; reference?: string; simulate?: SandboxSimulation },
): Promise<DepositResource> {
  const row = await findTransactionOrThrow(services.prisma, partnerId, transactionId);
  const currency = row.senderCurrency as Currency;
  const problem = amountTextProblem(body.amount, currency);
  if (problem) throw ApiError.invalidParam('amount', problem);
  if (body.reference !== undefined && normaliseDepositReference(body.reference) !== row.depositReference) {
    throw ApiError.invalidParam('reference', `must be this transaction's deposit reference (${row.depositReference ?? ''})`);
  }
  return receiveDeposit(services, row, {
    amount: Money.parse(currency, body.amount),
    senderName: body.sender_name ?? null,
    reference: body.reference ?? row.depositReference,
    receivedAt: new Date(),
    simulate: body.simulate ?? null,
  });
}

/**
 * Production: a credit on a collection account, matched to its transaction by the reference it
 * carried (any partner's). Null when the reference names no transaction (the integration keeps it
 * for manual handling).
 */
export async function receiveDepositByReference(
  services: ApiServices,
  incoming: IncomingDeposit,
): Promise<DepositResource | null> {
  const reference = normaliseDepositReference(incoming.reference);
  const row = reference
    ? await services.prisma.transaction.findUnique({ where: { depositReference: reference }, include: withReceiverAccount })
    : null;
  if (!row || row.senderCurrency !== incoming.amount.currency) return null;
  return receiveDeposit(services, row, {
    amount: incoming.amount,
    senderName: incoming.senderName,
    reference: incoming.reference,
    receivedAt: incoming.receivedAt,
    simulate: null,
  });
}
