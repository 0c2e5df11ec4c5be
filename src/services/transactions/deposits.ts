// Deposits for transactions (the sandbox endpoint, or a bank integration by reference): one awaited goes through the
// settlement workflow's receiveDeposit update; any other is recorded and sent back (deposit-return workflow).
import { WorkflowNotFoundError } from '@temporalio/client';
import { idOfThisRequest } from '../../request-context';
import { amountTextProblem, Money } from '../../domain/money';
import { idFromReference } from '../../domain/ids';
import { normaliseDepositReference, SandboxSimulation } from '../../domain/transactions';
import { DomainError } from '../../domain/errors';
import { findTransactionByDepositReference, findTransactionDeposit } from '../../persistence/transactions';
import { toDeposit } from '../../presenters/transactions';
import type { TransactionDepositRow, TransactionRow } from '../../persistence/transactions';
import { type IncomingDeposit, SANDBOX_PROVIDER } from '../../providers/transaction-deposits';
import { API_PIX_PROVIDER, ApiPixDepositProvider } from '../../providers/pix/collections';
import { creditAtSandboxBank, iso20022DepositRails } from '../../providers/iso20022/deposits';
import { ISO20022_PROVIDER } from '../../providers/iso20022/reports';
import type { FiatRail } from '../../domain/rails';

/** Sandbox with API Pix: when the bank notifies a payment the sandbox endpoint recorded (then, or late). */
const PIX_NOTIFICATION_MS = 2_000;
const PIX_LATE_NOTIFICATION_MS = 20_000;
import type { DepositResource } from '../../schemas/transactions';
import type { ApiServices } from '../../app-services';
import { updateRefusal } from '../../temporal/errors';
import { workflowIds } from '../../temporal/workflow-ids';
import { callWorkflow, workflowStart, writeThenStart, type WriteServices } from '../../temporal/write-then-start';
import { depositReturnWorkflow, receiveDepositUpdate, settlementRefusals } from '../../../workflows/settlement';
import { findTransactionOrThrow } from './find';
import { type DepositCredit, type DepositInput, recordLateDeposit } from './deposit-bookkeeping';

/** A credit reported for a transaction (the same credit reported again names the same deposit), and its simulation. */
export interface DepositReport extends DepositCredit {
  simulate: SandboxSimulation | null;
}

/**
 * A deposit for a transaction (the sandbox endpoint, or a production integration through
 * receiveDepositByReference). A transaction awaiting its deposit takes it through its workflow's
 * receiveDeposit update (the workflow decides, atomically with a cancel or the deadline); any other
 * deposit is recorded, posted as held, and sent back by a deposit-return workflow; the transaction is unchanged.
 * The deposit's id comes from the provider's reference, and it is also the update's id: a credit reported twice
 * (one after the other, at once, or after a worker was killed) is one update and one row, and the second report
 * answers the deposit the first made.
 */
export async function receiveDeposit(
  services: WriteServices,
  row: TransactionRow,
  report: DepositReport,
): Promise<DepositResource> {
  const depositId = idFromReference('deposit', report.provider, report.providerReference);
  const reported = await findTransactionDeposit(services.prisma, depositId);
  if (reported) return replayOf(reported, row, report);
  if (row.status === 'awaiting_deposit') {
    const input: DepositInput = {
      depositId,
      provider: report.provider,
      providerReference: report.providerReference,
      amount: report.amount.toString(),
      senderName: report.senderName,
      reference: report.reference,
      receivedAt: report.receivedAt.toISOString(),
      simulate: report.simulate,
    };
    let failure: unknown = null;
    try {
      const receipt = await callWorkflow(services, workflowIds.transaction(row.id), (handle) =>
        handle.executeUpdate(receiveDepositUpdate, { args: [input], updateId: depositId }),
      );
      return receipt.deposit;
    } catch (error) {
      // Cancelled, expired or funded meanwhile (or the workflow already completed): a late deposit. Anything else
      // fails the report, unless the same credit was recorded meanwhile by a concurrent report (below).
      const late =
        error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === settlementRefusals.notAwaitingDeposit;
      if (!late) failure = error;
    }
    // The update was refused or failed because a concurrent report of the same credit recorded it: that deposit.
    const taken = await findTransactionDeposit(services.prisma, depositId);
    if (taken) return replayOf(taken, row, report);
    if (failure) throw failure;
  }
  return writeThenStart(services, async (tx, start) => {
    // Held from the moment it arrived, whatever becomes of its return.
    const deposit = await recordLateDeposit(tx, { id: depositId, transactionId: row.id, credit: report });
    // The same credit reported at once by another request: that one records and returns it.
    if (!deposit.inserted) return replayOf(deposit.row, row, report);
    await start(
      workflowStart(depositReturnWorkflow, {
        workflowId: workflowIds.depositReturn(depositId),
        args: [{ depositId, transactionId: row.id, partnerId: row.partnerId, simulate: report.simulate }],
        searchAttributes: { PartnerId: row.partnerId, ResourceId: row.id, ResourceStatus: 'returning' },
      }),
    );
    return toDeposit(deposit.row);
  });
}

/** The refusal of a credit whose provider reference already funded another transaction: one credit funds one thing. */
export function providerReferenceInUse(providerReference: string): DomainError {
  return new DomainError(
    'provider_reference_in_use',
    `provider_reference ${providerReference} already names a deposit of another transaction.`,
  );
}

/** A credit reported again: the deposit it made the first time, unless the reference was used for another transaction. */
function replayOf(deposit: TransactionDepositRow, row: TransactionRow, report: DepositReport): DepositResource {
  if (deposit.transactionId !== row.id) throw providerReferenceInUse(report.providerReference);
  return toDeposit(deposit);
}

/** The sandbox deposit endpoint: checks the amount's decimals and the reference, then receiveDeposit. */
export async function receiveSandboxDeposit(
  services: ApiServices,
  partnerId: string,
  transactionId: string,
  body: {
    amount: string;
    sender_name?: string;
    reference?: string;
    provider_reference?: string;
    simulate?: SandboxSimulation;
  },
): Promise<DepositResource> {
  const row = await findTransactionOrThrow(services.prisma, partnerId, transactionId);
  const currency = row.senderCurrency;
  const problem = amountTextProblem(body.amount, currency);
  if (problem) throw new DomainError('amount_too_precise', `amount: ${problem}.`);
  if (body.reference !== undefined && normaliseDepositReference(body.reference) !== row.depositReference) {
    throw new DomainError(
      'deposit_reference_mismatch',
      `reference must be this transaction's deposit reference (${row.depositReference ?? ''}).`,
    );
  }
  const amount = Money.parse(currency, body.amount);
  const bank = services.depositProvider;
  if (
    services.config.appEnv === 'sandbox' &&
    row.senderPaymentRail === 'pix' &&
    body.provider_reference === undefined &&
    bank instanceof ApiPixDepositProvider &&
    row.depositReference
  ) {
    // With the bank simulator's API Pix (docs/pix.md "The sandbox"): the payer pays the charge there, this request
    // records the payment by its endToEndId, and the bank's webhook notifies the same payment afterwards (twice, or
    // late, as `simulate` asks), recorded once.
    const paid = await bank.payInSandbox(row.depositReference, amount, body.sender_name ?? null, {
      notifyAfterMs: body.simulate === 'pix_late_notification' ? PIX_LATE_NOTIFICATION_MS : PIX_NOTIFICATION_MS,
      twice: body.simulate === 'pix_notified_twice',
    });
    return receiveDeposit(services, row, {
      provider: API_PIX_PROVIDER,
      providerReference: paid.endToEndId,
      amount,
      senderName: body.sender_name ?? null,
      reference: body.reference ?? row.depositReference,
      receivedAt: new Date(paid.horario),
      simulate: body.simulate ?? null,
    });
  }
  const iso = services.config.iso20022;
  if (
    services.config.appEnv === 'sandbox' &&
    iso &&
    iso20022DepositRails.includes(row.senderPaymentRail as FiatRail) &&
    body.provider_reference === undefined &&
    row.depositReference
  ) {
    // With the ISO 20022 bank simulator (docs/iso20022.md "The sandbox"): the credit is booked at the bank, recorded
    // here by the bank's entry reference, and its camt.054 (twice, as `simulate` asks) is read later as the same one.
    const credited = await creditAtSandboxBank(iso.bankUrl, {
      amount,
      remittance: body.reference ?? row.depositReference,
      payerName: body.sender_name ?? null,
      times: body.simulate === 'iso_credit_notified_twice' ? 2 : 1,
    });
    return receiveDeposit(services, row, {
      provider: ISO20022_PROVIDER,
      providerReference: credited.reference,
      amount,
      senderName: body.sender_name ?? null,
      reference: body.reference ?? row.depositReference,
      receivedAt: new Date(),
      simulate: body.simulate ?? null,
    });
  }
  return receiveDeposit(services, row, {
    provider: SANDBOX_PROVIDER,
    // Without one, each request is a new credit (a retry with its Idempotency-Key being the same one).
    providerReference: body.provider_reference ?? idOfThisRequest('deposit'),
    amount,
    senderName: body.sender_name ?? null,
    reference: body.reference ?? row.depositReference,
    receivedAt: new Date(),
    simulate: body.simulate ?? null,
  });
}

/**
 * Production: a credit on a collection account, matched to its transaction by the reference it
 * carried (any partner's). Null when the reference names no transaction (the integration keeps it
 * for manual handling).
 */
export async function receiveDepositByReference(
  services: WriteServices,
  incoming: IncomingDeposit,
): Promise<DepositResource | null> {
  const reference = normaliseDepositReference(incoming.reference);
  const row = reference ? await findTransactionByDepositReference(services.prisma, reference) : null;
  if (!row || row.senderCurrency !== incoming.amount.currency) return null;
  return receiveDeposit(services, row, {
    provider: incoming.provider,
    providerReference: incoming.providerReference,
    amount: incoming.amount,
    senderName: incoming.senderName,
    reference: incoming.reference,
    receivedAt: incoming.receivedAt,
    simulate: null,
  });
}
