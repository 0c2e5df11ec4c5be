// Fiat-to-fiat set-up for the transaction tests (an approved customer with a wallet and external
// accounts, quotes, transactions, deposits), waiting for settlement with time skipping, and the
// ledger invariants every path must leave true.
import type TestAgent from 'supertest/lib/agent';
import type { DatabaseClient } from '../../src/persistence/database';
import { Decimal } from '../../src/domain/money';
import { workflowIds } from '../../src/temporal/workflow-ids';
import { settlementStateQuery } from '../../workflows/settlement';
import { approvedCustomer, createWallet, WalletBody } from './accounts';
import { createExternalAccount, CustomerBody, externalAccount } from './fixtures';
import type { Harness, TestPartner } from './harness';
import { prismaOf } from '../../src/persistence/internal/database';

export interface Parties {
  partner: TestPartner;
  customer: CustomerBody;
  /** On solana, the chain of the default quote's stablecoin. */
  wallet: WalletBody;
  /** spei (MXN), the default quote's receiver rail. */
  externalAccountId: string;
}

export async function setUpParties(harness: Harness, partner?: TestPartner): Promise<Parties> {
  const owner = partner ?? (await harness.createPartner());
  const customer = await approvedCustomer(harness, owner.api);
  const wallet = await createWallet(owner.api, customer.id, 'solana');
  const account = await createExternalAccount(owner.api, externalAccount(customer.id, 'spei'));
  return { partner: owner, customer, wallet, externalAccountId: account.id };
}

/** BRL on pix -> USDC on solana -> MXN on spei, 1000.00 BRL, with a partner fee of 1% + 1.00 BRL. */
export function fiatToFiatQuoteBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sender: { currency: 'BRL', payment_rail: 'pix', amount: '1000.00' },
    stablecoin: { currency: 'USDC', payment_rail: 'solana' },
    receiver: { currency: 'MXN', payment_rail: 'spei' },
    partner_fee: { percentage_fee: 100, flat_fee: '1.00' },
    ...overrides,
  };
}

export async function createQuote(api: TestAgent, body: Record<string, unknown> = fiatToFiatQuoteBody()) {
  const response = await api.post('/v1/quote/fiat-to-fiat').send(body);
  if (response.status !== 201) throw new Error(`quote failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as { id: string; sender: { amount: string | null } } & Record<string, unknown>;
}

export function fiatToFiatBody(parties: Parties, quoteId: string, overrides: Record<string, unknown> = {}) {
  return {
    quote_id: quoteId,
    customer_id: parties.customer.id,
    wallet_id: parties.wallet.id,
    sender: { name: 'João Pereira', document: { type: 'cpf', number: '529.982.247-25' } },
    receiver: { external_account_id: parties.externalAccountId },
    ...overrides,
  };
}

export interface TransactionBody {
  id: string;
  status: string;
  failure_reason: string | null;
  sender: { amount: string; currency: string };
  receiver: { amount: string; currency: string };
  stablecoin: { amount: string; currency: string };
  fees: Record<'service_fee' | 'partner_fee' | 'network_fee' | 'total', { amount: string; currency: string }>;
  sender_deposit_instructions: { reference: string; amount: string } & Record<string, unknown>;
  [field: string]: unknown;
}

/** A quote and a transaction on it, awaiting its deposit. */
export async function createTransaction(
  parties: Parties,
  quoteBody?: Record<string, unknown>,
): Promise<TransactionBody> {
  const quote = await createQuote(parties.partner.api, quoteBody);
  const response = await parties.partner.api.post('/v1/fiat-to-fiat').send(fiatToFiatBody(parties, quote.id));
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as TransactionBody;
}

export async function deposit(
  parties: Parties,
  transaction: TransactionBody,
  body: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const response = await parties.partner.api
    .post(`/v1/sandbox/transactions/${transaction.id}/deposit`)
    .send({ amount: transaction.sender.amount, ...body });
  if (response.status !== 201) throw new Error(`deposit failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as Record<string, any>;
}

export function settlementHandle(harness: Harness, transactionId: string) {
  return harness.env.client.workflow.getHandle(workflowIds.transaction(transactionId));
}

/** The stored status, once it is `status`; time moves on (skipped) while waiting, so retries run out. */
export async function waitForStatus(harness: Harness, transactionId: string, status: string): Promise<void> {
  for (let step = 0; step < 60; step += 1) {
    const row = await harness.prisma.transaction.findUniqueOrThrow({ where: { id: transactionId } });
    if (row.status === status) {
      // The workflow catches up with the table (its search attribute and state follow the activity).
      const state = await settlementHandle(harness, transactionId).query(settlementStateQuery);
      if (state.status === status && (status !== 'error' || state.awaitingOperator)) return;
    }
    await harness.env.sleep('20 seconds');
  }
  throw new Error(`transaction ${transactionId} never reached ${status}`);
}

export async function eventTypesOf(harness: Harness, transactionId: string): Promise<string[]> {
  const events = await harness.prisma.event.findMany({
    where: { resourceId: transactionId },
    orderBy: { sequence: 'asc' },
  });
  return events.map((event) => event.eventType);
}

// ---- the ledger of one transaction ----

export interface TransactionLedger {
  /** Net per account and currency over the transaction's postings, e.g. `fiat_clearing:BRL` -> "0". */
  net: Record<string, string>;
  references: string[];
  /** Entries of each posting, in the order of `references`. */
  entriesPerPosting: number[];
  /** Every posting balances per currency. */
  balanced: boolean;
  entryCount: number;
}

export async function ledgerOf(
  harness: Harness,
  transactionId: string,
  depositIds: string[] = [],
): Promise<TransactionLedger> {
  return transactionLedger(harness.prisma, transactionId, depositIds);
}

/** The ledger of one transaction and of its deposits returned on their own (also read by `npm run chaos`). */
/** The order of a settlement's postings, for two made in the same millisecond. */
const postingStepOrder = ['deposit', 'funding', 'received', 'fiat_to_stablecoin', 'stablecoin_to_fiat', 'payout'];

export async function transactionLedger(
  prisma: DatabaseClient,
  transactionId: string,
  depositIds: string[] = [],
): Promise<TransactionLedger> {
  const postings = await prismaOf(prisma).ledgerTransaction.findMany({
    where: {
      OR: [
        { reference: { startsWith: `transaction:${transactionId}:` } },
        ...depositIds.map((id) => ({ reference: { startsWith: `deposit:${id}:` } })),
      ],
    },
    include: { entries: { include: { account: true } } },
    orderBy: { createdAt: 'asc' },
  });
  // Two postings in the same millisecond (created_at keeps milliseconds) come back in either order: within one, the
  // order of the settlement's steps.
  const stepRank = (reference: string) => {
    const rank = postingStepOrder.indexOf(reference.split(':').slice(2).join(':'));
    return rank === -1 ? postingStepOrder.length : rank;
  };
  postings.sort(
    (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || stepRank(a.reference) - stepRank(b.reference),
  );
  const net = new Map<string, Decimal>();
  let balanced = true;
  let entryCount = 0;
  for (const posting of postings) {
    const perCurrency = new Map<string, Decimal>();
    for (const entry of posting.entries) {
      entryCount += 1;
      const name = `${entry.account.systemCode ?? `wallet:${entry.account.walletId}`}:${entry.currency}`;
      net.set(name, (net.get(name) ?? new Decimal(0)).plus(entry.amount.toString()));
      perCurrency.set(
        entry.currency,
        (perCurrency.get(entry.currency) ?? new Decimal(0)).plus(entry.amount.toString()),
      );
    }
    if ([...perCurrency.values()].some((total) => !total.isZero())) balanced = false;
  }
  return {
    net: Object.fromEntries([...net].map(([name, total]) => [name, total.toFixed()])),
    references: postings.map((posting) => posting.reference.split(':').slice(2).join(':')),
    entriesPerPosting: postings.map((posting) => posting.entries.length),
    balanced,
    entryCount,
  };
}

/**
 * The invariants of every final status: postings balance per currency; the clearing accounts and the
 * stablecoin in transit are back to zero; fees land where the quote said (completed) or nowhere
 * (refunded, cancelled, failed), and a refund's FX difference only in the FX gain/loss account; what left for
 * outside is what should have. Returns what is wrong (none: []).
 */
export function ledgerProblems(
  ledger: TransactionLedger,
  transaction: Pick<TransactionBody, 'status' | 'sender' | 'receiver' | 'stablecoin' | 'fees'>,
  partnerId: string,
  walletId: string,
): string[] {
  const problems: string[] = [];
  if (!ledger.balanced) problems.push('a posting does not balance per currency');
  const value = (name: string) => new Decimal(ledger.net[name] ?? 0);
  const expectAmount = (name: string, expected: string | number | Decimal) => {
    if (!value(name).equals(expected))
      problems.push(`${name} is ${value(name).toFixed()}, expected ${new Decimal(expected).toFixed()}`);
  };
  const { sender, receiver, stablecoin, fees } = transaction;
  expectAmount(`fiat_clearing:${sender.currency}`, 0);
  expectAmount(`fiat_clearing:${receiver.currency}`, 0);
  expectAmount(`in_transit:${walletId}:${stablecoin.currency}`, 0);
  if (transaction.status === 'completed') {
    expectAmount(`fee_revenue:${sender.currency}`, fees.service_fee.amount);
    expectAmount(`partner_fees:${partnerId}:${sender.currency}`, fees.partner_fee.amount);
    expectAmount(`network_fees:${sender.currency}`, fees.network_fee.amount);
    expectAmount(`settlement:${sender.currency}`, new Decimal(sender.amount).neg());
    expectAmount(`settlement:${receiver.currency}`, receiver.amount);
    expectAmount(`fx:${stablecoin.currency}`, 0);
  } else {
    // A refund after leg 1 sold the stablecoin back at the exchange's rate: what the exchange kept (or gave) beyond
    // the locked rate stays in the FX account of the fiat and is the service's loss (or gain).
    const fxFiat = `fx:${sender.currency}`;
    const gainLoss = `fx_gain_loss:${sender.currency}`;
    if (!value(fxFiat).plus(value(gainLoss)).isZero())
      problems.push(
        `${gainLoss} (${value(gainLoss).toFixed()}) does not offset ${fxFiat} (${value(fxFiat).toFixed()})`,
      );
    for (const name of Object.keys(ledger.net).filter((name) => name !== fxFiat && name !== gainLoss))
      expectAmount(name, 0);
  }
  return problems;
}

export function expectLedgerInvariants(
  ledger: TransactionLedger,
  transaction: TransactionBody,
  partnerId: string,
  walletId: string,
): void {
  expect(ledgerProblems(ledger, transaction, partnerId, walletId)).toEqual([]);
}

/** The transaction as the partner reads it (GET /v1/transactions/{id}). */
export async function transactionOf(parties: Parties, id: string): Promise<TransactionBody> {
  const response = await parties.partner.api.get(`/v1/transactions/${id}`);
  expect(response.status).toBe(200);
  return response.body as TransactionBody;
}

/** The transaction as read, its ledger (with its deposits returned on their own) and the invariants checked. */
export async function expectTransactionInvariants(
  harness: Harness,
  parties: Parties,
  id: string,
  depositIds: string[] = [],
) {
  const transaction = await transactionOf(parties, id);
  const ledger = await ledgerOf(harness, id, depositIds);
  expectLedgerInvariants(ledger, transaction, parties.partner.partnerId, parties.wallet.id);
  return { transaction, ledger };
}

/** Waits, skipping time by 10 minutes a step (so bounded retries and provider polls pass), until `probe` holds. */
export async function untilSkipping(harness: Harness, probe: () => Promise<boolean>, what: string): Promise<void> {
  for (let step = 0; step < 40; step += 1) {
    if (await probe()) return;
    await harness.env.sleep('10 minutes');
  }
  throw new Error(`never: ${what}`);
}
