// Approved customers, wallets and virtual account bodies for the tests of wallets and virtual accounts.
import type TestAgent from 'supertest/lib/agent';
import { workflowIds } from '../../src/temporal/workflow-ids';
import { verificationDecisionUpdate } from '../../workflows/customer-verification';
import { createCustomer, CustomerBody, individualCustomer, uploadIndividualDocuments } from './fixtures';
import type { Harness } from './harness';

/**
 * A customer taken through verification to `approved`: sandbox through the sandbox outcome endpoint,
 * production through the operator's update.
 */
export async function approvedCustomer(
  harness: Harness,
  api: TestAgent,
  body: Record<string, unknown> = individualCustomer(),
): Promise<CustomerBody> {
  const customer = await createCustomer(api, body);
  await uploadIndividualDocuments(api, customer.id);
  const handle = harness.env.client.workflow.getHandle(workflowIds.customerVerification(customer.id));
  if (harness.config.appEnv === 'sandbox') {
    const preset = await api
      .post(`/v1/sandbox/customers/${customer.id}/verification-outcome`)
      .send({ outcome: 'approved' });
    if (preset.status !== 200) throw new Error(`outcome failed: ${preset.status} ${JSON.stringify(preset.body)}`);
  }
  const check = await api.post(`/v1/customers/${customer.id}/check`);
  if (check.status !== 204) throw new Error(`check failed: ${check.status} ${JSON.stringify(check.body)}`);
  if (harness.config.appEnv === 'production') {
    await handle.executeUpdate(verificationDecisionUpdate, { args: [{ outcome: 'approved', rejected_steps: [] }] });
  }
  if ((await handle.result()) !== 'approved') throw new Error('the customer was not approved');
  return { ...customer, status: 'approved' };
}

export interface WalletBody {
  id: string;
  customer_id: string;
  name: string;
  chain: 'ethereum' | 'solana';
  address: string;
  balances: { currency: string; amount: string }[];
  created_at: string;
  updated_at: string;
}

export async function createWallet(
  api: TestAgent,
  customerId: string,
  chain: 'ethereum' | 'solana' = 'ethereum',
  name = 'Main wallet',
): Promise<WalletBody> {
  const response = await api.post('/v1/wallets').send({ customer_id: customerId, name, chain });
  if (response.status !== 201) throw new Error(`wallet failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as WalletBody;
}

export function virtualAccountBody(
  customerId: string,
  walletId: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    customer_id: customerId,
    name: 'Collections',
    sender: { currency: 'USD' },
    receiver: { currency: 'USDC', wallet_id: walletId },
    ...overrides,
  };
}
