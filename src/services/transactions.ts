// Transactions: the commands of their routes. Creating a transaction (fiat to fiat, pay-in, payout)
// checks every precondition first, then uses the quote (consumeQuote), then writes the transaction
// with its payin.created / payout.created event and starts its settlement workflow (writeThenStart);
// when the write fails after the quote was used, the quote is given back (releaseQuote). Cancelling and deposits go
// through the settlement workflow's updates, which decide atomically (a cancel racing a deposit has
// one outcome). Reads are plain queries.
import { randomBytes } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { isUniqueViolation, ownedBy, Prisma, type Db, type SqlTransaction } from '../persistence/database';
import { isUuid, newId } from '../domain/ids';
import { idOfThisRequest } from '../request-context';
import { amountTextProblem, Currency, Money, Stablecoin } from '../domain/money';
import type { QuoteAmounts, QuoteTerms, QuoteType } from '../domain/quotes';
import type { Blockchain, FiatRail, PaymentRail } from '../domain/rails';
import {
  depositDeadlineOf,
  decideVirtualAccountDeposit,
  depositReferenceFrom,
  eventGroupOf,
  normaliseDepositReference,
  SandboxSimulation,
  TransactionType,
} from '../domain/transactions';
import { recordEvent } from '../events';
import { ApiError } from '../http/errors';
import { LedgerError, postLedgerEntries, settlementEntries } from '../ledger';
import { ledgerReference, payoutFundingEntries } from '../persistence/transaction-postings';
import { insertRow } from '../persistence/sql-rows';
import { readTransactionRow } from '../persistence/transaction-rows';
import { findVirtualAccountByDepositReference, VirtualAccountRow } from '../persistence/virtual-accounts';
import {
  amountsOf as amountsOfRow,
  toDeposit,
  toTransaction,
  TransactionRow,
  withReceiverAccount,
} from '../presenters/transactions';
import { beneficiaryNameOf } from '../presenters/virtual-accounts';
import type { DepositRail } from '../providers/deposit-accounts';
import type { IncomingDeposit, SenderDepositInstructions } from '../providers/transaction-deposits';
import { amountsOf as quoteAmountsOf, termsOf } from '../presenters/quotes';
import { requireApprovedCustomer } from './customers';
import { findExternalAccountOrThrow, pixDetailsOf } from './external-accounts';
import { consumeQuote, findQuoteOrThrow, lockTerms, priceWithinRanges, releaseQuote } from './quotes';
import { findVirtualAccountOrThrow } from './virtual-accounts';
import { findWalletOrThrow } from './wallets';
import type {
  CreateFiatToFiatRequest,
  CreatePayinRequest,
  CreatePayoutRequest,
  DepositResource,
  TransactionResource,
} from '../schemas/transactions';
import type { ApiServices } from '../app-services';
import { updateRefusal } from '../temporal/errors';
import { workflowIds } from '../temporal/workflow-ids';
import { callWorkflow, workflowStart, writeThenStart } from '../temporal/write-then-start';
import type { DepositInput } from '../../activities/transactions';
import {
  cancelTransactionUpdate,
  depositReturnWorkflow,
  receiveDepositUpdate,
  SettlementInput,
  settlementRefusals,
  settlementWorkflow,
} from '../../workflows/settlement';

/** A transaction of this partner, or 404 (also for malformed ids and other partners' transactions). */
export async function findTransactionOrThrow(db: Db, partnerId: string, id: string): Promise<TransactionRow> {
  const row = isUuid(id) ? ownedBy(await readTransactionRow(db, id), partnerId) : null;
  if (!row) throw ApiError.notFound('transaction', id);
  return row;
}

function mismatch(message: string): ApiError {
  return new ApiError('quote_currency_mismatch', message);
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
  if (quote.type !== type) {
    throw ApiError.invalidParam('quote_id', `is a ${quote.type} quote; this operation needs a ${type} quote`);
  }
  if (quote.status === 'used' && quote.usedBy !== transactionId) {
    throw new ApiError('quote_already_used', `Quote ${quote.id} was already used; request a new quote.`);
  }
  if (quote.status === 'expired' || Date.now() >= quote.expiresAt.getTime()) {
    throw new ApiError(
      'quote_expired',
      `Quote ${quote.id} expired at ${quote.expiresAt.toISOString()}; request a new quote.`,
    );
  }
  return quote;
}

/** A wallet of the customer, or 404 / customer_mismatch; on `chain` or quote_currency_mismatch. */
async function customerWalletOrThrow(
  services: ApiServices,
  partnerId: string,
  customerId: string,
  walletId: string,
  chain: string,
  coin: string,
) {
  const wallet = await findWalletOrThrow(services.prisma, partnerId, walletId);
  if (wallet.customerId !== customerId) {
    throw new ApiError('customer_mismatch', `Wallet ${wallet.id} belongs to another customer than ${customerId}.`);
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
    throw new ApiError(
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
    throw new ApiError(
      'external_account_rejected',
      `External account ${account.id} was rejected and cannot receive payouts.`,
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
    if (given) throw ApiError.invalidParam(given.param, 'the quote already fixes the amounts; leave the amount out');
    return locked;
  }
  if (!given) {
    throw ApiError.validation([{ code: 'missing_param', ...missing }]);
  }
  const terms = termsOf(quote);
  const currency = (given.side === 'sender' ? terms.sender.currency : terms.receiver.currency) as Currency;
  const problem = amountTextProblem(given.text, currency);
  if (problem) throw ApiError.invalidParam(given.param, problem);
  return priceWithinRanges(
    terms,
    { side: given.side, amount: Money.parse(currency, given.text) },
    services.config.amountRanges,
  );
}

/** Columns of a new transaction that its type decides; the writer adds ids, status, deposit details and times. */
type TransactionColumns = Omit<
  Prisma.TransactionUncheckedCreateInput,
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

interface NewTransaction {
  id: string;
  /** The creation time, from which the deposit deadline was counted. */
  createdAt: Date;
  partnerId: string;
  customerId: string;
  type: TransactionType;
  columns: TransactionColumns;
  senderRail: PaymentRail;
  /** Where and by when the sender pays; null when the transaction is created funded. */
  deposit: { deadline: Date; instructionsFor(reference: string): SenderDepositInstructions } | null;
  /** Created `processing`: the workflow skips the wait for a deposit. */
  funded?: SettlementInput['funded'];
  /** In the same database transaction, after the row: what a transaction created funded posts. */
  afterInsert?: (tx: SqlTransaction, row: TransactionRow) => Promise<void>;
}

const newDepositReference = () => depositReferenceFrom(randomBytes(10));

/**
 * The one writer of new transactions: the row, its `<group>.created` event and the start of its
 * settlement workflow in one database transaction (writeThenStart); a deposit reference already taken
 * (1 in 2^50 per pair) draws another. `reference` and `instructions` were drawn by the caller (so a
 * rail that cannot take deposits refuses before anything is used).
 */
async function writeTransaction(
  services: ApiServices,
  t: NewTransaction,
  drawn: { reference: string; instructions: SenderDepositInstructions } | null,
  attempt = 0,
): Promise<TransactionResource> {
  const status = t.funded ? 'processing' : 'awaiting_deposit';
  try {
    return await writeThenStart(
      services,
      async (tx, start) => {
        // In SQL (sql-rows.ts): the one insert of every transaction, which Prisma would compile on each call.
        await insertRow(tx, 'Transaction', {
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
      },
      { sql: true },
    );
  } catch (error) {
    if (drawn && t.deposit && attempt < 3 && isUniqueViolation(error, 'deposit_reference')) {
      const reference = newDepositReference();
      return writeTransaction(
        services,
        t,
        { reference, instructions: t.deposit.instructionsFor(reference) },
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
async function writeWithQuote(services: ApiServices, quoteId: string, quoteType: QuoteType, t: NewTransaction) {
  // Asked before the quote is used: a rail that cannot take deposits (503) refuses with the quote intact.
  const reference = t.deposit ? newDepositReference() : null;
  const drawn = t.deposit && reference ? { reference, instructions: t.deposit.instructionsFor(reference) } : null;
  await consumeQuote(services, t.partnerId, quoteId, quoteType, t.id);
  try {
    return await writeTransaction(services, t, drawn);
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

function insufficientFunds(walletId: string, detail = ''): ApiError {
  return new ApiError('insufficient_funds', `Wallet ${walletId} holds less than the payout sends${detail}.`);
}

/** Who pays the fiat in (fiat to fiat, pay-in). */
const senderColumns = (sender: { name: string; document: { type: string; number: string } }) => ({
  senderName: sender.name,
  senderDocumentType: sender.document.type,
  senderDocumentNumber: sender.document.number,
});

/** The amounts columns every type stores (fees in the sender currency). */
function amountColumns(
  amounts: QuoteAmounts,
  terms: QuoteTerms,
  stablecoin: { currency: Currency; paymentRail: string; amount: Money },
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
  const senderRail = terms.sender.paymentRail as FiatRail;
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
  const senderRail = terms.sender.paymentRail as FiatRail;
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
    throw ApiError.invalidParam('simulate', 'is a sandbox control; production payouts cannot simulate failures');
  }
  if (request.simulate !== undefined && request.wallet_id === undefined) {
    throw ApiError.invalidParam('simulate', 'only with wallet_id; without one, give it to POST /v1/payout/confirm');
  }
  const id = idOfThisRequest('transaction');
  const quote = await usableQuoteOrThrow(services, partnerId, request.quote_id, 'payout', id);
  const terms = termsOf(quote);
  const customer = await requireApprovedCustomer(services.prisma, partnerId, request.customer_id);
  const coin = terms.sender.currency as Stablecoin;
  const chain = terms.sender.paymentRail as Blockchain;
  const wallet =
    request.wallet_id !== undefined
      ? await customerWalletOrThrow(services, partnerId, customer.id, request.wallet_id, chain, coin)
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
          await postLedgerEntries(tx, {
            reference: ledgerReference(id, 'funding'),
            description: `Payout ${id} debited from wallet ${wallet.id}`,
            entries: payoutFundingEntries(row),
          });
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

/** By the type's event group: payouts refuse with payout_cannot_be_cancelled, pay-ins and fiat to fiat with payin_cannot_be_cancelled. */
function cannotBeCancelled(row: TransactionRow, status: string): ApiError {
  return new ApiError(
    eventGroupOf(row.type as TransactionType) === 'payout' ? 'payout_cannot_be_cancelled' : 'payin_cannot_be_cancelled',
    `Transaction ${row.id} is ${status}; only a transaction awaiting its deposit can be cancelled.`,
  );
}

/** PUT /v1/transactions/{id} {"status": "cancelled"}: only in awaiting_deposit, decided by the workflow. */
export async function cancelTransaction(
  services: ApiServices,
  partnerId: string,
  transactionId: string,
): Promise<TransactionResource> {
  const row = await findTransactionOrThrow(services.prisma, partnerId, transactionId);
  if (row.status !== 'awaiting_deposit') throw cannotBeCancelled(row, row.status);
  try {
    return await callWorkflow(services, workflowIds.transaction(row.id), (handle) =>
      handle.executeUpdate(cancelTransactionUpdate),
    );
  } catch (error) {
    // A deposit or the deadline came first (or the workflow has completed since): the table says which.
    const refused =
      error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === settlementRefusals.notAwaitingDeposit;
    if (!refused) throw error;
    const current = await findTransactionOrThrow(services.prisma, partnerId, transactionId);
    throw cannotBeCancelled(row, current.status === 'awaiting_deposit' ? 'past its deposit deadline' : current.status);
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
      const receipt = await callWorkflow(services, workflowIds.transaction(row.id), (handle) =>
        handle.executeUpdate(receiveDepositUpdate, { args: [input], updateId: depositId }),
      );
      return receipt.deposit;
    } catch (error) {
      // Cancelled, expired or funded meanwhile (or the workflow already completed): a late deposit.
      const late =
        error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === settlementRefusals.notAwaitingDeposit;
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
    throw ApiError.invalidParam(
      'reference',
      `must be this transaction's deposit reference (${row.depositReference ?? ''})`,
    );
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
    ? await services.prisma.transaction.findUnique({
        where: { depositReference: reference },
        include: withReceiverAccount,
      })
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

// ---- payouts: the partner says the stablecoin was sent ----

function cannotBeConfirmed(row: TransactionRow, status: string): ApiError {
  return new ApiError(
    'payout_cannot_be_confirmed',
    `Payout ${row.id} is ${status}; only a payout awaiting its stablecoin can be confirmed.`,
  );
}

const txHashPatterns: Record<Blockchain, RegExp> = {
  ethereum: /^0x[0-9a-fA-F]{64}$/,
  solana: /^[1-9A-HJ-NP-Za-km-z]{64,88}$/,
};

/**
 * POST /v1/payout/confirm: the stablecoin of a payout awaiting it was sent (tx_hash). It counts as the
 * payout's deposit of exactly the amount sent for (the workflow's receiveDeposit update, so a confirm
 * racing a cancel or the deadline has one outcome): the payout moves to processing. Only payouts are
 * confirmed: a pay-in, and fiat to fiat (a pay-in to partners), answer payin_cannot_be_confirmed.
 * Production has no chain watcher to verify the transfer yet, so it answers 503 rather than pay out
 * on the partner's word.
 */
export async function confirmPayout(
  services: ApiServices,
  partnerId: string,
  body: { transaction_id: string; tx_hash: string; simulate?: SandboxSimulation },
): Promise<TransactionResource> {
  const row = await findTransactionOrThrow(services.prisma, partnerId, body.transaction_id);
  if (row.type !== 'payout') {
    throw new ApiError(
      'payin_cannot_be_confirmed',
      `Transaction ${row.id} is a ${row.type === 'payin' ? 'pay-in' : 'fiat-to-fiat transaction (a pay-in)'}; only payouts are confirmed.`,
    );
  }
  if (row.status !== 'awaiting_deposit') throw cannotBeConfirmed(row, row.status);
  const chain = row.senderPaymentRail as Blockchain;
  if (!txHashPatterns[chain].test(body.tx_hash)) {
    throw ApiError.invalidParam('tx_hash', `is not a ${chain} transaction hash`);
  }
  if (services.config.appEnv !== 'sandbox') {
    throw ApiError.unavailable(
      'No chain watcher is connected to verify the transfer yet; the payout still awaits its stablecoin.',
    );
  }
  const input: DepositInput = {
    depositId: newId(),
    amount: amountsOfRow(row).sender.toString(),
    senderName: null,
    reference: body.tx_hash,
    receivedAt: new Date().toISOString(),
    simulate: body.simulate ?? null,
  };
  try {
    await callWorkflow(services, workflowIds.transaction(row.id), (handle) =>
      handle.executeUpdate(receiveDepositUpdate, { args: [input], updateId: `confirm-${row.id}` }),
    );
  } catch (error) {
    const refused =
      error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === settlementRefusals.notAwaitingDeposit;
    if (!refused) throw error;
    const current = await findTransactionOrThrow(services.prisma, partnerId, row.id);
    throw cannotBeConfirmed(row, current.status === 'awaiting_deposit' ? 'past its deposit deadline' : current.status);
  }
  return toTransaction(await findTransactionOrThrow(services.prisma, partnerId, row.id));
}

// ---- virtual-account deposits: pay-ins without a quote ----

/** A credit on a virtual account's deposit details (the sandbox endpoint, or a bank integration). */
export interface VirtualAccountCredit {
  amount: Money;
  senderName: string;
  reference: string | null;
  receivedAt: Date;
}

/** The rail a virtual account's deposit arrives on: SEPA for EUR, ACH for USD. */
const virtualAccountRails: Record<string, FiatRail> = { EUR: 'sepa', USD: 'ach' };

/**
 * Money arrived on a virtual account: a `payin` transaction, created funded (`processing`, event
 * payin.created) with its deposit, converted at the current rate with the fees quotes charge (the
 * service fee and one network fee; no partner fee, no quote), and credited to the account's wallet.
 * A deposit the account may not take (decideVirtualAccountDeposit: not approved, or a third party on a
 * EUR account without accepts_third_party_payments) is recorded the same way and sent back in full
 * (payin.refunded). An amount outside the allowed range (or below the fees) is refused
 * (amount_out_of_range) and nothing is created.
 */
export async function receiveVirtualAccountDeposit(
  services: ApiServices,
  account: VirtualAccountRow,
  credit: VirtualAccountCredit,
): Promise<TransactionResource> {
  const customer = await services.prisma.customer.findUniqueOrThrow({ where: { id: account.customerId } });
  const decision = decideVirtualAccountDeposit({
    status: account.status,
    senderCurrency: account.senderCurrency,
    acceptsThirdPartyPayments: account.acceptsThirdPartyPayments,
    holderName: beneficiaryNameOf(customer),
    senderName: credit.senderName,
  });
  const rail = virtualAccountRails[account.senderCurrency] as FiatRail;
  const receiver = { currency: account.receiverCurrency as Currency, paymentRail: account.wallet.chain as Blockchain };
  const terms = await lockTerms(services.rateProvider, services.config.quoteServiceFeeBps, {
    type: 'payin',
    sender: { currency: credit.amount.currency, paymentRail: rail },
    stablecoin: null,
    receiver,
    fixed: null,
    partnerFee: null,
  });
  const amounts = priceWithinRanges(terms, { side: 'sender', amount: credit.amount }, services.config.amountRanges);
  const id = newId();
  return writeTransaction(
    services,
    {
      id,
      createdAt: new Date(),
      partnerId: account.partnerId,
      customerId: account.customerId,
      type: 'payin',
      senderRail: rail,
      deposit: null,
      funded: decision.action === 'settle' ? { action: 'settle' } : { action: 'refund', reason: decision.reason },
      afterInsert: async (tx) => {
        await insertRow(tx, 'TransactionDeposit', {
          id: newId(),
          transactionId: id,
          currency: credit.amount.currency,
          amount: credit.amount.toString(),
          senderName: credit.senderName,
          reference: credit.reference,
          status: decision.action === 'settle' ? 'accepted' : 'returning',
          returnReason: decision.action === 'refund' ? decision.reason : null,
          receivedAt: credit.receivedAt,
        });
        await postLedgerEntries(tx, {
          reference: ledgerReference(id, 'deposit'),
          description: `Deposit on virtual account ${account.id} (pay-in ${id})`,
          entries: settlementEntries.depositReceived(credit.amount),
        });
      },
      columns: {
        quoteId: null,
        walletId: account.walletId,
        virtualAccountId: account.id,
        senderName: credit.senderName,
        ...amountColumns(amounts, terms, { ...receiver, amount: amounts.receiver }),
      },
    },
    null,
  );
}

/** The sandbox endpoint: the amount's decimals in the account's currency, then receiveVirtualAccountDeposit. */
export async function receiveSandboxVirtualAccountDeposit(
  services: ApiServices,
  partnerId: string,
  virtualAccountId: string,
  body: { amount: string; sender_name: string; reference?: string },
): Promise<TransactionResource> {
  const account = await findVirtualAccountOrThrow(services.prisma, partnerId, virtualAccountId);
  const currency = account.senderCurrency as Currency;
  const problem = amountTextProblem(body.amount, currency);
  if (problem) throw ApiError.invalidParam('amount', problem);
  return receiveVirtualAccountDeposit(services, account, {
    amount: Money.parse(currency, body.amount),
    senderName: body.sender_name,
    reference: body.reference ?? null,
    receivedAt: new Date(),
  });
}

/**
 * Production: a credit on a virtual account's bank details (its IBAN or account number), as a bank
 * integration reports it; null when the details name no virtual account (kept for manual handling).
 */
export async function receiveVirtualAccountCredit(
  services: ApiServices,
  incoming: IncomingDeposit & { account: { rail: DepositRail; identifier: string } },
): Promise<TransactionResource | null> {
  const account = await findVirtualAccountByDepositReference(services.prisma, incoming.account);
  if (!account || account.senderCurrency !== incoming.amount.currency) return null;
  return receiveVirtualAccountDeposit(services, account, {
    amount: incoming.amount,
    senderName: incoming.senderName ?? '',
    reference: incoming.reference,
    receivedAt: incoming.receivedAt,
  });
}
