// Quote commands: creation (rates locked, amounts priced, lifetime workflow started) and
// consumption (once, before expiry) by the transactions that need one.
import { ownedOrNotFound } from './owned';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Database, DatabaseClient } from '../persistence/database';
import { newId } from '../domain/ids';
import { stablecoinOf, type Decimal, type Money } from '../domain/money';
import {
  AmountRanges,
  describeRange,
  FeesExceedAmountError,
  FixedAmount,
  isWithinRange,
  lockRate,
  networkFeeInSenderCurrency,
  conversionsOf,
  priceQuote,
  QuoteAmounts,
  QuoteSide,
  QuoteTerms,
  QuoteType,
} from '../domain/quotes';
import { blockchainOf } from '../domain/rails';
import { DomainError } from '../domain/errors';
import type { RateProvider } from '../providers/rates';
import type { AnyQuoteResource, QuoteRequest } from '../schemas/quotes';
import type { ApiServices } from '../app-services';
import { flowsOf } from '../domain/production-flows';
import type { PaymentRail } from '../domain/rails';
import { refusedFlows } from '../providers/readiness';
import { expireUsedQuote, findQuote, insertQuote, QuoteRow } from '../persistence/quotes';
import { amountsOf, termsOf, toQuote } from '../presenters/quotes';
import { updateRefusal } from '../temporal/errors';
import { workflowIds } from '../temporal/workflow-ids';
import { callWorkflow, workflowStart, writeThenStart } from '../temporal/write-then-start';
import {
  consumeQuoteUpdate,
  releaseQuoteUpdate,
  QUOTE_LIFETIME_MS,
  quoteLifetimeWorkflow,
  quoteRefusals,
} from '../../workflows/quote-lifetime';

/** A quote of this partner, or 404 (also for malformed ids and other partners' quotes). */
export async function findQuoteOrThrow(db: DatabaseClient, partnerId: string, quoteId: string): Promise<QuoteRow> {
  return ownedOrNotFound('quote', findQuote, db, partnerId, quoteId);
}

/** Rates and the network fee from the provider, locked as the quote keeps them. */
export async function lockTerms(
  rateProvider: RateProvider,
  serviceFeeBps: number,
  request: QuoteRequest,
): Promise<QuoteTerms> {
  const rates: Decimal[] = [];
  for (const { from, to } of conversionsOf(request)) rates.push(lockRate(await rateProvider.exchangeRate(from, to)));
  // The stablecoin moves once on its chain: the pay-in's receiver, the payout's sender, or the intermediary.
  const chainLeg = request.stablecoin ?? (request.type === 'payin' ? request.receiver : request.sender);
  const feeInStablecoin = await rateProvider.networkFee(
    stablecoinOf(chainLeg.currency),
    blockchainOf(chainLeg.paymentRail),
  );
  return {
    type: request.type,
    sender: request.sender,
    stablecoin: request.stablecoin,
    receiver: request.receiver,
    rates,
    serviceFeeBps,
    partnerFee: request.partnerFee,
    networkFee: networkFeeInSenderCurrency(request.sender.currency, feeInStablecoin, rates[0] as Decimal),
  };
}

function outOfRange(param: string, amount: Money, ranges: AmountRanges, computed: boolean): DomainError {
  const range = describeRange(ranges[amount.currency]);
  return new DomainError(
    'amount_out_of_range',
    computed
      ? `${param} would be ${amount.format()}, outside the allowed range of ${range}.`
      : `${param} ${amount.format()} is outside the allowed range of ${range}.`,
  );
}

/**
 * Every amount of a quote for the amount fixed on one side, with the range checks: the given
 * amount first, then the computed one. Also used to price a rate-only quote at initiation.
 */
export function priceWithinRanges(terms: QuoteTerms, fixed: FixedAmount, ranges: AmountRanges): QuoteAmounts {
  const other: QuoteSide = fixed.side === 'sender' ? 'receiver' : 'sender';
  if (!isWithinRange(fixed.amount, ranges)) throw outOfRange(`${fixed.side}.amount`, fixed.amount, ranges, false);
  let amounts: QuoteAmounts;
  try {
    amounts = priceQuote(terms, fixed);
  } catch (error) {
    if (error instanceof FeesExceedAmountError) {
      throw new DomainError(
        'amount_out_of_range',
        `sender.amount ${error.sender.format()} does not cover the fees of ${error.fees.total.format()}.`,
      );
    }
    throw error;
  }
  const computed = amounts[other];
  if (!isWithinRange(computed, ranges)) throw outOfRange(`${other}.amount`, computed, ranges, true);
  return amounts;
}

/**
 * Production: refuses a quote or transaction whose legs need a provider without an adapter (src/providers/readiness.ts),
 * naming each missing flow. The sandbox serves every flow.
 */
export function refuseUnavailableFlows(
  services: Pick<ApiServices, 'config' | 'accountScreening'>,
  legs: { sender: PaymentRail; stablecoin: PaymentRail | null; receiver: PaymentRail },
): void {
  const refused = refusedFlows(services.config, services.accountScreening, flowsOf(legs));
  if (refused.length === 0) return;
  throw new DomainError(
    'flow_not_available',
    `This deployment cannot serve ${refused.map((entry) => `${entry.flow} (${entry.missing})`).join(', ')}.`,
  );
}

export async function createQuote(
  services: Pick<ApiServices, 'config' | 'prisma' | 'temporal' | 'rateProvider' | 'logger' | 'accountScreening'>,
  partnerId: string,
  request: QuoteRequest,
): Promise<AnyQuoteResource> {
  const { config } = services;
  refuseUnavailableFlows(services, {
    sender: request.sender.paymentRail,
    stablecoin: request.stablecoin?.paymentRail ?? null,
    receiver: request.receiver.paymentRail,
  });
  // The given amount is checked before asking for rates: a wrong amount needs no market data.
  if (request.fixed && !isWithinRange(request.fixed.amount, config.amountRanges)) {
    throw outOfRange(`${request.fixed.side}.amount`, request.fixed.amount, config.amountRanges, false);
  }
  const terms = await lockTerms(services.rateProvider, config.quoteServiceFeeBps, request);
  const amounts = request.fixed ? priceWithinRanges(terms, request.fixed, config.amountRanges) : null;
  const id = newId();
  const createdAt = new Date();
  const expiresAt = new Date(createdAt.getTime() + QUOTE_LIFETIME_MS);
  return writeThenStart(services, async (tx, start) => {
    const row = await insertQuote(tx, {
      id,
      partnerId,
      type: terms.type,
      status: 'active',
      senderCurrency: terms.sender.currency,
      senderPaymentRail: terms.sender.paymentRail,
      stablecoinCurrency: terms.stablecoin?.currency ?? null,
      stablecoinPaymentRail: terms.stablecoin?.paymentRail ?? null,
      receiverCurrency: terms.receiver.currency,
      receiverPaymentRail: terms.receiver.paymentRail,
      fixedSide: amounts?.fixedSide ?? null,
      senderAmount: amounts?.sender.toString() ?? null,
      stablecoinAmount: amounts?.stablecoin?.toString() ?? null,
      receiverAmount: amounts?.receiver.toString() ?? null,
      rates: terms.rates.map((rate) => rate.toFixed()),
      serviceFeeBps: terms.serviceFeeBps,
      partnerFeeBps: terms.partnerFee?.percentageBps ?? null,
      partnerFlatFee: terms.partnerFee?.flat.toString() ?? null,
      networkFee: terms.networkFee.toString(),
      serviceFeeAmount: amounts?.fees.service.toString() ?? null,
      partnerFeeAmount: amounts?.fees.partner.toString() ?? null,
      createdAt,
      expiresAt: new Date(createdAt.getTime() + QUOTE_LIFETIME_MS),
    });
    await start(
      workflowStart(quoteLifetimeWorkflow, {
        workflowId: workflowIds.quote(id),
        args: [{ quoteId: id, partnerId, type: terms.type, searchAttributesAtStart: true }],
        searchAttributes: { PartnerId: partnerId, ResourceId: id, ResourceStatus: 'active' },
      }),
    );
    return toQuote(row);
  });
}

export interface ConsumedQuote {
  /** The quote as the API shows it, now `used`. */
  quote: AnyQuoteResource;
  /** Locked rates and fee parameters. */
  terms: QuoteTerms;
  /**
   * The locked amounts; null for a rate-only quote, which the caller prices with
   * `priceWithinRanges(terms, amount, config.amountRanges)` (do that before consuming, so an
   * amount out of range does not use the quote up).
   */
  amounts: QuoteAmounts | null;
}

function consumed(row: QuoteRow): ConsumedQuote {
  return { quote: toQuote(row), terms: termsOf(row), amounts: amountsOf(row) };
}

function alreadyUsed(quoteId: string): DomainError {
  return new DomainError('quote_already_used', `Quote ${quoteId} was already used; request a new quote.`);
}

function expired(row: QuoteRow): DomainError {
  return new DomainError(
    'quote_expired',
    `Quote ${row.id} expired at ${row.expiresAt.toISOString()}; request a new quote.`,
  );
}

function wrongType(row: QuoteRow, expectedType: QuoteType): DomainError {
  return new DomainError(
    'quote_type_mismatch',
    `quote_id is a ${row.type} quote; this operation needs a ${expectedType} quote.`,
  );
}

/**
 * Uses a quote for a transaction: succeeds once, and only before the quote expires (the quote's
 * workflow decides, atomically). `consumerId` names the transaction; the same consumer calling
 * again (e.g. a retried request) gets the same answer instead of quote_already_used.
 * Refusals: not_found, validation_error on `quote_id` (another type of quote), quote_expired,
 * quote_already_used.
 */
export async function consumeQuote(
  services: Pick<ApiServices, 'prisma' | 'temporal' | 'config'>,
  partnerId: string,
  quoteId: string,
  expectedType: QuoteType,
  consumerId: string,
): Promise<ConsumedQuote> {
  const row = await findQuoteOrThrow(services.prisma, partnerId, quoteId);
  if (row.type !== expectedType) throw wrongType(row, expectedType);
  if (row.status === 'used') {
    if (row.usedBy === consumerId) return consumed(row);
    throw alreadyUsed(row.id);
  }
  // The workflow's timer persists expiry within moments; the wall clock closes that gap.
  if (row.status === 'expired' || Date.now() >= row.expiresAt.getTime()) throw expired(row);
  try {
    await callWorkflow(services, workflowIds.quote(row.id), (handle) =>
      handle.executeUpdate(consumeQuoteUpdate, { args: [{ consumerId, expectedType }] }),
    );
  } catch (error) {
    const refusal = updateRefusal(error);
    if (refusal?.type === quoteRefusals.expired) throw expired(row);
    if (refusal?.type === quoteRefusals.alreadyUsed) throw alreadyUsed(row.id);
    if (refusal?.type === quoteRefusals.typeMismatch) throw wrongType(row, expectedType);
    // The workflow completed (used or expired) since the row was read: the table has the outcome.
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    const current = await findQuoteOrThrow(services.prisma, partnerId, quoteId);
    if (current.status === 'used' && current.usedBy === consumerId) return consumed(current);
    if (current.status === 'used') throw alreadyUsed(row.id);
    if (current.status === 'expired') throw expired(current);
    throw error;
  }
  return consumed(await findQuoteOrThrow(services.prisma, partnerId, quoteId));
}

/**
 * Gives a quote back after the transaction that consumed it could not be written (the compensation
 * of consumeQuote): within its lifetime it is `active` again, usable by another transaction. Once
 * the lifetime is over the quote's workflow has completed; the quote is then marked `expired` here
 * (it could not be used any more anyway). A quote used by another consumer is left alone.
 */
export async function releaseQuote(
  services: Pick<ApiServices, 'prisma' | 'temporal' | 'config'>,
  quoteId: string,
  consumerId: string,
): Promise<void> {
  try {
    await callWorkflow(services, workflowIds.quote(quoteId), (handle) =>
      handle.executeUpdate(releaseQuoteUpdate, { args: [{ consumerId }] }),
    );
  } catch (error) {
    if (updateRefusal(error)?.type === quoteRefusals.notUsedBy) return;
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    await expireUsedQuote(services.prisma, quoteId, consumerId);
  }
}
