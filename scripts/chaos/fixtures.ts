// Valid requests the scenarios build on, and a partner "world" holding one resource of every kind (reused by the
// fuzzer, which needs real ids to get past 404s, and by the isolation scenario, which needs another partner's ids).
import { randomUUID } from 'node:crypto';
import { externalAccount, files, individualCustomer } from '../../test/support/fixtures';
import { describe, HttpClient, HttpOutcome, HttpRequest, HttpResponse } from './http';
import { ChaosPartner, ChaosSystem } from './system';
import { pause, waitUntil } from '../lib/wait';

export { externalAccount, files, individualCustomer };

/** The answer, when it has the expected status; throws (the scenario's set-up failed) otherwise. */
export function expectStatus(outcome: HttpOutcome, status: number, what: string): HttpResponse {
  if (outcome.kind !== 'response' || outcome.status !== status)
    throw new Error(`${what}: expected ${status}, got ${describe(outcome)}`);
  return outcome;
}

/**
 * Sends a set-up request as a partner's client does and expects `status`: a 503 (or no answer) is retried after
 * its Retry-After, a write with one Idempotency-Key throughout so that it is done once. Bounded: 6 tries.
 */
export async function call(api: HttpClient, request: HttpRequest, status: number, what: string): Promise<HttpResponse> {
  const headers = ['POST', 'PUT'].includes(request.method)
    ? { 'Idempotency-Key': randomUUID(), ...request.headers }
    : request.headers;
  let outcome: HttpOutcome | undefined;
  for (let attempt = 1; attempt <= 6; attempt += 1) {
    outcome = await api.send({ ...request, headers });
    if (outcome.kind === 'response' && outcome.status !== 503) break;
    const retryAfter = outcome.kind === 'response' ? Number(outcome.headers['retry-after'] ?? 2) : 2;
    await pause(Math.max(retryAfter, 1) * 1000);
  }
  return expectStatus(outcome as HttpOutcome, status, what);
}

export function idOf(response: HttpResponse): string {
  return (response.body as { id: string }).id;
}

export const payinQuote = (amount = '1000.00') => ({
  sender: { currency: 'USD', payment_rail: 'wire', amount },
  receiver: { currency: 'USDC', payment_rail: 'ethereum' },
});

export const payoutQuote = (amount = '10.000000') => ({
  sender: { currency: 'USDC', payment_rail: 'solana', amount },
  receiver: { currency: 'MXN', payment_rail: 'spei' },
});

/** A well-formed solana address no wallet of the service has. */
const outsideSolanaAddress = '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T';

export const fiatToFiatQuote = (amount = '500.00') => ({
  sender: { currency: 'BRL', payment_rail: 'pix', amount },
  stablecoin: { currency: 'USDC', payment_rail: 'solana' },
  receiver: { currency: 'MXN', payment_rail: 'spei' },
});

/** A pix account with a unique email key: the same customer may register many without duplicates. */
export function pixAccount(customerId: string): Record<string, unknown> {
  return externalAccount(customerId, 'pix', { key: `chaos-${randomUUID()}@example.com` });
}

export interface MultipartPart {
  name: string;
  value?: string;
  file?: { fileName: string; contentType: string; data: Buffer };
  /** Header lines sent instead of the usual ones (fuzzing: a broken part). */
  headers?: readonly string[];
}

/** A multipart/form-data body built by hand, so the fuzzer can also build broken ones. */
export function multipart(parts: MultipartPart[], boundary = `chaos${randomUUID().replace(/-/g, '')}`) {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = part.file
      ? `Content-Disposition: form-data; name="${part.name}"; filename="${part.file.fileName}"`
      : `Content-Disposition: form-data; name="${part.name}"`;
    const headers = part.headers ?? [disposition, ...(part.file ? [`Content-Type: ${part.file.contentType}`] : [])];
    chunks.push(Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`, 'latin1'));
    chunks.push(part.file ? part.file.data : Buffer.from(part.value ?? '', 'utf8'));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export function documentUpload(metadata: Record<string, unknown>, data: Buffer = files.pdf) {
  return multipart([
    { name: 'metadata', value: JSON.stringify(metadata) },
    { name: 'file', file: { fileName: 'document.pdf', contentType: 'application/pdf', data } },
  ]);
}

export async function createCustomer(api: HttpClient, body = individualCustomer()): Promise<string> {
  return idOf(await call(api, { method: 'POST', path: '/v1/customers', json: body }, 201, 'create customer'));
}

export async function uploadDocuments(api: HttpClient, customerId: string, documentTypes: string[]): Promise<void> {
  for (const type of documentTypes) {
    const upload = documentUpload(
      type === 'PASSPORT' ? { document_type: type, document_side: 'FRONT', country: 'BRA' } : { document_type: type },
    );
    await call(
      api,
      {
        method: 'POST',
        path: `/v1/customers/${customerId}/documents`,
        headers: { 'Content-Type': upload.contentType },
        body: upload.body,
      },
      204,
      `upload ${type}`,
    );
  }
}

/** The minimum documents of an individual before check. */
export const individualDocuments = ['PASSPORT', 'PROOF_OF_ADDRESS'];

/** Sets the sandbox outcome of the next review, then asks for the review. */
export async function reviewWithOutcome(
  api: HttpClient,
  customerId: string,
  outcome: 'approved' | 'partially_rejected' | 'rejected',
): Promise<void> {
  const rejected_steps =
    outcome === 'approved'
      ? []
      : [{ name: 'PROOF_OF_ADDRESS', rejection_code: ['EXPIRED'], rejection_description: 'Older than 3 months' }];
  await call(
    api,
    {
      method: 'POST',
      path: `/v1/sandbox/customers/${customerId}/verification-outcome`,
      json: { outcome, rejected_steps },
    },
    200,
    'sandbox outcome',
  );
  await check(api, customerId);
}

/**
 * POST check as a partner's client does it: a 503 (the update did not answer within the deadline, e.g. on a busy
 * machine) is retried; a retry that finds the review already started (or decided) means the first one went through.
 */
export async function check(api: HttpClient, customerId: string): Promise<void> {
  const wentThrough = ['customer_verification_in_progress', 'customer_already_approved', 'customer_rejected'];
  let answer: HttpOutcome | undefined;
  for (let attempt = 1; attempt <= 5; attempt += 1) {
    answer = await api.send({ method: 'POST', path: `/v1/customers/${customerId}/check` });
    if (answer.kind === 'response' && answer.status === 204) return;
    const error =
      answer.kind === 'response' ? (answer.body as { error?: { code?: string; message?: string } })?.error : undefined;
    if (attempt > 1 && wentThrough.includes(error?.code ?? '')) return;
    // The first attempt's review was decided (partially rejected) before this retry: it went through, and the
    // review now asks for a new document.
    if (attempt > 1 && error?.code === 'verification_documents_missing' && /rejected step/.test(error.message ?? ''))
      return;
    if (answer.kind === 'response' && answer.status !== 503) break;
    await pause(2000);
  }
  throw new Error(`check: ${describe(answer as HttpOutcome)}`);
}

/** Waits (bounded) until the customer has `status`. */
export async function waitForCustomerStatus(api: HttpClient, customerId: string, status: string): Promise<void> {
  const reached = await waitUntil(async () => {
    const customer = await api.send({ method: 'GET', path: `/v1/customers/${customerId}` });
    return customer.kind === 'response' && (customer.body as { status?: string }).status === status;
  }, 60_000);
  if (!reached) throw new Error(`customer ${customerId} did not reach ${status} within 60 s`);
}

/** Creates a customer and takes it through sandbox verification to `approved`. */
export async function approvedCustomer(api: HttpClient): Promise<string> {
  const id = await createCustomer(api);
  await uploadDocuments(api, id, individualDocuments);
  await reviewWithOutcome(api, id, 'approved');
  await waitForCustomerStatus(api, id, 'approved');
  return id;
}

/** One resource of every kind, owned by one partner. */
export interface PartnerWorld {
  partner: ChaosPartner;
  approvedCustomerId: string;
  /** A pending customer (its verification link works). */
  pendingCustomerId: string;
  verificationToken: string;
  externalAccountId: string;
  walletId: string;
  virtualAccountId: string;
  quoteId: string;
  fiatToFiatQuoteId: string;
  /** A solana wallet and a spei account: what a fiat-to-fiat quote (BRL pix -> USDC solana -> MXN spei) needs. */
  solanaWalletId: string;
  speiAccountId: string;
  /** A fiat-to-fiat transaction awaiting its deposit (on a quote of its own). */
  transactionId: string;
  /** A payout quote (USDC on solana -> MXN on spei). */
  payoutQuoteId: string;
  /** A wallet transfer from the (sandbox-funded) solana wallet to an outside address. */
  walletTransferId: string;
  webhookConfigId: string;
  eventId: string;
}

export async function buildWorld(system: ChaosSystem, name: string, webhookUrl: string): Promise<PartnerWorld> {
  const partner = await system.createPartner(name);
  const { api } = partner;
  const webhookConfigId = idOf(
    await call(
      api,
      {
        method: 'POST',
        path: '/v1/webhook-configs',
        json: { url: webhookUrl, subscriptions: ['customer.created', 'external_account.created'], enabled: true },
      },
      201,
      'webhook config',
    ),
  );
  const approvedCustomerId = await approvedCustomer(api);
  const pendingCustomerId = await createCustomer(api);
  const pending = await call(api, { method: 'GET', path: `/v1/customers/${pendingCustomerId}` }, 200, 'get');
  const link = (pending.body as { verification: { verification_link: string } }).verification.verification_link;
  const verificationToken = link.slice(link.lastIndexOf('/') + 1);
  const externalAccountId = idOf(
    await call(
      api,
      { method: 'POST', path: '/v1/external-accounts', json: pixAccount(approvedCustomerId) },
      201,
      'external account',
    ),
  );
  const walletId = idOf(
    await call(
      api,
      {
        method: 'POST',
        path: '/v1/wallets',
        json: { customer_id: approvedCustomerId, name: 'Main', chain: 'ethereum' },
      },
      201,
      'wallet',
    ),
  );
  const virtualAccountId = idOf(
    await call(
      api,
      {
        method: 'POST',
        path: '/v1/virtual-accounts',
        json: {
          customer_id: approvedCustomerId,
          name: 'Collections',
          sender: { currency: 'USD' },
          receiver: { currency: 'USDC', wallet_id: walletId },
        },
      },
      201,
      'virtual account',
    ),
  );
  const quoteId = idOf(await call(api, { method: 'POST', path: '/v1/quote', json: payinQuote() }, 201, 'quote'));
  const fiatToFiatQuoteId = await createFiatToFiatQuote(api);
  const { solanaWalletId, speiAccountId } = await fiatToFiatAccounts(api, approvedCustomerId);
  const transactionId = idOf(
    await call(
      api,
      {
        method: 'POST',
        path: '/v1/fiat-to-fiat',
        json: fiatToFiatBody({
          approvedCustomerId,
          fiatToFiatQuoteId: await createFiatToFiatQuote(api),
          solanaWalletId,
          speiAccountId,
        }),
      },
      201,
      'fiat-to-fiat transaction',
    ),
  );
  const payoutQuoteId = idOf(
    await call(api, { method: 'POST', path: '/v1/quote', json: payoutQuote() }, 201, 'payout quote'),
  );
  await call(
    api,
    { method: 'POST', path: `/v1/sandbox/wallets/${solanaWalletId}/fund`, json: { currency: 'USDC', amount: '100' } },
    200,
    'sandbox funding',
  );
  const walletTransferId = idOf(
    await call(
      api,
      {
        method: 'POST',
        path: '/v1/wallet-transfer',
        json: { from_wallet_id: solanaWalletId, to_address: outsideSolanaAddress, currency: 'USDC', amount: '1' },
      },
      201,
      'wallet transfer',
    ),
  );
  // Settled before the scenarios count rows: its completion posts to the ledger and records an event.
  const transferSettled = await waitUntil(async () => {
    const transfer = await call(api, { method: 'GET', path: `/v1/wallet-transfers/${walletTransferId}` }, 200, 'get');
    return (transfer.body as { status: string }).status === 'completed';
  }, 60_000);
  if (!transferSettled) throw new Error(`wallet transfer ${walletTransferId} did not complete within 60 s`);
  const events = await call(api, { method: 'GET', path: '/v1/events?limit=1' }, 200, 'events');
  const eventId = (events.body as { items: Array<{ event_id: string }> }).items[0]?.event_id;
  if (!eventId) throw new Error('the partner has no event');
  return {
    partner,
    approvedCustomerId,
    pendingCustomerId,
    verificationToken,
    externalAccountId,
    walletId,
    virtualAccountId,
    quoteId,
    fiatToFiatQuoteId,
    solanaWalletId,
    speiAccountId,
    transactionId,
    payoutQuoteId,
    walletTransferId,
    webhookConfigId,
    eventId,
  };
}

export async function createFiatToFiatQuote(api: HttpClient, amount?: string): Promise<string> {
  return idOf(
    await call(
      api,
      { method: 'POST', path: '/v1/quote/fiat-to-fiat', json: fiatToFiatQuote(amount) },
      201,
      'fiat-to-fiat quote',
    ),
  );
}

/** What a customer needs for fiat to fiat on `fiatToFiatQuote`: a solana wallet and a spei account. */
export async function fiatToFiatAccounts(
  api: HttpClient,
  customerId: string,
): Promise<{ solanaWalletId: string; speiAccountId: string }> {
  const solanaWalletId = idOf(
    await call(
      api,
      { method: 'POST', path: '/v1/wallets', json: { customer_id: customerId, name: 'Sol', chain: 'solana' } },
      201,
      'solana wallet',
    ),
  );
  const speiAccountId = idOf(
    await call(
      api,
      { method: 'POST', path: '/v1/external-accounts', json: externalAccount(customerId, 'spei') },
      201,
      'spei account',
    ),
  );
  return { solanaWalletId, speiAccountId };
}

/** A valid POST /v1/fiat-to-fiat body on the world's (or any) fiat-to-fiat quote. */
export function fiatToFiatBody(
  world: Pick<PartnerWorld, 'approvedCustomerId' | 'fiatToFiatQuoteId' | 'solanaWalletId' | 'speiAccountId'>,
): Record<string, unknown> {
  return {
    quote_id: world.fiatToFiatQuoteId,
    customer_id: world.approvedCustomerId,
    wallet_id: world.solanaWalletId,
    sender: { name: 'João Pereira', document: { type: 'cpf', number: '529.982.247-25' } },
    receiver: { external_account_id: world.speiAccountId },
  };
}

/** The world's ids a path parameter can take: by the resource segment before it (`/v1/wallets/{id}` -> wallets). */
export function idsForPathParam(template: string, param: string, world: PartnerWorld): string[] | undefined {
  const segments = template.split('/');
  const resource = segments[segments.indexOf(`{${param}}`) - 1];
  const byResource: Record<string, string[]> = {
    customers: [world.pendingCustomerId, world.approvedCustomerId],
    'external-accounts': [world.externalAccountId],
    wallets: [world.walletId],
    'virtual-accounts': [world.virtualAccountId],
    quotes: [world.quoteId, world.fiatToFiatQuoteId, world.payoutQuoteId],
    transactions: [world.transactionId],
    'wallet-transfers': [world.walletTransferId],
    'webhook-configs': [world.webhookConfigId],
    events: [world.eventId],
    verify: [world.verificationToken],
  };
  return resource === undefined ? undefined : byResource[resource];
}

/**
 * A valid JSON body of each operation that takes one, naming the world's resources; undefined for an operation
 * without a template (the scenarios then fail: every operation of the OpenAPI document must be covered).
 */
export function validBody(operationId: string, world: PartnerWorld): Record<string, unknown> | undefined {
  const bodies: Record<string, () => Record<string, unknown>> = {
    createCustomer: () => individualCustomer({ email: `${randomUUID()}@example.com` }),
    setSandboxVerificationOutcome: () => ({ outcome: 'approved', rejected_steps: [] }),
    createExternalAccount: () => pixAccount(world.approvedCustomerId),
    createWallet: () => ({ customer_id: world.approvedCustomerId, name: 'Second', chain: 'solana' }),
    createVirtualAccount: () => ({
      customer_id: world.approvedCustomerId,
      name: 'Collections',
      sender: { currency: 'USD' },
      receiver: { currency: 'USDC', wallet_id: world.walletId },
    }),
    createQuote: () => payinQuote(),
    createFiatToFiatQuote: () => fiatToFiatQuote(),
    createFiatToFiat: () => fiatToFiatBody(world),
    cancelTransaction: () => ({ status: 'cancelled' }),
    simulateTransactionDeposit: () => ({ amount: '500.00' }),
    simulatePayoutReturn: () => ({ amount: '1.00', reason_code: 'AC04' }),
    createPayin: () => ({
      quote_id: world.quoteId,
      customer_id: world.approvedCustomerId,
      wallet_id: world.walletId,
      sender: { name: 'Ana Souza', document: { type: 'passport', number: 'x1234567' } },
    }),
    createPayout: () => ({
      quote_id: world.payoutQuoteId,
      customer_id: world.approvedCustomerId,
      external_account_id: world.speiAccountId,
    }),
    confirmPayout: () => ({ transaction_id: world.transactionId, tx_hash: '5'.repeat(88) }),
    fundSandboxWallet: () => ({ currency: 'USDC', amount: '10' }),
    createWalletTransfer: () => ({
      from_wallet_id: world.solanaWalletId,
      to_address: outsideSolanaAddress,
      currency: 'USDC',
      amount: '1',
    }),
    cancelVirtualAccount: () => ({ status: 'cancelled' }),
    simulateVirtualAccountDeposit: () => ({ amount: '100.00', sender_name: 'Chaos Sender' }),
    createWebhookConfig: () => ({
      url: 'https://example.com/hooks',
      subscriptions: ['customer.created'],
      enabled: true,
    }),
    updateWebhookConfig: () => ({ enabled: true, subscriptions: ['customer.created', 'external_account.created'] }),
    rotateWebhookSecret: () => ({ overlap_hours: 24 }),
    sendMockWebhook: () => ({ event_type: 'payout.completed' }),
    updatePartnerBranding: () => ({ display_name: 'Chaos Pay', accent_color: '#0a7d5a' }),
  };
  return bodies[operationId]?.();
}
