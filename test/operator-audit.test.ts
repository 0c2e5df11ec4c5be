// The audit trail (docs/operations.md "Audit trail"): an operator's decision on a transaction in error is recorded
// with who sent it, when, on what and why (operator_actions, as `npm run audit` lists it), and the same update with
// its arguments is in the workflow's history. Who: the identity the update was sent with (the Temporal UI sends the
// signed-in person's email; test/operator-sso.browser.test.ts), not a name typed into the arguments.
import { Client } from '@temporalio/client';
import { auditLines } from '../scripts/audit';
import { listOperatorActions } from '../src/persistence/operator-actions';
import { workflowIds } from '../src/temporal/workflow-ids';
import { resolveErrorUpdate } from '../workflows/settlement';
import { Harness, startHarness } from './support/harness';
import {
  createTransaction,
  deposit,
  Parties,
  setUpParties,
  settlementHandle,
  waitForStatus,
} from './support/transactions';

// Unique to this run: files share the database, and other files' operators are named like people too.
const oliviaIdentity = `olivia.${process.pid}@example.com`;

let harness: Harness;
let parties: Parties;

beforeAll(async () => {
  harness = await startHarness();
  parties = await setUpParties(harness);
});
afterAll(() => harness?.teardown());

it("records an operator's refund: who, when, on what, why", async () => {
  const created = await createTransaction(parties);
  await deposit(parties, created, { simulate: 'payout_error' });
  await waitForStatus(harness, created.id, 'error');
  const olivia = new Client({
    connection: harness.env.client.connection,
    namespace: harness.env.client.options.namespace,
    identity: oliviaIdentity,
  });
  const handle = olivia.workflow.getHandle(settlementHandle(harness, created.id).workflowId);
  const before = new Date();
  expect(
    await handle.executeUpdate(resolveErrorUpdate, {
      args: [{ action: 'refund', operator: 'oscar.operator@example.com', reason: 'ticket OPS-42' }],
      updateId: 'refund-by-olivia',
    }),
  ).toBe('refund');
  expect(await handle.result()).toBe('refunded');

  const rows = await listOperatorActions(harness.prisma, { resourceId: created.id });
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({
    workflowId: workflowIds.transaction(created.id),
    updateId: 'refund-by-olivia',
    resourceType: 'transaction',
    resourceId: created.id,
    action: 'refund',
    operator: oliviaIdentity,
    reason: 'ticket OPS-42',
    // The name typed into the arguments is kept beside the sender's identity when the two differ.
    details: {
      step: 'stablecoin_to_fiat',
      failure_reason: 'payout_failed',
      stated_operator: 'oscar.operator@example.com',
    },
  });
  expect(rows[0]!.recordedAt.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
  expect(await listOperatorActions(harness.prisma, { operator: oliviaIdentity })).toHaveLength(1);
  expect(auditLines(rows)[1]).toContain(`${oliviaIdentity}\trefund\ttransaction ${created.id}`);

  // The history has the update, its arguments and the caller's identity.
  const { events } = await handle.fetchHistory();
  const accepted = events!
    .map((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest)
    .find((request) => request?.input?.name === 'resolveError')!;
  expect(accepted.meta?.updateId).toBe('refund-by-olivia');
  expect(accepted.meta?.identity).toBe(oliviaIdentity);
  expect(JSON.parse(Buffer.from(accepted.input!.args!.payloads![0]!.data!).toString())).toMatchObject({
    operator: 'oscar.operator@example.com',
    reason: 'ticket OPS-42',
  });
});
