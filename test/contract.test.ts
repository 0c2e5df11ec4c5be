// The contract test a partner's QA would run: requests generated from GET /openapi.json for every operation.
// Positive side: schema-valid requests (parameters, headers and bodies drawn from the description, with real ids of
// this partner mixed in so that requests reach past the lookups) must be accepted, or refused with a 4xx other than
// 400 that the description documents for the operation; 400 means "the description said no", so a schema-valid
// request must never get it. Negative side (bounded): a valid body with an unknown field, or with a required field
// removed, must get 400 validation_error naming that field. Seeded: the same requests every run.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Response } from 'supertest';
import { approvedCustomer, createWallet } from './support/accounts';
import { checkAbaRoutingNumber } from '../src/domain/aba';
import { parseBrazilianTaxId } from '../src/domain/brazil';
import { checkArgentineAccount } from '../src/domain/cbu';
import { isWellFormedAddress, toChecksumAddress } from '../src/domain/chains';
import { checkClabe } from '../src/domain/clabe';
import { checkBic, checkIban } from '../src/domain/iban';
import { normalisePhoneNumber } from '../src/schemas/common';
import { normaliseMexicanPhone } from '../src/schemas/external-accounts';
import { createExternalAccount, externalAccount, files } from './support/fixtures';
import { createQuote, createTransaction } from './support/transactions';
import { virtualAccountBody } from './support/accounts';
import { Harness, startHarness, TestPartner } from './support/harness';
import { testArtifactsDir } from './support/paths';
import { Document, GeneratedRequest, Operation, RequestGenerator } from './support/contract-requests';
import { contractFormatValues } from './support/format-values';

const SEED = Number(process.env.CONTRACT_SEED ?? 20261125);
const EXAMPLES = Number(process.env.CONTRACT_EXAMPLES ?? 20);

let harness: Harness;
let partner: TestPartner;
let document: Document;
let generator: RequestGenerator;
const ids: Record<string, string[]> = {};

beforeAll(async () => {
  harness = await startHarness({}, { realTime: true });
  partner = await harness.createPartner('Contract tester');
  document = (await harness.http.get('/openapi.json')).body as Document;
  const customer = await approvedCustomer(harness, partner.api);
  const wallets = [
    await createWallet(partner.api, customer.id, 'ethereum'),
    await createWallet(partner.api, customer.id, 'solana'),
  ];
  const accounts = await Promise.all(
    (['spei', 'sepa', 'pix_account'] as const).map((rail) =>
      createExternalAccount(partner.api, externalAccount(customer.id, rail)),
    ),
  );
  ids.customer = [customer.id];
  ids.wallet = wallets.map((wallet) => wallet.id);
  ids.external_account = accounts.map((account) => account.id);
  generator = new RequestGenerator(document, contractFormatValues, ids);
  for (const wallet of ids.wallet) {
    await partner.api.post(`/v1/sandbox/wallets/${wallet}/fund`).send({ currency: 'USDC', amount: '500' });
  }
  // One of each resource that has no create among the generated requests' likely successes, so that reads,
  // updates and sandbox controls also reach past their lookups.
  const parties = { partner, customer, wallet: wallets[1]!, externalAccountId: accounts[0]!.id };
  const transaction = await createTransaction(parties);
  ids.quote = [(await createQuote(partner.api)).id, (await createQuote(partner.api)).id];
  ids.transaction = [transaction.id];
  const virtualAccount = await partner.api
    .post('/v1/virtual-accounts')
    .send(virtualAccountBody(customer.id, wallets[0]!.id));
  ids.virtual_account = [virtualAccount.body.id as string];
  const events = await partner.api.get('/v1/events').query({ limit: 5 });
  ids.event = (events.body.items as Array<{ id: string }>).map((event) => event.id);
}, 120_000);

afterAll(async () => {
  await harness?.teardown();
});

function collectIds(body: unknown, operationId: string): void {
  if (!body || typeof body !== 'object' || typeof (body as { id?: unknown }).id !== 'string') return;
  const resource = (
    {
      createCustomer: 'customer',
      createWallet: 'wallet',
      createExternalAccount: 'external_account',
      createQuote: 'quote',
      createFiatToFiatQuote: 'quote',
      createFiatToFiat: 'transaction',
      createPayin: 'transaction',
      createPayout: 'transaction',
      createVirtualAccount: 'virtual_account',
      createWalletTransfer: 'wallet_transfer',
      createWebhookConfig: 'webhook_config',
    } as Record<string, string>
  )[operationId];
  if (resource) (ids[resource] ??= []).push((body as { id: string }).id);
}

interface Outcome {
  operation: string;
  status: number;
  code?: string;
  request: unknown;
  problem: string;
}

async function send(method: string, request: GeneratedRequest, authenticated: boolean): Promise<Response> {
  const agent = authenticated ? partner.api : harness.http;
  // The live stream answers until max_seconds: the shortest, so that each example ends within a second.
  const query = request.path === '/v1/events/stream' ? { ...(request.query as object), max_seconds: 1 } : request.query;
  let call = (agent as unknown as Record<string, (url: string) => import('supertest').Test>)[method]!(request.path)
    .query(query)
    .set(request.headers)
    .redirects(0);
  if (request.contentType === 'multipart/form-data' && request.body && typeof request.body === 'object') {
    for (const [name, value] of Object.entries(request.body as Record<string, unknown>)) {
      if (name === 'file')
        call = call.attach('file', files[value as keyof typeof files] ?? files.pdf, `upload.${String(value)}`);
      else call = call.field(name, typeof value === 'string' ? value : JSON.stringify(value));
    }
  } else if (request.body !== undefined) {
    call = call.send(request.body as object);
  }
  return call;
}

function operations(): Array<{ method: string; template: string; operation: Operation }> {
  return Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ method, template, operation })),
  );
}

it('has format values the server itself accepts', () => {
  const rules: Record<string, (value: string) => boolean> = {
    phone: (value) => normalisePhoneNumber(value) !== null,
    'mx-phone': (value) => normaliseMexicanPhone(value) !== null,
    cpf: (value) => parseBrazilianTaxId(value)?.type === 'cpf',
    cnpj: (value) => parseBrazilianTaxId(value)?.type === 'cnpj',
    'cpf-cnpj': (value) => parseBrazilianTaxId(value) !== null,
    iban: (value) => checkIban(value).ok,
    bic: (value) => checkBic(value).ok,
    'aba-routing-number': (value) => checkAbaRoutingNumber(value).ok,
    clabe: (value) => checkClabe(value).ok,
    cvu: (value) => checkArgentineAccount(value, 'cvu').ok,
    cbu: (value) => checkArgentineAccount(value, 'cbu').ok,
    'blockchain-address': (value) =>
      isWellFormedAddress('solana', value) ||
      isWellFormedAddress('ethereum', value.startsWith('0x') ? toChecksumAddress(value) : value),
    binary: (value) => value in files,
  };
  expect(Object.keys(rules).sort()).toEqual(Object.keys(contractFormatValues).sort());
  const refused = Object.entries(contractFormatValues).flatMap(([format, values]) =>
    values.filter((value) => !rules[format]!(value)).map((value) => `${format}: ${value}`),
  );
  expect(refused).toEqual([]);
});

it('accepts every schema-valid request, or refuses it only with a documented 4xx other than 400', async () => {
  const failures: Outcome[] = [];
  const statuses: Record<string, Record<string, number>> = {};
  let examples = 0;
  for (const [index, { method, template, operation }] of operations().entries()) {
    const requests = generator.generateRequests(template, operation, EXAMPLES, SEED + index);
    for (const request of requests) {
      examples += 1;
      let response: Response;
      try {
        response = await send(method, request, (operation.security ?? []).length > 0);
      } catch (error) {
        // A schema-valid value no HTTP client can send (e.g. a header with control characters).
        failures.push({
          operation: operation.operationId,
          status: 0,
          request,
          problem: `cannot be sent: ${String(error)}`,
        });
        continue;
      }
      const code = (response.body as { error?: { code?: string } })?.error?.code;
      const counts = (statuses[operation.operationId] ??= {});
      counts[`${response.status}${code ? ` ${code}` : ''}`] =
        (counts[`${response.status}${code ? ` ${code}` : ''}`] ?? 0) + 1;
      if (response.status < 400) collectIds(response.body, operation.operationId);
      const documented = operation.responses[String(response.status)] !== undefined;
      const problem =
        response.status === 400
          ? `400 ${code}: ${JSON.stringify((response.body as { error?: unknown }).error)}`
          : response.status >= 500
            ? `${response.status} ${code}`
            : !documented
              ? `status ${response.status} not documented`
              : null;
      if (problem) failures.push({ operation: operation.operationId, status: response.status, code, request, problem });
    }
  }
  const report = {
    seed: SEED,
    operations: operations().length,
    examples,
    failures: failures.length,
    statuses,
    failureList: failures,
  };
  mkdirSync(testArtifactsDir, { recursive: true });
  writeFileSync(path.join(testArtifactsDir, 'contract-positive.json'), JSON.stringify(report, null, 2));
  console.log(
    `contract (positive): ${report.operations} operations, ${examples} examples, ${failures.length} failures (seed ${SEED})`,
  );
  expect(
    failures.map((failure) => `${failure.operation}: ${failure.problem} <- ${JSON.stringify(failure.request)}`),
  ).toEqual([]);
}, 300_000);

it('refuses a body with an unknown field or without a required one with 400 naming the field', async () => {
  const failures: string[] = [];
  let checked = 0;
  for (const [index, { method, template, operation }] of operations().entries()) {
    const media = operation.requestBody?.content['application/json'];
    if (!media) continue;
    const [request] = generator.generateRequests(template, operation, 1, SEED + index);
    if (!request || !request.body || typeof request.body !== 'object') continue;
    const schema = media.schema.$ref
      ? document.components.schemas[String(media.schema.$ref).replace('#/components/schemas/', '')]!
      : media.schema;
    const body = request.body as Record<string, unknown>;
    const variants: Array<{ body: Record<string, unknown>; param: string; code: string }> = [
      { body: { ...body, unexpected_field: 1 }, param: 'unexpected_field', code: 'invalid_param' },
      ...((schema.required as string[] | undefined) ?? []).map((field) => {
        const { [field]: _removed, ...rest } = body;
        return { body: rest, param: field, code: 'missing_param' };
      }),
    ];
    for (const variant of variants) {
      checked += 1;
      const response = await send(method, { ...request, headers: {}, body: variant.body }, true);
      const details =
        (response.body as { error?: { details?: Array<{ param: string; code: string }> } }).error?.details ?? [];
      if (
        response.status !== 400 ||
        !details.some((detail) => detail.param === variant.param && detail.code === variant.code)
      ) {
        failures.push(
          `${operation.operationId} without/with ${variant.param}: ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`,
        );
      }
    }
  }
  console.log(`contract (negative): ${checked} requests, ${failures.length} failures`);
  expect(checked).toBeGreaterThan(30);
  expect(failures).toEqual([]);
}, 120_000);
