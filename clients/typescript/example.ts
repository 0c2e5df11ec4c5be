// Example: a customer from sign-up through KYC to a completed fiat-to-fiat transaction, in the sandbox, with the
// typed client. Run against a sandbox (`npm run dev` prints the key), from the repository or the installed package
// (`node node_modules/@payments-api/sdk/dist/cjs/example.js`):
//   PAYMENTS_API_URL=http://localhost:3000 PAYMENTS_API_KEY=sk_sandbox_... npx tsx clients/typescript/example.ts
// test/client.test.ts runs it against the real API.
import { createPaymentsClient, type PaymentsClient, type Schemas } from './index';

type Log = (line: string) => void;

/** The data of a call, or an Error naming the operation and the API's error. */
function ok<T>(what: string, result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined && result.response.status !== 204) {
    throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`);
  }
  return result.data as T;
}

async function poll<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, tries = 120): Promise<T> {
  for (let attempt = 0; attempt < tries; attempt += 1) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${what}: still not there after ${tries} tries`);
}

const onePagePdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

/** The customer's identity documents: both sides of a passport and a proof of address. */
/** The example's customer (the CLI's `trigger` creates the same one). */
export const exampleCustomer = {
  type: 'individual',
  first_name: 'Ana',
  last_name: 'Souza',
  email: 'ana.souza@example.com',
  phone_number: '+5511987654321',
  date_of_birth: '1990-05-17',
  tin: '52998224725',
  country: 'BRA',
  address: {
    street_line_1: 'Avenida Paulista 1000',
    city: 'São Paulo',
    state: 'SP',
    postal_code: '01310-100',
    country: 'BRA',
  },
} as const;

export async function uploadDocuments(api: PaymentsClient, customerId: string): Promise<void> {
  const documents: Schemas['DocumentMetadata'][] = [
    { document_type: 'passport', document_side: 'front', country: 'BRA' },
    { document_type: 'passport', document_side: 'back', country: 'BRA' },
    { document_type: 'proof_of_address', country: 'BRA' },
  ];
  for (const metadata of documents) {
    ok(
      `upload ${metadata.document_type}`,
      await api.POST('/v1/customers/{customerId}/documents', {
        params: { path: { customerId } },
        body: { file: 'document.pdf', metadata: JSON.stringify(metadata) },
        bodySerializer: () => {
          const form = new FormData();
          form.append('metadata', JSON.stringify(metadata));
          form.append('file', new Blob([onePagePdf], { type: 'application/pdf' }), 'document.pdf');
          return form;
        },
      }),
    );
  }
}

export async function runExample(api: PaymentsClient, log: Log = console.log): Promise<Schemas['Transaction']> {
  const customer = ok(
    'create customer',
    await api.POST('/v1/customers', {
      body: exampleCustomer,
    }),
  );
  log(`customer ${customer.id}: ${customer.status}`);

  await uploadDocuments(api, customer.id);
  // Sandbox: decide the review's outcome in advance; production reviews take their time.
  ok(
    'sandbox outcome',
    await api.POST('/v1/sandbox/customers/{customerId}/verification-outcome', {
      params: { path: { customerId: customer.id } },
      body: { outcome: 'approved' },
    }),
  );
  ok('check', await api.POST('/v1/customers/{customerId}/check', { params: { path: { customerId: customer.id } } }));
  const verified = await poll(
    'KYC',
    async () =>
      ok(
        'verification details',
        await api.GET('/v1/customers/{customerId}/verification-details', {
          params: { path: { customerId: customer.id } },
        }),
      ),
    (details) => details.customer_status === 'approved',
  );
  log(`KYC: ${verified.customer_status} (${verified.verification_steps.approved.join(', ')})`);

  const wallet = ok(
    'wallet',
    await api.POST('/v1/wallets', { body: { customer_id: customer.id, name: 'Settlement', chain: 'solana' } }),
  );
  const account = ok(
    'external account',
    await api.POST('/v1/external-accounts', {
      body: {
        customer_id: customer.id,
        account_name: 'María in Mexico City',
        payment_rail: 'spei',
        spei: {
          beneficiary_name: 'María López',
          protocol: 'clabe',
          bank_code: '002',
          clabe: '002010077777777771',
          bank_name: 'Banamex',
        },
      },
    }),
  );
  log(`wallet ${wallet.chain} ${wallet.address}; external account ${account.payment_rail}: ${account.status}`);

  const quote = ok(
    'quote',
    await api.POST('/v1/quote/fiat-to-fiat', {
      body: {
        sender: { currency: 'BRL', payment_rail: 'pix', amount: '1000.00' },
        stablecoin: { currency: 'USDC', payment_rail: 'solana' },
        receiver: { currency: 'MXN', payment_rail: 'spei' },
      },
    }),
  );
  log(`quote ${quote.id}: ${quote.sender.amount} BRL -> ${quote.receiver.amount} MXN, expires ${quote.expires_at}`);

  const transaction = ok(
    'fiat to fiat',
    await api.POST('/v1/fiat-to-fiat', {
      body: {
        quote_id: quote.id,
        customer_id: customer.id,
        wallet_id: wallet.id,
        sender: { name: 'João Pereira', document: { type: 'cpf', number: '529.982.247-25' } },
        receiver: { external_account_id: account.id },
      },
    }),
  );
  const instructions = transaction.sender_deposit_instructions;
  log(
    `transaction ${transaction.id}: ${transaction.status}; pay ${instructions?.amount} BRL with reference ${instructions?.reference}`,
  );

  // Sandbox: the sender's bank credits the amount (production: the sender pays per the instructions).
  const deposit = ok(
    'deposit',
    await api.POST('/v1/sandbox/transactions/{id}/deposit', {
      params: { path: { id: transaction.id } },
      body: { amount: instructions?.amount ?? '', sender_name: 'João Pereira' },
    }),
  );
  log(`deposit: ${deposit.status}`);

  const completed = await poll(
    'settlement',
    async () => ok('transaction', await api.GET('/v1/transactions/{id}', { params: { path: { id: transaction.id } } })),
    (current) => ['completed', 'refunded', 'failed', 'error'].includes(current.status),
  );
  log(`transaction ${completed.id}: ${completed.status}; the receiver gets ${completed.receiver.amount} MXN`);
  return completed;
}

if (typeof require !== 'undefined' && typeof module !== 'undefined' && require.main === module) {
  const baseUrl = process.env.PAYMENTS_API_URL ?? 'http://localhost:3000';
  const apiKey = process.env.PAYMENTS_API_KEY;
  if (!apiKey) {
    console.error('set PAYMENTS_API_KEY (a sandbox key, sk_sandbox_...)');
    process.exit(2);
  }
  runExample(createPaymentsClient({ baseUrl, apiKey })).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
