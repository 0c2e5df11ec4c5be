// POST /v1/payout/confirm: the stablecoin of a payout awaiting it was sent; it counts as the payout's deposit.
import { WorkflowNotFoundError } from '@temporalio/client';
import { newId } from '../../domain/ids';
import type { Blockchain } from '../../domain/rails';
import { amountsOf, SandboxSimulation } from '../../domain/transactions';
import { ApiError } from '../../http/errors';
import { toTransaction } from '../../presenters/transactions';
import type { TransactionRow } from '../../persistence/transactions';
import type { TransactionResource } from '../../schemas/transactions';
import type { ApiServices } from '../../app-services';
import { updateRefusal } from '../../temporal/errors';
import { workflowIds } from '../../temporal/workflow-ids';
import { callWorkflow } from '../../temporal/write-then-start';
import type { DepositInput } from '../../../activities/transactions';
import { receiveDepositUpdate, settlementRefusals } from '../../../workflows/settlement';
import { findTransactionOrThrow } from './find';

// ---- payouts: the partner says the stablecoin was sent ----

function cannotBeConfirmed(row: TransactionRow, status: string): ApiError {
  return new ApiError(
    'payout_cannot_be_confirmed',
    `Payout ${row.id} is ${status}; only a payout awaiting its stablecoin can be confirmed.`,
  );
}

const txHashPatterns: Record<Blockchain, RegExp> = {
  ethereum: /^0x[0-9a-fA-F]{64}$/,
  solana: /^[1-9A-HJ-NP-Za-km-z]{64,88}$/,
};

/**
 * POST /v1/payout/confirm: the stablecoin of a payout awaiting it was sent (tx_hash). It counts as the
 * payout's deposit of exactly the amount sent for (the workflow's receiveDeposit update, so a confirm
 * racing a cancel or the deadline has one outcome): the payout moves to processing. Only payouts are
 * confirmed: a pay-in, and fiat to fiat (a pay-in to partners), answer payin_cannot_be_confirmed.
 * Production has no chain watcher to verify the transfer yet, so it answers 503 rather than pay out
 * on the partner's word.
 */
export async function confirmPayout(
  services: ApiServices,
  partnerId: string,
  body: { transaction_id: string; tx_hash: string; simulate?: SandboxSimulation },
): Promise<TransactionResource> {
  const row = await findTransactionOrThrow(services.prisma, partnerId, body.transaction_id);
  if (row.type !== 'payout') {
    throw new ApiError(
      'payin_cannot_be_confirmed',
      `Transaction ${row.id} is a ${row.type === 'payin' ? 'pay-in' : 'fiat-to-fiat transaction (a pay-in)'}; only payouts are confirmed.`,
    );
  }
  if (row.status !== 'awaiting_deposit') throw cannotBeConfirmed(row, row.status);
  const chain = row.senderPaymentRail as Blockchain;
  if (!txHashPatterns[chain].test(body.tx_hash)) {
    throw new ApiError(
      'tx_hash_chain_mismatch',
      `tx_hash is not a ${chain} transaction hash; the payout's stablecoin is on ${chain}.`,
    );
  }
  if (services.config.appEnv !== 'sandbox') {
    throw ApiError.unavailable(
      'No chain watcher is connected to verify the transfer yet; the payout still awaits its stablecoin.',
    );
  }
  const input: DepositInput = {
    depositId: newId(),
    amount: amountsOf(row).sender.toString(),
    senderName: null,
    reference: body.tx_hash,
    receivedAt: new Date().toISOString(),
    simulate: body.simulate ?? null,
  };
  try {
    await callWorkflow(services, workflowIds.transaction(row.id), (handle) =>
      handle.executeUpdate(receiveDepositUpdate, { args: [input], updateId: `confirm-${row.id}` }),
    );
  } catch (error) {
    const refused =
      error instanceof WorkflowNotFoundError || updateRefusal(error)?.type === settlementRefusals.notAwaitingDeposit;
    if (!refused) throw error;
    const current = await findTransactionOrThrow(services.prisma, partnerId, row.id);
    throw cannotBeConfirmed(row, current.status === 'awaiting_deposit' ? 'past its deposit deadline' : current.status);
  }
  return toTransaction(await findTransactionOrThrow(services.prisma, partnerId, row.id));
}
