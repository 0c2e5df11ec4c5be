// Valid request bodies and files; tests override single fields to probe one rule at a time.
import type TestAgent from 'supertest/lib/agent';

export const address = {
  street_line_1: 'Avenida Paulista 1000',
  street_line_2: 'Apto 12',
  city: 'São Paulo',
  state: 'SP',
  postal_code: '01310-100',
  country: 'BRA',
};

export function individualCustomer(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'individual',
    first_name: 'Ana',
    last_name: 'Souza',
    email: 'ana.souza@example.com',
    phone_number: '+5511987654321',
    date_of_birth: '1990-05-17',
    tin: '52998224725',
    country: 'BRA',
    address,
    ...overrides,
  };
}

export function beneficiary(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    first_name: 'Carlos',
    last_name: 'Lima',
    email: 'carlos@example.com',
    phone_number: '+5521987654321',
    date_of_birth: '1975-01-30',
    tin: '11144477735',
    country: 'BRA',
    share_size: '60',
    address,
    ...overrides,
  };
}

export function businessCustomer(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'business',
    business_legal_name: 'Acme Comércio Ltda',
    email: 'finance@acme.example',
    phone_number: '+551133334444',
    date_of_incorporation: '2015-03-02',
    tax_id: '11222333000181',
    website: 'https://acme.example',
    country: 'BRA',
    address,
    no_ubos: false,
    beneficiaries: [beneficiary(), beneficiary({ first_name: 'Beatriz', tin: '39053344705', share_size: '20.5' })],
    ...overrides,
  };
}

export const files = {
  pdf: Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n'),
  png: Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4a60000000049454e44ae426082',
    'hex',
  ),
  jpeg: Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex'),
  text: Buffer.from('just some text, not a document'),
};

export async function uploadDocument(
  api: TestAgent,
  customerId: string,
  metadata: Record<string, unknown>,
  file: Buffer = files.pdf,
  fileName = 'document.pdf',
) {
  return api
    .post(`/v1/customers/${customerId}/documents`)
    .field('metadata', JSON.stringify(metadata))
    .attach('file', file, fileName);
}

/** Uploads the minimum documents of an individual (passport front + proof of address). */
export async function uploadIndividualDocuments(api: TestAgent, customerId: string): Promise<void> {
  for (const metadata of [
    { document_type: 'PASSPORT', document_side: 'FRONT', country: 'BRA' },
    { document_type: 'PROOF_OF_ADDRESS' },
  ]) {
    const response = await uploadDocument(api, customerId, metadata);
    if (response.status !== 204) throw new Error(`upload failed: ${response.status} ${JSON.stringify(response.body)}`);
  }
}

export interface CustomerBody {
  id: string;
  status: string;
  phone_number: string;
  verification: { verification_link: string | null; verification_type: string };
  beneficiaries?: { id: string }[];
  [field: string]: unknown;
}

export async function createCustomer(api: TestAgent, body: Record<string, unknown> = individualCustomer()) {
  const response = await api.post('/v1/customers').send(body);
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as CustomerBody;
}

// ---- external accounts ----

export const usAddress = {
  street_line_1: '350 Fifth Avenue',
  city: 'New York',
  state: 'NY',
  postal_code: '10118',
  country: 'USA',
};

export const germanAddress = {
  street_line_1: 'Unter den Linden 1',
  city: 'Berlin',
  postal_code: '10117',
  country: 'DEU',
};

/** A valid rail object for each payment rail (published test numbers with valid check digits). */
export const railObjects = {
  pix: { key: '+5511987654321' },
  pix_account: {
    bank_code: '001',
    branch_code: '1234',
    bank_account_number: '123456-7',
    account_type: 'checking',
    beneficiary_document: '52998224725',
    beneficiary_name: 'Ana Souza',
  },
  spei: {
    beneficiary_name: 'María López',
    protocol: 'clabe',
    bank_code: '002',
    clabe: '002010077777777771',
    bank_name: 'Banamex',
  },
  wire: {
    beneficiary_name: 'John Smith',
    beneficiary_type: 'individual',
    bank_name: 'JPMorgan Chase Bank',
    bank_account_number: '000123456789',
    routing_number: '021000021',
    beneficiary_address: usAddress,
  },
  sepa: {
    beneficiary_type: 'individual',
    beneficiary_name: 'Max Mustermann',
    bank_name: 'Commerzbank',
    iban: 'DE89370400440532013000',
    bic: 'COBADEFFXXX',
    country: 'DEU',
    beneficiary_address: germanAddress,
  },
  cvu: { beneficiary_name: 'Lucía Fernández', cvu: '0000003110001234567898' },
} as const;

export type RailName = keyof typeof railObjects;

export function externalAccount(
  customerId: string,
  rail: RailName,
  railOverrides: Record<string, unknown> = {},
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    customer_id: customerId,
    account_name: `My ${rail} account`,
    payment_rail: rail,
    [rail]: { ...railObjects[rail], ...railOverrides },
    ...overrides,
  };
}

export async function createExternalAccount(api: TestAgent, body: Record<string, unknown>) {
  const response = await api.post('/v1/external-accounts').send(body);
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as { id: string; status: string; customer_id: string } & Record<string, unknown>;
}
