// The partners `npm run bench` plays: partners with API keys (made directly, as `npm run partner:create` does),
// their customers, and for fiat to fiat approved customers with a wallet and a receiving account, all through
// the public API as a partner would.
import { randomBytes } from 'node:crypto';
import { railObjects } from '../../test/support/fixtures';
import { expectStatus, HttpClient } from './load';
import { waitUntil } from '../lib/wait';

export interface BenchPartner {
  partnerId: string;
  apiKey: string;
  api: HttpClient;
}

/**
 * The chain of every settlement's stablecoin (scenarios.ts quoteBody) and of the parties' wallets: ethereum, so the
 * legs' coin moves on the stack's Anvil (the on-ramp's mint to the treasury, leg 2's send to the off-ramp) and the
 * bench measures the chain in the loop (unless `BENCH_STABLECOIN_CHAIN=solana`).
 */
export const BENCH_STABLECOIN_CHAIN = stablecoinChainOf(process.env.BENCH_STABLECOIN_CHAIN);

/**
 * `BENCH_STABLECOIN_CHAIN=solana` runs the settlements on the chain simulation, to compare with a commit that had no
 * chain in the loop.
 */
function stablecoinChainOf(value: string | undefined): 'ethereum' | 'solana' {
  if (value === undefined || value === 'ethereum') return 'ethereum';
  if (value === 'solana') return 'solana';
  throw new Error(`BENCH_STABLECOIN_CHAIN must be ethereum or solana, not ${value}`);
}

/** A customer ready to transact: approved, with a wallet on the quote's chain and an spei account (the default quote's). */
export interface Party {
  partner: BenchPartner;
  customerId: string;
  walletId: string;
  externalAccountId: string;
  /** A USD wire account: the receiver of the ISO 20022 settlements (scenarios.ts isoQuoteBody). */
  wireAccountId: string;
}

export async function createPartners(databaseUrl: string, apiUrl: string, count: number): Promise<BenchPartner[]> {
  // Loaded here, after the bench generated the Prisma client (a static import would bind its stub).
  const { createPrismaClient, closeDatabaseClient } = await import('../../src/persistence/database');
  const { createPartner } = await import('../../src/services/partners');
  const prisma = createPrismaClient(databaseUrl, { role: 'bench', poolSize: 1 });
  try {
    const partners: BenchPartner[] = [];
    for (let index = 0; index < count; index += 1) {
      const created = await createPartner(prisma, `Bench partner ${index + 1}`, 'sandbox');
      partners.push({
        partnerId: created.partner_id,
        apiKey: created.api_key,
        api: new HttpClient(apiUrl, { authorization: created.api_key }),
      });
    }
    return partners;
  } finally {
    await closeDatabaseClient(prisma);
  }
}

export function individualCustomer(index: number): Record<string, unknown> {
  return {
    type: 'individual',
    first_name: 'Ana',
    last_name: `Souza ${index}`,
    email: `ana.souza.${index}@bench.example`,
    phone_number: '+5511987654321',
    date_of_birth: '1990-05-17',
    tin: '52998224725',
    country: 'BRA',
    address: { street_line_1: 'Avenida Paulista 1000', city: 'São Paulo', postal_code: '01310-100', country: 'BRA' },
  };
}

export async function createCustomer(partner: BenchPartner, index: number): Promise<string> {
  const response = await partner.api.request('POST', '/v1/customers', { body: individualCustomer(index), json: true });
  return expectStatus(response, 201, 'create customer').body.id as string;
}

const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

function multipart(fields: Record<string, string>, file: Buffer): { raw: Buffer; contentType: string } {
  const boundary = `bench${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="document.pdf"\r\n` +
        'Content-Type: application/pdf\r\n\r\n',
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { raw: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** An approved customer: documents, the sandbox's preset outcome, check, then wait for the workflow's decision. */
export async function approvedCustomer(partner: BenchPartner, index: number): Promise<string> {
  const customerId = await createCustomer(partner, index);
  for (const metadata of [
    { document_type: 'PASSPORT', document_side: 'FRONT', country: 'BRA' },
    { document_type: 'PROOF_OF_ADDRESS' },
  ]) {
    const { raw, contentType } = multipart({ metadata: JSON.stringify(metadata) }, pdf);
    const upload = await partner.api.request('POST', `/v1/customers/${customerId}/documents`, {
      raw,
      headers: { 'content-type': contentType },
      json: true,
    });
    expectStatus(upload, 204, 'upload document');
  }
  const outcome = await partner.api.request('POST', `/v1/sandbox/customers/${customerId}/verification-outcome`, {
    body: { outcome: 'approved' },
    json: true,
  });
  expectStatus(outcome, 200, 'sandbox verification outcome');
  expectStatus(await partner.api.request('POST', `/v1/customers/${customerId}/check`, { json: true }), 204, 'check');
  const approved = async () =>
    (await partner.api.request('GET', `/v1/customers/${customerId}`, { json: true })).body?.status === 'approved';
  if (await waitUntil(approved, 60_000, 100)) return customerId;
  throw new Error(`customer ${customerId} was not approved within 60 s`);
}

export async function createParty(partner: BenchPartner, index: number): Promise<Party> {
  const customerId = await approvedCustomer(partner, index);
  const wallet = await partner.api.request('POST', '/v1/wallets', {
    body: { customer_id: customerId, name: 'Bench wallet', chain: BENCH_STABLECOIN_CHAIN },
    json: true,
  });
  const account = await partner.api.request('POST', '/v1/external-accounts', {
    body: {
      customer_id: customerId,
      account_name: 'Bench spei account',
      payment_rail: 'spei',
      spei: railObjects.spei,
    },
    json: true,
  });
  const wire = await partner.api.request('POST', '/v1/external-accounts', {
    body: { customer_id: customerId, account_name: 'Bench wire account', payment_rail: 'wire', wire: railObjects.wire },
    json: true,
  });
  return {
    partner,
    customerId,
    walletId: expectStatus(wallet, 201, 'create wallet').body.id as string,
    externalAccountId: expectStatus(account, 201, 'create external account').body.id as string,
    wireAccountId: expectStatus(wire, 201, 'create wire account').body.id as string,
  };
}
