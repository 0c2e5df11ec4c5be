// Scenario 10, the bank (ISO 20022 over the bank simulator process): EUR (SEPA) -> USD (wire) settlements whose
// deposits arrive as camt.054 credits and whose wires leave as pain.001, while the bank's host-to-host channel is down
// for a while, one wire's pain.002 answer is lost, one credit is notified twice, and one settled wire comes back
// (AC04) after completion. Afterwards: every transaction ended (completed, or returned for the one the bank sent
// back), each with exactly one deposit; the bank holds one settled transfer per wire and its camt.053 books each wire
// once (nothing paid twice); and the reconciliation against the bank's camt.053 is clean.
import { randomUUID } from 'node:crypto';
import { endToEndIdOf, parseCamt053 } from '../../../src/providers/iso20022/messages';
import { reconciliationWorkflow } from '../../../workflows/reconciliation';
import {
  call,
  createCustomer,
  externalAccount,
  idOf,
  individualCustomer,
  individualDocuments,
  reviewWithOutcome,
  uploadDocuments,
  waitForCustomerStatus,
} from '../fixtures';
import { checkReconciliation } from '../invariants';
import { RunSize, ScenarioReport } from '../report';
import { ChaosSystem } from '../system';
import { waitUntil } from '../../lib/wait';

const SETTLE_WITHIN_MS = 180_000;
const DOWN_SECONDS = 8;

export async function bankScenario(system: ChaosSystem, report: ScenarioReport, size: RunSize): Promise<void> {
  if (!system.stack.bankSimulatorUrl) throw new Error('the chaos stack has no bank simulator');
  const bank = `${system.stack.bankSimulatorUrl}/iso20022`;
  const scenario = async (body: Record<string, unknown>) => {
    const response = await fetch(`${bank}/_scenarios`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`bank scenario ${JSON.stringify(body)}: ${response.status}`);
    return (await response.json()) as Record<string, unknown>;
  };
  const { api, partnerId } = await system.createPartner('bank chaos');
  const customerId = await createCustomer(api, individualCustomer({ email: `${randomUUID()}@example.com` }));
  await uploadDocuments(api, customerId, individualDocuments);
  await reviewWithOutcome(api, customerId, 'approved');
  await waitForCustomerStatus(api, customerId, 'approved');
  const walletId = idOf(
    await call(
      api,
      { method: 'POST', path: '/v1/wallets', json: { customer_id: customerId, name: 'Bank', chain: 'solana' } },
      201,
      'wallet',
    ),
  );
  const wireId = idOf(
    await call(
      api,
      { method: 'POST', path: '/v1/external-accounts', json: externalAccount(customerId, 'wire') },
      201,
      'wire account',
    ),
  );
  const count = size.quick ? 4 : 10;
  const transactions: Array<{ id: string; reference: string; amount: string; receiver: string }> = [];
  for (let index = 0; index < count; index += 1) {
    const quote = idOf(
      await call(
        api,
        {
          method: 'POST',
          path: '/v1/quote/fiat-to-fiat',
          json: {
            sender: { currency: 'EUR', payment_rail: 'sepa', amount: `${100 + index}.00` },
            stablecoin: { currency: 'USDC', payment_rail: 'solana' },
            receiver: { currency: 'USD', payment_rail: 'wire' },
          },
        },
        201,
        'quote',
      ),
    );
    const created = (
      await call(
        api,
        {
          method: 'POST',
          path: '/v1/fiat-to-fiat',
          json: {
            quote_id: quote,
            customer_id: customerId,
            wallet_id: walletId,
            sender: { name: 'Jane Doe', document: { type: 'passport', number: 'X1234567' } },
            receiver: { external_account_id: wireId },
          },
        },
        201,
        'fiat-to-fiat',
      )
    ).body as {
      id: string;
      sender: { amount: string };
      receiver: { amount: string };
      sender_deposit_instructions: { reference: string };
    };
    transactions.push({
      id: created.id,
      reference: created.sender_deposit_instructions.reference,
      amount: created.sender.amount,
      receiver: created.receiver.amount,
    });
  }
  const wireOf = (id: string) => endToEndIdOf(`${id}:stablecoin_to_fiat`);
  // The second wire's pain.002 is lost (the bank took it; the service sees a 504 and asks again under the same id).
  await scenario({ kind: 'lose_next_status', endToEndId: wireOf(transactions[1]!.id) });
  for (const [index, transaction] of transactions.entries()) {
    await scenario({
      kind: 'credit',
      currency: 'EUR',
      amount: transaction.amount,
      remittance: transaction.reference,
      payerName: 'Jane Doe',
      // The first credit is notified twice.
      times: index === 0 ? 2 : 1,
    });
    // The channel goes down halfway through the credits, for a while.
    if (index === Math.floor(count / 2)) await scenario({ kind: 'down', seconds: DOWN_SECONDS });
  }
  const statusOf = async (id: string) =>
    (
      (await call(api, { method: 'GET', path: `/v1/transactions/${id}` }, 200, 'transaction')).body as {
        status: string;
      }
    ).status;
  const started = Date.now();
  const allCompleted = await waitUntil(
    async () =>
      (await Promise.all(transactions.map((transaction) => statusOf(transaction.id)))).every((s) => s === 'completed'),
    SETTLE_WITHIN_MS,
    1000,
  );
  report.notes.settled_s = ((Date.now() - started) / 1000).toFixed(1);
  const statuses = await Promise.all(transactions.map((transaction) => statusOf(transaction.id)));
  report.check(
    allCompleted,
    () => `not every transaction completed within ${SETTLE_WITHIN_MS / 1000} s: ${statuses.join(', ')}`,
  );

  // A settled wire comes back after completion.
  const returned = transactions.at(-1)!;
  await scenario({ kind: 'return', endToEndId: wireOf(returned.id), reason: 'AC04' });
  const returnedInTime = await waitUntil(async () => (await statusOf(returned.id)) === 'returned', 60_000, 1000);
  report.check(returnedInTime, () => `transaction ${returned.id} was not returned after the bank's AC04 return`);

  // Nothing lost, nothing twice: one deposit per transaction; one settled transfer per wire at the bank.
  for (const transaction of transactions) {
    const deposits = await system.prisma.transactionDeposit.count({ where: { transactionId: transaction.id } });
    report.check(deposits === 1, () => `transaction ${transaction.id} has ${deposits} deposits`);
    const transfer = (await (await fetch(`${bank}/_scenarios/transfers/${wireOf(transaction.id)}`)).json()) as {
      status: string;
      amount: string;
    };
    report.check(
      transfer.status === 'ACSC' && transfer.amount === transaction.receiver,
      () => `the wire of ${transaction.id} at the bank: ${JSON.stringify(transfer)}`,
    );
  }
  const today = new Date().toISOString().slice(0, 10);
  const statement = parseCamt053(await (await fetch(`${bank}/statements/USD/${today}`)).text());
  for (const transaction of transactions) {
    const booked = statement.entries.filter(
      (entry) => entry.direction === 'DBIT' && entry.remittance === `${transaction.id}:stablecoin_to_fiat`,
    ).length;
    report.check(booked === 1, () => `the bank's camt.053 books the wire of ${transaction.id} ${booked} times`);
  }
  report.notes.transactions = transactions.length;

  // The daily proof over this partner: the ledger against the bank's camt.053.
  const reconciliation = await system.temporal.workflow.execute(reconciliationWorkflow, {
    workflowId: `chaos-reconciliation-bank-${partnerId}`,
    taskQueue: 'payments',
    args: [{ partnerIds: [partnerId] }],
  });
  report.notes.reconciliation = `${reconciliation.status}: ${JSON.stringify(reconciliation.checks)}`;
  checkReconciliation(report, reconciliation);
}
