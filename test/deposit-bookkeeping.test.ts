// The deposit, refund and recorded-payout bookkeeping that the API's deposit paths and the settlement's activities
// share (src/services/transactions/deposit-bookkeeping.ts, settlement-bookkeeping.ts): a step that retrying cannot
// change fails the activity for good under the type an operator reads in the workflow's history, and changes
// nothing; a step run again after it was done changes nothing either.
import { ApplicationFailure } from '@temporalio/common';
import { createActivities } from '../activities';
import { RESOURCE_NOT_FOUND } from '../src/temporal/failure-types';
import { createProviders } from '../src/providers';
import { Harness, startHarness } from './support/harness';
import { createTransaction, eventTypesOf, Parties, setUpParties, untilSkipping } from './support/transactions';

let harness: Harness;
let parties: Parties;
let activities: ReturnType<typeof createActivities>;

beforeAll(async () => {
  harness = await startHarness();
  parties = await setUpParties(harness);
  activities = createActivities({
    config: harness.config,
    prisma: harness.prisma,
    logger: harness.services.logger,
    ...createProviders(harness.config, harness.prisma),
  });
});
afterAll(() => harness?.teardown());

/** How a call ended: its failure's type and whether Temporal may retry it, or `done`. */
async function outcomeOf(call: () => Promise<unknown>) {
  try {
    await call();
    return 'done';
  } catch (error) {
    if (!(error instanceof ApplicationFailure)) throw error;
    return { type: error.type, nonRetryable: error.nonRetryable, message: error.message };
  }
}

/** What a partner and an operator can see of a transaction and its late deposit: statuses, events, postings. */
async function snapshot(transactionId: string, depositId?: string) {
  const transaction = await harness.prisma.transaction.findUniqueOrThrow({ where: { id: transactionId } });
  const deposits = await harness.prisma.transactionDeposit.findMany({ where: { transactionId } });
  const postings = await harness.prisma.ledgerTransaction.findMany({
    where: {
      reference: {
        in: ['deposit', 'funding', 'refund', 'payout', 'stablecoin_to_fiat'].map(
          (step) => `transaction:${transactionId}:${step}`,
        ),
      },
    },
  });
  const depositPostings = depositId
    ? await harness.prisma.ledgerTransaction.findMany({ where: { reference: { startsWith: `deposit:${depositId}:` } } })
    : [];
  return {
    status: transaction.status,
    events: await eventTypesOf(harness, transactionId),
    deposits: deposits.map((deposit) => `${deposit.id}:${deposit.status}`).sort(),
    postings: [...postings, ...depositPostings].map((posting) => posting.reference).sort(),
  };
}

describe('a cancelled transaction and the late deposit sent back', () => {
  let transactionId: string;
  let depositId: string;

  beforeAll(async () => {
    const created = await createTransaction(parties);
    transactionId = created.id;
    const cancelled = await parties.partner.api.put(`/v1/transactions/${transactionId}`).send({ status: 'cancelled' });
    expect(cancelled.body.status).toBe('cancelled');
    const late = await parties.partner.api
      .post(`/v1/sandbox/transactions/${transactionId}/deposit`)
      .send({ amount: created.sender.amount });
    expect(late.status).toBe(201);
    expect(late.body).toMatchObject({ status: 'returning', return_reason: 'not_awaiting_deposit' });
    depositId = late.body.id;
    await untilSkipping(
      harness,
      async () =>
        (await harness.prisma.transactionDeposit.findUniqueOrThrow({ where: { id: depositId } })).status === 'returned',
      'the late deposit is returned',
    );
  });

  it('holds the late deposit on its own postings and returns it once', async () => {
    expect(await snapshot(transactionId, depositId)).toEqual({
      status: 'cancelled',
      events: ['payin.created', 'payin.cancelled'],
      deposits: [`${depositId}:returned`],
      postings: [`deposit:${depositId}:received`, `deposit:${depositId}:returned`].sort(),
    });
    // The return's bookkeeping run again (a retry after its commit): nothing changes.
    expect(await outcomeOf(() => activities.finishDepositReturn(depositId))).toBe('done');
    expect((await snapshot(transactionId, depositId)).postings).toHaveLength(2);
  });

  it('refuses for good what retrying cannot change, under the types the workflows name, and changes nothing', async () => {
    const before = await snapshot(transactionId, depositId);
    const missing = '00000000-0000-4000-8000-00000000beef';
    const refused = {
      deposit: await outcomeOf(() =>
        activities.receiveDeposit(transactionId, {
          depositId: '00000000-0000-4000-8000-00000000cafe',
          amount: '1000.00',
          senderName: null,
          reference: null,
          receivedAt: new Date().toISOString(),
          simulate: null,
        }),
      ),
      returnStatus: await outcomeOf(() => activities.setDepositReturnStatus(depositId, 'return_failed')),
      unknownDeposit: await outcomeOf(() => activities.finishDepositReturn(missing)),
      unknownDepositSentBack: await outcomeOf(() => activities.sendDepositBack(missing)),
      payoutRecorded: await outcomeOf(() =>
        activities.recordPayoutByOperator(transactionId, 'OP-1', 'seen at the bank'),
      ),
      refund: await outcomeOf(() => activities.finishRefund(transactionId, 'R-1', 'deposit_amount_mismatch')),
      unknownTransaction: await outcomeOf(() => activities.finishRefund(missing, 'R-1', 'deposit_amount_mismatch')),
    };
    expect(refused).toEqual({
      deposit: {
        type: 'DepositNotExpected',
        nonRetryable: true,
        message: `transaction ${transactionId} is cancelled`,
      },
      returnStatus: {
        type: 'InvalidDepositState',
        nonRetryable: true,
        message: `deposit ${depositId} was returned already`,
      },
      unknownDeposit: { type: RESOURCE_NOT_FOUND, nonRetryable: true, message: `deposit ${missing} does not exist` },
      unknownDepositSentBack: {
        type: RESOURCE_NOT_FOUND,
        nonRetryable: true,
        message: `deposit ${missing} does not exist`,
      },
      payoutRecorded: {
        type: 'PayoutNotOpen',
        nonRetryable: true,
        message: `the payout of transaction ${transactionId} is not asked; only a payout asked and never closed can be recorded`,
      },
      refund: {
        type: RESOURCE_NOT_FOUND,
        nonRetryable: true,
        message: `deposit of transaction ${transactionId} does not exist`,
      },
      unknownTransaction: {
        type: RESOURCE_NOT_FOUND,
        nonRetryable: true,
        message: `transaction ${missing} does not exist`,
      },
    });
    expect(await snapshot(transactionId, depositId)).toEqual(before);
  });
});
