// Pay-in and payout set-up for the tests (quotes, pay-ins, payouts, a funded wallet) and the ledger
// invariants of a pay-in and a payout after every final status (the fiat-to-fiat ones are in
// ./transactions.ts).
import type TestAgent from 'supertest/lib/agent';
import { Decimal } from '../../src/domain/money';
import type { Harness } from './harness';
import { deposit, Parties, settlementHandle, TransactionBody, TransactionLedger } from './transactions';

/** USD on ach -> USDC on solana (the default wallet's chain), 1000.00 USD. */
export function payinQuoteBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sender: { currency: 'USD', payment_rail: 'ach', amount: '1000.00' },
    receiver: { currency: 'USDC', payment_rail: 'solana' },
    ...overrides,
  };
}

/** USDC on solana -> MXN on spei (the default external account's rail), 100 USDC. */
export function payoutQuoteBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sender: { currency: 'USDC', payment_rail: 'solana', amount: '100.000000' },
    receiver: { currency: 'MXN', payment_rail: 'spei' },
    partner_fee: { percentage_fee: 50, flat_fee: '0.50' },
    ...overrides,
  };
}

export async function quote(
  api: TestAgent,
  body: Record<string, unknown>,
): Promise<{ id: string } & Record<string, any>> {
  const response = await api.post('/v1/quote').send(body);
  if (response.status !== 201) throw new Error(`quote failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

export function payinBody(parties: Parties, quoteId: string, overrides: Record<string, unknown> = {}) {
  return {
    quote_id: quoteId,
    customer_id: parties.customer.id,
    wallet_id: parties.wallet.id,
    sender: { name: 'Ana Souza', document: { type: 'passport', number: 'x1234567' } },
    ...overrides,
  };
}

export async function createPayin(parties: Parties, quoteBody = payinQuoteBody()): Promise<TransactionBody> {
  const { id } = await quote(parties.partner.api, quoteBody);
  const response = await parties.partner.api.post('/v1/payin').send(payinBody(parties, id));
  if (response.status !== 201) throw new Error(`payin failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as TransactionBody;
}

export function payoutBody(parties: Parties, quoteId: string, overrides: Record<string, unknown> = {}) {
  return {
    quote_id: quoteId,
    customer_id: parties.customer.id,
    external_account_id: parties.externalAccountId,
    wallet_id: parties.wallet.id,
    ...overrides,
  };
}

export async function createPayout(
  parties: Parties,
  overrides: Record<string, unknown> = {},
  quoteBody = payoutQuoteBody(),
): Promise<TransactionBody> {
  const { id } = await quote(parties.partner.api, quoteBody);
  const response = await parties.partner.api.post('/v1/payout').send(payoutBody(parties, id, overrides));
  if (response.status !== 201) throw new Error(`payout failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as TransactionBody;
}

/** A completed pay-in of `amount` USD into the parties' wallet; returns the USDC credited. */
export async function fundWallet(harness: Harness, parties: Parties, amount = '1000.00'): Promise<string> {
  const payin = await createPayin(
    parties,
    payinQuoteBody({ sender: { currency: 'USD', payment_rail: 'ach', amount } }),
  );
  await deposit(parties, payin);
  if ((await settlementHandle(harness, payin.id).result()) !== 'completed')
    throw new Error('the pay-in did not complete');
  return payin.stablecoin.amount;
}

export async function balanceOf(api: TestAgent, walletId: string, currency = 'USDC'): Promise<string> {
  const response = await api.get(`/v1/wallets/${walletId}`);
  const balance = (response.body.balances as Array<{ currency: string; amount: string }>).find(
    (b) => b.currency === currency,
  );
  return balance?.amount ?? '0';
}

/**
 * A pay-in's or a payout's invariants: postings balance; clearing and in-transit accounts are back at
 * zero; completed: fees where the quote said, the money where it went (a pay-in's stablecoin on the
 * wallet, a payout's fiat outside, its stablecoin from the wallet or from outside); any other final
 * status: nothing moved at all.
 */
export function expectPaymentLedgerInvariants(
  ledger: TransactionLedger,
  transaction: TransactionBody,
  partnerId: string,
): void {
  expect(ledger.balanced).toBe(true);
  const amount = (name: string) => new Decimal(ledger.net[name] ?? 0).toFixed();
  const money = (value: string) => new Decimal(value).toFixed();
  const { sender, receiver, stablecoin, fees } = transaction;
  const walletId = transaction.wallet_id as string | null;
  for (const name of Object.keys(ledger.net)) {
    if (name.startsWith('fiat_clearing:') || name.startsWith('in_transit:')) expect(amount(name)).toBe('0');
  }
  if (transaction.status !== 'completed') {
    for (const name of Object.keys(ledger.net)) expect(`${name}=${amount(name)}`).toBe(`${name}=0`);
    return;
  }
  expect(amount(`fee_revenue:${sender.currency}`)).toBe(money(fees.service_fee.amount));
  expect(amount(`partner_fees:${partnerId}:${sender.currency}`)).toBe(money(fees.partner_fee.amount));
  expect(amount(`network_fees:${sender.currency}`)).toBe(money(fees.network_fee.amount));
  if (transaction.type === 'payin') {
    expect(amount(`settlement:${sender.currency}`)).toBe(new Decimal(sender.amount).neg().toFixed());
    expect(amount(`wallet:${walletId}:${stablecoin.currency}`)).toBe(money(stablecoin.amount));
    expect(amount(`fx:${stablecoin.currency}`)).toBe(new Decimal(stablecoin.amount).neg().toFixed());
  } else {
    const source = walletId ? `wallet:${walletId}:${sender.currency}` : `settlement:${sender.currency}`;
    expect(amount(source)).toBe(new Decimal(sender.amount).neg().toFixed());
    expect(amount(`settlement:${receiver.currency}`)).toBe(money(receiver.amount));
    expect(amount(`fx:${stablecoin.currency}`)).toBe(money(stablecoin.amount));
  }
}
