// Creating a transaction (fiat to fiat, pay-in, payout): every precondition checked first (quote, customer, wallet,
// receiving account, amounts), then the write (write.ts).
import { idOfThisRequest } from '../../request-context';
import { amountTextProblem, Currency, Money, stablecoinOf } from '../../domain/money';
import type { QuoteAmounts, QuoteTerms, QuoteType } from '../../domain/quotes';
import { blockchainOf, fiatRailOf, type Blockchain, type FiatRail } from '../../domain/rails';
import { depositDeadlineOf } from '../../domain/transactions';
import { DomainError } from '../../domain/errors';
import { postLedgerEntries } from '../../persistence/ledger';
import { amountsOf as quoteAmountsOf, termsOf } from '../../presenters/quotes';
import { requireApprovedCustomer } from '../customers';
import { findExternalAccountOrThrow, pixDetailsOf } from '../external-accounts';
import { findQuoteOrThrow, priceWithinRanges, refuseUnavailableFlows } from '../quotes';
import { findWalletColumnsOrThrow, findWalletOrThrow } from '../wallets';
import type { WalletColumns } from '../../persistence/wallets';
import type {
  CreateFiatToFiatRequest,
  CreatePayinRequest,
  CreatePayoutRequest,
  TransactionResource,
} from '../../schemas/transactions';
import type { ApiServices } from '../../app-services';
import { NewTransaction, writeWithQuote, insufficientFunds, amountColumns } from './write';
import { payoutFundingPosting } from './deposit-bookkeeping';

export function mismatch(message: string): DomainError {
  return new DomainError('quote_currency_mismatch', message);
}

/**
 * The checks every quote-based transaction makes first: the quote's type, use and expiry. `transactionId` is the
 * quote's consumer: a retry with the same Idempotency-Key is the same consumer (idOfThisRequest), so a quote that the
 * first attempt used after all (its update delivered once the worker was back) is still its own.
 */
async function usableQuoteOrThrow(
  services: ApiServices,
  partnerId: string,
  quoteId: string,
  type: QuoteType,
  transactionId: string,
) {
  const quote = await findQuoteOrThrow(services.prisma, partnerId, quoteId);
  // A quote made before a provider went away (or by another deployment's table) is refused the same way.
  refuseUnavailableFlows(services, {
    sender: quote.senderPaymentRail,
    stablecoin: quote.stablecoinPaymentRail,
    receiver: quote.receiverPaymentRail,
  });
  if (quote.type !== type) {
    throw new DomainError(
      'quote_type_mismatch',
      `quote_id is a ${quote.type} quote; this operation needs a ${type} quote.`,
    );
  }
  if (quote.status === 'used' && quote.usedBy !== transactionId) {
    throw new DomainError('quote_already_used', `Quote ${quote.id} was already used; request a new quote.`);
  }
  if (quote.status === 'expired' || Date.now() >= quote.expiresAt.getTime()) {
    throw new DomainError(
      'quote_expired',
      `Quote ${quote.id} expired at ${quote.expiresAt.toISOString()}; request a new quote.`,
    );
  }
  return quote;
}

/**
 * A wallet of the customer, read by `find` (without its balances, unless a payout pre-checks them), or 404 /
 * customer_mismatch; on `chain` or quote_currency_mismatch.
 */
async function customerWalletOrThrow<Wallet extends WalletColumns>(
  find: (db: ApiServices['prisma'], partnerId: string, walletId: string) => Promise<Wallet>,
  services: ApiServices,
  partnerId: string,
  customerId: string,
  walletId: string,
  chain: string,
  coin: string,
): Promise<Wallet> {
  const wallet = await find(services.prisma, partnerId, walletId);
  if (wallet.customerId !== customerId) {
    throw new DomainError('customer_mismatch', `Wallet ${wallet.id} belongs to another customer than ${customerId}.`);
  }
  if (wallet.chain !== chain) {
    throw mismatch(`Wallet ${wallet.id} is on ${wallet.chain}; the quote carries ${coin} on ${chain}.`);
  }
  return wallet;
}

/** An external account of the customer on the quote's receiver rail that may receive payouts. */
async function receivingAccountOrThrow(
  services: ApiServices,
  partnerId: string,
  customerId: string,
  accountId: string,
  terms: QuoteTerms,
) {
  const account = await findExternalAccountOrThrow(services.prisma, partnerId, accountId);
  if (account.customerId !== customerId) {
    throw new DomainError(
      'customer_mismatch',
      `External account ${account.id} belongs to another customer than ${customerId}.`,
    );
  }
  if (account.paymentRail !== terms.receiver.paymentRail) {
    throw mismatch(
      `External account ${account.id} is on ${account.paymentRail}; the quote pays ${terms.receiver.currency} on ` +
        `${terms.receiver.paymentRail}.`,
    );
  }
  if (account.status === 'rejected') {
    throw new DomainError(
      'external_account_rejected',
      `External account ${account.id} was rejected and cannot receive payouts.`,
    );
  }
  if (account.status === 'under_review') {
    throw new DomainError(
      'external_account_under_review',
      `External account ${account.id} is under review (screening) and cannot receive payouts until it is cleared.`,
    );
  }
  return account;
}

/**
 * The amounts of the transaction: the quote's, or for a rate-only quote the ones the request's amount
 * gives (`given`: the amount on one side and the request parameter that carried it).
 */
function amountsFor(
  services: Pick<ApiServices, 'config'>,
  quote: Parameters<typeof termsOf>[0],
  given: { side: 'sender' | 'receiver'; param: string; text: string } | null,
  missing: { param: string; message: string },
): QuoteAmounts {
  const locked = quoteAmountsOf(quote);
  if (locked) {
    if (given)
      throw new DomainError(
        'quote_amount_mismatch',
        `${given.param}: the quote already fixes the amounts; leave the amount out.`,
      );
    return locked;
  }
  if (!given) {
    throw new DomainError('quote_amount_mismatch', `${missing.param}: ${missing.message}.`);
  }
  const terms = termsOf(quote);
  const currency = given.side === 'sender' ? terms.sender.currency : terms.receiver.currency;
  const problem = amountTextProblem(given.text, currency);
  if (problem) throw new DomainError('quote_amount_mismatch', `${given.param}: ${problem}.`);
  return priceWithinRanges(
    terms,
    { side: given.side, amount: Money.parse(currency, given.text) },
    services.config.amountRanges,
  );
}

/** Who pays the fiat in (fiat to fiat, pay-in). */
const senderColumns = (sender: { name: string; document: { type: string; number: string } }) => ({
  senderName: sender.name,
  senderDocumentType: sender.document.type,
  senderDocumentNumber: sender.document.number,
});

/** Fiat deposit instructions on the sender's rail, with the deadline of that rail from now. */
function fiatDeposit(
  services: ApiServices,
  rail: FiatRail,
  amount: Money,
  createdAt: Date,
): NonNullable<NewTransaction['deposit']> {
  const deadline = depositDeadlineOf(createdAt, rail);
  return {
    deadline,
    instructionsFor: (reference) => services.depositProvider.instructionsFor({ rail, amount, reference, deadline }),
  };
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
  const id = idOfThisRequest('transaction');
  const quote = await usableQuoteOrThrow(services, partnerId, request.quote_id, 'fiat_to_fiat', id);
  const terms = termsOf(quote);
  const customer = await requireApprovedCustomer(services.prisma, partnerId, request.customer_id);
  const stablecoin = terms.stablecoin as { currency: Currency; paymentRail: Blockchain };
  const wallet = await customerWalletOrThrow(
    findWalletColumnsOrThrow,
    services,
    partnerId,
    customer.id,
    request.wallet_id,
    stablecoin.paymentRail,
    stablecoin.currency,
  );
  const account = await receivingAccountOrThrow(
    services,
    partnerId,
    customer.id,
    request.receiver.external_account_id,
    terms,
  );
  const given =
    request.sender.amount !== undefined
      ? { side: 'sender' as const, param: 'sender.amount', text: request.sender.amount }
      : request.receiver.amount !== undefined
        ? { side: 'receiver' as const, param: 'receiver.amount', text: request.receiver.amount }
        : null;
  const amounts = amountsFor(services, quote, given, {
    param: 'sender.amount',
    message: 'the quote is rate-only: give sender.amount or receiver.amount',
  });
  const senderRail = fiatRailOf(terms.sender.paymentRail);
  const createdAt = new Date();
  return writeWithQuote(services, quote.id, 'fiat_to_fiat', {
    id,
    createdAt,
    partnerId,
    customerId: customer.id,
    type: 'fiat_to_fiat',
    senderRail,
    deposit: fiatDeposit(services, senderRail, amounts.sender, createdAt),
    columns: {
      quoteId: quote.id,
      walletId: wallet.id,
      externalAccountId: account.id,
      ...senderColumns(request.sender),
      ...amountColumns(amounts, terms, { ...stablecoin, amount: amounts.stablecoin as Money }),
    },
  });
}

/**
 * POST /v1/payin: leg 1 alone. The sender pays fiat per the deposit instructions; the stablecoin is
 * credited to the customer's wallet. Same checks as fiat to fiat, nothing created on refusal.
 */
export async function createPayin(
  services: ApiServices,
  partnerId: string,
  request: CreatePayinRequest,
): Promise<TransactionResource> {
  const id = idOfThisRequest('transaction');
  const quote = await usableQuoteOrThrow(services, partnerId, request.quote_id, 'payin', id);
  const terms = termsOf(quote);
  const customer = await requireApprovedCustomer(services.prisma, partnerId, request.customer_id);
  const wallet = await customerWalletOrThrow(
    findWalletColumnsOrThrow,
    services,
    partnerId,
    customer.id,
    request.wallet_id,
    terms.receiver.paymentRail,
    terms.receiver.currency,
  );
  const given =
    request.sender.amount !== undefined
      ? { side: 'sender' as const, param: 'sender.amount', text: request.sender.amount }
      : null;
  const amounts = amountsFor(services, quote, given, {
    param: 'sender.amount',
    message: 'the quote is rate-only: give sender.amount',
  });
  const senderRail = fiatRailOf(terms.sender.paymentRail);
  const createdAt = new Date();
  return writeWithQuote(services, quote.id, 'payin', {
    id,
    createdAt,
    partnerId,
    customerId: customer.id,
    type: 'payin',
    senderRail,
    deposit: fiatDeposit(services, senderRail, amounts.sender, createdAt),
    columns: {
      quoteId: quote.id,
      walletId: wallet.id,
      ...senderColumns(request.sender),
      ...amountColumns(amounts, terms, { ...terms.receiver, amount: amounts.receiver }),
    },
  });
}

/**
 * POST /v1/payout: leg 2 alone. From a wallet: its balance is debited in the same database
 * transaction that writes the payout (the ledger locks the wallet's account row and refuses an
 * overdraft, so concurrent payouts never take a balance below zero), which starts `processing`.
 * Without one: the payout awaits the stablecoin on chain (POST /v1/payout/confirm).
 */
export async function createPayout(
  services: ApiServices,
  partnerId: string,
  request: CreatePayoutRequest,
): Promise<TransactionResource> {
  if (request.simulate !== undefined && services.config.appEnv !== 'sandbox') {
    throw DomainError.invalidParam('simulate', 'is a sandbox control; production payouts cannot simulate failures');
  }
  if (request.simulate !== undefined && request.wallet_id === undefined) {
    throw DomainError.invalidParam('simulate', 'only with wallet_id; without one, give it to POST /v1/payout/confirm');
  }
  const id = idOfThisRequest('transaction');
  const quote = await usableQuoteOrThrow(services, partnerId, request.quote_id, 'payout', id);
  const terms = termsOf(quote);
  const customer = await requireApprovedCustomer(services.prisma, partnerId, request.customer_id);
  const coin = stablecoinOf(terms.sender.currency);
  const chain = blockchainOf(terms.sender.paymentRail);
  const wallet =
    request.wallet_id !== undefined
      ? await customerWalletOrThrow(findWalletOrThrow, services, partnerId, customer.id, request.wallet_id, chain, coin)
      : null;
  let receiver: { externalAccountId: string } | { receiverDetails: object };
  if (request.external_account_id !== undefined) {
    const account = await receivingAccountOrThrow(services, partnerId, customer.id, request.external_account_id, terms);
    receiver = { externalAccountId: account.id };
  } else {
    if (terms.receiver.paymentRail !== 'pix') {
      throw mismatch(
        `The quote pays ${terms.receiver.currency} on ${terms.receiver.paymentRail}; pix is for the pix rail only.`,
      );
    }
    const pix = request.pix as NonNullable<CreatePayoutRequest['pix']>;
    receiver = {
      receiverDetails: {
        ...(await pixDetailsOf(services, pix.key, 'pix.key')),
        beneficiary_document: pix.document.number,
      },
    };
  }
  const amounts = amountsFor(
    services,
    quote,
    request.amount !== undefined ? { side: 'sender', param: 'amount', text: request.amount } : null,
    { param: 'amount', message: 'the quote is rate-only: give the amount (the stablecoin sent)' },
  );
  if (wallet) {
    // Refused before the quote is used; the ledger's row lock is the guard against a concurrent debit.
    const account = wallet.ledgerAccounts.find((candidate) => candidate.currency === coin);
    const balance = Money.of(coin, (account?.balance ?? '0').toString());
    if (balance.lt(amounts.sender))
      throw insufficientFunds(wallet.id, ` (${balance.format()} < ${amounts.sender.format()})`);
  }
  const createdAt = new Date();
  const deadline = depositDeadlineOf(createdAt, chain);
  return writeWithQuote(services, quote.id, 'payout', {
    id,
    createdAt,
    partnerId,
    customerId: customer.id,
    type: 'payout',
    senderRail: chain,
    deposit: wallet
      ? null
      : {
          deadline,
          instructionsFor: (reference) =>
            services.depositProvider.stablecoinInstructionsFor({ chain, amount: amounts.sender, reference, deadline }),
        },
    funded: wallet ? { action: 'settle' } : undefined,
    afterInsert: wallet
      ? async (tx, row) => {
          await postLedgerEntries(tx, payoutFundingPosting(row, `Payout ${id} debited from wallet ${wallet.id}`));
        }
      : undefined,
    columns: {
      quoteId: quote.id,
      walletId: wallet?.id ?? null,
      sandboxSimulation: request.simulate ?? null,
      ...receiver,
      ...amountColumns(amounts, terms, { currency: coin, paymentRail: chain, amount: amounts.converted }),
    },
  });
}
