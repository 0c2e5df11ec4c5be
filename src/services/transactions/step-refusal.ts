// The refusals of the settlement's bookkeeping steps (deposit-bookkeeping.ts, settlement-bookkeeping.ts): a step that
// retrying cannot change. The activities fail for good under the refusal's type (the failure type the workflows'
// histories show); nothing here knows Temporal.
import { RESOURCE_NOT_FOUND } from '../../temporal/failure-types';
import type { DatabaseTransaction } from '../../persistence/database';
import { lockTransactionRow, type TransactionRow } from '../../persistence/transactions';

export type StepRefusalType =
  | typeof RESOURCE_NOT_FOUND
  | 'DepositNotExpected'
  | 'DepositAlreadyRecorded'
  | 'InvalidDepositState'
  | 'InvalidLegState'
  | 'PayoutNotOpen'
  | 'SellBackMissing';

/** A settlement step that retrying cannot change (a row missing, a state that does not allow it). */
export class StepRefusal extends Error {
  override name = 'StepRefusal';

  constructor(
    readonly type: StepRefusalType,
    message: string,
  ) {
    super(message);
  }
}

export const stepNotFound = (what: string, id: string) =>
  new StepRefusal(RESOURCE_NOT_FOUND, `${what} ${id} does not exist`);

/** The transaction under its row lock, in `tx`: one change of it at a time, across workers. */
export async function lockTransactionForStep(tx: DatabaseTransaction, id: string): Promise<TransactionRow> {
  const row = await lockTransactionRow(tx, id);
  if (!row) throw stepNotFound('transaction', id);
  return row;
}
