// Deposits for transactions (the sandbox endpoint, or a bank integration by reference): one awaited goes through the
// settlement workflow's receiveDeposit update; any other is recorded and sent back (deposit-return workflow).
import { WorkflowNotFoundError } from '@temporalio/client';
import { idOfThisRequest } from '../../request-context';
import { amountTextProblem, Currency, Money } from '../../domain/money';
import { normaliseDepositReference, SandboxSimulation } from '../../domain/transactions';
import { ApiError } from '../../http/errors';
import {
  findTransactionByDepositReference,
  findTransactionDeposit,
  insertTransactionDeposit,
} from '../../persistence/transactions';
import { toDeposit } from '../../presenters/transactions';
import type { TransactionRow } from '../../persistence/transactions';
import type { IncomingDeposit } from '../../providers/transaction-deposits';
import type { DepositResource } from '../../schemas/transactions';
import type { ApiServices } from '../../app-services';
import { updateRefusal } from '../../temporal/errors';
import { workflowIds } from '../../temporal/workflow-ids';
import { callWorkflow, workflowStart, writeThenStart } from '../../temporal/write-then-start';
import type { DepositInput } from '../../../activities/transactions';
import { depositReturnWorkflow, receiveDepositUpdate, settlementRefusals } from '../../../workflows/settlement';
import { findTransactionOrThrow } from './find';

export interface DepositReport {
  amount: Money;
  senderName: string | null;
  reference: string | null;
  receivedAt: Date;
  simulate: SandboxSimulation | null;
}

/**
 * A deposit for a transaction (the sandbox endpoint, or a production integration through
 * receiveDepositByReference). A transaction awaiting its deposit takes it through its workflow's
 * receiveDeposit update (the workflow decides, atomically with a cancel or the deadline); any other
 * deposit is recorded and sent back by a deposit-return workflow, and the transaction is unchanged.
 */
export async function receiveDeposit(
  services: ApiServices,
  row: TransactionRow,
  report: DepositReport,
): Promise<DepositResource> {
  // The workflow update's id: a retry with the same Idempotency-Key gets the first attempt's outcome from Temporal.
  const depositId = idOfThisRequest('deposit');
  if (row.status === 'awaiting_deposit') {
    const input: DepositInput = {
      depositId,
      amount: report.amount.toString(),
      senderName: report.senderName,
      reference: report.reference,
      receivedAt: report.receivedAt.toISOString(),
      simulate: report.simulate,
    };
    try {
      const receipt = await callWorkflow(services, workflowIds.transaction(row.id), (handle) =>
        handle.executeUpdate(receiveDepositUpdate, { args: [input], updateId: depositId }),
      );
      return receipt.deposit;
    } catch (error) {
      // Cancelled, expired or funded meanwhile (or the workflow already completed): a late deposit.
      const late =
        error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === settlementRefusals.notAwaitingDeposit;
      if (!late) throw error;
    }
  }
  // A retry whose first attempt's update was taken after all (the transaction has moved on since): that deposit.
  const taken = await findTransactionDeposit(services.prisma, depositId);
  if (taken?.transactionId === row.id) return toDeposit(taken);
  return writeThenStart(services, async (tx, start) => {
    const deposit = await insertTransactionDeposit(tx, {
      id: depositId,
      transactionId: row.id,
      currency: report.amount.currency,
      amount: report.amount.toString(),
      senderName: report.senderName,
      reference: report.reference,
      status: 'returning',
      returnReason: 'not_awaiting_deposit',
      receivedAt: report.receivedAt,
    });
    await start(
      workflowStart(depositReturnWorkflow, {
        workflowId: workflowIds.depositReturn(depositId),
        args: [{ depositId, transactionId: row.id, partnerId: row.partnerId }],
        searchAttributes: { PartnerId: row.partnerId, ResourceId: row.id, ResourceStatus: 'returning' },
      }),
    );
    return toDeposit(deposit);
  });
}

/** The sandbox deposit endpoint: checks the amount's decimals and the reference, then receiveDeposit. */
export async function receiveSandboxDeposit(
  services: ApiServices,
  partnerId: string,
  transactionId: string,
  body: { amount: string; sender_name?: string; reference?: string; simulate?: SandboxSimulation },
): Promise<DepositResource> {
  const row = await findTransactionOrThrow(services.prisma, partnerId, transactionId);
  const currency = row.senderCurrency as Currency;
  const problem = amountTextProblem(body.amount, currency);
  if (problem) throw new ApiError('amount_too_precise', `amount: ${problem}.`);
  if (body.reference !== undefined && normaliseDepositReference(body.reference) !== row.depositReference) {
    throw new ApiError(
      'deposit_reference_mismatch',
      `reference must be this transaction's deposit reference (${row.depositReference ?? ''}).`,
    );
  }
  return receiveDeposit(services, row, {
    amount: Money.parse(currency, body.amount),
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
  services: ApiServices,
  incoming: IncomingDeposit,
): Promise<DepositResource | null> {
  const reference = normaliseDepositReference(incoming.reference);
  const row = reference ? await findTransactionByDepositReference(services.prisma, reference) : null;
  if (!row || row.senderCurrency !== incoming.amount.currency) return null;
  return receiveDeposit(services, row, {
    amount: incoming.amount,
    senderName: incoming.senderName,
    reference: incoming.reference,
    receivedAt: incoming.receivedAt,
    simulate: null,
  });
}
