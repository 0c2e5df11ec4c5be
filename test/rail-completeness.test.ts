// A payment rail is complete: every fiat rail has a whole definition (src/domain/rails.ts) and every part of the
// API that differs by rail reads it: the external account schemas (a member of both discriminated unions, with the
// definition's fields, checks and formats), the identity, the presenter's masking, the deposit window, the sandbox
// deposit instructions and the OpenAPI text that lists rails. Adding a rail to `fiatRails` without one of these
// fails here (or does not compile: the Record<FiatRail, ...> maps).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { routesOf } from '../src/http/app';
import { buildOpenApiDocument } from '../src/http/openapi';
import { accountIdentityOf, countryOfAccount } from '../src/domain/external-accounts';
import { allCurrencies, Money } from '../src/domain/money';
import {
  depositWindowMs,
  durationInProse,
  type ExternalAccountRail,
  externalAccountRails,
  fiatRails,
  railDefinitions,
  railsByCurrency,
} from '../src/domain/rails';
import { accountIdentifierOf } from '../src/presenters/transactions';
import { SandboxDepositProvider } from '../src/providers/transaction-deposits';
import { allRoutes } from '../src/routes';
import { createExternalAccountRequestSchema, externalAccountSchema } from '../src/schemas/external-accounts';
import { railInstructionSchemas, senderDepositInstructionsSchema } from '../src/schemas/transactions';

type JsonSchema = {
  description?: string;
  properties?: Record<string, JsonSchema>;
  format?: string;
  oneOf?: JsonSchema[];
  $ref?: string;
};

const document = buildOpenApiDocument(routesOf(allRoutes, 'sandbox'), {
  appEnv: 'sandbox',
  publicBaseUrl: 'https://api.example.com',
}) as unknown as {
  info: { description: string };
  paths: Record<string, Record<string, { description?: string }>>;
  components: { schemas: Record<string, JsonSchema> };
};
const components = document.components.schemas;
const operation = (path: string, method = 'post') => document.paths[path]?.[method]?.description ?? '';
const pascalCase = (rail: string) =>
  rail
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/** The rail values of a discriminated union's members. */
function unionRails(schema: { options: ReadonlyArray<{ shape: { payment_rail: { value: unknown } } }> }): unknown[] {
  return schema.options.map((member) => member.shape.payment_rail.value);
}

/** The formats a request component's fields declare (nested objects included). */
function formatsOf(schema: JsonSchema | undefined): string[] {
  const fields = Object.values(schema?.properties ?? {});
  return fields.flatMap((field) => [...(field.format ? [field.format] : []), ...formatsOf(field)]);
}

/** The values of an enum of prisma/schema.prisma: the database's column type. */
function schemaEnum(name: string): string[] {
  const schema = readFileSync(path.resolve(__dirname, '../prisma/schema.prisma'), 'utf8');
  const body = new RegExp(`^enum ${name} \\{([^}]*)\\}`, 'm').exec(schema)?.[1] ?? '';
  return body
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^\w+$/.test(line));
}

describe.each(fiatRails.map((rail) => [rail]))('rail %s', (rail) => {
  const definition = railDefinitions[rail];

  it('has a whole definition: currency, deposit window and instruction fields', () => {
    expect(allCurrencies).toContain(definition.currency);
    expect(railsByCurrency[definition.currency]).toContain(rail);
    expect(definition.depositWindowMs).toBeGreaterThan(0);
    expect(depositWindowMs[rail]).toBe(definition.depositWindowMs);
    expect(definition.instructionFields.length).toBeGreaterThan(0);
    expect(definition).toHaveProperty('externalAccount');
  });

  it('is a value of the database’s rail and currency enums', () => {
    expect(schemaEnum('PaymentRail')).toContain(rail);
    expect(schemaEnum('Currency')).toContain(definition.currency);
  });

  it('has deposit instructions: a schema with the definition’s fields, and the sandbox fills them', async () => {
    expect(Object.keys(railInstructionSchemas[rail].shape).sort()).toEqual([...definition.instructionFields].sort());
    const instructions = await new SandboxDepositProvider().instructionsFor({
      rail,
      amount: Money.of(definition.currency, '100'),
      reference: 'TX7K2M9QH4RD',
      deadline: new Date('2026-11-26T12:00:00Z'),
    });
    expect(instructions.payment_rail).toBe(rail);
    const object = (instructions as Record<string, unknown>)[rail] as Record<string, unknown>;
    expect(Object.keys(object).sort()).toEqual([...definition.instructionFields].sort());
    for (const field of definition.instructionFields) expect(object[field]).toBeTruthy();
    expect(senderDepositInstructionsSchema.parse(instructions)).toMatchObject({ [rail]: object });
  });

  it('is named in the OpenAPI text that lists rails', () => {
    const window = `${rail} ${durationInProse(definition.depositWindowMs)}`;
    expect(components.Transaction?.properties?.deposit_deadline?.description).toContain(window);
    const instructions = components.Transaction?.properties?.sender_deposit_instructions;
    expect(instructions?.properties?.[rail]).toBeDefined();
    expect(instructions?.properties?.payment_rail).toMatchObject({
      enum: expect.arrayContaining([rail]),
    });
    // The lifecycle text lists each rail with its window; the quotes list each currency's rails.
    const lifecycle = operation('/v1/transactions/{id}', 'get');
    expect(lifecycle).toMatch(new RegExp(`\\b${rail}\\b[^;)]*${durationInProse(definition.depositWindowMs)}`));
    expect(operation('/v1/quote')).toMatch(new RegExp(`${definition.currency} [^,]*\\b${rail}\\b`));
    expect(operation('/v1/quote/fiat-to-fiat')).toMatch(new RegExp(`${definition.currency} on [^,]*\\b${rail}\\b`));
  });

  if (definition.externalAccount === null) {
    it('is in neither external account union (deposits only)', () => {
      expect(unionRails(createExternalAccountRequestSchema)).not.toContain(rail);
      expect(unionRails(externalAccountSchema)).not.toContain(rail);
    });
    return;
  }
  const account = definition.externalAccount;
  const accountRail = rail as ExternalAccountRail;

  it('is a member of both external account unions, request and response, in the description too', () => {
    expect(unionRails(createExternalAccountRequestSchema)).toContain(rail);
    expect(unionRails(externalAccountSchema)).toContain(rail);
    expect(components[`Create${pascalCase(rail)}ExternalAccount`]).toBeDefined();
    expect(components[`${pascalCase(rail)}ExternalAccount`]).toBeDefined();
    expect(components.CreateExternalAccountRequest?.description).toContain(rail);
  });

  it('has the definition’s fields in its response object and only those in its request object', () => {
    const response = externalAccountSchema.options.find((member) => member.shape.payment_rail.value === rail);
    const responseObject = (response?.shape as unknown as Record<string, { shape: object }>)[rail];
    expect(Object.keys(responseObject?.shape ?? {}).sort()).toEqual([...account.fields].sort());
    const request = components[`${pascalCase(rail)}Request`];
    for (const field of Object.keys(request?.properties ?? {})) expect(account.fields).toContain(field);
    for (const field of Object.keys(account.checks)) expect(account.fields).toContain(field);
    for (const field of account.maskedFields) expect(account.fields).toContain(field);
  });

  it('checks its numbers with the documented formats', () => {
    expect([...new Set(formatsOf(components[`${pascalCase(rail)}Request`]))].sort()).toEqual(
      [...account.formats].sort(),
    );
    for (const format of account.formats) expect(document.info.description).toContain(`\`${format}\``);
  });

  it('accepts its sandbox example, identifies it, locates it and masks it', () => {
    const parsed = createExternalAccountRequestSchema.parse({
      customer_id: 'c',
      account_name: 'Example',
      payment_rail: rail,
      [rail]: account.example,
    });
    const object = (parsed as unknown as Record<string, Record<string, unknown>>)[rail] as Record<string, unknown>;
    expect(accountIdentityOf(accountRail, object)).toMatch(new RegExp(`^${rail}:.+[^:]$`));
    // Names and flags do not count in the identity.
    expect(accountIdentityOf(accountRail, { ...object, beneficiary_name: 'Someone Else' })).toBe(
      accountIdentityOf(accountRail, object),
    );
    expect(countryOfAccount(accountRail, object)).toMatch(/^[A-Z]{3}$/);
    const last4 = accountIdentifierOf(rail, object);
    expect(last4).toHaveLength(4);
    expect(account.maskedFields.some((field) => String(object[field]).endsWith(last4))).toBe(true);
  });
});

it('the external account unions have exactly the rails whose definitions have external accounts, in order', () => {
  expect(unionRails(createExternalAccountRequestSchema)).toEqual(externalAccountRails);
  expect(unionRails(externalAccountSchema)).toEqual(externalAccountRails);
});
